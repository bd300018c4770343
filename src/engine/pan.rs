//! One built pan, run: a search on one input, a random run, the search for a shorter
//! counterexample, and the replay of a trail into the model's `KIVI:` lines.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::{
    CYCLE_START, INPUT_VARIABLE, Inconclusive, MODEL_FILE, Options, RANDOM_RUN_BITS, SHORTEN_STEPS,
    STEP_BUDGET_VARIABLE, Search, TRACE_PREFIX, TraceEvent, first_lines,
};
use crate::process::{self, RunError};

pub(super) fn hash_bits(memory_mb: u32) -> u32 {
    // The table a search starts with: 2^20 slots (8 MiB), fewer under a small memory bound
    // (an eighth of it, 8 bytes a slot). pan grows it fourfold as the states outnumber it
    // (AUTO_RESIZE, on in exhaustive builds), so a large model still gets a large table,
    // while a small one does not clear 128 MiB first: on the Kivi fixtures that clearing was
    // most of each run.
    let slots = (u64::from(memory_mb) << 20) / 8 / 8;
    (63 - slots.max(1).leading_zeros()).clamp(16, INITIAL_HASH_BITS)
}

/// The hash table a search starts with (see `hash_bits`).
const INITIAL_HASH_BITS: u32 = 20;

/// The hash table of a replay, which follows one path.
const REPLAY_HASH_BITS: u32 = 16;

/// One run of a built pan on one input, in its own directory (where pan writes its trail).
pub(super) struct Run<'a> {
    pub(super) pan: &'a Path,
    pub(super) dir: &'a Path,
    pub(super) input: &'a Path,
    pub(super) options: &'a Options,
    pub(super) cancel: &'a AtomicBool,
}

impl Run<'_> {
    pub(super) fn command(&self) -> Command {
        let mut pan = Command::new(self.pan.join("pan"));
        pan.current_dir(self.dir)
            .env(INPUT_VARIABLE, self.input)
            .env_remove(STEP_BUDGET_VARIABLE);
        pan
    }

    pub(super) fn pan(&self, limit: Duration, shortest: bool) -> Result<String, Inconclusive> {
        let mut pan = self.command();
        pan.arg(format!("-m{}", self.options.max_depth))
            .arg(format!("-w{}", hash_bits(self.options.memory_mb)))
            .arg("-n");
        match self.options.search {
            Search::NonProgress => {
                pan.arg("-l");
            }
            Search::Safety { .. } if shortest => {
                pan.arg("-i").env(STEP_BUDGET_VARIABLE, SHORTEN_STEPS.to_string());
            }
            Search::Safety { .. } => {}
        }
        self.search(pan, limit, "pan")
    }

    /// A search run to its end: its report, or an engine error when pan failed.
    fn search(&self, pan: Command, limit: Duration, what: &str) -> Result<String, Inconclusive> {
        let f = self.launch(pan, limit, what)?;
        if !f.success {
            return Err(Inconclusive::EngineError(format!(
                "pan exited with {}: {}",
                f.code.unwrap_or(-1),
                first_lines(&format!("{}\n{}", f.stdout, f.stderr))
            )));
        }
        Ok(f.stdout)
    }

    /// Run pan until it exits, `limit` passes or the run is cancelled; a signal (SIGFPE, a
    /// kill) is an engine error.
    pub(super) fn launch(&self, pan: Command, limit: Duration, what: &str) -> Result<process::Finished, Inconclusive> {
        match process::run_cancellable(pan, limit, Some(self.cancel)) {
            Ok(f) if f.signal.is_some() => Err(Inconclusive::EngineError(format!(
                "{what} was stopped by signal {}: {}",
                f.signal.unwrap_or(0),
                first_lines(&f.stdout)
            ))),
            Ok(f) => Ok(f),
            Err(RunError::TimedOut { limit, .. }) => Err(Inconclusive::TimeLimit(limit)),
            Err(RunError::Cancelled { .. }) => Err(Inconclusive::Cancelled),
            Err(e) => Err(Inconclusive::EngineError(e.to_string())),
        }
    }

    /// One random run: a bitstate search of 2^20 bits (128 KiB) with one hash function, in the
    /// transition order `seed` draws. It ends when the bits are spent, so its size, and with
    /// the seed its result, do not depend on the machine.
    pub(super) fn random(&self, seed: u32) -> Result<String, Inconclusive> {
        let mut pan = self.command();
        pan.arg(format!("-m{}", self.options.max_depth))
            .arg(format!("-w{RANDOM_RUN_BITS}"))
            .arg("-k1")
            .arg(format!("-RS{seed}"))
            .arg("-n");
        if self.options.search == Search::NonProgress {
            pan.arg("-l");
        }
        self.search(pan, self.options.time_limit, "pan (random run)")
    }

    /// pan stopped at the first error it met, which may be far from the shortest. Search for
    /// a shorter one with `pan -i`, which keeps exploring past errors and writes each shorter
    /// trail over the last, for at most `SHORTEN_STEPS` steps: the trail it leaves is the
    /// shortest it met. Keep the first trail when that search did not end by itself (the time
    /// limit, a crash) or met none shorter.
    pub(super) fn shorten(&self) {
        let trail = self.dir.join(format!("{MODEL_FILE}.trail"));
        let kept = self.dir.join("first.trail");
        if std::fs::copy(&trail, &kept).is_err() {
            return;
        }
        let steps = |path: &Path| std::fs::read_to_string(path).ok().map(|t| t.lines().count());
        let ended = self.pan(self.options.time_limit, true).is_ok();
        let shorter = ended && matches!((steps(&trail), steps(&kept)), (Some(new), Some(first)) if new <= first);
        if !shorter {
            let _ = std::fs::rename(&kept, &trail);
        }
    }

    /// Replay the trail with pan itself (`pan -r`: it runs the models' embedded C, which
    /// `spin -t` cannot) and keep the model's `KIVI:` lines.
    pub(super) fn replay(&self) -> Result<Vec<TraceEvent>, Inconclusive> {
        if !self.dir.join(format!("{MODEL_FILE}.trail")).is_file() {
            return Err(Inconclusive::EngineError(
                "pan reported an error but wrote no trail".into(),
            ));
        }
        let mut pan = self.command();
        // The search's depth and a small hash table: pan's default table (-w24, 128 MiB) alone
        // is over a small --run-memory, and a replay stopped by its memory bound tells no check.
        pan.arg("-r")
            .arg("-n")
            .arg(format!("-m{}", self.options.max_depth))
            .arg(format!("-w{REPLAY_HASH_BITS}"));
        // pan -r exits non-zero after replaying an error: only a signal is a failure.
        let finished = self.launch(pan, self.options.time_limit, "pan -r")?;
        if finished.stdout.contains("reached -DMEMLIM bound") || finished.stdout.contains("pan: out of memory") {
            return Err(Inconclusive::MemoryLimit(self.options.memory_mb));
        }
        let mut events = Vec::new();
        for line in finished.stdout.lines() {
            if line.contains("START OF CYCLE") {
                events.push(TraceEvent {
                    values: vec![CYCLE_START],
                });
                continue;
            }
            let Some(rest) = line.trim_start().strip_prefix(TRACE_PREFIX) else {
                continue;
            };
            let values: Result<Vec<i64>, _> = rest.split(':').map(|v| v.trim().parse::<i64>()).collect();
            match values {
                Ok(values) => events.push(TraceEvent { values }),
                Err(_) => {
                    return Err(Inconclusive::EngineError(format!(
                        "unreadable trace line `{}`",
                        line.trim()
                    )));
                }
            }
        }
        Ok(events)
    }
}

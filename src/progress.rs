//! Progress on stderr while units are verified: a bar on a terminal, a plain line every few
//! seconds otherwise (CI logs), nothing with `--quiet`.
//!
//! It tells only what it knows. Runs differ in cost by orders of magnitude, so an ETA is shown
//! only once a quarter of the planned runs is done and the estimate is under an hour; before
//! that it says "ETA unknown". Plain lines keep coming while a long run or the fix search is
//! under way, so a CI log never falls silent for minutes.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::search::Progress;

/// How often a plain progress line is printed without a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

pub struct Reporter {
    mode: Mode,
    started: Instant,
    state: Arc<Mutex<State>>,
    done: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct State {
    progress: Progress,
    /// What is under way after the verification (the fix search), if anything.
    phase: Option<String>,
}

enum Mode {
    Quiet,
    Bar(ProgressBar),
    Lines,
}

impl Reporter {
    pub fn new(quiet: bool) -> Reporter {
        let state = Arc::new(Mutex::new(State::default()));
        let done = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let mut ticker = None;
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            // The length is unknown until the plan is made: no bar and no ETA before that.
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            Mode::Bar(bar)
        } else {
            let (state, done) = (Arc::clone(&state), Arc::clone(&done));
            ticker = Some(std::thread::spawn(move || {
                let mut last = Instant::now();
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    if last.elapsed() >= LINE_EVERY && !done.load(Ordering::Relaxed) {
                        last = Instant::now();
                        let line = describe(&state.lock().unwrap_or_else(|e| e.into_inner()), started);
                        eprintln!("kivi-lint: {line}");
                    }
                }
            }));
            Mode::Lines
        };
        Reporter {
            mode,
            started,
            state,
            done,
            ticker,
        }
    }

    pub fn update(&self, p: &Progress) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.progress = p.clone();
        if let Mode::Bar(bar) = &self.mode {
            bar.set_message(describe(&state, self.started));
        }
    }

    /// Something after the verification is under way (the fix search of a unit).
    pub fn phase(&self, what: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.phase = Some(what.to_string());
        if let Mode::Bar(bar) = &self.mode {
            bar.set_message(describe(&state, self.started));
        }
    }

    pub fn finish(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Mode::Bar(bar) = &self.mode {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One line of progress: units, runs, elapsed time, an ETA when one can be given, and what
/// ran last or is under way.
fn describe(state: &State, started: Instant) -> String {
    let p = &state.progress;
    let elapsed = started.elapsed().as_secs_f64();
    let mut line = format!(
        "{}/{} units, {}/{} topology runs, {elapsed:.0} s",
        p.units_done, p.units, p.runs_done, p.runs
    );
    if let Some(phase) = &state.phase {
        line.push_str(&format!(", {}", crate::diagnostics::printable(phase)));
        return line;
    }
    line.push_str(&format!(", {}", eta(p.runs_done, p.runs, elapsed)));
    if !p.current.is_empty() {
        line.push_str(&format!(" (last: {})", crate::diagnostics::printable(&p.current)));
    }
    line
}

/// The remaining time by the rate so far, once a quarter of the runs is done and when it is
/// under an hour; else "ETA unknown".
fn eta(done: usize, planned: usize, elapsed: f64) -> String {
    if planned == 0 || done == 0 || done * 4 < planned || done >= planned {
        return "ETA unknown".to_string();
    }
    let remaining = elapsed * (planned - done) as f64 / done as f64;
    if remaining >= 3600.0 {
        return "ETA unknown".to_string();
    }
    format!("ETA {remaining:.0} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eta_only_when_it_can_be_estimated() {
        assert_eq!(eta(0, 10, 5.0), "ETA unknown");
        assert_eq!(eta(2, 10, 5.0), "ETA unknown");
        assert_eq!(eta(5, 10, 5.0), "ETA 5 s");
        assert_eq!(eta(10, 10, 5.0), "ETA unknown");
        assert_eq!(eta(3, 4, 20_000.0), "ETA unknown");
        assert_eq!(eta(0, 0, 1.0), "ETA unknown");
    }
}

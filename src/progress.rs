//! Progress on stderr while units are verified: a bar on a terminal, a plain line every few
//! seconds otherwise (CI logs), nothing with `--quiet`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::scaling::Progress;

/// How often a plain progress line is printed without a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

pub struct Reporter {
    mode: Mode,
}

enum Mode {
    Quiet,
    Bar(ProgressBar),
    Lines { started: Instant, last: Mutex<Instant> },
}

impl Reporter {
    pub fn new(quiet: bool) -> Reporter {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, {msg} (ETA {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            Mode::Bar(bar)
        } else {
            let now = Instant::now();
            Mode::Lines {
                started: now,
                last: Mutex::new(now),
            }
        };
        Reporter { mode }
    }

    pub fn update(&self, p: &Progress) {
        match &self.mode {
            Mode::Quiet => {}
            Mode::Bar(bar) => {
                bar.set_length(p.runs as u64);
                bar.set_position(p.runs_done as u64);
                bar.set_message(format!("{}/{} units, {}", p.units_done, p.units, p.current));
            }
            Mode::Lines { started, last } => {
                let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= LINE_EVERY {
                    *last = Instant::now();
                    eprintln!(
                        "kivi-lint: {}/{} units, {}/{} topology runs, {:.0} s (last: {})",
                        p.units_done,
                        p.units,
                        p.runs_done,
                        p.runs,
                        started.elapsed().as_secs_f64(),
                        p.current
                    );
                }
            }
        }
    }

    pub fn finish(&self) {
        if let Mode::Bar(bar) = &self.mode {
            bar.finish_and_clear();
        }
    }
}

//! The SPIN engine: `spin -a` → the C compiler → `pan`, built once per model and run per
//! input in a fresh temporary directory with time and memory limits; the trail is replayed
//! with `pan -r`.
//!
//! Every run ends in exactly one verdict: violated (with the replayed trace), verified
//! (exhaustive at this model), or inconclusive with the reason. Failures of spin, the compiler
//! or pan are inconclusive, never a pass.

mod build;
mod tiers;
mod tools;
use build::{first_lines, remove_stale_builds};
pub use tools::{EngineError, Tools};
mod inconclusive;
mod packing;
pub use inconclusive::Inconclusive;
mod pan;
pub mod pan_output;
mod simulate;

use pan::Run;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::process::{self, RunError};
pub use pan_output::{Limit, PanError, Statistics};

/// What pan searches for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Assertions and invalid end states (`-DSAFETY`). `shortest` keeps searching for shorter
    /// counterexamples (`-DREACH`, `pan -i`); breadth-first search cannot be used because the
    /// models keep their read-only tables out of the state vector (`hidden`).
    Safety { shortest: bool },
    /// Non-progress cycles (`-DNP`, `pan -l`): liveness, depth-first.
    NonProgress,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub search: Search,
    /// Time for one pan run.
    pub time_limit: Duration,
    /// Time for `spin -a` plus the compiler.
    pub build_time_limit: Duration,
    /// pan's memory bound (`-DMEMLIM`), in MiB.
    pub memory_mb: u32,
    /// pan's search depth bound (`-m`).
    pub max_depth: u32,
    /// State vector bytes (`-DVECTORSZ`); doubled up to twice if pan says it is too small.
    pub vector_bytes: u32,
    /// Seeded random runs after an exhaustive search that could not finish (memory, time or
    /// depth): each a randomised bitstate search of a small fixed size (`--simulate N`). A
    /// violation one finds is real and reported with its trace; finding none leaves the
    /// verdict inconclusive, never verified.
    pub random_runs: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            search: Search::Safety { shortest: true },
            time_limit: Duration::from_secs(60),
            build_time_limit: Duration::from_secs(120),
            memory_mb: 1024,
            max_depth: 100_000,
            vector_bytes: 4096,
            random_runs: 0,
        }
    }
}

/// One line the model printed on the counterexample, `KIVI:<n>:<n>:...` (integers only: the
/// findings stage turns them back into names).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceEvent {
    pub values: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Violated {
        violation: PanError,
        trace: Vec<TraceEvent>,
    },
    Verified,
    Inconclusive(Inconclusive),
}

/// Time spent per phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    pub spin: Duration,
    pub compile: Duration,
    pub pan: Duration,
    pub replay: Duration,
}

impl Timings {
    /// `more`'s time added to each phase.
    pub fn add(&mut self, more: &Timings) {
        self.spin += more.spin;
        self.compile += more.compile;
        self.pan += more.pan;
        self.replay += more.replay;
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub verdict: Verdict,
    pub statistics: Statistics,
    pub timings: Timings,
}

const MODEL_FILE: &str = "model.pml";
const INPUT_FILE: &str = "input.txt";
/// The environment variable the models' `init` reads the input file name from.
const INPUT_VARIABLE: &str = "KIVI_INPUT";
/// How long an unoptimised pan may run before the model is compiled with -O2.
const QUICK_RUN: Duration = Duration::from_secs(5);
/// How long the quick builds of one model may run in all before its -O2 build is compiled
/// and used instead (a few seconds of the compiler, for pans three to four times as fast):
/// a model verified at many topologies pays for the compile after its first few, a small one
/// never does. When the caller said how many runs a model has ahead (`expect_runs`), the
/// switch is made on what those runs would cost instead (see `tier`).
const QUICK_BUDGET: Duration = Duration::from_secs(4);
/// What the -O2 compile of a large model costs (demo-shop's: 5–7 s), and what its runs' quick
/// time ahead must exceed for it to pay: the optimised pan runs them in about 2/7 of the time,
/// so it pays once 5/7 of that time exceeds the compile.
const OPTIMISED_PAYS_AFTER: Duration = Duration::from_secs(7);
/// Quick time a model has run before its average run is trusted for that prediction.
const QUICK_SAMPLE: Duration = Duration::from_secs(1);
/// How many steps the search for a shorter counterexample may take (a second or two of pan
/// -O2 on the largest models here). A count, not a time: the trail it keeps is the same on a
/// slow machine and a fast one.
const SHORTEN_STEPS: u64 = 1_000_000;
/// The environment variable the models read that count from (`kivi_canonical`).
const STEP_BUDGET_VARIABLE: &str = "KIVI_STEP_BUDGET";
const TRACE_PREFIX: &str = "KIVI:";
/// The bitmap of one random run: 2^20 bits. On the largest models here that is about half a
/// million states and two seconds.
const RANDOM_RUN_BITS: u32 = 20;

/// How one pan binary is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Build {
    vector: u32,
    optimised: bool,
    /// `-DREACH`, for the search for a shorter counterexample only: it makes pan explore a
    /// state again whenever it reaches it at a smaller depth, five times the work of a plain
    /// search on the models here.
    reach: bool,
    /// A randomised bitstate search (`-DBITSTATE -DT_RAND -DP_RAND`), for random runs.
    random: bool,
}

/// Verifies models: builds each model's pan once (`spin -a` and the compiler), keeps it in a
/// directory keyed by a hash of everything the build depends on, and runs it on any number of
/// inputs. With a cache directory the pans outlive the process.
pub struct Engine {
    tools: Tools,
    options: Options,
    /// Where built pans live: the cache directory, or a temporary one of this engine.
    root: PathBuf,
    _temporary: Option<tempfile::TempDir>,
    /// One cell per build key, so that two threads needing the same pan build it once.
    builds: Mutex<HashMap<String, Arc<BuildCell>>>,
    /// Per optimised build's key: how long the quick builds it would replace have run, and
    /// how many runs that was.
    quick_spent: Mutex<HashMap<String, (Duration, usize)>>,
    /// Per optimised build's key: the runs the caller expects of it (`expect_runs`).
    expected_runs: Mutex<HashMap<String, usize>>,
    /// Bumped into the key: a change of how pans are built must not reuse old ones.
    salt: String,
    /// A safety engine's twin for liveness checks (non-progress cycles), sharing its pans'
    /// directory.
    liveness: Option<Box<Engine>>,
    /// `spin -a`'s C of each model this run (packed), shared with the twin: the builds of one
    /// model (quick, optimised, cycle search) differ only in how that C is compiled.
    generated: Arc<Mutex<Generated>>,
}

/// The generated C of the models built last, at most [`GENERATED_KEPT`] (about 1 MiB each):
/// a model's builds follow each other closely, and a scan has hundreds of models.
#[derive(Default)]
struct Generated {
    cells: HashMap<String, Arc<GeneratedCell>>,
    order: std::collections::VecDeque<String>,
}

const GENERATED_KEPT: usize = 32;

/// A model's generated C being made or made: the packed `pan.c` and the other files `spin -a`
/// wrote, or why it could not be.
type GeneratedCell = OnceLock<Result<Arc<Vec<(std::ffi::OsString, Vec<u8>)>>, Inconclusive>>;

/// The trace event that marks where a counterexample's cycle starts (pan -r prints
/// `<<<<<START OF CYCLE>>>>>`); the events after it repeat forever.
pub const CYCLE_START: i64 = -1;

/// A pan being built or built: its directory, or why it could not be.
type BuildCell = OnceLock<Result<PathBuf, Inconclusive>>;

/// Bumped when the build or run protocol of pans changes.
const BUILD_FORMAT: u32 = 3;

/// What every pan build depends on besides its model (the packer's C too: a change to it must
/// not reuse a pan built with the old one).
fn build_salt(tools: &Tools, options: &Options) -> String {
    format!(
        "{BUILD_FORMAT}\n{}\n{}\n{}\n{}\n{:?}\n{}\n{:?}\n{}",
        env!("CARGO_PKG_VERSION"),
        packing::PACKER_DIGEST.as_str(),
        tools.spin.display(),
        tools.cc.display(),
        tools.quick_cc,
        tools.versions,
        options.search,
        options.memory_mb
    )
}

impl Engine {
    /// An engine whose pans go to `cache_dir` (created if needed), or to a temporary directory.
    pub fn new(tools: Tools, options: Options, cache_dir: Option<&Path>) -> Result<Engine, EngineError> {
        let (root, temporary) = match cache_dir {
            Some(dir) => {
                // Absolute: pan is run from directories of its own.
                let root = std::path::absolute(dir.join("pan"))?;
                std::fs::create_dir_all(&root)?;
                remove_stale_builds(&root);
                (root, None)
            }
            None => {
                let t = crate::process::temporary_dir("pan")?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        let salt = build_salt(&tools, &options);
        let generated = Arc::new(Mutex::new(Generated::default()));
        let liveness = matches!(options.search, Search::Safety { .. }).then(|| {
            let options = Options {
                search: Search::NonProgress,
                ..options.clone()
            };
            Box::new(Engine {
                tools: tools.clone(),
                salt: build_salt(&tools, &options),
                options,
                root: root.clone(),
                _temporary: None,
                builds: Mutex::new(HashMap::new()),
                quick_spent: Mutex::new(HashMap::new()),
                expected_runs: Mutex::new(HashMap::new()),
                liveness: None,
                generated: Arc::clone(&generated),
            })
        });
        Ok(Engine {
            tools,
            options,
            root,
            _temporary: temporary,
            builds: Mutex::new(HashMap::new()),
            quick_spent: Mutex::new(HashMap::new()),
            expected_runs: Mutex::new(HashMap::new()),
            salt,
            liveness,
            generated,
        })
    }

    /// The engine for liveness checks: non-progress cycles (itself if it is one).
    pub fn liveness(&self) -> &Engine {
        self.liveness.as_deref().unwrap_or(self)
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// What identifies the tools and options of this engine's builds (for result caches).
    pub fn salt(&self) -> &str {
        &self.salt
    }

    /// Verify `model` on `input` (the lines its `init` reads). `cancel` stops the run early
    /// (the outcome is then inconclusive, `Cancelled`).
    pub fn verify(&self, model: &str, input: &str, cancel: &AtomicBool) -> Result<Outcome, EngineError> {
        self.verify_as(model, input, cancel, true)
    }

    /// Build the pan `verify` starts with, if it is not there yet: a caller that will verify
    /// `model` soon lets the compiler work while it does something else.
    pub fn prepare(&self, model: &str) {
        let _ = self.pan(model, self.first_build(model), &mut Timings::default());
    }

    /// `verify`, for when only the verdict matters: a violation's trace is the first one pan
    /// met, not searched for a shorter one (that needs a build and a search of its own).
    pub fn verify_verdict(&self, model: &str, input: &str, cancel: &AtomicBool) -> Result<Outcome, EngineError> {
        self.verify_as(model, input, cancel, false)
    }

    fn verify_as(&self, model: &str, input: &str, cancel: &AtomicBool, shorten: bool) -> Result<Outcome, EngineError> {
        let dir = crate::process::temporary_dir("run")?;
        let input_path = dir.path().join(INPUT_FILE);
        std::fs::write(&input_path, input)?;
        let mut timings = Timings::default();
        let inconclusive = |reason: Inconclusive, timings: Timings| Outcome {
            verdict: Verdict::Inconclusive(reason),
            statistics: Statistics::default(),
            timings,
        };
        let options = &self.options;
        let mut build = self.first_build(model);
        for _attempt in 0..4 {
            let pan = match self.pan(model, build, &mut timings) {
                Ok(pan) => pan,
                Err(reason) => return Ok(inconclusive(reason, timings)),
            };
            let run = Run {
                pan: &pan,
                dir: dir.path(),
                input: &input_path,
                options,
                cancel,
            };
            let started = Instant::now();
            let limit = if build.optimised { options.time_limit } else { QUICK_RUN };
            let ran = run.pan(limit, false);
            timings.pan += started.elapsed();
            self.spend(model, build, started.elapsed());
            let output = match ran {
                Ok(out) => out,
                Err(Inconclusive::TimeLimit(_)) if !build.optimised => {
                    build.optimised = true;
                    continue;
                }
                // A quick build by the quick compiler that failed at run time is built again
                // by `cc`: no verdict rests on the quick compiler alone.
                Err(Inconclusive::EngineError(_)) if !build.optimised && self.tools.quick_cc.is_some() => {
                    build.optimised = true;
                    continue;
                }
                Err(reason @ Inconclusive::TimeLimit(_)) => {
                    let verdict = self.sample(model, build, &run, reason, &mut timings);
                    return Ok(Outcome {
                        verdict,
                        statistics: Statistics::default(),
                        timings,
                    });
                }
                Err(reason) => return Ok(inconclusive(reason, timings)),
            };
            let (result, statistics) = pan_output::parse(&output);
            pan_output::log_profile(&output, statistics.states_stored);
            let verdict = match result {
                pan_output::PanResult::Verified => Verdict::Verified,
                pan_output::PanResult::Limited(Limit::VectorSize) => {
                    build.vector = build.vector.saturating_mul(4);
                    continue;
                }
                pan_output::PanResult::Limited(Limit::Depth) => self.sample(
                    model,
                    build,
                    &run,
                    Inconclusive::DepthLimit(options.max_depth),
                    &mut timings,
                ),
                pan_output::PanResult::Limited(Limit::Memory) => self.sample(
                    model,
                    build,
                    &run,
                    Inconclusive::MemoryLimit(options.memory_mb),
                    &mut timings,
                ),
                pan_output::PanResult::Limited(Limit::Incomplete(_))
                    if !build.optimised && self.tools.quick_cc.is_some() =>
                {
                    build.optimised = true;
                    continue;
                }
                pan_output::PanResult::Limited(Limit::Incomplete(why)) => {
                    self.sample(model, build, &run, Inconclusive::Incomplete(why), &mut timings)
                }
                pan_output::PanResult::Violated(violation) => {
                    if shorten && options.search == (Search::Safety { shortest: true }) {
                        let reach = self.tier(
                            model,
                            Build {
                                reach: true,
                                optimised: self.always_optimised(),
                                ..build
                            },
                        );
                        // Without that build, the first counterexample is kept.
                        if let Ok(pan) = self.pan(model, reach, &mut timings) {
                            let started = Instant::now();
                            Run { pan: &pan, ..run }.shorten();
                            timings.pan += started.elapsed();
                            self.spend(model, reach, started.elapsed());
                        }
                    }
                    let started = Instant::now();
                    let trace = run.replay();
                    timings.replay = started.elapsed();
                    match trace {
                        Ok(trace) => Verdict::Violated { violation, trace },
                        Err(reason) => Verdict::Inconclusive(reason),
                    }
                }
            };
            return Ok(Outcome {
                verdict,
                statistics,
                timings,
            });
        }
        Ok(inconclusive(
            Inconclusive::EngineError(format!("the state vector needs more than {} bytes", build.vector)),
            timings,
        ))
    }

    /// After an exhaustive search that could not finish (`why`): the configured number of
    /// seeded random runs, each a randomised bitstate search of a fixed size, so that the
    /// same seeds give the same runs on any machine. The first violation one finds is the
    /// verdict (bitstate search never reports a violation that is not there); none leaves it
    /// inconclusive.
    fn sample(&self, model: &str, build: Build, run: &Run, why: Inconclusive, timings: &mut Timings) -> Verdict {
        let runs = self.options.random_runs;
        if runs == 0 || run.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Verdict::Inconclusive(why);
        }
        let random = Build {
            optimised: true,
            reach: false,
            random: true,
            ..build
        };
        let pan = match self.pan(model, random, timings) {
            Ok(pan) => pan,
            Err(_) => return Verdict::Inconclusive(why),
        };
        let run = Run { pan: &pan, ..*run };
        for seed in 1..=runs {
            let started = Instant::now();
            let ran = run.random(seed);
            timings.pan += started.elapsed();
            match ran.map(|out| pan_output::parse(&out).0) {
                Ok(pan_output::PanResult::Violated(violation)) => {
                    let started = Instant::now();
                    let trace = run.replay();
                    timings.replay += started.elapsed();
                    return match trace {
                        Ok(trace) => Verdict::Violated { violation, trace },
                        Err(reason) => Verdict::Inconclusive(reason),
                    };
                }
                Ok(_) => {}
                Err(Inconclusive::Cancelled) => return Verdict::Inconclusive(Inconclusive::Cancelled),
                // A run that could not finish tells nothing; the next seed may.
                Err(_) => {}
            }
        }
        Verdict::Inconclusive(Inconclusive::Sampled {
            exhaustive: Box::new(why),
            runs,
        })
    }
}

/// Verify a PROMELA model that reads no input, with a throwaway engine.
pub fn verify(model: &str, tools: &Tools, options: &Options) -> Result<Outcome, EngineError> {
    let engine = Engine::new(tools.clone(), options.clone(), None)?;
    engine.verify(model, "", &AtomicBool::new(false))
}

#[cfg(test)]
mod tests;

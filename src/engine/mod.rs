//! The SPIN engine: `spin -a` → the C compiler → `pan`, built once per model and run per
//! input in a fresh temporary directory with time and memory limits; the trail is replayed
//! with `pan -r`.
//!
//! Every run ends in exactly one verdict: violated (with the replayed trace), verified
//! (exhaustive at this model), or inconclusive with the reason. Failures of spin, the compiler
//! or pan are inconclusive, never a pass.

mod inconclusive;
mod packing;
pub use inconclusive::Inconclusive;
mod pan;
pub mod pan_output;

use pan::Run;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::process::{self, RunError};
pub use pan_output::{Limit, PanError, Statistics};

/// The programs the engine runs.
#[derive(Clone, Debug)]
pub struct Tools {
    pub spin: PathBuf,
    pub cc: PathBuf,
    /// A compiler for the quick, unoptimised build most models need and nothing more: the Tiny
    /// C Compiler translates a pan in a twentieth of `cc -O0`'s time, and its pan runs about
    /// as fast. `None`: the quick build is `cc -O0`.
    pub quick_cc: Option<PathBuf>,
    /// What `spin -V` and the compilers' `--version` (`-v`) say: part of every cache key, so
    /// an upgraded SPIN or compiler never reuses what the old one built or decided.
    pub versions: String,
}

#[derive(Debug, Error)]
pub enum EngineError {
    #[error(
        "`spin` is not on PATH: install SPIN (Debian and Ubuntu: `apt-get install spin`; macOS: `brew install spin`), or set KIVI_SPIN"
    )]
    MissingSpin,
    #[error(
        "no C compiler on PATH (`cc` or `gcc`): install one (Debian and Ubuntu: `apt-get install gcc`; macOS: `xcode-select --install`), or set KIVI_CC"
    )]
    MissingCompiler,
    #[error("cannot prepare a work directory: {0}")]
    Io(#[from] std::io::Error),
}

impl Tools {
    /// Find `spin`, a C compiler and `tcc` (`KIVI_SPIN`, `KIVI_CC` and `KIVI_QUICK_CC`
    /// override the PATH lookup; `KIVI_QUICK_CC=none` makes the quick build `cc -O0`).
    pub fn find() -> Result<Tools, EngineError> {
        let lookup = |var: &str, names: &[&str]| -> Option<PathBuf> {
            if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
                // An override must name a program; a wrong one is as good as none.
                return which::which(&p).ok();
            }
            names.iter().find_map(|n| which::which(n).ok())
        };
        let spin = lookup("KIVI_SPIN", &["spin"]).ok_or(EngineError::MissingSpin)?;
        let cc = lookup("KIVI_CC", &["cc", "gcc"]).ok_or(EngineError::MissingCompiler)?;
        let quick_cc = match std::env::var_os("KIVI_QUICK_CC") {
            Some(v) if v == "none" => None,
            _ => lookup("KIVI_QUICK_CC", &["tcc"]),
        };
        let mut versions = format!("{}\n{}", version_of(&spin, "-V"), version_of(&cc, "--version"));
        if let Some(quick) = &quick_cc {
            versions.push('\n');
            versions.push_str(&version_of(quick, "-v"));
        }
        Ok(Tools {
            spin,
            cc,
            quick_cc,
            versions,
        })
    }
}

/// The first line a tool prints about its version (empty when it cannot be run).
fn version_of(tool: &Path, flag: &str) -> String {
    let mut command = Command::new(tool);
    command.arg(flag);
    process::run(command, Duration::from_secs(10))
        .map(|f| {
            format!("{}{}", f.stdout, f.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default()
}

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

    /// The build a verification starts with.
    fn first_build(&self, model: &str) -> Build {
        // Most models are small: compile fast (tcc, or -O0: a tenth of -O2's time) and run
        // briefly; only a model that needs longer gets the optimised build and the full time
        // limit.
        self.tier(
            model,
            Build {
                optimised: self.always_optimised(),
                ..self.first_quick_build()
            },
        )
    }

    /// Whether every build is optimised: a run limit no longer than the quick run's leaves no
    /// time for a quick build to prove itself.
    fn always_optimised(&self) -> bool {
        self.options.time_limit <= QUICK_RUN
    }

    /// The key of `build`'s optimised twin, which `tier` weighs against the quick build.
    fn optimised_key(&self, model: &str, build: Build) -> String {
        self.key(
            model,
            Build {
                optimised: true,
                ..build
            },
        )
    }

    /// `build`, or its optimised twin when that is the better buy: built already (this run or
    /// the cache), or worth its compile. With the runs ahead of the model known (`expect_runs`),
    /// it is worth it when those runs at the quick runs' average so far would take longer
    /// than `OPTIMISED_PAYS_AFTER` (judged after `QUICK_SAMPLE` of quick runs): a unit of 40
    /// small topologies never compiles it, one of 200 does after its first second. Without,
    /// once the quick build has run for `QUICK_BUDGET` in all. The thread that finds it worth
    /// it compiles it; the others keep the quick build until it is there, so no core waits for
    /// the compiler (two that find it at once: one waits for the other).
    fn tier(&self, model: &str, build: Build) -> Build {
        if build.optimised {
            return build;
        }
        let optimised = Build {
            optimised: true,
            ..build
        };
        if self.is_built(model, optimised) {
            return optimised;
        }
        let key = self.optimised_key(model, build);
        let (spent, runs) = self
            .quick_spent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied()
            .unwrap_or_default();
        let expected = self
            .expected_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        let worth_it = match expected {
            Some(expected) if runs > 0 => {
                let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
                let ahead = (spent / count(runs)).saturating_mul(count(expected.saturating_sub(runs)));
                spent >= QUICK_SAMPLE && ahead >= OPTIMISED_PAYS_AFTER
            }
            _ => spent >= QUICK_BUDGET,
        };
        if !worth_it {
            return build;
        }
        // Being built by another thread: keep the quick build until it is there.
        let building = self
            .builds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .is_some_and(|cell| cell.get().is_none());
        if building { build } else { optimised }
    }

    /// The caller will verify `model` about `runs` times more (its topologies): `tier`
    /// weighs the -O2 compile against them. Said to the liveness twin too.
    pub fn expect_runs(&self, model: &str, runs: usize) {
        let key = self.optimised_key(model, self.first_quick_build());
        *self
            .expected_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default() += runs;
        if let Some(liveness) = &self.liveness {
            liveness.expect_runs(model, runs);
        }
    }

    /// The quick build a verification would start with (before `tier`).
    fn first_quick_build(&self) -> Build {
        Build {
            vector: self.options.vector_bytes,
            optimised: false,
            reach: false,
            random: false,
        }
    }

    /// Count `took` against the quick build `build` of `model` (see `tier`).
    fn spend(&self, model: &str, build: Build, took: Duration) {
        if build.optimised {
            return;
        }
        let key = self.optimised_key(model, build);
        let mut spent = self.quick_spent.lock().unwrap_or_else(|e| e.into_inner());
        let entry = spent.entry(key).or_default();
        entry.0 += took;
        entry.1 += 1;
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

    /// The pan of `model` built as `build`: from this engine's directory if it is there,
    /// else built now (once, however many threads ask).
    fn pan(&self, model: &str, build: Build, timings: &mut Timings) -> Result<PathBuf, Inconclusive> {
        let key = self.key(model, build);
        let cell = {
            let mut builds = self.builds.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(builds.entry(key.clone()).or_default())
        };
        cell.get_or_init(|| {
            let dir = self.root.join(&key);
            if dir.join("pan").is_file() {
                crate::cache::touch(&dir);
                return Ok(dir);
            }
            self.build(model, build, &dir, timings)
        })
        .clone()
    }

    /// The directory name of `model`'s pan built as `build`.
    fn key(&self, model: &str, build: Build) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.salt.as_bytes());
        hasher.update(
            format!(
                "\n{}\n{}\n{}\n{}\n",
                build.vector, build.optimised, build.reach, build.random
            )
            .as_bytes(),
        );
        hasher.update(model.as_bytes());
        hasher.finalize().to_hex()[..32].to_string()
    }

    /// Whether `model`'s pan built as `build` is there already (this run or the cache).
    fn is_built(&self, model: &str, build: Build) -> bool {
        self.root.join(self.key(model, build)).join("pan").is_file()
    }

    /// `spin -a` on the model in `work`: the files it wrote (`pan.c` with its stored states
    /// packed, `pan.h`, ...), to compile as any build.
    fn generate(&self, work: &Path) -> Result<Vec<(std::ffi::OsString, Vec<u8>)>, Inconclusive> {
        let io = |e: std::io::Error| Inconclusive::EngineError(format!("cannot read what spin -a wrote: {e}"));
        let mut spin = Command::new(&self.tools.spin);
        // Temporary files of spin's preprocessor stay in the run's directory, which is removed
        // even when the run is killed.
        spin.arg("-a").arg(MODEL_FILE).current_dir(work).env("TMPDIR", work);
        run_step(spin, self.options.build_time_limit, "spin -a")?;
        let mut files = Vec::new();
        for entry in std::fs::read_dir(work).map_err(io)?.flatten() {
            let name = entry.file_name();
            if name == MODEL_FILE || !entry.path().is_file() {
                continue;
            }
            let mut bytes = std::fs::read(entry.path()).map_err(io)?;
            // Stored states packed (packing.rs): the same search in a third of the memory.
            if name == "pan.c" {
                match std::str::from_utf8(&bytes).ok().and_then(packing::pack_states) {
                    Some(packed) => bytes = packed.into_bytes(),
                    None => {
                        tracing::info!("this SPIN's pan.c is not the one kivi-lint packs: its states are stored whole")
                    }
                }
            }
            files.push((name, bytes));
        }
        files.sort();
        Ok(files)
    }

    fn build(&self, model: &str, build: Build, dir: &Path, timings: &mut Timings) -> Result<PathBuf, Inconclusive> {
        let io = |e: std::io::Error| Inconclusive::EngineError(format!("cannot prepare a build directory: {e}"));
        // Build beside the final place and rename: another kivi-lint sharing the cache never
        // sees half a build.
        let work = tempfile::Builder::new()
            .prefix(".build-")
            .tempdir_in(&self.root)
            .map_err(io)?;
        std::fs::write(work.path().join(MODEL_FILE), model).map_err(io)?;
        let cell = {
            let mut generated = self.generated.lock().unwrap_or_else(|e| e.into_inner());
            let key = blake3::hash(model.as_bytes()).to_hex().to_string();
            if !generated.cells.contains_key(&key) {
                generated.order.push_back(key.clone());
                if generated.order.len() > GENERATED_KEPT
                    && let Some(old) = generated.order.pop_front()
                {
                    generated.cells.remove(&old);
                }
            }
            Arc::clone(generated.cells.entry(key).or_default())
        };
        let files = cell
            .get_or_init(|| {
                let started = Instant::now();
                let generated = self.generate(work.path());
                timings.spin += started.elapsed();
                generated.map(Arc::new)
            })
            .clone()?;
        for (name, bytes) in files.iter() {
            std::fs::write(work.path().join(name), bytes).map_err(io)?;
        }
        let started = Instant::now();
        let compiled = compile(&self.tools, work.path(), &self.options, build);
        timings.compile += started.elapsed();
        compiled?;
        // Keep the model (to read) and pan; the generated C is large and rebuilt at will.
        for entry in std::fs::read_dir(work.path()).map_err(io)?.flatten() {
            let name = entry.file_name();
            if name != "pan" && name != MODEL_FILE {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let work = work.keep();
        if std::fs::rename(&work, dir).is_err() {
            // Someone else finished the same build first: theirs is as good.
            let _ = std::fs::remove_dir_all(&work);
            if !dir.join("pan").is_file() {
                return Err(Inconclusive::EngineError(format!(
                    "cannot store the built pan in {}",
                    dir.display()
                )));
            }
        }
        Ok(dir.to_path_buf())
    }
}

/// Build directories a killed kivi-lint left in the cache (`.build-*`, renamed into place
/// when done): one older than a build can take is nobody's any more.
fn remove_stale_builds(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(3600)));
        if entry.file_name().to_string_lossy().starts_with(".build-") && stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Verify a PROMELA model that reads no input, with a throwaway engine.
pub fn verify(model: &str, tools: &Tools, options: &Options) -> Result<Outcome, EngineError> {
    let engine = Engine::new(tools.clone(), options.clone(), None)?;
    engine.verify(model, "", &AtomicBool::new(false))
}

fn first_lines(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Run a build step; a failure is an engine error with the tool's own words.
fn run_step(command: Command, limit: Duration, what: &str) -> Result<process::Finished, Inconclusive> {
    match process::run(command, limit) {
        Ok(f) if f.success => Ok(f),
        Ok(f) => Err(Inconclusive::EngineError(format!(
            "{what} failed ({}): {}",
            f.code
                .map_or_else(|| format!("signal {}", f.signal.unwrap_or(0)), |c| format!("exit {c}")),
            first_lines(&format!("{}\n{}", f.stdout, f.stderr))
        ))),
        Err(RunError::TimedOut { limit, .. }) => Err(Inconclusive::TimeLimit(limit)),
        // Ctrl-C, SIGTERM or --timeout stopped the build: the run was cancelled, nothing failed.
        Err(RunError::Cancelled { .. }) => Err(Inconclusive::Cancelled),
        Err(e) => Err(Inconclusive::EngineError(e.to_string())),
    }
}

fn compile(tools: &Tools, dir: &Path, options: &Options, build: Build) -> Result<(), Inconclusive> {
    // The quick build with tcc when there is one; should it fail, `cc -O0` builds it.
    if let Some(quick) = tools.quick_cc.as_ref().filter(|_| !build.optimised)
        && run_step(
            compile_command(quick, None, dir, options, build),
            options.build_time_limit,
            "tcc",
        )
        .is_ok()
    {
        return Ok(());
    }
    let level = if build.optimised { "-O2" } else { "-O0" };
    let mut cc = compile_command(&tools.cc, Some(level), dir, options, build);
    // Two of gcc's -O2 passes cost a quarter of the compile of a large pan (demo-shop's: 5.7 s
    // to 4.2 s) and buy its search nothing (2.95 s a run with them, 2.8 s without).
    if build.optimised && !tools.versions.contains("clang") {
        cc.args(["-fno-gcse", "-fno-schedule-insns2"]);
    }
    run_step(cc, options.build_time_limit, "compiling pan").map(|_| ())
}

/// `<compiler> [level] -w -o pan pan.c` with pan's options for `build`.
fn compile_command(compiler: &Path, level: Option<&str>, dir: &Path, options: &Options, build: Build) -> Command {
    let mut cc = Command::new(compiler);
    // gcc's own temporary files (cc1's assembly, as's objects) go to the build directory: a
    // compile killed by Ctrl-C or a cancelled job leaves nothing in the user's TMPDIR.
    cc.current_dir(dir).env("TMPDIR", dir);
    cc.args(level);
    cc.args(["-w", "-o", "pan", "pan.c"]);
    cc.arg(format!("-DMEMLIM={}", options.memory_mb))
        .arg(format!("-DVECTORSZ={}", build.vector));
    if build.random {
        cc.args(["-DBITSTATE", "-DT_RAND", "-DP_RAND"]);
    }
    match options.search {
        Search::Safety { .. } => {
            cc.arg("-DSAFETY");
            if build.reach {
                cc.arg("-DREACH");
            }
        }
        Search::NonProgress => {
            cc.arg("-DNP");
        }
    }
    cc
}

#[cfg(test)]
mod tests;

//! The incremental scaling search: each unit is verified on its topologies (nodes per pool,
//! starting replicas per workload) from the smallest up to the confident size, and a check
//! stops at its first violation, so the counterexample is the smallest cluster that shows it.
//!
//! One model is rendered and compiled per unit (its topologies are fed to it at run time), and
//! the runs are spread over `jobs` threads. A run at a larger topology may start before the
//! smaller ones are done; it is kept only if it monitored exactly the checks a one-by-one
//! search would have, so verdicts and counterexamples do not depend on `jobs`.

pub mod faults;
mod fewer;
mod planning;
pub use planning::plan;
use planning::{emit, plan_unit};
mod results;
mod runs;
mod simulation;
pub use simulation::{Simulate, SimulatedRun, simulate};
pub mod topologies;
mod verifier;
mod walk;
use walk::{searched, walk};

pub use fewer::{at_manifest_counts, plan_fewer_replicas, undecided_at_smallest};
use results::{load_results, result_key, store_results};
pub use runs::violation_subject;
use runs::{inconclusive, run_point};
pub use verifier::Verifier;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::analysis::Analysis;
use crate::checks::{self, CheckId};
use crate::config::Config;
use crate::engine::{self, Engine, TraceEvent};
use crate::manifest::Object;
use crate::model::{self, Generator, Ir, Names, Shape, Topology};
use crate::units::Unit;
pub use topologies::{Plan, Scale};

/// Environment events of the config the model does not explore yet: verdicts hold without them.
pub fn unmodelled_events(
    config: &crate::config::Config,
    environment: &crate::config::Environment,
) -> Vec<&'static str> {
    use crate::config::EnvironmentEvent::*;
    let mut out: Vec<&'static str> = config
        .events
        .iter()
        .filter(|e| matches!(e.value, Apply { .. }) && environment.previous_revision.is_none())
        .map(|e| e.value.type_name())
        .collect();
    out.dedup();
    out
}

/// How far the search went for a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchSummary {
    /// Topologies the search had, after deduplication and the `maxTopologies` cap.
    pub planned: usize,
    /// Topologies that were run (a search stops early once every check is decided).
    pub explored: usize,
    /// The largest topology every still-open check was verified on.
    pub verified_up_to: Option<Topology>,
    /// What bounds the search (`scaling.maxNodes`, the pools' `max`, ...).
    pub bound: String,
    /// The fault model the verdicts hold under ([`faults::describe`]); empty for the config's
    /// events combined.
    pub fault_model: String,
}

/// A unit's search as it ended, before its verdicts are told (`findings::conclude`).
#[derive(Clone, Debug)]
pub struct Searched {
    pub unit: usize,
    /// The part of the unit's fault model it explored.
    pub part: faults::Part,
    /// Its autoscalers were held at each topology's starting count, not run.
    pub autoscalers_held: bool,
    /// The checks the search monitored.
    pub checks: Vec<CheckId>,
    /// The runs kept, smallest topology first: each stops at the check it decided last.
    pub runs: Vec<TopologyRun>,
    /// Every check still open reached the end of its search (else it was cancelled).
    pub finished: bool,
    pub search: SearchSummary,
    /// Why nothing ran: the model could not be built, or even the smallest topology is
    /// beyond its bounds.
    pub failure: Option<engine::Inconclusive>,
    pub effort: Effort,
    /// What its models were sized to hold.
    pub shape: Shape,
}

/// What a unit's search cost, and where its verdicts came from.
#[derive(Clone, Debug, Default)]
pub struct Effort {
    pub timings: engine::Timings,
    /// States pan stored, over all its runs for the unit.
    pub states: u64,
    pub generate: Duration,
    pub elapsed: Duration,
    /// The verdicts come from the result cache.
    pub cached: bool,
    /// The unit (index) whose runs this one shares: they have the same models and inputs.
    pub shares_runs_with: Option<usize>,
}

/// The kept runs at one topology: what each check came to, and the model's IR and names to
/// tell its counterexample with.
#[derive(Clone, Debug)]
pub struct TopologyRun {
    pub topology: Topology,
    pub ir: Ir,
    pub names: Names,
    pub verdicts: Vec<(CheckId, PointVerdict)>,
}

/// Progress of a verification, for a progress bar or log lines.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub units_done: usize,
    pub units: usize,
    pub runs_done: usize,
    /// Runs planned: topologies of the units still searching, plus those done.
    pub runs: usize,
    /// The unit of the run that finished last.
    pub current: String,
}

#[derive(Clone, Debug)]
pub struct Options {
    /// Write each unit's model to `<dir>/<unit id>.pml` and its inputs beside it.
    pub emit_models: Option<PathBuf>,
    /// Where verified units' results are kept (`None`: no result cache).
    pub result_cache: Option<PathBuf>,
    pub jobs: usize,
    pub scale: Scale,
    /// Every distinct violation (`--all`): a check's monitor spares each workload it found
    /// violating and searches again, and larger topologies are searched after a violation.
    pub all: bool,
    /// Workloads the checks' monitors leave out (a fix candidate for one of several
    /// violations of a check is verified apart from the others).
    pub spared: Vec<model::Spared>,
    /// Only the verdicts matter (a fix candidate's check): a counterexample is not shortened.
    pub verdicts_only: bool,
    /// Models are sized to hold at least this (a fix candidate's: the shape of the unit's own
    /// search, so a candidate that changes only input tables reuses its compiled pan).
    pub shape_floor: Option<Shape>,
    /// Monitor only these of a unit's checks (a fix candidate's); its models still hold the
    /// others, unmonitored, so they are the unit's own models.
    pub monitor: Option<Vec<CheckId>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emit_models: None,
            result_cache: None,
            jobs: 1,
            scale: Scale::Search,
            all: false,
            spared: Vec::new(),
            verdicts_only: false,
            shape_floor: None,
            monitor: None,
        }
    }
}

/// One topology of a unit, ready to run.
struct Point {
    topology: Topology,
    ir: Ir,
    names: Names,
    /// Index into the unit's models.
    model: usize,
}

/// A unit's search: its points, smallest first, and the models they run on. Planned once
/// ([`plan`]); PR mode compares fingerprints of plans, then searches the changed ones.
pub struct UnitPlan {
    unit: usize,
    /// The part of the unit's fault model this search explores.
    part: faults::Part,
    /// The unit's autoscalers are held at each topology's starting count.
    autoscalers_held: bool,
    name: String,
    checks: Vec<CheckId>,
    points: Vec<Point>,
    models: Vec<String>,
    shape: Shape,
    bound: String,
    /// A failure before any run (the IR of the first topology could not be built).
    failure: Option<String>,
    /// Even the smallest topology is beyond the model's bounds: inconclusive, not an error.
    bounded: Option<String>,
    generate: Duration,
}

/// What one check came to at one topology.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PointVerdict {
    Verified,
    Violated(Vec<TraceEvent>),
    Inconclusive(engine::Inconclusive),
}

/// The runs at one topology, starting from a set of checks.
#[derive(Clone, Debug)]
struct PointResult {
    group: Vec<CheckId>,
    verdicts: Vec<(CheckId, PointVerdict)>,
    timings: engine::Timings,
    states: u64,
}

/// What verifying units reads: the units, the objects they are made of and the config. A
/// scan verifies its analysis ([`Subject::of`]); a fix candidate, an edited copy of it.
#[derive(Clone, Copy)]
pub struct Subject<'a> {
    pub units: &'a [Unit],
    pub objects: &'a [Object],
    pub config: &'a Config,
    pub environment: &'a crate::config::Environment,
}

impl<'a> Subject<'a> {
    pub fn of(analysis: &'a Analysis) -> Subject<'a> {
        Subject {
            units: &analysis.units,
            objects: &analysis.objects,
            config: &analysis.config,
            environment: &analysis.environment,
        }
    }
}

impl UnitPlan {
    /// The unit (an index into the subject's units).
    pub fn unit(&self) -> usize {
        self.unit
    }

    /// A hash of everything the unit's verdicts depend on (the result cache key): equal
    /// fingerprints mean equal verdicts, whatever the manifests look like.
    pub fn fingerprint(&self, options: &Options, engine: &Engine) -> String {
        result_key(self, options, engine)
    }
}

/// Search the planned units: the runs each kept (`findings::verify_plans` tells them as
/// verdicts). `cancel` (Ctrl-C) stops every run; `progress` hears of each finished run.
pub fn search_plans(
    subject: Subject<'_>,
    all_plans: Vec<UnitPlan>,
    engine: &Engine,
    options: &Options,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Vec<Searched> {
    let started = Instant::now();
    if let Some(dir) = &options.emit_models {
        emit(dir, subject, &all_plans);
    }
    // Units with the same models and inputs have the same verdicts (the overlays of one base
    // often are): the first is searched, and the others share its runs but decode them with
    // their own names.
    let keys: Vec<String> = all_plans.iter().map(|p| result_key(p, options, engine)).collect();
    let mut leaders: Vec<usize> = Vec::new();
    let mut leader_of: Vec<usize> = Vec::with_capacity(all_plans.len());
    for key in &keys {
        match leaders.iter().position(|&l| keys[l] == *key) {
            Some(k) => leader_of.push(k),
            None => {
                leader_of.push(leaders.len());
                leaders.push(leader_of.len() - 1);
            }
        }
    }
    let plans: Vec<&UnitPlan> = leaders.iter().map(|&i| &all_plans[i]).collect();
    // Units whose results are cached start with them: the search finds nothing to run.
    let preloaded: Vec<Option<Vec<Option<PointResult>>>> = leaders
        .iter()
        .map(|&i| load_results(options.result_cache.as_ref()?, &keys[i], all_plans[i].points.len()))
        .collect();
    let cached: Vec<bool> = preloaded.iter().map(Option::is_some).collect();
    // The engine weighs each model's optimised compile against the runs ahead of it.
    for (plan, _) in plans.iter().zip(&cached).filter(|(_, cached)| !**cached) {
        for (k, model) in plan.models.iter().enumerate() {
            engine.expect_runs(model, plan.points.iter().filter(|p| p.model == k).count());
        }
    }
    let outcomes = run_searches(&plans, preloaded, engine, options, cancel, progress);
    if let Some(dir) = &options.result_cache {
        for ((&i, (results, _)), was_cached) in leaders.iter().zip(&outcomes).zip(&cached) {
            if !was_cached {
                store_results(dir, &keys[i], &all_plans[i], results, options.all);
            }
        }
    }
    tracing::debug!(
        "verified {} units ({} searched) in {:.2?}",
        all_plans.len(),
        plans.len(),
        started.elapsed()
    );
    let units: Vec<usize> = all_plans.iter().map(|p| p.unit).collect();
    all_plans
        .into_iter()
        .enumerate()
        .map(|(i, plan)| {
            let k = leader_of[i];
            let (points, elapsed) = &outcomes[k];
            let leader = leaders[k];
            let elapsed = if leader == i { *elapsed } else { Duration::ZERO };
            let mut r = searched(plan, points, options.all, elapsed);
            r.effort.cached = cached[k];
            r.effort.shares_runs_with = (leader != i).then(|| units[leader]);
            r
        })
        .collect()
}

/// A run to do: the point of a unit, monitoring `group`.
struct Job {
    id: u64,
    plan: usize,
    point: usize,
    group: Vec<CheckId>,
    cancel: Arc<AtomicBool>,
}

/// A run under way: the checks it monitors, its cancel flag, its job id.
type Running = (Vec<CheckId>, Arc<AtomicBool>, u64);

/// Per unit: the accepted result of each point, and for how long its runs took.
type Outcome = (Vec<Option<PointResult>>, Duration);

fn run_searches(
    plans: &[&UnitPlan],
    preloaded: Vec<Option<Vec<Option<PointResult>>>>,
    engine: &Engine,
    options: &Options,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Vec<Outcome> {
    let mut results: Vec<Vec<Option<PointResult>>> = plans
        .iter()
        .zip(preloaded)
        .map(|(p, pre)| pre.unwrap_or_else(|| vec![None; p.points.len()]))
        .collect();
    let mut elapsed = vec![Duration::ZERO; plans.len()];
    // Per unit, the running jobs: point → (group, cancel flag, job id).
    let mut running: Vec<BTreeMap<usize, Running>> = vec![BTreeMap::new(); plans.len()];
    let mut next_id = 0u64;
    let jobs: Mutex<std::collections::VecDeque<Job>> = Mutex::new(Default::default());
    let (done_tx, done_rx) = mpsc::channel::<(u64, usize, usize, Option<PointResult>, Duration)>();
    let (wake_tx, wake_rx) = mpsc::channel::<()>();
    let wake_rx = Mutex::new(wake_rx);
    let workers = options.jobs.max(1);
    // A unit is several plans (the searches of its fault model): progress counts units.
    let units_of_plans: std::collections::BTreeSet<usize> = plans.iter().map(|p| p.unit).collect();
    let mut state = Progress {
        units: units_of_plans.len(),
        ..Progress::default()
    };
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            let (jobs, wake_rx) = (&jobs, &wake_rx);
            scope.spawn(move || {
                loop {
                    // Wait to be woken, then take a job; `Err` means the coordinator is done.
                    if wake_rx.lock().unwrap_or_else(|e| e.into_inner()).recv().is_err() {
                        return;
                    }
                    let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some(job) = job else { continue };
                    let t = Instant::now();
                    // A panic in a run must not leave the coordinator waiting for it.
                    let result = run_job(plans, &job, engine, options);
                    if done_tx
                        .send((job.id, job.plan, job.point, result, t.elapsed()))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut in_flight = 0usize;
        loop {
            if cancel.load(Ordering::Relaxed) {
                for r in running.iter().flat_map(|m| m.values()) {
                    r.1.store(true, Ordering::Relaxed);
                }
            }
            // Accept what is consistent, cancel what no longer is, and queue the next runs.
            let Scan {
                finished_units,
                open_units,
                mut candidates,
            } = scan(plans, &results, &running, options.all, &mut state);
            state.units_done = state.units - open_units.len();
            if finished_units == plans.len() || (cancel.load(Ordering::Relaxed) && in_flight == 0) {
                // The last word is the final count (every run done), not the one before it.
                progress(&state);
                break;
            }
            // Smallest points first, across units.
            candidates.sort_by_key(|(point, u, _)| (*point, *u));
            let free = (workers + 1).saturating_sub(in_flight);
            if !cancel.load(Ordering::Relaxed) {
                for (point, u, group) in candidates.into_iter().take(free) {
                    let flag = Arc::new(AtomicBool::new(false));
                    next_id += 1;
                    if let Some((_, old, _)) = running[u].insert(point, (group.clone(), Arc::clone(&flag), next_id)) {
                        old.store(true, Ordering::Relaxed);
                    }
                    jobs.lock().unwrap_or_else(|e| e.into_inner()).push_back(Job {
                        id: next_id,
                        plan: u,
                        point,
                        group,
                        cancel: flag,
                    });
                    in_flight += 1;
                    let _ = wake_tx.send(());
                }
            }
            if in_flight == 0 {
                // Nothing runs and nothing could be queued: cancelled before starting.
                break;
            }
            let Ok((id, u, point, result, took)) = done_rx.recv_timeout(Duration::from_millis(100)) else {
                // Long runs still show progress (the elapsed time, the ETA).
                progress(&state);
                continue;
            };
            in_flight -= 1;
            elapsed[u] += took;
            if running[u].get(&point).is_some_and(|(_, _, current)| *current == id) {
                running[u].remove(&point);
            }
            // A point the search has passed keeps the result it was accepted with.
            if let Some(result) = result
                && point >= walk(plans[u], &results[u], options.all).next
            {
                results[u][point] = Some(result);
            }
            state.current = plans[u].name.clone();
            progress(&state);
        }
        drop(wake_tx);
    });
    results.into_iter().zip(elapsed).collect()
}

/// One queued run: its point of its plan, monitoring its group. A panic in a run must not
/// leave the coordinator waiting for it: it is an inconclusive result.
fn run_job(plans: &[&UnitPlan], job: &Job, engine: &Engine, options: &Options) -> Option<PointResult> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_point(plans[job.plan], job.point, &job.group, engine, options, &job.cancel)
    }))
    .unwrap_or_else(|_| {
        Some(PointResult {
            group: job.group.clone(),
            verdicts: inconclusive(
                &job.group,
                &engine::Inconclusive::EngineError("internal error (a bug in kivi-lint)".into()),
            ),
            timings: engine::Timings::default(),
            states: 0,
        })
    })
}

/// Where the searches stand: the plans that are done, the units still open, and the runs
/// worth queueing (point, plan, the checks to monitor).
struct Scan {
    finished_units: usize,
    open_units: std::collections::BTreeSet<usize>,
    candidates: Vec<(usize, usize, Vec<CheckId>)>,
}

/// Accept what is consistent, cancel the runs that no longer are, and list the next runs;
/// `state` counts the runs.
fn scan(
    plans: &[&UnitPlan],
    results: &[Vec<Option<PointResult>>],
    running: &[BTreeMap<usize, Running>],
    all: bool,
    state: &mut Progress,
) -> Scan {
    let mut finished_units = 0;
    let mut open_units = std::collections::BTreeSet::new();
    let mut candidates: Vec<(usize, usize, Vec<CheckId>)> = Vec::new();
    state.runs = 0;
    state.runs_done = 0;
    for (u, plan) in plans.iter().enumerate() {
        let w = walk(plan, &results[u], all);
        // Runs that can no longer be accepted are stopped (their results come back empty).
        for (&point, (group, flag, _)) in &running[u] {
            if point < w.next || (point == w.next && *group != w.open) || w.open.is_empty() {
                flag.store(true, Ordering::Relaxed);
            }
        }
        let done = w.next >= plan.points.len() || w.open.is_empty() || plan.failure.is_some() || plan.bounded.is_some();
        state.runs_done += results[u].iter().filter(|r| r.is_some()).count();
        state.runs += if done {
            results[u].iter().filter(|r| r.is_some()).count()
        } else {
            plan.points.len()
        };
        if done {
            finished_units += 1;
            continue;
        }
        open_units.insert(plan.unit);
        // Speculate: later points run with the checks open now, which is what a
        // one-by-one search will have unless an earlier point decides one.
        for (point, result) in results[u].iter().enumerate().skip(w.next) {
            let wanted = result.as_ref().is_none_or(|r| r.group != w.open);
            let busy = running[u]
                .get(&point)
                .is_some_and(|(g, f, _)| *g == w.open && !f.load(Ordering::Relaxed));
            if wanted && !busy {
                candidates.push((point, u, w.open.clone()));
            }
        }
    }
    Scan {
        finished_units,
        open_units,
        candidates,
    }
}

/// A topology in words: `3 nodes (zone-a 2, zone-b 1), php-apache from 5 replicas`.
pub fn describe(subject: Subject<'_>, unit: usize, topology: &Topology) -> String {
    let pools: Vec<String> = subject.units[unit]
        .cluster(subject.config)
        .pools
        .iter()
        .zip(&topology.nodes_per_pool)
        .filter(|(_, n)| **n > 0)
        .map(|(p, n)| format!("{} {n}", p.name))
        .collect();
    let nodes = topology.nodes();
    let mut out = format!(
        "{} ({})",
        crate::diagnostics::plural(nodes as usize, "node"),
        pools.join(", ")
    );
    let replicas: Vec<String> = subject.units[unit]
        .workloads()
        .zip(&topology.replicas)
        .filter_map(|(w, r)| {
            let r = (*r)?;
            let name = &subject.objects[w].id.name;
            // A fixed count held lower ([`plan_fewer_replicas`]) is not the manifests'.
            match subject.objects[w].workload() {
                Some(wl) if subject.units[unit].autoscaler_of(subject.objects, w).is_none() => {
                    let desired = wl.desired_replicas();
                    Some(if i64::from(r) >= i64::from(desired) {
                        format!(
                            "{name} at its {}",
                            crate::diagnostics::plural(desired.max(0) as usize, "replica")
                        )
                    } else {
                        format!("{name} at {r} of its {desired} replicas")
                    })
                }
                _ => Some(format!(
                    "{name} from {}",
                    crate::diagnostics::plural(r as usize, "replica")
                )),
            }
        })
        .collect();
    if !replicas.is_empty() {
        out.push_str(", ");
        out.push_str(&replicas.join(", "));
    }
    out
}

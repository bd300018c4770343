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
mod results;
mod runs;
pub mod topologies;
mod verifier;

pub use fewer::{at_manifest_counts, plan_fewer_replicas, undecided_at_smallest};
use results::{load_results, result_key, store_results};
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
pub fn unmodelled_events(config: &crate::config::Config) -> Vec<&'static str> {
    use crate::config::EnvironmentEvent::*;
    let mut out: Vec<&'static str> = config
        .events
        .iter()
        .filter(|e| matches!(e.value, Apply { .. }) && config.previous_revision.is_none())
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
    /// Keep searching larger topologies after a check's first violation.
    pub all: bool,
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
}

impl<'a> Subject<'a> {
    pub fn of(analysis: &'a Analysis) -> Subject<'a> {
        Subject {
            units: &analysis.units,
            objects: &analysis.objects,
            config: &analysis.config,
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

/// Plan the given units of the subject (indices into its units): render their models and
/// list their topologies, one plan per search of each unit's fault model ([`faults`]),
/// consecutive.
pub fn plan(subject: Subject<'_>, units: &[usize], generator: &Generator, options: &Options) -> Vec<UnitPlan> {
    units
        .iter()
        .flat_map(|&i| {
            let unit = &subject.units[i];
            let config = unit.config(subject.config);
            let searches = faults::searches(unit, &config);
            if searches.is_empty() {
                // A unit with no check to monitor still has a (empty) plan: it is told.
                return vec![plan_unit(subject, generator, options, i, None, false)];
            }
            searches
                .iter()
                .map(|search| plan_unit(subject, generator, options, i, Some(search), false))
                .collect()
        })
        .collect()
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

/// The plan of one search of unit `i` (`None`: the unit has no check to monitor); with
/// `fewer`, on its smallest topology with fewer replicas ([`plan_fewer_replicas`]).
fn plan_unit(
    subject: Subject<'_>,
    generator: &Generator,
    options: &Options,
    i: usize,
    search: Option<&faults::Search>,
    fewer: bool,
) -> UnitPlan {
    let unit = &subject.units[i];
    let started = Instant::now();
    let part = search.map_or(faults::Part::Combined, |s| s.part);
    let checks: Vec<CheckId> = search
        .map(|s| s.checks.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| options.monitor.as_ref().is_none_or(|m| m.contains(c)))
        .collect();
    let mut plan = UnitPlan {
        unit: i,
        part,
        autoscalers_held: search.is_some_and(|s| !s.autoscalers)
            && unit.members.iter().any(|m| m.role == crate::units::Role::Autoscaler),
        name: unit.name.clone(),
        checks,
        points: Vec::new(),
        models: Vec::new(),
        shape: Shape::default(),
        bound: String::new(),
        failure: None,
        bounded: None,
        generate: Duration::ZERO,
    };
    let Some(search) = search.filter(|_| !plan.checks.is_empty()) else {
        return plan;
    };
    let config = faults::config_for(unit, search, subject.config, subject.objects);
    let model_unit = faults::unit_for(unit, search);
    // The topologies are the unit's own: an autoscaled workload starts at every count of its
    // range, where its autoscaler is held too.
    let mut topologies = topologies::plan(unit, subject.objects, &config, options.scale);
    if part == faults::Part::ImplicitDrain && options.scale == Scale::Current {
        // A fix keeps the implicit drain verified where the search verified it: on the
        // smallest cluster (each pool at its `min`), not on the counterexample's.
        for (n, pool) in topologies.topologies[0]
            .nodes_per_pool
            .iter_mut()
            .zip(&config.cluster.pools)
        {
            *n = pool.min.min(*n);
        }
    } else if part == faults::Part::ImplicitDrain {
        // A drain is hardest where the fewest nodes take the evicted pods' replacements and
        // the fewest replicas leave a budget the least room, while larger clusters multiply
        // the states of every settled placement (demo-shop's production unit: 38 million more
        // states at 5 nodes, over the memory limit). So the drain is explored on the smallest
        // cluster of the search, at every replica count, and the report says so.
        let fewest = topologies.topologies.iter().map(Topology::nodes).min().unwrap_or(0);
        topologies.topologies.retain(|t| t.nodes() == fewest);
    }
    plan.bound = topologies.bound;
    if topologies.topologies.is_empty() {
        plan.failure = Some("no topology to verify: no node pool can have a node".into());
        return plan;
    }
    if fewer {
        topologies.topologies = fewer::fewer_replicas(unit, subject.objects, &topologies.topologies[0]);
    }
    let mut built = Vec::new();
    for topology in topologies.topologies {
        match model::ir::build(&model_unit, subject.objects, &config, &topology) {
            Ok((ir, names)) => built.push((topology, ir, names)),
            // A larger topology than the model holds ends the search there.
            Err(e) if !built.is_empty() => {
                plan.bound = format!("{} ({e})", plan.bound);
                break;
            }
            Err(e) if e.is_bound() => {
                plan.bounded = Some(e.to_string());
                break;
            }
            Err(e) => {
                plan.failure = Some(e.to_string());
                break;
            }
        }
    }
    // Topologies where the HPAs had to be held below their maxReplicas to fit the model.
    let capped: Vec<i64> = built.iter().filter_map(|(_, _, names)| names.replica_cap).collect();
    if let (Some(low), Some(high)) = (capped.iter().min(), capped.iter().max()) {
        if !plan.bound.is_empty() {
            plan.bound.push_str(", ");
        }
        let range = if low == high {
            low.to_string()
        } else {
            format!("{low}-{high}")
        };
        plan.bound.push_str(&format!(
            "maxReplicas held at {range} on {} of the topologies (more pods than the {} one model holds)",
            capped.len(),
            model::ir::MAX_PODS
        ));
    }
    plan.shape = Shape::of(built.iter().map(|(_, ir, _)| ir));
    if let Some(floor) = &options.shape_floor {
        plan.shape = plan.shape.join(floor);
    }
    // The autoscaler's logs hold one earlier entry each (docs/conformance.md, "Time in the autoscaler").
    if plan.shape.hpa_log > 1 {
        if !plan.bound.is_empty() {
            plan.bound.push_str(", ");
        }
        plan.bound.push_str("one earlier entry per autoscaler log");
    }
    for (topology, ir, names) in built {
        let rendered = match generator.render(&ir, &plan.shape) {
            Ok(text) => text,
            Err(e) => {
                plan.failure = Some(e.to_string());
                break;
            }
        };
        // Topologies whose models render alike share one model (and one compiled pan).
        let model = match plan.models.iter().position(|m| *m == rendered) {
            Some(k) => k,
            None => {
                plan.models.push(rendered);
                plan.models.len() - 1
            }
        };
        plan.points.push(Point {
            topology,
            ir,
            names,
            model,
        });
    }
    plan.generate = started.elapsed();
    plan
}

fn emit(dir: &std::path::Path, subject: Subject<'_>, plans: &[UnitPlan]) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for plan in plans {
            let unit_id = &subject.units[plan.unit].id;
            let id = match plan.part.slug() {
                Some(slug) => format!("{unit_id}.{slug}"),
                None => unit_id.clone(),
            };
            for (k, model) in plan.models.iter().enumerate() {
                let name = if k == 0 {
                    format!("{id}.pml")
                } else {
                    format!("{id}.{k}.pml")
                };
                crate::source::write_replacing(&dir.join(name), model.as_bytes())?;
            }
            for (t, point) in plan.points.iter().enumerate() {
                crate::source::write_replacing(
                    &dir.join(format!("{id}.{}.input", t + 1)),
                    model::input(&point.ir, &plan.shape, &plan.checks).as_bytes(),
                )?;
            }
        }
        Ok(())
    };
    if let Err(e) = write() {
        tracing::warn!("cannot write the models to {}: {e}", dir.display());
    }
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

/// Where a unit's sequential search stands, given the results so far.
struct Walk {
    /// The first point without an accepted result (points.len() when finished).
    next: usize,
    /// Checks still open at `next`.
    open: Vec<CheckId>,
    /// Points the verdicts rest on: up to the one that decided the last open check. Results
    /// past it (run speculatively, in parallel) are not part of the search.
    decided: usize,
}

fn walk(plan: &UnitPlan, results: &[Option<PointResult>], all: bool) -> Walk {
    let mut open = plan.checks.clone();
    for (t, result) in results.iter().enumerate() {
        if open.is_empty() {
            return Walk {
                next: plan.points.len(),
                open,
                decided: t,
            };
        }
        match result {
            Some(r) if r.group == open => {
                for (check, verdict) in &r.verdicts {
                    let decided = match verdict {
                        PointVerdict::Verified => false,
                        PointVerdict::Violated(_) => !all,
                        PointVerdict::Inconclusive(_) => true,
                    };
                    if decided {
                        open.retain(|c| c != check);
                    }
                }
            }
            _ => {
                return Walk {
                    next: t,
                    open,
                    decided: t,
                };
            }
        }
    }
    Walk {
        next: plan.points.len(),
        decided: plan.points.len(),
        open,
    }
}

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
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_point(
                            plans[job.plan],
                            job.point,
                            &job.group,
                            engine,
                            options.verdicts_only,
                            &job.cancel,
                        )
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
                    });
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
            let mut finished_units = 0;
            let mut open_units = std::collections::BTreeSet::new();
            let mut candidates: Vec<(usize, usize, Vec<CheckId>)> = Vec::new();
            state.runs = 0;
            state.runs_done = 0;
            for (u, plan) in plans.iter().enumerate() {
                let w = walk(plan, &results[u], options.all);
                // Runs that can no longer be accepted are stopped (their results come back empty).
                for (&point, (group, flag, _)) in &running[u] {
                    if point < w.next || (point == w.next && *group != w.open) || w.open.is_empty() {
                        flag.store(true, Ordering::Relaxed);
                    }
                }
                let done = w.next >= plan.points.len()
                    || w.open.is_empty()
                    || plan.failure.is_some()
                    || plan.bounded.is_some();
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

/// A unit's search as it ended: the runs a one-by-one search would have kept, each check's
/// decided at its first violation (or first inconclusive run).
fn searched(plan: UnitPlan, results: &[Option<PointResult>], all: bool, elapsed: Duration) -> Searched {
    let w = walk(&plan, results, all);
    let finished = w.next >= plan.points.len() || w.open.is_empty();
    let planned = plan.points.len();
    let mut timings = engine::Timings::default();
    let mut states = 0;
    let mut verified_up_to = None;
    let runs: Vec<TopologyRun> = plan
        .points
        .into_iter()
        .zip(results.iter().take(w.decided).map_while(Option::as_ref))
        .map(|(point, r)| {
            timings.add(&r.timings);
            states += r.states;
            if r.verdicts.iter().all(|(_, v)| *v == PointVerdict::Verified) {
                verified_up_to = Some(point.topology.clone());
            }
            TopologyRun {
                topology: point.topology,
                ir: point.ir,
                names: point.names,
                verdicts: r.verdicts.clone(),
            }
        })
        .collect();
    Searched {
        unit: plan.unit,
        part: plan.part,
        autoscalers_held: plan.autoscalers_held,
        checks: plan.checks,
        search: SearchSummary {
            planned,
            explored: runs.len(),
            verified_up_to,
            bound: plan.bound,
            fault_model: String::new(),
        },
        runs,
        finished,
        failure: plan
            .failure
            .map(engine::Inconclusive::EngineError)
            .or_else(|| plan.bounded.map(engine::Inconclusive::ModelBound)),
        effort: Effort {
            timings,
            states,
            generate: plan.generate,
            elapsed: elapsed + plan.generate,
            cached: false,
            shares_runs_with: None,
        },
        shape: plan.shape,
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

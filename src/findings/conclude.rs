//! A unit's search told as verdicts: each check's first violation with its counterexample in
//! Kubernetes terms, its first inconclusive run, or verified up to the last topology it ran on.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::model::{Shape, Topology};
use crate::search::faults::{self, Part};
use crate::search::{self, Effort, PointVerdict, Progress, SearchSummary, Searched, Subject, Verifier};

/// A unit's verdicts, one per check, and what the search cost.
#[derive(Clone, Debug)]
pub struct UnitResult {
    pub unit: usize,
    pub results: Vec<CheckResult>,
    pub search: SearchSummary,
    pub effort: Effort,
    /// What its models were sized to hold.
    pub shape: Shape,
    /// What reports say of each topology the verdicts name ([`super::facts::describe`]).
    pub topologies: Vec<(Topology, super::facts::TopologyFacts)>,
    /// Configured events the model could not explore: the verdicts hold without them.
    pub unmodelled_events: Vec<&'static str>,
    /// `--all`: the further violations of its checks, distinct from the first by the field they
    /// point at (else by workload), in the order the search found them. [`by_unit`] puts each
    /// after its check's first.
    pub more: Vec<CheckResult>,
}

/// Verify the given units of the subject (indices into its units) and tell their verdicts.
pub fn verify(verifier: &Verifier<'_>, subject: Subject<'_>, units: &[usize]) -> Vec<UnitResult> {
    let plans = verifier.plan(subject, units);
    verify_plans(verifier, subject, plans)
}

/// [`verify`] of units already planned. What reports say of the topologies is left out: these
/// results are compared (PR mode's base revision) or judged (fix candidates), never reported.
pub fn verify_plans(verifier: &Verifier<'_>, subject: Subject<'_>, plans: Vec<search::UnitPlan>) -> Vec<UnitResult> {
    let searched = verifier.search(subject, plans);
    by_unit(searched.into_iter().map(|s| told(subject, s)).collect())
}

/// The results with what reports say of their topologies.
fn described(subject: Subject<'_>, mut results: Vec<UnitResult>) -> Vec<UnitResult> {
    for r in &mut results {
        super::facts::describe(subject, r);
    }
    results
}

/// A search's verdicts, with the part of the fault model it explored.
fn told(subject: Subject<'_>, searched: Searched) -> (UnitResult, (Part, bool)) {
    let part = (searched.part, searched.autoscalers_held);
    (conclude(subject, searched), part)
}

/// [`verify_plans`], and then, for each check a limit left undecided on its search's smallest
/// topology, the same search with fewer replicas ([`search::plan_fewer_replicas`]): what held
/// there makes the inconclusive verdict a partial one that says with how many replicas (a
/// scan's verdicts; a fix or the base revision of a pull request needs none), with what reports
/// say of their topologies.
pub fn verify_plans_or_fewer(
    verifier: &Verifier<'_>,
    subject: Subject<'_>,
    plans: Vec<search::UnitPlan>,
) -> Vec<UnitResult> {
    // The second round's progress continues the first's.
    let last = std::sync::Mutex::new(Progress::default());
    let first_round = |p: &Progress| {
        *last.lock().unwrap_or_else(|e| e.into_inner()) = p.clone();
        (verifier.progress)(p);
    };
    let searched = verifier.with_progress(&first_round).search(subject, plans);
    let mut fewer: Vec<(usize, search::UnitPlan)> = Vec::new();
    for (k, s) in searched.iter().enumerate() {
        if let Some(plan) = verifier.plan_fewer_replicas(subject, s) {
            fewer.push((k, plan));
        }
    }
    let mut results: Vec<(UnitResult, (Part, bool))> = searched.into_iter().map(|s| told(subject, s)).collect();
    if fewer.is_empty() || verifier.cancelled() {
        return described(subject, by_unit(results));
    }
    let before = last.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let again: std::collections::BTreeSet<usize> = fewer.iter().map(|(_, p)| p.unit()).collect();
    let second_round = |p: &Progress| {
        (verifier.progress)(&Progress {
            units_done: before.units - again.len() + p.units_done,
            units: before.units,
            runs_done: before.runs_done + p.runs_done,
            runs: before.runs + p.runs,
            current: p.current.clone(),
        })
    };
    let (at, plans): (Vec<usize>, Vec<search::UnitPlan>) = fewer.into_iter().unzip();
    for (k, searched) in at
        .into_iter()
        .zip(verifier.with_progress(&second_round).search(subject, plans))
    {
        let explored = searched.runs.len();
        let k_unit = searched.unit;
        let smaller = conclude(subject, searched);
        for mine in &mut results[k].0.results {
            let Verdict::Inconclusive(why) = &mine.verdict else {
                continue;
            };
            if mine.held_up_to.is_some() || !why.is_limit() {
                continue;
            }
            let Some(theirs) = smaller.results.iter().find(|r| r.check == mine.check) else {
                continue;
            };
            let held = match &theirs.verdict {
                Verdict::Verified => theirs.topology.clone().map(|t| (t, explored)),
                Verdict::Inconclusive(_) => theirs.held_up_to.clone().map(|t| (t, theirs.held_topologies)),
                _ => None,
            };
            if let Some((topology, count)) = held {
                // Not decided where the manifests' counts are: said with them.
                if mine
                    .topology
                    .as_ref()
                    .is_none_or(|t| t.nodes_per_pool == topology.nodes_per_pool)
                {
                    mine.topology = Some(search::at_manifest_counts(subject, k_unit, &topology));
                }
                mine.held_up_to = Some(topology);
                mine.held_topologies = count;
            }
        }
        add_effort(&mut results[k].0.effort, smaller.effort);
    }
    described(subject, by_unit(results))
}

/// The results of the searches of each unit's fault model (consecutive) as one per unit.
fn by_unit(results: Vec<(UnitResult, (Part, bool))>) -> Vec<UnitResult> {
    let mut out: Vec<(UnitResult, Vec<(Part, bool)>)> = Vec::new();
    for (result, part) in results {
        // The searches of a unit's fault model follow each other: one result per unit.
        match out.last_mut() {
            Some((last, parts)) if last.unit == result.unit => {
                merge(last, result);
                parts.push(part);
            }
            _ => out.push((result, vec![part])),
        }
    }
    out.into_iter()
        .map(|(mut result, parts)| {
            result.search.fault_model = faults::describe(&parts);
            with_more(&mut result);
            result
        })
        .collect()
}

/// `--all`: each further violation after the last result of its check, unless a result of the
/// check already points at the same field for the same workload (a larger topology, another
/// search of the fault model, finds it again).
fn with_more(result: &mut UnitResult) {
    for extra in std::mem::take(&mut result.more) {
        let same = |r: &CheckResult| {
            r.check == extra.check
                && r.workload == extra.workload
                && matches!((&r.verdict, &extra.verdict),
                    (Verdict::Violated { location: a, .. }, Verdict::Violated { location: b, .. }) if a == b)
        };
        if result.results.iter().any(same) {
            continue;
        }
        let Some(at) = result.results.iter().rposition(|r| r.check == extra.check) else {
            continue;
        };
        if !matches!(result.results[at].verdict, Verdict::Violated { .. }) {
            continue;
        }
        result.results.insert(at + 1, extra);
    }
}

/// How much a verdict says, to combine the searches of a fault model: a violation in any of
/// them is one, an inconclusive search leaves the check undecided, and it is verified only
/// if every search that monitored it verified it.
fn weight(v: &Verdict) -> u8 {
    match v {
        Verdict::NotChecked => 0,
        Verdict::Verified => 1,
        Verdict::Inconclusive(_) => 2,
        Verdict::Violated { .. } => 3,
    }
}

/// `other`'s verdicts (another search of the same unit's fault model) into `into`; the efforts
/// added. Of two violations the one on fewer nodes is told, the first search's on a tie (a
/// search that runs the autoscalers comes before those that hold them, so its counterexample
/// shows how the load gets there); of two verified verdicts, the smaller topology they both
/// hold up to.
fn merge(into: &mut UnitResult, other: UnitResult) {
    let nodes = |r: &CheckResult| r.topology.as_ref().map_or(0, Topology::nodes);
    for (mine, theirs) in into.results.iter_mut().zip(other.results) {
        let replace = match weight(&theirs.verdict).cmp(&weight(&mine.verdict)) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => match (&mine.verdict, &theirs.verdict) {
                (Verdict::Violated { .. }, Verdict::Violated { .. }) => nodes(&theirs) < nodes(mine),
                (Verdict::Verified, Verdict::Verified) => nodes(&theirs) < nodes(mine),
                // Undecided in both: what it holds on is what both held it on, the less.
                (Verdict::Inconclusive(_), Verdict::Inconclusive(_)) => match (&mine.held_up_to, &theirs.held_up_to) {
                    (Some(_), None) => true,
                    (Some(a), Some(b)) => held_size(b) < held_size(a),
                    _ => false,
                },
                _ => false,
            },
        };
        if replace {
            *mine = theirs;
        }
    }
    into.more.extend(other.more);
    add_effort(&mut into.effort, other.effort);
    into.search.planned = into.search.planned.max(other.search.planned);
    into.search.explored = into.search.explored.max(other.search.explored);
    into.shape = into.shape.join(&other.shape);
}

/// How large a topology a check held on is: nodes, then replicas (a workload at its
/// manifests' count counts as more than any held lower).
fn held_size(t: &Topology) -> (u32, u64) {
    let replicas = if t.replicas.is_empty() {
        u64::MAX
    } else {
        t.replicas
            .iter()
            .map(|r| r.map_or(u64::from(u32::MAX), u64::from))
            .sum()
    };
    (t.nodes(), replicas)
}

/// What another search cost, added to `a`.
fn add_effort(a: &mut Effort, b: Effort) {
    a.timings.add(&b.timings);
    a.states += b.states;
    a.generate += b.generate;
    a.elapsed += b.elapsed;
    a.cached &= b.cached;
}

/// Each check of the unit: its first violation (or first inconclusive run), else verified up
/// to the last topology it ran on; a search that did not finish is never a pass.
pub fn conclude(subject: Subject<'_>, searched: Searched) -> UnitResult {
    let unit = &subject.units[searched.unit];
    // Per check: its verdict once decided, else the largest topology it was verified on.
    let mut decided: BTreeMap<CheckId, (Verdict, Topology)> = BTreeMap::new();
    let mut verified: BTreeMap<CheckId, Topology> = BTreeMap::new();
    let mut held: BTreeMap<CheckId, usize> = BTreeMap::new();
    let mut more: Vec<(CheckId, Verdict, Topology, Option<usize>)> = Vec::new();
    let mut subjects: BTreeMap<CheckId, Option<usize>> = BTreeMap::new();
    for run in &searched.runs {
        for (check, verdict) in &run.verdicts {
            if let (Some((Verdict::Violated { .. }, _)), PointVerdict::Violated(trace)) = (decided.get(check), verdict)
            {
                // --all: a further violation of a check already violated.
                let (steps, location) = told_violation(&subject, &searched, run, trace);
                more.push((
                    *check,
                    Verdict::Violated { steps, location },
                    run.topology.clone(),
                    search::violation_subject(trace, &run.ir),
                ));
                continue;
            }
            if decided.contains_key(check) {
                continue;
            }
            match verdict {
                PointVerdict::Verified => {
                    verified.insert(*check, run.topology.clone());
                    *held.entry(*check).or_default() += 1;
                }
                PointVerdict::Violated(trace) => {
                    let (steps, location) = told_violation(&subject, &searched, run, trace);
                    subjects.insert(*check, search::violation_subject(trace, &run.ir));
                    decided.insert(*check, (Verdict::Violated { steps, location }, run.topology.clone()));
                }
                PointVerdict::Inconclusive(why) => {
                    decided.insert(*check, (Verdict::Inconclusive(why.clone()), run.topology.clone()));
                }
            }
        }
    }
    let results = unit
        .checks
        .iter()
        .map(|check| {
            // what the check held on before a run that could not finish
            let held_up_to = verified.get(check).cloned();
            let (verdict, topology) = if let Some((v, t)) = decided.get(check) {
                (v.clone(), Some(t.clone()))
            } else if !searched.checks.contains(check) {
                (Verdict::NotChecked, None)
            } else if let Some(why) = &searched.failure {
                (Verdict::Inconclusive(why.clone()), None)
            } else if let Some(t) = verified.get(check).filter(|_| searched.finished) {
                (Verdict::Verified, Some(t.clone()))
            } else {
                // The search did not finish (Ctrl-C): never a pass.
                (
                    Verdict::Inconclusive(Inconclusive::Cancelled),
                    verified.get(check).cloned(),
                )
            };
            let held_up_to =
                held_up_to.filter(|t| matches!(verdict, Verdict::Inconclusive(_)) && topology.as_ref() != Some(t));
            CheckResult {
                check: *check,
                verdict,
                topology,
                held_topologies: held_up_to.as_ref().map_or(0, |_| held.get(check).copied().unwrap_or(0)),
                held_up_to,
                baseline: None,
                fix: None,
                workload: subjects.get(check).copied().flatten(),
            }
        })
        .collect();
    let more = more
        .into_iter()
        .map(|(check, verdict, topology, workload)| CheckResult {
            check,
            verdict,
            topology: Some(topology),
            held_up_to: None,
            held_topologies: 0,
            baseline: None,
            fix: None,
            workload,
        })
        .collect();
    UnitResult {
        unit: searched.unit,
        results,
        search: searched.search,
        effort: searched.effort,
        shape: searched.shape,
        topologies: Vec::new(),
        unmodelled_events: Vec::new(),
        more,
    }
}

/// A violation's trail told in Kubernetes terms, and where it points.
fn told_violation(
    subject: &Subject<'_>,
    searched: &Searched,
    run: &search::TopologyRun,
    trace: &[crate::engine::TraceEvent],
) -> (Vec<Step>, Option<crate::source::Span>) {
    let (mut steps, location) = decode(trace, &run.ir, &run.names, subject.objects);
    if searched.autoscalers_held {
        let unit = &subject.units[searched.unit];
        steps.splice(0..0, held_autoscalers(unit, subject.objects, &run.topology));
    }
    (steps, location)
}

/// The steps that open a counterexample of a search that held the autoscalers: each autoscaled
/// workload at its starting count, which a steady load keeps the HPA at (located at the bound
/// it sits on, else `maxReplicas`).
fn held_autoscalers(unit: &crate::units::Unit, objects: &[Object], topology: &Topology) -> Vec<Step> {
    let mut out = Vec::new();
    for (wi, w) in unit.workloads().enumerate() {
        let Some(n) = topology.replicas.get(wi).copied().flatten() else {
            continue;
        };
        let Some((o, h)) = unit.autoscaler_of(objects, w) else {
            continue;
        };
        let o = &objects[o];
        let at = if i64::from(n) <= i64::from(h.min_replicas.value) {
            h.min_replicas.span
        } else {
            h.max_replicas.span
        };
        out.push(Step {
            actor: Actor::HorizontalPodAutoscaler,
            message: format!(
                "{} holds {} at {n} replicas, as a steady load keeps it anywhere in [minReplicas {}, maxReplicas {}]",
                o.id, objects[w].id, h.min_replicas.value, h.max_replicas.value
            ),
            location: Some(at),
            effect: None,
        });
    }
    out
}

/// After the scan's `--timeout`: what the stop left undecided says so.
pub fn mark_timed_out(results: &mut [UnitResult], limit: Duration) {
    for check in results.iter_mut().flat_map(|r| r.results.iter_mut()) {
        if matches!(check.verdict, Verdict::Inconclusive(Inconclusive::Cancelled)) {
            check.verdict = Verdict::Inconclusive(Inconclusive::RunTimeout(limit));
        }
    }
}

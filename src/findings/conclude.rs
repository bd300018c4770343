//! A unit's search told as verdicts: each check's first violation with its counterexample in
//! Kubernetes terms, its first inconclusive run, or verified up to the last topology it ran on.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::*;
use crate::engine::Engine;
use crate::model::{Generator, Shape, Topology};
use crate::search::{self, Effort, PointVerdict, Progress, SearchSummary, Searched, Subject};

/// A unit's verdicts, one per check, and what the search cost.
#[derive(Clone, Debug)]
pub struct UnitResult {
    pub unit: usize,
    pub results: Vec<CheckResult>,
    pub search: SearchSummary,
    pub effort: Effort,
    /// What its models were sized to hold.
    pub shape: Shape,
}

/// Verify the given units of the subject (indices into its units) and tell their verdicts.
/// `cancel` (Ctrl-C) stops every run; `progress` hears of each finished run.
pub fn verify(
    subject: Subject<'_>,
    units: &[usize],
    generator: &Generator,
    engine: &Engine,
    options: &search::Options,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Vec<UnitResult> {
    let plans = search::plan(subject, units, generator, options);
    verify_plans(subject, plans, engine, options, cancel, progress)
}

/// [`verify`] of units already planned.
pub fn verify_plans(
    subject: Subject<'_>,
    plans: Vec<search::UnitPlan>,
    engine: &Engine,
    options: &search::Options,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Vec<UnitResult> {
    let mut out: Vec<UnitResult> = Vec::new();
    for searched in search::verify_plans(subject, plans, engine, options, cancel, progress) {
        let result = conclude(subject, searched);
        // A unit's drain-alone search follows its own: one result per unit.
        match out.last_mut() {
            Some(last) if last.unit == result.unit => merge(last, result),
            _ => out.push(result),
        }
    }
    out
}

/// `other`'s verdicts (the drain-alone search of the same unit) into `into`: each check from
/// the search that monitored it; the efforts added.
fn merge(into: &mut UnitResult, other: UnitResult) {
    for (mine, theirs) in into.results.iter_mut().zip(other.results) {
        if matches!(mine.verdict, Verdict::NotChecked) {
            *mine = theirs;
        }
    }
    let (a, b) = (&mut into.effort, other.effort);
    a.timings.add(&b.timings);
    a.states += b.states;
    a.generate += b.generate;
    a.elapsed += b.elapsed;
    a.cached &= b.cached;
    into.search.planned = into.search.planned.max(other.search.planned);
    // Where the drain-alone search explored the drain.
    if other.search.bound.ends_with(search::DRAIN_ALONE_BOUND) {
        into.search.bound.push_str(search::DRAIN_ALONE_BOUND);
    }
}

/// Each check of the unit: its first violation (or first inconclusive run), else verified up
/// to the last topology it ran on; a search that did not finish is never a pass.
pub fn conclude(subject: Subject<'_>, searched: Searched) -> UnitResult {
    let unit = &subject.units[searched.unit];
    // Per check: its verdict once decided, else the largest topology it was verified on.
    let mut decided: BTreeMap<CheckId, (Verdict, Topology)> = BTreeMap::new();
    let mut verified: BTreeMap<CheckId, Topology> = BTreeMap::new();
    for run in &searched.runs {
        for (check, verdict) in &run.verdicts {
            if decided.contains_key(check) {
                continue;
            }
            match verdict {
                PointVerdict::Verified => {
                    verified.insert(*check, run.topology.clone());
                }
                PointVerdict::Violated(trace) => {
                    let (steps, location) = decode(trace, &run.ir, &run.names, subject.objects);
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
                held_up_to,
                baseline: None,
                fix: None,
            }
        })
        .collect();
    UnitResult {
        unit: searched.unit,
        results,
        search: searched.search,
        effort: searched.effort,
        shape: searched.shape,
    }
}

/// After the scan's `--timeout`: what the stop left undecided says so.
pub fn mark_timed_out(results: &mut [UnitResult], limit: Duration) {
    for check in results.iter_mut().flat_map(|r| r.results.iter_mut()) {
        if matches!(check.verdict, Verdict::Inconclusive(Inconclusive::Cancelled)) {
            check.verdict = Verdict::Inconclusive(Inconclusive::RunTimeout(limit));
        }
    }
}

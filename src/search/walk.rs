//! Where a unit's sequential search stands given the results of its runs (run in parallel,
//! some speculatively), and the search as it ended: the runs a one-by-one search would
//! have kept.

use super::*;

/// Where a unit's sequential search stands, given the results so far.
pub(super) struct Walk {
    /// The first point without an accepted result (points.len() when finished).
    pub(super) next: usize,
    /// Checks still open at `next`.
    pub(super) open: Vec<CheckId>,
    /// Points the verdicts rest on: up to the one that decided the last open check. Results
    /// past it (run speculatively, in parallel) are not part of the search.
    pub(super) decided: usize,
}

pub(super) fn walk(plan: &UnitPlan, results: &[Option<PointResult>], all: bool) -> Walk {
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

/// A unit's search as it ended: the runs a one-by-one search would have kept, each check's
/// decided at its first violation (or first inconclusive run).
pub(super) fn searched(plan: UnitPlan, results: &[Option<PointResult>], all: bool, elapsed: Duration) -> Searched {
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

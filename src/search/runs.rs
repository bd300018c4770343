//! The runs at one topology: each liveness check's cycle search alone, then the safety
//! checks in one search, again without each check a violation decides.

use super::*;

/// Run one topology of a plan: the model monitors `group`; a violation decides its check and
/// the others run again without it. `None` when cancelled.
pub(super) fn run_point(
    plan: &UnitPlan,
    t: usize,
    group: &[CheckId],
    engine: &Engine,
    options: &Options,
    cancel: &AtomicBool,
) -> Option<PointResult> {
    let point = &plan.points[t];
    let model = &plan.models[point.model];
    let mut result = PointResult {
        group: group.to_vec(),
        verdicts: Vec::new(),
        timings: engine::Timings::default(),
        states: 0,
    };
    // Liveness checks need pan's cycle search, a build of their own: each runs alone.
    let (liveness, open): (Vec<CheckId>, Vec<CheckId>) = group.iter().partition(|c| c.check().liveness);
    std::thread::scope(|scope| {
        // Two builds ahead (the cycle search's and the safety search's): the second compiles
        // while the first runs.
        if !liveness.is_empty() && !open.is_empty() {
            scope.spawn(|| engine.prepare(model));
        }
        let runs = PointRuns {
            point,
            plan,
            model,
            engine,
            verdicts_only: options.verdicts_only,
            all: options.all,
            spared: &options.spared,
            cancel,
        };
        run_checks(&runs, liveness, open, &mut result)
    })?;
    if let Some(cap) = point.names.replica_cap {
        beyond_the_cap(&mut result, cap);
    }
    // Where the states go, per search of the fault model and topology (`-vv`).
    tracing::debug!(
        "unit {} search {} topology {}: {} states, pan {:.2?}",
        plan.name,
        plan.part.slug().unwrap_or("combined"),
        t + 1,
        result.states,
        result.timings.pan
    );
    Some(result)
}

/// On a topology where the HPAs were held at `cap` replicas to fit the model, a violation
/// whose run never had an autoscaler reach `cap` is one the real autoscalers (whose
/// `maxReplicas` is higher) also have: below it the two desire the same. A run that did
/// reach it is not Kubernetes' run: inconclusive, with the reason, never a finding.
fn beyond_the_cap(result: &mut PointResult, cap: i64) {
    for (_, verdict) in &mut result.verdicts {
        let PointVerdict::Violated(trace) = verdict else {
            continue;
        };
        let reached = trace.iter().any(|e| {
            e.values.first().copied().and_then(crate::trace::Event::from_code) == Some(crate::trace::Event::HpaScaled)
                && e.values.get(3).is_some_and(|&desired| desired >= cap)
        });
        if reached {
            *verdict = PointVerdict::Inconclusive(engine::Inconclusive::ModelBound(format!(
                "the run needs an autoscaler above {cap} replicas, more than the model holds on this topology"
            )));
        }
    }
}

/// One topology's model, input and engine, for its runs.
struct PointRuns<'a> {
    point: &'a Point,
    plan: &'a UnitPlan,
    model: &'a str,
    engine: &'a Engine,
    /// Only the verdicts matter: no counterexample is shortened.
    verdicts_only: bool,
    /// Every distinct violation (`--all`): a check's monitor spares the workload it found
    /// violating and searches again, up to [`VIOLATIONS_PER_CHECK`].
    all: bool,
    /// Workloads the checks' monitors leave out from the start (a fix candidate's run).
    spared: &'a [model::Spared],
    cancel: &'a AtomicBool,
}

/// With `--all`, the violations of one check a topology's search looks for.
pub(super) const VIOLATIONS_PER_CHECK: usize = 8;

/// The runs of one topology: each liveness check alone, then the safety checks together.
/// `None` when cancelled.
fn run_checks(
    runs: &PointRuns<'_>,
    liveness: Vec<CheckId>,
    mut open: Vec<CheckId>,
    result: &mut PointResult,
) -> Option<()> {
    let PointRuns {
        point,
        plan,
        model,
        engine,
        verdicts_only,
        all,
        spared,
        cancel,
    } = *runs;
    let mut spared = spared.to_vec();
    for check in liveness {
        let input = model::input_sparing(&point.ir, &plan.shape, &[check], &spared);
        let verdict = match engine.liveness().verify(model, &input, cancel) {
            Err(e) => PointVerdict::Inconclusive(engine::Inconclusive::EngineError(e.to_string())),
            Ok(outcome) => {
                result.timings.add(&outcome.timings);
                result.states += outcome.statistics.states_stored;
                match outcome.verdict {
                    engine::Verdict::Inconclusive(engine::Inconclusive::Cancelled) => return None,
                    engine::Verdict::Verified => PointVerdict::Verified,
                    engine::Verdict::Inconclusive(why) => PointVerdict::Inconclusive(why),
                    engine::Verdict::Violated { trace, .. } => PointVerdict::Violated(trace),
                }
            }
        };
        result.verdicts.push((check, verdict));
    }
    // The checks that violated here: a later run's verdict on the workloads left is not theirs.
    let mut violated: Vec<CheckId> = Vec::new();
    let undecided = |open: &[CheckId], violated: &[CheckId]| -> Vec<CheckId> {
        open.iter().copied().filter(|c| !violated.contains(c)).collect()
    };
    while !open.is_empty() {
        let input = model::input_sparing(&point.ir, &plan.shape, &open, &spared);
        let outcome = match if verdicts_only {
            engine.verify_verdict(model, &input, cancel)
        } else {
            engine.verify(model, &input, cancel)
        } {
            Ok(o) => o,
            Err(e) => {
                let why = engine::Inconclusive::EngineError(e.to_string());
                result.verdicts.extend(inconclusive(&undecided(&open, &violated), &why));
                break;
            }
        };
        result.timings.add(&outcome.timings);
        result.states += outcome.statistics.states_stored;
        match outcome.verdict {
            engine::Verdict::Inconclusive(engine::Inconclusive::Cancelled) => return None,
            engine::Verdict::Verified => {
                result.verdicts.extend(
                    undecided(&open, &violated)
                        .into_iter()
                        .map(|c| (c, PointVerdict::Verified)),
                );
                break;
            }
            engine::Verdict::Inconclusive(why) => {
                result.verdicts.extend(inconclusive(&undecided(&open, &violated), &why));
                break;
            }
            engine::Verdict::Violated { trace, violation } => match violated_check(&trace) {
                Some(check) if open.contains(&check) => {
                    // --all: the next violation of the check, with this one's workload spared.
                    let found = result.verdicts.iter().filter(|(c, _)| *c == check).count() + 1;
                    let next = all
                        .then(|| violation_subject(&trace, &point.ir))
                        .flatten()
                        .filter(|w| found < VIOLATIONS_PER_CHECK && !spared.contains(&(check, *w)));
                    if all && found >= VIOLATIONS_PER_CHECK {
                        tracing::warn!(
                            "unit {}: --all stops at {VIOLATIONS_PER_CHECK} violations of {check} on {} nodes; the unit may have more",
                            plan.name,
                            point.topology.nodes()
                        );
                    }
                    match next {
                        Some(workload) => {
                            spared.push((check, workload));
                            violated.push(check);
                        }
                        None => open.retain(|c| *c != check),
                    }
                    result.verdicts.push((check, PointVerdict::Violated(trace)));
                }
                _ => {
                    let why = engine::Inconclusive::EngineError(format!(
                        "the model stopped without a check failing ({violation:?})"
                    ));
                    result.verdicts.extend(inconclusive(&undecided(&open, &violated), &why));
                    break;
                }
            },
        }
    }
    Some(())
}

/// The workload (1-based model index) a violation's trail is of, if its check tells one
/// ([`checks::Subject`]): `--all` spares it to search for the check's next violation.
pub fn violation_subject(trace: &[TraceEvent], ir: &Ir) -> Option<usize> {
    let values: Vec<&[i64]> = trace.iter().map(|e| e.values.as_slice()).collect();
    let owner = |slot: i64| ir.slot_owner(slot).and_then(|w| i64::try_from(w + 1).ok());
    checks::subject_of(&values, &owner)
}

/// The check whose monitor fired, from the last event of a trail.
fn violated_check(trace: &[TraceEvent]) -> Option<CheckId> {
    let code = *trace.last()?.values.first()?;
    checks::violated_by(code)
}

/// Every check of `checks` inconclusive for the same reason.
pub(super) fn inconclusive(checks: &[CheckId], why: &engine::Inconclusive) -> Vec<(CheckId, PointVerdict)> {
    checks
        .iter()
        .map(|c| (*c, PointVerdict::Inconclusive(why.clone())))
        .collect()
}

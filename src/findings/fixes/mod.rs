//! Fixes: for a violation, the most likely one-field change to the manifests. Each candidate
//! is applied to a copy of the unit's objects and the violated check is verified again on the
//! cluster where the counterexample was found (one topology, so a fix costs one pan run, not
//! a search), together with every check the unit verified; only a change under which all of
//! them hold is suggested.
//!
//! Candidates come from the field the finding points at: a hard spread constraint's
//! `maxSkew`, a required anti-affinity term's `topologyKey`, a PodDisruptionBudget's
//! `minAvailable`/`maxUnavailable`, a Deployment's `maxSurge`, the `spec.replicas` of an
//! autoscaled workload, a toleration's `tolerationSeconds`, a descheduler plugin. A check's
//! `remedies` (in its file under `checks/`) add the kinds of candidate only its violations
//! get.

use crate::analysis::Analysis;
use crate::checks::{CheckId, Remedy};
use crate::config::Config;
use crate::findings::UnitResult;
use crate::findings::{Actor, Change, Fix, Step, Verdict};
use crate::manifest::descheduler::PluginArgs;
use crate::manifest::pdb::UnhealthyPodEvictionPolicy;
use crate::manifest::pod::{PodSpec, WeightedPodAffinityTerm, WhenUnsatisfiable};
use crate::manifest::quantity::IntOrPercent;
use crate::manifest::workload::UpdateStrategy;
use crate::manifest::{Body, Object, ObjectId, PodDisruptionBudget, WorkloadKind};
use crate::model::Topology;
use crate::search;
use crate::source::{Span, Spanned};
use crate::units::{Member, Role};

mod apply;
mod candidates;
use candidates::candidates;

use apply::edited;

/// A change to one field of one object.
#[derive(Clone, Debug, PartialEq)]
enum Edit {
    ScheduleAnyway {
        object: usize,
        index: usize,
    },
    MaxSkew {
        object: usize,
        index: usize,
        to: i32,
    },
    PreferAntiAffinity {
        object: usize,
        index: usize,
    },
    BudgetAllowsOne {
        object: usize,
    },
    OneAtATime {
        object: usize,
    },
    DropReplicas {
        object: usize,
    },
    TolerateForever {
        object: usize,
        index: usize,
    },
    BalanceHardOnly {
        object: usize,
        profile: usize,
        plugin: usize,
    },
    DisablePlugin {
        object: usize,
        profile: usize,
        plugin: usize,
    },
    HardSpread {
        object: usize,
        index: usize,
    },
    DropNodeName {
        object: usize,
    },
    DelayReadiness {
        object: usize,
        seconds: i64,
    },
    CpuRequest {
        object: usize,
        container: usize,
        to: i64,
    },
    /// A new PodDisruptionBudget selecting the workload's pods, `maxUnavailable: 1`; and the
    /// replicas raised to `replicas` where one pod would leave nothing to keep serving.
    AddBudget {
        object: usize,
        replicas: Option<i32>,
    },
    /// The last-applied configuration no longer sets `spec.replicas`.
    ForgetAppliedReplicas {
        object: usize,
    },
    /// A StorageClass binds `WaitForFirstConsumer`.
    WaitForFirstConsumer {
        object: usize,
    },
}

#[derive(Clone, Debug, PartialEq)]
struct Candidate {
    summary: String,
    location: Span,
    edit: Edit,
}

fn spec_mut(o: &mut Object) -> Option<&mut PodSpec> {
    match &mut o.body {
        Body::Workload(w) => Some(&mut w.template.spec),
        _ => None,
    }
}

/// What a candidate is chosen for: the violated check and its counterexample.
struct Violation<'a> {
    check: CheckId,
    steps: &'a [Step],
    topology: Option<&'a Topology>,
}

impl Violation<'_> {
    fn by(&self, actor: Actor) -> bool {
        self.steps.iter().any(|s| s.actor == actor)
    }

    /// Whether the violated check's violations get this kind of candidate.
    fn gets(&self, remedy: Remedy) -> bool {
        self.check.check().remedies.contains(&remedy)
    }
}

/// The fields a counterexample passes through: the finding's location first, then the
/// locations of its steps, latest first (the step closest to the violation is the likeliest
/// cause). Spans may repeat across steps; each is tried once.
fn fields(at: Span, steps: &[Step]) -> Vec<Span> {
    let mut spans = vec![at];
    for s in steps.iter().rev() {
        // Every pod's creation points at the replica count: that is where pods come from,
        // not why anything went wrong.
        if s.effect.as_ref().is_some_and(|e| e.change == Change::PodCreated) {
            continue;
        }
        if let Some(l) = s.location
            && !spans.contains(&l)
        {
            spans.push(l);
        }
    }
    spans
}

/// Fixes are verified one pan run each: try at most this many per violation.
const MAX_CANDIDATES: usize = 6;

/// The new text of a candidate's location, when its edit is one scalar's new value.
fn replacement(edit: &Edit) -> Option<String> {
    match edit {
        Edit::ScheduleAnyway { .. } => Some("ScheduleAnyway".into()),
        Edit::MaxSkew { to, .. } => Some(to.to_string()),
        Edit::CpuRequest { to, .. } => Some(format!("{to}m")),
        _ => None,
    }
}

/// Find a verified fix for every located violation of `results`. Each candidate costs one run
/// of its unit on the counterexample's cluster, restricted to the violated check; the first
/// that verifies is kept.
/// Candidates are verified through `verifier` with their own options (one topology, the
/// violated check and the verified ones), silently; `on_phase` hears which fix is sought.
pub fn suggest(
    a: &Analysis,
    results: &mut [UnitResult],
    lowest: crate::checks::Level,
    verifier: &search::Verifier<'_>,
    on_phase: &dyn Fn(&str),
) {
    let options = verifier.options;
    for r in results.iter_mut() {
        let unit = r.unit;
        // One topology, the violation's; models sized as the unit's own, so that a candidate
        // that changes only what the model reads as input reuses the compiled pan.
        let one_topology = search::Options {
            emit_models: None,
            result_cache: options.result_cache.clone(),
            jobs: options.jobs,
            scale: search::Scale::Current,
            all: false,
            spared: Vec::new(),
            verdicts_only: true,
            shape_floor: Some(r.shape.clone()),
            monitor: None,
        };
        // A fix must not trade the violation for another: every check that was verified in
        // the unit must stay verified with it.
        let verified: Vec<CheckId> = r
            .results
            .iter()
            .filter(|x| x.verdict == Verdict::Verified)
            .map(|x| x.check)
            .collect();
        // The workloads each check's violations are of (several with `--all`).
        let violations: Vec<(CheckId, usize)> = r
            .results
            .iter()
            .filter(|x| matches!(x.verdict, Verdict::Violated { .. }))
            .filter_map(|x| Some((x.check, x.workload?)))
            .collect();
        for c in r.results.iter_mut() {
            let Verdict::Violated {
                location: Some(at),
                steps,
            } = &c.verdict
            else {
                continue;
            };
            // Each candidate costs model-checker runs: by default fixes are searched for
            // error-level findings only (`--fixes-for`).
            if a.check_level(c.check) > lowest {
                continue;
            }
            let violation = Violation {
                check: c.check,
                steps,
                topology: c.topology.as_ref(),
            };
            on_phase(&format!("looking for a fix of {} in {}", c.check, a.units[r.unit].name));
            let mut checks = vec![c.check];
            checks.extend(verified.iter().copied().filter(|v| *v != c.check));
            // The check's other violations stay: the fix is verified to end this one.
            let spared: Vec<crate::model::Spared> = violations
                .iter()
                .copied()
                .filter(|&(check, w)| check == c.check && Some(w) != c.workload)
                .collect();
            let apart_from = spared.len();
            let one_topology = search::Options {
                monitor: Some(checks.clone()),
                spared,
                ..one_topology.clone()
            };
            // Candidates are verified `jobs` at a time; the first in candidate order that holds
            // is kept, whatever `-j` is.
            let all = candidates(a, unit, *at, &violation);
            let batch = options.jobs.max(1);
            'batches: for group in all.chunks(batch) {
                if verifier.cancelled() {
                    return;
                }
                // Per candidate: where it was verified, if it holds.
                let outcomes: Vec<Option<String>> = std::thread::scope(|scope| {
                    let handles: Vec<_> = group
                        .iter()
                        .map(|candidate| {
                            let checks = &checks;
                            let one_topology = &one_topology;
                            let topology = c.topology.as_ref();
                            scope.spawn(move || {
                                let fixed = edited(a, unit, &candidate.edit, topology);
                                let quiet = |_: &search::Progress| {};
                                let candidate_verifier = verifier.with_options(one_topology).with_progress(&quiet);
                                let again = crate::findings::verify(&candidate_verifier, fixed.subject(), &[unit]);
                                let holds = again.first().is_some_and(|u| {
                                    checks.iter().all(|check| {
                                        u.results
                                            .iter()
                                            .find(|x| x.check == *check)
                                            .is_some_and(|x| x.verdict == Verdict::Verified)
                                    })
                                });
                                holds.then(|| {
                                    let on = crate::model::Topology::current(fixed.subject().config);
                                    search::describe(fixed.subject(), unit, &on)
                                })
                            })
                        })
                        .collect();
                    // A panicking candidate is one that does not hold.
                    handles.into_iter().map(|h| h.join().ok().flatten()).collect()
                });
                for (candidate, verified_on) in group.iter().zip(outcomes) {
                    tracing::info!(
                        "unit {}: {} with \"{}\": {}",
                        a.units[unit].id,
                        c.check,
                        candidate.summary,
                        if verified_on.is_some() {
                            "verified"
                        } else {
                            "still fails"
                        }
                    );
                    if let Some(verified_on) = verified_on {
                        c.fix = Some(Fix {
                            summary: candidate.summary.clone(),
                            location: candidate.location,
                            verified_on,
                            apart_from,
                            replacement: replacement(&candidate.edit),
                        });
                        break 'batches;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::apply::apply;
    use super::*;

    #[test]
    fn budget_edit_allows_one_disruption() {
        let text = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: api, namespace: x}\nspec:\n  minAvailable: 2\n  selector: {matchLabels: {app: api}}\n";
        let mut sources = crate::source::SourceMap::default();
        let mut diags = crate::diagnostics::Diagnostics::default();
        let (_, loaded) = crate::manifest::load_text(&mut sources, "pdb.yaml", text, &mut diags);
        let mut objects = loaded.objects;
        apply(
            &mut objects,
            &mut crate::config::Environment::default(),
            &mut Vec::new(),
            &Edit::BudgetAllowsOne { object: 0 },
        );
        let Body::PodDisruptionBudget(p) = &objects[0].body else {
            panic!("a budget")
        };
        assert_eq!(p.min_available, None);
        assert_eq!(p.max_unavailable.as_ref().unwrap().value, IntOrPercent::Int(1));
    }
}

//! A counterexample's trace events (`KIVI:` lines) told as steps in Kubernetes terms, each
//! located at the manifest field that drives it.

use super::namer::{Namer, scales_on_cpu};
use super::*;
use crate::checks;
use crate::trace::Event;

/// A decoded step before its effect is attached.
pub(super) struct DecodedStep {
    actor: Actor,
    message: String,
    location: Option<Span>,
}

/// The change a trail event makes (event numbers as in `decode`).
pub(super) fn effect(v: &[i64], namer: &Namer) -> Option<Effect> {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let pod = |change| Effect {
        change,
        pod: Some(namer.pod(at(1))),
        node: None,
    };
    let pod_on = |change| Effect {
        change,
        pod: Some(namer.pod(at(1))),
        node: Some(namer.node(at(2))),
    };
    let node = |change| Effect {
        change,
        pod: None,
        node: Some(namer.node(at(1))),
    };
    let event = Event::from_code(at(0))?;
    Some(match event {
        Event::PodCreated => pod(Change::PodCreated),
        Event::PodBound => pod_on(Change::PodBound),
        Event::PodUnschedulable => pod(Change::PodUnschedulable),
        Event::PodStarted => pod_on(Change::PodStarted),
        Event::PodRemoved
        | Event::TaintEvicted
        | Event::PodLostWithNode
        | Event::DeschedulerEvicted
        | Event::FailureEvicted
        | Event::DrainEvicted => pod_on(Change::PodRemoved),
        Event::PodDeleted => pod(Change::PodRemoved),
        Event::MaintenanceStarted | Event::NodeOverloaded | Event::NodeFailed => node(Change::NodeDown),
        Event::MaintenanceEnded | Event::NodeRestarted | Event::NodeRecovered => node(Change::NodeUp),
        Event::DrainStarted | Event::ScaleDownStarted => node(Change::NodeCordoned),
        Event::DrainEnded => node(Change::NodeUncordoned),
        Event::NodeAdded => node(Change::NodeUp),
        Event::AutoscalerEvicted => pod_on(Change::PodRemoved),
        Event::NodeRemoved => node(Change::NodeDown),
        _ => return None,
    })
}

/// A descheduler plugin's name, from its number in descheduler.pml.
fn descheduler_plugin_name(plugin: i64) -> &'static str {
    match plugin {
        1 => "RemoveDuplicates",
        2 => "RemovePodsViolatingTopologySpreadConstraint",
        3 => "RemovePodsViolatingNodeTaints",
        4 => "RemovePodsViolatingNodeAffinity",
        5 => "LowNodeUtilization",
        _ => "a descheduler plugin",
    }
}

/// Why the autoscaler chose `desired`, after the usage it saw: `recommended` is the metrics'
/// recommendation within [minReplicas, maxReplicas] (-2: the current count was outside them),
/// `unlogged` the decision its recent recommendations and scale events aside, that is the
/// scaling policies' limit (horizontal.go: stabilizeRecommendation and the rate rules). Old
/// traces without them say nothing more.
fn hpa_why(current: i64, desired: i64, recommended: Option<i64>, unlogged: Option<i64>) -> String {
    let (Some(recommended), Some(unlogged)) = (recommended, unlogged) else {
        return String::new();
    };
    if recommended == -2 {
        let (side, bound) = if desired > current {
            ("below minReplicas", desired)
        } else {
            ("above maxReplicas", desired)
        };
        return format!(": {current} is {side} {bound}");
    }
    if desired == recommended {
        return format!(": the metrics ask for {recommended} within [minReplicas, maxReplicas]");
    }
    if desired == unlogged {
        let direction = if desired > current { "scale-up" } else { "scale-down" };
        return format!(
            ": the metrics ask for {recommended} within [minReplicas, maxReplicas]; the {direction} limit allows {desired} now"
        );
    }
    if desired > recommended {
        format!(
            ": the metrics ask for {recommended} within [minReplicas, maxReplicas]; a higher recommendation still inside the scale-down stabilization window (300 s unless `behavior` sets it) holds it at {desired}"
        )
    } else {
        format!(
            ": the metrics ask for {recommended} within [minReplicas, maxReplicas]; a lower recommendation inside the scale-up stabilization window, or scalings inside the policies' period, hold it at {desired}"
        )
    }
}

/// Decode the `KIVI:` lines of a trail (see the templates' printf calls).
pub fn decode(trace: &[TraceEvent], ir: &Ir, names: &Names, objects: &[Object]) -> (Vec<Step>, Option<Span>) {
    let mut namer = Namer::new(ir, names, objects);
    let mut steps = Vec::new();
    let mut location = None;
    for event in trace {
        let v = &event.values;
        if namer.follow(v) {
            continue;
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let step = match Event::from_code(at(0)) {
            Some(Event::PodCreated) => DecodedStep {
                actor: namer.controller(at(1)),
                message: format!("creates pod {}", namer.pod(at(1))),
                location: namer.owner_object(at(1)).map(Object::replicas_field),
            },
            Some(Event::PodBound) => DecodedStep {
                actor: Actor::Scheduler,
                message: format!("binds {} to {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            Some(Event::PodUnschedulable) => {
                let (static_fail, resource_fail, spread_nodes, spread_mask, not_ready, node_name) =
                    (at(2), at(3), at(4), at(5), at(6), at(7));
                let (affinity_nodes, affinity_mask, cordoned, volume_fail) = (at(8), at(9), at(10), at(11));
                let mut reasons = Vec::new();
                let mut span = None;
                if let Some((w, o)) = namer.owner(at(1)) {
                    let template = ir.workloads[w].template - 1;
                    let spec = &objects[o].workload().expect("a workload").template.spec;
                    for (k, (index, s)) in names.hard_constraints[template].iter().enumerate() {
                        if spread_mask & (1 << k) != 0 {
                            reasons.push(match spec.topology_spread_constraints.get(*index) {
                                Some(tsc) => format!(
                                    "topologySpreadConstraints[{index}] ({}, maxSkew {})",
                                    tsc.topology_key.value, tsc.max_skew.value
                                ),
                                None => "a default spread constraint of the scheduler configuration".to_string(),
                            });
                            span.get_or_insert(*s);
                        }
                    }
                }
                let mut parts = Vec::new();
                if node_name == 255 {
                    parts.push("its nodeName names no node of the cluster".to_string());
                } else if node_name > 0 {
                    parts.push(format!("its nodeName {} is not ready", namer.node(node_name)));
                }
                if not_ready > 0 && node_name == 0 {
                    parts.push(format!("{not_ready} node(s) are not ready"));
                }
                if cordoned > 0 {
                    parts.push(format!("{cordoned} node(s) are cordoned"));
                }
                if affinity_nodes > 0
                    && let Some((w, _)) = namer.owner(at(1))
                {
                    let template = ir.workloads[w].template - 1;
                    let terms: Vec<&(String, Span)> = names.affinity_terms[template]
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| affinity_mask & (1 << k) != 0)
                        .map(|(_, t)| t)
                        .collect();
                    if let Some((_, s)) = terms.first() {
                        span.get_or_insert(*s);
                    }
                    let what: Vec<&str> = terms.iter().map(|(d, _)| d.as_str()).collect();
                    parts.push(format!("{affinity_nodes} node(s) would break {}", what.join(" or ")));
                }
                if spread_nodes > 0 {
                    parts.push(format!("{spread_nodes} node(s) would break {}", reasons.join(" or ")));
                }
                if resource_fail > 0 {
                    let resources = if names.scalar_resources.is_empty() {
                        "cpu, memory or pod slots".to_string()
                    } else {
                        format!("cpu, memory, pod slots or {}", names.scalar_resources.join(", "))
                    };
                    parts.push(format!("{resource_fail} node(s) lack {resources}"));
                    // Nothing narrower rejects it: its requests are what does not fit.
                    if span.is_none() {
                        span = namer
                            .owner(at(1))
                            .and_then(|(_, o)| objects[o].workload())
                            .map(|w| w.template.spec.request_span());
                    }
                }
                if volume_fail > 0 {
                    // upstream's ErrReasonNodeConflict
                    parts.push(format!("{volume_fail} node(s) had volume node affinity conflict"));
                    if span.is_none()
                        && let Some((w, _)) = namer.owner(at(1))
                    {
                        span = names.volume_spans.get(w).copied().flatten();
                    }
                }
                if static_fail > 0 {
                    parts.push(format!(
                        "{static_fail} node(s) do not match its node selector, affinity, name or tolerations"
                    ));

                    // The scheduler profile's addedAffinity is easy to miss: the pod's manifest
                    // does not show it, and the DaemonSet controller ignores it.
                    if let Some((w, _)) = namer.owner(at(1))
                        && let Some((mask, added_span)) = names.added_affinity.get(ir.workloads[w].template - 1)
                        && *mask != 0
                    {
                        parts.push(format!(
                            "the scheduler profile's addedAffinity excludes {} of them",
                            mask.count_ones()
                        ));
                        if span.is_none() {
                            span = *added_span;
                        }
                    }
                    // Else its node requirements are what keeps it off those nodes.
                    if span.is_none() {
                        span = namer
                            .owner(at(1))
                            .and_then(|(_, o)| objects[o].workload())
                            .map(|w| w.template.spec.node_requirement_span());
                    }
                }
                // A batch pod (a Job's) that waits is no finding: only a judged pod locates one.
                if span.is_some() && !namer.owner(at(1)).is_some_and(|(w, _)| ir.workloads[w].batch) {
                    location = span;
                }
                DecodedStep {
                    actor: Actor::Scheduler,
                    message: format!("no feasible node for {}: {}", namer.pod(at(1)), parts.join("; ")),
                    location: span,
                }
            }
            Some(Event::PodStarted) => DecodedStep {
                actor: Actor::Kubelet,
                message: format!("starts {} on {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            Some(Event::PodRemoved) => DecodedStep {
                actor: Actor::Kubelet,
                message: format!("removes {} from {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            Some(Event::HpaScaled) => {
                let workload = namer.workload(at(1));
                let hpa = workload.and_then(|w| namer.autoscaler_of(w));
                let usage = if hpa.is_none_or(scales_on_cpu) {
                    format!("cpu usage {}% of the request per running pod", at(4))
                } else {
                    format!("its metrics at {}% of their targets", at(4))
                };
                let why = hpa_why(at(2), at(3), v.get(5).copied(), v.get(6).copied());
                DecodedStep {
                    actor: Actor::HorizontalPodAutoscaler,
                    message: format!(
                        "{} scales {} from {} to {} replicas ({usage}{why})",
                        hpa.map_or_else(|| "the HPA".to_string(), |h| h.id.to_string()),
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2),
                        at(3),
                    ),
                    location: hpa.and_then(|h| match &h.body {
                        Body::HorizontalPodAutoscaler(a) => Some(a.max_replicas.span),
                        _ => None,
                    }),
                }
            }
            Some(Event::PodDeleted) => DecodedStep {
                actor: namer.controller(at(1)),
                message: format!("deletes pod {}", namer.pod(at(1))),
                location: None,
            },
            Some(Event::LoadChanged) => {
                let workload = namer.workload(at(1));
                let name = workload.map_or_else(String::new, |w| w.id.to_string());
                let message = if workload.and_then(|w| namer.autoscaler_of(w)).is_none_or(scales_on_cpu) {
                    format!("the pods of {name} now use {}% of their cpu request", at(2))
                } else {
                    format!(
                        "the metrics {name}'s autoscaler scales on are now at {}% of their targets",
                        at(2)
                    )
                };
                DecodedStep {
                    actor: Actor::LoadChange,
                    message,
                    location: None,
                }
            }
            Some(Event::MaintenanceStarted) => DecodedStep {
                actor: Actor::NodeMaintenance,
                message: format!("{} goes down for maintenance", namer.node(at(1))),
                location: None,
            },
            Some(Event::MaintenanceEnded) => DecodedStep {
                actor: Actor::NodeMaintenance,
                message: format!("{} is back", namer.node(at(1))),
                location: None,
            },
            Some(Event::TaintEvicted) => {
                let location = namer
                    .owner(at(1))
                    .and_then(|(_, o)| objects[o].workload().map(|w| w.template.spec.span));
                DecodedStep {
                    actor: Actor::TaintEvictionController,
                    message: format!(
                        "evicts {} from {}: it does not tolerate the node's NoExecute taint",
                        namer.pod(at(1)),
                        namer.node(at(2))
                    ),
                    location,
                }
            }
            Some(Event::NodeOverloaded) => DecodedStep {
                actor: Actor::NodeOverload,
                message: format!(
                    "{} is overloaded (its pods use {}m of {}m cpu) and crashes",
                    namer.node(at(1)),
                    at(2),
                    at(3)
                ),
                location: None,
            },
            Some(Event::NodeRestarted) => DecodedStep {
                actor: Actor::NodeOverload,
                message: format!("{} has restarted", namer.node(at(1))),
                location: None,
            },
            Some(Event::GitopsReset) => {
                let workload = namer.workload(at(1));
                DecodedStep {
                    actor: Actor::GitopsSync,
                    message: format!(
                        "re-applies {}: spec.replicas {} drifted from the manifest's {}",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2),
                        at(3)
                    ),
                    location: workload.map(Object::replicas_field),
                }
            }
            Some(Event::StartupEnded) => DecodedStep {
                actor: Actor::Time,
                message: format!("{} is past its startup phase and uses its steady cpu", namer.pod(at(1))),
                location: None,
            },
            Some(Event::RolloutApplied) => {
                let workload = namer.workload(at(1));
                DecodedStep {
                    actor: Actor::Apply,
                    message: format!(
                        "a new revision of {}'s pod template is applied: a rollout starts",
                        workload.map_or_else(String::new, |w| w.id.to_string())
                    ),
                    location: workload.map(|w| w.workload().map_or(w.span, |wl| wl.template.span)),
                }
            }
            Some(Event::RolloutDone) => DecodedStep {
                actor: Actor::DeploymentController,
                message: format!(
                    "the rollout of {} is complete",
                    namer.workload(at(1)).map_or_else(String::new, |w| w.id.to_string())
                ),
                location: None,
            },
            Some(Event::ApplyReplicas) => {
                let workload = namer.workload(at(1));
                let after = at(3);
                let message = match workload.and_then(|w| w.workload()).map(|w| w.replicas.is_some()) {
                    Some(false) => format!(
                        "the new revision of {} leaves out spec.replicas, which the previous one set: kubectl apply removes it and spec.replicas falls from {} to its default {after}",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2)
                    ),
                    _ => format!(
                        "the new revision of {} is applied: spec.replicas goes from {} to {after}",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2)
                    ),
                };
                DecodedStep {
                    actor: Actor::Apply,
                    message,
                    location: workload.map(Object::replicas_field),
                }
            }
            None if at(0) == crate::engine::CYCLE_START => DecodedStep {
                actor: Actor::Cycle,
                message: "from here on, the steps below repeat forever while the environment stays the same".into(),
                location: None,
            },
            Some(Event::NodeFailed) => DecodedStep {
                actor: Actor::NodeFailure,
                message: format!("{} stops reporting: its pods are no longer ready", namer.node(at(1))),
                location: None,
            },
            Some(Event::FailureEvicted) => DecodedStep {
                actor: Actor::TaintEvictionController,
                message: format!(
                    "deletes {} from the unreachable {}: its toleration has run out",
                    namer.pod(at(1)),
                    namer.node(at(2))
                ),
                location: None,
            },
            Some(Event::NodeRecovered) => DecodedStep {
                actor: Actor::NodeFailure,
                message: format!("{} reports again", namer.node(at(1))),
                location: None,
            },
            Some(Event::DrainStarted) => DecodedStep {
                actor: Actor::NodeDrain,
                message: format!("cordons {} and starts draining it", namer.node(at(1))),
                location: None,
            },
            Some(Event::DrainEvicted) => {
                let budgets = namer.budgets_of_slot(at(1));
                let why = if budgets.is_empty() {
                    "no PodDisruptionBudget selects it".to_string()
                } else {
                    let names: Vec<String> = budgets.iter().map(|b| b.id.to_string()).collect();
                    format!("{} allows it", names.join(", "))
                };
                DecodedStep {
                    actor: Actor::NodeDrain,
                    message: format!("evicts {} from {}: {why}", namer.pod(at(1)), namer.node(at(2))),
                    location: budgets.first().map(|b| b.budget_field()),
                }
            }
            Some(Event::NodeAdded) => {
                let zone = usize::try_from(at(1) - 1)
                    .ok()
                    .and_then(|i| names.node_zones.get(i).cloned().flatten());
                let pool = usize::try_from(at(2) - 1).ok().and_then(|i| names.scaling_pools.get(i));
                DecodedStep {
                    actor: Actor::ClusterAutoscaler,
                    message: format!(
                        "adds {} to pool {} for the Pending pods{}",
                        namer.node(at(1)),
                        pool.map_or("?", |p| p.0.as_str()),
                        match zone {
                            Some(z) => format!("; the cloud starts it in {z}"),
                            None => String::new(),
                        }
                    ),
                    location: pool.map(|p| p.1),
                }
            }
            Some(Event::ScaleDownStarted) => DecodedStep {
                actor: Actor::ClusterAutoscaler,
                message: format!(
                    "{} is unneeded (its pods request under the scale-down threshold and fit elsewhere): taints it and drains it",
                    namer.node(at(1))
                ),
                location: None,
            },
            Some(Event::AutoscalerEvicted) => {
                let budgets = namer.budgets_of_slot(at(1));
                DecodedStep {
                    actor: Actor::ClusterAutoscaler,
                    message: format!("evicts {} from {}", namer.pod(at(1)), namer.node(at(2))),
                    location: budgets.first().map(|b| b.budget_field()),
                }
            }
            Some(Event::AutoscalerRefused) => {
                let budgets = namer.budgets_of_slot(at(1));
                DecodedStep {
                    actor: Actor::ClusterAutoscaler,
                    message: format!(
                        "cannot evict {}: its PodDisruptionBudget has no disruption left; {} stays",
                        namer.pod(at(1)),
                        namer.node(at(2))
                    ),
                    location: budgets.first().map(|b| b.budget_field()),
                }
            }
            Some(Event::ScaleUpWanted) => {
                let pool = usize::try_from(at(2) - 1).ok().and_then(|i| names.scaling_pools.get(i));
                DecodedStep {
                    actor: Actor::ClusterAutoscaler,
                    message: match pool {
                        Some((name, _)) => format!(
                            "no scale-up for {}: it would not fit a new node of pool {name} either (the autoscaler simulates one in the pool's first zone)",
                            namer.pod(at(1))
                        ),
                        None => format!(
                            "no scale-up for {}: every pool it scales is at its max",
                            namer.pod(at(1))
                        ),
                    },
                    location: pool.map(|p| p.1),
                }
            }
            Some(Event::InformerCaughtUp) => DecodedStep {
                actor: Actor::Informer,
                message: format!(
                    "delivers the deletion of {} from {}: the scheduler and the descheduler see it gone",
                    namer
                        .undelivered
                        .get(&at(1))
                        .cloned()
                        .unwrap_or_else(|| namer.pod(at(1))),
                    namer.node(at(2))
                ),
                location: names.stale_reads,
            },
            Some(Event::StaleDeletion) => DecodedStep {
                actor: Actor::Informer,
                message: format!(
                    "has not delivered the deletion of {} yet: to the scheduler and the descheduler it still runs on {} (stale-reads)",
                    namer.pod(at(1)),
                    namer.node(at(2))
                ),
                location: names.stale_reads,
            },
            Some(Event::NodeRemoved) => DecodedStep {
                actor: Actor::ClusterAutoscaler,
                message: format!("deletes the drained {}", namer.node(at(1))),
                location: None,
            },
            Some(Event::DrainEnded) => DecodedStep {
                actor: Actor::NodeDrain,
                message: format!("{} is drained and uncordoned", namer.node(at(1))),
                location: None,
            },
            Some(event @ (Event::VolumeProvisioned | Event::VolumeProvisionedWithPod)) => {
                let zone = ir
                    .volumes
                    .as_ref()
                    .and_then(|v| v.zones.get((at(2) - 1).max(0) as usize))
                    .cloned()
                    .unwrap_or_else(|| format!("zone #{}", at(2)));
                let when = if event == Event::VolumeProvisioned {
                    "before the pod is scheduled (volumeBindingMode: Immediate)"
                } else {
                    "where it was bound (volumeBindingMode: WaitForFirstConsumer): its pods can run in no other zone"
                };
                DecodedStep {
                    actor: Actor::VolumeProvisioner,
                    message: format!(
                        "provisions the volume of {}'s claim in {zone}, {when}",
                        namer.pod(at(1))
                    ),
                    location: namer
                        .owner(at(1))
                        .and_then(|(w, _)| names.volume_spans.get(w).copied().flatten()),
                }
            }
            Some(Event::DeschedulerDeclined) => {
                let plugin = descheduler_plugin_name(at(3));
                let budgets = namer.budgets_of_slot(at(1));
                let why = if at(4) == 2 {
                    let names: Vec<String> = budgets.iter().map(|b| b.id.to_string()).collect();
                    format!("{} allows no disruption now", names.join(", "))
                } else {
                    "no other node fits it now (the DefaultEvictor's nodeFit)".to_string()
                };
                DecodedStep {
                    actor: Actor::Descheduler,
                    message: format!(
                        "{plugin} would evict {} from {}, but the evictor declines: {why}",
                        namer.pod(at(1)),
                        namer.node(at(2))
                    ),
                    location: if at(4) == 2 {
                        budgets.first().map(|b| b.budget_field())
                    } else {
                        None
                    },
                }
            }
            Some(Event::DeschedulerEvicted) => {
                let plugin = match at(3) {
                    1 => "RemoveDuplicates: another pod of its workload shares the node",
                    2 => "RemovePodsViolatingTopologySpreadConstraint: its spread domains are unbalanced",
                    3 => "RemovePodsViolatingNodeTaints: it does not tolerate the node's taints",
                    4 => "RemovePodsViolatingNodeAffinity: another node suits its node affinity better",
                    5 => "LowNodeUtilization: the node is above the target thresholds",
                    _ => "a descheduler plugin",
                };
                DecodedStep {
                    actor: Actor::Descheduler,
                    message: format!("evicts {} from {} ({plugin})", namer.pod(at(1)), namer.node(at(2))),
                    location: usize::try_from(at(3))
                        .ok()
                        .and_then(|i| names.descheduler_plugins.get(i).copied().flatten()),
                }
            }
            Some(Event::PodLostWithNode) => DecodedStep {
                actor: Actor::Node,
                message: format!("{} is lost with {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            None if let Some(check) = checks::of_violation(at(0)) => {
                let told = (check.violation.tell)(
                    v,
                    &Trail {
                        namer: &namer,
                        names,
                        events: trace,
                        steps: &steps,
                    },
                );
                location = match check.violation.blame {
                    checks::Blame::CheckField => told.location,
                    checks::Blame::Scheduling => location.or(told.location),
                };
                DecodedStep {
                    actor: Actor::Check,
                    message: told.message,
                    location: told.location,
                }
            }
            _ => DecodedStep {
                actor: Actor::Model,
                message: format!("unknown trace event {}", at(0)),
                location: None,
            },
        };
        steps.push(Step {
            actor: step.actor,
            message: step.message,
            location: step.location,
            effect: effect(v, &namer),
        });
    }
    // A livelock: the field of the first repeating step that undoes another's work (an
    // eviction, a scaling, a re-apply), else of any repeating step.
    if location.is_none()
        && let Some(start) = steps.iter().position(|s| s.actor == Actor::Cycle)
    {
        let cycle = &steps[start..];
        let creators = [
            Actor::DeploymentController,
            Actor::StatefulsetController,
            Actor::DaemonsetController,
            Actor::ReplicasetController,
            Actor::ReplicationController,
            Actor::KubectlApply,
            Actor::Kubelet,
        ];
        location = cycle
            .iter()
            .filter(|s| !creators.contains(&s.actor))
            .find_map(|s| s.location)
            .or_else(|| cycle.iter().find_map(|s| s.location));
    }
    // No finding without a location: else the first step that has one (the field that drives
    // it), else the manifest of the unit's first workload.
    let location = location
        .or_else(|| steps.iter().find_map(|s| s.location))
        .or_else(|| names.workloads.first().and_then(|&o| objects.get(o)).map(|o| o.span));
    (steps, location)
}

/// What a check's decoder asks of the counterexample (`checks::Counterexample`).
struct Trail<'a> {
    namer: &'a Namer<'a>,
    names: &'a Names,
    events: &'a [TraceEvent],
    /// The steps told so far.
    steps: &'a [Step],
}

impl checks::Counterexample for Trail<'_> {
    fn workload(&self, index: i64) -> Option<&Object> {
        self.namer.workload(index)
    }

    fn owner(&self, slot: i64) -> Option<&Object> {
        self.namer.owner_object(slot)
    }

    fn pod(&self, slot: i64) -> String {
        self.namer.pod(slot)
    }

    fn node(&self, index: i64) -> String {
        self.namer.node(index)
    }

    fn autoscaler_of(&self, workload: &Object) -> Option<&Object> {
        self.namer.autoscaler_of(workload)
    }

    fn budgets_of_pod(&self, slot: i64) -> Vec<&Object> {
        self.namer.budgets_of_slot(slot)
    }

    fn latest(&self, event: Event, matching: &dyn Fn(&[i64]) -> bool) -> Option<&[i64]> {
        self.events
            .iter()
            .rev()
            .map(|e| e.values.as_slice())
            .find(|v| v.first() == Some(&event.code()) && matching(v))
    }

    fn descheduler_plugin(&self, index: i64) -> Option<Span> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.names.descheduler_plugins.get(i).copied().flatten())
    }

    fn scheduling_failure(&self) -> Option<Span> {
        self.steps
            .iter()
            .rev()
            .find(|s| s.actor == Actor::Scheduler && s.location.is_some())
            .and_then(|s| s.location)
    }
}

#[cfg(test)]
mod hpa_why_tests {
    use super::hpa_why;

    #[test]
    fn each_reason_for_a_scaling_is_told() {
        assert_eq!(hpa_why(3, 4, None, None), "");
        assert_eq!(hpa_why(12, 10, Some(-2), Some(10)), ": 12 is above maxReplicas 10");
        assert_eq!(hpa_why(1, 3, Some(-2), Some(3)), ": 1 is below minReplicas 3");
        assert!(hpa_why(2, 3, Some(3), Some(3)).ends_with("ask for 3 within [minReplicas, maxReplicas]"));
        assert!(hpa_why(2, 4, Some(8), Some(4)).contains("the scale-up limit allows 4 now"));
        assert!(hpa_why(6, 5, Some(2), Some(2)).contains("scale-down stabilization window"));
        assert!(hpa_why(6, 7, Some(9), Some(9)).contains("scale-up stabilization window"));
    }
}

//! A counterexample's trace events (`KIVI:` lines) told as steps in Kubernetes terms, each
//! located at the manifest field that drives it.

use super::namer::{Namer, scales_on_cpu};
use super::*;
use crate::trace::Event;

/// A decoded step before its effect is attached.
pub(super) struct Told {
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
            Some(Event::PodCreated) => Told {
                actor: namer.controller(at(1)),
                message: format!("creates pod {}", namer.pod(at(1))),
                location: namer.owner(at(1)).map(|(_, o)| replicas_span(&objects[o])),
            },
            Some(Event::PodBound) => Told {
                actor: Actor::Scheduler,
                message: format!("binds {} to {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            Some(Event::PodUnschedulable) => {
                let (static_fail, resource_fail, spread_nodes, spread_mask, not_ready, node_name) =
                    (at(2), at(3), at(4), at(5), at(6), at(7));
                let (affinity_nodes, affinity_mask, cordoned) = (at(8), at(9), at(10));
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
                if span.is_some() {
                    location = span;
                }
                Told {
                    actor: Actor::Scheduler,
                    message: format!("no feasible node for {}: {}", namer.pod(at(1)), parts.join("; ")),
                    location: span,
                }
            }
            Some(Event::PodStarted) => Told {
                actor: Actor::Kubelet,
                message: format!("starts {} on {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            Some(Event::PodRemoved) => Told {
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
                Told {
                    actor: Actor::HorizontalPodAutoscaler,
                    message: format!(
                        "{} scales {} from {} to {} replicas ({usage})",
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
            Some(Event::PodDeleted) => Told {
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
                Told {
                    actor: Actor::LoadChange,
                    message,
                    location: None,
                }
            }
            Some(Event::PendingForever) => Told {
                actor: Actor::Check,
                message: "the cluster has settled with a pod that no node can take".into(),
                location: None,
            },
            Some(Event::MaintenanceStarted) => Told {
                actor: Actor::NodeMaintenance,
                message: format!("{} goes down for maintenance", namer.node(at(1))),
                location: None,
            },
            Some(Event::MaintenanceEnded) => Told {
                actor: Actor::NodeMaintenance,
                message: format!("{} is back", namer.node(at(1))),
                location: None,
            },
            Some(Event::TaintEvicted) => {
                let location = namer
                    .owner(at(1))
                    .and_then(|(_, o)| objects[o].workload().map(|w| w.template.spec.span));
                Told {
                    actor: Actor::TaintEvictionController,
                    message: format!(
                        "evicts {} from {}: it does not tolerate the node's NoExecute taint",
                        namer.pod(at(1)),
                        namer.node(at(2))
                    ),
                    location,
                }
            }
            Some(Event::BelowMinimum) => {
                let workload = namer.workload(at(1));
                let span = workload.map(replicas_span);
                location = span;
                Told {
                    actor: Actor::Check,
                    message: format!(
                        "{} has {} available replica{}, fewer than {}",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2),
                        if at(2) == 1 { "" } else { "s" },
                        at(3)
                    ),
                    location: span,
                }
            }
            Some(Event::EvictionLoop) => {
                let workload = namer.workload(at(1));
                // What brings the pods back: a time-limited toleration, or a pinned node name.
                let span = workload.map(|w| {
                    w.workload()
                        .and_then(|wl| {
                            let spec = &wl.template.spec;
                            spec.tolerations
                                .iter()
                                .find_map(|t| t.toleration_seconds.as_ref().map(|s| s.span))
                                .or_else(|| spec.node_name.as_ref().map(|n| n.span))
                        })
                        .unwrap_or(w.span)
                });
                // A descheduler plugin that did the evicting is the likelier cause.
                let plugin = trace
                    .iter()
                    .rev()
                    .find(|e| e.values.first() == Some(&16))
                    .and_then(|e| usize::try_from(*e.values.get(3)?).ok())
                    .and_then(|i| names.descheduler_plugins.get(i).copied().flatten());
                let span = plugin.or(span);
                location = location.or(span);
                Told {
                    actor: Actor::Check,
                    message: format!(
                        "pods of {} were evicted and replaced {} times in a row",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2)
                    ),
                    location: span,
                }
            }
            Some(Event::NodeOverloaded) => Told {
                actor: Actor::NodeOverload,
                message: format!(
                    "{} is overloaded (its pods use {}m of {}m cpu) and crashes",
                    namer.node(at(1)),
                    at(2),
                    at(3)
                ),
                location: None,
            },
            Some(Event::OverloadCheck) => {
                // The requests that filled the node: those of the pods it lost in the last crash.
                let span = trace
                    .iter()
                    .rev()
                    .find(|e| e.values.first() == Some(&15) && e.values.get(2) == Some(&at(1)))
                    .and_then(|e| namer.owner(e.values[1]))
                    .and_then(|(_, o)| cpu_request_span(&objects[o]));
                location = span;
                Told {
                    actor: Actor::Check,
                    message: format!("{} was overloaded again after it restarted", namer.node(at(1))),
                    location: span,
                }
            }
            Some(Event::NodeRestarted) => Told {
                actor: Actor::NodeOverload,
                message: format!("{} has restarted", namer.node(at(1))),
                location: None,
            },
            Some(Event::GitopsReset) => {
                let workload = namer.workload(at(1));
                Told {
                    actor: Actor::GitopsSync,
                    message: format!(
                        "re-applies {}: spec.replicas {} drifted from the manifest's {}",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2),
                        at(3)
                    ),
                    location: workload.map(replicas_span),
                }
            }
            Some(Event::StartupEnded) => Told {
                actor: Actor::Time,
                message: format!("{} is past its startup phase and uses its steady cpu", namer.pod(at(1))),
                location: None,
            },
            Some(Event::Oscillation) => {
                let workload = namer.workload(at(1));
                let hpa = workload.and_then(|w| namer.autoscaler_of(w));
                let span = hpa.and_then(|h| match &h.body {
                    Body::HorizontalPodAutoscaler(a) => Some(a.max_replicas.span),
                    _ => None,
                });
                location = span;
                Told {
                    actor: Actor::Check,
                    message: format!(
                        "{} rose to its maximum of {} replicas and fell back to {} without a change of load",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(2),
                        at(3)
                    ),
                    location: span,
                }
            }
            Some(Event::Unbalanced) => {
                let workload = namer.workload(at(1));
                let span = workload.map(balance_span);
                location = span;
                Told {
                    actor: Actor::Check,
                    message: format!(
                        "the cluster has settled with {} unbalanced: {} pods on {}, {} on {}, more than {} apart",
                        workload.map_or_else(String::new, |w| w.id.to_string()),
                        at(3),
                        namer.node(at(2)),
                        at(5),
                        namer.node(at(4)),
                        at(6)
                    ),
                    location: span,
                }
            }
            Some(Event::RolloutApplied) => {
                let workload = namer.workload(at(1));
                Told {
                    actor: Actor::Apply,
                    message: format!(
                        "a new revision of {}'s pod template is applied: a rollout starts",
                        workload.map_or_else(String::new, |w| w.id.to_string())
                    ),
                    location: workload.map(|w| w.workload().map_or(w.span, |wl| wl.template.span)),
                }
            }
            Some(Event::RolloutStuck) => {
                let workload = namer.workload(at(1));
                let stateful = workload
                    .and_then(|w| w.workload())
                    .is_some_and(|wl| wl.kind == crate::manifest::WorkloadKind::StatefulSet);
                let strategy_span = workload.map(|w| match w.workload().map(|wl| &wl.strategy) {
                    Some(crate::manifest::workload::UpdateStrategy::RollingUpdate { max_surge, .. }) => max_surge.span,
                    _ => w.span,
                });
                // A StatefulSet updates one pod at a time once every pod runs: what holds it up
                // is the pod that cannot run, so point where the scheduler said why.
                let span = if stateful {
                    steps
                        .iter()
                        .rev()
                        .find(|s: &&Step| s.actor == Actor::Scheduler && s.location.is_some())
                        .and_then(|s| s.location)
                        .or(strategy_span)
                } else {
                    strategy_span
                };
                location = span;
                let name = workload.map_or_else(String::new, |w| w.id.to_string());
                let message = if stateful {
                    format!(
                        "the rollout of {name} is stuck: {} pod(s) of the old revision left, {} of the new one running; the StatefulSet updates a pod only while every pod runs",
                        at(2),
                        at(3)
                    )
                } else {
                    format!(
                        "the rollout of {name} is stuck: the old ReplicaSet keeps {} replicas, the new one {}",
                        at(2),
                        at(3)
                    )
                };
                Told {
                    actor: Actor::Check,
                    message,
                    location: span,
                }
            }
            Some(Event::RolloutDone) => Told {
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
                Told {
                    actor: Actor::Apply,
                    message,
                    location: workload.map(replicas_span),
                }
            }
            Some(Event::DrainStuck) => {
                let budgets = namer.budgets_of_slot(at(1));
                let span = budgets
                    .first()
                    .map(|b| budget_span(b))
                    .or_else(|| namer.owner(at(1)).map(|(_, o)| replicas_span(&objects[o])));
                location = span;
                let why = if budgets.is_empty() {
                    "its replacement could not run elsewhere".to_string()
                } else {
                    let names: Vec<String> = budgets.iter().map(|b| b.id.to_string()).collect();
                    format!("{} allows no disruption", names.join(", "))
                };
                Told {
                    actor: Actor::Check,
                    message: format!(
                        "the drain of {} is stuck with {} pod(s) left: every eviction of {} is refused because {why}",
                        namer.node(at(2)),
                        at(3),
                        namer.pod(at(1))
                    ),
                    location: span,
                }
            }
            None if at(0) == crate::engine::CYCLE_START => Told {
                actor: Actor::Cycle,
                message: "from here on, the steps below repeat forever while the environment stays the same".into(),
                location: None,
            },
            Some(Event::NotStable) => {
                let workload = namer.workload(at(1));
                let pending = at(4);
                let mut parts = Vec::new();
                if let Some(w) = workload {
                    if at(2) != at(3) {
                        parts.push(format!("{} has {} of {} replicas running", w.id, at(2), at(3)));
                    }
                    if at(5) != 0 {
                        parts.push(format!("the rollout of {} is not done", w.id));
                    }
                }
                if pending > 0 {
                    parts.push(format!("{pending} pod(s) are Pending"));
                }
                let span = workload.map(replicas_span);
                location = location.or(span);
                Told {
                    actor: Actor::Check,
                    message: format!(
                        "the cluster has settled short of its desired state and stays there: {}",
                        parts.join(", ")
                    ),
                    location: span,
                }
            }
            Some(Event::NodeFailed) => Told {
                actor: Actor::NodeFailure,
                message: format!("{} stops reporting: its pods are no longer ready", namer.node(at(1))),
                location: None,
            },
            Some(Event::FailureEvicted) => Told {
                actor: Actor::TaintEvictionController,
                message: format!(
                    "deletes {} from the unreachable {}: its toleration has run out",
                    namer.pod(at(1)),
                    namer.node(at(2))
                ),
                location: None,
            },
            Some(Event::NodeRecovered) => Told {
                actor: Actor::NodeFailure,
                message: format!("{} reports again", namer.node(at(1))),
                location: None,
            },
            Some(Event::DrainStarted) => Told {
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
                Told {
                    actor: Actor::NodeDrain,
                    message: format!("evicts {} from {}: {why}", namer.pod(at(1)), namer.node(at(2))),
                    location: budgets.first().map(|b| budget_span(b)),
                }
            }
            Some(Event::NodeAdded) => {
                let zone = usize::try_from(at(1) - 1)
                    .ok()
                    .and_then(|i| names.node_zones.get(i).cloned().flatten());
                let pool = usize::try_from(at(2) - 1).ok().and_then(|i| names.scaling_pools.get(i));
                Told {
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
            Some(Event::ScaleDownStarted) => Told {
                actor: Actor::ClusterAutoscaler,
                message: format!(
                    "{} is unneeded (its pods request under the scale-down threshold and fit elsewhere): taints it and drains it",
                    namer.node(at(1))
                ),
                location: None,
            },
            Some(Event::AutoscalerEvicted) => {
                let budgets = namer.budgets_of_slot(at(1));
                Told {
                    actor: Actor::ClusterAutoscaler,
                    message: format!("evicts {} from {}", namer.pod(at(1)), namer.node(at(2))),
                    location: budgets.first().map(|b| budget_span(b)),
                }
            }
            Some(Event::AutoscalerRefused) => {
                let budgets = namer.budgets_of_slot(at(1));
                Told {
                    actor: Actor::ClusterAutoscaler,
                    message: format!(
                        "cannot evict {}: its PodDisruptionBudget has no disruption left; {} stays",
                        namer.pod(at(1)),
                        namer.node(at(2))
                    ),
                    location: budgets.first().map(|b| budget_span(b)),
                }
            }
            Some(Event::ScaleUpWanted) => {
                let pool = usize::try_from(at(2) - 1).ok().and_then(|i| names.scaling_pools.get(i));
                Told {
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
            Some(Event::InformerCaughtUp) => Told {
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
            Some(Event::StaleDeletion) => Told {
                actor: Actor::Informer,
                message: format!(
                    "has not delivered the deletion of {} yet: to the scheduler and the descheduler it still runs on {} (stale-reads)",
                    namer.pod(at(1)),
                    namer.node(at(2))
                ),
                location: names.stale_reads,
            },
            Some(Event::NodeRemoved) => Told {
                actor: Actor::ClusterAutoscaler,
                message: format!("deletes the drained {}", namer.node(at(1))),
                location: None,
            },
            Some(Event::DrainEnded) => Told {
                actor: Actor::NodeDrain,
                message: format!("{} is drained and uncordoned", namer.node(at(1))),
                location: None,
            },
            Some(Event::DeschedulerEvicted) => {
                let plugin = match at(3) {
                    1 => "RemoveDuplicates: another pod of its workload shares the node",
                    2 => "RemovePodsViolatingTopologySpreadConstraint: its spread domains are unbalanced",
                    3 => "RemovePodsViolatingNodeTaints: it does not tolerate the node's taints",
                    4 => "RemovePodsViolatingNodeAffinity: another node suits its node affinity better",
                    5 => "LowNodeUtilization: the node is above the target thresholds",
                    _ => "a descheduler plugin",
                };
                Told {
                    actor: Actor::Descheduler,
                    message: format!("evicts {} from {} ({plugin})", namer.pod(at(1)), namer.node(at(2))),
                    location: usize::try_from(at(3))
                        .ok()
                        .and_then(|i| names.descheduler_plugins.get(i).copied().flatten()),
                }
            }
            Some(Event::PodLostWithNode) => Told {
                actor: Actor::Node,
                message: format!("{} is lost with {}", namer.pod(at(1)), namer.node(at(2))),
                location: None,
            },
            _ => Told {
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

pub(super) fn cpu_request_span(o: &Object) -> Option<Span> {
    let spec = &o.workload()?.template.spec;
    spec.containers
        .iter()
        .find_map(|c| c.requests.cpu_millis.as_ref().map(|r| r.span))
}

/// The budget's minAvailable or maxUnavailable field.
pub(super) fn budget_span(o: &Object) -> Span {
    match &o.body {
        Body::PodDisruptionBudget(p) => p
            .max_unavailable
            .as_ref()
            .or(p.min_available.as_ref())
            .map_or(o.span, |v| v.span),
        _ => o.span,
    }
}

/// What decides how evenly a workload's pods sit on nodes: its per-node spread constraint
/// (`whenUnsatisfiable` when it is soft, else `maxSkew`), else the `topologyKey` of its first
/// spread constraint (it spreads over something coarser than nodes), else `replicas` (nothing
/// asks the scheduler to spread these pods).
pub(super) fn balance_span(o: &Object) -> Span {
    let Some(w) = o.workload() else { return o.span };
    let constraints = &w.template.spec.topology_spread_constraints;
    if let Some(per_node) = constraints
        .iter()
        .find(|c| c.topology_key.value == crate::manifest::node::HOSTNAME_KEY)
    {
        return match per_node.when_unsatisfiable.value {
            crate::manifest::pod::WhenUnsatisfiable::ScheduleAnyway => per_node.when_unsatisfiable.span,
            crate::manifest::pod::WhenUnsatisfiable::DoNotSchedule => per_node.max_skew.span,
        };
    }
    match constraints.first() {
        Some(c) => c.topology_key.span,
        None => replicas_span(o),
    }
}

/// `replicas`, else (the field is left out, so Kubernetes defaults it) the `spec:` key.
pub(super) fn replicas_span(o: &Object) -> Span {
    match o.workload() {
        Some(w) => match &w.replicas {
            Some(r) => r.span,
            None if w.spec_key != Span::default() => w.spec_key,
            None => o.span,
        },
        None => o.span,
    }
}

//! The fix candidates of a violation: edits of the fields its trail passes through, and the
//! remedies of its check (a PodDisruptionBudget, cpu requests under the overload threshold, a
//! soft spread made hard), most likely first.

use super::*;

/// The changes worth trying for a violation located at `at`, most likely first.
pub(super) fn candidates(a: &Analysis, unit: usize, at: Span, violation: &Violation) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut spans = fields(at, violation.steps);
    // A node that crashed under its pods' load took them with it: their requests filled it.
    if violation.by(Actor::Event("node-overload")) {
        for m in &a.units[unit].members {
            if let Some(s) = a.objects[m.object]
                .workload()
                .and_then(|w| cpu_request(&w.template.spec))
                .map(|(_, r)| r.span)
                .filter(|s| !spans.contains(s))
            {
                spans.push(s);
            }
        }
    }
    for field in spans {
        let mut found = Vec::new();
        for member in &a.units[unit].members {
            let o = &a.objects[member.object];
            let object = member.object;
            match &o.body {
                Body::Workload(w) => workload_candidates(a, unit, object, w, field, violation, &mut found),
                Body::DeschedulerPolicy(policy) => descheduler_policy_candidates(object, o, policy, field, &mut found),
                // Startup spikes the HPA counts: delay readiness past the startup phase, as the
                // HPA ignores pods that are not ready.
                Body::HorizontalPodAutoscaler(h) if h.max_replicas.span == field => {
                    autoscaler_candidates(a, unit, o, h, &mut found)
                }
                Body::PodDisruptionBudget(p) => budget_candidates(object, o, p, field, &mut found),
                // An Immediate volume is made before the scheduler knows the pod: wait for it.
                Body::StorageClass(c) if c.immediate && c.binding_mode_span == field => found.push(Candidate {
                    summary: format!(
                        "set `volumeBindingMode: WaitForFirstConsumer` on {}: its volumes are then made in the zone of the node the scheduler picks",
                        o.id
                    ),
                    location: field,
                    edit: Edit::WaitForFirstConsumer { object },
                }),
                _ => {}
            }
        }
        for c in found {
            if !out.iter().any(|o| o.edit == c.edit) {
                out.push(c);
            }
        }
    }
    // Declaring what disruption a workload tolerates comes after the specific causes: it makes
    // voluntary evictions wait, it does not stop them.
    if violation.gets(Remedy::AddDisruptionBudget)
        && [Actor::Descheduler, Actor::ClusterAutoscaler, Actor::Event("node-drain")]
            .into_iter()
            .any(|a| violation.by(a))
    {
        for member in &a.units[unit].members {
            if let Some(c) = budget_addition(a, unit, member.object, at) {
                out.push(c);
            }
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// The HorizontalPodAutoscaler of the unit that scales `object`.
fn autoscaler_of(a: &Analysis, unit: usize, object: usize) -> Option<&crate::manifest::HorizontalPodAutoscaler> {
    a.units[unit].autoscaler_of(&a.objects, object).map(|(_, h)| h)
}

/// The first container that sets a cpu request, with the request (the field a finding about
/// resources points at).
fn cpu_request(spec: &PodSpec) -> Option<(usize, &Spanned<i64>)> {
    spec.containers
        .iter()
        .enumerate()
        .find_map(|(i, c)| c.requests.cpu_millis.as_ref().map(|r| (i, r)))
}

/// A PodDisruptionBudget for a replicated workload that has none, where the violation points
/// at it.
fn budget_addition(a: &Analysis, unit: usize, object: usize, at: Span) -> Option<Candidate> {
    let o = &a.objects[object];
    let w = o.workload()?;
    if !matches!(w.kind, WorkloadKind::Deployment | WorkloadKind::StatefulSet) {
        return None;
    }
    let replicas = w.replicas.as_ref();
    if at != o.span && replicas.is_none_or(|r| r.span != at) {
        return None;
    }
    let labels = &w.template.labels;
    let budgeted = a.units[unit].members.iter().any(|m| {
        let b = &a.objects[m.object];
        matches!(&b.body, Body::PodDisruptionBudget(p)
            if b.id.namespace == o.id.namespace && p.selector.as_ref().is_some_and(|s| s.matches(labels)))
    });
    if budgeted || w.selector.is_none() {
        return None;
    }
    // One replica under a budget allowing one disruption still goes down: run two.
    let raise = (autoscaler_of(a, unit, object).is_none() && w.desired_replicas() < 2).then_some(2);
    let summary = match raise {
        Some(n) => format!(
            "run {n} replicas of {} and add a PodDisruptionBudget with `maxUnavailable: 1` for its pods, so voluntary evictions (drains, the descheduler, the cluster autoscaler) take one pod at a time",
            o.id
        ),
        None => format!(
            "add a PodDisruptionBudget with `maxUnavailable: 1` for the pods of {}, so voluntary evictions (drains, the descheduler, the cluster autoscaler) take one pod at a time",
            o.id
        ),
    };
    Some(Candidate {
        summary,
        location: replicas.map_or(o.span, |r| r.span),
        edit: Edit::AddBudget {
            object,
            replicas: raise,
        },
    })
}

/// The cpu request, in steps of 10m below the current one, at which the workload's pods fit
/// the unit's smallest node: beside the DaemonSet pods on every node (for pods that stay
/// Pending), or under the overload threshold when full (for nodes that crash). Returns the
/// container, its new request and why it is enough.
fn sized_cpu_request(
    a: &Analysis,
    unit: usize,
    object: usize,
    w: &crate::manifest::Workload,
    violation: &Violation,
) -> Option<(usize, i64, String)> {
    let spec = &w.template.spec;
    let (container, current) = cpu_request(spec).map(|(i, r)| (i, r.value))?;
    let pod = spec.effective_request().cpu_millis;
    let pools: Vec<(usize, &crate::config::NodePool)> = a.units[unit]
        .cluster(&a.config)
        .pools
        .iter()
        .enumerate()
        .filter(|(_, p)| a.units[unit].node_pools.contains(&p.name))
        .collect();
    let node_cpu = pools
        .iter()
        .map(|(_, p)| p.allocatable.cpu_millis - p.reserved.cpu_millis)
        .min()?;
    let nodes: i64 = pools
        .iter()
        .map(|(i, p)| {
            i64::from(
                violation
                    .topology
                    .and_then(|t| t.nodes_per_pool.get(*i).copied())
                    .unwrap_or(p.count),
            )
        })
        .sum();
    let members = &a.units[unit].members;
    let daemons: i64 = members
        .iter()
        .filter(|m| m.object != object)
        .filter_map(|m| a.objects[m.object].workload())
        .filter(|d| d.kind == WorkloadKind::DaemonSet)
        .map(|d| d.template.spec.effective_request().cpu_millis)
        .sum();
    let replicas =
        i64::from(autoscaler_of(a, unit, object).map_or_else(|| w.desired_replicas(), |h| h.max_replicas.value));
    if nodes < 1 || replicas < 1 || pod < 1 {
        return None;
    }
    let room = node_cpu - daemons;
    let overload = a.config.events.iter().find_map(|e| match e.value {
        crate::config::EnvironmentEvent::NodeOverload { threshold_percent } => Some(i64::from(threshold_percent)),
        _ => None,
    });
    let (to_pod, why) = match overload.filter(|_| {
        violation.gets(Remedy::RequestsUnderOverloadThreshold) || violation.by(Actor::Event("node-overload"))
    }) {
        Some(threshold) => {
            let limit = node_cpu * threshold / 100;
            let fits = (1..pod / 10).rev().map(|k| k * 10).find(|&r| {
                let per_node = replicas.min(room / r);
                per_node * r + daemons <= limit
            })?;
            let per_node = replicas.min(room / fits);
            (
                fits,
                format!(
                    "a full {node_cpu}m node then holds {per_node} of its pods, {}m, under the {threshold}% overload threshold",
                    per_node * fits + daemons
                ),
            )
        }
        None => {
            let per_node = (replicas + nodes - 1) / nodes;
            let fits = room / per_node / 10 * 10;
            if fits < 10 || fits >= pod {
                return None;
            }
            let beside = if daemons > 0 {
                format!(" beside the DaemonSet pods' {daemons}m")
            } else {
                String::new()
            };
            let pods = if per_node == 1 {
                "one of its pods then fits".to_string()
            } else {
                format!("{per_node} of its pods then fit")
            };
            (fits, format!("{pods}{beside} on each {node_cpu}m node"))
        }
    };
    let to = current - (pod - to_pod);
    (to >= 10).then_some((container, to, why))
}

/// Changes to a workload's spread, affinity, tolerations, node name, replicas or strategy.
fn workload_candidates(
    a: &Analysis,
    unit: usize,
    object: usize,
    w: &crate::manifest::Workload,
    at: Span,
    violation: &Violation,
    out: &mut Vec<Candidate>,
) {
    placement_candidates(a, unit, object, w, at, violation, out);
    runtime_candidates(a, unit, object, w, at, violation, out);
}

/// Changes to how a workload's pods spread: its spread constraints, required anti-affinity,
/// and the replicas an HPA should own.
fn placement_candidates(
    a: &Analysis,
    unit: usize,
    object: usize,
    w: &crate::manifest::Workload,
    at: Span,
    violation: &Violation,
    out: &mut Vec<Candidate>,
) {
    let o = &a.objects[object];
    let spec = &w.template.spec;
    for (index, c) in spec.topology_spread_constraints.iter().enumerate() {
        if c.max_skew.span != at || c.when_unsatisfiable.value != WhenUnsatisfiable::DoNotSchedule {
            continue;
        }
        let key = &c.topology_key.value;
        out.push(Candidate {
            summary: format!(
                "set `whenUnsatisfiable: ScheduleAnyway` on topologySpreadConstraints[{index}] ({key}) of {}",
                o.id
            ),
            location: c.when_unsatisfiable.span,
            edit: Edit::ScheduleAnyway { object, index },
        });
        let to = c.max_skew.value.saturating_add(1);
        out.push(Candidate {
            summary: format!(
                "raise `maxSkew` of topologySpreadConstraints[{index}] ({key}) of {} to {to}",
                o.id
            ),
            location: c.max_skew.span,
            edit: Edit::MaxSkew { object, index, to },
        });
    }
    for (index, term) in spec.affinity.pod_anti.required.iter().enumerate() {
        if term.topology_key.span == at {
            out.push(Candidate {
                    summary: format!(
                        "make podAntiAffinity term {index} ({}) of {} preferred (`preferredDuringSchedulingIgnoredDuringExecution`) instead of required",
                        term.topology_key.value, o.id
                    ),
                    location: term.topology_key.span,
                    edit: Edit::PreferAntiAffinity { object, index },
                });
        }
    }
    // `spec.replicas` in Git fights the HPA that owns the count.
    if autoscaler_of(a, unit, object).is_some()
        && let Some(r) = w.replicas.as_ref().filter(|r| r.span == at)
    {
        out.push(Candidate {
            summary: format!(
                "leave `spec.replicas` out of the manifest of {}: its HorizontalPodAutoscaler owns the count",
                o.id
            ),
            location: r.span,
            edit: Edit::DropReplicas { object },
        });
    }
    // Pods that double up on a node when another goes: make a soft spread hard, where that
    // keeps replicas available.
    if violation.gets(Remedy::HardenSoftSpread)
        && (at == spec.span || w.replicas.as_ref().is_some_and(|r| r.span == at))
    {
        for (index, c) in spec.topology_spread_constraints.iter().enumerate() {
            if c.when_unsatisfiable.value == WhenUnsatisfiable::ScheduleAnyway {
                out.push(Candidate {
                        summary: format!(
                            "set `whenUnsatisfiable: DoNotSchedule` on topologySpreadConstraints[{index}] ({}) of {}, so a replacement waits rather than doubling up",
                            c.topology_key.value, o.id
                        ),
                        location: c.when_unsatisfiable.span,
                        edit: Edit::HardSpread { object, index },
                    });
            }
        }
    }
}

/// Changes to where a workload's pods may run and how they are replaced: their node name and
/// tolerations, cpu request, applied replicas and rollout strategy.
fn runtime_candidates(
    a: &Analysis,
    unit: usize,
    object: usize,
    w: &crate::manifest::Workload,
    at: Span,
    violation: &Violation,
    out: &mut Vec<Candidate>,
) {
    let o = &a.objects[object];
    let spec = &w.template.spec;
    // The taint eviction controller points at the pod spec: what brings the pods back is a
    // pinned node name or a time-limited toleration.
    let evicted_for_taints = at == spec.span && violation.by(Actor::TaintEvictionController);
    if let Some(n) = spec.node_name.as_ref().filter(|n| n.span == at || evicted_for_taints) {
        out.push(Candidate {
                summary: format!(
                    "remove `spec.nodeName: {}` from {}: the scheduler then places the pods on nodes whose taints they tolerate",
                    n.value, o.id
                ),
                location: n.span,
                edit: Edit::DropNodeName { object },
            });
    }
    for (index, t) in spec.tolerations.iter().enumerate() {
        if let Some(seconds) = t
            .toleration_seconds
            .as_ref()
            .filter(|s| s.span == at || evicted_for_taints)
        {
            out.push(Candidate {
                    summary: format!(
                        "remove `tolerationSeconds` from toleration {index} of {}, so its pods stay on the tainted node instead of being evicted and placed there again",
                        o.id
                    ),
                    location: seconds.span,
                    edit: Edit::TolerateForever { object, index },
                });
        }
    }
    // Requests that do not fit beside the DaemonSets, or fill a node past its overload
    // threshold: size them to what the node holds.
    if let Some((_, request)) = cpu_request(spec)
        && request.span == at
        && let Some((container, to, why)) = sized_cpu_request(a, unit, object, w, violation)
    {
        out.push(Candidate {
            summary: format!(
                "lower the cpu request of container {} of {} from {}m to {to}m: {why}",
                spec.containers[container].name, o.id, request.value
            ),
            location: request.span,
            edit: Edit::CpuRequest { object, container, to },
        });
    }
    // kubectl apply removes a field the last applied configuration set and this one leaves
    // out: the documented migration to an HPA removes it from the last-applied first.
    if w.replicas.is_none()
        && (at == o.span || at == w.spec_key)
        && a.environment
            .previous_revision
            .as_ref()
            .and_then(|p| p.iter().find(|pw| pw.id == o.id))
            .is_some_and(|pw| pw.replicas.is_some())
    {
        out.push(Candidate {
            summary: format!(
                "remove `spec.replicas` from the last-applied configuration of {} before this change (`kubectl apply edit-last-applied`), so that kubectl apply leaves the count alone instead of resetting it to 1",
                o.id
            ),
            location: w.spec_key,
            edit: Edit::ForgetAppliedReplicas { object },
        });
    }
    if w.kind == WorkloadKind::Deployment
        && let UpdateStrategy::RollingUpdate { max_surge, .. } = &w.strategy
        && max_surge.span == at
    {
        out.push(Candidate {
                summary: format!(
                    "set `maxSurge: 0` and `maxUnavailable: 1` in the rolling update strategy of {}, so an old pod makes room first",
                    o.id
                ),
                location: max_surge.span,
                edit: Edit::OneAtATime { object },
            });
    }
}

/// Changes to the descheduler plugin a finding points at.
fn descheduler_policy_candidates(
    object: usize,
    o: &Object,
    policy: &crate::manifest::DeschedulerPolicy,
    at: Span,
    out: &mut Vec<Candidate>,
) {
    // Policies are often unnamed files or ConfigMap keys.
    let policy_name = if o.id.name.is_empty() {
        "the descheduler policy".to_string()
    } else {
        o.id.to_string()
    };
    for (profile, pr) in policy.profiles.iter().enumerate() {
        for (plugin, pl) in pr.plugins.iter().enumerate() {
            if pl.name.span != at {
                continue;
            }
            if let PluginArgs::TopologySpread { constraints, .. } = &pl.args
                && constraints.contains(&WhenUnsatisfiable::ScheduleAnyway)
            {
                out.push(Candidate {
                        summary: format!(
                            "let {} balance only `DoNotSchedule` constraints (`constraints: [DoNotSchedule]`, its default) in {policy_name}: the scheduler may break `ScheduleAnyway` ones again",
                            pl.name.value
                        ),
                        location: at,
                        edit: Edit::BalanceHardOnly { object, profile, plugin },
                    });
            }
            out.push(Candidate {
                    summary: format!(
                        "disable the descheduler plugin {} in {policy_name}, or exclude the workload from it (`namespaces` or `labelSelector`)",
                        pl.name.value
                    ),
                    location: at,
                    edit: Edit::DisablePlugin { object, profile, plugin },
                });
        }
    }
}

/// Changes for an HPA that oscillates: readiness past a configured startup.
fn autoscaler_candidates(
    a: &Analysis,
    unit: usize,
    o: &Object,
    h: &crate::manifest::HorizontalPodAutoscaler,
    out: &mut Vec<Candidate>,
) {
    let target = a.units[unit].members.iter().find(|m| {
        let t = &a.objects[m.object];
        t.id.kind == h.scale_target_ref.kind && t.id.name == h.scale_target_ref.name && t.id.namespace == o.id.namespace
    });
    if let Some(m) = target
        && let Some(startup) = a
            .config
            .workloads
            .get(&a.objects[m.object].id)
            .and_then(|w| w.startup.as_ref())
    {
        let t = &a.objects[m.object];
        out.push(Candidate {
                summary: format!(
                    "delay the readiness of {}'s pods past their {} s startup (`readinessProbe.initialDelaySeconds: {}`): the HPA ignores pods that are not ready, so their startup cpu no longer counts",
                    t.id, startup.seconds, startup.seconds
                ),
                location: t.workload().map_or(t.span, |w| w.template.spec.span),
                edit: Edit::DelayReadiness {
                    object: m.object,
                    seconds: i64::from(startup.seconds),
                },
            });
    }
}

/// A PodDisruptionBudget that allows one disruption.
fn budget_candidates(
    object: usize,
    o: &Object,
    p: &crate::manifest::PodDisruptionBudget,
    at: Span,
    out: &mut Vec<Candidate>,
) {
    let field = p.min_available.as_ref().or(p.max_unavailable.as_ref());
    if let Some(f) = field.filter(|f| f.span == at) {
        let summary = if p.min_available.is_some() {
            format!("replace `minAvailable` with `maxUnavailable: 1` on {}", o.id)
        } else {
            format!("set `maxUnavailable: 1` on {}", o.id)
        };
        out.push(Candidate {
            summary,
            location: f.span,
            edit: Edit::BudgetAllowsOne { object },
        });
    }
}

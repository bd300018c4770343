//! kube-scheduler's steps (scheduler.pml beside this file): a binding, the filters that left
//! a pod without a feasible node, located at the field that rejects it, and the volume
//! provisioning its VolumeBinding plugin waits for (main.pml, scheduler.pml).

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    match event {
        Event::PodBound => DecodedStep::new(
            Actor::Scheduler,
            format!("binds {} to {}", s.namer.pod(at(1)), s.namer.node(at(2))),
            None,
        ),
        Event::VolumeProvisioned | Event::VolumeProvisionedWithPod => provisioned(event, v, s),
        _ => unschedulable(v, s),
    }
}

/// `KIVI:…:slot:zone`: a claim's volume provisioned in a zone, before or with its pod.
fn provisioned(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let pod = s.namer.pod(at(1));
    let zone =
        s.ir.volumes
            .as_ref()
            .and_then(|v| v.zones.get((at(2) - 1).max(0) as usize))
            .cloned()
            .unwrap_or_else(|| format!("zone #{}", at(2)));
    let when = if event == Event::VolumeProvisioned {
        "before the pod is scheduled (volumeBindingMode: Immediate)"
    } else {
        "where it was bound (volumeBindingMode: WaitForFirstConsumer): its pods can run in no other zone"
    };
    DecodedStep::new(
        Actor::VolumeProvisioner,
        format!("provisions the volume of {pod}'s claim in {zone}, {when}"),
        s.namer
            .owner(at(1))
            .and_then(|(w, _)| s.names.volume_spans.get(w).copied().flatten()),
    )
}

/// `KIVI:3:slot:...`: the filters' counts of nodes that rejected the pod, and why.
fn unschedulable(v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (static_fail, resource_fail, spread_nodes, spread_mask, not_ready, node_name) =
        (at(2), at(3), at(4), at(5), at(6), at(7));
    let (affinity_nodes, affinity_mask, cordoned, volume_fail) = (at(8), at(9), at(10), at(11));
    let mut reasons = Vec::new();
    let mut span = None;
    if let Some((w, o)) = s.namer.owner(at(1)) {
        let template = s.ir.workloads[w].template - 1;
        let spec = &s.objects[o].workload().expect("a workload").template.spec;
        for (k, (index, s)) in s.names.hard_constraints[template].iter().enumerate() {
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
        parts.push(format!("its nodeName {} is not ready", s.namer.node(node_name)));
    }
    if not_ready > 0 && node_name == 0 {
        parts.push(format!("{not_ready} node(s) are not ready"));
    }
    if cordoned > 0 {
        parts.push(format!("{cordoned} node(s) are cordoned"));
    }
    if affinity_nodes > 0
        && let Some((w, _)) = s.namer.owner(at(1))
    {
        let template = s.ir.workloads[w].template - 1;
        let terms: Vec<&(String, Span)> = s.names.affinity_terms[template]
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
        let resources = if s.names.scalar_resources.is_empty() {
            "cpu, memory or pod slots".to_string()
        } else {
            format!("cpu, memory, pod slots or {}", s.names.scalar_resources.join(", "))
        };
        parts.push(format!("{resource_fail} node(s) lack {resources}"));
        // Nothing narrower rejects it: its requests are what does not fit.
        if span.is_none() {
            span = s
                .namer
                .owner(at(1))
                .and_then(|(_, o)| s.objects[o].workload())
                .map(|w| w.template.spec.request_span());
        }
    }
    if volume_fail > 0 {
        // upstream's ErrReasonNodeConflict
        parts.push(format!("{volume_fail} node(s) had volume node affinity conflict"));
        if span.is_none()
            && let Some((w, _)) = s.namer.owner(at(1))
        {
            span = s.names.volume_spans.get(w).copied().flatten();
        }
    }
    if static_fail > 0 {
        parts.push(format!(
            "{static_fail} node(s) do not match its node selector, affinity, name or tolerations"
        ));

        // The scheduler profile's addedAffinity is easy to miss: the pod's manifest
        // does not show it, and the DaemonSet controller ignores it.
        if let Some((w, _)) = s.namer.owner(at(1))
            && let Some((mask, added_span)) = s.names.added_affinity.get(s.ir.workloads[w].template - 1)
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
            span = s
                .namer
                .owner(at(1))
                .and_then(|(_, o)| s.objects[o].workload())
                .map(|w| w.template.spec.node_requirement_span());
        }
    }
    DecodedStep {
        actor: Actor::Scheduler,
        message: format!("no feasible node for {}: {}", s.namer.pod(at(1)), parts.join("; ")),
        location: span,
        // A batch pod (a Job's) that waits is no finding: only a judged pod locates one.
        blames: span.is_some() && !s.namer.owner(at(1)).is_some_and(|(w, _)| s.ir.workloads[w].batch),
    }
}

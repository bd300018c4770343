//! The event `apply`: `kubectl apply` of the new revision over the previous one, which the
//! cluster runs until then (`event.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "apply",
    summary: "the new revision is applied over the previous one (`from`), which the cluster runs until then",
    configured: Configured::ByReader,
    templates: &[("events/apply.pml", include_str!("event.pml"))],
    included: Some("ir.apply"),
    proctype: "Apply",
    runs_autoscalers: true,
    busy: None,
    prints: &[Printed {
        code: 34,
        define: "EVENT_APPLY_REPLICAS",
        actor: Actor::Event("apply"),
        tell: apply_replicas,
        changed: None,
    }],
};

/// `KIVI:34:workload:before:after`: located at the new revision's `spec.replicas`.
fn apply_replicas(v: &[i64], trail: &dyn Counterexample) -> Told {
    let workload = trail.workload(at(v, 1));
    let name = named(workload);
    let (before, after) = (at(v, 2), at(v, 3));
    let message = match workload.and_then(|w| w.workload()).map(|w| w.replicas.is_some()) {
        Some(false) => format!(
            "the new revision of {name} leaves out spec.replicas, which the previous one set: kubectl apply removes it and spec.replicas falls from {before} to its default {after}"
        ),
        _ => format!("the new revision of {name} is applied: spec.replicas goes from {before} to {after}"),
    };
    Told {
        message,
        location: workload.map(Object::replicas_field),
    }
}

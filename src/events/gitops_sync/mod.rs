//! The event `gitops-sync` (Argo CD selfHeal, Flux): the agent re-applies the manifests when
//! the live state drifts from Git (`event.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "gitops-sync",
    summary: "a GitOps agent re-applies the manifests whenever the live state drifts from Git",
    configured: Configured::ByReader,
    templates: &[("events/gitops_sync.pml", include_str!("event.pml"))],
    included: Some("ir.gitops_sync"),
    proctype: "GitopsSync",
    runs_autoscalers: true,
    busy: None,
    prints: &[Printed {
        code: 20,
        define: "EVENT_GITOPS_RESET",
        actor: Actor::Event("gitops-sync"),
        tell: gitops_reset,
        changed: None,
    }],
};

/// `KIVI:20:workload:live:manifest`: located at the manifest's `spec.replicas`.
fn gitops_reset(v: &[i64], trail: &dyn Counterexample) -> Told {
    let workload = trail.workload(at(v, 1));
    Told {
        message: format!(
            "re-applies {}: spec.replicas {} drifted from the manifest's {}",
            named(workload),
            at(v, 2),
            at(v, 3)
        ),
        location: workload.map(Object::replicas_field),
    }
}

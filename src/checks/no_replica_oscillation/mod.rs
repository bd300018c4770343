//! The check `no-replica-oscillation`: what it claims, its defaults and its monitor: the
//! proctype `CheckNoReplicaOscillation` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_OSCILLATION`, told by [`tell`].

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::NoReplicaOscillation,
    aliases: &["no_oscillation_replica_num"],
    summary: "the replica count does not swing to max and back without a load change",
    definition: "Without a change of load, the replica count of an autoscaled workload does \
                 not rise to maxReplicas and fall back again.",
    level: Level::Warning,
    applies: Applies::WithAutoscaler,
    params: &[],
    tags: &["reliability", "autoscaling", "hpa"],
    example: "A container's startup cpu is far above its steady cpu and the HPA's target sits between them: each new pod pushes utilisation over the target, the HPA scales to maxReplicas, and scales back once the pods settle, again and again.",
    default_enabled: true,
    fixes: &[
        "Raise the HPA's target utilisation above the startup burst, or lower the startup burst.",
        "Add a scale-down stabilisation window (`behavior.scaleDown.stabilizationWindowSeconds`).",
        "Set the cpu request closer to the steady usage.",
    ],
    remedies: &[Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/no_replica_oscillation.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckNoReplicaOscillation",
    violation: MonitorEvent {
        code: 22,
        define: "EVENT_OSCILLATION",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Workload(1),
    },
    bookkeeping: Some("MONITORS_OSCILLATION"),
    told_by_scheduler: false,
};

/// `KIVI:22:workload:max:replicas`.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    let location = workload
        .and_then(|w| trail.autoscaler_of(w))
        .and_then(|h| match &h.body {
            crate::manifest::Body::HorizontalPodAutoscaler(a) => Some(a.max_replicas.span),
            _ => None,
        });
    Told {
        message: format!(
            "{} rose to its maximum of {} replicas and fell back to {} without a change of load",
            named(workload),
            at(2),
            at(3)
        ),
        location,
    }
}

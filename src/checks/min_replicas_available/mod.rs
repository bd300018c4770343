//! The check `min-replicas-available`: what it claims, its defaults and its monitor: the
//! proctype `CheckMinReplicasAvailable` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_BELOW_MINIMUM`, told by [`tell`].

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::MinReplicasAvailable,
    aliases: &["replica_num_always_meet_min", "replica_num_always_meet_exp"],
    summary: "available replicas never drop below the minimum once reached",
    definition: "After first reaching it, the number of available replicas of each workload \
                 never drops below its bound: the HPA's minReplicas (or spec.replicas without \
                 an HPA), lowered to what a PodDisruptionBudget of the workload declares \
                 enough; or the `min` param when set. With the default bound, pods the \
                 environment takes away with their node (node-failure, node-maintenance, \
                 node-overload) make the check wait until the bound is reached again; a \
                 `min` param holds throughout.",
    level: Level::Error,
    applies: Applies::Always,
    params: &[Param {
        name: "min",
        description: "the bound to hold instead of minReplicas or spec.replicas",
        default: None,
        minimum: 0,
        define: None,
        bounds_availability: true,
    }],
    tags: &["reliability", "availability", "disruption", "hpa"],
    example: "A PodDisruptionBudget allows 1 unavailable pod of a 3-replica Deployment, but the descheduler also evicts a pod whose replacement cannot be scheduled: available replicas fall to 1.",
    default_enabled: true,
    fixes: &[
        "Set a PodDisruptionBudget that matches the availability you need.",
        "Leave room in the cluster for a replacement pod (requests below allocatable with one node gone).",
        "Raise minReplicas, or spread the pods so that one node or zone holds fewer of them.",
    ],
    remedies: &[Remedy::AddDisruptionBudget, Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/min_replicas_available.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckMinReplicasAvailable",
    violation: MonitorEvent {
        code: 13,
        define: "EVENT_BELOW_MINIMUM",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Workload(1),
    },
    bookkeeping: Some("MONITORS_MIN_REPLICAS"),
    told_by_scheduler: false,
};

/// `KIVI:13:workload:running:bound`.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    Told {
        message: format!(
            "{} has {}, fewer than {}",
            named(workload),
            crate::diagnostics::plural(at(2).max(0) as usize, "available replica"),
            at(3)
        ),
        location: workload.map(Object::replicas_field),
    }
}

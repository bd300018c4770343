//! The check `pods-schedulable`: what it claims, its defaults and its monitor: the
//! proctype `CheckPodsSchedulable` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_PENDING_FOREVER`, told by [`tell`].

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::PodsSchedulable,
    aliases: &["pod_always_schedulable", "no_feasible_node"],
    summary: "every pod a controller creates finds a feasible node",
    definition: "Every pod that a controller creates (including after the HPA scales up to \
                 maxReplicas, after node failures and during rollouts) is eventually bound to \
                 a node that passes every scheduler filter.",
    level: Level::Error,
    applies: Applies::Always,
    params: &[],
    tags: &["reliability", "scheduling", "topology-spread", "affinity"],
    example: "A Deployment with 6 replicas and a required `topologySpreadConstraint` on `topology.kubernetes.io/zone` (maxSkew 1) runs on 3 zones of which one has a single small node: once the HPA scales to 6, the sixth pod has no zone where it keeps the skew and stays Pending.",
    default_enabled: true,
    fixes: &[
        "Use `whenUnsatisfiable: ScheduleAnyway` for spread constraints that are a preference, not a rule.",
        "Give every zone (or node pool) the capacity for maxReplicas / zones pods, or lower the HPA's maxReplicas.",
        "Make required anti-affinity preferred, or allow as many nodes as replicas.",
        "Check that nodeSelector, affinity and tolerations match a pool that exists.",
    ],
    remedies: &[Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/pods_schedulable.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckPodsSchedulable",
    violation: MonitorEvent {
        code: 9,
        define: "EVENT_PENDING_FOREVER",
        tell,
        blame: Blame::ChosenPod,
        subject: Subject::PendingWorkload,
    },
    bookkeeping: None,
    told_by_scheduler: true,
};

/// `KIVI:9:workloads…`: the cluster has settled with a pod Pending of each workload the values
/// name; the finding is where the scheduler last said why it could not place one of theirs.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    Told {
        message: "the cluster has settled with a pod that no node can take".into(),
        location: trail
            .scheduling_failure_of(&|w| names_workload(v, w))
            .or_else(|| trail.scheduling_failure_of(&|_| true)),
    }
}

//! The check `pods-balanced`: what it claims, its defaults and its monitor: the
//! proctype `CheckPodsBalanced` of `templates/checks/pods_balanced.pml`, whose violation ends the trace
//! with `Unbalanced`.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::PodsBalanced,
    aliases: &["pod_balance_across_node"],
    summary: "pods of a workload stay balanced across ready nodes",
    definition: "Once stable, the pods of each workload differ by at most `maxSkew` between \
                 any two ready nodes they may use.",
    level: Level::Warning,
    applies: Applies::WithSpread,
    params: &[Param {
        name: "maxSkew",
        description: "largest allowed difference of pod counts between two nodes",
        default: Some(1),
    }],
    tags: &["reliability", "scheduling", "topology-spread", "balance"],
    example: "After a node comes back from maintenance, all replicas stay on the other nodes because a soft spread constraint never moves running pods and no descheduler rebalances them.",
    // Kubernetes never moves running pods to rebalance them (the scheduler places, it
    // does not re-place), so an imbalance after an outage is what Kubernetes promises,
    // not a defect: opt-in, for clusters that run a descheduler to keep balance.
    default_enabled: false,
    fixes: &[
        "Run the descheduler's RemovePodsViolatingTopologySpreadConstraint or RemoveDuplicates.",
        "Use a required (DoNotSchedule) spread constraint when balance matters.",
        "Raise the balance param `maxSkew` if a skew is acceptable.",
    ],
    liveness: false,
    template: "checks/pods_balanced.pml",
    proctype: "CheckPodsBalanced",
    violation: Event::Unbalanced,
};

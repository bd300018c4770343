//! The check `drain-completes`: what it claims, its defaults and its monitor: the
//! proctype `CheckDrainCompletes` of `templates/checks/drain_completes.pml`, whose violation ends the trace
//! with `DrainStuck`.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::DrainCompletes,
    aliases: &[],
    summary: "draining a node finishes",
    definition: "When a node is drained (cordoned, then its pods evicted through the Eviction \
                 API, which honours PodDisruptionBudgets), the drain finishes: once the \
                 cluster has settled, no pod is left on the node that no budget lets go. A \
                 budget that never allows a disruption (minAvailable equal to the replicas or \
                 to the HPA's minReplicas, maxUnavailable 0) or replacements that cannot be \
                 scheduled elsewhere block the drain for good.",
    level: Level::Error,
    applies: Applies::WithDrainEvents,
    params: &[],
    tags: &["reliability", "availability", "disruption", "drain", "pdb"],
    example: "A Deployment with 2 replicas and a PodDisruptionBudget with `minAvailable: 2`: \
              the Eviction API refuses every eviction, so `kubectl drain` of a node running \
              one of its pods retries forever and node upgrades stall.",
    default_enabled: true,
    fixes: &[
        "Allow at least one disruption: `maxUnavailable: 1` on the PodDisruptionBudget, or `minAvailable` below the replicas (and below the HPA's minReplicas).",
        "Run more replicas than the budget's minimum, spread over nodes, so an evicted pod's replacement can run elsewhere first.",
        "Make sure a replacement pod fits on the other nodes (requests, affinity, spread) while the drained node is cordoned.",
    ],
    liveness: false,
    template: "checks/drain_completes.pml",
    proctype: "CheckDrainCompletes",
    violation: Event::DrainStuck,
};

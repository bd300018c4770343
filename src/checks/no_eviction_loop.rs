//! The check `no-eviction-loop`: what it claims, its defaults and its monitor: the
//! proctype `CheckNoEvictionLoop` of `templates/checks/no_eviction_loop.pml`, whose violation ends the trace
//! with `EvictionLoop`.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::NoEvictionLoop,
    aliases: &["no_oscillation_eviction"],
    summary: "no repeated evict and recreate cycle",
    definition: "No workload's pods are evicted by a controller (the descheduler, taint \
                 eviction) and replaced, `loops` times in a row. Environment events \
                 (maintenance, failures) are bounded and do not count.",
    level: Level::Error,
    applies: Applies::WithEvictions,
    params: &[Param {
        name: "loops",
        description: "evict/recreate repetitions that count as a loop",
        default: Some(3),
    }],
    tags: &["reliability", "descheduler", "taints", "scheduling"],
    example: "The descheduler's RemovePodsViolatingTopologySpreadConstraint evicts a pod that the scheduler can only place on the same node again, because a node affinity pins it there: evict, recreate, evict, forever.",
    default_enabled: true,
    fixes: &[
        "Align the descheduler's plugins with the scheduler's constraints (the same spread constraints, affinity and taints).",
        "Exclude the workload from the plugin (namespaces or labelSelector in the policy).",
        "Give NoExecute tolerations no `tolerationSeconds` when the pod must stay, or none at all when it must not.",
    ],
    liveness: false,
    template: "checks/no_eviction_loop.pml",
    proctype: "CheckNoEvictionLoop",
    violation: Event::EvictionLoop,
};

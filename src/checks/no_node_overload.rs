//! The check `no-node-overload`: what it claims, its defaults and its monitor: the
//! proctype `CheckNoNodeOverload` of `templates/checks/no_node_overload.pml`, whose violation ends the trace
//! with `OverloadCheck`.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::NoNodeOverload,
    aliases: &["no_kernel_panic"],
    summary: "no node is driven into overload repeatedly",
    definition: "No node's pods use more than the overload threshold of its allocatable \
                 resources again after it has restarted.",
    level: Level::Error,
    applies: Applies::WithOverloadEvents,
    params: &[],
    tags: &["reliability", "resources", "capacity"],
    example: "Pods whose cpu request is a fraction of their usage pack onto one node; it overloads and restarts, the pods come back to the same node and overload it again.",
    default_enabled: true,
    fixes: &[
        "Set requests at the pods' real usage so the scheduler does not overcommit nodes.",
        "Set limits, or spread the pods with anti-affinity or a topology spread constraint.",
    ],
    liveness: false,
    template: "checks/no_node_overload.pml",
    proctype: "CheckNoNodeOverload",
    violation: Event::OverloadCheck,
};

//! The check `rollout-completes`: what it claims, its defaults and its monitor: the
//! proctype `CheckRolloutCompletes` of `templates/checks/rollout_completes.pml`, whose violation ends the trace
//! with `RolloutStuck`.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::RolloutCompletes,
    aliases: &[],
    summary: "a rollout to a new pod template finishes",
    definition: "When a new revision of a Deployment's or StatefulSet's pod template is \
                 applied, the rollout finishes under the unit's constraints (maxSurge and \
                 maxUnavailable, the StatefulSet's ordered updates and partition, affinity, \
                 spread, resources): every replica (of a StatefulSet, every ordinal at or \
                 above the partition) runs the new template and no old pod is left. While \
                 it runs, availability may dip by maxUnavailable.",
    level: Level::Error,
    applies: Applies::WithRollout,
    params: &[],
    tags: &["reliability", "rollout", "deployment", "affinity"],
    example: "A Deployment with required pod anti-affinity on the hostname runs one pod on each of 3 nodes with `maxSurge: 1, maxUnavailable: 0`: the surge pod of the new revision fits on no node, no old pod may go first, and the rollout never finishes.",
    default_enabled: true,
    fixes: &[
        "Allow `maxUnavailable: 1` (or more) so that an old pod makes room first.",
        "Have more nodes than replicas when pods must not share nodes.",
        "Use preferred anti-affinity instead of required.",
    ],
    liveness: false,
    template: "checks/rollout_completes.pml",
    proctype: "CheckRolloutCompletes",
    violation: Event::RolloutStuck,
};

//! The check `rollout-completes`: what it claims, its defaults and its monitor: the
//! proctype `CheckRolloutCompletes` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_ROLLOUT_STUCK`, told by [`tell`].

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
    remedies: &[Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/rollout_completes.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckRolloutCompletes",
    violation: MonitorEvent {
        code: 26,
        define: "EVENT_ROLLOUT_STUCK",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Workload(1),
    },
    bookkeeping: None,
    told_by_scheduler: false,
};

/// `KIVI:26:workload:old:new`: the old and new ReplicaSets' replicas (a StatefulSet's old and
/// new revisions' pods).
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    use crate::manifest::workload::UpdateStrategy;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    let stateful = workload
        .and_then(|w| w.workload())
        .is_some_and(|wl| wl.kind == crate::manifest::WorkloadKind::StatefulSet);
    let strategy = workload.map(|w| match w.workload().map(|wl| &wl.strategy) {
        Some(UpdateStrategy::RollingUpdate { max_surge, .. }) => max_surge.span,
        _ => w.span,
    });
    let name = named(workload);
    if stateful {
        // A StatefulSet updates one pod at a time once every pod runs: what holds it up is the
        // pod that cannot run, so point where the scheduler said why.
        Told {
            message: format!(
                "the rollout of {name} is stuck: {} pod(s) of the old revision left, {} of the new one running; the StatefulSet updates a pod only while every pod runs",
                at(2),
                at(3)
            ),
            location: trail.scheduling_failure().or(strategy),
        }
    } else {
        Told {
            message: format!(
                "the rollout of {name} is stuck: the old ReplicaSet keeps {} replicas, the new one {}",
                at(2),
                at(3)
            ),
            location: strategy,
        }
    }
}

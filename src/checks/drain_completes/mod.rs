//! The check `drain-completes`: what it claims, its defaults and its monitor: the
//! proctype `CheckDrainCompletes` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_DRAIN_STUCK`, told by [`tell`].

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
    remedies: &[Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/drain_completes.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckDrainCompletes",
    violation: MonitorEvent {
        code: 35,
        define: "EVENT_DRAIN_STUCK",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Unit,
    },
    bookkeeping: None,
    told_by_scheduler: false,
};

/// `KIVI:35:slot:node:left`: the pod no eviction can take, its node, the pods left on it.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let budgets = trail.budgets_of_pod(at(1));
    let location = budgets
        .first()
        .map(|b| b.budget_field())
        .or_else(|| trail.owner(at(1)).map(Object::replicas_field));
    let why = if budgets.is_empty() {
        "its replacement could not run elsewhere".to_string()
    } else {
        let names: Vec<String> = budgets.iter().map(|b| b.id.to_string()).collect();
        format!("{} allows no disruption", names.join(", "))
    };
    Told {
        message: format!(
            "the drain of {} is stuck with {} pod(s) left: every eviction of {} is refused because {why}",
            trail.node(at(2)),
            at(3),
            trail.pod(at(1))
        ),
        location,
    }
}

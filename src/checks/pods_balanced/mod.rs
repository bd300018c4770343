//! The check `pods-balanced`: what it claims, its defaults and its monitor: the
//! proctype `CheckPodsBalanced` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_UNBALANCED`, told by [`tell`].

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
        minimum: 0,
        define: None,
        bounds_availability: false,
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
    remedies: &[],
    liveness: false,
    template: "checks/pods_balanced.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckPodsBalanced",
    violation: MonitorEvent {
        code: 23,
        define: "EVENT_UNBALANCED",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Unit,
    },
    bookkeeping: Some("MONITORS_PODS_BALANCED"),
    told_by_scheduler: false,
};

/// `KIVI:23:workload:node:pods:node:pods:skew`.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    Told {
        message: format!(
            "the cluster has settled with {} unbalanced: {} pods on {}, {} on {}, more than {} apart",
            named(workload),
            at(3),
            trail.node(at(2)),
            at(5),
            trail.node(at(4)),
            at(6)
        ),
        location: workload.map(balance_field),
    }
}

/// What decides how evenly a workload's pods sit on nodes: its per-node spread constraint
/// (`whenUnsatisfiable` when it is soft, else `maxSkew`), else the `topologyKey` of its first
/// spread constraint (it spreads over something coarser than nodes), else `replicas` (nothing
/// asks the scheduler to spread these pods).
fn balance_field(o: &Object) -> Span {
    use crate::manifest::pod::WhenUnsatisfiable;
    let Some(w) = o.workload() else { return o.span };
    let constraints = &w.template.spec.topology_spread_constraints;
    if let Some(per_node) = constraints
        .iter()
        .find(|c| c.topology_key.value == crate::manifest::node::HOSTNAME_KEY)
    {
        return match per_node.when_unsatisfiable.value {
            WhenUnsatisfiable::ScheduleAnyway => per_node.when_unsatisfiable.span,
            WhenUnsatisfiable::DoNotSchedule => per_node.max_skew.span,
        };
    }
    match constraints.first() {
        Some(c) => c.topology_key.span,
        None => o.replicas_field(),
    }
}

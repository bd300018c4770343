//! The check `no-eviction-loop`: what it claims, its defaults and its monitor: the
//! proctype `CheckNoEvictionLoop` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_EVICTION_LOOP`, told by [`tell`].

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
        minimum: 1,
        define: Some("EVICTION_LOOPS"),
        bounds_availability: false,
    }],
    tags: &["reliability", "descheduler", "taints", "scheduling"],
    example: "The descheduler's RemovePodsViolatingTopologySpreadConstraint evicts a pod that the scheduler can only place on the same node again, because a node affinity pins it there: evict, recreate, evict, forever.",
    default_enabled: true,
    fixes: &[
        "Align the descheduler's plugins with the scheduler's constraints (the same spread constraints, affinity and taints).",
        "Exclude the workload from the plugin (namespaces or labelSelector in the policy).",
        "Give NoExecute tolerations no `tolerationSeconds` when the pod must stay, or none at all when it must not.",
    ],
    remedies: &[Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/no_eviction_loop.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckNoEvictionLoop",
    violation: MonitorEvent {
        code: 14,
        define: "EVENT_EVICTION_LOOP",
        tell,
        blame: Blame::Scheduling,
        subject: Subject::Workload(1),
    },
    bookkeeping: Some("MONITORS_EVICTION_LOOP"),
    told_by_scheduler: false,
};

/// `KIVI:14:workload:alternations`.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    // What brings the pods back: a time-limited toleration, or a pinned node name.
    let pinned = workload.map(|w| {
        w.workload()
            .and_then(|wl| {
                let spec = &wl.template.spec;
                spec.tolerations
                    .iter()
                    .find_map(|t| t.toleration_seconds.as_ref().map(|s| s.span))
                    .or_else(|| spec.node_name.as_ref().map(|n| n.span))
            })
            .unwrap_or(w.span)
    });
    // A descheduler plugin that did the evicting is the likelier cause.
    let plugin = trail
        .latest(Event::DeschedulerEvicted, &|_| true)
        .and_then(|e| e.get(3).copied())
        .and_then(|i| trail.descheduler_plugin(i));
    Told {
        message: format!(
            "pods of {} were evicted and replaced {} times in a row",
            named(workload),
            at(2)
        ),
        location: plugin.or(pinned),
    }
}

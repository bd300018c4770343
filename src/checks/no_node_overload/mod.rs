//! The check `no-node-overload`: what it claims, its defaults and its monitor: the
//! proctype `CheckNoNodeOverload` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_OVERLOAD_CHECK`, told by [`tell`].

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
    remedies: &[Remedy::RequestsUnderOverloadThreshold, Remedy::HardenSoftSpread],
    liveness: false,
    template: "checks/no_node_overload.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckNoNodeOverload",
    violation: MonitorEvent {
        code: 18,
        define: "EVENT_OVERLOAD_CHECK",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Unit,
    },
    bookkeeping: None,
    told_by_scheduler: false,
};

/// `KIVI:18:node`.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let node = v.get(1).copied().unwrap_or(0);
    // The requests that filled the node: those of the pods it lost in the last crash.
    let location = trail
        .latest(Event::PodLostWithNode, &|e| e.get(2) == Some(&node))
        .and_then(|e| trail.owner(e.get(1).copied().unwrap_or(0)))
        .and_then(cpu_request_field);
    Told {
        message: format!("{} was overloaded again after it restarted", trail.node(node)),
        location,
    }
}

/// The first cpu request of a workload's containers.
fn cpu_request_field(o: &Object) -> Option<Span> {
    let spec = &o.workload()?.template.spec;
    spec.containers
        .iter()
        .find_map(|c| c.requests.cpu_millis.as_ref().map(|r| r.span))
}

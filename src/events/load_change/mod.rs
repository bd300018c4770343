//! The event `load-change`: the usage of a workload's pods moves to another level, as often as
//! the settled cluster allows (`event.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "load-change",
    summary: "the usage of a workload's pods moves between levels of its request (or of its HPA's metric targets)",
    configured: Configured::ByReader,
    templates: &[("events/load_change.pml", include_str!("event.pml"))],
    included: Some("ir.load_change"),
    proctype: "LoadChange",
    runs_autoscalers: true,
    busy: None,
    prints: &[Printed {
        code: 8,
        define: "EVENT_LOAD_CHANGED",
        actor: Actor::Event("load-change"),
        tell: load_changed,
        changed: None,
    }],
};

/// `KIVI:8:workload:level`.
fn load_changed(v: &[i64], trail: &dyn Counterexample) -> Told {
    let workload = trail.workload(at(v, 1));
    let name = named(workload);
    let on_cpu = workload
        .and_then(|w| trail.autoscaler_of(w))
        .is_none_or(crate::manifest::autoscaling::scales_on_cpu);
    told(if on_cpu {
        format!("the pods of {name} now use {}% of their cpu request", at(v, 2))
    } else {
        format!(
            "the metrics {name}'s autoscaler scales on are now at {}% of their targets",
            at(v, 2)
        )
    })
}

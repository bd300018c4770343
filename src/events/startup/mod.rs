//! Time passing for pods in their startup phase (config `workloads.<id>.startup`): they
//! settle to their steady usage (`event.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "startup",
    summary: "pods past their startup phase settle to the workload's steady usage",
    configured: Configured::ByModel,
    templates: &[("events/startup.pml", include_str!("event.pml"))],
    included: Some("startup"),
    proctype: "StartupEnds",
    runs_autoscalers: false,
    busy: None,
    prints: &[Printed {
        code: 21,
        define: "EVENT_STARTUP_ENDED",
        actor: Actor::Time,
        tell: |v, trail| {
            told(format!(
                "{} is past its startup phase and uses its steady cpu",
                trail.pod(at(v, 1))
            ))
        },
        changed: None,
    }],
};

//! A toy environment event, built only by `tests/architecture.rs` to show that an event is its
//! folder and a registry line: someone deletes a running pod (`kubectl delete pod`), up to
//! `times` times. Its config is `events: [{type: toy-pod-kill, times: N}]`, read from the
//! registry (`Configured::WithParams`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "toy-pod-kill",
    summary: "someone deletes a running pod",
    configured: Configured::WithParams(&[Param {
        name: "times",
        description: "how many pods are deleted, at most",
        default: Some(1),
        minimum: 1,
        define: None,
        bounds_availability: false,
    }]),
    templates: &[("events/toy_pod_kill.pml", include_str!("event.pml"))],
    included: None,
    proctype: "ToyPodKill",
    runs_autoscalers: false,
    busy: None,
    prints: &[Printed {
        code: 91,
        define: "EVENT_TOY_POD_KILLED",
        actor: Actor::Event("toy-pod-kill"),
        tell: |v, trail| told(format!("someone deletes {}", trail.pod(at(v, 1)))),
        changed: Some(Changed::Pod(Change::PodRemoved)),
    }],
};

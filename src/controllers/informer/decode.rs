//! The informers' steps (informer.pml beside this file, the `stale-reads` fault): a deletion
//! not delivered yet to the scheduler and the descheduler, and its late delivery.

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (pod, node) = (s.namer.pod(at(1)), s.namer.node(at(2)));
    match event {
        Event::InformerCaughtUp => DecodedStep::new(
            Actor::Informer,
            format!(
                "delivers the deletion of {} from {node}: the scheduler and the descheduler see it gone",
                s.namer.undelivered.get(&at(1)).cloned().unwrap_or(pod)
            ),
            s.names.stale_reads,
        ),
        _ => DecodedStep::new(
            Actor::Informer,
            format!(
                "has not delivered the deletion of {pod} yet: to the scheduler and the descheduler it still runs on {node} (stale-reads)"
            ),
            s.names.stale_reads,
        ),
    }
}

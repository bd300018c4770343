//! The kubelet's steps (kubelet.pml beside this file) and a pod lost with its node
//! (src/events/node_down.pml): pods started and removed.

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (pod, node) = (s.namer.pod(at(1)), s.namer.node(at(2)));
    match event {
        Event::PodStarted => DecodedStep::new(Actor::Kubelet, format!("starts {pod} on {node}"), None),
        Event::PodRemoved => DecodedStep::new(Actor::Kubelet, format!("removes {pod} from {node}"), None),
        Event::PodLostWithNode => DecodedStep::new(Actor::Node, format!("{pod} is lost with {node}"), None),
        _ => DecodedStep::new(Actor::Model, format!("unknown trace event {}", at(0)), None),
    }
}

//! The taint eviction controller's step (taint_eviction.pml beside this file): a pod evicted
//! from a node whose NoExecute taint it does not tolerate, located at its pod spec.

use super::*;

pub(super) fn tell(_: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (pod, node) = (s.namer.pod(at(1)), s.namer.node(at(2)));
    DecodedStep::new(
        Actor::TaintEvictionController,
        format!("evicts {pod} from {node}: it does not tolerate the node's NoExecute taint"),
        s.namer
            .owner(at(1))
            .and_then(|(_, o)| s.objects[o].workload().map(|w| w.template.spec.span)),
    )
}

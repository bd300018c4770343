//! The steps on nodes: the kubelet's (templates/controllers/kubelet.pml), the taint eviction
//! controller's (taint_eviction.pml), a pod lost with its node (src/events/node_down.pml), the
//! informers' late deliveries (informer.pml) and the volume provisioner's zones (main.pml,
//! scheduler.pml).

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (pod, node) = (s.namer.pod(at(1)), s.namer.node(at(2)));
    match event {
        Event::PodStarted => DecodedStep::new(Actor::Kubelet, format!("starts {pod} on {node}"), None),
        Event::PodRemoved => DecodedStep::new(Actor::Kubelet, format!("removes {pod} from {node}"), None),
        Event::PodLostWithNode => DecodedStep::new(Actor::Node, format!("{pod} is lost with {node}"), None),
        Event::TaintEvicted => DecodedStep::new(
            Actor::TaintEvictionController,
            format!("evicts {pod} from {node}: it does not tolerate the node's NoExecute taint"),
            s.namer
                .owner(at(1))
                .and_then(|(_, o)| s.objects[o].workload().map(|w| w.template.spec.span)),
        ),
        Event::InformerCaughtUp => DecodedStep::new(
            Actor::Informer,
            format!(
                "delivers the deletion of {} from {node}: the scheduler and the descheduler see it gone",
                s.namer.undelivered.get(&at(1)).cloned().unwrap_or(pod)
            ),
            s.names.stale_reads,
        ),
        Event::StaleDeletion => DecodedStep::new(
            Actor::Informer,
            format!(
                "has not delivered the deletion of {pod} yet: to the scheduler and the descheduler it still runs on {node} (stale-reads)"
            ),
            s.names.stale_reads,
        ),
        Event::VolumeProvisioned | Event::VolumeProvisionedWithPod => {
            let zone =
                s.ir.volumes
                    .as_ref()
                    .and_then(|v| v.zones.get((at(2) - 1).max(0) as usize))
                    .cloned()
                    .unwrap_or_else(|| format!("zone #{}", at(2)));
            let when = if event == Event::VolumeProvisioned {
                "before the pod is scheduled (volumeBindingMode: Immediate)"
            } else {
                "where it was bound (volumeBindingMode: WaitForFirstConsumer): its pods can run in no other zone"
            };
            DecodedStep::new(
                Actor::VolumeProvisioner,
                format!("provisions the volume of {pod}'s claim in {zone}, {when}"),
                s.namer
                    .owner(at(1))
                    .and_then(|(w, _)| s.names.volume_spans.get(w).copied().flatten()),
            )
        }
        _ => DecodedStep::new(Actor::Model, format!("unknown trace event {}", at(0)), None),
    }
}

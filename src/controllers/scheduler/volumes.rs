//! Volume topology (pkg/scheduler/framework/plugins/volumebinding and the PersistentVolume
//! controller's provisioning): the zone each claim's volume is in, and the nodes its pods can
//! use because of it. Model side in controllers/scheduler.pml (the filter and the binding of
//! a WaitForFirstConsumer claim) and main.pml (an Immediate claim's zone, picked at the start).

use serde::Serialize;

use crate::manifest::Object;
use crate::manifest::selector::Labels;
use crate::source::Span;
use crate::units::storage::pod_volumes;

/// Zone indices fit one bit mask of the model's `int`.
const MAX_ZONES: usize = 30;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrVolumes {
    /// Zone names: the nodes' zones (in node order), then zones only a volume names.
    pub zones: Vec<String>,
    /// Per node (0-based): its zone's index in `zones`, 1-based; 0 for a node without a zone.
    pub node_zone: Vec<u32>,
    /// Per workload (0-based): where its claims' volumes let its pods run.
    pub workloads: Vec<Option<IrVolume>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrVolume {
    /// Each pod its own claim (a StatefulSet's claim templates), else one claim for all.
    pub per_pod: bool,
    /// Bound already, or provisioned when the claim is created: never bound by the scheduler.
    pub fixed: bool,
    /// The nodes (bit n for the 1-based node n) a claim not yet bound may be bound for.
    pub nodes: u32,
    /// `Immediate`: the zones (bit z, 1-based in `zones`) the provisioner may pick.
    pub choices: u32,
}

/// The zone label of a node.
fn zone_of(labels: &Labels) -> Option<&str> {
    labels
        .get("topology.kubernetes.io/zone")
        .or_else(|| labels.get("failure-domain.beta.kubernetes.io/zone"))
        .map(String::as_str)
}

/// The volumes of the unit's workloads on a topology's nodes (name, labels); `None` when no
/// workload has a volume that ties it to zones. Also each workload's field that decides it.
pub(super) fn build(
    objects: &[Object],
    workload_objects: &[usize],
    node_labels: &[Labels],
) -> Option<(IrVolumes, Vec<Option<Span>>)> {
    let found: Vec<_> = workload_objects
        .iter()
        .map(|&w| pod_volumes(objects, w).zones)
        .collect();
    if found.iter().all(Option::is_none) {
        return None;
    }
    let mut zones: Vec<String> = Vec::new();
    let index = |zones: &mut Vec<String>, name: &str| -> Option<u32> {
        if let Some(i) = zones.iter().position(|z| z == name) {
            return Some(i as u32 + 1);
        }
        (zones.len() < MAX_ZONES).then(|| {
            zones.push(name.to_string());
            zones.len() as u32
        })
    };
    let node_zone: Vec<u32> = node_labels
        .iter()
        .map(|labels| zone_of(labels).and_then(|z| index(&mut zones, z)).unwrap_or(0))
        .collect();
    let node_zones = zones.len();
    let mut spans = Vec::new();
    let workloads = found
        .into_iter()
        .map(|restriction| {
            let Some(r) = restriction else {
                spans.push(None);
                return None;
            };
            spans.push(Some(r.span));
            // The zones it may be in: the allowed ones (a volume may be made in a zone with
            // no node), else every zone of the cluster.
            let allowed: Vec<u32> = if r.zones.is_empty() {
                (1..=node_zones as u32).collect()
            } else {
                r.zones.iter().filter_map(|z| index(&mut zones, z)).collect()
            };
            let nodes = node_zone
                .iter()
                .enumerate()
                .filter(|(_, z)| r.zones.is_empty() || allowed.contains(z))
                .fold(0u32, |mask, (n, _)| mask | (1 << (n + 1)));
            let choices = if r.immediate && !r.bound {
                allowed.iter().fold(0u32, |mask, z| mask | (1 << z))
            } else {
                0
            };
            Some(IrVolume {
                per_pod: r.per_pod,
                fixed: r.bound || r.immediate,
                nodes,
                choices,
            })
        })
        .collect();
    Some((
        IrVolumes {
            zones,
            node_zone,
            workloads,
        },
        spans,
    ))
}

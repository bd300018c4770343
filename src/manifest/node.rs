//! Nodes (for cluster snapshots) and namespaces.

use serde::Serialize;

use crate::manifest::read::Reader;
use crate::manifest::selector::Labels;
use crate::manifest::taint::Taint;
use crate::source::Span;
use crate::yaml::Node;

/// The well-known node labels (kubernetes.io/docs/reference/labels-annotations-taints).
pub const HOSTNAME_KEY: &str = "kubernetes.io/hostname";
pub const ZONE_KEY: &str = "topology.kubernetes.io/zone";

/// Allocatable or capacity of a node: millicores, bytes, pod slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResources {
    pub cpu_millis: i64,
    pub memory_bytes: i64,
    pub pods: i64,
}

impl NodeResources {
    pub fn read(r: &mut Reader, node: &Node) -> NodeResources {
        NodeResources {
            cpu_millis: r.quantity(node, "cpu", true).map_or(0, |v| v.value),
            memory_bytes: r.quantity(node, "memory", false).map_or(0, |v| v.value),
            pods: r.quantity(node, "pods", false).map_or(110, |v| v.value),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeObject {
    pub labels: Labels,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    pub allocatable: NodeResources,
    /// Ephemeral storage, hugepages and extended resources.
    pub scalar_allocatable: std::collections::BTreeMap<String, i64>,
    #[serde(skip)]
    pub span: Span,
}

impl NodeObject {
    pub fn read(r: &mut Reader, node: &Node, labels: Labels) -> NodeObject {
        let spec = r.map(node, "spec");
        let status = r.map(node, "status");
        let taints = spec
            .map(|s| {
                r.maps(s, "taints")
                    .into_iter()
                    .filter_map(|t| Taint::read(r, t))
                    .collect()
            })
            .unwrap_or_default();
        let unschedulable = spec.and_then(|s| r.bool(s, "unschedulable")).is_some_and(|b| b.value);
        // Allocatable is what the scheduler uses; fall back to capacity.
        let allocatable_node = status.and_then(|s| r.map(s, "allocatable").or_else(|| r.map(s, "capacity")));
        let scalar_allocatable = allocatable_node
            .map(|a| {
                crate::manifest::pod::read_scalar_resources(r, a)
                    .into_iter()
                    .map(|(k, v)| (k, v.value))
                    .collect()
            })
            .unwrap_or_default();
        let allocatable = allocatable_node.map(|a| NodeResources::read(r, a));
        let Some(allocatable) = allocatable else {
            r.error(node.span, "Node has no `status.allocatable` or `status.capacity`");
            return NodeObject {
                labels,
                taints,
                unschedulable,
                allocatable: NodeResources::default(),
                scalar_allocatable,
                span: node.span,
            };
        };
        NodeObject {
            labels,
            taints,
            unschedulable,
            allocatable,
            scalar_allocatable,
            span: node.span,
        }
    }
}

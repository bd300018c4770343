//! The cluster of one topology: its nodes in order, their pools, zones and spread domains.

use super::*;

/// One cluster size the model checks: how many nodes of each pool, and how many replicas each
/// workload of the unit starts with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct Topology {
    pub nodes_per_pool: Vec<u32>,
    /// Per workload of the unit, in unit order; `None`: as its manifest says.
    pub replicas: Vec<Option<u32>>,
}

impl Topology {
    /// The cluster as it is today (each pool's `count`), replicas as the manifests say.
    pub fn current(config: &Config) -> Topology {
        Topology {
            nodes_per_pool: config.cluster.pools.iter().map(|p| p.count).collect(),
            replicas: Vec::new(),
        }
    }

    pub fn nodes(&self) -> u32 {
        self.nodes_per_pool.iter().sum()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrNode {
    /// Millicores and MiB the modelled pods can use (allocatable − reserved).
    pub cpu: i64,
    pub mem: i64,
    /// Pods the node holds (allocatable pods).
    pub pods: i64,
    /// The node's real allocatable pods (the descheduler's pods percentages use it).
    pub pods_allocatable: i64,
    /// `cluster-autoscaler`: the node's pool (1-based in [`IrClusterAutoscaler::pools`]), 0
    /// when the autoscaler does not scale it.
    pub scaling_pool: u32,
    /// A slot the cluster autoscaler may fill: the node does not exist at the start.
    pub absent: bool,
    /// Index of the node's zone among its pool's `zones` (0 when the pool spans none).
    pub zone: u32,
    /// Cordoned at the start (the pool's `unschedulable`).
    pub cordoned: bool,
    /// Allocatable of each of the unit's scalar resources ([`Ir::scalar_resources`]), in
    /// that resource's unit (rounded down).
    pub scalars: Vec<i64>,
}

/// The `cluster-autoscaler` event (cluster-autoscaler/core: scale-up for unschedulable pods,
/// scale-down of unneeded nodes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrClusterAutoscaler {
    pub pools: Vec<IrScalingPool>,
    /// A node whose pods request less than this percent of its cpu and memory is unneeded.
    pub scale_down_utilization: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrScalingPool {
    pub min: u32,
    /// Most nodes, capped by `scaling.maxNodes`.
    pub max: u32,
    /// Zones the pool spans (1 when it spans none or one).
    pub zones: u32,
    /// Nodes at the start.
    pub count: u32,
}

/// One node of a topology, or a slot the cluster autoscaler may fill.
#[derive(Clone, Debug)]
pub struct NodeSlot<'a> {
    pub pool: &'a NodePool,
    /// 1-based within the pool: names the node.
    pub index: u32,
    /// Index into `pool.zones`, when the pool spans zones.
    pub zone: Option<usize>,
    /// 1-based scaled pool, 0 when the autoscaler does not scale the pool.
    pub scaling_pool: u32,
    /// Not there at the start: the autoscaler may add it.
    pub absent: bool,
}

impl NodeSlot<'_> {
    pub fn zone_name(&self) -> Option<String> {
        match self.zone {
            Some(z) => self.pool.zones.get(z).cloned(),
            None => self.pool.labels.get(ZONE_KEY).cloned(),
        }
    }
}

/// The nodes of `topology`, pool by pool (`<pool>-1`, `<pool>-2`, ...), then, with the
/// `cluster-autoscaler` event, the slots of each scaled pool up to its `max` (capped by
/// `scaling.maxNodes`): a pool that spans zones gets that many in each zone, since the cloud,
/// not the autoscaler, picks the zone of a new node. Also the scaled pools.
pub fn cluster_nodes<'a>(
    config: &'a Config,
    topology: &Topology,
) -> (Vec<NodeSlot<'a>>, Vec<(&'a NodePool, IrScalingPool)>) {
    let autoscaler = config
        .events
        .iter()
        .find(|e| matches!(e.value, EnvironmentEvent::ClusterAutoscaler { .. }));
    let mut slots = Vec::new();
    let mut scaling_pools = Vec::new();
    let mut growth = Vec::new();
    for (pool, &count) in config.cluster.pools.iter().zip(&topology.nodes_per_pool) {
        let scaling_pool = if autoscaler.is_some_and(|e| e.value.autoscales(pool)) {
            let max = pool.max.min(config.scaling.max_nodes).max(count);
            scaling_pools.push((
                pool,
                IrScalingPool {
                    min: pool.min.min(count),
                    max,
                    zones: pool.zones.len().max(1) as u32,
                    count,
                },
            ));
            growth.push((pool, scaling_pools.len() as u32, count, max - count));
            scaling_pools.len() as u32
        } else {
            0
        };
        for index in 1..=count {
            slots.push(NodeSlot {
                pool,
                index,
                zone: pool.zone_of(index),
                scaling_pool,
                absent: false,
            });
        }
    }
    for (pool, scaling_pool, count, extra) in growth {
        let zones: Vec<Option<usize>> = if pool.zones.is_empty() {
            vec![None]
        } else {
            (0..pool.zones.len()).map(Some).collect()
        };
        let mut index = count;
        for zone in zones {
            for _ in 0..extra {
                index += 1;
                slots.push(NodeSlot {
                    pool,
                    index,
                    zone,
                    scaling_pool,
                    absent: true,
                });
            }
        }
    }
    (slots, scaling_pools)
}

pub(super) fn topology_size(topology: &Topology) -> u32 {
    topology.nodes_per_pool.iter().sum()
}

pub(super) fn bitmask(nodes: impl Iterator<Item = bool>) -> u32 {
    nodes
        .enumerate()
        .fold(0, |m, (i, yes)| if yes { m | (1 << (i + 1)) } else { m })
}

/// Domains of the nodes under a topology key: 1-based ids of the distinct values, 0 for a node
/// without the key.
pub(super) fn domains_of(key: &str, nodes: &[(String, Labels, &NodePool)]) -> (Vec<u32>, u32) {
    let mut values: Vec<&str> = Vec::new();
    let domains = std::iter::once(0)
        .chain(nodes.iter().map(|(_, labels, _)| match labels.get(key) {
            None => 0,
            Some(v) => {
                let index = values.iter().position(|x| *x == v.as_str()).unwrap_or_else(|| {
                    values.push(v);
                    values.len() - 1
                });
                index as u32 + 1
            }
        }))
        .collect();
    (domains, values.len() as u32)
}

//! What a report says of the topologies a unit's verdicts name (their description and their
//! nodes) and of the configured events the model could not explore, worked out here, where
//! the search's inputs are known: the report projects them and reaches back into no stage.

use super::*;
use crate::model::Topology;
use crate::search::Subject;

/// A topology as reports tell it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyFacts {
    /// `3 nodes (zone-a 2, zone-b 1), web from 5 replicas`.
    pub description: String,
    /// Every node, pool by pool (for timelines of cluster states).
    pub nodes: Vec<NodeFact>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeFact {
    pub name: String,
    pub pool: String,
    pub zone: Option<String>,
    /// A node the cluster autoscaler may add: not there at the start.
    pub absent: bool,
}

/// The facts of every topology `result` names (its checks' topologies and where they held, the
/// largest topology verified) and the events not explored, filled in.
pub fn describe(subject: Subject<'_>, result: &mut UnitResult) {
    let mut named: Vec<Topology> = Vec::new();
    let checks = result
        .results
        .iter()
        .flat_map(|c| [c.topology.as_ref(), c.held_up_to.as_ref()]);
    for t in checks.chain([result.search.verified_up_to.as_ref()]).flatten() {
        if !named.contains(t) {
            named.push(t.clone());
        }
    }
    result.topologies = named
        .into_iter()
        .map(|t| {
            let facts = topology_facts(subject, result.unit, &t);
            (t, facts)
        })
        .collect();
    result.unmodelled_events = crate::search::unmodelled_events(subject.config, subject.environment);
}

/// What reports say of topology `t` of unit `unit`: its description and its nodes.
pub fn topology_facts(subject: Subject<'_>, unit: usize, t: &Topology) -> TopologyFacts {
    TopologyFacts {
        description: crate::search::describe(subject, unit, t),
        nodes: crate::model::ir::cluster_nodes(subject.config, t)
            .0
            .iter()
            .map(|slot| NodeFact {
                name: slot.pool.node_name(slot.index),
                pool: slot.pool.name.clone(),
                zone: slot.zone_name(),
                absent: slot.absent,
            })
            .collect(),
    }
}

impl UnitResult {
    /// What reports say of `topology`, one the result names ([`describe`]).
    pub fn facts(&self, topology: &Topology) -> TopologyFacts {
        self.topologies
            .iter()
            .find(|(t, _)| t == topology)
            .map(|(_, f)| f.clone())
            .unwrap_or_default()
    }
}

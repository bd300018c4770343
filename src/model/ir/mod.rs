//! The intermediate representation of one unit at one topology: integers only.
//!
//! Everything that does not change while the model runs is evaluated here, in Rust, against
//! the manifests: label selectors, node affinity, taints, spread domains, score tables. The
//! PROMELA model receives indices, amounts and bitmasks; no name, label or value from a manifest
//! reaches it as text. `Names` keeps the way back, for counterexamples.
//!
//! `build` assembles the IR; `topology` (nodes, pools, domains) is beside it, and each
//! controller's part is in the controller's folder (src/controllers/): `scheduling`
//! (per-template filters, scores, spread and affinity) and `volumes` (the scheduler's),
//! `workloads` (replicas, rollouts, disruption budgets), `autoscaling` (HPAs) and
//! `descheduler` (its plugins' verdicts). The parts share this module's imports.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::checks::CheckId;
use crate::config::{Config, EnvironmentEvent, NodePool};
use crate::manifest::autoscaling::{Metric, MetricSource, MetricTarget};
use crate::manifest::pod::{InclusionPolicy, PodSpec, WhenUnsatisfiable};
use crate::manifest::scheduler_config::{SchedulerProfile, ScoringStrategy, ShapePoint};
use crate::manifest::selector::{LabelSelector, Labels, selects};
use crate::manifest::taint::{
    TaintEffect, Toleration, UNREACHABLE_TAINT, UNSCHEDULABLE_TAINT, tolerates_for_scheduling,
};
use crate::manifest::{Body, Object, WorkloadKind};
use crate::source::Span;
use crate::units::{Role, Unit};

// A controller's part of the IR lives in its folder (src/controllers/<controller>/, beside
// its templates and its decoder) and is a module of this one.
#[path = "../../controllers/autoscaler/ir.rs"]
mod autoscaling;
mod build;
#[path = "../../controllers/descheduler/ir.rs"]
mod descheduler;
#[path = "../../controllers/scheduler/ir.rs"]
mod scheduling;
mod topology;
#[path = "../../controllers/scheduler/volumes.rs"]
mod volumes;
#[path = "../../controllers/workloads/ir.rs"]
mod workloads;

pub use volumes::{IrVolume, IrVolumes};

pub use autoscaling::*;
pub use build::build;
pub use descheduler::*;
pub use scheduling::*;
pub use topology::*;
pub use workloads::*;

/// Most nodes one model holds: node sets are bitmasks in a 32-bit int (bit 0 unused).
pub const MAX_NODES: usize = 30;

/// Most pod slots one model holds (bytes index them).
pub const MAX_PODS: usize = 254;
pub use crate::manifest::autoscaling::MAX_AUTOSCALER_REPLICAS;
pub use crate::manifest::node::{HOSTNAME_KEY, ZONE_KEY};

/// The label the Deployment controller puts on the pods of each ReplicaSet.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

const MIB: i64 = 1024 * 1024;

/// Most scalar resources (ephemeral storage, hugepages, extended) one unit's pods request.
pub const MAX_SCALAR_RESOURCES: usize = 4;

/// The unit of a scalar resource in the model: the largest power of two that divides every
/// quantity, but large enough that the largest fits PROMELA's 32-bit `int` with room to sum.
/// Requests then round up and allocatable down: a pod can only fit less.
fn scalar_unit(values: impl Iterator<Item = i64>) -> i64 {
    power_of_two_unit(values, 1 << 40, 1 << 24)
}

/// Bytes per unit of memory in the model. MiB where every quantity is whole MiB. Otherwise
/// the largest power of two that divides them all, so that small or odd quantities stay
/// exact. But never so small that a node's memory times 1000 (the scoring's arithmetic)
/// overflows the model's 32-bit int; then requests round up and allocatable down, which can
/// only make a pod fit less (a Pending pod reported, not one missed).
fn memory_unit(values: impl Iterator<Item = i64>) -> i64 {
    power_of_two_unit(values, MIB, 1 << 21)
}

/// The largest power of two up to `start` that divides every value, doubled while the largest
/// value would exceed `most` units.
fn power_of_two_unit(values: impl Iterator<Item = i64>, start: i64, most: i64) -> i64 {
    let values: Vec<i64> = values.filter(|v| *v > 0).collect();
    let mut unit = start;
    while unit > 1 && values.iter().any(|v| v % unit != 0) {
        unit /= 2;
    }
    let largest = values.iter().copied().max().unwrap_or(0);
    while largest / unit > most {
        unit *= 2;
    }
    unit
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ir {
    /// Bytes per unit of memory (`memory_unit`); node and template memory are in these units.
    pub memory_unit: i64,
    /// How many scalar resources (ephemeral storage, hugepages, extended) the model accounts.
    pub scalar_resources: usize,
    /// The workloads that roll out (1-based), those whose pods have hard spread constraints or
    /// required pod (anti-)affinity first: their rollouts are the likelier to get stuck, and
    /// the depth-first search then meets them first. The order changes no verdict.
    pub rollout_order: Vec<usize>,
    pub nodes: Vec<IrNode>,
    /// 1-based in the model; index 0 is a placeholder.
    pub templates: Vec<IrTemplate>,
    pub workloads: Vec<IrWorkload>,
    pub pod_slots: usize,
    pub scoring: Scoring,
    pub load_change: bool,
    /// Kivi's maintenance: nodes go down one at a time and come back.
    pub node_maintenance: bool,
    pub descheduler: Option<IrDescheduler>,
    /// `gitops-sync`: an agent re-applies the manifests whenever the live state drifts.
    pub gitops_sync: bool,
    /// `node-overload`: a node whose pods use more than this percent of its cpu crashes and
    /// restarts; 0 when the event is not configured.
    pub overload_threshold: i64,
    /// The checks this model monitors.
    pub checks: Vec<CheckId>,
    /// A conformance probe the model prints for `tests/conformance` (`scheduler`,
    /// `descheduler`): set by the harness, never by a scan.
    pub probe: Option<&'static str>,
    /// `min-replicas-available`: the bound per workload (index 0 unused), 0 for none.
    pub min_available: Vec<i64>,
    /// The bound is the default one (not a `min` param): pods the environment takes away with
    /// their node make the check wait until the bound is reached again.
    pub min_resettable: bool,
    pub disruption_budgets: Vec<IrDisruptionBudget>,
    pub node_failure: Option<IrNodeFailure>,
    pub node_drain: bool,
    /// The `apply` event: the cluster runs the old revision until the new one is applied.
    pub apply: Option<IrApply>,
    /// Every check's params with a value (the config's, else the default), by check and name:
    /// the templates read them as `ir.params["<check>"].<param>`.
    pub params: BTreeMap<CheckId, BTreeMap<&'static str, i64>>,
    pub cluster_autoscaler: Option<IrClusterAutoscaler>,
    /// `faults: [stale-reads]`: deletions the scheduler's and descheduler's informers may lag
    /// behind by; 0 when their views are fresh.
    pub stale_reads: i64,
    /// `faults: [controller-lag]`: the kubelet does not wait for the scheduler and the workload
    /// controllers to have no work.
    pub controller_lag: bool,
    /// Interchangeable pods are kept in one order (`scaling.symmetry`, on by default).
    pub symmetry: bool,
    /// The zones the workloads' volumes tie their pods to, when some do.
    pub volumes: Option<IrVolumes>,
    /// The events the config lists that the registry reads (`events::Configured::WithParams`),
    /// with their params: the templates read them as `ir.events["<name>"].<param>`.
    pub events: crate::events::EventParams,
}

/// Where model indices come from, to turn a counterexample back into Kubernetes terms.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// The most replicas the model lets an HPA reach, when its `maxReplicas` was lowered so
    /// that the unit fits the model's pod slots on this topology (the search says so).
    pub replica_cap: Option<i64>,
    pub nodes: Vec<String>,
    /// Per node (0-based): its zone, when its pool spans zones.
    pub node_zones: Vec<Option<String>>,
    /// `cluster-autoscaler` pools (0-based): name and where the config defines the pool.
    pub scaling_pools: Vec<(String, Span)>,
    /// Where the config sets `faults: [stale-reads]`.
    pub stale_reads: Option<Span>,
    /// Workload index (1-based in the model) → object index.
    pub workloads: Vec<usize>,
    /// Per template (0-based): its hard spread constraints as (index in the manifest's
    /// `topologySpreadConstraints`, span of `maxSkew`).
    pub hard_constraints: Vec<Vec<(usize, Span)>>,
    /// Per template (0-based): its affinity terms described, with the span of their
    /// `topologyKey`.
    pub affinity_terms: Vec<Vec<(String, Span)>>,
    /// Per template (0-based): the nodes (model bits) the scheduler profile's `addedAffinity`
    /// alone keeps its pods off, and where the profile sets it.
    pub added_affinity: Vec<(u32, Option<Span>)>,
    /// The scalar resources of the model, in its order (`scalars` of nodes and templates).
    pub scalar_resources: Vec<String>,
    /// Disruption budget index (0-based) → object index.
    pub disruption_budgets: Vec<usize>,
    /// Descheduler plugin id (the model's, 1-based) → where the policy enables it.
    pub descheduler_plugins: Vec<Option<Span>>,
    /// Per workload (0-based): the field that decides where its volumes let it run.
    pub volume_spans: Vec<Option<Span>>,
}

impl Ir {
    /// The workload (0-based) whose pods a slot holds.
    pub fn slot_owner(&self, slot: i64) -> Option<usize> {
        let slot = usize::try_from(slot).ok()?;
        self.workloads
            .iter()
            .position(|w| (w.first_slot..w.first_slot + w.slots).contains(&slot))
    }
}

impl IrError {
    /// The unit exceeds a bound of the model (rather than having no model at all).
    pub fn is_bound(&self) -> bool {
        !matches!(self, IrError::NoNodes)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IrError {
    #[error("the unit needs {0} nodes, more than the {MAX_NODES} one model holds")]
    TooManyNodes(usize),
    #[error("the unit needs {0} pod slots, more than the {MAX_PODS} one model holds")]
    TooManyPods(usize),
    #[error("the topology has no node")]
    NoNodes,
    #[error(
        "the unit's pods request {0} scalar resources (ephemeral storage, hugepages, extended), more than the {MAX_SCALAR_RESOURCES} one model holds"
    )]
    TooManyResources(usize),
}

#[cfg(test)]
mod tests;

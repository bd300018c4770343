//! The intermediate representation of one unit at one topology: integers only.
//!
//! Everything that does not change while the model runs is evaluated here, in Rust, against
//! the manifests: label selectors, node affinity, taints, spread domains, score tables. The
//! PROMELA model receives indices, amounts and bitmasks; no name, label or value from a manifest
//! reaches it as text. `Names` keeps the way back, for counterexamples.

use serde::Serialize;

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

/// Most nodes one model holds: node sets are bitmasks in a 32-bit int (bit 0 unused).
pub const MAX_NODES: usize = 30;
/// Most pod slots one model holds (bytes index them).
pub const MAX_PODS: usize = 254;
pub use crate::manifest::autoscaling::MAX_AUTOSCALER_REPLICAS;
pub use crate::manifest::node::{HOSTNAME_KEY, ZONE_KEY};
/// The label the Deployment controller puts on the pods of each ReplicaSet.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
const MIB: i64 = 1024 * 1024;

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

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrConstraint {
    pub max_skew: i64,
    pub min_domains: i64,
    /// Domain of each node (1-based, index 0 unused); 0 = the node lacks the key.
    pub domains: Vec<u32>,
    pub domain_count: u32,
    /// Nodes counted under the inclusion policies, as a bitmask (bit n = node n).
    pub included: u32,
    /// The nodes the inclusion policies alone admit (the scheduler also leaves out nodes that
    /// lack another hard constraint's key; the descheduler does not).
    pub policy_nodes: u32,
    /// Which templates' pods the selector counts (index 0 unused).
    pub counts_template: Vec<bool>,
    /// Whether the incoming pod itself matches the selector.
    pub self_match: bool,
    /// The key is `kubernetes.io/hostname`: the soft score's normalising weight counts the
    /// candidate nodes rather than their domains.
    pub hostname: bool,
    /// `matchLabelKeys` has `pod-template-hash`: only pods of the incoming pod's own revision
    /// count (KEP-3243, the fix for spread lost during rolling updates).
    pub same_revision: bool,
    /// `nodeTaintsPolicy: Honor`: nodes that gain a taint the pod does not tolerate while the
    /// model runs (a failed node's unreachable taint, a cordoned node's) stop counting.
    pub honor_taints: bool,
}

/// A required inter-pod (anti-)affinity term as the scheduler's InterPodAffinity filter uses it
/// for one incoming template.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrAffinityTerm {
    /// Anti-affinity (the incoming pod's own, or an existing pod's against it); else affinity.
    pub anti: bool,
    /// Domain of each node under the term's topologyKey (index 0 unused); 0 = lacks the key.
    pub domains: Vec<u32>,
    pub domain_count: u32,
    /// Templates whose pods the term is about (bit t).
    pub counts: u32,
    /// Affinity only: the incoming pod matches its own term (then the first pod may go anywhere).
    pub self_match: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrTemplate {
    pub workload: usize,
    /// Requests in millicores and MiB (rounded up).
    pub cpu: i64,
    pub mem: i64,
    /// Requests of the unit's scalar resources ([`Ir::scalar_resources`]), each in its unit
    /// (rounded up).
    pub scalars: Vec<i64>,
    /// The request NodeResourcesFit scores with (missing requests count 100m and 200 MiB).
    pub score_cpu: i64,
    pub score_mem: i64,
    /// Nodes that pass NodeName, nodeSelector, required node affinity and NoSchedule/NoExecute
    /// taints: the filters that only read static node properties.
    pub static_nodes: u32,
    /// Preferred node affinity raw score per node (index 0 unused).
    pub affinity_raw: Vec<i64>,
    /// Untolerated PreferNoSchedule taints per node (index 0 unused).
    pub taint_raw: Vec<i64>,
    /// Nodes with a NoExecute taint the pod does not tolerate: the taint eviction controller
    /// evicts it from them.
    pub no_execute: u32,
    /// `spec.nodeName`: 1-based node index; 0 when not set; 255 when it names no node of the
    /// topology (the pod then waits forever).
    pub node_name: u32,
    pub hard: Vec<IrConstraint>,
    pub soft: Vec<IrConstraint>,
    /// Required inter-pod affinity and anti-affinity terms that filter nodes for this pod.
    pub affinity_terms: Vec<IrAffinityTerm>,
    /// The pod has spread constraints of its own (not the system defaults): nodes lacking a
    /// soft constraint's key are then ignored by the score.
    pub require_all: bool,
    /// The pod tolerates `node.kubernetes.io/unschedulable:NoSchedule` (DaemonSet pods do), so
    /// NodeUnschedulable lets it onto a cordoned node.
    pub tolerates_cordon: bool,
    /// The taint eviction controller deletes the pod from a failed node (it has no toleration
    /// of `node.kubernetes.io/unreachable:NoExecute` without tolerationSeconds).
    pub failure_eviction: bool,
    /// A DaemonSet's pod: `kubectl drain --ignore-daemonsets` leaves it.
    pub daemon: bool,
}

/// A PodDisruptionBudget as the Eviction API applies it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrDisruptionBudget {
    /// The unit's workloads whose pods it selects (bit w, 1-based).
    pub workloads: u32,
    /// `maxUnavailable` (else `minAvailable`).
    pub max_unavailable: bool,
    /// A count, or a percentage negated.
    pub value: i64,
    /// `unhealthyPodEvictionPolicy: AlwaysAllow`.
    pub always_allow: bool,
}

/// The `apply` event: what applying the new revision over the old one changes, per workload
/// (1-based; index 0 unused).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrApply {
    /// spec.replicas after the apply; -1 leaves the live value (neither revision writes it).
    pub replicas: Vec<i64>,
    /// The pod template differs: the apply starts a rollout.
    pub template_changed: Vec<bool>,
}

/// The `node-failure` event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrNodeFailure {
    /// Most nodes that fail, each once.
    pub count: u32,
    pub recover: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrAutoscaler {
    pub min: i64,
    pub max: i64,
    /// Target CPU utilisation, percent of the request; 100 when it has no cpu metric (the
    /// load level is then a percent of its custom metrics' targets).
    pub target: i64,
    /// The metrics it scales on, by how upstream turns them into replicas.
    pub metrics: IrMetrics,
    /// A scale-down needs the lower recommendation to hold over a window (300 s unless
    /// `behavior.scaleDown.stabilizationWindowSeconds` is 0).
    pub stabilize_down: bool,
    /// A scale-up needs the higher recommendation to hold (`behavior.scaleUp` window > 0).
    pub stabilize_up: bool,
    /// `spec.behavior` is set: the scaling policies bound a decision in its direction only
    /// (convertDesiredReplicasWithBehaviorRate).
    pub behavior: bool,
    /// Most replicas one decision may reach from `current` replicas (index `current`,
    /// 0..=max): `max(2 × current, 4)` without a behavior, else the scale-up policies.
    pub up_limit: Vec<i64>,
    /// Fewest replicas one decision may reach from `current`: 0 without a behavior, else the
    /// scale-down policies.
    pub down_limit: Vec<i64>,
}

/// An autoscaler's metrics by kind of arithmetic (replica_calculator.go): the model's load
/// level moves them all by the same ratio to their targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IrMetrics {
    /// A cpu Resource metric (GetResourceReplicas).
    pub cpu: bool,
    /// A Pods metric: a per-pod average (GetMetricReplicas).
    pub pods: bool,
    /// An Object or External metric with a `Value` target (GetObjectMetricReplicas,
    /// GetExternalMetricReplicas).
    pub value: bool,
    /// An Object or External metric with an `AverageValue` target (the per-pod variants).
    pub average_value: bool,
    /// A memory (any non-cpu) Resource or ContainerResource metric with a `Utilization`
    /// target: that target, percent of the request (0: none). GetResourceReplicas, without
    /// the cpu-only readiness rules.
    pub memory: i64,
}

impl IrMetrics {
    /// The bits of the model's `hpa_metrics` table (templates/controllers/autoscaler.pml).
    pub fn bits(self) -> i64 {
        i64::from(self.cpu)
            | i64::from(self.pods) << 1
            | i64::from(self.value) << 2
            | i64::from(self.average_value) << 3
            | i64::from(self.memory > 0) << 4
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrWorkload {
    pub template: usize,
    /// Replicas the controller aims for at the start (spec.replicas, raised to the HPA minimum).
    pub replicas: i64,
    pub autoscaler: Option<IrAutoscaler>,
    /// Pod slots `first_slot .. first_slot + slots` belong to this workload.
    pub first_slot: usize,
    pub slots: usize,
    /// Usage levels a load change may move the pods to, percent of the request; `level` 1 is
    /// the steady usage (levels are 1-based in the model).
    pub load_levels: Vec<i64>,
    pub steady_level: usize,
    /// The pods that share the load: a level is the per-pod usage when this many run.
    pub load_base: i64,
    /// `spec.replicas` as the manifest writes it (a GitOps sync or an apply sets it back);
    /// -1 when the manifest leaves it out.
    pub manifest_replicas: i64,
    /// Usage of a pod right after it starts (`workloads.<id>.startup`), percent of the
    /// request; 0 when there is no startup phase.
    pub startup_level: i64,
    /// The pods are not ready during their startup phase (a readiness probe's initial delay
    /// covers it), so the HPA leaves their startup usage out.
    pub startup_unready: bool,
    /// How the workload replaces its pods when a new template is applied; `None` when it
    /// cannot be rolled out (not a Deployment).
    pub rollout: Option<IrRollout>,
    /// A bare Pod: no controller replaces it once it is gone.
    pub bare: bool,
    /// Pods running when the model starts (config `cluster.initialPods`): (1-based node, count).
    pub initial: Vec<(usize, i64)>,
    /// The initial pods are terminating instead: a bare Pod with `deletionTimestamp` on the
    /// node its `nodeName` names (a snapshot taken while it was being deleted).
    pub terminating: bool,
    /// DaemonSets: the node (1-based) each slot's pod belongs to. The DaemonSet controller
    /// pins each pod to its node with a required node affinity on `metadata.name`
    /// (pkg/controller/daemon/util.ReplaceDaemonSetPodNodeNameNodeAffinity), so the scheduler
    /// still checks resources there but never places the pod elsewhere.
    pub pinned: Vec<u32>,
    /// StatefulSets: 1 OrderedReady, 2 Parallel (pod management policy); 0 otherwise.
    pub stateful: i64,
}

impl IrWorkload {
    /// Its pods differ only in their state: one template, no ordinal (StatefulSet), no node of
    /// their own (DaemonSet), more than one of them. The model keeps them in a canonical order
    /// (symmetry reduction, `templates/main.pml`).
    pub fn interchangeable_pods(&self) -> bool {
        self.slots > 1 && self.stateful == 0 && self.pinned.is_empty() && !self.bare
    }
}

/// A Deployment's update strategy, resolved as `deployment_util.go ResolveFenceposts` does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrRollout {
    pub recreate: bool,
    /// A StatefulSet's RollingUpdate: pods at or above this ordinal are updated, one at a time,
    /// highest first.
    pub partition: Option<i64>,
    /// maxSurge and maxUnavailable as percentages (negative) or counts, resolved in the model
    /// against the current spec.replicas: surge rounds up, unavailable rounds down.
    pub max_surge: i64,
    pub max_unavailable: i64,
}

/// The descheduler policy's plugins that the model runs. Masks over templates say whose pods a
/// plugin may evict (the DefaultEvictor's filters, the plugin's namespaces and label selector).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrDescheduler {
    pub remove_duplicates: bool,
    /// Templates whose pods RemoveDuplicates may evict (bitmask; bit t = template t).
    pub duplicates_evictable: u32,
    pub spread: bool,
    /// RemovePodsViolatingTopologySpreadConstraint balances DoNotSchedule constraints (its
    /// `constraints` arg; the default).
    pub spread_hard: bool,
    /// ... and ScheduleAnyway ones.
    pub spread_soft: bool,
    pub spread_evictable: u32,
    /// `topologyBalanceNodeFit` (default true): a pod leaves a large domain only if it fits a
    /// node of a domain below the average.
    pub balance_node_fit: bool,
    /// Per template (index 0 unused): the nodes the DefaultEvictor's NodeFit and
    /// RemoveDuplicates' target nodes accept for its pods by static properties: nodeSelector,
    /// required node affinity, NoSchedule and NoExecute taints (never `spec.nodeName`).
    pub fit_nodes: Vec<u32>,
    /// RemoveDuplicates: per template, its pods' owner keys (namespace, owner kind and name,
    /// sorted images), as a bitmask over the unit's keys (bit k, 1-based).
    pub duplicate_keys: Vec<u32>,
    pub duplicate_key_count: u32,
    /// ... and the identity of the pods' whole sorted key list: pods whose lists are equal
    /// are duplicates of each other on a node. 0: never a duplicate (no owner).
    pub duplicate_lists: Vec<u32>,
    /// RemovePodsViolatingTopologySpreadConstraint takes pods from the end of a domain's list,
    /// sorted (sortDomains) with pods with a nodeSelector or node affinity first, then by
    /// ascending priority; this is each template's place in that order (index 0 unused).
    pub eviction_rank: Vec<u32>,
    pub max_rank: u32,
    /// RemovePodsViolatingNodeTaints.
    pub taints: bool,
    pub taints_evictable: u32,
    /// Per template (index 0 unused): nodes whose taints (NoSchedule, and PreferNoSchedule
    /// when included, less the excluded ones) the pod does not tolerate.
    pub taint_violations: Vec<u32>,
    /// RemovePodsViolatingNodeAffinity, `requiredDuringSchedulingIgnoredDuringExecution`.
    pub affinity_required: bool,
    /// ... and `preferredDuringSchedulingIgnoredDuringExecution`.
    pub affinity_preferred: bool,
    pub affinity_evictable: u32,
    /// Per template (index 0 unused): nodes that fail its nodeSelector or required affinity.
    pub affinity_violations: Vec<u32>,
    /// LowNodeUtilization.
    pub low_utilization: Option<IrLowUtilization>,
    /// DefaultEvictor `nodeFit`: evict only pods that fit another node.
    pub node_fit: bool,
}

/// LowNodeUtilization's thresholds, percent of allocatable for cpu, memory and pods (100 where
/// the policy leaves a resource out).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrLowUtilization {
    pub thresholds: [i64; 3],
    pub targets: [i64; 3],
    /// `numberOfNodes`: act only when more nodes than this are underutilized.
    pub number_of_nodes: i64,
    pub evictable: u32,
}

/// Score weights of the default kube-scheduler profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scoring {
    /// NodeResourcesFit's scoring strategy.
    pub strategy: ScoringStrategy,
    /// RequestedToCapacityRatio's shape, scores scaled to 0..100 (×10, as upstream does).
    pub ratio_shape: Vec<ShapePoint>,
    pub fit: i64,
    pub balanced: i64,
    pub spread: i64,
    pub taint: i64,
    pub affinity: i64,
    /// NodeResourcesFit's resource weights (scoringStrategy.resources).
    pub cpu_weight: i64,
    pub memory_weight: i64,
}

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
    pub checks: Vec<&'static str>,
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
    /// `no-eviction-loop`: evict/recreate repetitions that count as a loop.
    pub eviction_loops: i64,
    /// `pods-balanced`: the largest allowed difference of a workload's pod counts between two
    /// ready nodes it may use.
    pub balance_skew: i64,
    pub cluster_autoscaler: Option<IrClusterAutoscaler>,
    /// `faults: [stale-reads]`: deletions the scheduler's and descheduler's informers may lag
    /// behind by; 0 when their views are fresh.
    pub stale_reads: i64,
    /// Interchangeable pods are kept in one order (`scaling.symmetry`, on by default).
    pub symmetry: bool,
}

/// Where model indices come from, to turn a counterexample back into Kubernetes terms.
#[derive(Clone, Debug, Default)]
pub struct Names {
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

/// Build the IR of `unit` on `topology`.
pub fn build(unit: &Unit, objects: &[Object], config: &Config, topology: &Topology) -> Result<(Ir, Names), IrError> {
    let mut names = Names::default();
    // Nodes: pool by pool, `<pool>-1`, `<pool>-2`, ... with their labels.
    let mut nodes = Vec::new();
    let mut node_labels: Vec<(String, Labels, &NodePool)> = Vec::new();
    let autoscaler_event = config.events.iter().find_map(|e| match &e.value {
        EnvironmentEvent::ClusterAutoscaler {
            scale_down_utilization, ..
        } => Some(*scale_down_utilization),
        _ => None,
    });
    names.stale_reads = config.stale_reads.as_ref().map(|s| s.span);
    let (slots, scaling_pools) = cluster_nodes(config, topology);
    for (pool, _) in &scaling_pools {
        names.scaling_pools.push((pool.name.clone(), pool.span));
    }
    for slot in &slots {
        let name = slot.pool.node_name(slot.index);
        let usable = slot.pool.usable();
        nodes.push(IrNode {
            cpu: usable.cpu_millis,
            // In bytes until the unit's memory unit is known (below).
            mem: usable.memory_bytes,
            // The node's allocatable pods, exactly: a smaller cap would leave pods Pending that
            // Kubernetes places.
            pods: slot.pool.allocatable.pods.max(1),
            pods_allocatable: slot.pool.allocatable.pods.max(1),
            scaling_pool: slot.scaling_pool,
            absent: slot.absent,
            zone: slot.zone.unwrap_or(0) as u32,
            cordoned: slot.pool.unschedulable,
            scalars: Vec::new(),
        });
        node_labels.push((name.clone(), slot.pool.labels_for(&name, slot.zone), slot.pool));
        names.nodes.push(name);
        names.node_zones.push(slot.zone_name());
    }
    let scaling_pools: Vec<IrScalingPool> = scaling_pools.into_iter().map(|(_, p)| p).collect();
    let cluster_autoscaler = autoscaler_event.and_then(|utilization| {
        (!scaling_pools.is_empty()).then_some(IrClusterAutoscaler {
            pools: scaling_pools,
            scale_down_utilization: i64::from(utilization),
        })
    });
    if nodes.is_empty() {
        return Err(IrError::NoNodes);
    }
    if nodes.len() > MAX_NODES {
        return Err(IrError::TooManyNodes(nodes.len()));
    }

    let workload_objects: Vec<usize> = unit
        .members
        .iter()
        .filter(|m| m.role == Role::Workload)
        .map(|m| m.object)
        .collect();
    let autoscaler_of = |w: usize| -> Option<&crate::manifest::HorizontalPodAutoscaler> {
        unit.members
            .iter()
            .filter(|m| m.role == Role::Autoscaler)
            .find_map(|m| match &objects[m.object].body {
                Body::HorizontalPodAutoscaler(h)
                    if h.scale_target_ref.kind == objects[w].id.kind
                        && h.scale_target_ref.name == objects[w].id.name =>
                {
                    Some(h.as_ref())
                }
                _ => None,
            })
    };

    // Pods the topology can run at once; replicas beyond it could never be placed.
    let pods_capacity: usize = nodes.iter().map(|n| n.pods.max(0) as usize).sum();
    let node_capacity: usize = nodes.iter().map(|n| n.pods.max(0) as usize).max().unwrap_or(0);
    let node_failure = config.events.iter().find_map(|e| match e.value {
        EnvironmentEvent::NodeFailure { count, recover } => Some(IrNodeFailure {
            count: count.min(topology_size(topology)),
            recover,
        }),
        _ => None,
    });
    let mut workloads = Vec::new();
    let mut next_slot = 1;
    let mut apply_replicas = vec![-1];
    let mut apply_templates = vec![false];
    for (wi, &w) in workload_objects.iter().enumerate() {
        let workload = objects[w].workload().expect("a workload member");
        let hpa = autoscaler_of(w);
        // One pod per node the DaemonSet's pods may run on (nodeSelector, required node
        // affinity and NoSchedule/NoExecute taints; pkg/controller/daemon NodeShouldRunDaemonPod).
        let daemon_nodes: Vec<u32> = if workload.kind == WorkloadKind::DaemonSet {
            let spec = &workload.template.spec;
            node_labels
                .iter()
                .enumerate()
                // The autoscaler's new nodes get no DaemonSet pod in the model: the pool's
                // `reserved` stands for them.
                .filter(|(i, _)| !nodes[*i].absent)
                .filter(|(_, (name, labels, pool))| {
                    matches_required_affinity(spec, name, labels)
                        && crate::manifest::taint::tolerates_for_scheduling(&spec.tolerations, &pool.taints)
                })
                .map(|(i, _)| i as u32 + 1)
                .collect()
        } else {
            Vec::new()
        };
        // A bare Pod being deleted where its nodeName puts it.
        let deleting_on: Option<(usize, i64)> = (workload.kind == WorkloadKind::Pod && workload.template.deleting)
            .then_some(workload.template.spec.node_name.as_ref())
            .flatten()
            .and_then(|n| names.nodes.iter().position(|name| *name == n.value))
            .map(|i| (i + 1, 1));
        let desired = match topology.replicas.get(wi).copied().flatten() {
            Some(r) => i64::from(r),
            None if workload.kind == WorkloadKind::DaemonSet => daemon_nodes.len() as i64,
            None => i64::from(workload.desired_replicas()),
        };
        let request = workload.template.spec.effective_request().cpu_millis;
        let autoscaler = hpa.and_then(|h| {
            let mut metrics = IrMetrics::default();
            // Of several utilisation targets of one resource, the lowest proposes the most
            // replicas at any usage, and the autoscaler takes the largest proposal.
            let lowest = |slot: &mut i64, target: i64| *slot = if *slot > 0 { (*slot).min(target) } else { target };
            let mut cpu_target = 0;
            for m in &h.metrics {
                match m {
                    Metric::Resource {
                        resource,
                        target: MetricTarget::Utilization(u),
                        ..
                    } if resource == "cpu" => lowest(&mut cpu_target, i64::from(*u)),
                    // A cpu average value is a utilisation of the request.
                    Metric::Resource {
                        resource,
                        target: MetricTarget::AverageValue(v),
                        ..
                    } if resource == "cpu" && request > 0 => lowest(&mut cpu_target, (v * 100 + request - 1) / request),
                    Metric::Resource {
                        target: MetricTarget::Utilization(u),
                        ..
                    } => lowest(&mut metrics.memory, i64::from(*u)),
                    // GetRawResourceReplicas: an average value is a plain per-pod metric.
                    Metric::Resource {
                        target: MetricTarget::AverageValue(_),
                        ..
                    } => metrics.pods = true,
                    Metric::Custom {
                        source: MetricSource::Pods,
                        ..
                    } => metrics.pods = true,
                    Metric::Custom { average: true, .. } => metrics.average_value = true,
                    Metric::Custom { average: false, .. } => metrics.value = true,
                }
            }
            metrics.cpu = cpu_target > 0;
            if metrics == IrMetrics::default() {
                return None;
            }
            let cpu_target = (cpu_target > 0).then_some(cpu_target);
            let target = cpu_target.unwrap_or(100);
            // The model's replica tables are 16-bit: maxReplicas: 100000 would overflow them.
            let min = i64::from(h.min_replicas.value.max(1)).min(MAX_AUTOSCALER_REPLICAS);
            let max = i64::from(h.max_replicas.value.max(1)).min(MAX_AUTOSCALER_REPLICAS);
            let behavior = h.scale_up.is_some() || h.scale_down.is_some();
            let (up_limit, down_limit) = scaling_limits(h, max);
            Some(IrAutoscaler {
                min,
                max,
                target,
                metrics,
                stabilize_down: h
                    .scale_down
                    .as_ref()
                    .and_then(|r| r.stabilization_window_seconds)
                    .is_none_or(|w| w > 0),
                // Only a behavior sets a scale-up window (default 0).
                stabilize_up: behavior
                    && h.scale_up
                        .as_ref()
                        .and_then(|r| r.stabilization_window_seconds)
                        .is_some_and(|w| w > 0),
                behavior,
                up_limit,
                down_limit,
            })
        });
        let max_pods = match (&autoscaler, workload.kind) {
            (_, WorkloadKind::DaemonSet) => daemon_nodes.len() as i64,
            (Some(a), _) => a.max.max(desired),
            (None, _) => desired,
        };
        // Replicas beyond what the topology can hold add nothing the model could show.
        // Rollouts are modelled only when the unit checks them; otherwise their extra slots
        // would only multiply the states.
        // The `apply` event: the cluster runs the previous revision of this workload (if it has
        // one) until the new one is applied.
        let previous = config
            .previous_revision
            .as_ref()
            .and_then(|p| p.iter().find(|pw| pw.id == objects[w].id));
        let template_changed = previous
            .is_some_and(|p| p.template_hash != workload.template_hash && workload.kind == WorkloadKind::Deployment);
        // kubectl apply's three-way merge: set what the new manifest sets; a field only the
        // old one set is removed and defaults (replicas 1); leave what neither sets.
        let replicas_after_apply = match (previous, &workload.replicas) {
            (None, _) => -1,
            (Some(_), Some(r)) => i64::from(r.value),
            (Some(p), None) if p.replicas.is_some() => 1,
            (Some(_), None) => -1,
        };
        let rollout = rollout_of(workload).filter(|_| unit.checks.contains(&"rollout-completes") || template_changed);
        // A rollout keeps old and new pods side by side: up to maxSurge more, and terminating
        // pods hold their slots until the kubelet is done.
        let rollout_room = if rollout.is_some() {
            max_pods.max(0) as usize + surge_at(workload, max_pods)
        } else {
            0
        };
        // Pods deleted on a failed node keep their slots until the node is back, while their
        // replacements need slots of their own.
        // DaemonSet pods tolerate unreachable nodes: a failure never deletes them.
        let failure_room = node_failure
            .as_ref()
            .filter(|_| workload.kind != WorkloadKind::DaemonSet)
            .map_or(0, |f| f.count as usize * node_capacity)
            .min(max_pods.max(0) as usize);
        let slots =
            (max_pods.max(0) as usize).min(pods_capacity.max(1)) + rollout_room.min(pods_capacity) + failure_room;
        let live = previous.map_or(desired, |p| i64::from(p.replicas.unwrap_or(1)));
        let replicas = match &autoscaler {
            Some(a) => live.clamp(a.min, a.max),
            None => live,
        }
        .min(slots as i64);
        apply_replicas.push(replicas_after_apply.min(slots as i64));
        apply_templates.push(template_changed);
        let steady = config
            .workloads
            .get(&objects[w].id)
            .and_then(|a| a.usage)
            .filter(|_| request > 0)
            .map_or(100, |u| (u.cpu_millis * 100 + request - 1) / request);
        let load_levels = load_levels(config, &objects[w].id.to_string(), &autoscaler, steady);
        let startup = config.workloads.get(&objects[w].id).and_then(|a| a.startup.as_ref());
        let startup_level = startup
            .and_then(|s| s.cpu_millis)
            .filter(|_| request > 0)
            .map_or(0, |cpu| ((cpu * 100 + request - 1) / request).max(1));
        // The HPA skips pods that are not ready yet (replica_calculator.go groupPods).
        let readiness_delay = workload
            .template
            .spec
            .containers
            .iter()
            .filter_map(|c| c.readiness_delay_seconds)
            .max();
        let startup_unready = startup.is_some_and(|s| readiness_delay.is_some_and(|d| d >= i64::from(s.seconds)));
        workloads.push(IrWorkload {
            template: wi + 1,
            replicas,
            autoscaler,
            first_slot: next_slot,
            slots,
            load_levels,
            steady_level: 1,
            load_base: replicas.max(1),
            manifest_replicas: workload
                .replicas
                .as_ref()
                .map_or(-1, |r| i64::from(r.value).min(slots as i64)),
            startup_level,
            startup_unready,
            rollout,
            bare: workload.kind == WorkloadKind::Pod,
            initial: if deleting_on.is_some() {
                deleting_on.into_iter().collect()
            } else {
                config
                    .initial_pods
                    .iter()
                    .filter(|p| p.workload == objects[w].id)
                    .filter_map(|p| {
                        let node = names.nodes.iter().position(|n| *n == p.node)? + 1;
                        Some((node, i64::from(p.count)))
                    })
                    .collect()
            },
            terminating: deleting_on.is_some(),
            pinned: daemon_nodes.iter().copied().take(slots).collect(),
            stateful: match workload.pod_management_policy {
                Some(crate::manifest::workload::PodManagementPolicy::OrderedReady) => 1,
                Some(crate::manifest::workload::PodManagementPolicy::Parallel) => 2,
                None => 0,
            },
        });
        names.workloads.push(w);
        next_slot += slots;
    }
    let pod_slots = next_slot - 1;
    if pod_slots > MAX_PODS {
        return Err(IrError::TooManyPods(pod_slots));
    }

    let profile = config.scheduler.profile.clone().unwrap_or_default();
    let services: Vec<(&str, &Labels)> = unit
        .members
        .iter()
        .filter(|m| m.role == Role::Service)
        .filter_map(|m| match &objects[m.object].body {
            Body::Service { selector } => Some((objects[m.object].namespace(), selector)),
            _ => None,
        })
        .collect();
    let mut templates = Vec::new();
    for &w in &workload_objects {
        let labels = &objects[w].workload().expect("a workload").template.labels;
        let selecting: Vec<&Labels> = services
            .iter()
            .filter(|(namespace, selector)| *namespace == objects[w].namespace() && selects(selector, labels))
            .map(|(_, selector)| *selector)
            .collect();
        let (mut template, hard) = build_template(objects, &workload_objects, w, &node_labels, &profile, &selecting);
        let (terms, described) = affinity_terms(objects, &workload_objects, w, &node_labels);
        template.affinity_terms = terms;
        templates.push(template);
        names.hard_constraints.push(hard);
        names.affinity_terms.push(described);
        let required = profile.added_affinity.required.as_ref();
        names.added_affinity.push((
            bitmask(
                node_labels
                    .iter()
                    .map(|(name, labels, _)| !profile.added_affinity.required_matches(name, labels)),
            ),
            required.map(|r| r.span),
        ));
    }
    let strategy = config
        .scheduler
        .scoring_strategy
        .as_ref()
        .or(profile.scoring_strategy.as_ref())
        .map(|s| s.value);
    let resource_weight = |r: &str| {
        if profile.resource_weights.is_empty() {
            1
        } else {
            profile.resource_weights.get(r).copied().unwrap_or(0).max(0)
        }
    };
    let strategy = strategy.unwrap_or(ScoringStrategy::LeastAllocated);
    let scoring = Scoring {
        strategy,
        ratio_shape: if strategy == ScoringStrategy::RequestedToCapacityRatio {
            profile
                .ratio_shape
                .iter()
                .map(|p| ShapePoint {
                    utilization: p.utilization,
                    score: p.score * 10,
                })
                .collect()
        } else {
            Vec::new()
        },
        fit: profile.score_weight("NodeResourcesFit", 1),
        balanced: profile.score_weight("NodeResourcesBalancedAllocation", 1),
        spread: profile.score_weight("PodTopologySpread", 2),
        taint: profile.score_weight("TaintToleration", 3),
        affinity: profile.score_weight("NodeAffinity", 2),
        cpu_weight: resource_weight("cpu"),
        memory_weight: resource_weight("memory"),
    };
    let load_change = config.has_event(|e| matches!(e, EnvironmentEvent::LoadChange { .. }))
        && workloads.iter().any(|w| w.load_levels.len() > 1);
    // Only manifests that write spec.replicas can drift from what the cluster runs.
    let gitops_sync = config.has_event(|e| matches!(e, EnvironmentEvent::GitopsSync))
        && workloads.iter().any(|w| w.manifest_replicas >= 0);
    let param = |check: &str, name: &str| config.checks.params.get(check).and_then(|p| p.get(name)).copied();
    // After first reaching it, available replicas stay at least the HPA minimum or
    // spec.replicas, or the `min` param.
    let (disruption_budgets, budget_objects) = disruption_budgets(unit, objects, &workload_objects);
    let descheduler = descheduler(unit, objects, &workload_objects, &node_labels).map(|(d, spans)| {
        names.descheduler_plugins = spans;
        d
    });
    names.disruption_budgets = budget_objects;
    // After first reaching it, available replicas stay at least the HPA minimum or
    // spec.replicas, lowered to what a PodDisruptionBudget of the workload alone declares
    // enough; or the `min` param.
    let min_available = std::iter::once(0)
        .chain(
            workloads
                .iter()
                .enumerate()
                .map(|(i, w)| match param("min-replicas-available", "min") {
                    // Nothing recreates a bare Pod: Kubernetes promises it no availability.
                    _ if w.bare => 0,
                    Some(min) => min.min(w.slots as i64),
                    None => {
                        let base = w.autoscaler.as_ref().map_or(w.replicas, |a| a.min).min(w.slots as i64);
                        disruption_budgets
                            .iter()
                            .filter(|b| b.workloads == 1 << (i + 1))
                            .map(|b| b.desired_healthy(base))
                            .fold(base, i64::min)
                            .max(0)
                    }
                }),
        )
        .collect();
    let mut rollout_order: Vec<usize> = workloads
        .iter()
        .enumerate()
        .filter(|(_, w)| w.rollout.is_some())
        .map(|(i, _)| i + 1)
        .collect();
    rollout_order.sort_by_key(|&i| {
        let t = &templates[workloads[i - 1].template - 1];
        (std::cmp::Reverse(t.hard.len() + t.affinity_terms.len()), i)
    });
    // Ephemeral storage, hugepages and extended resources some pod of the unit requests and
    // NodeResourcesFit checks; a node without one has 0 of it.
    let scalar_names: Vec<String> = workload_objects
        .iter()
        .flat_map(|&w| {
            let spec = &objects[w].workload().expect("a workload").template.spec;
            spec.scalar_names()
                .filter(|name| spec.scalar_request(name) > 0 && profile.checks_resource(name))
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if scalar_names.len() > MAX_SCALAR_RESOURCES {
        return Err(IrError::TooManyResources(scalar_names.len()));
    }
    for name in &scalar_names {
        let requests: Vec<i64> = workload_objects
            .iter()
            .map(|&w| {
                objects[w]
                    .workload()
                    .expect("a workload")
                    .template
                    .spec
                    .scalar_request(name)
            })
            .collect();
        let allocatable: Vec<i64> = node_labels
            .iter()
            .map(|(_, _, pool)| pool.scalar_allocatable.get(name).copied().unwrap_or(0))
            .collect();
        let unit = scalar_unit(requests.iter().chain(&allocatable).copied());
        for (t, request) in templates.iter_mut().zip(&requests) {
            t.scalars.push((request + unit - 1) / unit);
        }
        for (n, value) in nodes.iter_mut().zip(&allocatable) {
            n.scalars.push(value / unit);
        }
    }
    let scalar_resources = scalar_names.len();
    names.scalar_resources = scalar_names;
    // A request larger than every node is only ever compared with what a node has (it never
    // fits, and scores as a full node): it becomes "one unit more than the largest node", so
    // that it decides neither the unit nor an overflow.
    let largest_node = nodes.iter().map(|n| n.mem).max().unwrap_or(0);
    let memory_unit = memory_unit(
        nodes.iter().map(|n| n.mem).chain(
            templates
                .iter()
                .flat_map(|t| [t.mem, t.score_mem])
                .filter(|m| *m <= largest_node),
        ),
    );
    let beyond = largest_node / memory_unit + 1;
    for n in &mut nodes {
        n.mem /= memory_unit;
    }
    for t in &mut templates {
        t.mem = ((t.mem + memory_unit - 1) / memory_unit).min(beyond);
        t.score_mem = ((t.score_mem + memory_unit - 1) / memory_unit).min(beyond);
    }
    Ok((
        Ir {
            memory_unit,
            scalar_resources,
            rollout_order,
            nodes,
            templates,
            workloads,
            pod_slots,
            scoring,
            load_change,
            node_maintenance: config.has_event(|e| matches!(e, EnvironmentEvent::NodeMaintenance)),
            descheduler,
            gitops_sync,
            overload_threshold: config
                .events
                .iter()
                .find_map(|e| match e.value {
                    EnvironmentEvent::NodeOverload { threshold_percent } => Some(i64::from(threshold_percent)),
                    _ => None,
                })
                .unwrap_or(0),
            checks: unit.checks.clone(),
            min_available,
            min_resettable: param("min-replicas-available", "min").is_none(),
            disruption_budgets,
            node_failure,
            node_drain: config.has_event(|e| matches!(e, EnvironmentEvent::NodeDrain)),
            apply: (apply_replicas.iter().any(|r| *r >= 0) || apply_templates.iter().any(|t| *t)).then_some(IrApply {
                replicas: apply_replicas,
                template_changed: apply_templates,
            }),
            eviction_loops: param("no-eviction-loop", "loops").unwrap_or(3).max(1),
            balance_skew: param("pods-balanced", "maxSkew").unwrap_or(1).max(0),
            cluster_autoscaler,
            stale_reads: config.stale_reads.as_ref().map_or(0, |s| i64::from(s.value)),
            symmetry: config.scaling.symmetry,
        },
        names,
    ))
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

/// Usage levels, percent of the request: the steady usage first, then the values a load change
/// may reach. Around an HPA target the levels straddle the tolerance band, since those are the
/// points where the autoscaler's decision changes.
///
/// Only the workload's HPA and the node-overload event read its usage: without either, a load
/// change alters nothing the controllers see, and its levels would only multiply the states.
fn load_levels(config: &Config, workload: &str, autoscaler: &Option<IrAutoscaler>, steady: i64) -> Vec<i64> {
    let overload = config.has_event(|e| matches!(e, EnvironmentEvent::NodeOverload { .. }));
    if autoscaler.is_none() && !overload && config.scaling.symmetry {
        return vec![steady];
    }
    let max = config.events.iter().find_map(|e| match &e.value {
        EnvironmentEvent::LoadChange { workloads, max_percent }
            if workloads.iter().any(|w| w == "*" || w == workload) =>
        {
            Some(i64::from(*max_percent))
        }
        _ => None,
    });
    let Some(max) = max else {
        return vec![steady];
    };
    let mut levels = vec![0, max];
    if let Some(a) = autoscaler {
        levels.push(a.target * 8 / 10);
        levels.push((a.target * 12 + 9) / 10);
    }
    levels.retain(|l| *l != steady && *l <= max);
    levels.sort_unstable();
    levels.dedup();
    std::iter::once(steady).chain(levels).collect()
}

/// Per current replica count (0..=max), the most and the fewest replicas one autoscaler
/// decision may reach (horizontal.go convertDesiredReplicasWithRules, or with a behavior
/// calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors). Without a
/// clock each decision starts its own period: the period's start is the current count.
pub fn scaling_limits(h: &crate::manifest::HorizontalPodAutoscaler, max: i64) -> (Vec<i64>, Vec<i64>) {
    use crate::manifest::autoscaling::{ScalingPolicyType, SelectPolicy};
    let behavior = h.scale_up.is_some() || h.scale_down.is_some();
    let currents = 0..=max.max(0);
    if !behavior {
        return (
            currents.clone().map(|c| (2 * c).max(4)).collect(),
            currents.map(|_| 0).collect(),
        );
    }
    // pkg/apis/autoscaling/v2 defaults.
    let default_up = [(ScalingPolicyType::Pods, 4), (ScalingPolicyType::Percent, 100)];
    let default_down = [(ScalingPolicyType::Percent, 100)];
    let rules = |r: Option<&crate::manifest::autoscaling::ScalingRules>, default: &[(ScalingPolicyType, i32)]| {
        let select = r.and_then(|r| r.select_policy).unwrap_or(SelectPolicy::Max);
        let policies: Vec<(ScalingPolicyType, i64)> = match r {
            Some(r) if !r.policies.is_empty() => {
                r.policies.iter().map(|p| (p.policy_type, i64::from(p.value))).collect()
            }
            _ => default.iter().map(|(t, v)| (*t, i64::from(*v))).collect(),
        };
        (select, policies)
    };
    let (up_select, up) = rules(h.scale_up.as_ref(), &default_up);
    let (down_select, down) = rules(h.scale_down.as_ref(), &default_down);
    let up_limit = currents
        .clone()
        .map(|c| {
            let limits = up.iter().map(|(t, v)| match t {
                ScalingPolicyType::Pods => c + v,
                ScalingPolicyType::Percent => (c * (100 + v) + 99) / 100,
            });
            match up_select {
                SelectPolicy::Max => limits.max().unwrap_or(c),
                SelectPolicy::Min => limits.min().unwrap_or(c),
                SelectPolicy::Disabled => c,
            }
            .max(c)
            // A percent policy may ask for any multiple; 16 bits hold more than maxReplicas.
            .min(i64::from(i16::MAX))
        })
        .collect();
    let down_limit = currents
        .map(|c| {
            let limits = down.iter().map(|(t, v)| match t {
                ScalingPolicyType::Pods => c - v,
                ScalingPolicyType::Percent => c * (100 - v) / 100,
            });
            match down_select {
                SelectPolicy::Max => limits.min().unwrap_or(c),
                SelectPolicy::Min => limits.max().unwrap_or(c),
                SelectPolicy::Disabled => c,
            }
            .min(c)
            .max(0)
        })
        .collect();
    (up_limit, down_limit)
}

fn topology_size(topology: &Topology) -> u32 {
    topology.nodes_per_pool.iter().sum()
}

impl IrDisruptionBudget {
    /// The healthy pods the budget wants when `expected` are desired (disruption controller:
    /// percentages round up).
    pub fn desired_healthy(&self, expected: i64) -> i64 {
        let resolve = |v: i64| if v < 0 { (-v * expected + 99) / 100 } else { v };
        if self.max_unavailable {
            expected - resolve(self.value)
        } else {
            resolve(self.value)
        }
    }
}

/// The unit's PodDisruptionBudgets that select pods of its workloads (same namespace).
fn disruption_budgets(unit: &Unit, objects: &[Object], workloads: &[usize]) -> (Vec<IrDisruptionBudget>, Vec<usize>) {
    use crate::manifest::pdb::UnhealthyPodEvictionPolicy;
    let mut budgets = Vec::new();
    let mut names = Vec::new();
    for m in unit.members.iter().filter(|m| m.role == Role::DisruptionBudget) {
        let Body::PodDisruptionBudget(pdb) = &objects[m.object].body else {
            continue;
        };
        let selected = workloads.iter().enumerate().fold(0u32, |mask, (i, &w)| {
            let selects = objects[w].namespace() == objects[m.object].namespace()
                && pdb
                    .selector
                    .as_ref()
                    .is_some_and(|s| s.matches(&objects[w].workload().expect("a workload").template.labels));
            if selects { mask | (1 << (i + 1)) } else { mask }
        });
        if selected == 0 {
            continue;
        }
        let (max_unavailable, value) = match (&pdb.max_unavailable, &pdb.min_available) {
            (Some(m), _) => (true, encode(m.value)),
            (None, Some(m)) => (false, encode(m.value)),
            (None, None) => (false, 1),
        };
        budgets.push(IrDisruptionBudget {
            workloads: selected,
            max_unavailable,
            value,
            always_allow: pdb.unhealthy_pod_eviction_policy == UnhealthyPodEvictionPolicy::AlwaysAllow,
        });
        names.push(m.object);
    }
    (budgets, names)
}

fn bitmask(nodes: impl Iterator<Item = bool>) -> u32 {
    nodes
        .enumerate()
        .fold(0, |m, (i, yes)| if yes { m | (1 << (i + 1)) } else { m })
}

fn matches_required_affinity(spec: &PodSpec, name: &str, labels: &Labels) -> bool {
    selects(&spec.node_selector, labels) && spec.affinity.node.required_matches(name, labels)
}

fn build_template(
    objects: &[Object],
    workloads: &[usize],
    w: usize,
    nodes: &[(String, Labels, &NodePool)],
    profile: &SchedulerProfile,
    services: &[&Labels],
) -> (IrTemplate, Vec<(usize, Span)>) {
    let default_constraints = profile.default_constraints.as_deref();
    let object = &objects[w];
    let workload = object.workload().expect("a workload");
    let spec = &workload.template.spec;
    // The DaemonSet controller adds tolerations of not-ready, unreachable and unschedulable
    // nodes to its pods (pkg/controller/daemon/util).
    let daemon = workload.kind == WorkloadKind::DaemonSet;
    let request = spec.effective_request();
    let scoring = spec.scoring_request();
    let pass_affinity: Vec<bool> = nodes
        .iter()
        .map(|(name, labels, _)| matches_required_affinity(spec, name, labels))
        .collect();
    let tolerated: Vec<bool> = nodes
        .iter()
        .map(|(_, _, pool)| tolerates_for_scheduling(&spec.tolerations, &pool.taints))
        .collect();
    // The profile's addedAffinity filters and scores like the pod's own node affinity, but
    // spread constraints' nodeAffinityPolicy reads only the pod's (podtopologyspread/common.go).
    let static_nodes = bitmask(nodes.iter().enumerate().map(|(i, (name, labels, _))| {
        spec.node_name.as_ref().is_none_or(|n| &n.value == name)
            && pass_affinity[i]
            && profile.added_affinity.required_matches(name, labels)
            && tolerated[i]
    }));
    let mut affinity_raw = vec![0];
    let mut taint_raw = vec![0];
    // A NoExecute taint evicts the pod unless a toleration tolerates it forever; one with
    // tolerationSeconds only delays the eviction (tainteviction: the scheduler still admits it).
    let no_execute = bitmask(nodes.iter().map(|(_, _, pool)| {
        pool.taints.iter().any(|t| {
            t.effect == TaintEffect::NoExecute
                && !spec
                    .tolerations
                    .iter()
                    .any(|tol| tol.tolerates(t) && tol.toleration_seconds.is_none())
        })
    }));
    let node_name = match &spec.node_name {
        None => 0,
        Some(n) => nodes
            .iter()
            .position(|(name, _, _)| *name == n.value)
            .map_or(255, |i| i as u32 + 1),
    };
    for (name, labels, pool) in nodes {
        affinity_raw.push(
            spec.affinity.node.preferred_weight(name, labels) + profile.added_affinity.preferred_weight(name, labels),
        );
        taint_raw.push(untolerated_prefer_no_schedule(&spec.tolerations, pool));
    }
    let counts = |selector: Option<&LabelSelector>| -> Vec<bool> {
        std::iter::once(false)
            .chain(workloads.iter().map(|&o| {
                let other = &objects[o];
                other.namespace() == object.namespace()
                    && selector.is_some_and(|s| s.matches(&other.workload().expect("a workload").template.labels))
            }))
            .collect()
    };
    let constraint = |key: &str,
                      max_skew: i64,
                      min_domains: i64,
                      selector: Option<&LabelSelector>,
                      match_label_keys: &[String],
                      affinity_policy: InclusionPolicy,
                      taints_policy: InclusionPolicy| {
        let (domains, domain_count) = domains_of(key, nodes);
        // matchLabelKeys: the selector also requires the incoming pod's own value of each key
        // it has. pod-template-hash differs per workload and revision.
        let own_labels = &workload.template.labels;
        // Controllers add pod-template-hash; a bare Pod carries the labels its manifest writes.
        let generated_hash = workload.kind != WorkloadKind::Pod;
        let same_revision = generated_hash && match_label_keys.iter().any(|k| k == POD_TEMPLATE_HASH);
        let mut counts_template = counts(selector);
        for (t, &o) in workloads.iter().enumerate() {
            let labels = &objects[o].workload().expect("a workload").template.labels;
            let keys_match = match_label_keys
                .iter()
                .filter(|k| !(generated_hash && *k == POD_TEMPLATE_HASH))
                .all(|k| own_labels.get(k).is_none_or(|v| labels.get(k) == Some(v)));
            if !keys_match || (same_revision && o != w) {
                counts_template[t + 1] = false;
            }
        }
        let included = bitmask((0..nodes.len()).map(|i| {
            (affinity_policy == InclusionPolicy::Ignore || pass_affinity[i])
                && (taints_policy == InclusionPolicy::Ignore || tolerated[i])
        }));
        IrConstraint {
            max_skew,
            min_domains,
            domains,
            domain_count,
            included,
            policy_nodes: included,
            counts_template,
            self_match: selector.is_some_and(|s| s.matches(&workload.template.labels)),
            hostname: key == HOSTNAME_KEY,
            same_revision,
            honor_taints: taints_policy == InclusionPolicy::Honor,
        }
    };
    let mut hard = Vec::new();
    let mut soft = Vec::new();
    let mut hard_spans = Vec::new();
    for (k, tsc) in spec.topology_spread_constraints.iter().enumerate() {
        let c = constraint(
            &tsc.topology_key.value,
            i64::from(tsc.max_skew.value),
            tsc.min_domains.as_ref().map_or(1, |m| i64::from(m.value)),
            tsc.label_selector.as_ref(),
            &tsc.match_label_keys,
            tsc.node_affinity_policy,
            tsc.node_taints_policy,
        );
        if tsc.when_unsatisfiable.value == WhenUnsatisfiable::DoNotSchedule {
            hard.push(c);
            hard_spans.push((k, tsc.max_skew.span));
        } else {
            soft.push(c);
        }
    }
    // A node lacking any hard constraint's key is left out of every hard constraint's counts
    // (podtopologyspread/common.go nodeLabelsMatchSpreadConstraints).
    let has_all_keys = bitmask(nodes.iter().map(|(_, labels, _)| {
        spec.topology_spread_constraints
            .iter()
            .filter(|t| t.when_unsatisfiable.value == WhenUnsatisfiable::DoNotSchedule)
            .all(|t| labels.contains_key(&t.topology_key.value))
    }));
    for c in &mut hard {
        c.included &= has_all_keys;
    }
    let require_all = !spec.topology_spread_constraints.is_empty();
    let default_selector = if spec.topology_spread_constraints.is_empty() {
        workload.default_spread_selector(services.iter().copied())
    } else {
        None
    };
    if let Some(default_selector) = &default_selector {
        // The cluster's default constraints (the scheduler profile's list, else the system
        // defaults: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway), counting the pods
        // the Services and the owning controller select (DefaultSelector).
        let selector = Some(&default_selector.selector);
        let revision = if default_selector.same_revision {
            vec![POD_TEMPLATE_HASH.to_string()]
        } else {
            Vec::new()
        };
        let system = [
            (HOSTNAME_KEY.to_string(), 3, WhenUnsatisfiable::ScheduleAnyway),
            (ZONE_KEY.to_string(), 5, WhenUnsatisfiable::ScheduleAnyway),
        ];
        let defaults: Vec<(String, i64, WhenUnsatisfiable)> = match default_constraints {
            Some(list) => list
                .iter()
                .map(|c| (c.topology_key.clone(), i64::from(c.max_skew), c.when_unsatisfiable))
                .collect(),
            None => system.to_vec(),
        };
        for (key, skew, when) in defaults {
            let c = constraint(
                &key,
                skew,
                1,
                selector,
                &revision,
                InclusionPolicy::Honor,
                InclusionPolicy::Ignore,
            );
            if when == WhenUnsatisfiable::DoNotSchedule {
                hard.push(c);
                // Not in the manifest: the finding names the scheduler configuration.
                hard_spans.push((usize::MAX, workload.template.span));
            } else {
                soft.push(c);
            }
        }
    }
    (
        IrTemplate {
            workload: workloads.iter().position(|&o| o == w).expect("listed") + 1,
            cpu: request.cpu_millis,
            // In bytes until the unit's memory unit is known (`build`).
            mem: request.memory_bytes,
            // Filled in `build`, once the unit's scalar resources are known.
            scalars: Vec::new(),
            score_cpu: scoring.cpu_millis,
            score_mem: scoring.memory_bytes,
            static_nodes,
            affinity_raw,
            taint_raw,
            no_execute,
            node_name,
            hard,
            soft,
            affinity_terms: Vec::new(),
            require_all,
            tolerates_cordon: daemon
                || tolerates_taint(&spec.tolerations, UNSCHEDULABLE_TAINT, TaintEffect::NoSchedule, false),
            failure_eviction: !daemon
                && !tolerates_taint(&spec.tolerations, UNREACHABLE_TAINT, TaintEffect::NoExecute, true),
            daemon,
        },
        hard_spans,
    )
}

/// Domains of the nodes under a topology key: 1-based ids of the distinct values, 0 for a node
/// without the key.
fn domains_of(key: &str, nodes: &[(String, Labels, &NodePool)]) -> (Vec<u32>, u32) {
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

/// The required InterPodAffinity terms that filter nodes for workload `w`'s pods
/// (interpodaffinity/filtering.go): its own affinity and anti-affinity, and the anti-affinity
/// of the unit's other pods that select it.
fn affinity_terms(
    objects: &[Object],
    workloads: &[usize],
    w: usize,
    nodes: &[(String, Labels, &NodePool)],
) -> (Vec<IrAffinityTerm>, Vec<(String, Span)>) {
    use crate::manifest::pod::PodAffinityTerm;
    let object = &objects[w];
    let spec_of = |o: usize| &objects[o].workload().expect("a workload").template;
    // Whether `term`, written in workload `owner`, covers the pods of workload `other`.
    let covers = |owner: usize, term: &PodAffinityTerm, other: usize| -> bool {
        let ns = objects[other].namespace();
        let namespace_ok = if term.namespace_selector.as_ref().is_some_and(|s| s.is_empty()) {
            true
        } else if term.namespaces.is_empty() {
            objects[owner].namespace() == ns
        } else {
            term.namespaces.iter().any(|n| n == ns)
        };
        namespace_ok
            && term
                .label_selector
                .as_ref()
                .is_some_and(|s| s.matches(&spec_of(other).labels))
    };
    let mask = |owner: usize, term: &PodAffinityTerm| -> u32 {
        workloads.iter().enumerate().fold(
            0,
            |m, (i, &o)| if covers(owner, term, o) { m | (1 << (i + 1)) } else { m },
        )
    };
    let mut terms = Vec::new();
    let mut described = Vec::new();
    let own = spec_of(w);
    for (anti, list, what) in [
        (true, &own.spec.affinity.pod_anti.required, "podAntiAffinity"),
        (false, &own.spec.affinity.pod.required, "podAffinity"),
    ] {
        for (k, term) in list.iter().enumerate() {
            let (domains, domain_count) = domains_of(&term.topology_key.value, nodes);
            let counts = mask(w, term);
            let self_match = covers(w, term, w);
            // A required affinity to pods no scanned manifest defines (a database another
            // repository deploys): kivi-lint cannot know where they run, so it assumes they
            // run in every domain rather than claim the pod stays Pending (units.rs notes it).
            if !anti && counts == 0 && !self_match {
                continue;
            }
            terms.push(IrAffinityTerm {
                anti,
                domains,
                domain_count,
                counts,
                self_match,
            });
            described.push((
                format!(
                    "{what} required term {k} ({}) of {}",
                    term.topology_key.value, object.id
                ),
                term.topology_key.span,
            ));
        }
    }
    // Existing pods' anti-affinity against this pod: pods of `other` block the domains (under
    // other's key) they run in.
    for (i, &other) in workloads.iter().enumerate() {
        if other == w {
            continue;
        }
        for (k, term) in spec_of(other).spec.affinity.pod_anti.required.iter().enumerate() {
            if covers(other, term, w) {
                let (domains, domain_count) = domains_of(&term.topology_key.value, nodes);
                terms.push(IrAffinityTerm {
                    anti: true,
                    domains,
                    domain_count,
                    counts: 1 << (i + 1),
                    self_match: false,
                });
                described.push((
                    format!(
                        "podAntiAffinity required term {k} ({}) of {}",
                        term.topology_key.value, objects[other].id
                    ),
                    term.topology_key.span,
                ));
            }
        }
    }
    (terms, described)
}

/// Whether a toleration tolerates the taint `key` with `effect` (`forever`: without
/// tolerationSeconds).
fn tolerates_taint(tolerations: &[Toleration], key: &str, effect: TaintEffect, forever: bool) -> bool {
    let taint = crate::manifest::taint::Taint {
        key: key.to_string(),
        value: String::new(),
        effect,
    };
    tolerations
        .iter()
        .any(|t| t.tolerates(&taint) && (!forever || t.toleration_seconds.is_none()))
}

fn untolerated_prefer_no_schedule(tolerations: &[Toleration], pool: &NodePool) -> i64 {
    pool.taints
        .iter()
        .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
        .filter(|t| {
            !tolerations
                .iter()
                .filter(|tol| tol.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule))
                .any(|tol| tol.tolerates(t))
        })
        .count() as i64
}

/// The unit's descheduler policy, as the model runs it: which plugins, and whose pods each may
/// evict. The DefaultEvictor never evicts bare pods, DaemonSet pods or system-critical pods, nor
/// pods at or above its priority threshold.
fn descheduler(
    unit: &Unit,
    objects: &[Object],
    workloads: &[usize],
    nodes: &[(String, Labels, &NodePool)],
) -> Option<(IrDescheduler, Vec<Option<Span>>)> {
    use crate::manifest::descheduler::PluginArgs;
    // Where each plugin the model runs is enabled (by the model's plugin ids, 1-based).
    let mut spans: Vec<Option<Span>> = vec![None; 6];
    let policy = unit
        .members
        .iter()
        .filter(|m| m.role == Role::DeschedulerPolicy)
        .find_map(|m| match &objects[m.object].body {
            Body::DeschedulerPolicy(p) => Some(p.as_ref()),
            _ => None,
        })?;
    let templates = workloads.len() + 1;
    let mut ir = IrDescheduler {
        remove_duplicates: false,
        duplicates_evictable: 0,
        spread: false,
        spread_hard: false,
        spread_soft: false,
        spread_evictable: 0,
        balance_node_fit: false,
        fit_nodes: vec![0; templates],
        duplicate_keys: vec![0; templates],
        duplicate_key_count: 0,
        duplicate_lists: vec![0; templates],
        eviction_rank: vec![0; templates],
        max_rank: 0,
        taints: false,
        taints_evictable: 0,
        taint_violations: vec![0; templates],
        affinity_required: false,
        affinity_preferred: false,
        affinity_evictable: 0,
        affinity_violations: vec![0; templates],
        low_utilization: None,
        node_fit: false,
    };
    let priority_of_class = |name: &str| {
        objects.iter().find_map(|o| match &o.body {
            Body::PriorityClass { value, .. } if o.id.name == name && !o.shadowed => Some(i64::from(*value)),
            _ => None,
        })
    };
    let default_priority = objects
        .iter()
        .find_map(|o| match &o.body {
            Body::PriorityClass {
                value,
                global_default: true,
            } if !o.shadowed => Some(i64::from(*value)),
            _ => None,
        })
        .unwrap_or(0);
    // Each template's pod priority, as the Priority admission plugin resolves it.
    let priorities: Vec<i64> = workloads
        .iter()
        .map(|&w| {
            let spec = &objects[w].workload().expect("a workload").template.spec;
            spec.priority_class_name
                .as_ref()
                .and_then(|p| priority_of_class(&p.value))
                .unwrap_or(default_priority)
        })
        .collect();
    fill_pod_identities(&mut ir, objects, workloads, nodes, &priorities);
    for (profile, plugin) in policy.plugins() {
        // thresholdPriority(ClassName); by default system-cluster-critical's value.
        let threshold = profile
            .evictor
            .priority_threshold_value
            .map(i64::from)
            .or_else(|| {
                profile
                    .evictor
                    .priority_threshold_name
                    .as_deref()
                    .and_then(priority_of_class)
            })
            .unwrap_or(SYSTEM_CRITICAL_PRIORITY);
        let excluded_kinds: &[String] = match &plugin.args {
            PluginArgs::RemoveDuplicates { exclude_owner_kinds } => exclude_owner_kinds,
            _ => &[],
        };
        let evictable = workloads.iter().enumerate().fold(0u32, |mask, (i, &w)| {
            let o = &objects[w];
            let workload = o.workload().expect("a workload");
            let template = &workload.template;
            let owners = owners_of(o, workload);
            let critical = priorities[i] >= SYSTEM_CRITICAL_PRIORITY
                || template
                    .spec
                    .priority_class_name
                    .as_ref()
                    .is_some_and(|p| p.value.starts_with("system-"));
            let priority = priorities[i];
            // DefaultEvictor's constraints (pkg/framework/plugins/defaultevictor): owned, not by a
            // DaemonSet, not a mirror or static pod, no local storage (unless allowed), no PVC
            // under ignorePvcPods.
            let owned = !owners.is_empty() && !owners.iter().any(|(kind, _)| kind == "DaemonSet");
            let mirror = template.annotations.contains_key("kubernetes.io/config.mirror");
            let static_pod = template
                .annotations
                .get("kubernetes.io/config.source")
                .is_some_and(|s| s != "api");
            let admitted = owned
                && !mirror
                && !static_pod
                && (!template.spec.volumes.local_storage || profile.evictor.evict_local_storage_pods)
                && (!template.spec.volumes.persistent_claim || !profile.evictor.ignore_pvc_pods)
                && !owners.iter().any(|(kind, _)| excluded_kinds.contains(kind))
                && (!critical || profile.evictor.evict_system_critical_pods)
                && (priority < threshold || profile.evictor.evict_system_critical_pods)
                && plugin.namespaces.admits(o.namespace())
                && plugin
                    .label_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&workload.template.labels))
                && profile
                    .evictor
                    .label_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&workload.template.labels));
            if admitted { mask | (1 << (i + 1)) } else { mask }
        });
        ir.node_fit |= profile.evictor.node_fit;
        match (plugin.name.value.as_str(), &plugin.args) {
            ("RemoveDuplicates", _) => {
                spans[1].get_or_insert(plugin.name.span);
                ir.remove_duplicates = true;
                ir.duplicates_evictable |= evictable;
            }
            ("RemovePodsViolatingTopologySpreadConstraint", args) => {
                spans[2].get_or_insert(plugin.name.span);
                ir.spread = true;
                ir.spread_evictable |= evictable;
                if let PluginArgs::TopologySpread {
                    constraints,
                    topology_balance_node_fit,
                } = args
                {
                    ir.spread_hard |= constraints.contains(&WhenUnsatisfiable::DoNotSchedule);
                    ir.spread_soft |= constraints.contains(&WhenUnsatisfiable::ScheduleAnyway);
                    ir.balance_node_fit |= *topology_balance_node_fit;
                } else {
                    ir.spread_hard = true;
                    ir.balance_node_fit = true;
                }
            }
            (
                "RemovePodsViolatingNodeTaints",
                PluginArgs::NodeTaints {
                    excluded_taints,
                    included_taints,
                    include_prefer_no_schedule,
                },
            ) => {
                spans[3].get_or_insert(plugin.name.span);
                ir.taints = true;
                ir.taints_evictable |= evictable;
                for (i, &w) in workloads.iter().enumerate() {
                    let spec = &objects[w].workload().expect("a workload").template.spec;
                    ir.taint_violations[i + 1] |= bitmask(nodes.iter().map(|(_, _, pool)| {
                        pool.taints.iter().any(|t| {
                            let effect_counts = t.effect == TaintEffect::NoSchedule
                                || (*include_prefer_no_schedule && t.effect == TaintEffect::PreferNoSchedule);
                            // `key` or `key=value`, as the plugin's args write them.
                            let named = |list: &[String]| {
                                list.iter()
                                    .any(|e| *e == t.key || *e == format!("{}={}", t.key, t.value))
                            };
                            effect_counts
                                && !named(excluded_taints)
                                && (included_taints.is_empty() || named(included_taints))
                                && !spec.tolerations.iter().any(|tol| tol.tolerates(t))
                        })
                    }));
                }
            }
            ("RemovePodsViolatingNodeAffinity", PluginArgs::NodeAffinity { required, preferred }) => {
                spans[4].get_or_insert(plugin.name.span);
                ir.affinity_required |= *required;
                ir.affinity_preferred |= *preferred;
                ir.affinity_evictable |= evictable;
                for (i, &w) in workloads.iter().enumerate() {
                    let spec = &objects[w].workload().expect("a workload").template.spec;
                    ir.affinity_violations[i + 1] |= bitmask(
                        nodes
                            .iter()
                            .map(|(name, labels, _)| !matches_required_affinity(spec, name, labels)),
                    );
                }
            }
            (
                "LowNodeUtilization",
                PluginArgs::NodeUtilization {
                    thresholds,
                    target_thresholds,
                    number_of_nodes,
                    ..
                },
            ) => {
                spans[5].get_or_insert(plugin.name.span);
                let percents = |m: &std::collections::BTreeMap<String, i64>| {
                    ["cpu", "memory", "pods"].map(|r| m.get(r).copied().unwrap_or(100))
                };
                let low = ir.low_utilization.get_or_insert(IrLowUtilization {
                    thresholds: percents(thresholds),
                    targets: percents(target_thresholds),
                    number_of_nodes: i64::from(*number_of_nodes),
                    evictable: 0,
                });
                low.evictable |= evictable;
            }
            _ => {}
        }
    }
    let any = ir.remove_duplicates
        || ir.spread
        || ir.taints
        || ir.affinity_required
        || ir.affinity_preferred
        || ir.low_utilization.is_some();
    any.then_some((ir, spans))
}

/// The owners of a workload's pods as `(kind, name)`: a Deployment's pods belong to its
/// ReplicaSet, a bare Pod to its `ownerReferences`.
fn owners_of(object: &Object, workload: &crate::manifest::Workload) -> Vec<(String, String)> {
    let name = object.id.name.clone();
    match workload.kind {
        WorkloadKind::Pod => workload
            .template
            .owners
            .iter()
            .map(|o| (o.kind.clone(), o.name.clone()))
            .collect(),
        WorkloadKind::Deployment => vec![("ReplicaSet".to_string(), name)],
        WorkloadKind::ReplicaSet => vec![("ReplicaSet".to_string(), name)],
        WorkloadKind::ReplicationController => vec![("ReplicationController".to_string(), name)],
        WorkloadKind::StatefulSet => vec![("StatefulSet".to_string(), name)],
        WorkloadKind::DaemonSet => vec![("DaemonSet".to_string(), name)],
    }
}

/// What the descheduler's plugins tell pods apart by, per template: the nodes NodeFit accepts
/// statically, RemoveDuplicates' owner keys and key lists (removeduplicates.go: a key is
/// `namespace/ownerKind/ownerName/image` per owner and container), and the order
/// RemovePodsViolatingTopologySpreadConstraint sorts a domain's pods in.
fn fill_pod_identities(
    ir: &mut IrDescheduler,
    objects: &[Object],
    workloads: &[usize],
    nodes: &[(String, Labels, &NodePool)],
    priorities: &[i64],
) {
    use std::collections::BTreeMap;
    let mut owner_keys: BTreeMap<(String, String, String, String), u32> = BTreeMap::new();
    let mut key_lists: BTreeMap<Vec<String>, u32> = BTreeMap::new();
    let mut ranks: Vec<(bool, i64)> = Vec::new();
    for (i, &w) in workloads.iter().enumerate() {
        let t = i + 1;
        let object = &objects[w];
        let workload = object.workload().expect("a workload");
        let spec = &workload.template.spec;
        ir.fit_nodes[t] = bitmask(nodes.iter().map(|(name, labels, pool)| {
            matches_required_affinity(spec, name, labels) && tolerates_for_scheduling(&spec.tolerations, &pool.taints)
        }));
        let namespace = object.namespace().to_string();
        let mut images: Vec<&str> = spec.containers.iter().map(|c| c.image.as_str()).collect();
        images.sort_unstable();
        let owners = owners_of(object, workload);
        let mut list = Vec::new();
        for (kind, name) in &owners {
            let key = (namespace.clone(), kind.clone(), name.clone(), images.join("#"));
            let next = owner_keys.len() as u32 + 1;
            let id = *owner_keys.entry(key).or_insert(next);
            // Keys past the 31st do not fit the model's bitmask; their pods are never counted.
            if id < 32 {
                ir.duplicate_keys[t] |= 1 << id;
            }
            list.extend(images.iter().map(|image| format!("{namespace}/{kind}/{name}/{image}")));
        }
        list.sort();
        if !owners.is_empty() && ir.duplicate_keys[t] != 0 {
            let next = key_lists.len() as u32 + 1;
            ir.duplicate_lists[t] = *key_lists.entry(list).or_insert(next);
        }
        let with_selector = !spec.node_selector.is_empty()
            || spec.affinity.node.required.is_some()
            || !spec.affinity.node.preferred.is_empty();
        ranks.push((!with_selector, priorities[i]));
    }
    ir.duplicate_key_count = (owner_keys.len() as u32).min(31);
    let mut order = ranks.clone();
    order.sort();
    order.dedup();
    for (i, key) in ranks.iter().enumerate() {
        ir.eviction_rank[i + 1] = order.iter().position(|k| k == key).unwrap_or(0) as u32;
    }
    ir.max_rank = order.len().saturating_sub(1) as u32;
}

/// The value of the system-cluster-critical PriorityClass: the DefaultEvictor's threshold when
/// the policy sets none.
const SYSTEM_CRITICAL_PRIORITY: i64 = 2_000_000_000;

/// An IntOrString field as the model stores it: a count, or a percentage negated.
fn encode(v: crate::manifest::quantity::IntOrPercent) -> i64 {
    use crate::manifest::quantity::IntOrPercent;
    match v {
        IntOrPercent::Int(i) => i64::from(i),
        IntOrPercent::Percent(p) => -i64::from(p),
    }
}

fn rollout_of(workload: &crate::manifest::Workload) -> Option<IrRollout> {
    use crate::manifest::workload::UpdateStrategy;
    if workload.kind == WorkloadKind::StatefulSet {
        return match &workload.strategy {
            UpdateStrategy::RollingUpdate { partition, .. } => Some(IrRollout {
                recreate: false,
                partition: Some(partition.as_ref().map_or(0, |p| i64::from(p.value))),
                max_surge: 0,
                max_unavailable: 1,
            }),
            _ => None,
        };
    }
    if workload.kind != WorkloadKind::Deployment {
        return None;
    }
    Some(match &workload.strategy {
        // Recreate takes every old pod down before the new ones start: the downtime is the
        // strategy's documented choice, so availability may dip by all replicas meanwhile
        // (min-replicas-available's bound during the rollout).
        UpdateStrategy::Recreate { .. } => IrRollout {
            recreate: true,
            partition: None,
            max_surge: 0,
            max_unavailable: encode(crate::manifest::quantity::IntOrPercent::Percent(100)),
        },
        UpdateStrategy::RollingUpdate {
            max_surge,
            max_unavailable,
            ..
        } => IrRollout {
            recreate: false,
            partition: None,
            max_surge: encode(max_surge.value),
            max_unavailable: encode(max_unavailable.value),
        },
        _ => return None,
    })
}

/// maxSurge resolved against `replicas` (rounded up).
fn surge_at(workload: &crate::manifest::Workload, replicas: i64) -> usize {
    use crate::manifest::workload::UpdateStrategy;
    match &workload.strategy {
        UpdateStrategy::RollingUpdate { max_surge, .. } => max_surge
            .value
            .scaled(replicas.clamp(0, i64::from(i32::MAX)) as i32, true)
            .max(0) as usize,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Diagnostics;
    use crate::source::SourceMap;
    use crate::units::Member;

    #[test]
    fn memory_unit_is_mib_unless_quantities_need_less() {
        // Manifests in Mi and Gi: MiB, as before.
        assert_eq!(memory_unit([16 * 1024 * MIB, 512 * MIB, 200 * MIB].into_iter()), MIB);
        // Byte quantities (upstream's test pods): exact.
        assert_eq!(memory_unit([20, 19, 5].into_iter()), 1);
        // 1.5G (decimal) on a 512 GiB node: as fine as 32-bit arithmetic allows.
        let unit = memory_unit([1_500_000_000, 512 * 1024 * MIB].into_iter());
        assert!(unit > 1 && (512 * 1024 * MIB) / unit <= 1 << 21, "{unit}");
    }

    #[test]
    fn scalar_unit_keeps_counts_exact_and_bytes_in_range() {
        // Device counts: exact.
        assert_eq!(scalar_unit([1, 2, 8].into_iter()), 1);
        // Ephemeral storage in GiB: the largest power of two dividing them.
        let gib = 1024 * MIB;
        assert_eq!(scalar_unit([100 * gib, 10 * gib].into_iter()), 2 * gib);
        // An odd byte count on a large disk: coarse enough for 32-bit sums.
        let unit = scalar_unit([1_000_000_007, 500 * gib].into_iter());
        assert!((500 * gib) / unit <= 1 << 24, "{unit}");
    }

    fn hpa(behavior: &str) -> crate::manifest::HorizontalPodAutoscaler {
        let text = format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  minReplicas: 1\n  maxReplicas: 10\n  metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}}}]\n{behavior}"
        );
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let (_, loaded) = crate::manifest::load_text(&mut sources, "hpa.yaml", &text, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        match &loaded.objects[0].body {
            Body::HorizontalPodAutoscaler(h) => h.as_ref().clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn legacy_scale_up_limit_is_twice_current_or_four() {
        // horizontal_test.go TestConvertDesiredReplicasWithRules: calculateScaleUpLimit(3) = 6.
        let (up, down) = scaling_limits(&hpa(""), 10);
        assert_eq!(up[3], 6);
        assert_eq!(up[1], 4);
        assert_eq!(down[7], 0);
    }

    #[test]
    fn behavior_policies_follow_the_upstream_cases() {
        let rules = "    stabilizationWindowSeconds: 300\n    selectPolicy: Min\n    policies:\n    - {type: Pods, value: 2, periodSeconds: 60}\n    - {type: Percent, value: 50, periodSeconds: 60}\n";
        let h = hpa(&format!("  behavior:\n   scaleUp:\n{rules}   scaleDown:\n{rules}").replace("\n    ", "\n     "));
        let (up, down) = scaling_limits(&h, 10);
        // TestCalculateScaleUpLimitWithScalingRules: current 1 → 2.
        assert_eq!(up[1], 2);
        // TestCalculateScaleDownLimitWithBehaviors: current 5 → 3.
        assert_eq!(down[5], 3);
    }

    #[test]
    fn behavior_defaults_and_disabled_directions() {
        // Defaults: up max(current + 4, 2 × current); down to 0 at once.
        let h = hpa("  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60}\n");
        let (up, down) = scaling_limits(&h, 10);
        assert_eq!((up[1], up[6]), (5, 12));
        assert_eq!(down[6], 0);
        let h = hpa("  behavior:\n    scaleDown: {selectPolicy: Disabled}\n");
        let (_, down) = scaling_limits(&h, 10);
        assert_eq!(down[6], 6);
    }

    /// The descheduler IR of some manifests on two plain nodes.
    fn descheduler_of(manifests: &str, evictor: &str, plugin: &str, args: &str) -> IrDescheduler {
        let policy = format!(
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n  - {{name: DefaultEvictor, args: {{{evictor}}}}}\n  - {{name: {plugin}, args: {{{args}}}}}\n  plugins: {{balance: {{enabled: [{plugin}]}}}}\n"
        );
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let text = format!("{manifests}\n---\n{policy}");
        let (_, loaded) = crate::manifest::load_text(&mut sources, "d.yaml", &text, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        let objects = loaded.objects;
        let workloads: Vec<usize> = (0..objects.len())
            .filter(|&i| objects[i].workload().is_some())
            .collect();
        let mut members: Vec<Member> = workloads
            .iter()
            .map(|&object| Member {
                object,
                role: Role::Workload,
            })
            .collect();
        members.push(Member {
            object: objects.len() - 1,
            role: Role::DeschedulerPolicy,
        });
        let unit = Unit {
            id: "u".into(),
            name: "u".into(),
            scope: 0,
            members,
            node_pools: Vec::new(),
            checks: Vec::new(),
            edges: Vec::new(),
        };
        let config = Config::default_for(std::path::Path::new("."), &mut sources);
        let pool = &config.cluster.pools[0];
        let nodes = vec![
            ("n1".to_string(), Labels::default(), pool),
            ("n2".to_string(), Labels::default(), pool),
        ];
        descheduler(&unit, &objects, &workloads, &nodes).expect("a policy").0
    }

    const OWNED: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs}]}\nspec: {containers: [{name: c, image: x}]}";

    /// A Pod from a snapshot taken while it was being deleted starts terminating on its node,
    /// holding its resources until the kubelet is done; without a node it is not placed.
    #[test]
    fn a_pod_with_a_deletion_timestamp_starts_terminating() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: old, deletionTimestamp: '2024-01-01T00:00:00Z'}\nspec: {nodeName: zone-b-1, containers: [{name: c, image: x}]}\n";
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let (_, loaded) = crate::manifest::load_text(&mut sources, "p.yaml", text, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        let config = Config::default_for(std::path::Path::new("."), &mut sources);
        let unit = Unit {
            id: "u".into(),
            name: "u".into(),
            scope: 0,
            members: vec![Member {
                object: 0,
                role: Role::Workload,
            }],
            node_pools: config.cluster.pools.iter().map(|p| p.name.clone()).collect(),
            checks: Vec::new(),
            edges: Vec::new(),
        };
        let (ir, names) = build(&unit, &loaded.objects, &config, &Topology::current(&config)).unwrap();
        let node = names.nodes.iter().position(|n| n == "zone-b-1").unwrap() + 1;
        assert!(ir.workloads[0].terminating);
        assert_eq!(ir.workloads[0].initial, vec![(node, 1)]);
        let input = super::super::input(&ir, &super::super::Shape::of([&ir]), &[]);
        assert!(
            input.contains(&format!(
                "{} 0 1\n",
                super::super::input::TABLES
                    .iter()
                    .position(|t| *t == "kubelet_work")
                    .unwrap()
                    + 1
            )),
            "{input}"
        );
    }

    #[test]
    fn default_evictor_admits_owned_pods_only() {
        let manifests = format!(
            "{OWNED}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: bare}}\nspec: {{containers: [{{name: c, image: x}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: ds, ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: d}}]}}\nspec: {{containers: [{{name: c, image: x}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: mirror, annotations: {{kubernetes.io/config.mirror: m}}, ownerReferences: [{{apiVersion: v1, kind: Node, name: n1}}]}}\nspec: {{containers: [{{name: c, image: x}}]}}"
        );
        let d = descheduler_of(&manifests, "", "RemoveDuplicates", "");
        // Only template 1 (owned by a ReplicaSet): bare, DaemonSet-owned and mirror pods stay.
        assert_eq!(d.duplicates_evictable, 1 << 1);
    }

    #[test]
    fn local_storage_needs_evict_local_storage_pods() {
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: x}]\n      volumes: [{name: tmp, emptyDir: {}}]";
        assert_eq!(
            descheduler_of(deployment, "", "RemoveDuplicates", "").duplicates_evictable,
            0
        );
        let d = descheduler_of(deployment, "evictLocalStoragePods: true", "RemoveDuplicates", "");
        assert_eq!(d.duplicates_evictable, 1 << 1);
        // A Deployment's pods are owned by a ReplicaSet: excludeOwnerKinds names that kind.
        let d = descheduler_of(
            deployment,
            "evictLocalStoragePods: true",
            "RemoveDuplicates",
            "excludeOwnerKinds: [ReplicaSet]",
        );
        assert_eq!(d.duplicates_evictable, 0);
    }

    #[test]
    fn duplicates_share_owner_and_images() {
        let other_image = OWNED.replace("name: a", "name: c").replace("image: x", "image: y");
        let manifests = format!(
            "{OWNED}\n---\n{}\n---\n{other_image}",
            OWNED.replace("name: a", "name: b")
        );
        let d = descheduler_of(&manifests, "", "RemoveDuplicates", "");
        assert_eq!(d.duplicate_lists[1], d.duplicate_lists[2]);
        assert_ne!(d.duplicate_lists[1], d.duplicate_lists[3]);
        assert_ne!(d.duplicate_keys[1], d.duplicate_keys[3]);
        assert_eq!(d.fit_nodes[1], 0b110);
    }
}

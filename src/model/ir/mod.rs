//! The intermediate representation of one unit at one topology: integers only.
//!
//! Everything that does not change while the model runs is evaluated here, in Rust, against
//! the manifests: label selectors, node affinity, taints, spread domains, score tables. The
//! PROMELA model receives indices, amounts and bitmasks; no name, label or value from a manifest
//! reaches it as text. `Names` keeps the way back, for counterexamples.
//!
//! `build` assembles the IR; its parts live beside it, split as `templates/controllers/` is:
//! `topology` (nodes, pools, domains), `scheduling` (per-template filters, scores, spread and
//! affinity), `workloads` (replicas, rollouts, disruption budgets), `autoscaling` (HPAs) and
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

mod autoscaling;
mod descheduler;
mod scheduling;
mod topology;
mod volumes;
mod workloads;

pub use volumes::{IrVolume, IrVolumes};

pub use autoscaling::*;
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

/// Build the IR of `unit` on `topology`. A unit whose HPAs could scale it past the pod slots
/// one model holds (`maxReplicas: 10000`) is built with their `maxReplicas` lowered until it
/// fits, first to `podsPerNode` per node of the topology (the bound the search already puts
/// on starting replicas): what the lowered autoscalers can reach is still searched, and a
/// violation there still found, where before the whole topology went unexplored. The cap is
/// in `Names::replica_cap`, for the search to say.
pub fn build(unit: &Unit, objects: &[Object], config: &Config, topology: &Topology) -> Result<(Ir, Names), IrError> {
    let needed = match build_capped(unit, objects, config, topology, None) {
        Err(IrError::TooManyPods(needed)) => needed,
        built => return built,
    };
    // Never below an HPA's minReplicas: the model would then start from other replicas.
    let floor = unit
        .members
        .iter()
        .filter_map(|m| match &objects[m.object].body {
            Body::HorizontalPodAutoscaler(h) if m.role == Role::Autoscaler => {
                Some(i64::from(h.min_replicas.value.max(1)))
            }
            _ => None,
        })
        .max()
        .unwrap_or(1);
    let per_node = i64::from(config.scaling.pods_per_node.max(1));
    let mut cap =
        (per_node * i64::from(topology_size(topology).max(1))).clamp(floor, MAX_AUTOSCALER_REPLICAS.max(floor));
    loop {
        match build_capped(unit, objects, config, topology, Some(cap)) {
            Ok((ir, mut names)) => {
                names.replica_cap = Some(cap);
                return Ok((ir, names));
            }
            Err(IrError::TooManyPods(_)) if cap / 2 >= floor => cap /= 2,
            Err(_) => return Err(IrError::TooManyPods(needed)),
        }
    }
}

fn build_capped(
    unit: &Unit,
    objects: &[Object],
    config: &Config,
    topology: &Topology,
    replica_cap: Option<i64>,
) -> Result<(Ir, Names), IrError> {
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
            let cap = replica_cap
                .unwrap_or(MAX_AUTOSCALER_REPLICAS)
                .min(MAX_AUTOSCALER_REPLICAS);
            let min = i64::from(h.min_replicas.value.max(1)).min(cap);
            let max = i64::from(h.max_replicas.value.max(1)).min(cap);
            let (scale_up, scale_down) = scaling_rules(h);
            Some(IrAutoscaler {
                min,
                max,
                target,
                metrics,
                behavior: h.behavior,
                scale_up,
                scale_down,
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
        let rollout =
            rollout_of(workload).filter(|_| unit.checks.contains(&CheckId::RolloutCompletes) || template_changed);
        // A StatefulSet's pod k lives in the k-th slot (its ordinal): its replacement, after a
        // rollout's deletion or a failed node's, waits for that slot (controllers/deployment.pml).
        // Slots beyond its replicas would stay FREE and only lengthen every state.
        let ordinal_slots = workload.kind == WorkloadKind::StatefulSet;
        // A rollout keeps old and new pods side by side: up to maxSurge more, and terminating
        // pods hold their slots until the kubelet is done.
        let rollout_room = if rollout.is_some() && !ordinal_slots {
            max_pods.max(0) as usize + surge_at(workload, max_pods)
        } else {
            0
        };
        // Pods deleted on a failed node keep their slots until the node is back, while their
        // replacements need slots of their own.
        // DaemonSet pods tolerate unreachable nodes: a failure never deletes them.
        let failure_room = node_failure
            .as_ref()
            .filter(|_| workload.kind != WorkloadKind::DaemonSet && !ordinal_slots)
            .map_or(0, |f| f.count as usize * node_capacity)
            .min(max_pods.max(0) as usize);
        let slots =
            (max_pods.max(0) as usize).min(pods_capacity.max(1)) + rollout_room.min(pods_capacity) + failure_room;
        let live = previous.map_or(desired, |p| i64::from(p.replicas.unwrap_or(1)));
        let replicas = match &autoscaler {
            // `max(min)`: an HPA the reader let through with max below min must not panic here.
            Some(a) => live.clamp(a.min, a.max.max(a.min)),
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
            batch: workload.batch(),
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
    let labels: Vec<Labels> = node_labels.iter().map(|(_, l, _)| l.clone()).collect();
    let volumes = volumes::build(objects, &workload_objects, &labels).map(|(v, spans)| {
        names.volume_spans = spans;
        v
    });

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
    let param = |check: CheckId, name: &str| config.checks.params.get(&check).and_then(|p| p.get(name)).copied();
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
                .map(|(i, w)| match param(CheckId::MinReplicasAvailable, "min") {
                    // Nothing recreates a bare Pod: Kubernetes promises it no availability.
                    // Nor to pods that run to completion: no check judges them.
                    _ if w.bare || w.batch => 0,
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
            probe: None,
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
            min_resettable: param(CheckId::MinReplicasAvailable, "min").is_none(),
            disruption_budgets,
            node_failure,
            node_drain: config.has_event(|e| matches!(e, EnvironmentEvent::NodeDrain)),
            apply: (apply_replicas.iter().any(|r| *r >= 0) || apply_templates.iter().any(|t| *t)).then_some(IrApply {
                replicas: apply_replicas,
                template_changed: apply_templates,
            }),
            params: check_params(config),
            cluster_autoscaler,
            stale_reads: config.stale_reads.as_ref().map_or(0, |s| i64::from(s.value)),
            controller_lag: config.controller_lag.is_some(),
            symmetry: config.scaling.symmetry,
            volumes,
        },
        names,
    ))
}

#[cfg(test)]
mod tests;

/// Every check's params with a value: the config's, else the check's default.
fn check_params(config: &Config) -> BTreeMap<CheckId, BTreeMap<&'static str, i64>> {
    crate::checks::CHECKS
        .iter()
        .map(|check| {
            let set = config.checks.params.get(&check.id);
            let values = check
                .params
                .iter()
                .filter_map(|p| {
                    let value = set.and_then(|s| s.get(p.name)).copied().or(p.default)?;
                    Some((p.name, value.max(p.minimum)))
                })
                .collect();
            (check.id, values)
        })
        .collect()
}

//! Workloads as the controllers see them: replicas, rollout strategy, disruption budgets,
//! environment events that name them.

use super::*;

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
    /// Pods that run to completion (Jobs, CronJobs, bare Pods with `restartPolicy` Never or
    /// OnFailure): they take room for the whole trace, and no check judges them. Their
    /// completion is not modelled: a claim about them holds while they run.
    pub batch: bool,
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
pub(super) fn disruption_budgets(
    unit: &Unit,
    objects: &[Object],
    workloads: &[usize],
) -> (Vec<IrDisruptionBudget>, Vec<usize>) {
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

/// An IntOrString field as the model stores it: a count, or a percentage negated.
pub(super) fn encode(v: crate::manifest::quantity::IntOrPercent) -> i64 {
    use crate::manifest::quantity::IntOrPercent;
    match v {
        IntOrPercent::Int(i) => i64::from(i),
        IntOrPercent::Percent(p) => -i64::from(p),
    }
}

pub(super) fn rollout_of(workload: &crate::manifest::Workload) -> Option<IrRollout> {
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
pub(super) fn surge_at(workload: &crate::manifest::Workload, replicas: i64) -> usize {
    use crate::manifest::workload::UpdateStrategy;
    match &workload.strategy {
        UpdateStrategy::RollingUpdate { max_surge, .. } => max_surge
            .value
            .scaled(replicas.clamp(0, i64::from(i32::MAX)) as i32, true)
            .max(0) as usize,
        _ => 0,
    }
}

/// What every workload of a unit is built against: the unit, the cluster of the topology and
/// the faults that take room (`build_capped` gathers it once).
pub(super) struct WorkloadInputs<'a> {
    pub unit: &'a Unit,
    pub objects: &'a [Object],
    pub config: &'a Config,
    pub environment: &'a crate::config::Environment,
    pub topology: &'a Topology,
    pub replica_cap: Option<i64>,
    pub nodes: &'a [IrNode],
    pub node_labels: &'a [(String, Labels, &'a NodePool)],
    pub node_names: &'a [String],
    pub node_failure: Option<&'a IrNodeFailure>,
    /// Pods the topology can run at once; replicas beyond it could never be placed.
    pub pods_capacity: usize,
    /// The most pods one node runs.
    pub node_capacity: usize,
}

/// The IR of the `wi`-th workload of the unit (object `w`), its pods in the slots from
/// `next_slot`; with the replicas the `apply` event sets (-1: it leaves them) and whether it
/// changes the pod template.
pub(super) fn workload(inputs: &WorkloadInputs, wi: usize, w: usize, next_slot: usize) -> (IrWorkload, i64, bool) {
    let config = inputs.config;
    let workload = inputs.objects[w].workload().expect("a workload member");
    let hpa = inputs.unit.autoscaler_of(inputs.objects, w).map(|(_, h)| h);
    let daemon_nodes = daemon_nodes(workload, inputs.nodes, inputs.node_labels);
    // A bare Pod being deleted where its nodeName puts it.
    let deleting_on: Option<(usize, i64)> = (workload.kind == WorkloadKind::Pod && workload.template.deleting)
        .then_some(workload.template.spec.node_name.as_ref())
        .flatten()
        .and_then(|n| inputs.node_names.iter().position(|name| *name == n.value))
        .map(|i| (i + 1, 1));
    let desired = match inputs.topology.replicas.get(wi).copied().flatten() {
        Some(r) => i64::from(r),
        None if workload.kind == WorkloadKind::DaemonSet => daemon_nodes.len() as i64,
        None => i64::from(workload.desired_replicas()),
    };
    let request = workload.template.spec.effective_request().cpu_millis;
    let autoscaler = hpa.and_then(|h| ir_autoscaler(h, request, inputs.replica_cap));
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
    // The previous revision runs only until an `apply` applies the new one: a search without
    // that event starts from the new revision.
    let applies = config.has_event(|e| matches!(e, crate::config::EnvironmentEvent::Apply { .. }));
    let previous = (inputs.environment.previous_revision.as_ref())
        .filter(|_| applies)
        .and_then(|p| p.iter().find(|pw| pw.id == inputs.objects[w].id));
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
    let rollout = rollout_of(workload).filter(|_| {
        crate::checks::any(&inputs.unit.checks, |c| {
            c.applies == crate::checks::Applies::WithRollout
        }) || template_changed
    });
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
    let failure_room = inputs
        .node_failure
        .as_ref()
        .filter(|_| workload.kind != WorkloadKind::DaemonSet && !ordinal_slots)
        .map_or(0, |f| f.count as usize * inputs.node_capacity)
        .min(max_pods.max(0) as usize);
    let slots = (max_pods.max(0) as usize).min(inputs.pods_capacity.max(1))
        + rollout_room.min(inputs.pods_capacity)
        + failure_room;
    let live = previous.map_or(desired, |p| i64::from(p.replicas.unwrap_or(1)));
    let replicas = match &autoscaler {
        // `max(min)`: an HPA the reader let through with max below min must not panic here.
        Some(a) => live.clamp(a.min, a.max.max(a.min)),
        None => live,
    }
    .min(slots as i64);
    let steady = config
        .workloads
        .get(&inputs.objects[w].id)
        .and_then(|a| a.usage)
        .filter(|_| request > 0)
        .map_or(100, |u| (u.cpu_millis * 100 + request - 1) / request);
    let load_levels = load_levels(config, &inputs.objects[w].id.to_string(), &autoscaler, steady);
    let startup = config
        .workloads
        .get(&inputs.objects[w].id)
        .and_then(|a| a.startup.as_ref());
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
    let built = IrWorkload {
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
                .filter(|p| p.workload == inputs.objects[w].id)
                .filter_map(|p| {
                    let node = inputs.node_names.iter().position(|n| *n == p.node)? + 1;
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
    };
    (built, replicas_after_apply.min(slots as i64), template_changed)
}

/// The nodes (1-based) a DaemonSet runs a pod on: one per node its pods may run on
/// (nodeSelector, required node affinity and NoSchedule/NoExecute taints;
/// pkg/controller/daemon NodeShouldRunDaemonPod). Empty for other workloads.
pub(super) fn daemon_nodes(
    workload: &crate::manifest::Workload,
    nodes: &[IrNode],
    node_labels: &[(String, Labels, &NodePool)],
) -> Vec<u32> {
    if workload.kind == WorkloadKind::DaemonSet {
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
    }
}

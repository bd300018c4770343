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

//! A candidate fix applied to a copy of the analysis: the edited objects, unit members and
//! previous revision, on the cluster of the counterexample.

use super::*;

pub(super) fn apply(
    objects: &mut Vec<Object>,
    environment: &mut crate::config::Environment,
    members: &mut Vec<Member>,
    edit: &Edit,
) {
    match *edit {
        Edit::CpuRequest { object, container, to } => {
            if let Some(r) = spec_mut(&mut objects[object])
                .and_then(|s| s.containers.get_mut(container))
                .and_then(|c| c.requests.cpu_millis.as_mut())
            {
                r.value = to;
            }
        }
        Edit::AddBudget { object, replicas } => add_budget(objects, members, object, replicas),
        Edit::ForgetAppliedReplicas { object } => {
            let id = &objects[object].id;
            if let Some(p) = environment
                .previous_revision
                .as_mut()
                .and_then(|p| p.iter_mut().find(|pw| pw.id == *id))
            {
                p.replicas = None;
            }
        }
        Edit::ScheduleAnyway { object, index } => {
            if let Some(c) = spec_mut(&mut objects[object]).and_then(|s| s.topology_spread_constraints.get_mut(index)) {
                c.when_unsatisfiable.value = WhenUnsatisfiable::ScheduleAnyway;
            }
        }
        Edit::MaxSkew { object, index, to } => {
            if let Some(c) = spec_mut(&mut objects[object]).and_then(|s| s.topology_spread_constraints.get_mut(index)) {
                c.max_skew.value = to;
            }
        }
        Edit::PreferAntiAffinity { object, index } => {
            if let Some(anti) = spec_mut(&mut objects[object]).map(|s| &mut s.affinity.pod_anti)
                && index < anti.required.len()
            {
                let term = anti.required.remove(index);
                anti.preferred.push(WeightedPodAffinityTerm { weight: 100, term });
            }
        }
        Edit::BudgetAllowsOne { object } => {
            if let Body::PodDisruptionBudget(p) = &mut objects[object].body {
                let span = p
                    .min_available
                    .as_ref()
                    .or(p.max_unavailable.as_ref())
                    .map_or(Span::default(), |f| f.span);
                p.min_available = None;
                p.max_unavailable = Some(Spanned::new(IntOrPercent::Int(1), span));
            }
        }
        Edit::TolerateForever { object, index } => {
            if let Some(t) = spec_mut(&mut objects[object]).and_then(|s| s.tolerations.get_mut(index)) {
                t.toleration_seconds = None;
            }
        }
        Edit::BalanceHardOnly {
            object,
            profile,
            plugin,
        } => {
            if let Body::DeschedulerPolicy(p) = &mut objects[object].body
                && let Some(PluginArgs::TopologySpread { constraints, .. }) = p
                    .profiles
                    .get_mut(profile)
                    .and_then(|pr| pr.plugins.get_mut(plugin))
                    .map(|pl| &mut pl.args)
            {
                *constraints = vec![WhenUnsatisfiable::DoNotSchedule];
            }
        }
        Edit::DisablePlugin {
            object,
            profile,
            plugin,
        } => {
            if let Body::DeschedulerPolicy(p) = &mut objects[object].body
                && let Some(pr) = p.profiles.get_mut(profile)
                && plugin < pr.plugins.len()
            {
                pr.plugins.remove(plugin);
            }
        }
        Edit::HardSpread { object, index } => {
            if let Some(c) = spec_mut(&mut objects[object]).and_then(|s| s.topology_spread_constraints.get_mut(index)) {
                c.when_unsatisfiable.value = WhenUnsatisfiable::DoNotSchedule;
            }
        }
        Edit::WaitForFirstConsumer { object } => {
            if let Body::StorageClass(c) = &mut objects[object].body {
                c.immediate = false;
            }
        }
        Edit::DropNodeName { object } => {
            if let Some(s) = spec_mut(&mut objects[object]) {
                s.node_name = None;
            }
        }
        Edit::DelayReadiness { object, seconds } => {
            if let Some(s) = spec_mut(&mut objects[object]) {
                for c in &mut s.containers {
                    c.readiness_delay_seconds = Some(seconds);
                }
            }
        }
        Edit::DropReplicas { object } => {
            if let Body::Workload(w) = &mut objects[object].body {
                w.replicas = None;
            }
        }
        Edit::OneAtATime { object } => {
            if let Body::Workload(w) = &mut objects[object].body
                && let UpdateStrategy::RollingUpdate {
                    max_surge,
                    max_unavailable,
                    ..
                } = &mut w.strategy
            {
                max_surge.value = IntOrPercent::Int(0);
                max_unavailable.value = IntOrPercent::Int(1);
            }
        }
    }
}

/// A PodDisruptionBudget (`maxUnavailable: 1`) for the pods of workload `object`, a member of
/// the unit; with `replicas`, the workload's count raised so that the budget allows one.
fn add_budget(objects: &mut Vec<Object>, members: &mut Vec<Member>, object: usize, replicas: Option<i32>) {
    let o = &objects[object];
    let Some(w) = o.workload() else { return };
    let budget = Object {
        id: ObjectId {
            kind: "PodDisruptionBudget".into(),
            namespace: o.id.namespace.clone(),
            name: o.id.name.clone(),
        },
        api_version: "policy/v1".into(),
        labels: Default::default(),
        span: o.span,
        embedded: false,
        scope: o.scope,
        shadowed: false,
        invalid: false,
        body: Body::PodDisruptionBudget(Box::new(PodDisruptionBudget {
            min_available: None,
            max_unavailable: Some(Spanned::new(IntOrPercent::Int(1), o.span)),
            selector: w.selector.clone(),
            unhealthy_pod_eviction_policy: UnhealthyPodEvictionPolicy::IfHealthyBudget,
        })),
        ignores: Vec::new(),
    };
    if let (Some(n), Body::Workload(w)) = (replicas, &mut objects[object].body) {
        let span = w.replicas.as_ref().map_or(Span::default(), |r| r.span);
        w.replicas = Some(Spanned::new(n, span));
    }
    members.push(Member {
        object: objects.len(),
        role: Role::DisruptionBudget,
    });
    objects.push(budget);
}

/// What a fix candidate verifies: the analysis's units, objects and config with the edit.
pub(super) struct Edited {
    objects: Vec<crate::manifest::Object>,
    config: Config,
    environment: crate::config::Environment,
    units: Vec<crate::units::Unit>,
}

impl Edited {
    pub(super) fn subject(&self) -> crate::search::Subject<'_> {
        crate::search::Subject {
            units: &self.units,
            objects: &self.objects,
            config: &self.config,
            environment: &self.environment,
        }
    }
}

/// The analysis's units, objects and config with `edit` applied, and the pools at the
/// counterexample's node counts (for `Scale::Current`).
pub(super) fn edited(a: &Analysis, unit: usize, edit: &Edit, at: Option<&crate::model::Topology>) -> Edited {
    let mut objects = a.objects.clone();
    let mut config = a.config.clone();
    let mut environment = a.environment.clone();
    let mut units = a.units.clone();
    // The counterexample's starting replicas first (an autoscaled workload starts where its
    // HPA was held or started, not at the manifests' count), then the edit, which may drop them.
    // Not for a workload the `apply` event rolls out: there `spec.replicas` as written is what
    // the apply does.
    if let Some(t) = at {
        let workloads: Vec<usize> = units[unit].workloads().collect();
        for (&w, n) in workloads.iter().zip(&t.replicas) {
            let id = &objects[w].id;
            if environment
                .previous_revision
                .as_ref()
                .is_some_and(|p| p.iter().any(|pw| pw.id == *id))
            {
                continue;
            }
            if let (Some(n), Body::Workload(wl)) = (n, &mut objects[w].body) {
                let span = wl.replicas.as_ref().map_or(Span::default(), |r| r.span);
                wl.replicas = Some(Spanned::new(*n as i32, span));
            }
        }
    }
    apply(&mut objects, &mut environment, &mut units[unit].members, edit);
    // The edit may change what the pods require of nodes: assumed again for the edited unit.
    crate::units::assumed::reassume(&config.cluster, &objects, &mut units[unit]);
    if let Some(t) = at {
        for (pool, &n) in units[unit]
            .cluster_mut(&mut config)
            .pools
            .iter_mut()
            .zip(&t.nodes_per_pool)
        {
            pool.count = n;
        }
    }
    Edited {
        objects,
        config,
        environment,
        units,
    }
}

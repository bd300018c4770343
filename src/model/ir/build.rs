//! `build`: the IR of a unit at a topology, assembled stage by stage: the nodes, each
//! workload (`workloads`), their volumes, the scheduler's view of each pod template
//! (`scheduling`), the disruption budgets and the descheduler, then the resources in the
//! model's units.

use super::*;
use crate::config::Environment;

/// Build the IR of `unit` on `topology`. A unit whose HPAs could scale it past the pod slots
/// one model holds (`maxReplicas: 10000`) is built with their `maxReplicas` lowered until it
/// fits, first to `podsPerNode` per node of the topology (the bound the search already puts
/// on starting replicas): what the lowered autoscalers can reach is still searched, and a
/// violation there still found, where before the whole topology went unexplored. The cap is
/// in `Names::replica_cap`, for the search to say.
pub fn build(
    unit: &Unit,
    objects: &[Object],
    config: &Config,
    environment: &Environment,
    topology: &Topology,
) -> Result<(Ir, Names), IrError> {
    let needed = match build_capped(unit, objects, (config, environment), topology, None) {
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
        match build_capped(unit, objects, (config, environment), topology, Some(cap)) {
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
    (config, environment): (&Config, &Environment),
    topology: &Topology,
    replica_cap: Option<i64>,
) -> Result<(Ir, Names), IrError> {
    let mut names = Names {
        stale_reads: config.stale_reads.as_ref().map(|s| s.span),
        ..Names::default()
    };
    let Cluster {
        mut nodes,
        node_labels,
        cluster_autoscaler,
    } = cluster(config, topology, &mut names)?;
    let workload_objects: Vec<usize> = unit
        .members
        .iter()
        .filter(|m| m.role == Role::Workload)
        .map(|m| m.object)
        .collect();
    let node_failure = config.events.iter().find_map(|e| match e.value {
        EnvironmentEvent::NodeFailure { count, recover } => Some(IrNodeFailure {
            count: count.min(topology_size(topology)),
            recover,
        }),
        _ => None,
    });
    let node_names = names.nodes.clone();
    let inputs = WorkloadInputs {
        environment,
        unit,
        objects,
        config,
        topology,
        replica_cap,
        nodes: &nodes,
        node_labels: &node_labels,
        node_names: &node_names,
        node_failure: node_failure.as_ref(),
        // Pods the topology can run at once; replicas beyond it could never be placed.
        pods_capacity: nodes.iter().map(|n| n.pods.max(0) as usize).sum(),
        node_capacity: nodes.iter().map(|n| n.pods.max(0) as usize).max().unwrap_or(0),
    };
    let mut workloads = Vec::new();
    let mut next_slot = 1;
    let mut apply_replicas = vec![-1];
    let mut apply_templates = vec![false];
    for (wi, &w) in workload_objects.iter().enumerate() {
        let (built, replicas_after_apply, template_changed) = workload(&inputs, wi, w, next_slot);
        apply_replicas.push(replicas_after_apply);
        apply_templates.push(template_changed);
        names.workloads.push(w);
        next_slot += built.slots;
        workloads.push(built);
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

    let profile = environment.scheduler_profile.clone().unwrap_or_default();
    let mut templates = pod_templates(unit, objects, &workload_objects, &node_labels, &profile, &mut names);
    let scoring = scoring(config, &profile);
    let load_change = config.has_event(|e| matches!(e, EnvironmentEvent::LoadChange { .. }))
        && workloads.iter().any(|w| w.load_levels.len() > 1);
    // Only manifests that write spec.replicas can drift from what the cluster runs.
    let gitops_sync = config.has_event(|e| matches!(e, EnvironmentEvent::GitopsSync))
        && workloads.iter().any(|w| w.manifest_replicas >= 0);
    let availability_bound = crate::checks::availability_bound(&config.checks.params);
    let (disruption_budgets, budget_objects) = disruption_budgets(unit, objects, &workload_objects);
    let descheduler = descheduler(unit, objects, &workload_objects, &node_labels).map(|(d, spans)| {
        names.descheduler_plugins = spans;
        d
    });
    names.disruption_budgets = budget_objects;
    let min_available = min_available(&workloads, &disruption_budgets, availability_bound);
    let rollout_order = rollout_order(&workloads, &templates);
    let scalar_names = scalar_resources(
        objects,
        &workload_objects,
        &profile,
        &node_labels,
        &mut templates,
        &mut nodes,
    )?;
    let scalar_resources = scalar_names.len();
    names.scalar_resources = scalar_names;
    let memory_unit = memory_units(&mut nodes, &mut templates);
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
            min_resettable: availability_bound.is_none(),
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
            events: config
                .events
                .iter()
                .filter_map(|e| match &e.value {
                    EnvironmentEvent::Registered { name, params } => Some((*name, params.clone())),
                    _ => None,
                })
                .collect(),
        },
        names,
    ))
}

/// A topology's nodes: their IR, names and labels (with the pool each is of), and the
/// cluster autoscaler when the config has one and the topology a pool it scales.
struct Cluster<'a> {
    nodes: Vec<IrNode>,
    node_labels: Vec<(String, Labels, &'a NodePool)>,
    cluster_autoscaler: Option<IrClusterAutoscaler>,
}

/// The nodes of `topology`: pool by pool, `<pool>-1`, `<pool>-2`, ... with their labels.
fn cluster<'a>(config: &'a Config, topology: &Topology, names: &mut Names) -> Result<Cluster<'a>, IrError> {
    let mut nodes = Vec::new();
    let mut node_labels: Vec<(String, Labels, &NodePool)> = Vec::new();
    let autoscaler_event = config.events.iter().find_map(|e| match &e.value {
        EnvironmentEvent::ClusterAutoscaler {
            scale_down_utilization, ..
        } => Some(*scale_down_utilization),
        _ => None,
    });
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

    Ok(Cluster {
        nodes,
        node_labels,
        cluster_autoscaler,
    })
}

/// The scheduler's view of each workload's pod template (filters, scores, spread and affinity),
/// with the Services that select its pods (for default spreading).
fn pod_templates(
    unit: &Unit,
    objects: &[Object],
    workload_objects: &[usize],
    node_labels: &[(String, Labels, &NodePool)],
    profile: &SchedulerProfile,
    names: &mut Names,
) -> Vec<IrTemplate> {
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
    for &w in workload_objects {
        let labels = &objects[w].workload().expect("a workload").template.labels;
        let selecting: Vec<&Labels> = services
            .iter()
            .filter(|(namespace, selector)| *namespace == objects[w].namespace() && selects(selector, labels))
            .map(|(_, selector)| *selector)
            .collect();
        let (mut template, hard) = build_template(objects, workload_objects, w, node_labels, profile, &selecting);
        let (terms, described) = affinity_terms(objects, workload_objects, w, node_labels);
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
    templates
}

/// The scoring of the scheduler's profile: its strategy (the config's, else the profile's,
/// else LeastAllocated), shape and plugin weights.
fn scoring(config: &Config, profile: &SchedulerProfile) -> Scoring {
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
    Scoring {
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
    }
}

/// `min-replicas-available`'s bound per workload (index 0 unused): after first reaching it,
/// available replicas stay at least the HPA minimum or spec.replicas, lowered to what a
/// PodDisruptionBudget of the workload alone declares enough; or the `min` param.
fn min_available(
    workloads: &[IrWorkload],
    disruption_budgets: &[IrDisruptionBudget],
    min_param: Option<i64>,
) -> Vec<i64> {
    std::iter::once(0)
        .chain(workloads.iter().enumerate().map(|(i, w)| match min_param {
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
        }))
        .collect()
}

/// The workloads that roll out (1-based), those with hard constraints first ([`Ir::rollout_order`]).
fn rollout_order(workloads: &[IrWorkload], templates: &[IrTemplate]) -> Vec<usize> {
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
    rollout_order
}

/// The scalar resources of the unit (ephemeral storage, hugepages, extended), each in a unit
/// of its own: added to the templates' requests and the nodes' allocatable.
fn scalar_resources(
    objects: &[Object],
    workload_objects: &[usize],
    profile: &SchedulerProfile,
    node_labels: &[(String, Labels, &NodePool)],
    templates: &mut [IrTemplate],
    nodes: &mut [IrNode],
) -> Result<Vec<String>, IrError> {
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
    Ok(scalar_names)
}

/// Memory in the model's unit ([`memory_unit`]), for nodes and templates; the unit.
fn memory_units(nodes: &mut [IrNode], templates: &mut [IrTemplate]) -> i64 {
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
    for n in nodes.iter_mut() {
        n.mem /= memory_unit;
    }
    for t in templates.iter_mut() {
        t.mem = ((t.mem + memory_unit - 1) / memory_unit).min(beyond);
        t.score_mem = ((t.score_mem + memory_unit - 1) / memory_unit).min(beyond);
    }
    memory_unit
}

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

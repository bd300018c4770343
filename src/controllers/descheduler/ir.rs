//! The descheduler policy evaluated against the unit: plugin verdicts per template and node.

use super::*;

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

/// The unit's descheduler policy, as the model runs it: which plugins, and whose pods each may
/// evict. The DefaultEvictor never evicts bare pods, DaemonSet pods or system-critical pods, nor
/// pods at or above its priority threshold.
pub(super) fn descheduler(
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
    let mut ir = IrDescheduler::none(templates);
    let priority_of_class = |name: &str| priority_of_class(objects, name);
    let priorities = pod_priorities(objects, workloads);
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
        let evictable = evictable_by(objects, workloads, &priorities, profile, plugin, threshold);
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
                taint_violations(
                    &mut ir,
                    objects,
                    workloads,
                    nodes,
                    (excluded_taints, included_taints, *include_prefer_no_schedule),
                );
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

/// The templates (bitmask) whose pods `plugin` of `profile` may evict: the DefaultEvictor's
/// filters (its priority `threshold` among them), the plugin's namespaces and label selector.
fn evictable_by(
    objects: &[Object],
    workloads: &[usize],
    priorities: &[i64],
    profile: &crate::manifest::descheduler::DeschedulerProfile,
    plugin: &crate::manifest::descheduler::DeschedulerPlugin,
    threshold: i64,
) -> u32 {
    use crate::manifest::descheduler::PluginArgs;
    let excluded_kinds: &[String] = match &plugin.args {
        PluginArgs::RemoveDuplicates { exclude_owner_kinds } => exclude_owner_kinds,
        _ => &[],
    };
    workloads.iter().enumerate().fold(0u32, |mask, (i, &w)| {
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
    })
}

/// RemovePodsViolatingNodeTaints: per template, the nodes with a taint of the counted effects
/// (`excluded`, `included`, `PreferNoSchedule` as the plugin's args say) its pods do not tolerate.
fn taint_violations(
    ir: &mut IrDescheduler,
    objects: &[Object],
    workloads: &[usize],
    nodes: &[(String, Labels, &NodePool)],
    (excluded_taints, included_taints, include_prefer_no_schedule): (&[String], &[String], bool),
) {
    for (i, &w) in workloads.iter().enumerate() {
        let spec = &objects[w].workload().expect("a workload").template.spec;
        ir.taint_violations[i + 1] |= bitmask(nodes.iter().map(|(_, _, pool)| {
            pool.taints.iter().any(|t| {
                let effect_counts = t.effect == TaintEffect::NoSchedule
                    || (include_prefer_no_schedule && t.effect == TaintEffect::PreferNoSchedule);
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

impl IrDescheduler {
    /// No plugin yet, with a mask per template (index 0 unused).
    fn none(templates: usize) -> IrDescheduler {
        IrDescheduler {
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
        }
    }
}

/// The value of the PriorityClass `name`, if the unit's objects define it.
fn priority_of_class(objects: &[Object], name: &str) -> Option<i64> {
    objects.iter().find_map(|o| match &o.body {
        Body::PriorityClass { value, .. } if o.id.name == name && !o.shadowed => Some(i64::from(*value)),
        _ => None,
    })
}

/// Each template's pod priority, as the Priority admission plugin resolves it (index 0: the
/// first workload).
fn pod_priorities(objects: &[Object], workloads: &[usize]) -> Vec<i64> {
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
    workloads
        .iter()
        .map(|&w| {
            let spec = &objects[w].workload().expect("a workload").template.spec;
            spec.priority_class_name
                .as_ref()
                .and_then(|p| priority_of_class(objects, &p.value))
                .unwrap_or(default_priority)
        })
        .collect()
}

/// The owners of a workload's pods as `(kind, name)`: a Deployment's pods belong to its
/// ReplicaSet, a bare Pod to its `ownerReferences`.
pub(super) fn owners_of(object: &Object, workload: &crate::manifest::Workload) -> Vec<(String, String)> {
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
        // A CronJob's pods belong to the Job of each run.
        WorkloadKind::Job | WorkloadKind::CronJob => vec![("Job".to_string(), name)],
    }
}

/// What the descheduler's plugins tell pods apart by, per template: the nodes NodeFit accepts
/// statically, RemoveDuplicates' owner keys and key lists (removeduplicates.go: a key is
/// `namespace/ownerKind/ownerName/image` per owner and container), and the order
/// RemovePodsViolatingTopologySpreadConstraint sorts a domain's pods in.
pub(super) fn fill_pod_identities(
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
pub(super) const SYSTEM_CRITICAL_PRIORITY: i64 = 2_000_000_000;

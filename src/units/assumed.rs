//! The assumed cluster of each unit: what the unit's manifests require of nodes, admitted.
//!
//! Without `cluster.nodePools` or `cluster.fromNodes` kivi-lint does not know the cluster. A
//! nodeSelector for `kubernetes.io/arch: arm64`, a required affinity for a node group, a
//! request for `nvidia.com/gpu` or hugepages state what the real cluster has; against the
//! embedded default's plain nodes they would make every such pod "unschedulable", a finding
//! about kivi-lint's guess rather than about the configuration. A static mismatch is a
//! finding only against a cluster the user described.
//!
//! So each unit is verified against its own assumed cluster, since units never share nodes
//! in the model: one repository's alternative GPU Deployments, or one overlay's
//! `nodegroup-type: prod-app` and another's `NotIn prod-app`, never contradict each other.
//! Within a unit, workloads whose requirements contradict (an arm64 pod beside an amd64 one,
//! a GPU pool beside a plain one) each get their own class of assumed pools, as real clusters
//! have a node pool per workload class. A pod no assumption can admit is not verified, and a
//! note names it.

use std::collections::BTreeMap;

use crate::checks::CheckId;
use crate::config::{Cluster, NodePool};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::node::ZONE_KEY;
use crate::manifest::pod::{Amounts, PodSpec, WhenUnsatisfiable};
use crate::manifest::selector::{Labels, NodeSelectorTerm, Operator, Requirement};
use crate::manifest::{Body, Object};
use crate::source::Span;

use super::{Unit, pool_admits};

/// Why a unit whose pods the assumed cluster cannot admit is not verified.
pub const UNADMITTED: &str =
    "its pods need nodes that kivi-lint cannot assume (describe the cluster: `cluster.nodePools`)";

/// What the assumed clusters got, over every unit, for one note.
#[derive(Default)]
struct Assumed {
    labels: BTreeMap<String, (String, Span)>,
    node_names: Vec<(String, Span)>,
    resources: BTreeMap<String, Span>,
    /// Topology keys given to the nodes (one value per zone).
    topology_keys: Vec<(String, Span)>,
    /// The nodes were enlarged to hold every pod of a unit.
    room: Option<Span>,
    /// Units with more than one class of pools: the first workload of each extra class.
    classes: Vec<(String, Span)>,
    /// Workloads no assumed pool admits.
    unadmitted: Vec<(String, Span)>,
    /// The most nodes per pool a unit got for pods that may not share a node.
    nodes: Option<(u32, Span)>,
}

/// Pools whose labels satisfy one workload class: the base pools, labelled.
#[derive(Clone)]
struct Class<'a> {
    pools: Vec<NodePool>,
    /// Labels assumed on every pool of the class, with the workload that asked.
    labels: Vec<(String, String, Span)>,
    members: Vec<&'a PodSpec>,
}

/// The pools (indices into `cluster.pools`) whose assumed nodes admit the workload `w` alone:
/// how the unit graph sees an assumed cluster.
pub fn pools_admitting(cluster: &Cluster, objects: &[Object], w: usize) -> Vec<usize> {
    let (assumed, unadmitted) = unit_cluster(cluster, objects, &[w], &mut Assumed::default());
    if !unadmitted.is_empty() {
        return Vec::new();
    }
    let spec = &objects[w].workload().expect("a workload").template.spec;
    assumed
        .pools
        .iter()
        .enumerate()
        .filter(|(i, p)| *i < cluster.pools.len() && pool_admits(p, spec))
        .map(|(i, _)| i)
        .collect()
}

/// Give each unit its assumed cluster (when the config describes none), and note once what
/// was assumed. A unit with a workload no assumed node admits is not verified.
pub fn assume_per_unit(cluster: &Cluster, objects: &[Object], units: &mut [Unit], diags: &mut Diagnostics) {
    if !cluster.assumed || cluster.pools.is_empty() {
        return;
    }
    let mut assumed = Assumed::default();
    for unit in units.iter_mut() {
        let workloads: Vec<usize> = unit.workloads().collect();
        let (pools, unadmitted) = unit_cluster(cluster, objects, &workloads, &mut assumed);
        let specs: Vec<&PodSpec> = workloads
            .iter()
            .map(|&w| &objects[w].workload().expect("a workload").template.spec)
            .collect();
        unit.node_pools = pools
            .pools
            .iter()
            .filter(|p| specs.iter().any(|s| pool_admits(p, s)))
            .map(|p| p.name.clone())
            .collect();
        if !unadmitted.is_empty() {
            let checks: Vec<CheckId> = std::mem::take(&mut unit.checks);
            unit.not_checked.extend(checks.into_iter().map(|c| (c, UNADMITTED)));
        }
        unit.cluster = Some(pools);
    }
    note(&assumed, diags);
}

/// The unit's assumed cluster again, for edited objects (a fix candidate): no note.
pub fn reassume(cluster: &Cluster, objects: &[Object], unit: &mut Unit) {
    if unit.cluster.is_some() {
        let workloads: Vec<usize> = unit.workloads().collect();
        unit.cluster = Some(unit_cluster(cluster, objects, &workloads, &mut Assumed::default()).0);
    }
}

/// The assumed cluster of the given workloads, and those it cannot admit.
fn unit_cluster(
    base: &Cluster,
    objects: &[Object],
    workloads: &[usize],
    assumed: &mut Assumed,
) -> (Cluster, Vec<usize>) {
    let fresh = || Class {
        pools: base.pools.clone(),
        labels: Vec::new(),
        members: Vec::new(),
    };
    let mut classes = vec![fresh()];
    let mut unadmitted = Vec::new();
    let mut demand = Amounts::default();
    let mut resources: BTreeMap<String, i64> = BTreeMap::new();
    let mut keys: Vec<(String, Span)> = Vec::new();
    for &w in workloads {
        let o = &objects[w];
        let Some(workload) = o.workload() else { continue };
        let spec = &workload.template.spec;
        let replicas = i64::from(workload.desired_replicas().max(1)).max(largest_autoscaled(objects, o));
        demand = demand.saturating_add(spec.effective_request().saturating_mul(replicas));
        // Extended resources, ephemeral storage and hugepages: like cpu and memory, room on
        // every node for every pod of the unit.
        for name in spec.scalar_names() {
            let want = spec.scalar_request(name).saturating_mul(replicas);
            if want > 0 {
                let total = resources.entry(name.to_string()).or_insert(0);
                *total = total.saturating_add(want);
                assumed.resources.entry(name.to_string()).or_insert(spec.span);
            }
        }
        keys.extend(topology_keys(spec));
        let placed = classes
            .iter()
            .enumerate()
            .find_map(|(i, c)| admit(c, spec).map(|c| (i, c)));
        match placed {
            Some((i, class)) => classes[i] = class,
            None => match admit(&fresh(), spec) {
                Some(class) => {
                    assumed.classes.push((o.id.to_string(), spec.span));
                    classes.push(class);
                }
                None => {
                    assumed
                        .unadmitted
                        .push((o.id.to_string(), spec.node_requirement_span()));
                    unadmitted.push(w);
                }
            },
        }
    }
    // A class nobody joined is no pool of the cluster (the first is kept for a unit of none).
    if classes.len() > 1 {
        classes.retain(|c| !c.members.is_empty());
    }
    let mut pools = Vec::new();
    for (k, class) in classes.into_iter().enumerate() {
        for (key, value, span) in &class.labels {
            assumed.labels.entry(key.clone()).or_insert((value.clone(), *span));
        }
        for mut pool in class.pools {
            if k > 0 {
                pool.name = format!("{}-pool{}", pool.name, k + 1);
            }
            pools.push(pool);
        }
    }
    for pool in &pools {
        for name in &pool.node_names {
            if !assumed.node_names.iter().any(|(n, _)| n == name) {
                assumed.node_names.push((name.clone(), pool.span));
            }
        }
    }
    for (key, span) in keys {
        if pools
            .iter()
            .any(|p| p.labels.contains_key(&key) || p.hostname_labels.contains(&key))
        {
            continue;
        }
        // A node without the key is not a candidate: the assumed nodes carry it, one value per
        // zone, as zone-like keys of real clusters do.
        for pool in pools.iter_mut() {
            let value = pool.labels.get(ZONE_KEY).cloned().unwrap_or_else(|| pool.name.clone());
            pool.labels.insert(key.clone(), value);
        }
        if !assumed.topology_keys.iter().any(|(k, _)| *k == key) {
            assumed.topology_keys.push((key, span));
        }
    }
    // As many nodes as pods that may not share one, at least: how many nodes a real cluster
    // has is not known, so the steady state is given room, and what needs more (a rollout's
    // surge pod) is still found.
    if let Some((pods, span)) = exclusive_pods(objects, workloads, &pools) {
        let per_pool = pods.div_ceil(pools.len().max(1) as u32);
        if pools.iter().any(|p| p.count < per_pool) {
            for pool in &mut pools {
                pool.count = pool.count.max(per_pool);
                pool.min = pool.min.max(per_pool);
                pool.max = pool.max.max(per_pool);
            }
            if assumed.nodes.is_none_or(|(n, _)| n < per_pool) {
                assumed.nodes = Some((per_pool, span));
            }
        }
    }
    // Room for every pod of the unit on any one node: how many nodes a real cluster has, and
    // how large, is not known, so capacity never decides a verdict here.
    for pool in &mut pools {
        for (name, total) in &resources {
            let have = pool.scalar_allocatable.entry(name.clone()).or_insert(0);
            *have = (*have).max(*total);
        }
        let usable = pool.usable();
        if demand.cpu_millis > usable.cpu_millis || demand.memory_bytes > usable.memory_bytes {
            assumed.room = assumed.room.or_else(|| workloads.first().map(|&w| objects[w].span));
        }
        pool.allocatable.cpu_millis = pool
            .allocatable
            .cpu_millis
            .max(demand.cpu_millis.saturating_add(pool.reserved.cpu_millis));
        pool.allocatable.memory_bytes = pool
            .allocatable
            .memory_bytes
            .max(demand.memory_bytes.saturating_add(pool.reserved.memory_bytes));
    }
    let cluster = Cluster { pools, assumed: true };
    (cluster, unadmitted)
}

/// Pods of the workloads that pairwise may not share a node (required podAntiAffinity on a
/// hostname key, each workload's pods against their own and the others'): the largest such
/// set found greedily, and where the first of its terms is. `None` when fewer than two
/// workloads' pods exclude each other beyond what one workload asks of itself.
fn exclusive_pods(objects: &[Object], workloads: &[usize], pools: &[NodePool]) -> Option<(u32, Span)> {
    let hostname = |key: &str| pools.iter().any(|p| p.hostname_labels.iter().any(|h| h == key));
    let excludes = |a: usize, b: usize| -> Option<Span> {
        let (oa, ob) = (&objects[a], &objects[b]);
        let (wa, wb) = (oa.workload()?, ob.workload()?);
        wa.template.spec.affinity.pod_anti.required.iter().find_map(|t| {
            let namespace = if t.namespaces.is_empty() && t.namespace_selector.is_none() {
                oa.namespace() == ob.namespace()
            } else {
                t.namespaces.iter().any(|n| n == ob.namespace())
            };
            (hostname(&t.topology_key.value)
                && namespace
                && t.label_selector
                    .as_ref()
                    .is_some_and(|s| s.matches(&wb.template.labels)))
            .then_some(t.topology_key.span)
        })
    };
    let exclusive = |a: usize, b: usize| excludes(a, b).or_else(|| excludes(b, a));
    let replicas = |w: usize| {
        objects[w]
            .workload()
            .filter(|wl| wl.kind != crate::manifest::WorkloadKind::DaemonSet)
            .map_or(0, |wl| wl.desired_replicas().max(1) as u32)
    };
    let mut by_size: Vec<usize> = workloads.iter().copied().filter(|&w| replicas(w) > 0).collect();
    by_size.sort_by_key(|&w| std::cmp::Reverse(replicas(w)));
    let mut set: Vec<usize> = Vec::new();
    let mut at = None;
    for w in by_size {
        let Some(own) = exclusive(w, w) else { continue };
        if set.iter().all(|&o| exclusive(w, o).is_some()) {
            at = at.or(Some(own));
            set.push(w);
        }
    }
    (set.len() > 1).then(|| (set.iter().map(|&w| replicas(w)).sum(), at.expect("a term")))
}

/// The class with `spec` admitted, if labels it can assume make some pool of the class admit
/// the pod and every pod already in it.
fn admit<'a>(class: &Class<'a>, spec: &'a PodSpec) -> Option<Class<'a>> {
    let mut next = class.clone();
    if let Some(name) = &spec.node_name {
        // The i-th named node is the first node of the i-th pool.
        if !next.pools.iter().any(|p| p.node_names.contains(&name.value)) {
            let free = next.pools.iter_mut().find(|p| p.node_names.is_empty())?;
            free.node_names.push(name.value.clone());
        }
    }
    let mut wanted: Labels = spec.node_selector.clone();
    if let Some(terms) = &spec.affinity.node.required {
        // Terms are ORed: one that the labels so far satisfy, else the first that can be.
        let satisfied = |t: &NodeSelectorTerm, labels: &Labels| {
            t.match_expressions.iter().all(|r| r.matches(labels)) && t.match_fields.is_empty()
        };
        let current = merged(&next.pools.first()?.labels, &wanted);
        if !terms.value.iter().any(|t| satisfied(t, &current)) {
            let chosen = terms
                .value
                .iter()
                .filter(|t| t.match_fields.is_empty())
                .find_map(|t| labels_for(&t.match_expressions, &current))?;
            wanted.extend(chosen);
        }
    }
    for (key, value) in wanted {
        if next.pools.iter().all(|p| p.labels.get(&key) == Some(&value)) {
            continue;
        }
        if is_per_pool(&key) {
            // Each assumed pool is one zone: a pod asks for one of them, or, alone in its
            // class, for a zone of its own that every pool of the class is then in.
            if next.pools.iter().any(|p| p.labels.get(&key) == Some(&value)) {
                continue;
            }
            if !next.members.is_empty() {
                return None;
            }
        } else if next.labels.iter().any(|(k, _, _)| *k == key) {
            return None;
        }
        for pool in &mut next.pools {
            pool.labels.insert(key.clone(), value.clone());
        }
        next.labels.push((key, value, spec.span));
    }
    next.members.push(spec);
    next.members
        .iter()
        .all(|s| next.pools.iter().any(|p| pool_admits(p, s)))
        .then_some(next)
}

/// The largest `maxReplicas` of an HPA that scales `o`.
fn largest_autoscaled(objects: &[Object], o: &Object) -> i64 {
    objects
        .iter()
        .filter_map(|h| match &h.body {
            Body::HorizontalPodAutoscaler(a)
                if h.id.namespace == o.id.namespace
                    && a.scale_target_ref.kind == o.id.kind
                    && a.scale_target_ref.name == o.id.name =>
            {
                Some(i64::from(a.max_replicas.value))
            }
            _ => None,
        })
        .max()
        .unwrap_or(0)
        .min(crate::manifest::autoscaling::MAX_AUTOSCALER_REPLICAS)
}

/// Topology keys that hard spread constraints and required pod (anti-)affinity use.
fn topology_keys(spec: &PodSpec) -> Vec<(String, Span)> {
    spec.topology_spread_constraints
        .iter()
        .filter(|c| c.when_unsatisfiable.value == WhenUnsatisfiable::DoNotSchedule)
        .map(|c| (c.topology_key.value.clone(), c.topology_key.span))
        .chain(
            spec.affinity
                .pod
                .required
                .iter()
                .chain(&spec.affinity.pod_anti.required)
                .map(|t| (t.topology_key.value.clone(), t.topology_key.span)),
        )
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// Labels whose value tells the assumed pools apart: a pod asks for one of them.
fn is_per_pool(key: &str) -> bool {
    key == ZONE_KEY
}

fn merged(a: &Labels, b: &Labels) -> Labels {
    let mut out = a.clone();
    out.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// Labels that make `requirements` hold on top of `current`, if some do.
fn labels_for(requirements: &[Requirement], current: &Labels) -> Option<Labels> {
    let mut out = Labels::new();
    for r in requirements {
        let all = merged(current, &out);
        if r.matches(&all) {
            continue;
        }
        let value = match r.operator {
            Operator::In => r.values.first()?.clone(),
            Operator::Exists => "true".to_string(),
            Operator::Gt => (r.values.first()?.parse::<i64>().ok()?.checked_add(1)?).to_string(),
            Operator::Lt => (r.values.first()?.parse::<i64>().ok()?.checked_sub(1)?).to_string(),
            // A label to be absent, or to differ, that the nodes already have.
            Operator::NotIn | Operator::DoesNotExist => return None,
        };
        out.insert(r.key.clone(), value);
    }
    requirements
        .iter()
        .all(|r| r.matches(&merged(current, &out)))
        .then_some(out)
}

/// At most this many items of one kind are named in the note; the rest are counted.
const NAMED: usize = 6;

fn listed(items: Vec<String>) -> String {
    let more = items.len().saturating_sub(NAMED);
    let mut out = items.into_iter().take(NAMED).collect::<Vec<_>>().join(", ");
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

fn note(assumed: &Assumed, diags: &mut Diagnostics) {
    let help = "describe the real nodes in .kivi-lint.yaml (`cluster.nodePools`, or `cluster.fromNodes` with `kubectl get nodes -o yaml`): against a described cluster a requirement it cannot meet is a finding";
    let mut parts = Vec::new();
    let mut at = None;
    if !assumed.labels.is_empty() {
        let labels = assumed.labels.iter().map(|(k, (v, _))| format!("{k}={v}")).collect();
        parts.push(format!("nodes labelled {}", listed(labels)));
        at = at.or(assumed.labels.values().next().map(|(_, s)| *s));
    }
    if !assumed.node_names.is_empty() {
        let names = assumed.node_names.iter().map(|(n, _)| n.clone()).collect();
        parts.push(format!("nodes named {}", listed(names)));
        at = at.or(assumed.node_names.first().map(|(_, s)| *s));
    }
    if !assumed.resources.is_empty() {
        let names = assumed.resources.keys().cloned().collect();
        parts.push(format!("allocatable {}", listed(names)));
        at = at.or(assumed.resources.values().next().copied());
    }
    if !assumed.topology_keys.is_empty() {
        let keys: Vec<String> = assumed.topology_keys.iter().map(|(k, _)| k.clone()).collect();
        parts.push(format!(
            "the topology key{} {} with one value per zone",
            if keys.len() == 1 { "" } else { "s" },
            listed(keys)
        ));
        at = at.or(assumed.topology_keys.first().map(|(_, s)| *s));
    }
    if !assumed.classes.is_empty() {
        let first = assumed.classes.iter().map(|(n, _)| n.clone()).collect();
        parts.push(format!(
            "a node pool of their own for pods whose requirements contradict others of their unit ({})",
            listed(first)
        ));
        at = at.or(assumed.classes.first().map(|(_, s)| *s));
    }
    if let Some((n, span)) = assumed.nodes {
        parts.push(format!(
            "up to {n} nodes per zone where pods may not share a node (required podAntiAffinity on a hostname key)"
        ));
        at = at.or(Some(span));
    }
    if let Some(span) = assumed.room {
        parts.push("nodes with room for every pod of a unit".into());
        at = at.or(Some(span));
    }
    if let Some(at) = at {
        diags.push(
            Diagnostic::note(
                at,
                format!(
                    "no cluster is described, so each unit is verified against an assumed one that admits what its manifests require of nodes: {}",
                    parts.join("; ")
                ),
            )
            .with_help(help),
        );
    }
    for (workload, span) in &assumed.unadmitted {
        diags.push(
            Diagnostic::note(
                *span,
                format!("no cluster is described, and no node kivi-lint can assume admits the pods of {workload}: its unit is not verified"),
            )
            .with_help(help),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_get_labels_that_satisfy_them() {
        let req = |key: &str, operator, values: &[&str]| Requirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let current = Labels::new();
        let got = labels_for(
            &[
                req("arch", Operator::In, &["arm64", "amd64"]),
                req("gpu", Operator::Exists, &[]),
                req("cores", Operator::Gt, &["8"]),
            ],
            &current,
        )
        .unwrap();
        assert_eq!(got.get("arch").map(String::as_str), Some("arm64"));
        assert_eq!(got.get("gpu").map(String::as_str), Some("true"));
        assert_eq!(got.get("cores").map(String::as_str), Some("9"));
        let mut has = Labels::new();
        has.insert("spot".into(), "true".into());
        assert!(labels_for(&[req("spot", Operator::DoesNotExist, &[])], &has).is_none());
    }
}

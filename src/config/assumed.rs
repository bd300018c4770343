//! The assumed cluster admits what the manifests require of nodes.
//!
//! Without `cluster.nodePools` or `cluster.fromNodes` kivi-lint does not know the cluster. A
//! nodeSelector for `kubernetes.io/arch: arm64`, a required affinity for a node group, a
//! request for `nvidia.com/gpu` or hugepages state what the real cluster has; against the
//! embedded default's plain nodes they would make every such pod "unschedulable", a finding
//! about kivi-lint's guess rather than about the configuration. So the assumed pools get
//! those labels, node names and resources, and a note says what was assumed. A static
//! mismatch is a finding only against a cluster the user described.

use std::collections::BTreeMap;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::node::ZONE_KEY;
use crate::manifest::pod::{Amounts, WhenUnsatisfiable};
use crate::manifest::selector::{Labels, NodeSelectorTerm, Operator, Requirement};
use crate::manifest::{Body, Object, Workload};
use crate::source::Span;

use super::cluster::Cluster;
use super::cluster::NodePool;

/// Labels and resources the assumed pools got, for the note.
#[derive(Default)]
struct Assumed {
    labels: BTreeMap<String, (String, Span)>,
    node_names: Vec<(String, Span)>,
    resources: BTreeMap<String, (i64, Span)>,
    /// Topology keys given to the nodes (one value per zone).
    topology_keys: Vec<(String, Span)>,
    /// The nodes were enlarged to hold every scanned pod (at the first workload).
    room: Option<Span>,
    /// Requirements that contradict ones already assumed (two workloads asking for
    /// different architectures): those pods stay unadmitted, and say so.
    conflicts: Vec<(String, Span)>,
}

/// The cluster with its assumed pools widened to admit every long-running workload's static
/// node requirements; a cluster the user described as it is.
pub fn admit_static_requirements(cluster: &Cluster, objects: &[Object], diags: &mut Diagnostics) -> Cluster {
    let mut cluster = cluster.clone();
    if !cluster.assumed || cluster.pools.is_empty() {
        return cluster;
    }
    let mut assumed = Assumed::default();
    let mut demand = Amounts::default();
    let mut first = None;
    let mut pods = 0i64;
    for o in objects.iter().filter(|o| !o.shadowed) {
        let Some(w) = o.workload().filter(|w| w.long_running()) else {
            continue;
        };
        first = first.or(Some(o.span));
        let replicas = i64::from(w.desired_replicas().max(1)).max(largest_autoscaled(objects, o));
        admit(&mut cluster.pools, w, replicas, &mut assumed);
        pods = pods.saturating_add(replicas);
        topology_keys(&mut cluster.pools, w, &mut assumed);
        demand = demand.saturating_add(w.template.spec.effective_request().saturating_mul(replicas));
    }
    for (name, (total, _)) in &assumed.resources {
        for pool in cluster.pools.iter_mut() {
            let have = pool.scalar_allocatable.entry(name.clone()).or_insert(0);
            *have = (*have).max(*total);
        }
    }
    // Room for every pod scanned on any one node: how many nodes a real cluster has, and how
    // large, is not known, so capacity never decides a verdict here.
    for pool in &mut cluster.pools {
        let usable = pool.usable();
        if demand.cpu_millis > usable.cpu_millis || demand.memory_bytes > usable.memory_bytes {
            assumed.room = first;
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
    note(&assumed, diags);
    cluster
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

/// Topology keys that hard spread constraints and required pod (anti-)affinity use: a node
/// without the key is not a candidate, so the assumed nodes carry it, one value per pool (the
/// pool's zone), as zone-like keys of real clusters do.
fn topology_keys(pools: &mut [NodePool], w: &Workload, assumed: &mut Assumed) {
    let spec = &w.template.spec;
    let keys = spec
        .topology_spread_constraints
        .iter()
        .filter(|c| c.when_unsatisfiable.value == WhenUnsatisfiable::DoNotSchedule)
        .map(|c| (&c.topology_key.value, c.topology_key.span))
        .chain(
            spec.affinity
                .pod
                .required
                .iter()
                .chain(&spec.affinity.pod_anti.required)
                .map(|t| (&t.topology_key.value, t.topology_key.span)),
        );
    for (key, span) in keys {
        if key.is_empty()
            || pools
                .iter()
                .any(|p| p.labels.contains_key(key) || p.hostname_labels.contains(key))
        {
            continue;
        }
        for pool in pools.iter_mut() {
            let value = pool.labels.get(ZONE_KEY).cloned().unwrap_or_else(|| pool.name.clone());
            pool.labels.insert(key.clone(), value);
        }
        assumed.topology_keys.push((key.clone(), span));
    }
}

fn admit(pools: &mut [NodePool], w: &Workload, replicas: i64, assumed: &mut Assumed) {
    let spec = &w.template.spec;
    // Extended resources, ephemeral storage and hugepages: like cpu and memory, room on
    // every node for every scanned pod (summed here, given to the pools at the end).
    for name in spec.scalar_names().map(String::from).collect::<Vec<_>>() {
        let want = spec.scalar_request(&name).saturating_mul(replicas);
        if want <= 0 {
            continue;
        }
        let entry = assumed.resources.entry(name).or_insert((0, spec.span));
        entry.0 = entry.0.saturating_add(want);
    }
    if let Some(name) = &spec.node_name {
        if assumed.node_names.iter().any(|(n, _)| *n == name.value) {
            return;
        }
        // The i-th named node is the first node of the i-th pool.
        match pools.get_mut(assumed.node_names.len()) {
            Some(pool) if pool.node_names.is_empty() => {
                pool.node_names.push(name.value.clone());
                assumed.node_names.push((name.value.clone(), name.span));
            }
            _ => assumed
                .conflicts
                .push((format!("`nodeName: {}`", name.value), name.span)),
        }
        return;
    }
    let mut wanted: Labels = spec.node_selector.clone();
    if let Some(terms) = &spec.affinity.node.required {
        // Terms are ORed: one that the labels so far satisfy, else the first that can be.
        let satisfied = |t: &NodeSelectorTerm, labels: &Labels| {
            t.match_expressions.iter().all(|r| r.matches(labels)) && t.match_fields.is_empty()
        };
        let current = merged(&pools[0].labels, &wanted);
        if !terms.value.iter().any(|t| satisfied(t, &current)) {
            let chosen = terms
                .value
                .iter()
                .filter(|t| t.match_fields.is_empty())
                .find_map(|t| labels_for(&t.match_expressions, &current));
            match chosen {
                Some(labels) => wanted.extend(labels),
                None => assumed.conflicts.push(("a required node affinity".into(), terms.span)),
            }
        }
    }
    for (key, value) in wanted {
        if let Some((have, _)) = assumed.labels.get(&key) {
            if *have != value {
                assumed.conflicts.push((format!("`{key}: {value}`"), spec.span));
            }
            continue;
        }
        if is_per_pool(&key) {
            // Each assumed pool is one zone: a pod that names another zone fits none.
            if !pools.iter().any(|p| p.labels.get(&key) == Some(&value)) {
                assumed.conflicts.push((format!("`{key}: {value}`"), spec.span));
            }
            continue;
        }
        for pool in pools.iter_mut() {
            pool.labels.insert(key.clone(), value.clone());
        }
        assumed.labels.insert(key, (value, spec.span));
    }
}

/// Labels whose value tells the assumed pools apart: a pod asks for one of them.
fn is_per_pool(key: &str) -> bool {
    key == "topology.kubernetes.io/zone"
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

fn note(assumed: &Assumed, diags: &mut Diagnostics) {
    let help = "describe the real nodes in .kivi-lint.yaml (`cluster.nodePools`, or `cluster.fromNodes` with `kubectl get nodes -o yaml`): against a described cluster a requirement it cannot meet is a finding";
    let mut parts = Vec::new();
    let mut at = None;
    if !assumed.labels.is_empty() {
        let labels: Vec<String> = assumed.labels.iter().map(|(k, (v, _))| format!("{k}={v}")).collect();
        parts.push(format!("nodes labelled {}", labels.join(", ")));
        at = at.or(assumed.labels.values().next().map(|(_, s)| *s));
    }
    if !assumed.node_names.is_empty() {
        let names: Vec<&str> = assumed.node_names.iter().map(|(n, _)| n.as_str()).collect();
        parts.push(format!("nodes named {}", names.join(", ")));
        at = at.or(assumed.node_names.first().map(|(_, s)| *s));
    }
    if !assumed.resources.is_empty() {
        let resources: Vec<String> = assumed
            .resources
            .iter()
            .map(|(k, (v, _))| format!("{k}: {v}"))
            .collect();
        parts.push(format!("allocatable {}", resources.join(", ")));
        at = at.or(assumed.resources.values().next().map(|(_, s)| *s));
    }
    if !assumed.topology_keys.is_empty() {
        let keys: Vec<&str> = assumed.topology_keys.iter().map(|(k, _)| k.as_str()).collect();
        parts.push(format!(
            "the topology key{} {} with one value per zone",
            if keys.len() == 1 { "" } else { "s" },
            keys.join(", ")
        ));
        at = at.or(assumed.topology_keys.first().map(|(_, s)| *s));
    }
    if let Some(span) = assumed.room {
        parts.push("nodes with room for every scanned pod".into());
        at = at.or(Some(span));
    }
    if let Some(at) = at {
        diags.push(
            Diagnostic::note(
                at,
                format!(
                    "no cluster is described, so kivi-lint assumed one that admits what the manifests require of nodes: {}",
                    parts.join("; ")
                ),
            )
            .with_help(help),
        );
    }
    for (what, span) in &assumed.conflicts {
        diags.push(
            Diagnostic::note(
                *span,
                format!("no cluster is described, and the assumed nodes cannot also have {what}, which other manifests contradict: these pods are not admitted"),
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

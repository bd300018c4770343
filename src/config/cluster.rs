//! The cluster kivi-lint verifies against: node pools, given in the config or derived from a
//! `kubectl get nodes -o yaml` snapshot.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diagnostics::Diagnostics;
use crate::manifest::node::NodeResources;
use crate::manifest::pod::Amounts;
use crate::manifest::read::{Reader, truncate};
use crate::manifest::selector::Labels;
use crate::manifest::taint::Taint;
use crate::manifest::{self, Body};
use crate::source::{SourceMap, Span};
use crate::yaml::{self, Node};

use super::{Scaling, check_fields};

pub const DEFAULT_HOSTNAME_LABELS: &[&str] = &["kubernetes.io/hostname"];
/// Labels every kubelet sets; a pool that does not set them gets these values.
pub const KUBELET_LABELS: &[(&str, &str)] = &[("kubernetes.io/os", "linux"), ("kubernetes.io/arch", "amd64")];

/// Nodes that share labels (but for their names), allocatable and taints.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePool {
    pub name: String,
    /// Nodes the cluster has today.
    pub count: u32,
    /// Bounds of the scaling search.
    pub min: u32,
    pub max: u32,
    pub labels: Labels,
    /// Labels whose value is the node's own name.
    pub hostname_labels: Vec<String>,
    pub allocatable: NodeResources,
    /// Allocatable ephemeral storage, hugepages and extended resources (`nvidia.com/gpu`).
    pub scalar_allocatable: BTreeMap<String, i64>,
    /// Taken by pods kivi-lint does not model.
    pub reserved: Amounts,
    pub taints: Vec<Taint>,
    /// Its nodes are cordoned (`spec.unschedulable`): the scheduler's NodeUnschedulable filter
    /// and the descheduler's NodeFit turn pods away from them.
    pub unschedulable: bool,
    /// Zones the pool spans (one cloud node group over several zones): the `i`-th node is in
    /// `zones[(i - 1) % len]`, as the cloud's zone balancing places them. Empty: the zone, if
    /// any, is in `labels`.
    pub zones: Vec<String>,
    /// Real node names, when the pool comes from a snapshot.
    pub node_names: Vec<String>,
    pub span: Span,
}

impl NodePool {
    /// Name of the `index`-th node (1-based): the real name if known, else `<pool>-<index>`.
    pub fn node_name(&self, index: u32) -> String {
        match self.node_names.get(index as usize - 1) {
            Some(n) => n.clone(),
            None => format!("{}-{}", self.name, index),
        }
    }

    /// Labels of the `index`-th node (1-based).
    pub fn node_labels(&self, index: u32) -> Labels {
        self.labels_for(&self.node_name(index), self.zone_of(index))
    }

    /// Labels of a node of this pool: the pool's labels, the hostname labels, and the zone
    /// label when the pool spans `zones` (`zone` indexes them).
    pub fn labels_for(&self, node_name: &str, zone: Option<usize>) -> Labels {
        let mut labels = self.labels.clone();
        for key in &self.hostname_labels {
            labels.insert(key.clone(), node_name.to_string());
        }
        if let Some(z) = zone.and_then(|z| self.zones.get(z)) {
            labels.insert(ZONE_LABEL.to_string(), z.clone());
        }
        labels
    }

    /// Zone of the `index`-th node (1-based) of a pool that spans `zones`.
    pub fn zone_of(&self, index: u32) -> Option<usize> {
        (!self.zones.is_empty()).then(|| (index as usize - 1) % self.zones.len())
    }

    /// What pods kivi-lint models can use on one node.
    pub fn usable(&self) -> Amounts {
        Amounts {
            cpu_millis: (self.allocatable.cpu_millis - self.reserved.cpu_millis).max(0),
            memory_bytes: (self.allocatable.memory_bytes - self.reserved.memory_bytes).max(0),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    pub pools: Vec<NodePool>,
    /// Nobody described the cluster (no `cluster` in the config): the embedded default's
    /// pools stand in for it, widened to admit what the manifests require of nodes.
    pub assumed: bool,
}

impl Cluster {
    /// Whether a node of this name exists today (index ≤ count).
    pub fn has_node(&self, name: &str) -> bool {
        self.pools.iter().any(|p| (1..=p.count).any(|i| p.node_name(i) == name))
    }
}

/// Read `cluster.nodePools` or `cluster.fromNodes`.
pub fn read(r: &mut Reader, node: &Node, base_dir: &Path, scaling: &Scaling, sources: &mut SourceMap) -> Cluster {
    let from_nodes = r.string(node, "fromNodes");
    let has_pools = r.field(node, "nodePools").is_some();
    if let Some(path) = from_nodes {
        if has_pools {
            r.error(path.span, "set either `nodePools` or `fromNodes`, not both");
        }
        let full = base_dir.join(&path.value);
        return match crate::source::read_text(&full) {
            Ok(text) => from_snapshot(&text, &full, sources, r.diags),
            Err(message) => {
                r.error(path.span, message);
                Cluster {
                    pools: Vec::new(),
                    assumed: false,
                }
            }
        };
    }
    let mut pools: Vec<NodePool> = Vec::new();
    for item in r.maps(node, "nodePools") {
        if let Some(pool) = read_pool(r, item, scaling) {
            if pools.iter().any(|p| p.name == pool.name) {
                r.error(item.span, format!("node pool `{}` is defined twice", pool.name));
                continue;
            }
            pools.push(pool);
        }
    }
    if pools.is_empty() {
        r.error(
            node.span,
            "the cluster needs at least one node pool (`nodePools` or `fromNodes`)",
        );
    }
    Cluster { pools, assumed: false }
}

/// A pool name: a DNS-1123 label short enough for its nodes' `-<index>` suffix.
fn is_dns_label(s: &str) -> bool {
    s.len() <= 50 && crate::manifest::read::is_dns_label(s)
}

fn read_pool(r: &mut Reader, item: &Node, scaling: &Scaling) -> Option<NodePool> {
    check_fields(
        r,
        item,
        &[
            "name",
            "count",
            "min",
            "max",
            "labels",
            "hostnameLabels",
            "allocatable",
            "reserved",
            "taints",
            "unschedulable",
            "zones",
        ],
        "cluster.nodePools[]",
    );
    let Some(name) = r.text(item, "name") else {
        r.error(item.span, "a node pool needs a `name`");
        return None;
    };
    if !is_dns_label(&name.value) {
        r.error(
            name.span,
            "a pool name must be lower-case letters, digits and `-` (nodes are named <pool>-1, <pool>-2, ...)",
        );
        return None;
    }
    let mut bound = |key: &str| -> Option<u32> {
        let v = r.int(item, key)?;
        if !(0..=1000).contains(&v.value) {
            r.error(v.span, format!("`{key}` must be from 0 to 1000"));
            return None;
        }
        Some(v.value as u32)
    };
    // A pool given only a `count` is a fixed size; one given no size scales from 1 to
    // `scaling.maxNodes`.
    let (given_min, given_max, given_count) = (bound("min"), bound("max"), bound("count"));
    let fixed = given_count.filter(|_| given_min.is_none() && given_max.is_none());
    let min = given_min.or(fixed).unwrap_or(1);
    let max = given_max.or(fixed).unwrap_or(scaling.max_nodes.max(min));
    let count = given_count.unwrap_or(min);
    if !(min <= count && count <= max) {
        r.error(
            item.span,
            format!(
                "pool `{}` needs min ≤ count ≤ max, found min {min}, count {count}, max {max}",
                name.value
            ),
        );
    }
    if max == 0 {
        r.error(
            item.span,
            format!("pool `{}` has `max: 0`: it can never have a node", name.value),
        );
    }
    let (allocatable, scalar_allocatable) = match r.map(item, "allocatable") {
        Some(a) => {
            let scalars = crate::manifest::pod::read_scalar_resources(r, a);
            let mut allowed = vec!["cpu", "memory", "pods"];
            allowed.extend(scalars.keys().map(String::as_str));
            check_fields(r, a, &allowed, "allocatable");
            let res = NodeResources::read(r, a);
            if res.cpu_millis == 0 || res.memory_bytes == 0 {
                r.error(a.span, "`allocatable` needs positive `cpu` and `memory`");
            }
            (res, scalars.into_iter().map(|(k, v)| (k, v.value)).collect())
        }
        None => {
            r.error(
                item.span,
                format!("pool `{}` needs `allocatable` (cpu, memory, pods)", name.value),
            );
            (NodeResources::default(), BTreeMap::new())
        }
    };
    let reserved = match r.map(item, "reserved") {
        Some(res) => {
            check_fields(r, res, &["cpu", "memory"], "reserved");
            let amounts = Amounts {
                cpu_millis: r.quantity(res, "cpu", true).map_or(0, |v| v.value),
                memory_bytes: r.quantity(res, "memory", false).map_or(0, |v| v.value),
            };
            if amounts.cpu_millis > allocatable.cpu_millis || amounts.memory_bytes > allocatable.memory_bytes {
                r.error(res.span, "`reserved` exceeds `allocatable`");
            }
            amounts
        }
        None => Amounts::default(),
    };
    let hostname_labels = if r.field(item, "hostnameLabels").is_some() {
        r.string_list(item, "hostnameLabels")
    } else {
        DEFAULT_HOSTNAME_LABELS.iter().map(|s| s.to_string()).collect()
    };
    let taints = r
        .maps(item, "taints")
        .into_iter()
        .filter_map(|t| Taint::read(r, t))
        .collect();
    let unschedulable = r.bool(item, "unschedulable").is_some_and(|b| b.value);
    let mut labels = r.string_map(item, "labels");
    let zones = r.string_list(item, "zones");
    if !zones.is_empty() {
        if let Some(zone) = labels.get(ZONE_LABEL) {
            r.error(
                item.span,
                format!(
                    "pool `{}` sets both `zones` and the `{ZONE_LABEL}` label (`{}`): a pool spanning zones gives each node one of `zones`",
                    name.value,
                    truncate(zone)
                ),
            );
        }
        let mut sorted = zones.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != zones.len() {
            r.error(item.span, format!("pool `{}` lists a zone twice", name.value));
        }
    }
    for (k, v) in KUBELET_LABELS {
        labels.entry(k.to_string()).or_insert_with(|| v.to_string());
    }
    Some(NodePool {
        name: name.value,
        count,
        min,
        max,
        labels,
        hostname_labels,
        allocatable,
        scalar_allocatable,
        reserved,
        taints,
        unschedulable,
        zones,
        node_names: Vec::new(),
        span: item.span,
    })
}

/// Labels that name a pool in managed Kubernetes offerings, in order of preference.
const POOL_NAME_LABELS: &[&str] = &[
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "karpenter.sh/nodepool",
    "node.kubernetes.io/instance-type",
];
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// Group the nodes of a snapshot into pools: identical labels (but for those carrying the
/// node's name), allocatable and taints form one pool, whose `count` is its node count.
pub fn from_snapshot(text: &str, path: &Path, sources: &mut SourceMap, diags: &mut Diagnostics) -> Cluster {
    let shown = crate::source::display_path(path);
    let file = sources.add(shown, text);
    let stream = yaml::parse(text, file, &yaml::Limits::default());
    for e in &stream.errors {
        diags.error(e.span, e.message.clone());
    }
    let loaded = manifest::load(&stream.documents, "default", sources, diags);
    from_nodes(
        &loaded.objects,
        &BTreeMap::new(),
        Span::point(file, Default::default()),
        path,
        diags,
    )
}

/// The pools of the Node objects among `objects`; `reserved` is what each node (by name) has
/// taken by pods kivi-lint does not model: nodes that differ in it are pools apart. `at` is
/// the file's start, where "no Node" is said.
pub fn from_nodes(
    objects: &[crate::manifest::Object],
    reserved: &BTreeMap<String, Amounts>,
    at: Span,
    path: &Path,
    diags: &mut Diagnostics,
) -> Cluster {
    type Key = (
        Labels,
        NodeResources,
        BTreeMap<String, i64>,
        Vec<Taint>,
        bool,
        (i64, i64),
    );
    let mut groups: BTreeMap<Key, (Vec<String>, Vec<String>, Span)> = BTreeMap::new();
    for object in objects {
        let Body::Node(node) = &object.body else {
            continue;
        };
        let name = object.id.name.clone();
        // The loader has reported the invalid name (exit 2): no node is made of it, as the
        // API server would not have one.
        if !crate::manifest::read::is_dns_subdomain(&name) {
            continue;
        }
        let hostname: Vec<String> = node
            .labels
            .iter()
            .filter(|(_, v)| **v == name)
            .map(|(k, _)| k.clone())
            .collect();
        let labels: Labels = node
            .labels
            .iter()
            .filter(|(_, v)| **v != name)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut taints = node.taints.clone();
        // A cordoned node: NodeUnschedulable rejects pods unless they tolerate the taint the
        // node lifecycle controller puts on it (TaintNodesByCondition).
        let cordon = Taint {
            key: crate::manifest::taint::UNSCHEDULABLE_TAINT.to_string(),
            value: String::new(),
            effect: crate::manifest::taint::TaintEffect::NoSchedule,
        };
        if node.unschedulable && !taints.contains(&cordon) {
            taints.push(cordon);
        }
        taints.sort();
        let taken = reserved.get(&name).copied().unwrap_or_default();
        let entry = groups
            .entry((
                labels,
                node.allocatable,
                node.scalar_allocatable.clone(),
                taints,
                node.unschedulable,
                (taken.cpu_millis, taken.memory_bytes),
            ))
            .or_insert_with(|| (Vec::new(), Vec::new(), object.span));
        entry.0.push(name);
        for h in hostname {
            if !entry.1.contains(&h) {
                entry.1.push(h);
            }
        }
    }
    if groups.is_empty() {
        diags.error(
            at,
            format!("`{}` holds no Node objects", truncate(&path.display().to_string())),
        );
    }
    let mut pools: Vec<NodePool> = Vec::new();
    for ((labels, allocatable, scalar_allocatable, taints, unschedulable, (cpu_millis, memory_bytes)), entry) in groups
    {
        let (mut names, mut hostname_labels, span) = entry;
        names.sort();
        hostname_labels.sort();
        let mut name = pool_name(&labels, &names);
        let base = name.clone();
        let mut n = 2;
        while pools.iter().any(|p| p.name == name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        let count = names.len() as u32;
        pools.push(NodePool {
            name,
            count,
            min: 1,
            max: count,
            labels,
            hostname_labels,
            allocatable,
            scalar_allocatable,
            reserved: Amounts {
                cpu_millis,
                memory_bytes,
            },
            taints,
            unschedulable,
            zones: Vec::new(),
            node_names: names,
            span,
        });
    }
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    Cluster { pools, assumed: false }
}

fn sanitize(s: &str) -> String {
    let out: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    out.trim_matches('-').chars().take(40).collect()
}

fn pool_name(labels: &Labels, names: &[String]) -> String {
    let zone = labels.get(ZONE_LABEL).map(|z| sanitize(z));
    let kind = POOL_NAME_LABELS
        .iter()
        .find_map(|l| labels.get(*l))
        .map(|v| sanitize(v))
        .or_else(|| {
            let first = names.first()?;
            let prefix_len = names.iter().fold(first.len(), |len, n| {
                first
                    .bytes()
                    .zip(n.bytes())
                    .take(len)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            let prefix = sanitize(first[..prefix_len].trim_end_matches(|c: char| c.is_ascii_digit() || c == '-'));
            (!prefix.is_empty()).then_some(prefix)
        });
    let name = match (kind, zone) {
        (Some(k), Some(z)) if !k.ends_with(&z) => format!("{k}-{z}"),
        (Some(k), _) => k,
        (None, Some(z)) => z,
        (None, None) => "pool".into(),
    };
    if name.is_empty() { "pool".into() } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_names() {
        let labels: Labels = [("topology.kubernetes.io/zone".to_string(), "eu-west-1a".to_string())].into();
        assert_eq!(
            pool_name(&labels, &["ip-10-0-1-2".into(), "ip-10-0-3-4".into()]),
            "ip-eu-west-1a"
        );
        let labels: Labels = [
            ("cloud.google.com/gke-nodepool".to_string(), "default-pool".to_string()),
            ("topology.kubernetes.io/zone".to_string(), "us-central1-a".to_string()),
        ]
        .into();
        assert_eq!(pool_name(&labels, &[]), "default-pool-us-central1-a");
        assert_eq!(
            pool_name(&Labels::new(), &["worker-1".into(), "worker-2".into()]),
            "worker"
        );
    }
}

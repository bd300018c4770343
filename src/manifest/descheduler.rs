//! DeschedulerPolicy, descheduler/v1alpha2 (profiles and plugins) and v1alpha1 (strategies).
//!
//! Both versions are normalised into profiles of enabled plugins, as the descheduler itself
//! converts v1alpha1 (sigs.k8s.io/descheduler pkg/api/v1alpha1/conversion.go).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::pod::WhenUnsatisfiable;
use crate::manifest::read::Reader;
use crate::manifest::selector::{LabelSelector, Labels};
use crate::source::{Span, Spanned};
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Extension {
    Balance,
    Deschedule,
}

/// The plugins kivi-lint knows, with the extension point they run at.
const PLUGINS: &[(&str, Extension)] = &[
    ("RemoveDuplicates", Extension::Balance),
    ("LowNodeUtilization", Extension::Balance),
    ("HighNodeUtilization", Extension::Balance),
    ("RemovePodsViolatingTopologySpreadConstraint", Extension::Balance),
    ("RemovePodsViolatingInterPodAntiAffinity", Extension::Deschedule),
    ("RemovePodsViolatingNodeAffinity", Extension::Deschedule),
    ("RemovePodsViolatingNodeTaints", Extension::Deschedule),
    ("RemovePodsHavingTooManyRestarts", Extension::Deschedule),
    ("PodLifeTime", Extension::Deschedule),
    ("RemoveFailedPods", Extension::Deschedule),
];

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NamespaceFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl NamespaceFilter {
    fn read(r: &mut Reader, parent: &Node, key: &str) -> NamespaceFilter {
        match r.map(parent, key) {
            Some(n) => NamespaceFilter {
                include: r.string_list(n, "include"),
                exclude: r.string_list(n, "exclude"),
            },
            None => NamespaceFilter::default(),
        }
    }

    pub fn admits(&self, namespace: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|n| n == namespace))
            && !self.exclude.iter().any(|n| n == namespace)
    }
}

/// Args of the DefaultEvictor (or the v1alpha1 top-level switches).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EvictorArgs {
    pub node_fit: bool,
    pub evict_system_critical_pods: bool,
    pub evict_local_storage_pods: bool,
    pub ignore_pvc_pods: bool,
    pub evict_failed_bare_pods: bool,
    pub priority_threshold_value: Option<i32>,
    pub priority_threshold_name: Option<String>,
    pub label_selector: Option<LabelSelector>,
    pub min_replicas: Option<i32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PluginArgs {
    /// Percentages of allocatable per resource (`cpu`, `memory`, `pods`).
    NodeUtilization {
        thresholds: BTreeMap<String, i64>,
        target_thresholds: BTreeMap<String, i64>,
        use_deviation_thresholds: bool,
        number_of_nodes: i32,
    },
    TopologySpread {
        constraints: Vec<WhenUnsatisfiable>,
        topology_balance_node_fit: bool,
    },
    RemoveDuplicates {
        exclude_owner_kinds: Vec<String>,
    },
    NodeTaints {
        excluded_taints: Vec<String>,
        included_taints: Vec<String>,
        include_prefer_no_schedule: bool,
    },
    /// RemovePodsViolatingNodeAffinity's `nodeAffinityType`.
    NodeAffinity {
        required: bool,
        preferred: bool,
    },
    None,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeschedulerPlugin {
    pub name: Spanned<String>,
    pub extension: Extension,
    pub namespaces: NamespaceFilter,
    pub label_selector: Option<LabelSelector>,
    pub args: PluginArgs,
}

impl DeschedulerPlugin {
    /// Plugins that move pods of one workload because of other workloads' pods
    /// (node utilisation balancing), and so tie workloads together.
    pub fn balances_across_workloads(&self) -> bool {
        matches!(self.name.value.as_str(), "LowNodeUtilization" | "HighNodeUtilization")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeschedulerProfile {
    pub name: String,
    pub evictor: EvictorArgs,
    pub plugins: Vec<DeschedulerPlugin>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeschedulerPolicy {
    pub api_version: String,
    pub profiles: Vec<DeschedulerProfile>,
    /// Only nodes matching this label selector string are processed.
    pub node_selector: Option<String>,
    pub max_pods_to_evict_per_node: Option<i32>,
    pub max_pods_to_evict_per_namespace: Option<i32>,
    pub max_pods_to_evict_total: Option<i32>,
    #[serde(skip)]
    pub span: Span,
}

impl DeschedulerPolicy {
    pub fn read(r: &mut Reader, node: &Node, api_version: &str) -> DeschedulerPolicy {
        let profiles = if api_version.ends_with("v1alpha1") {
            read_v1alpha1(r, node)
        } else {
            if !api_version.ends_with("v1alpha2") {
                r.warning(
                    node.span,
                    format!("DeschedulerPolicy `{api_version}` is not known; read as descheduler/v1alpha2"),
                );
            }
            r.maps(node, "profiles")
                .into_iter()
                .map(|p| read_profile(r, p))
                .collect()
        };
        DeschedulerPolicy {
            api_version: api_version.to_string(),
            profiles,
            node_selector: r.text(node, "nodeSelector").map(|s| s.value),
            max_pods_to_evict_per_node: r.count(node, "maxNoOfPodsToEvictPerNode").map(|v| v.value),
            max_pods_to_evict_per_namespace: r.count(node, "maxNoOfPodsToEvictPerNamespace").map(|v| v.value),
            max_pods_to_evict_total: r.count(node, "maxNoOfPodsToEvictTotal").map(|v| v.value),
            span: node.span,
        }
    }

    pub fn plugins(&self) -> impl Iterator<Item = (&DeschedulerProfile, &DeschedulerPlugin)> {
        self.profiles
            .iter()
            .flat_map(|p| p.plugins.iter().map(move |pl| (p, pl)))
    }

    /// Whether some enabled plugin may evict pods of a workload in `namespace` with these labels.
    pub fn may_evict(&self, namespace: &str, labels: &Labels) -> bool {
        self.plugins().any(|(profile, plugin)| {
            plugin.namespaces.admits(namespace)
                && plugin.label_selector.as_ref().is_none_or(|s| s.matches(labels))
                && profile
                    .evictor
                    .label_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(labels))
        })
    }
}

fn extension_of(r: &mut Reader, name: &Spanned<String>) -> Extension {
    match PLUGINS.iter().find(|(n, _)| *n == name.value) {
        Some((_, e)) => *e,
        None => {
            r.warning(
                name.span,
                format!("descheduler plugin `{}` is not modelled; it is ignored", name.value),
            );
            Extension::Deschedule
        }
    }
}

fn read_evictor(r: &mut Reader, args: Option<&Node>) -> EvictorArgs {
    let Some(args) = args else {
        return EvictorArgs::default();
    };
    let flag = |r: &mut Reader, key: &str| r.bool(args, key).is_some_and(|b| b.value);
    let (priority_threshold_value, priority_threshold_name) = match r.map(args, "priorityThreshold") {
        Some(p) => (r.int32(p, "value").map(|v| v.value), r.text(p, "name").map(|v| v.value)),
        None => (None, None),
    };
    EvictorArgs {
        node_fit: flag(r, "nodeFit"),
        evict_system_critical_pods: flag(r, "evictSystemCriticalPods"),
        evict_local_storage_pods: flag(r, "evictLocalStoragePods"),
        ignore_pvc_pods: flag(r, "ignorePvcPods"),
        evict_failed_bare_pods: flag(r, "evictFailedBarePods"),
        priority_threshold_value,
        priority_threshold_name,
        label_selector: LabelSelector::read(r, args, "labelSelector"),
        min_replicas: r.count(args, "minReplicas").map(|v| v.value),
    }
}

fn percent_map(r: &mut Reader, parent: &Node, key: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let Some(node) = r.map(parent, key) else {
        return out;
    };
    for (k, v) in node.as_map().unwrap_or_default() {
        let name = k.scalar_text().unwrap_or_default();
        match v.value {
            crate::yaml::Value::Int(p) if (0..=100).contains(&p) => {
                out.insert(name, p);
            }
            crate::yaml::Value::Float(p) if (0.0..=100.0).contains(&p) => {
                out.insert(name, p.round() as i64);
            }
            _ => r.error(v.span, format!("`{key}.{name}` must be a percentage from 0 to 100")),
        }
    }
    out
}

fn read_args(r: &mut Reader, name: &str, args: Option<&Node>) -> PluginArgs {
    let Some(args) = args else {
        return match name {
            "RemovePodsViolatingTopologySpreadConstraint" => PluginArgs::TopologySpread {
                constraints: vec![WhenUnsatisfiable::DoNotSchedule],
                topology_balance_node_fit: true,
            },
            "RemovePodsViolatingNodeAffinity" => PluginArgs::NodeAffinity {
                required: true,
                preferred: false,
            },
            "RemovePodsViolatingNodeTaints" => PluginArgs::NodeTaints {
                excluded_taints: Vec::new(),
                included_taints: Vec::new(),
                include_prefer_no_schedule: false,
            },
            _ => PluginArgs::None,
        };
    };
    match name {
        "LowNodeUtilization" | "HighNodeUtilization" => PluginArgs::NodeUtilization {
            thresholds: percent_map(r, args, "thresholds"),
            target_thresholds: percent_map(r, args, "targetThresholds"),
            use_deviation_thresholds: r.bool(args, "useDeviationThresholds").is_some_and(|b| b.value),
            number_of_nodes: r.count(args, "numberOfNodes").map_or(0, |v| v.value),
        },
        "RemovePodsViolatingTopologySpreadConstraint" => {
            let mut constraints = Vec::new();
            for c in r.seq(args, "constraints") {
                match c.as_str() {
                    Some("DoNotSchedule") => constraints.push(WhenUnsatisfiable::DoNotSchedule),
                    Some("ScheduleAnyway") => constraints.push(WhenUnsatisfiable::ScheduleAnyway),
                    _ => r.error(c.span, "`constraints[]` must be DoNotSchedule or ScheduleAnyway"),
                }
            }
            if constraints.is_empty() {
                constraints.push(WhenUnsatisfiable::DoNotSchedule);
            }
            PluginArgs::TopologySpread {
                constraints,
                topology_balance_node_fit: r.bool(args, "topologyBalanceNodeFit").is_none_or(|b| b.value),
            }
        }
        "RemoveDuplicates" => PluginArgs::RemoveDuplicates {
            exclude_owner_kinds: r.string_list(args, "excludeOwnerKinds"),
        },
        "RemovePodsViolatingNodeTaints" => PluginArgs::NodeTaints {
            excluded_taints: r.string_list(args, "excludedTaints"),
            included_taints: r.string_list(args, "includedTaints"),
            include_prefer_no_schedule: r.bool(args, "includePreferNoSchedule").is_some_and(|b| b.value),
        },
        "RemovePodsViolatingNodeAffinity" => {
            let mut required = false;
            let mut preferred = false;
            for t in r.seq(args, "nodeAffinityType") {
                match t.as_str() {
                    Some("requiredDuringSchedulingIgnoredDuringExecution") => required = true,
                    Some("preferredDuringSchedulingIgnoredDuringExecution") => preferred = true,
                    _ => r.error(
                        t.span,
                        "`nodeAffinityType[]` must be requiredDuringSchedulingIgnoredDuringExecution or preferredDuringSchedulingIgnoredDuringExecution",
                    ),
                }
            }
            PluginArgs::NodeAffinity { required, preferred }
        }
        _ => PluginArgs::None,
    }
}

fn read_profile(r: &mut Reader, node: &Node) -> DeschedulerProfile {
    let name = r.text(node, "name").map(|n| n.value).unwrap_or_default();
    let mut configs: Vec<(Spanned<String>, Option<&Node>)> = Vec::new();
    for pc in r.maps(node, "pluginConfig") {
        let Some(n) = r.text(pc, "name") else {
            r.error(pc.span, "a `pluginConfig` entry needs a `name`");
            continue;
        };
        let args = r.map(pc, "args");
        configs.push((n, args));
    }
    let evictor = read_evictor(
        r,
        configs
            .iter()
            .find(|(n, _)| n.value == "DefaultEvictor")
            .and_then(|(_, a)| *a),
    );
    let mut enabled: Vec<Spanned<String>> = Vec::new();
    if let Some(plugins) = r.map(node, "plugins") {
        for point in ["balance", "deschedule"] {
            if let Some(p) = r.map(plugins, point) {
                for item in r.seq(p, "enabled") {
                    // Entries are names, or `{name: X}` in some examples.
                    let name = item
                        .scalar_text()
                        .or_else(|| item.get("name").and_then(|n| n.scalar_text()));
                    match name {
                        Some(n) => enabled.push(Spanned::new(n, item.span)),
                        None => r.error(item.span, "a plugin entry must be a name"),
                    }
                }
            }
        }
    }
    let plugins = enabled
        .into_iter()
        .map(|name| {
            let extension = extension_of(r, &name);
            let args = configs
                .iter()
                .find(|(n, _)| n.value == name.value)
                .and_then(|(_, a)| *a);
            DeschedulerPlugin {
                extension,
                namespaces: args
                    .map(|a| {
                        let mut f = NamespaceFilter::read(r, a, "namespaces");
                        f.exclude
                            .extend(NamespaceFilter::read(r, a, "evictableNamespaces").exclude);
                        f
                    })
                    .unwrap_or_default(),
                label_selector: args.and_then(|a| LabelSelector::read(r, a, "labelSelector")),
                args: read_args(r, &name.value, args),
                name,
            }
        })
        .collect();
    DeschedulerProfile { name, evictor, plugins }
}

fn read_v1alpha1(r: &mut Reader, node: &Node) -> Vec<DeschedulerProfile> {
    let flag = |r: &mut Reader, key: &str| r.bool(node, key).is_some_and(|b| b.value);
    let mut base_evictor = EvictorArgs {
        evict_system_critical_pods: flag(r, "evictSystemCriticalPods"),
        evict_local_storage_pods: flag(r, "evictLocalStoragePods"),
        ignore_pvc_pods: flag(r, "ignorePvcPods"),
        evict_failed_bare_pods: flag(r, "evictFailedBarePods"),
        ..EvictorArgs::default()
    };
    let mut profiles = Vec::new();
    let Some(strategies) = r.map(node, "strategies") else {
        return profiles;
    };
    for (k, v) in strategies.as_map().unwrap_or_default() {
        let name = Spanned::new(k.scalar_text().unwrap_or_default(), k.span);
        if v.as_map().is_none() || !r.bool(v, "enabled").is_some_and(|b| b.value) {
            continue;
        }
        let params = r.map(v, "params");
        let mut evictor = base_evictor.clone();
        if let Some(p) = params {
            evictor.node_fit = r.bool(p, "nodeFit").is_some_and(|b| b.value);
            evictor.priority_threshold_value = r.int32(p, "thresholdPriority").map(|v| v.value);
            evictor.priority_threshold_name = r.text(p, "thresholdPriorityClassName").map(|v| v.value);
        }
        let args = match (name.value.as_str(), params) {
            (_, None) => read_args(r, &name.value, None),
            ("LowNodeUtilization" | "HighNodeUtilization", Some(p)) => {
                match r.map(p, "nodeResourceUtilizationThresholds") {
                    Some(t) => read_args(r, &name.value, Some(t)),
                    None => read_args(r, &name.value, None),
                }
            }
            ("RemoveDuplicates", Some(p)) => match r.map(p, "removeDuplicates") {
                Some(d) => read_args(r, &name.value, Some(d)),
                None => read_args(r, &name.value, None),
            },
            ("RemovePodsViolatingTopologySpreadConstraint", Some(p)) => PluginArgs::TopologySpread {
                constraints: if r.bool(p, "includeSoftConstraints").is_some_and(|b| b.value) {
                    vec![WhenUnsatisfiable::DoNotSchedule, WhenUnsatisfiable::ScheduleAnyway]
                } else {
                    vec![WhenUnsatisfiable::DoNotSchedule]
                },
                topology_balance_node_fit: true,
            },
            (_, Some(p)) => read_args(r, &name.value, Some(p)),
        };
        let extension = extension_of(r, &name);
        profiles.push(DeschedulerProfile {
            name: format!("strategy-{}", name.value),
            evictor,
            plugins: vec![DeschedulerPlugin {
                extension,
                namespaces: params
                    .map(|p| NamespaceFilter::read(r, p, "namespaces"))
                    .unwrap_or_default(),
                label_selector: params.and_then(|p| LabelSelector::read(r, p, "labelSelector")),
                args,
                name,
            }],
        });
    }
    base_evictor.node_fit = false;
    profiles
}

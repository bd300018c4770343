//! KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): the parts that change placement.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::pod::{NodeAffinity, WhenUnsatisfiable};
use crate::manifest::read::Reader;
use crate::source::{Span, Spanned};
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ScoringStrategy {
    LeastAllocated,
    MostAllocated,
    RequestedToCapacityRatio,
}

impl ScoringStrategy {
    pub fn parse(s: &str) -> Option<ScoringStrategy> {
        match s {
            "LeastAllocated" => Some(ScoringStrategy::LeastAllocated),
            "MostAllocated" => Some(ScoringStrategy::MostAllocated),
            "RequestedToCapacityRatio" => Some(ScoringStrategy::RequestedToCapacityRatio),
            _ => None,
        }
    }

    pub const NAMES: &'static [&'static str] = &["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"];
}

/// A point of RequestedToCapacityRatio's shape: utilization percent (0..100) to score (0..10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ShapePoint {
    pub utilization: i64,
    pub score: i64,
}

/// A cluster-level default spread constraint (no selector: it applies to a pod's own workload).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DefaultSpreadConstraint {
    pub max_skew: i32,
    pub topology_key: String,
    pub when_unsatisfiable: WhenUnsatisfiable,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedulerProfile {
    pub scheduler_name: String,
    pub scoring_strategy: Option<Spanned<ScoringStrategy>>,
    /// Resource weights of the scoring strategy. Empty means the default, cpu 1 and memory 1;
    /// otherwise a resource left out has weight 0.
    pub resource_weights: BTreeMap<String, i64>,
    /// `requestedToCapacityRatio.shape` of a RequestedToCapacityRatio strategy, validated as
    /// the API server does (utilization strictly increasing in 0..100, score in 0..10).
    pub ratio_shape: Vec<ShapePoint>,
    /// NodeResourcesFit `ignoredResources` and `ignoredResourceGroups`: extended resources the
    /// filter does not check.
    pub ignored_resources: Vec<String>,
    pub ignored_resource_groups: Vec<String>,
    /// `PodTopologySpread` args: `None` means the system defaults.
    pub default_constraints: Option<Vec<DefaultSpreadConstraint>>,
    /// Score plugin weights given in `plugins.score.enabled`.
    pub score_weights: BTreeMap<String, i32>,
    /// Score plugins disabled in `plugins.score.disabled` (`*` disables all defaults).
    pub disabled_scores: Vec<String>,
    /// `NodeAffinity` args `addedAffinity`: ANDed with every pod's own node affinity (its
    /// preferred terms add to the score). The DaemonSet controller does not see it.
    pub added_affinity: NodeAffinity,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedulerConfiguration {
    pub profiles: Vec<SchedulerProfile>,
    #[serde(skip)]
    pub span: Span,
}

impl SchedulerConfiguration {
    pub fn read(r: &mut Reader, node: &Node) -> SchedulerConfiguration {
        let profiles = r
            .maps(node, "profiles")
            .into_iter()
            .map(|p| read_profile(r, p))
            .collect();
        SchedulerConfiguration {
            profiles,
            span: node.span,
        }
    }

    pub fn profile(&self, scheduler_name: &str) -> Option<&SchedulerProfile> {
        self.profiles.iter().find(|p| p.scheduler_name == scheduler_name)
    }
}

fn read_profile(r: &mut Reader, node: &Node) -> SchedulerProfile {
    let scheduler_name = r
        .text(node, "schedulerName")
        .map_or_else(|| "default-scheduler".to_string(), |n| n.value);
    let mut profile = SchedulerProfile {
        scheduler_name,
        scoring_strategy: None,
        resource_weights: BTreeMap::new(),
        ratio_shape: Vec::new(),
        ignored_resources: Vec::new(),
        ignored_resource_groups: Vec::new(),
        default_constraints: None,
        score_weights: BTreeMap::new(),
        disabled_scores: Vec::new(),
        added_affinity: NodeAffinity::default(),
    };
    for pc in r.maps(node, "pluginConfig") {
        let name = r.text(pc, "name").map(|n| n.value).unwrap_or_default();
        let Some(args) = r.map(pc, "args") else { continue };
        match name.as_str() {
            "NodeResourcesFit" => {
                profile.ignored_resources = r.string_list(args, "ignoredResources");
                profile.ignored_resource_groups = r.string_list(args, "ignoredResourceGroups");
                if let Some(strategy) = r.map(args, "scoringStrategy") {
                    profile.scoring_strategy = r
                        .one_of(strategy, "type", ScoringStrategy::NAMES)
                        .map(|t| t.map(|t| ScoringStrategy::parse(&t).expect("checked by one_of")));
                    for res in r.maps(strategy, "resources") {
                        // An unset or zero weight defaults to 1 (SetDefaults_NodeResourcesFitArgs).
                        if let Some(n) = r.text(res, "name") {
                            let w = r.int(res, "weight").map_or(1, |w| w.value);
                            profile.resource_weights.insert(n.value, if w == 0 { 1 } else { w });
                        }
                    }
                    if profile
                        .scoring_strategy
                        .as_ref()
                        .is_some_and(|s| s.value == ScoringStrategy::RequestedToCapacityRatio)
                    {
                        profile.ratio_shape = read_shape(r, strategy);
                    }
                }
            }
            "NodeAffinity" => {
                if let Some(added) = r.map(args, "addedAffinity") {
                    profile.added_affinity = NodeAffinity::read(r, added);
                }
            }
            "PodTopologySpread" => {
                let listed = r.field(args, "defaultingType").is_some_and(|_| {
                    r.one_of(args, "defaultingType", &["System", "List"])
                        .is_some_and(|t| t.value == "List")
                });
                if listed {
                    let mut constraints = Vec::new();
                    for c in r.maps(args, "defaultConstraints") {
                        let (Some(skew), Some(key), Some(when)) = (
                            r.int32(c, "maxSkew"),
                            r.text(c, "topologyKey"),
                            r.one_of(c, "whenUnsatisfiable", &["DoNotSchedule", "ScheduleAnyway"]),
                        ) else {
                            r.error(
                                c.span,
                                "a default constraint needs `maxSkew`, `topologyKey` and `whenUnsatisfiable`",
                            );
                            continue;
                        };
                        if r.field(c, "labelSelector").is_some() {
                            r.error(c.span, "default constraints must not have a `labelSelector`");
                        }
                        constraints.push(DefaultSpreadConstraint {
                            max_skew: skew.value,
                            topology_key: key.value,
                            when_unsatisfiable: if when.value == "DoNotSchedule" {
                                WhenUnsatisfiable::DoNotSchedule
                            } else {
                                WhenUnsatisfiable::ScheduleAnyway
                            },
                        });
                    }
                    profile.default_constraints = Some(constraints);
                }
            }
            _ => {}
        }
    }
    if let Some(plugins) = r.map(node, "plugins")
        && let Some(score) = r.map(plugins, "score")
    {
        for e in r.maps(score, "enabled") {
            if let Some(n) = r.text(e, "name") {
                let w = r.int32(e, "weight").map_or(1, |w| w.value);
                profile.score_weights.insert(n.value, w);
            }
        }
        for d in r.maps(score, "disabled") {
            if let Some(n) = r.text(d, "name") {
                profile.disabled_scores.push(n.value);
            }
        }
    }
    profile
}

/// `requestedToCapacityRatio.shape` (config/validation/validation_pluginargs.go
/// validateFunctionShape). An invalid shape is a located error; the model then gives
/// NodeResourcesFit no say (every node scores 0).
fn read_shape(r: &mut Reader, strategy: &Node) -> Vec<ShapePoint> {
    let Some(ratio) = r.map(strategy, "requestedToCapacityRatio") else {
        r.error(
            strategy.span,
            "a RequestedToCapacityRatio strategy needs `requestedToCapacityRatio.shape`",
        );
        return Vec::new();
    };
    let points = r.maps(ratio, "shape");
    if points.is_empty() {
        r.error(ratio.span, "`shape` needs at least one point");
        return Vec::new();
    }
    let mut shape: Vec<ShapePoint> = Vec::new();
    for p in points {
        let (Some(utilization), Some(score)) = (r.int(p, "utilization"), r.int(p, "score")) else {
            r.error(p.span, "a shape point needs `utilization` and `score`");
            return Vec::new();
        };
        if !(0..=100).contains(&utilization.value) {
            r.error(utilization.span, "`utilization` must be from 0 to 100");
            return Vec::new();
        }
        if !(0..=10).contains(&score.value) {
            r.error(score.span, "`score` must be from 0 to 10");
            return Vec::new();
        }
        if shape.last().is_some_and(|last| last.utilization >= utilization.value) {
            r.error(utilization.span, "`utilization` values must be strictly increasing");
            return Vec::new();
        }
        shape.push(ShapePoint {
            utilization: utilization.value,
            score: score.value,
        });
    }
    shape
}

impl Default for SchedulerProfile {
    fn default() -> Self {
        SchedulerProfile {
            scheduler_name: "default-scheduler".to_string(),
            scoring_strategy: None,
            resource_weights: BTreeMap::new(),
            ratio_shape: Vec::new(),
            ignored_resources: Vec::new(),
            ignored_resource_groups: Vec::new(),
            default_constraints: None,
            score_weights: BTreeMap::new(),
            disabled_scores: Vec::new(),
            added_affinity: NodeAffinity::default(),
        }
    }
}

impl SchedulerProfile {
    /// Whether NodeResourcesFit's filter checks a scalar resource: every one but the extended
    /// resources named in `ignoredResources` or whose domain is in `ignoredResourceGroups`.
    pub fn checks_resource(&self, name: &str) -> bool {
        if !crate::manifest::pod::is_extended_resource(name) {
            return true;
        }
        let domain = name.split('/').next().unwrap_or("");
        !self.ignored_resources.iter().any(|r| r == name) && !self.ignored_resource_groups.iter().any(|g| g == domain)
    }

    /// The weight of a default score plugin: as enabled with a weight, 0 when disabled, else
    /// the default profile's.
    pub fn score_weight(&self, plugin: &str, default: i64) -> i64 {
        if let Some(w) = self.score_weights.get(plugin) {
            return i64::from(*w);
        }
        if self.disabled_scores.iter().any(|d| d == plugin || d == "*") {
            return 0;
        }
        default
    }
}

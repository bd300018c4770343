//! KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): the parts that change placement.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::pod::WhenUnsatisfiable;
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
    /// Resource weights of the scoring strategy (default cpu 1, memory 1).
    pub resource_weights: BTreeMap<String, i64>,
    /// `PodTopologySpread` args: `None` means the system defaults.
    pub default_constraints: Option<Vec<DefaultSpreadConstraint>>,
    /// Score plugin weights given in `plugins.score.enabled`.
    pub score_weights: BTreeMap<String, i32>,
    /// Score plugins disabled in `plugins.score.disabled` (`*` disables all defaults).
    pub disabled_scores: Vec<String>,
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
        default_constraints: None,
        score_weights: BTreeMap::new(),
        disabled_scores: Vec::new(),
    };
    for pc in r.maps(node, "pluginConfig") {
        let name = r.text(pc, "name").map(|n| n.value).unwrap_or_default();
        let Some(args) = r.map(pc, "args") else { continue };
        match name.as_str() {
            "NodeResourcesFit" => {
                if let Some(strategy) = r.map(args, "scoringStrategy") {
                    profile.scoring_strategy = r
                        .one_of(strategy, "type", ScoringStrategy::NAMES)
                        .map(|t| t.map(|t| ScoringStrategy::parse(&t).expect("checked by one_of")));
                    for res in r.maps(strategy, "resources") {
                        if let (Some(n), Some(w)) = (r.text(res, "name"), r.int(res, "weight")) {
                            profile.resource_weights.insert(n.value, w.value);
                        }
                    }
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

impl Default for SchedulerProfile {
    fn default() -> Self {
        SchedulerProfile {
            scheduler_name: "default-scheduler".to_string(),
            scoring_strategy: None,
            resource_weights: BTreeMap::new(),
            default_constraints: None,
            score_weights: BTreeMap::new(),
            disabled_scores: Vec::new(),
        }
    }
}

impl SchedulerProfile {
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

//! The registry of checks: one place for ids, aliases, definitions, default levels and params.
//!
//! Ids are stable: they appear in output, configuration and suppressions. Kivi's intent names
//! are accepted as aliases.

use serde::Serialize;

/// How serious a finding of a check is (SARIF levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "error" => Some(Level::Error),
            "warning" => Some(Level::Warning),
            "note" => Some(Level::Note),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// What a unit must contain for a check to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Any unit with a workload.
    Always,
    /// Units with a HorizontalPodAutoscaler.
    WithAutoscaler,
    /// Units with a descheduler policy, or where the environment evicts pods (node failure,
    /// maintenance, drain, NoExecute taints).
    WithEvictions,
    /// When the environment may overload nodes (`node-overload` events).
    WithOverloadEvents,
    /// Units with a workload of more than one replica, or a topology spread constraint.
    WithSpread,
    /// Units with a Deployment (a rollout to a new pod template can be started).
    WithRollout,
}

#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub description: &'static str,
    pub default: Option<i64>,
}

#[derive(Clone, Copy, Debug)]
pub struct Check {
    pub id: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub definition: &'static str,
    pub level: Level,
    pub applies: Applies,
    pub params: &'static [Param],
}

pub const CHECKS: &[Check] = &[
    Check {
        id: "pods-schedulable",
        aliases: &["pod_always_schedulable", "no_feasible_node"],
        summary: "every pod a controller creates finds a feasible node",
        definition: "Every pod that a controller creates (including after the HPA scales up to \
                     maxReplicas, after node failures and during rollouts) is eventually bound to \
                     a node that passes every scheduler filter.",
        level: Level::Error,
        applies: Applies::Always,
        params: &[],
    },
    Check {
        id: "min-replicas-available",
        aliases: &["replica_num_always_meet_min", "replica_num_always_meet_exp"],
        summary: "available replicas never drop below the minimum once reached",
        definition: "After first reaching it, the number of available replicas of each workload \
                     never drops below its bound: the HPA's minReplicas (or spec.replicas without \
                     an HPA), lowered to what a PodDisruptionBudget of the workload declares \
                     enough; or the `min` param when set. With the default bound, pods the \
                     environment takes away with their node (node-failure, node-maintenance, \
                     node-overload) make the check wait until the bound is reached again; a \
                     `min` param holds throughout.",
        level: Level::Error,
        applies: Applies::Always,
        params: &[Param {
            name: "min",
            description: "the bound to hold instead of minReplicas or spec.replicas",
            default: None,
        }],
    },
    Check {
        id: "no-replica-oscillation",
        aliases: &["no_oscillation_replica_num"],
        summary: "the replica count does not swing to max and back without a load change",
        definition: "Without a change of load, the replica count of an autoscaled workload does \
                     not rise to maxReplicas and fall back again.",
        level: Level::Warning,
        applies: Applies::WithAutoscaler,
        params: &[],
    },
    Check {
        id: "no-eviction-loop",
        aliases: &["no_oscillation_eviction"],
        summary: "no repeated evict and recreate cycle",
        definition: "No workload's pods are evicted by a controller (the descheduler, taint \
                     eviction) and replaced, `loops` times in a row. Environment events \
                     (maintenance, failures) are bounded and do not count.",
        level: Level::Error,
        applies: Applies::WithEvictions,
        params: &[Param {
            name: "loops",
            description: "evict/recreate repetitions that count as a loop",
            default: Some(3),
        }],
    },
    Check {
        id: "no-node-overload",
        aliases: &["no_kernel_panic"],
        summary: "no node is driven into overload repeatedly",
        definition: "No node's pods use more than the overload threshold of its allocatable \
                     resources again after it has restarted.",
        level: Level::Error,
        applies: Applies::WithOverloadEvents,
        params: &[],
    },
    Check {
        id: "pods-balanced",
        aliases: &["pod_balance_across_node"],
        summary: "pods of a workload stay balanced across ready nodes",
        definition: "Once stable, the pods of each workload differ by at most `maxSkew` between \
                     any two ready nodes they may use.",
        level: Level::Warning,
        applies: Applies::WithSpread,
        params: &[Param {
            name: "maxSkew",
            description: "largest allowed difference of pod counts between two nodes",
            default: Some(1),
        }],
    },
    Check {
        id: "rollout-completes",
        aliases: &[],
        summary: "a rollout to a new pod template finishes",
        definition: "When a new revision of a Deployment's pod template is applied, the rollout \
                     finishes under the unit's constraints (maxSurge and maxUnavailable, \
                     affinity, spread, resources): every replica runs the new template and no \
                     old pod is left. While it runs, availability may dip by maxUnavailable.",
        level: Level::Error,
        applies: Applies::WithRollout,
        params: &[],
    },
];

/// Find a check by id or alias.
pub fn find(name: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.id == name || c.aliases.contains(&name))
}

/// All ids and aliases, for messages.
pub fn known_names() -> String {
    CHECKS.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_aliases_resolve() {
        let mut names: Vec<&str> = CHECKS
            .iter()
            .flat_map(|c| std::iter::once(c.id).chain(c.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len());
        assert_eq!(find("no_kernel_panic").unwrap().id, "no-node-overload");
        assert!(find("nope").is_none());
    }
}

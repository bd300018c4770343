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
    /// When the environment drains nodes (`node-drain` events).
    WithDrainEvents,
    /// Units where controllers react to each other's results (an HPA, a descheduler policy,
    /// NoExecute taints, GitOps sync), so they could keep acting forever.
    WithFeedback,
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
    /// SARIF tags (at most 20).
    pub tags: &'static [&'static str],
    /// A configuration that violates the check, told in a few lines.
    pub example: &'static str,
    /// The usual ways out.
    pub fixes: &'static [&'static str],
    /// Runs without being listed in `checks.enable`. New checks that cost a search of their
    /// own start off (opt-in), so upgrades neither slow down nor break existing pipelines.
    pub default_enabled: bool,
}

/// Where kivi-lint and its rule documentation live.
pub const INFORMATION_URI: &str = "https://github.com/kivi-lint/kivi-lint";

/// A file of the repository at this release's tag (`v` and the crate version).
pub fn docs_uri(path: &str) -> String {
    format!("{INFORMATION_URI}/blob/v{}/{path}", env!("CARGO_PKG_VERSION"))
}

impl Check {
    /// The id in UpperCamelCase, SARIF's `name`.
    pub fn rule_name(&self) -> String {
        self.id
            .split('-')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
            })
            .collect()
    }

    /// The check's documentation as this release wrote it: pinned to the version's tag, so
    /// an old report never links to a rule a later release changed.
    pub fn help_uri(&self) -> String {
        format!("{}#{}", docs_uri("docs/rules.md"), self.id)
    }

    /// Definition, example and fixes as plain text (`kivi-lint explain`, SARIF `help.text`).
    pub fn help_text(&self) -> String {
        let mut out = format!("{}\n\nExample: {}\n\nUsual fixes:\n", self.definition, self.example);
        if !self.default_enabled {
            out = format!("Off unless the config's `checks.enable` lists it.\n\n{out}");
        }
        for f in self.fixes {
            out.push_str(&format!("- {f}\n"));
        }
        out.push_str(&format!(
            "\nSuppress with the annotation `ignore-check.kivi-lint.io/{}: \"<reason>\"` on any object of the unit.\n",
            self.id
        ));
        out
    }

    /// The same as Markdown (SARIF `help.markdown`, `kivi-lint rules --format markdown`).
    pub fn help_markdown(&self) -> String {
        let mut out = format!(
            "{}\n\n**Default level:** {}{}\n\n**Example.** {}\n\n**Usual fixes**\n\n",
            self.definition,
            self.level.as_str(),
            if self.default_enabled {
                ""
            } else {
                "; off unless `checks.enable` lists it (it costs a search of its own)"
            },
            self.example
        );
        for f in self.fixes {
            out.push_str(&format!("- {f}\n"));
        }
        if !self.params.is_empty() {
            out.push_str("\n**Parameters** (config `checks.params`)\n\n");
            for p in self.params {
                let default = p.default.map(|d| format!(" Default {d}.")).unwrap_or_default();
                out.push_str(&format!("- `{}`: {}.{default}\n", p.name, p.description));
            }
        }
        if !self.aliases.is_empty() {
            out.push_str(&format!(
                "\n**Kivi names:** {}\n",
                self.aliases
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out.push_str(&format!(
            "\n**Suppress:** annotate any object of the unit with `ignore-check.kivi-lint.io/{}: \"<reason>\"`, or add a `suppressions` entry to the config.\n",
            self.id
        ));
        out
    }
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
        tags: &["reliability", "scheduling", "topology-spread", "affinity"],
        example: "A Deployment with 6 replicas and a required `topologySpreadConstraint` on `topology.kubernetes.io/zone` (maxSkew 1) runs on 3 zones of which one has a single small node: once the HPA scales to 6, the sixth pod has no zone where it keeps the skew and stays Pending.",
        default_enabled: true,
        fixes: &[
            "Use `whenUnsatisfiable: ScheduleAnyway` for spread constraints that are a preference, not a rule.",
            "Give every zone (or node pool) the capacity for maxReplicas / zones pods, or lower the HPA's maxReplicas.",
            "Make required anti-affinity preferred, or allow as many nodes as replicas.",
            "Check that nodeSelector, affinity and tolerations match a pool that exists.",
        ],
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
        tags: &["reliability", "availability", "disruption", "hpa"],
        example: "A PodDisruptionBudget allows 1 unavailable pod of a 3-replica Deployment, but the descheduler also evicts a pod whose replacement cannot be scheduled: available replicas fall to 1.",
        default_enabled: true,
        fixes: &[
            "Set a PodDisruptionBudget that matches the availability you need.",
            "Leave room in the cluster for a replacement pod (requests below allocatable with one node gone).",
            "Raise minReplicas, or spread the pods so that one node or zone holds fewer of them.",
        ],
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
        tags: &["reliability", "autoscaling", "hpa"],
        example: "A container's startup cpu is far above its steady cpu and the HPA's target sits between them: each new pod pushes utilisation over the target, the HPA scales to maxReplicas, and scales back once the pods settle, again and again.",
        default_enabled: true,
        fixes: &[
            "Raise the HPA's target utilisation above the startup burst, or lower the startup burst.",
            "Add a scale-down stabilisation window (`behavior.scaleDown.stabilizationWindowSeconds`).",
            "Set the cpu request closer to the steady usage.",
        ],
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
        tags: &["reliability", "descheduler", "taints", "scheduling"],
        example: "The descheduler's RemovePodsViolatingTopologySpreadConstraint evicts a pod that the scheduler can only place on the same node again, because a node affinity pins it there: evict, recreate, evict, forever.",
        default_enabled: true,
        fixes: &[
            "Align the descheduler's plugins with the scheduler's constraints (the same spread constraints, affinity and taints).",
            "Exclude the workload from the plugin (namespaces or labelSelector in the policy).",
            "Give NoExecute tolerations no `tolerationSeconds` when the pod must stay, or none at all when it must not.",
        ],
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
        tags: &["reliability", "resources", "capacity"],
        example: "Pods whose cpu request is a fraction of their usage pack onto one node; it overloads and restarts, the pods come back to the same node and overload it again.",
        default_enabled: true,
        fixes: &[
            "Set requests at the pods' real usage so the scheduler does not overcommit nodes.",
            "Set limits, or spread the pods with anti-affinity or a topology spread constraint.",
        ],
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
        tags: &["reliability", "scheduling", "topology-spread", "balance"],
        example: "After a node comes back from maintenance, all replicas stay on the other nodes because a soft spread constraint never moves running pods and no descheduler rebalances them.",
        // Kubernetes never moves running pods to rebalance them (the scheduler places, it
        // does not re-place), so an imbalance after an outage is what Kubernetes promises,
        // not a defect: opt-in, for clusters that run a descheduler to keep balance.
        default_enabled: false,
        fixes: &[
            "Run the descheduler's RemovePodsViolatingTopologySpreadConstraint or RemoveDuplicates.",
            "Use a required (DoNotSchedule) spread constraint when balance matters.",
            "Raise the balance param `maxSkew` if a skew is acceptable.",
        ],
    },
    Check {
        id: "rollout-completes",
        aliases: &[],
        summary: "a rollout to a new pod template finishes",
        definition: "When a new revision of a Deployment's or StatefulSet's pod template is \
                     applied, the rollout finishes under the unit's constraints (maxSurge and \
                     maxUnavailable, the StatefulSet's ordered updates and partition, affinity, \
                     spread, resources): every replica (of a StatefulSet, every ordinal at or \
                     above the partition) runs the new template and no old pod is left. While \
                     it runs, availability may dip by maxUnavailable.",
        level: Level::Error,
        applies: Applies::WithRollout,
        params: &[],
        tags: &["reliability", "rollout", "deployment", "affinity"],
        example: "A Deployment with required pod anti-affinity on the hostname runs one pod on each of 3 nodes with `maxSurge: 1, maxUnavailable: 0`: the surge pod of the new revision fits on no node, no old pod may go first, and the rollout never finishes.",
        default_enabled: true,
        fixes: &[
            "Allow `maxUnavailable: 1` (or more) so that an old pod makes room first.",
            "Have more nodes than replicas when pods must not share nodes.",
            "Use preferred anti-affinity instead of required.",
        ],
    },
    Check {
        id: "drain-completes",
        aliases: &[],
        summary: "draining a node finishes",
        definition: "When a node is drained (cordoned, then its pods evicted through the Eviction \
                     API, which honours PodDisruptionBudgets), the drain finishes: once the \
                     cluster has settled, no pod is left on the node that no budget lets go. A \
                     budget that never allows a disruption (minAvailable equal to the replicas or \
                     to the HPA's minReplicas, maxUnavailable 0) or replacements that cannot be \
                     scheduled elsewhere block the drain for good.",
        level: Level::Error,
        applies: Applies::WithDrainEvents,
        params: &[],
        tags: &["reliability", "availability", "disruption", "drain", "pdb"],
        example: "A Deployment with 2 replicas and a PodDisruptionBudget with `minAvailable: 2`: \
                  the Eviction API refuses every eviction, so `kubectl drain` of a node running \
                  one of its pods retries forever and node upgrades stall.",
        default_enabled: true,
        fixes: &[
            "Allow at least one disruption: `maxUnavailable: 1` on the PodDisruptionBudget, or `minAvailable` below the replicas (and below the HPA's minReplicas).",
            "Run more replicas than the budget's minimum, spread over nodes, so an evicted pod's replacement can run elsewhere first.",
            "Make sure a replacement pod fits on the other nodes (requests, affinity, spread) while the drained node is cordoned.",
        ],
    },
    Check {
        id: "eventually-stable",
        aliases: &[],
        summary: "once the environment stops changing, the unit reaches its desired state and stays",
        definition: "Anvil's eventually stable reconciliation, as a check on configurations: once \
                     the environment stops changing (no more load changes, failures, drains or \
                     rollouts), the controllers bring the unit to its desired state (every \
                     desired pod running, no pod Pending, no rollout open) and then stop acting. \
                     A violation is a lasso: the steps that lead to a cycle, and the cycle the \
                     controllers repeat forever, or the settled state that is not the desired \
                     one. Checked as SPIN's non-progress cycle search.",
        level: Level::Warning,
        applies: Applies::WithFeedback,
        params: &[],
        tags: &["reliability", "liveness", "convergence", "controllers"],
        example: "A GitOps tool re-applies `spec.replicas: 2` from Git while an HPA scales the \
                  same Deployment to 3: each undoes the other, forever, with no change of load.",
        default_enabled: false,
        fixes: &[
            "Leave `spec.replicas` out of the manifest of an autoscaled workload (the HPA owns it), or make the GitOps tool ignore the field.",
            "Give every pod a place to run at the workload's desired size (requests, spread, affinity), so the cluster can settle.",
            "Align the descheduler's and the scheduler's constraints, so one does not undo the other.",
        ],
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

//! The registry of checks. Each check is a folder of this module: `mod.rs` holds its registry
//! entry (id, aliases, definition, default level, params, docs, liveness), its violation event
//! with the decoder that tells it and the kinds of fix candidate it gets, and embeds
//! `monitor.pml`, its monitor; [`CHECKS`] lists them, and the model includes and runs the
//! monitors and defines their events from it.
//!
//! Ids are stable: they appear in output, configuration and suppressions. Kivi's intent names
//! are accepted as aliases.

use serde::Serialize;

use crate::manifest::Object;
use crate::source::Span;
use crate::trace::Event;

/// The registry: each line names a check's module (its folder), its [`CheckId`] and its id.
/// Adding a check is a line here and a folder beside this file.
macro_rules! registry {
    ($($module:ident => $variant:ident = $id:literal,)*) => {
        $(mod $module;)*

        /// A check, by its stable id.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum CheckId {
            $($variant,)*
        }

        impl CheckId {
            /// The id as it appears in output, configuration and suppressions.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $id,)*
                }
            }
        }

        /// Every check, in the order reports and `kivi-lint rules` list them.
        pub const CHECKS: &[Check] = &[$($module::CHECK,)*];
    };
}

registry! {
    pods_schedulable => PodsSchedulable = "pods-schedulable",
    min_replicas_available => MinReplicasAvailable = "min-replicas-available",
    no_replica_oscillation => NoReplicaOscillation = "no-replica-oscillation",
    no_eviction_loop => NoEvictionLoop = "no-eviction-loop",
    no_node_overload => NoNodeOverload = "no-node-overload",
    pods_balanced => PodsBalanced = "pods-balanced",
    rollout_completes => RolloutCompletes = "rollout-completes",
    drain_completes => DrainCompletes = "drain-completes",
    eventually_stable => EventuallyStable = "eventually-stable",
}

impl CheckId {
    /// Its registry entry.
    pub fn check(self) -> &'static Check {
        CHECKS
            .iter()
            .find(|c| c.id == self)
            .expect("every CheckId has a registry entry")
    }
}

/// Ids order as their text does, so that every listing keeps the order it had as strings.
impl Ord for CheckId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for CheckId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl PartialEq<str> for CheckId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

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

impl Applies {
    /// Where the check runs, in a sentence's words (`kivi-lint rules`).
    pub fn condition(self) -> &'static str {
        match self {
            Applies::Always => "every unit with a workload",
            Applies::WithAutoscaler => "units with a HorizontalPodAutoscaler on a modelled metric",
            Applies::WithEvictions => {
                "units with a descheduler policy, NoExecute taints, or an event that evicts pods (node-failure, node-maintenance, node-drain)"
            }
            Applies::WithOverloadEvents => "every unit, when the config has the node-overload event",
            Applies::WithSpread => "units with more than one replica or a topology spread constraint",
            Applies::WithRollout => "units with a Deployment or a RollingUpdate StatefulSet",
            Applies::WithDrainEvents => {
                "units with a PodDisruptionBudget (in a model of their own, node-drain its only event, on the smallest cluster of the search), and every unit when the config has the node-drain event"
            }
            Applies::WithFeedback => {
                "units with an HPA, a descheduler policy, NoExecute taints, an evicting event or gitops-sync"
            }
        }
    }

    /// The events the check needs explored: without them a unit it would concern says "not
    /// checked" rather than "verified", unless kivi-lint adds them itself
    /// ([`Applies::adds_its_events`]).
    pub fn needs_events(self) -> &'static [&'static str] {
        match self {
            Applies::WithOverloadEvents => &["node-overload"],
            Applies::WithDrainEvents => &["node-drain"],
            _ => &[],
        }
    }

    /// kivi-lint explores the needed events itself where the check concerns a unit (a
    /// PodDisruptionBudget's drain, in a model of its own), config or not.
    pub fn adds_its_events(self) -> bool {
        matches!(self, Applies::WithDrainEvents)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub description: &'static str,
    pub default: Option<i64>,
    /// The smallest value the config may set.
    pub minimum: i64,
    /// The macro main.pml defines to the value, for the monitor and the controllers'
    /// bookkeeping (`None`: the monitor reads `ir.params` itself).
    pub define: Option<&'static str>,
    /// The value, when the config sets it, replaces every workload's availability bound in the
    /// model (`min_available`, else minReplicas or spec.replicas lowered by a budget).
    pub bounds_availability: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct Check {
    pub id: CheckId,
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
    /// The fix candidates its violations get beyond the edits of the fields their trails pass
    /// through (`fixes` builds and verifies them).
    pub remedies: &'static [Remedy],
    /// Runs without being listed in `checks.enable`. New checks that cost a search of their
    /// own start off (opt-in), so upgrades neither slow down nor break existing pipelines.
    pub default_enabled: bool,
    /// A liveness property, searched as a non-progress cycle (a build and a run of its own);
    /// the others are safety monitors that share one search.
    pub liveness: bool,
    /// The name the model includes the monitor by (`checks/<module>.pml`).
    pub template: &'static str,
    /// The monitor's PROMELA: `monitor.pml` in the check's folder, embedded.
    pub monitor: &'static str,
    /// The monitor's proctype in that template.
    pub proctype: &'static str,
    /// The trace event the monitor prints before it fails, and how a finding tells it.
    pub violation: MonitorEvent,
    /// The macro controllers test before they keep the state this check's monitor reads
    /// (`min_reached`, `evicted`, `at_max`, a balance check after a descheduler run): main.pml
    /// defines it true in the runs that monitor the check, so that the others do not tell
    /// apart states that differ only there.
    pub bookkeeping: Option<&'static str>,
    /// Its finding is the scheduler's: the decisive step is the scheduler's "no feasible node"
    /// for the pod the finding is located at, not the monitor's conclusion.
    pub told_by_scheduler: bool,
}

/// A kind of fix candidate only some checks' violations get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remedy {
    /// A PodDisruptionBudget (`maxUnavailable: 1`) for a workload whose pods a voluntary
    /// disruption (the descheduler, the cluster autoscaler, a drain) took.
    AddDisruptionBudget,
    /// CPU requests sized so that a node full of the workload's pods stays under the
    /// `node-overload` threshold.
    RequestsUnderOverloadThreshold,
    /// A soft spread constraint made hard, so that a replacement waits rather than doubling up
    /// on a node. It trades availability (Pending pods) for balance, so a check about
    /// balance alone does not get it: the workload chose not to make that trade.
    HardenSoftSpread,
}

/// The event a check's monitor prints when it fails (`printf("KIVI:%d:…", EVENT_…)`): its
/// number and macro (rendered into main.pml beside the controllers' events), and the decoder
/// that tells it as the counterexample's last step.
#[derive(Clone, Copy, Debug)]
pub struct MonitorEvent {
    pub code: i64,
    pub define: &'static str,
    /// The event's values (the code first) told in Kubernetes terms, at the field behind it.
    pub tell: fn(&[i64], &dyn Counterexample) -> Told,
    /// Where the finding points when the trail also has a pod the scheduler could not place.
    pub blame: Blame,
    /// Which workload the violation is of: `--all` spares it in the monitor and searches
    /// again for the next.
    pub subject: Subject,
}

/// The workload a violation is of ([`MonitorEvent::subject`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The check has one violation per unit (a node, the unit as a whole): `--all` reports
    /// the first.
    Unit,
    /// The workload's 1-based model index is the event's value at this position.
    Workload(usize),
    /// The workload of the pod the scheduler last could not place, among those the event's
    /// values name (a bit per workload, 30 to a value).
    PendingWorkload,
}

/// How many workloads a value of a [`Subject::PendingWorkload`] event names.
pub const WORKLOADS_PER_VALUE: usize = 30;

/// Whether the values after a [`Subject::PendingWorkload`] event's code name the workload with
/// this 1-based index.
pub fn names_workload(values: &[i64], workload: i64) -> bool {
    let Ok(i) = usize::try_from(workload - 1) else {
        return false;
    };
    values
        .get(1 + i / WORKLOADS_PER_VALUE)
        .is_some_and(|bits| bits >> (i % WORKLOADS_PER_VALUE) & 1 == 1)
}

/// The workload (1-based model index) a safety violation is of, from its trail: the values of
/// each event in order, the violation's last; `owner` gives a pod slot's workload. `None`:
/// the check's violations are one per unit, or the trail names none.
pub fn subject_of(trail: &[&[i64]], owner: &dyn Fn(i64) -> Option<i64>) -> Option<usize> {
    let (last, before) = trail.split_last()?;
    let check = of_violation(*last.first()?)?;
    let workload = match check.violation.subject {
        Subject::Unit => return None,
        Subject::Workload(at) => *last.get(at)?,
        Subject::PendingWorkload => before.iter().rev().find_map(|v| {
            (v.first() == Some(&Event::PodUnschedulable.code()))
                .then(|| owner(*v.get(1)?))
                .flatten()
                .filter(|&w| names_workload(last, w))
        })?,
    };
    usize::try_from(workload).ok().filter(|&w| w > 0)
}

/// Which field a finding points at when its trail has both the check's field and a pod the
/// scheduler could not place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blame {
    /// The check's field: the pod that could not be placed is a consequence (a rollout held
    /// up by its surge pod, a node emptied of replicas).
    CheckField,
    /// The scheduler's reason: the check only observes what the unplaceable pod causes (it
    /// stays Pending, it is evicted again and again, the unit never settles).
    Scheduling,
    /// The scheduler's reason for the pod the check's decoder chose (a pod of a workload the
    /// violation names): the decoder's location is the finding's; its step shows none, the
    /// scheduler's step above it does.
    ChosenPod,
}

/// A check's violation as the finding's last step: what the check saw, and the manifest
/// field that causes it (the finding's location).
#[derive(Clone, Debug, PartialEq)]
pub struct Told {
    pub message: String,
    pub location: Option<Span>,
}

/// What a check's decoder may ask of the counterexample its monitor ended: the objects behind
/// the model's indices and the events before the violation (`findings` answers).
pub trait Counterexample {
    /// The workload with the model's 1-based index.
    fn workload(&self, index: i64) -> Option<&Object>;
    /// The workload whose pod is in a slot.
    fn owner(&self, slot: i64) -> Option<&Object>;
    /// The pod in a slot, by the name a report gives it.
    fn pod(&self, slot: i64) -> String;
    /// The node with the model's index, by name.
    fn node(&self, index: i64) -> String;
    /// The HorizontalPodAutoscaler that scales a workload.
    fn autoscaler_of(&self, workload: &Object) -> Option<&Object>;
    /// The PodDisruptionBudgets that select the pods of a slot's workload.
    fn budgets_of_pod(&self, slot: i64) -> Vec<&Object>;
    /// The values of the latest `event` of the trace that `matching` accepts.
    fn latest(&self, event: Event, matching: &dyn Fn(&[i64]) -> bool) -> Option<&[i64]>;
    /// The field of the descheduler plugin with the model's index.
    fn descheduler_plugin(&self, index: i64) -> Option<Span>;
    /// Where the scheduler last said why it could not place a pod.
    fn scheduling_failure(&self) -> Option<Span>;
    /// The same, for a pod of a workload (1-based model index) that `workload` accepts.
    fn scheduling_failure_of(&self, workload: &dyn Fn(i64) -> bool) -> Option<Span>;
}

/// The name a report gives a workload: its object id, or nothing when the model named none.
fn named(workload: Option<&Object>) -> String {
    workload.map_or_else(String::new, |w| w.id.to_string())
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
            .as_str()
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

/// Whether a check of `checks` matches `what`: shared code asks what the unit's checks need
/// (rollouts modelled, a drain of its own, progress labels), never which check it is.
pub fn any(checks: &[CheckId], what: impl Fn(&Check) -> bool) -> bool {
    checks.iter().any(|c| what(c.check()))
}

/// The config's value of the param that replaces every workload's availability bound, if it
/// sets one ([`Param::bounds_availability`]).
pub fn availability_bound(
    params: &std::collections::BTreeMap<CheckId, std::collections::BTreeMap<&'static str, i64>>,
) -> Option<i64> {
    CHECKS.iter().find_map(|c| {
        c.params
            .iter()
            .filter(|p| p.bounds_availability)
            .find_map(|p| params.get(&c.id).and_then(|set| set.get(p.name)).copied())
    })
}

/// Find a check by id or alias.
pub fn find(name: &str) -> Option<&'static Check> {
    CHECKS
        .iter()
        .find(|c| c.id.as_str() == name || c.aliases.contains(&name))
}

/// All ids, for messages.
pub fn known_names() -> String {
    CHECKS.iter().map(|c| c.id.as_str()).collect::<Vec<_>>().join(", ")
}

/// The check whose safety monitor fired, from the code of a trail's last event.
pub fn violated_by(code: i64) -> Option<CheckId> {
    CHECKS
        .iter()
        .find(|c| !c.liveness && c.violation.code == code)
        .map(|c| c.id)
}

/// The check whose monitor prints the event with this code.
pub fn of_violation(code: i64) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.violation.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_aliases_resolve() {
        let mut names: Vec<&str> = CHECKS
            .iter()
            .flat_map(|c| std::iter::once(c.id.as_str()).chain(c.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len());
        assert_eq!(find("no_kernel_panic").unwrap().id, CheckId::NoNodeOverload);
        assert!(find("nope").is_none());
    }

    /// Each file declares the id its registry line gives it, and no two safety monitors fail
    /// with the same event (the event tells which check a trail violates).
    #[test]
    fn entries_match_their_registry_lines_and_events_tell_checks_apart() {
        for (i, check) in CHECKS.iter().enumerate() {
            assert_eq!(check.id as usize, i, "{}", check.id);
            assert_eq!(find(check.id.as_str()).map(|c| c.id), Some(check.id));
            if !check.liveness {
                assert_eq!(violated_by(check.violation.code), Some(check.id));
            }
        }
    }
}

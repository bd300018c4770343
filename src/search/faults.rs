//! A unit's fault model: which disruptions each of its searches explores.
//!
//! Interleaving every configured event in one model multiplies their states: a new user's
//! three events on six nodes filled a gigabyte before any check was decided. So by default
//! each kind of disruption is explored alone, started from every state the other dimensions
//! can leave the cluster in: every node count of each pool in its bounds (the topologies) and
//! every replica count an autoscaler can hold in `[minReplicas, maxReplicas]`. A node
//! disruption (failure, maintenance, drain) holds the autoscalers there, as a steady load
//! would; the load, an apply, a GitOps sync and node overload run them. The rollout of a new
//! revision is a disruption of its own. `events.combine: true` explores the product instead.
//!
//! A check is violated if any part finds a violation, and verified only if every part that
//! monitors it verifies it (`findings::conclude`).

use crate::checks::{Applies, CheckId};
use crate::config::{Config, EnvironmentEvent};
use crate::source::Spanned;
use crate::units::{Role, Unit};

/// What one of a unit's searches explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// The config's events interleaved in one model: `events.combine: true`, or no event.
    Combined,
    /// One kind of disruption alone: the config's events of this type.
    Alone(&'static str),
    /// No event but the rollout of a new revision (and the autoscalers at steady load, where
    /// no other part runs them).
    Steady,
    /// `drain-completes` of a unit with a PodDisruptionBudget when the config drains no node:
    /// the drain alone, on the smallest cluster of the search.
    ImplicitDrain,
}

impl Part {
    /// A short name, for file names and logs.
    pub fn slug(self) -> Option<&'static str> {
        match self {
            Part::Combined => None,
            Part::Alone(kind) => Some(kind),
            Part::Steady => Some("rollout"),
            Part::ImplicitDrain => Some("drain"),
        }
    }
}

/// One search of a unit: its part of the fault model, the events and checks it explores.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub part: Part,
    pub events: Vec<Spanned<EnvironmentEvent>>,
    /// The unit's autoscalers run (else each autoscaled workload keeps its starting count).
    pub autoscalers: bool,
    pub checks: Vec<CheckId>,
}

/// Event types that run the autoscalers: the load they read, or a change of the replicas they
/// own (an apply, a GitOps sync resetting `spec.replicas`).
fn runs_autoscalers(kind: &str) -> bool {
    crate::events::find(kind).is_some_and(|e| e.runs_autoscalers)
}

/// The cluster autoscaler is a controller of the cluster, not a disruption: every part has it.
fn is_controller(e: &EnvironmentEvent) -> bool {
    matches!(e, EnvironmentEvent::ClusterAutoscaler { .. })
}

/// The searches of `unit` under `config`'s fault model, in a fixed order: the kinds that
/// run the autoscalers, the others (each in config order), the rollout, the implicit drain.
pub fn searches(unit: &Unit, config: &Config) -> Vec<Search> {
    let mut kinds: Vec<&'static str> = Vec::new();
    for e in config.events.iter().filter(|e| !is_controller(&e.value)) {
        if !kinds.contains(&e.value.type_name()) {
            kinds.push(e.value.type_name());
        }
    }
    // The kinds that run the autoscalers first: of equal counterexamples the first search's
    // is told, and theirs show how the load gets there.
    kinds.sort_by_key(|k| !runs_autoscalers(k));
    let autoscaled = unit.members.iter().any(|m| m.role == Role::Autoscaler);
    let mut out: Vec<Search> = Vec::new();
    if config.combine_events || kinds.is_empty() {
        out.push(Search {
            part: Part::Combined,
            events: config.events.clone(),
            autoscalers: true,
            checks: Vec::new(),
        });
    } else {
        for &kind in &kinds {
            // Without an autoscaler, a load change alters nothing a controller reads (the
            // scheduler and the checks see requests): its model is the others' without events.
            if kind == "load-change" && !autoscaled {
                continue;
            }
            // A node overloads with the load its pods' usage reaches: the load changes are
            // part of its search.
            let with = |e: &EnvironmentEvent| {
                e.type_name() == kind
                    || is_controller(e)
                    || (kind == "node-overload" && matches!(e, EnvironmentEvent::LoadChange { .. }))
            };
            out.push(Search {
                part: Part::Alone(kind),
                events: config.events.iter().filter(|e| with(&e.value)).cloned().collect(),
                autoscalers: runs_autoscalers(kind),
                checks: Vec::new(),
            });
        }
        let run_elsewhere = kinds.iter().any(|k| runs_autoscalers(k));
        let steady = Search {
            part: Part::Steady,
            events: config
                .events
                .iter()
                .filter(|e| is_controller(&e.value))
                .cloned()
                .collect(),
            autoscalers: autoscaled && !run_elsewhere,
            checks: Vec::new(),
        };
        // Events may or may not happen, so every other search explores the cluster without
        // them too: the steady one adds only the rollout, or autoscalers no other one runs.
        let others = out.iter().any(|s| matches!(s.part, Part::Alone(_)));
        if crate::checks::any(&unit.checks, |c| c.applies == Applies::WithRollout) || steady.autoscalers || !others {
            out.push(steady);
        }
    }
    if unit.drain_alone {
        out.push(Search {
            part: Part::ImplicitDrain,
            events: Vec::new(),
            autoscalers: false,
            checks: Vec::new(),
        });
    }
    for search in &mut out {
        search.checks = unit
            .checks
            .iter()
            .copied()
            .filter(|c| monitors(search, unit, *c))
            .collect();
    }
    out.retain(|s| !s.checks.is_empty());
    out
}

/// Whether `search` monitors `check` of `unit`.
fn monitors(search: &Search, unit: &Unit, check: CheckId) -> bool {
    let applies = check.check().applies;
    match search.part {
        Part::ImplicitDrain => applies == Applies::WithDrainEvents,
        Part::Combined => !(unit.drain_alone && applies == Applies::WithDrainEvents),
        Part::Alone(kind) => match applies {
            Applies::WithDrainEvents => kind == "node-drain",
            Applies::WithRollout => false,
            Applies::WithOverloadEvents => kind == "node-overload",
            Applies::WithAutoscaler => search.autoscalers,
            Applies::Always | Applies::WithEvictions | Applies::WithSpread | Applies::WithFeedback => true,
        },
        Part::Steady => match applies {
            Applies::WithDrainEvents | Applies::WithOverloadEvents => false,
            Applies::WithAutoscaler => search.autoscalers,
            Applies::WithRollout
            | Applies::Always
            | Applies::WithEvictions
            | Applies::WithSpread
            | Applies::WithFeedback => true,
        },
    }
}

/// The fault model the verdicts of a unit's searches hold under, in a sentence's words, from
/// each search's part and whether it held the autoscalers. Empty where one search explored
/// the config's events as written (combined, or a single kind that holds nothing).
pub fn describe(parts: &[(Part, bool)]) -> String {
    let name = |p: Part| match p {
        Part::Alone(kind) => Some(kind),
        Part::Steady => Some("a rollout"),
        _ => None,
    };
    let alone: Vec<&str> = parts.iter().filter_map(|(p, _)| name(*p)).collect();
    let held: Vec<&str> = parts.iter().filter(|(_, h)| *h).filter_map(|(p, _)| name(*p)).collect();
    let from = |held: &[&str]| format!("{} from every replica count the autoscalers can hold", held.join(", "));
    let mut out = String::new();
    if alone.len() > 1 {
        out = format!("each disruption alone ({})", alone.join(", "));
        if !held.is_empty() {
            out.push_str(&format!("; {}", from(&held)));
        }
    } else if !held.is_empty() {
        out = from(&held);
    }
    if parts.iter().any(|(p, _)| *p == Part::ImplicitDrain) {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(IMPLICIT_DRAIN);
    }
    out
}

/// What the fault model says of the drain kivi-lint adds for a PodDisruptionBudget.
pub const IMPLICIT_DRAIN: &str =
    "drain-completes in a model of its own (node-drain its only event) on the smallest cluster";

/// The unit as a search sees it: without its autoscalers when they are held (the replica
/// counts an HPA may hold come from the topologies, which start each autoscaled workload at
/// every count in its range), without descheduler policies in the implicit drain's model.
pub fn unit_for(unit: &Unit, search: &Search) -> Unit {
    Unit {
        members: unit
            .members
            .iter()
            .filter(|m| match m.role {
                Role::Autoscaler => search.autoscalers,
                Role::DeschedulerPolicy => search.part != Part::ImplicitDrain,
                _ => true,
            })
            .cloned()
            .collect(),
        checks: search.checks.clone(),
        drain_alone: false,
        ..unit.clone()
    }
}

/// The config as a search sees it: the unit's, with only the search's events (the implicit
/// drain's located at the unit's first budget).
pub fn config_for(unit: &Unit, search: &Search, config: &Config, objects: &[crate::manifest::Object]) -> Config {
    let events = if search.part == Part::ImplicitDrain {
        let at = unit
            .members
            .iter()
            .find(|m| m.role == Role::DisruptionBudget)
            .map_or_else(crate::source::Span::default, |m| objects[m.object].span);
        vec![Spanned::new(EnvironmentEvent::NodeDrain, at)]
    } else {
        search.events.clone()
    };
    Config {
        events,
        ..unit.config(config).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fault_model_is_said_once_per_unit() {
        // One combined model: nothing to say.
        assert_eq!(describe(&[(Part::Combined, false)]), "");
        // One kind that runs the autoscalers: the config's events as written.
        assert_eq!(describe(&[(Part::Alone("load-change"), false)]), "");
        assert_eq!(
            describe(&[
                (Part::Alone("load-change"), false),
                (Part::Alone("node-drain"), true),
                (Part::Steady, true),
                (Part::ImplicitDrain, false),
            ]),
            format!(
                "each disruption alone (load-change, node-drain, a rollout); node-drain, a rollout from every replica count the autoscalers can hold; {IMPLICIT_DRAIN}"
            )
        );
        assert_eq!(
            describe(&[(Part::Alone("node-failure"), true)]),
            "node-failure from every replica count the autoscalers can hold"
        );
        assert_eq!(
            describe(&[(Part::Combined, false), (Part::ImplicitDrain, false)]),
            IMPLICIT_DRAIN
        );
    }

    /// The searches of a unit with an HPA and a PDB under `events`, with their checks.
    fn searches_of(events: &str, combine: bool) -> Vec<(Part, bool, Vec<&'static str>)> {
        let manifests = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 4\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec:\n  minAvailable: 2\n  selector: {matchLabels: {app: web}}\n";
        let events = if combine {
            format!("events: {{combine: true, list: [{events}]}}\n")
        } else {
            format!("events: [{events}]\n")
        };
        let config_text = format!("apiVersion: kivi-lint/v1alpha1\nkind: Config\n{events}");
        let mut sources = crate::source::SourceMap::default();
        let mut diags = crate::diagnostics::Diagnostics::default();
        let config = Config::parse(
            &config_text,
            std::path::Path::new("c.yaml"),
            None,
            std::path::Path::new("."),
            &mut sources,
            &mut diags,
        );
        let (_, loaded) = crate::manifest::load_text(&mut sources, "m.yaml", manifests, &mut diags);
        let units = crate::units::build(&loaded.objects, &config, &[".".into()], None, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        searches(&units[0], &config)
            .into_iter()
            .map(|s| (s.part, s.autoscalers, s.checks.iter().map(|c| c.as_str()).collect()))
            .collect()
    }

    #[test]
    fn each_kind_of_disruption_is_a_search_with_the_checks_it_can_break() {
        let load = "{type: load-change, workloads: [\"*\"]}";
        let drain = "{type: node-drain}";
        let found = searches_of(&format!("{drain}, {load}"), false);
        let parts: Vec<(Part, bool)> = found.iter().map(|(p, a, _)| (*p, *a)).collect();
        // The load first (it runs the autoscalers), then the drain (holding them), then the
        // rollout (holding them too: the load search runs them).
        assert_eq!(
            parts,
            [
                (Part::Alone("load-change"), true),
                (Part::Alone("node-drain"), false),
                (Part::Steady, false)
            ]
        );
        let checks = |part: Part| &found.iter().find(|(p, _, _)| *p == part).unwrap().2;
        assert!(checks(Part::Alone("load-change")).contains(&"no-replica-oscillation"));
        assert!(!checks(Part::Alone("load-change")).contains(&"drain-completes"));
        assert!(checks(Part::Alone("node-drain")).contains(&"drain-completes"));
        assert!(!checks(Part::Alone("node-drain")).contains(&"no-replica-oscillation"));
        assert!(checks(Part::Steady).contains(&"rollout-completes"));
        assert!(!checks(Part::Alone("node-drain")).contains(&"rollout-completes"));

        // Combined: one search with every check, the drain's own beside it only without
        // node-drain in the events.
        let combined = searches_of(&format!("{drain}, {load}"), true);
        assert_eq!(combined.len(), 1);
        assert_eq!((combined[0].0, combined[0].1), (Part::Combined, true));
        let without_drain = searches_of(load, true);
        assert_eq!(
            without_drain.iter().map(|(p, _, _)| *p).collect::<Vec<_>>(),
            [Part::Combined, Part::ImplicitDrain]
        );
        assert_eq!(without_drain[1].2, ["drain-completes"]);
    }

    #[test]
    fn node_disruptions_hold_the_autoscalers_and_load_runs_them() {
        for kind in ["load-change", "apply", "gitops-sync", "node-overload"] {
            assert!(runs_autoscalers(kind), "{kind}");
        }
        for kind in ["node-failure", "node-maintenance", "node-drain"] {
            assert!(!runs_autoscalers(kind), "{kind}");
        }
    }
}

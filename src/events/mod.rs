//! The registry of environment events: what happens to a cluster besides its controllers (a
//! node fails or is drained, load changes, the next revision is applied). Each event is a
//! folder of this module: `mod.rs` holds its registry entry (its config `type`, the templates
//! it needs, when a model includes it, its proctype, its params) and the trace events it
//! prints with the decoders that tell them; `event.pml` beside it is its PROMELA, embedded.
//! [`EVENTS`] lists them; the model includes and runs them, defines their trace events and
//! the decoder tells their steps from it.
//!
//! The controllers (`src/controllers/`) and the events they print (`crate::trace`) are
//! not in this registry: they run in every model.

use std::collections::BTreeMap;

use crate::checks::{Counterexample, Param, Told};
use crate::manifest::Object;
use crate::trace::{Actor, Change, Changed};

/// The registry: each line names an event's module (its folder). Adding an event is a line
/// here and a folder beside this file. Models include the events in this order.
macro_rules! registry {
    ($($module:ident,)*) => {
        $(mod $module;)*

        /// Every environment event, in the order a model includes and runs them.
        pub const EVENTS: &[EventKind] = &[$($module::EVENT,)*];
    };
}

registry! {
    load_change,
    node_maintenance,
    node_failure,
    node_drain,
    apply,
    node_overload,
    gitops_sync,
    startup,
    rollout,
}

/// How the config asks for an event.
#[derive(Clone, Copy, Debug)]
pub enum Configured {
    /// `events: [{type: <name>, ...}]`, read by the config reader's own rules for it
    /// (`config::EnvironmentEvent` has a variant for it).
    ByReader,
    /// `events: [{type: <name>, <param>: N}]` with these integer params, read from the
    /// registry: the model gets them as `ir.events["<name>"].<param>`.
    WithParams(&'static [Param]),
    /// Not in `events`: the model adds it where the unit calls for it (pods' startup phase, a
    /// rollout that `rollout-completes` checks).
    ByModel,
}

/// An environment event of the model.
#[derive(Clone, Copy, Debug)]
pub struct EventKind {
    /// Its config `type`, and the actor name of the steps it takes.
    pub name: &'static str,
    /// What it does, in a sentence (docs).
    pub summary: &'static str,
    pub configured: Configured,
    /// The templates it needs, by the name the model includes them by, in include order.
    /// A template several events list (a shared helper) is included once.
    pub templates: &'static [(&'static str, &'static str)],
    /// When a model includes it: a template expression over the model's context (`ir`,
    /// `shape`, ...), e.g. `ir.node_drain`; `None` for "the config lists it" (`ir.events`).
    pub included: Option<&'static str>,
    /// The proctype `init` runs.
    pub proctype: &'static str,
    /// A search of this event alone runs the HorizontalPodAutoscalers: it changes the load or
    /// the replicas they read, so its counterexamples show how the load gets there.
    pub runs_autoscalers: bool,
    /// While it is under way (a PROMELA expression: a node down, a drain running), its later
    /// steps follow its first; `None` for an event that acts in one step. A simulated
    /// scenario gives it a turn for its first step only.
    pub busy: Option<&'static str>,
    /// The trace events its templates print.
    pub prints: &'static [Printed],
}

/// A trace event an environment event prints (`printf("KIVI:%d:…", EVENT_…, …)`): its number
/// and macro (rendered into main.pml beside the controllers' and the checks'), the actor and
/// decoder that tell it as a step, and what it changes in the cluster.
#[derive(Clone, Copy, Debug)]
pub struct Printed {
    pub code: i64,
    pub define: &'static str,
    pub actor: Actor,
    /// The event's values (the code first) told in Kubernetes terms, at the field behind it.
    pub tell: fn(&[i64], &dyn Counterexample) -> Told,
    pub changed: Option<Changed>,
}

/// The event with this config `type`.
pub fn find(name: &str) -> Option<&'static EventKind> {
    EVENTS.iter().find(|e| e.name == name)
}

/// The event that prints the trace event with this code, and how.
pub fn printed(code: i64) -> Option<&'static Printed> {
    EVENTS.iter().flat_map(|e| e.prints).find(|p| p.code == code)
}

/// Every printed trace event, as (code, macro).
pub fn defines() -> impl Iterator<Item = (i64, &'static str)> {
    EVENTS.iter().flat_map(|e| e.prints).map(|p| (p.code, p.define))
}

/// Every template of every event, by name.
pub fn templates() -> impl Iterator<Item = (&'static str, &'static str)> {
    let mut seen = std::collections::BTreeSet::new();
    EVENTS
        .iter()
        .flat_map(|e| e.templates.iter().copied())
        .filter(move |(name, _)| seen.insert(*name))
}

/// The params of the events the config lists that take them from the registry, by event:
/// what `ir.events` holds.
pub type EventParams = BTreeMap<&'static str, BTreeMap<&'static str, i64>>;

/// `node-down.pml`: a node goes down with its pods (maintenance and overload share it).
const NODE_DOWN: (&str, &str) = ("events/node_down.pml", include_str!("node_down.pml"));

/// The value at `i` of a trace event (0 when the line is short).
fn at(v: &[i64], i: usize) -> i64 {
    v.get(i).copied().unwrap_or(0)
}

/// A step with no manifest field behind it.
fn told(message: String) -> Told {
    Told {
        message,
        location: None,
    }
}

/// The name a report gives a workload: its object id, or nothing when the model named none.
fn named(workload: Option<&Object>) -> String {
    workload.map_or_else(String::new, |w| w.id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique, every template is embedded once, every proctype is defined by a
    /// template of its event, and every printed event is printed by one.
    #[test]
    fn entries_are_distinct_and_their_templates_define_what_they_name() {
        let mut names = std::collections::BTreeSet::new();
        for e in EVENTS {
            assert!(names.insert(e.name), "{}", e.name);
            let text: String = e.templates.iter().map(|(_, t)| *t).collect();
            assert!(text.contains(&format!("proctype {}()", e.proctype)), "{}", e.name);
            for p in e.prints {
                assert!(text.contains(p.define), "{} prints {}", e.name, p.define);
            }
        }
    }
}

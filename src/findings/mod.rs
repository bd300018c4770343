//! Findings: verdicts per unit and check, with counterexamples told in Kubernetes terms and
//! pointing at the manifest fields that drive each step.

use serde::Serialize;

use crate::engine::{Inconclusive, TraceEvent};
use crate::manifest::autoscaling::Metric;
use crate::manifest::{Body, Object};
use crate::model::{Ir, Names};
use crate::source::Span;

mod decode;
mod namer;

pub use decode::decode;

/// One step of a counterexample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// The controller or event that acted.
    pub actor: &'static str,
    pub message: String,
    /// The manifest field that drives the step, when there is one.
    #[serde(skip)]
    pub location: Option<Span>,
    /// What the step changes in the cluster.
    pub effect: Option<Effect>,
}

/// A step's change to the cluster state: which pod or node, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Effect {
    pub change: Change,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// A controller created the pod; it waits for the scheduler.
    PodCreated,
    PodBound,
    /// The scheduler found no feasible node: the pod stays Pending.
    PodUnschedulable,
    PodStarted,
    /// Deleted, evicted or lost with its node.
    PodRemoved,
    NodeDown,
    NodeUp,
    NodeCordoned,
    NodeUncordoned,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Violated {
        steps: Vec<Step>,
        location: Option<Span>,
    },
    Verified,
    Inconclusive(Inconclusive),
    /// The check applies but is not modelled yet.
    NotChecked,
}

/// A verified change that makes the violated check hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// One line, in manifest terms.
    pub summary: String,
    /// The field to change.
    pub location: Span,
    /// The cluster it was verified on (the counterexample's nodes).
    pub verified_on: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    pub check: &'static str,
    pub verdict: Verdict,
    /// Where the verdict was reached: the topology of the violation or of the inconclusive
    /// run, or the largest one a verified check was verified on.
    pub topology: Option<crate::model::Topology>,
    /// PR mode, violations only: whether the base revision has the same violation.
    pub baseline: Option<bool>,
    /// Violations only: a change the model checker verified to make the check hold.
    pub fix: Option<Fix>,
}

/// The check whose monitor fired, from the last event of a trail.
pub fn violated_check(trace: &[TraceEvent]) -> Option<&'static str> {
    match trace.last()?.values.first()? {
        9 => Some("pods-schedulable"),
        13 => Some("min-replicas-available"),
        14 => Some("no-eviction-loop"),
        18 => Some("no-node-overload"),
        22 => Some("no-replica-oscillation"),
        23 => Some("pods-balanced"),
        26 => Some("rollout-completes"),
        35 => Some("drain-completes"),
        _ => None,
    }
}

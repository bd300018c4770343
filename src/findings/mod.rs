//! Findings: verdicts per unit and check, with counterexamples told in Kubernetes terms and
//! pointing at the manifest fields that drive each step.

use serde::Serialize;

use crate::checks::CheckId;
use crate::engine::{Inconclusive, TraceEvent};
use crate::manifest::{Body, Object};
use crate::model::{Ir, Names};
use crate::source::Span;

mod conclude;
mod decode;
pub mod facts;
pub mod fixes;
mod namer;
mod policy;

pub use crate::trace::{Actor, Change};
pub use conclude::{UnitResult, conclude, mark_timed_out, verify, verify_plans, verify_plans_or_fewer};
pub use decode::decode;
pub use policy::{Judgement, Policy, Suppressed, SuppressedBy};

/// One step of a counterexample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// The controller or event that acted.
    pub actor: Actor,
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
    /// `--all`: the check's other violations in the unit it was verified apart from (their
    /// workloads spared): it ends this one, they stay until their own fixes.
    pub apart_from: usize,
    /// The new text of `location` when the fix is one scalar's new value (`ScheduleAnyway`,
    /// a `maxSkew`, a cpu request): what an editor can apply.
    pub replacement: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    pub check: CheckId,
    pub verdict: Verdict,
    /// Where the verdict was reached: the topology of the violation or of the inconclusive
    /// run, or the largest one a verified check was verified on.
    pub topology: Option<crate::model::Topology>,
    /// Inconclusive after some runs: the last topology the check was verified on before the
    /// run that could not finish (it held on every topology of the search up to there).
    pub held_up_to: Option<crate::model::Topology>,
    /// How many topologies the check held on, up to `held_up_to`.
    pub held_topologies: usize,
    /// PR mode, violations only: whether the base revision has the same violation.
    pub baseline: Option<bool>,
    /// Violations only: a change the model checker verified to make the check hold.
    pub fix: Option<Fix>,
    /// Violations only: the workload (1-based model index) it is of, when its check tells one
    /// (`--all` reports one per workload; a fix for one is verified apart from the others).
    pub workload: Option<usize>,
}

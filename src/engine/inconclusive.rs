//! Why a run has no verdict, and which of those reasons a later run may change.

use std::time::Duration;

/// Why a run has no verdict.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Inconclusive {
    TimeLimit(Duration),
    MemoryLimit(u32),
    DepthLimit(u32),
    /// pan stopped early for a reason it gave.
    Incomplete(String),
    /// spin, the compiler or pan failed.
    EngineError(String),
    /// The run was stopped (Ctrl-C, or its result was no longer needed).
    Cancelled,
    /// The whole scan's `--timeout` was reached before this was decided.
    RunTimeout(Duration),
    /// The unit is larger than one model holds (pod slots, nodes, resources): nothing was run.
    ModelBound(String),
    /// The exhaustive search could not finish, and seeded random runs after it found no
    /// violation.
    Sampled {
        exhaustive: Box<Inconclusive>,
        runs: u32,
    },
}

impl Inconclusive {
    /// A limit of the search (time, memory, depth, the model's bounds, the scan's timeout):
    /// what held on the smaller topologies before it is a partial verdict. A cancelled run or
    /// an engine error is not.
    pub fn is_limit(&self) -> bool {
        match self {
            Inconclusive::Cancelled | Inconclusive::EngineError(_) => false,
            Inconclusive::Sampled { exhaustive, .. } => exhaustive.is_limit(),
            _ => true,
        }
    }

    /// Whether a later run may decide it: a time limit depends on the machine and its load, a
    /// cancelled run or an engine error (a missing compiler, a full disk) on the moment. A
    /// memory or depth limit is what the same run reaches again.
    pub fn is_transient(&self) -> bool {
        match self {
            Inconclusive::Cancelled
            | Inconclusive::EngineError(_)
            | Inconclusive::TimeLimit(_)
            | Inconclusive::Incomplete(_)
            | Inconclusive::RunTimeout(_) => true,
            Inconclusive::Sampled { exhaustive, .. } => exhaustive.is_transient(),
            Inconclusive::MemoryLimit(_) | Inconclusive::DepthLimit(_) | Inconclusive::ModelBound(_) => false,
        }
    }
}

impl std::fmt::Display for Inconclusive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inconclusive::TimeLimit(d) => write!(f, "time limit of {} s reached", d.as_secs_f64()),
            Inconclusive::MemoryLimit(mb) => write!(f, "memory limit of {mb} MiB reached"),
            Inconclusive::DepthLimit(d) => write!(f, "search depth limit of {d} steps reached"),
            Inconclusive::Incomplete(why) => write!(f, "search incomplete: {why}"),
            Inconclusive::EngineError(why) => write!(f, "engine error: {why}"),
            Inconclusive::Cancelled => write!(f, "cancelled"),
            Inconclusive::RunTimeout(d) => write!(f, "the scan's --timeout of {} s was reached", d.as_secs()),
            Inconclusive::ModelBound(why) => write!(f, "beyond the model's bounds: {why}"),
            Inconclusive::Sampled { exhaustive, runs } => write!(
                f,
                "{exhaustive}; no violation in {} (not a proof)",
                crate::diagnostics::plural(*runs as usize, "seeded random run")
            ),
        }
    }
}

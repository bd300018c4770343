//! `kivi-lint simulate`'s output: one run of a unit as a timeline, each step located at the
//! manifest field behind it as a finding's steps are, in human or JSON form.

use serde::Serialize;

use super::document::{NodeOut, StepOut};
use crate::analysis::Analysis;
use crate::diagnostics::terminal_safe;
use crate::findings::Step;

/// One simulated run, told.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Simulation {
    pub unit: String,
    pub seed: u32,
    /// The environment's steps before the run could end.
    pub environment_steps: u32,
    /// The configured events the run may take those steps with (`type`s).
    pub events: Vec<String>,
    /// The cluster it ran on, in words.
    pub cluster: String,
    /// Its nodes, for timelines of cluster states.
    pub nodes: Vec<NodeOut>,
    /// The checks its monitors watched.
    pub checks: Vec<String>,
    /// The run, in the steps counterexamples are told in.
    pub steps: Vec<StepOut>,
    pub outcome: SimulationOutcome,
}

/// How the run ended.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SimulationOutcome {
    /// The cluster settled: nothing more happens until the environment acts again.
    Settled,
    /// A check's monitor failed on the way: the run is a counterexample of it.
    Violated { check: String },
    /// No run could be told, and why.
    NotRun { why: String },
}

impl Simulation {
    /// A run's decoded steps, located in `analysis`'s files.
    pub fn told(analysis: &Analysis, steps: &[Step]) -> Vec<StepOut> {
        steps.iter().map(|s| super::project::step_out(analysis, s)).collect()
    }

    /// The timeline for a terminal: numbered steps, each with where it comes from.
    pub fn human(&self) -> String {
        let environment = if self.events.is_empty() {
            "no environment event".to_string()
        } else {
            format!(
                "{} ({})",
                crate::diagnostics::plural(self.environment_steps as usize, "environment step"),
                self.events.join(", ")
            )
        };
        let mut out = match &self.outcome {
            SimulationOutcome::NotRun { .. } => format!("unit {}: seed {}\n", self.unit, self.seed),
            _ => format!(
                "unit {}: seed {}, {environment}, on {}\n",
                self.unit, self.seed, self.cluster
            ),
        };
        if !self.checks.is_empty() {
            out.push_str(&format!("  monitored: {}\n", self.checks.join(", ")));
        }
        for (i, s) in self.steps.iter().enumerate() {
            let at = match (&s.file, s.line) {
                (Some(f), Some(l)) => format!("  ({f}:{l})"),
                _ => String::new(),
            };
            out.push_str(&format!("  {:>3}. {}: {}{at}\n", i + 1, s.actor, s.message));
        }
        out.push_str(&match &self.outcome {
            SimulationOutcome::Settled => "  the run ends: the cluster has settled, no check failed\n".to_string(),
            SimulationOutcome::Violated { check } => {
                format!("  the run ends: {check} is violated (this run is a counterexample of it)\n")
            }
            SimulationOutcome::NotRun { why } => format!("  no run: {why}\n"),
        });
        terminal_safe(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(outcome: SimulationOutcome) -> Simulation {
        Simulation {
            unit: "web\u{1b}[2J".into(),
            seed: 7,
            environment_steps: 1,
            events: vec!["load-change".into()],
            cluster: "3 nodes (zone-a 2, zone-b 1)".into(),
            nodes: Vec::new(),
            checks: vec!["pods-schedulable".into()],
            steps: vec![
                StepOut {
                    actor: "horizontal-pod-autoscaler".into(),
                    message: "scales web from 5 to 6 replicas".into(),
                    file: Some("deploy/web.yaml".into()),
                    line: Some(49),
                    column: Some(3),
                    end_line: None,
                    end_column: None,
                    effect: None,
                },
                StepOut {
                    actor: "check".into(),
                    message: "the cluster has settled with a pod that no node can take".into(),
                    file: None,
                    line: None,
                    column: None,
                    end_line: None,
                    end_column: None,
                    effect: None,
                },
            ],
            outcome,
        }
    }

    #[test]
    fn the_timeline_numbers_and_locates_each_step() {
        let text = run(SimulationOutcome::Violated {
            check: "pods-schedulable".into(),
        })
        .human();
        assert!(text.starts_with("unit web"), "{text}");
        assert!(
            text.contains(": seed 7, 1 environment step (load-change), on 3 nodes"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "a terminal escape from a manifest reaches the terminal"
        );
        assert!(
            text.contains("    1. horizontal-pod-autoscaler: scales web from 5 to 6 replicas  (deploy/web.yaml:49)\n"),
            "{text}"
        );
        assert!(text.contains("    2. check: the cluster has settled"), "{text}");
        assert!(text.ends_with("the run ends: pods-schedulable is violated (this run is a counterexample of it)\n"));
    }

    #[test]
    fn the_json_names_the_outcome() {
        let json = serde_json::to_value(run(SimulationOutcome::Settled)).unwrap();
        assert_eq!(json["outcome"]["kind"], "settled");
        assert_eq!(json["steps"][0]["line"], 49);
        assert!(json["steps"][1]["file"].is_null());
        let not_run = serde_json::to_value(run(SimulationOutcome::NotRun { why: "x".into() })).unwrap();
        assert_eq!(not_run["outcome"], serde_json::json!({"kind": "not-run", "why": "x"}));
    }
}

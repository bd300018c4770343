//! Running the verification of units. For now one topology per unit: the cluster as the config
//! describes it today (each pool's `count`); the incremental search over topologies follows.

use std::time::{Duration, Instant};

use crate::analysis::Analysis;
use crate::engine::{self, Search, Tools};
use crate::findings::{self, CheckResult, Verdict};
use crate::model::{self, Generator, Topology};

/// Checks the model has a template for; the others are reported as not checked yet.
pub const MODELLED_CHECKS: &[&str] = &[
    "pods-schedulable",
    "min-replicas-available",
    "no-eviction-loop",
    "no-replica-oscillation",
    "no-node-overload",
    "pods-balanced",
    "rollout-completes",
];

/// Environment events of the config the model does not explore yet: verdicts hold without them.
pub fn unmodelled_events(config: &crate::config::Config) -> Vec<&'static str> {
    use crate::config::EnvironmentEvent::*;
    let mut out: Vec<&'static str> = config
        .events
        .iter()
        .filter(|e| matches!(e.value, Apply { .. }) && config.previous_revision.is_none())
        .map(|e| e.value.type_name())
        .collect();
    out.dedup();
    out
}

#[derive(Clone, Debug)]
pub struct UnitResult {
    pub unit: usize,
    pub topology: Topology,
    pub nodes: usize,
    pub pod_slots: usize,
    pub results: Vec<CheckResult>,
    pub timings: engine::Timings,
    /// States pan stored, over all its runs for the unit.
    pub states: u64,
    pub generate: Duration,
    pub elapsed: Duration,
}

pub struct Options {
    pub engine: engine::Options,
    /// Write each generated model to `<dir>/<unit id>.pml`.
    pub emit_models: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            engine: engine::Options {
                search: Search::Safety { shortest: true },
                ..engine::Options::default()
            },
            emit_models: None,
        }
    }
}

/// Verify every unit of the analysis.
pub fn verify(analysis: &Analysis, generator: &Generator, tools: &Tools, options: &Options) -> Vec<UnitResult> {
    let topology = Topology::current(&analysis.config);
    analysis
        .units
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let started = Instant::now();
            let not_checked = |results: &mut Vec<CheckResult>| {
                for check in &unit.checks {
                    if !results.iter().any(|r| r.check == *check) {
                        results.push(CheckResult {
                            check,
                            verdict: Verdict::NotChecked,
                        });
                    }
                }
            };
            let mut results = Vec::new();
            let mut timings = engine::Timings::default();
            let mut states = 0;
            let mut generate = Duration::ZERO;
            let mut nodes = 0;
            let mut pod_slots = 0;
            let modelled: Vec<&'static str> = unit
                .checks
                .iter()
                .copied()
                .filter(|c| MODELLED_CHECKS.contains(c))
                .collect();
            if !modelled.is_empty() {
                let built = model::ir::build(
                    unit,
                    &analysis.objects,
                    &analysis.config,
                    &topology,
                    analysis.config.scaling.pods_per_node,
                );
                match built {
                    Err(e) => {
                        for check in &modelled {
                            results.push(CheckResult {
                                check,
                                verdict: Verdict::Inconclusive(engine::Inconclusive::EngineError(e.to_string())),
                            });
                        }
                    }
                    Ok((ir, names)) => {
                        nodes = ir.nodes.len();
                        pod_slots = ir.pod_slots;
                        // One model monitors every check still open; a violation decides its
                        // check, and the others are run again without it.
                        let mut open = modelled.clone();
                        while !open.is_empty() {
                            let t = Instant::now();
                            let rendered = generator.render(&ir, &open);
                            generate += t.elapsed();
                            let outcome = match rendered {
                                Err(e) => Err(e.to_string()),
                                Ok(promela) => emit(options, &unit.id, &promela)
                                    .and_then(|()| engine::verify(&promela, tools, &options.engine))
                                    .map_err(|e| e.to_string()),
                            };
                            let decided: Vec<(&'static str, Verdict)> = match outcome {
                                Err(e) => open.iter().map(|c| (*c, Verdict::Inconclusive(engine::Inconclusive::EngineError(e.clone())))).collect(),
                                Ok(outcome) => {
                                    add(&mut timings, &outcome.timings);
                                    states += outcome.statistics.states_stored;
                                    match outcome.verdict {
                                        engine::Verdict::Verified => open.iter().map(|c| (*c, Verdict::Verified)).collect(),
                                        engine::Verdict::Inconclusive(why) => open.iter().map(|c| (*c, Verdict::Inconclusive(why.clone()))).collect(),
                                        engine::Verdict::Violated { trace, violation } => {
                                            let (steps, location) = findings::decode(&trace, &ir, &names, &analysis.objects);
                                            match findings::violated_check(&trace) {
                                                Some(check) if open.contains(&check) => vec![(check, Verdict::Violated { steps, location })],
                                                _ => open
                                                    .iter()
                                                    .map(|c| {
                                                        (*c, Verdict::Inconclusive(engine::Inconclusive::EngineError(format!("the model stopped without a check failing ({violation:?})"))))
                                                    })
                                                    .collect(),
                                            }
                                        }
                                    }
                                }
                            };
                            for (check, verdict) in decided {
                                open.retain(|c| *c != check);
                                results.push(CheckResult { check, verdict });
                            }
                        }
                    }
                }
            }
            not_checked(&mut results);
            UnitResult {
                unit: i,
                topology: topology.clone(),
                nodes,
                pod_slots,
                results,
                timings,
                states,
                generate,
                elapsed: started.elapsed(),
            }
        })
        .collect()
}

fn emit(options: &Options, unit: &str, promela: &str) -> Result<(), engine::EngineError> {
    if let Some(dir) = &options.emit_models {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{unit}.pml")), promela)?;
    }
    Ok(())
}

fn add(total: &mut engine::Timings, more: &engine::Timings) {
    total.spin += more.spin;
    total.compile += more.compile;
    total.pan += more.pan;
    total.replay += more.replay;
}

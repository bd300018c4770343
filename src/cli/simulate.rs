//! `kivi-lint simulate`: one seeded run of each unit's model, told as a timeline.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::Result;

use super::args::{GlobalArgs, ScanArgs};
use super::output;
use crate::report::simulation::{Simulation, SimulationOutcome};
use crate::report::{Format, exit};

/// What `simulate` runs: the seed, the environment's steps before the run may end, the unit.
pub(super) struct Request<'a> {
    pub seed: u32,
    pub steps: u32,
    pub unit: Option<&'a str>,
    /// Event types whose first steps come in this order (`--scenario`).
    pub scenario: Vec<String>,
}

pub(super) fn simulate_command(scan: &ScanArgs, global: &GlobalArgs, request: &Request) -> Result<u8> {
    let started = std::time::Instant::now();
    let settings = match super::resolve(scan, global) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let format = settings.stdout_format();
    if !matches!(format, Format::Human | Format::Json | Format::Html) {
        eprintln!(
            "error: `kivi-lint simulate` prints `human`, `json` or `html`, not `{}`",
            format.name()
        );
        return Ok(exit::INPUT_ERROR);
    }
    let Some(plan) = &settings.plan else {
        return Ok(exit::OK);
    };
    let (session, analysis) = match super::analyze(&settings, plan, started)? {
        Ok(analyzed) => analyzed,
        Err(code) => return Ok(code),
    };
    let units: Vec<usize> = (0..analysis.units.len())
        .filter(|&u| {
            request
                .unit
                .is_none_or(|name| analysis.units[u].id == name || analysis.units[u].name == name)
        })
        .collect();
    if units.is_empty() {
        match request.unit {
            Some(name) => eprintln!(
                "error: no unit `{}` (`kivi-lint units` lists them)",
                crate::diagnostics::terminal_safe(name)
            ),
            None => eprintln!("error: no unit to simulate"),
        }
        return Ok(exit::INPUT_ERROR);
    }
    if let Some(why) = &analysis.cluster_unread {
        eprintln!("error: {why}");
        return Ok(exit::INPUT_ERROR);
    }
    let tools = match crate::engine::Tools::find() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let engine = crate::engine::Engine::new(tools, plan.engine.clone(), plan.cache_dir.as_deref())?;
    let generator = crate::model::Generator::new()?;
    let cancel = AtomicBool::new(false);
    let context = Context {
        analysis: &analysis,
        generator: &generator,
        engine: &engine,
        request,
        cancel: &cancel,
    };
    // Units are independent: `-j` runs at once, each its own build and run; the output keeps
    // the units' order.
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Simulation>>> = Mutex::new(vec![None; units.len()]);
    std::thread::scope(|scope| {
        for _ in 0..plan.request.jobs.clamp(1, units.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= units.len() || crate::process::cancelled() {
                        break;
                    }
                    let run = context.simulate(units[i]);
                    done.lock().expect("no thread panicked")[i] = Some(run);
                }
            });
        }
    });
    if crate::process::cancelled() {
        eprintln!("error: interrupted");
        return Ok(exit::INTERRUPTED);
    }
    let runs: Vec<Simulation> = done
        .into_inner()
        .expect("no thread panicked")
        .into_iter()
        .flatten()
        .collect();
    drop(session);
    let violated = runs
        .iter()
        .any(|r| matches!(r.outcome, SimulationOutcome::Violated { .. }));
    let not_run = runs
        .iter()
        .any(|r| matches!(r.outcome, SimulationOutcome::NotRun { .. }));
    let code = if analysis.diagnostics.has_errors() {
        exit::INPUT_ERROR
    } else if not_run {
        exit::INCONCLUSIVE
    } else if violated {
        exit::FINDINGS
    } else {
        exit::OK
    };
    let text = match format {
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({ "simulations": runs }))?
        ),
        Format::Html => {
            // Manifest excerpts only from the repository the command runs in.
            let (_, root, _) = output::repository_position();
            crate::report::html::render_simulations(&runs, root.as_deref(), code)
        }
        _ => runs.iter().map(Simulation::human).collect::<Vec<_>>().join("\n"),
    };
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(code)
}

/// What each unit's run needs.
struct Context<'a> {
    analysis: &'a crate::analysis::Analysis,
    generator: &'a crate::model::Generator,
    engine: &'a crate::engine::Engine,
    request: &'a Request<'a>,
    cancel: &'a AtomicBool,
}

impl Context<'_> {
    /// Unit `u`'s run, told.
    fn simulate(&self, u: usize) -> Simulation {
        let (analysis, request) = (self.analysis, self.request);
        let subject = crate::search::Subject::of(analysis);
        let simulated = crate::search::simulate(
            subject,
            u,
            self.generator,
            self.engine,
            crate::search::Simulate {
                seed: request.seed,
                steps: request.steps,
                scenario: &request.scenario,
            },
            self.cancel,
        );
        let mut simulation = Simulation {
            unit: analysis.units[u].id.clone(),
            seed: request.seed,
            environment_steps: if request.scenario.is_empty() {
                request.steps
            } else {
                request.scenario.len() as u32
            },
            events: Vec::new(),
            cluster: String::new(),
            nodes: Vec::new(),
            checks: Vec::new(),
            steps: Vec::new(),
            outcome: SimulationOutcome::Settled,
        };
        let run = match simulated {
            Err(why) => {
                simulation.outcome = SimulationOutcome::NotRun { why };
                return simulation;
            }
            Ok(run) => run,
        };
        let (steps, _) = crate::findings::decode(&run.trace, &run.ir, &run.names, &analysis.objects);
        let facts = crate::findings::facts::topology_facts(subject, u, &run.topology);
        simulation.cluster = facts.description;
        simulation.nodes = facts
            .nodes
            .into_iter()
            .map(|n| crate::report::document::NodeOut {
                name: n.name,
                pool: n.pool,
                zone: n.zone,
                absent: n.absent,
            })
            .collect();
        simulation.checks = run.checks.iter().map(|c| c.to_string()).collect();
        simulation.events = if request.scenario.is_empty() {
            run.events.iter().map(|e| e.to_string()).collect()
        } else {
            request.scenario.clone()
        };
        simulation.steps = Simulation::told(analysis, &steps);
        let last = run.trace.last().and_then(|e| e.values.first()).copied();
        if let Some(check) = last.and_then(crate::checks::violated_by) {
            simulation.outcome = SimulationOutcome::Violated {
                check: check.to_string(),
            };
        }
        simulation
    }
}

//! `kivi-lint simulate`: one seeded run of each unit's model, told as a timeline.

use std::io::{IsTerminal, Write};
use std::sync::atomic::AtomicBool;

use anyhow::Result;

use super::args::{GlobalArgs, ScanArgs};
use super::output;
use super::settings::Settings;
use crate::report::simulation::{Simulation, SimulationOutcome};
use crate::report::{Format, exit};
use crate::run::Session;

/// What `simulate` runs: the seed, the environment's steps before the run may end, the unit.
pub(super) struct Request<'a> {
    pub seed: u32,
    pub steps: u32,
    pub unit: Option<&'a str>,
}

pub(super) fn simulate_command(scan: &ScanArgs, global: &GlobalArgs, request: &Request) -> Result<u8> {
    let started = std::time::Instant::now();
    output::init_logging(global, global.color.enabled(std::io::stderr().is_terminal()));
    let settings = match Settings::resolve(scan, global) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let format = settings
        .outputs
        .iter()
        .find(|o| o.file.is_none())
        .map_or(Format::Human, |o| o.format);
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
    let session = Session::start(started, settings.timeout);
    let analysis = match session.analyze(&plan.request) {
        Ok(a) => a,
        Err(_) => return Ok(exit::INTERRUPTED),
    };
    output::print_diagnostics(&analysis, settings.quiet, settings.verbose, settings.stderr_color)?;
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
    let tools = match crate::engine::Tools::find() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let engine = crate::engine::Engine::new(tools, plan.engine.clone(), plan.cache_dir.as_deref())?;
    let generator = crate::model::Generator::new()?;
    let subject = crate::search::Subject::of(&analysis);
    let cancel = AtomicBool::new(false);
    let mut runs = Vec::new();
    for &u in &units {
        let unit = &analysis.units[u];
        let simulated =
            crate::search::simulate(subject, u, &generator, &engine, (request.seed, request.steps), &cancel);
        let mut simulation = Simulation {
            unit: unit.id.clone(),
            seed: request.seed,
            environment_steps: request.steps,
            cluster: String::new(),
            nodes: Vec::new(),
            checks: Vec::new(),
            steps: Vec::new(),
            outcome: SimulationOutcome::Settled,
        };
        match simulated {
            Err(why) => simulation.outcome = SimulationOutcome::NotRun { why },
            Ok(run) => {
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
                simulation.steps = Simulation::told(&analysis, &steps);
                let last = run.trace.last().and_then(|e| e.values.first()).copied();
                if let Some(check) = last.and_then(crate::checks::violated_by) {
                    simulation.outcome = SimulationOutcome::Violated {
                        check: check.to_string(),
                    };
                }
            }
        }
        runs.push(simulation);
    }
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

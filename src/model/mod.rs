//! Model generation: a unit's IR at one topology (`ir`), then PROMELA from the templates in
//! `templates/`, embedded in the binary. Nothing reads templates at run time: a model built
//! from a directory a pull request controls could embed C that pan runs.

pub mod input;
pub mod ir;
pub mod symmetry;

use minijinja::{Environment, UndefinedBehavior, Value, syntax::SyntaxConfig, value::Serde};
use serde::Serialize;

pub use input::{Shape, Spared, input, input_sparing};
pub use ir::{Ir, IrError, Names, Topology};

use crate::checks::{Applies, CheckId};

/// The templates, by the name main.pml includes them by, as shipped: main.pml and the
/// probes from `templates/`, each controller's from its folder (src/controllers/<controller>/),
/// beside its part of the IR and its decoder.
const TEMPLATES: &[(&str, &str)] = &[
    ("main.pml", include_str!("../../templates/main.pml")),
    (
        "controllers/scheduler.pml",
        include_str!("../controllers/scheduler/scheduler.pml"),
    ),
    (
        "controllers/deployment.pml",
        include_str!("../controllers/workloads/deployment.pml"),
    ),
    (
        "controllers/rolling_update.pml",
        include_str!("../controllers/workloads/rolling_update.pml"),
    ),
    (
        "controllers/kubelet.pml",
        include_str!("../controllers/kubelet/kubelet.pml"),
    ),
    (
        "controllers/autoscaler.pml",
        include_str!("../controllers/autoscaler/autoscaler.pml"),
    ),
    (
        "controllers/replica_calculator.pml",
        include_str!("../controllers/autoscaler/replica_calculator.pml"),
    ),
    (
        "controllers/autoscaler_normalization.pml",
        include_str!("../controllers/autoscaler/autoscaler_normalization.pml"),
    ),
    (
        "controllers/taint_eviction.pml",
        include_str!("../controllers/taint_eviction/taint_eviction.pml"),
    ),
    (
        "controllers/descheduler.pml",
        include_str!("../controllers/descheduler/descheduler.pml"),
    ),
    (
        "controllers/descheduler_process.pml",
        include_str!("../controllers/descheduler/descheduler_process.pml"),
    ),
    (
        "controllers/cluster_autoscaler.pml",
        include_str!("../controllers/cluster_autoscaler/cluster_autoscaler.pml"),
    ),
    (
        "controllers/informer.pml",
        include_str!("../controllers/informer/informer.pml"),
    ),
    (
        "probes/scheduler.pml",
        include_str!("../../templates/probes/scheduler.pml"),
    ),
    (
        "probes/autoscaler.pml",
        include_str!("../../templates/probes/autoscaler.pml"),
    ),
    (
        "probes/deployment.pml",
        include_str!("../../templates/probes/deployment.pml"),
    ),
    (
        "probes/descheduler.pml",
        include_str!("../../templates/probes/descheduler.pml"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("template error: {0}")]
    Template(String),
    /// A simulation's scenario names an event the model does not have.
    #[error("{0}")]
    Scenario(String),
}

/// Renders PROMELA models.
pub struct Generator {
    env: Environment<'static>,
}

impl Generator {
    /// The shipped templates.
    pub fn new() -> Result<Generator, ModelError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_syntax(
            SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(true)
                .build()
                .map_err(|e| ModelError::Template(template_error(&e)))?,
        );

        // The events and the checks' monitors come from their folders (`src/events/<id>/`,
        // `src/checks/<id>/monitor.pml`).
        let monitors = crate::checks::CHECKS.iter().map(|c| (c.template, c.monitor));
        let events = crate::events::templates();
        for (name, source) in TEMPLATES.iter().copied().chain(events).chain(monitors) {
            env.add_template(name, source)
                .map_err(|e| ModelError::Template(format!("{name}: {e}")))?;
        }
        Ok(Generator { env })
    }

    /// The PROMELA model for `ir`'s unit at `shape`: everything that varies between topologies
    /// is read at run time ([`input::input`]), so topologies whose IRs differ only there share
    /// one model (and one compiled pan). Every check of `ir.checks` is in the model; the input
    /// says which a run monitors.
    pub fn render(&self, ir: &Ir, shape: &Shape) -> Result<String, ModelError> {
        self.render_context(Context::new(ir, shape))
    }

    /// The model `kivi-lint simulate` runs: the same, with a process that ends the run at the
    /// first moment the cluster has settled after the environment acted `rounds` times.
    /// With a `scenario` (event types), the events' first steps come in its order, and only
    /// those; an event the model does not have is an error.
    pub fn render_simulation(
        &self,
        ir: &Ir,
        shape: &Shape,
        rounds: u32,
        scenario: &[String],
    ) -> Result<String, ModelError> {
        let mut context = Context::new(ir, shape);
        let events = self.included_events(&context)?;
        let scenario = scenario
            .iter()
            .map(|name| {
                events
                    .iter()
                    .position(|e| e.name == name)
                    .map(|i| i + 1)
                    .ok_or_else(|| {
                        let have: Vec<&str> = events.iter().map(|e| e.name).collect();
                        ModelError::Scenario(format!(
                            "the scenario's `{}` is not an event of this unit's config (it has: {})",
                            crate::diagnostics::terminal_safe(name),
                            if have.is_empty() {
                                "none".to_string()
                            } else {
                                have.join(", ")
                            }
                        ))
                    })
            })
            .collect::<Result<Vec<usize>, ModelError>>()?;
        context.simulation = Some(SimulationContext { rounds, scenario });
        self.render_context(context)
    }

    fn render_context(&self, mut context: Context<'_>) -> Result<String, ModelError> {
        for (i, event) in self.included_events(&context)?.into_iter().enumerate() {
            let own = format!("proctype {}(", event.proctype);
            for (name, text) in event.templates {
                if !context.event_templates.iter().any(|t| t.name == *name) {
                    let ordinal = if text.contains(&own) { i + 1 } else { 0 };
                    context.event_templates.push(EventTemplate {
                        name,
                        ordinal,
                        busy: event.busy.unwrap_or("0"),
                    });
                }
            }
            context.event_proctypes.push(event.proctype);
        }
        self.env
            .get_template("main.pml")
            .and_then(|t| t.render(Value::from(Serde(&context))))
            .map_err(|e| ModelError::Template(template_error(&e)))
    }

    /// The environment events `context`'s model includes, from the registry's expressions.
    fn included_events(&self, context: &Context) -> Result<Vec<&'static crate::events::EventKind>, ModelError> {
        let value = Value::from(Serde(context));
        let mut events = Vec::new();
        for event in crate::events::EVENTS {
            let included = match event.included {
                Some(expression) => self
                    .env
                    .compile_expression(expression)
                    .and_then(|e| e.eval(&value))
                    .map_err(|e| ModelError::Template(format!("{}: {}", event.name, template_error(&e))))?
                    .is_true(),
                None => context.ir.events.contains_key(event.name),
            };
            if included {
                events.push(event);
            }
        }
        Ok(events)
    }

    /// A standalone conformance probe (`probes/<name>.pml`): the controller arithmetic it
    /// includes, with no unit and no input; the conformance tests append the cases.
    pub fn render_probe(&self, name: &str) -> Result<String, ModelError> {
        self.env
            .get_template(&format!("probes/{name}.pml"))
            .and_then(|t| t.render(()))
            .map_err(|e| ModelError::Template(template_error(&e)))
    }
}

/// A template error with its causes: minijinja puts the failing include's reason in `source`.
fn template_error(e: &minijinja::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[derive(Serialize)]
struct Context<'a> {
    ir: &'a Ir,
    shape: &'a Shape,
    constraint_count: usize,
    term_count: usize,
    autoscaled: bool,
    /// Some workload has a startup usage.
    startup: bool,
    /// A new revision is applied to each Deployment (a check of the unit needs rollouts).
    rollouts: bool,
    /// A check of the model is a liveness property: the environment's steps are progress.
    liveness: bool,
    /// The checks in the model, numbered from 1 for `check_on`.
    check_names: &'a [CheckId],
    /// The `#define`s of the checks' params that have one ([`crate::checks::Param::define`]).
    param_defines: Vec<ParamDefine>,
    /// Every registered check's bookkeeping macro, with the model's numbers of the check
    /// (none when the unit does not check it), and the macros of the checks in the model.
    bookkeeping: Vec<Bookkeeping>,
    monitored: Vec<&'static str>,
    /// Their monitors, in the same order, from the registry ([`crate::checks::CHECKS`]).
    monitors: Vec<Monitor>,
    /// The templates of the environment events it includes, in the registry's order
    /// ([`crate::events::EVENTS`]), each once, and the proctypes `init` runs; empty until
    /// [`Generator::render`] evaluates the registry's expressions.
    event_templates: Vec<EventTemplate>,
    event_proctypes: Vec<&'static str>,
    /// `init`'s statement per input table.
    input_tables: Vec<String>,
    /// The trace events' `#define`s ([`trace_defines`]).
    trace_defines: String,
    /// `kivi-lint simulate`'s model: one run that ends when the cluster settles.
    simulation: Option<SimulationContext>,
}

#[derive(Serialize)]
struct SimulationContext {
    /// The environment's steps before the run may end.
    rounds: u32,
    /// A scenario: the events (1-based among the model's) whose first steps come, in order.
    scenario: Vec<usize>,
}

/// An environment event's template, by its include name; `ordinal` (1-based among the
/// model's events) for the template that holds the event's proctype, 0 for a shared one.
#[derive(Serialize)]
struct EventTemplate {
    name: &'static str,
    ordinal: usize,
    /// While the event is under way ([`crate::events::EventKind::busy`]).
    busy: &'static str,
}

/// A check param's `#define` in main.pml.
#[derive(Serialize)]
struct ParamDefine {
    name: &'static str,
    value: i64,
    check: CheckId,
    description: &'static str,
}

/// A check's bookkeeping macro, true in the runs whose `check_on[i]` is set for one of `runs`.
#[derive(Serialize)]
struct Bookkeeping {
    name: &'static str,
    runs: Vec<usize>,
}

/// A check's monitor: the template that defines its proctype.
#[derive(Serialize)]
struct Monitor {
    template: &'static str,
    proctype: &'static str,
}

impl<'a> Context<'a> {
    fn new(ir: &'a Ir, shape: &'a Shape) -> Context<'a> {
        let (constraints, terms, _) = input::flatten(ir);
        Context {
            ir,
            shape,
            constraint_count: constraints.len(),
            term_count: terms.len(),
            autoscaled: ir.workloads.iter().any(|w| w.autoscaler.is_some()),
            startup: ir.workloads.iter().any(|w| w.startup_level > 0),
            rollouts: crate::checks::any(&ir.checks, |c| c.applies == Applies::WithRollout)
                && ir.workloads.iter().any(|w| w.rollout.is_some()),
            liveness: crate::checks::any(&ir.checks, |c| c.liveness),
            check_names: &ir.checks,
            param_defines: param_defines(ir),
            bookkeeping: crate::checks::CHECKS
                .iter()
                .filter_map(|c| {
                    let runs = ir.checks.iter().enumerate().filter(|(_, id)| **id == c.id);
                    Some(Bookkeeping {
                        name: c.bookkeeping?,
                        runs: runs.map(|(i, _)| i + 1).collect(),
                    })
                })
                .collect(),
            monitored: ir.checks.iter().filter_map(|c| c.check().bookkeeping).collect(),
            monitors: ir
                .checks
                .iter()
                .map(|id| {
                    let check = id.check();
                    Monitor {
                        template: check.template,
                        proctype: check.proctype,
                    }
                })
                .collect(),
            event_templates: Vec::new(),
            event_proctypes: Vec::new(),
            input_tables: input::assignments(),
            trace_defines: trace_defines(),
            simulation: None,
        }
    }
}

/// The params with a `#define`, with the values the model checks them with.
fn param_defines(ir: &Ir) -> Vec<ParamDefine> {
    crate::checks::CHECKS
        .iter()
        .flat_map(|c| c.params.iter().map(move |p| (c, p)))
        .filter_map(|(c, p)| {
            Some(ParamDefine {
                name: p.define?,
                value: *ir.params.get(&c.id)?.get(p.name)?,
                check: c.id,
                description: p.description,
            })
        })
        .collect()
}

/// The `#define` of every trace event, the controllers', the environment events' and the
/// checks', in code order (main.pml).
pub fn trace_defines() -> String {
    let mut events: Vec<(i64, &str)> = crate::trace::Event::ALL
        .iter()
        .map(|e| (e.code(), e.define()))
        .collect();
    events.extend(crate::events::defines());
    events.extend(
        crate::checks::CHECKS
            .iter()
            .map(|c| (c.violation.code, c.violation.define)),
    );
    events.sort();
    events
        .iter()
        .map(|(code, define)| format!("#define {define} {code}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every trace event has a number and a macro no other event has: the controllers', the
    /// environment events' and the checks' alike.
    #[test]
    fn trace_events_are_distinct() {
        let mut codes = std::collections::BTreeSet::new();
        let mut defines = std::collections::BTreeSet::new();
        let all = crate::trace::Event::ALL
            .iter()
            .map(|e| (e.code(), e.define()))
            .chain(crate::events::defines())
            .chain(
                crate::checks::CHECKS
                    .iter()
                    .map(|c| (c.violation.code, c.violation.define)),
            );
        for (code, define) in all {
            assert!(codes.insert(code) && defines.insert(define), "{define} {code}");
        }
        assert_eq!(trace_defines().lines().count(), codes.len());
    }

    /// Every template prints its events by name: no bare number after `KIVI:` in a
    /// verification template, and every event is printed somewhere.
    #[test]
    fn templates_print_events_by_name() {
        // The embedded templates (every file is embedded: model::tests), probes left out.
        let text: String = super::TEMPLATES
            .iter()
            .filter(|(name, _)| !name.starts_with("probes/"))
            .map(|(_, text)| *text)
            .chain(crate::events::templates().map(|(_, text)| text))
            .chain(crate::checks::CHECKS.iter().map(|c| c.monitor))
            .collect();
        for (i, _) in text.match_indices("\"KIVI:") {
            let rest = &text[i + 6..];
            let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
            // Codes from 88 on are the conformance probes' own lines.
            assert!(
                rest.starts_with('%') || number.parse::<i64>().is_ok_and(|n| n >= 88),
                "a bare event number: {}",
                &text[i..i + 16]
            );
        }
        for &e in crate::trace::Event::ALL {
            assert!(text.contains(e.define()), "{e:?} is never printed");
        }
        for (_, define) in crate::events::defines() {
            assert!(text.contains(define), "{define} is never printed");
        }
    }

    /// Every template file is embedded: one left out would only fail when a model needs it.
    #[test]
    fn every_template_file_is_embedded() {
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let pml = |dir: &std::path::Path| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "pml"))
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let root = crate_dir.join("templates");
        let mut files = pml(&root);
        files.extend(pml(&root.join("probes")).into_iter().map(|f| format!("probes/{f}")));
        // A controller's templates are in its folder, included as `controllers/<file>`.
        for entry in std::fs::read_dir(crate_dir.join("src/controllers")).unwrap() {
            let folder = entry.unwrap().path();
            files.extend(pml(&folder).into_iter().map(|f| format!("controllers/{f}")));
        }
        files.sort();
        let mut embedded: Vec<String> = TEMPLATES.iter().map(|(name, _)| name.to_string()).collect();
        embedded.sort();
        assert_eq!(files, embedded);
    }
}

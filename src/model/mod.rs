//! Model generation: a unit's IR at one topology (`ir`), then PROMELA from the templates in
//! `templates/` (embedded in the binary; `--templates-dir` overrides them for experiments).

pub mod ir;

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior, Value, syntax::SyntaxConfig, value::Serde};
use serde::Serialize;

pub use ir::{Ir, IrError, Names, Topology};

/// The templates, by name, as shipped (embedded from `templates/`).
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../templates/", $name)))),*]
    };
}

const TEMPLATES: &[(&str, &str)] = templates!(
    "main.pml",
    "controllers/scheduler.pml",
    "controllers/deployment.pml",
    "controllers/kubelet.pml",
    "controllers/autoscaler.pml",
    "controllers/taint_eviction.pml",
    "controllers/descheduler.pml",
    "events/load_change.pml",
    "events/node_down.pml",
    "events/node_maintenance.pml",
    "events/node_failure.pml",
    "events/node_drain.pml",
    "events/apply.pml",
    "events/node_overload.pml",
    "events/gitops_sync.pml",
    "events/startup.pml",
    "events/rollout.pml",
    "checks/pods_schedulable.pml",
    "checks/min_replicas_available.pml",
    "checks/no_eviction_loop.pml",
    "checks/no_node_overload.pml",
    "checks/no_replica_oscillation.pml",
    "checks/pods_balanced.pml",
    "checks/rollout_completes.pml",
);

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("template error: {0}")]
    Template(String),
}

/// Renders PROMELA models.
pub struct Generator {
    env: Environment<'static>,
}

impl Generator {
    /// The shipped templates, or those in `dir` where it has a file of the same name.
    pub fn new(dir: Option<&Path>) -> Result<Generator, ModelError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_syntax(
            SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(true)
                .build()
                .map_err(|e| ModelError::Template(e.to_string()))?,
        );

        let override_dir: Option<PathBuf> = dir.map(Path::to_path_buf);
        for (name, source) in TEMPLATES {
            let text = override_dir
                .as_ref()
                .and_then(|d| std::fs::read_to_string(d.join(name)).ok())
                .unwrap_or_else(|| source.to_string());
            env.add_template_owned(name.to_string(), text)
                .map_err(|e| ModelError::Template(format!("{name}: {e}")))?;
        }
        Ok(Generator { env })
    }

    /// The PROMELA model of `ir`, monitoring `checks`.
    pub fn render(&self, ir: &Ir, checks: &[&str]) -> Result<String, ModelError> {
        let context = Context::new(ir, checks);
        self.env
            .get_template("main.pml")
            .and_then(|t| t.render(Value::from(Serde(&context))))
            .map_err(|e| ModelError::Template(e.to_string()))
    }
}

/// Spread constraints flattened across templates, for the model's tables.
#[derive(Serialize)]
struct FlatConstraint<'a> {
    max_skew: i64,
    min_domains: i64,
    domain_count: u32,
    included: u32,
    counts_mask: u32,
    self_match: bool,
    weight_milli: i64,
    same_revision: bool,
    honor_taints: bool,
    domains: &'a [u32],
}

#[derive(Serialize)]
struct Layout {
    hard_first: usize,
    soft_first: usize,
    term_first: usize,
}

#[derive(Serialize)]
struct Context<'a> {
    ir: &'a Ir,
    constraints: Vec<FlatConstraint<'a>>,
    /// Per template (1-based; entry 0 unused): where its constraints start.
    layout: Vec<Layout>,
    constraint_count: usize,
    /// Required inter-pod affinity terms flattened across templates.
    terms: Vec<&'a ir::IrAffinityTerm>,
    term_count: usize,
    max_domain: u32,
    /// Entries per workload in the autoscaler's limit tables (max replicas + 1).
    hpa_table: usize,
    autoscaled: bool,
    /// Some pod runs on a node with a NoExecute taint it does not tolerate.
    taints: bool,
    /// Some workload has a startup usage.
    startup: bool,
    /// A new revision is applied to each Deployment (the unit checks rollout-completes).
    rollouts: bool,
    checks: Vec<String>,
}

impl<'a> Context<'a> {
    fn new(ir: &'a Ir, checks: &[&str]) -> Context<'a> {
        let mut constraints = Vec::new();
        let mut terms = Vec::new();
        let mut layout = vec![Layout {
            hard_first: 0,
            soft_first: 0,
            term_first: 0,
        }];
        for t in &ir.templates {
            let hard_first = constraints.len() + 1;
            constraints.extend(t.hard.iter().map(flat));
            let soft_first = constraints.len() + 1;
            constraints.extend(t.soft.iter().map(flat));
            let term_first = terms.len() + 1;
            terms.extend(t.affinity_terms.iter());
            layout.push(Layout {
                hard_first,
                soft_first,
                term_first,
            });
        }
        let max_domain = constraints
            .iter()
            .map(|c| c.domain_count)
            .chain(terms.iter().map(|t| t.domain_count))
            .max()
            .unwrap_or(0)
            // SPIN rejects `for (i : 1 .. 0)`: keep the domain loops non-empty.
            .max(1);
        Context {
            ir,
            constraint_count: constraints.len(),
            constraints,
            term_count: terms.len(),
            terms,
            layout,
            max_domain,
            hpa_table: ir
                .workloads
                .iter()
                .filter_map(|w| w.autoscaler.as_ref().map(|a| a.up_limit.len()))
                .max()
                .unwrap_or(1),
            autoscaled: ir.workloads.iter().any(|w| w.autoscaler.is_some()),
            taints: ir.templates.iter().any(|t| t.no_execute != 0),
            startup: ir.workloads.iter().any(|w| w.startup_level > 0),
            rollouts: ir.checks.contains(&"rollout-completes") && ir.workloads.iter().any(|w| w.rollout.is_some()),
            checks: checks.iter().map(|c| c.to_string()).collect(),
        }
    }
}

fn flat(c: &ir::IrConstraint) -> FlatConstraint<'_> {
    FlatConstraint {
        max_skew: c.max_skew,
        min_domains: c.min_domains,
        domain_count: c.domain_count,
        included: c.included,
        counts_mask: c
            .counts_template
            .iter()
            .enumerate()
            .fold(0, |m, (t, yes)| if *yes { m | (1 << t) } else { m }),
        self_match: c.self_match,
        weight_milli: c.weight_milli,
        same_revision: c.same_revision,
        honor_taints: c.honor_taints,
        domains: &c.domains,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every template file is embedded: one left out would only fail when a model needs it.
    #[test]
    fn every_template_file_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut files = Vec::new();
        for dir in ["", "controllers", "events", "checks"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "pml") {
                    files.push(path.strip_prefix(&root).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        files.sort();
        let mut embedded: Vec<String> = TEMPLATES.iter().map(|(name, _)| name.to_string()).collect();
        embedded.sort();
        assert_eq!(files, embedded);
    }
}

//! JSON report of discovery and units. The schema is documented in the README and versioned by
//! `schemaVersion`; fields are only ever added within a version.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::Analysis;
use crate::diagnostics::Severity;
use crate::discover::ScopeKind;
use crate::units::Role;

pub const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    schema_version: u32,
    tool: Tool,
    config: Option<String>,
    cluster: Vec<PoolOut<'a>>,
    summary: Summary,
    scopes: Vec<ScopeOut>,
    units: Vec<UnitOut<'a>>,
    diagnostics: Vec<DiagnosticOut<'a>>,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    files: usize,
    renders: usize,
    objects: usize,
    objects_by_kind: BTreeMap<String, usize>,
    skipped_documents: usize,
    units: usize,
    errors: usize,
    warnings: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PoolOut<'a> {
    name: &'a str,
    count: u32,
    min: u32,
    max: u32,
    labels: &'a crate::manifest::Labels,
    allocatable: crate::manifest::node::NodeResources,
    reserved: crate::manifest::pod::Amounts,
    taints: &'a [crate::manifest::taint::Taint],
}

#[derive(Serialize)]
struct ScopeOut {
    kind: ScopeKind,
    path: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MemberOut<'a> {
    kind: &'a str,
    namespace: Option<&'a str>,
    name: &'a str,
    role: Role,
    file: String,
    line: u32,
    column: u32,
}

#[derive(Serialize)]
struct EdgeOut {
    from: String,
    to: String,
    reason: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepOut<'a> {
    actor: &'static str,
    message: &'a str,
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultOut<'a> {
    check: &'static str,
    /// `violated`, `verified`, `inconclusive` or `not-checked`.
    verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    topology: Option<TopologyOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    steps: Vec<StepOut<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TopologyOut {
    nodes: u32,
    /// Nodes per pool, in the order of the config's pools.
    nodes_per_pool: Vec<u32>,
    /// Starting replicas of the workloads whose count the search varies.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    replicas: BTreeMap<String, u32>,
    description: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchOut {
    planned: usize,
    explored: usize,
    bound: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    verified_up_to: Option<TopologyOut>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VerificationOut<'a> {
    search: SearchOut,
    /// Configured events the model does not explore yet.
    unmodelled_events: Vec<&'static str>,
    /// States pan stored over its runs (deterministic for a given input and kivi-lint).
    states: u64,
    results: Vec<ResultOut<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnitOut<'a> {
    id: &'a str,
    name: &'a str,
    scope: String,
    scope_kind: ScopeKind,
    members: Vec<MemberOut<'a>>,
    node_pools: &'a [String],
    checks: &'a [&'static str],
    edges: Vec<EdgeOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verification: Option<VerificationOut<'a>>,
}

#[derive(Serialize)]
struct DiagnosticOut<'a> {
    severity: Severity,
    file: String,
    line: u32,
    column: u32,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
}

/// The units, and with `results` the verdict of each check.
pub fn units(a: &Analysis, results: Option<&[crate::scaling::UnitResult]>) -> String {
    let path = |file| a.sources.path(file).display().to_string();
    let scope = |i: usize| {
        a.scopes
            .get(i)
            .map_or((String::from("<config>"), ScopeKind::Files), |s| {
                (s.path.display().to_string(), s.kind)
            })
    };
    let report = Report {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "kivi-lint",
            version: env!("CARGO_PKG_VERSION"),
        },
        config: a
            .config
            .path
            .as_ref()
            .map(|p| crate::discover::display_path(p).display().to_string()),
        cluster: a
            .config
            .cluster
            .pools
            .iter()
            .map(|p| PoolOut {
                name: &p.name,
                count: p.count,
                min: p.min,
                max: p.max,
                labels: &p.labels,
                allocatable: p.allocatable,
                reserved: p.reserved,
                taints: &p.taints,
            })
            .collect(),
        summary: Summary {
            files: a.files,
            renders: a.renders,
            objects: a.objects.iter().filter(|o| !o.embedded).count(),
            objects_by_kind: a.objects_by_kind(),
            skipped_documents: a.skipped.len(),
            units: a.units.len(),
            errors: a.diagnostics.count(Severity::Error),
            warnings: a.diagnostics.count(Severity::Warning),
        },
        scopes: a
            .scopes
            .iter()
            .map(|s| ScopeOut {
                kind: s.kind,
                path: s.path.display().to_string(),
            })
            .collect(),
        units: a
            .units
            .iter()
            .enumerate()
            .map(|(ui, u)| {
                let (scope_path, scope_kind) = scope(u.scope);
                UnitOut {
                    id: &u.id,
                    name: &u.name,
                    scope: scope_path,
                    scope_kind,
                    members: u
                        .members
                        .iter()
                        .map(|m| {
                            let o = &a.objects[m.object];
                            MemberOut {
                                kind: &o.id.kind,
                                namespace: o.id.namespace.as_deref(),
                                name: &o.id.name,
                                role: m.role,
                                file: path(o.span.file),
                                line: o.span.start.line,
                                column: o.span.start.column,
                            }
                        })
                        .collect(),
                    node_pools: &u.node_pools,
                    checks: &u.checks,
                    edges: u
                        .edges
                        .iter()
                        .map(|e| EdgeOut {
                            from: a.objects[e.from].id.to_string(),
                            to: a.objects[e.to].id.to_string(),
                            reason: e.reason.clone(),
                        })
                        .collect(),
                    verification: results
                        .and_then(|rs| rs.iter().find(|r| r.unit == ui))
                        .map(|r| verification(a, r)),
                }
            })
            .collect(),
        diagnostics: a
            .diagnostics
            .iter()
            .map(|d| DiagnosticOut {
                severity: d.severity,
                file: path(d.span.file),
                line: d.span.start.line,
                column: d.span.start.column,
                message: &d.message,
                help: d.help.as_deref(),
            })
            .collect(),
    };
    let mut out = serde_json::to_string_pretty(&report).expect("the report serialises");
    out.push('\n');
    out
}

fn verification<'a>(a: &Analysis, r: &'a crate::scaling::UnitResult) -> VerificationOut<'a> {
    use crate::findings::Verdict;
    let place = |span: Option<crate::source::Span>| {
        span.map_or((None, None, None), |s| {
            (
                Some(a.sources.path(s.file).display().to_string()),
                Some(s.start.line),
                Some(s.start.column),
            )
        })
    };
    let topology = |t: &crate::model::Topology| TopologyOut {
        nodes: t.nodes(),
        nodes_per_pool: t.nodes_per_pool.clone(),
        replicas: a.units[r.unit]
            .workloads()
            .zip(&t.replicas)
            .filter_map(|(w, n)| n.map(|n| (a.objects[w].id.to_string(), n)))
            .collect(),
        description: crate::scaling::describe(a, r.unit, t),
    };
    VerificationOut {
        search: SearchOut {
            planned: r.search.planned,
            explored: r.search.explored,
            bound: r.search.bound.clone(),
            verified_up_to: r.search.verified_up_to.as_ref().map(topology),
        },
        unmodelled_events: crate::scaling::unmodelled_events(&a.config),
        states: r.states,
        results: r
            .results
            .iter()
            .map(|c| {
                let (verdict, reason, location, steps) = match &c.verdict {
                    Verdict::Violated { steps, location } => ("violated", None, *location, steps.as_slice()),
                    Verdict::Verified => ("verified", None, None, &[][..]),
                    Verdict::Inconclusive(why) => ("inconclusive", Some(why.to_string()), None, &[][..]),
                    Verdict::NotChecked => ("not-checked", Some("not modelled yet".to_string()), None, &[][..]),
                };
                let (file, line, column) = place(location);
                ResultOut {
                    check: c.check,
                    verdict,
                    reason,
                    topology: c.topology.as_ref().map(topology),
                    file,
                    line,
                    column,
                    steps: steps
                        .iter()
                        .map(|s| {
                            let (file, line, column) = place(s.location);
                            StepOut {
                                actor: s.actor,
                                message: &s.message,
                                file,
                                line,
                                column,
                            }
                        })
                        .collect(),
                }
            })
            .collect(),
    }
}

//! The report as plain, owned data: what every output format renders, what `--format json`
//! writes, and what `kivi-lint merge` reads back from shards. Field names are the JSON
//! schema's (docs/reports.md, "JSON output"); fields are only ever added within a schema version.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::Analysis;
use crate::diagnostics::Severity;
use crate::discover::ScopeKind;
use crate::findings::Verdict;
use crate::units::Role;

pub const SCHEMA_VERSION: u32 = 2;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    pub config: Option<String>,
    /// Set on the report of one shard (`--shard i/n`); `merge` removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Set in PR mode (`--changed-since`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_since: Option<ChangedSince>,
    pub cluster: Vec<Pool>,
    pub summary: Summary,
    pub scopes: Vec<Scope>,
    pub units: Vec<Unit>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// Which slice of the units a shard verified: `index` counts from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangedSince {
    /// The git ref given.
    pub revision: String,
    /// Units whose models and inputs are the same on that revision (not verified again).
    pub unchanged_units: usize,
    /// Violations the revision has too, left out of the report (`--all-findings` keeps them).
    pub existing_findings_hidden: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub files: usize,
    pub renders: usize,
    pub objects: usize,
    #[serde(default)]
    pub workloads: usize,
    pub objects_by_kind: BTreeMap<String, usize>,
    pub skipped_documents: usize,
    pub units: usize,
    /// Workloads that are members of a verification unit (the rest are read but not verified:
    /// hooks, batch pods alone, workloads of scopes left out).
    #[serde(default)]
    pub workloads_in_units: usize,
    /// Sources left out because of what kivi-lint cannot do here (network off, `${VAR}`
    /// templates, charts that need values), each also a note among the diagnostics.
    #[serde(default)]
    pub not_rendered: Vec<crate::discover::coverage::NotRendered>,
    /// Remote charts the renders used (`--allow-network`, or the cache): URL, version, digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fetched: Vec<crate::discover::fetch::Fetched>,
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    pub name: String,
    pub count: u32,
    pub min: u32,
    pub max: u32,
    pub labels: crate::manifest::Labels,
    pub allocatable: crate::manifest::node::NodeResources,
    pub reserved: crate::manifest::pod::Amounts,
    pub taints: Vec<crate::manifest::taint::Taint>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    pub kind: ScopeKind,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unit {
    pub id: String,
    pub name: String,
    pub scope: String,
    pub scope_kind: ScopeKind,
    pub members: Vec<Member>,
    pub node_pools: Vec<String>,
    /// The unit's own cluster, when it is not the report's: the assumed one that admits what
    /// its workloads require of nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster: Vec<Pool>,
    pub checks: Vec<String>,
    pub edges: Vec<Edge>,
    /// Enabled checks that no run explores for this unit, and why (an event the config does
    /// not have): "not checked", never "verified".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<NotChecked>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Why a scan did not verify the unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_verified: Option<NotVerified>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotChecked {
    pub check: String,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotVerified {
    /// Another shard verifies it.
    OtherShard,
    /// PR mode: its models and inputs are those of the base revision.
    Unchanged,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub role: Role,
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl Member {
    /// `Kind/namespace/name`, as objects are named everywhere else.
    pub fn id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{ns}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    pub search: Search,
    /// Configured events the model does not explore yet.
    pub unmodelled_events: Vec<String>,
    /// What the report would otherwise leave unsaid about the unit, one sentence each: what
    /// the model does not see (batch pods' completion, requests nobody sets, a class the scan
    /// lacks), and pods the descheduler never considers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// States pan stored over its runs (deterministic for a given input and kivi-lint).
    pub states: u64,
    pub results: Vec<CheckOutcome>,
    /// Machine-dependent, so not in JSON: for the human report only.
    #[serde(skip)]
    pub run: Option<RunStats>,
}

/// How long a unit took, or that its verdicts came from the result cache.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RunStats {
    pub cached: bool,
    /// The id of the unit whose runs this one shares (the same models and inputs).
    pub shares_runs_with: Option<String>,
    pub elapsed: std::time::Duration,
    pub generate: std::time::Duration,
    pub engine: crate::engine::Timings,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Search {
    pub planned: usize,
    pub explored: usize,
    pub bound: String,
    /// The fault model the verdicts hold under: each disruption alone, from every replica
    /// count the autoscalers can hold (empty: the config's events combined in one model).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fault_model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_up_to: Option<TopologyOut>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologyOut {
    pub nodes: u32,
    /// Nodes per pool, in the order of the config's pools.
    pub nodes_per_pool: Vec<u32>,
    /// Starting replicas of the workloads whose count the search varies.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replicas: BTreeMap<String, u32>,
    pub description: String,
    /// Every node of the topology, pool by pool (for timelines of cluster states).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_list: Vec<NodeOut>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeOut {
    pub name: String,
    pub pool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// A node the cluster autoscaler may add: not there at the start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    Violated,
    Verified,
    Inconclusive,
    NotChecked,
}

/// Whether a violation is on the base revision too (PR mode; SARIF's `baselineState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaselineState {
    New,
    Unchanged,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckOutcome {
    pub check: String,
    pub verdict: VerdictKind,
    /// The check's level (config `checks.severity`, else its default).
    #[serde(default = "default_level")]
    pub level: crate::checks::Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For inconclusive verdicts: an engine error (spin, the compiler or pan failed), which
    /// fails the run like an input error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub engine_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_state: Option<BaselineState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// End of the causing field (exclusive column), on the line it starts on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    /// The violation is acknowledged by an annotation or a config suppression: reported, but it
    /// does not fail the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppression: Option<Suppression>,
    /// A one-field change the model checker verified to make the check hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixOut>,
    /// The violated check of the same unit whose root cause this violation follows from: its
    /// counterexample passes through that check's causing field. Reported with it, not alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<String>,
    /// The other violated checks that follow from this one's root cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_breaks: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyOut>,
    /// Inconclusive only: the last topology of the search the check held on before the run
    /// that could not finish (it held on every one up to there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_up_to: Option<TopologyOut>,
    /// How many topologies it held on, up to `heldUpTo`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub held_topologies: usize,
    /// Inconclusive only: a partial verdict. The check held on every topology up to
    /// `heldUpTo`, and a limit (time, memory, depth, the model's bounds) stopped the search
    /// after it: a pass with a note, unless `--require-complete`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepOut>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn default_level() -> crate::checks::Level {
    crate::checks::Level::Error
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepOut {
    pub actor: String,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    /// What the step changes in the cluster, for timelines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<crate::findings::Effect>,
}

/// A verified fix: what to change, and where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixOut {
    pub summary: String,
    /// The cluster the fix was verified on.
    #[serde(default)]
    pub verified_on: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The edit, when the fix is one scalar's new value written plainly in the file: the text
    /// from `line`:`column` to `endColumn` (exclusive) becomes `text` (SARIF `fixes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<ReplacementOut>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplacementOut {
    pub end_column: u32,
    pub text: String,
}

/// Why a violation does not count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Suppression {
    /// `in-source`: an `ignore-check.kivi-lint.io/<check>` annotation; `external`: the config's
    /// `suppressions`.
    pub kind: SuppressionKind,
    pub justification: String,
    /// Where the annotation or the config entry is.
    pub file: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuppressionKind {
    InSource,
    External,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The end of the offending text (column exclusive), when it is wider than a point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// How the report treats PR-mode baselines.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub shard: Option<Shard>,
    pub changed_since: Option<String>,
    /// Per unit index, a reason it was not verified.
    pub not_verified: BTreeMap<usize, NotVerified>,
    /// Per unit index and check, the policy's level, suppression and PR-mode hiding of its
    /// result ([`crate::findings::Policy::judge`]): the report shows them, it decides nothing.
    pub judgements: BTreeMap<(usize, crate::checks::CheckId), crate::findings::Judgement>,
}

fn pools(cluster: &crate::config::Cluster) -> Vec<Pool> {
    cluster
        .pools
        .iter()
        .map(|p| Pool {
            name: p.name.clone(),
            count: p.count,
            min: p.min,
            max: p.max,
            labels: p.labels.clone(),
            allocatable: p.allocatable,
            reserved: p.reserved,
            taints: p.taints.clone(),
        })
        .collect()
}

impl Report {
    /// The report of an analysis and, once verified, its results.
    pub fn new(a: &Analysis, results: Option<&[crate::findings::UnitResult]>, context: &Context) -> Report {
        let path = |file| a.sources.path(file).display().to_string();
        let scope = |i: usize| {
            a.scopes
                .get(i)
                .map_or((String::from("<config>"), ScopeKind::Files), |s| {
                    (s.path.display().to_string(), s.kind)
                })
        };
        let mut hidden = 0;
        let units = a
            .units
            .iter()
            .enumerate()
            .map(|(ui, u)| {
                let (scope_path, scope_kind) = scope(u.scope);
                let verification = results
                    .and_then(|rs| rs.iter().find(|r| r.unit == ui))
                    .map(|r| verification(a, r, context, &mut hidden));
                Unit {
                    id: u.id.clone(),
                    name: u.name.clone(),
                    scope: scope_path,
                    scope_kind,
                    members: u
                        .members
                        .iter()
                        .map(|m| {
                            let o = &a.objects[m.object];
                            Member {
                                kind: o.id.kind.clone(),
                                namespace: o.id.namespace.clone(),
                                name: o.id.name.clone(),
                                role: m.role,
                                file: path(o.span.file),
                                line: o.span.start.line,
                                column: o.span.start.column,
                            }
                        })
                        .collect(),
                    node_pools: u.node_pools.clone(),
                    cluster: u.cluster.as_ref().map(pools).unwrap_or_default(),
                    checks: u.checks.iter().map(|c| c.to_string()).collect(),
                    not_checked: u
                        .not_checked
                        .iter()
                        .map(|(c, why)| NotChecked {
                            check: c.to_string(),
                            reason: why.to_string(),
                        })
                        .collect(),
                    edges: u
                        .edges
                        .iter()
                        .map(|e| Edge {
                            from: a.objects[e.from].id.to_string(),
                            to: a.objects[e.to].id.to_string(),
                            reason: e.reason.clone(),
                        })
                        .collect(),
                    not_verified: if verification.is_none() && results.is_some() {
                        context.not_verified.get(&ui).copied()
                    } else {
                        None
                    },
                    verification,
                }
            })
            .collect();
        Report {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "kivi-lint".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            config: a
                .config
                .path
                .as_ref()
                .map(|p| crate::source::display_path(p).display().to_string()),
            shard: context.shard,
            changed_since: context.changed_since.as_ref().map(|revision| ChangedSince {
                revision: revision.clone(),
                unchanged_units: context
                    .not_verified
                    .values()
                    .filter(|v| **v == NotVerified::Unchanged)
                    .count(),
                existing_findings_hidden: hidden,
            }),
            cluster: pools(&a.config.cluster),
            summary: Summary {
                files: a.files,
                renders: a.renders,
                objects: a.objects.iter().filter(|o| !o.embedded).count(),
                workloads: a.objects.iter().filter(|o| o.workload().is_some()).count(),
                objects_by_kind: a.objects_by_kind(),
                skipped_documents: a.skipped.len(),
                units: a.units.len(),
                workloads_in_units: a
                    .units
                    .iter()
                    .flat_map(|u| &u.members)
                    .filter(|m| a.objects[m.object].workload().is_some())
                    .count(),
                not_rendered: a.not_rendered.clone(),
                fetched: a.fetched.clone(),
                errors: a.diagnostics.count(Severity::Error),
                warnings: a.diagnostics.count(Severity::Warning),
            },
            scopes: a
                .scopes
                .iter()
                .map(|s| Scope {
                    kind: s.kind,
                    path: s.path.display().to_string(),
                })
                .collect(),
            units,
            diagnostics: a
                .diagnostics
                .iter()
                .map(|d| Diagnostic {
                    severity: d.severity,
                    file: path(d.span.file),
                    line: d.span.start.line,
                    column: d.span.start.column,
                    end_line: (d.span.end > d.span.start).then_some(d.span.end.line),
                    end_column: (d.span.end > d.span.start).then_some(d.span.end.column),
                    message: d.message.clone(),
                    help: d.help.clone(),
                })
                .collect(),
        }
    }

    /// Every check outcome of every verified unit.
    /// What the scan covered, in one line: "coverage: 61 of 75 workloads in verification
    /// units; not rendered: 8 (remote source, network off)".
    pub fn coverage_line(&self) -> String {
        let s = &self.summary;
        let mut line = format!(
            "coverage: {} of {} workload{} in verification units",
            s.workloads_in_units,
            s.workloads,
            if s.workloads == 1 { "" } else { "s" }
        );
        if let Some(not_rendered) = crate::discover::coverage::line(&s.not_rendered) {
            line.push_str("; ");
            line.push_str(&not_rendered);
        }
        // What was fetched is part of what was verified: where it came from, exactly.
        for f in &s.fetched {
            let cached = if f.cached { ", cached" } else { "" };
            let digest = crate::diagnostics::printable(f.digest.get(..12).unwrap_or(&f.digest));
            // A Git repository has no chart name: its reference and commit.
            line.push_str(&if f.name.is_empty() {
                format!(
                    "\nfetched: {} at {} (commit {digest}{cached})",
                    crate::diagnostics::printable(&f.url),
                    crate::diagnostics::printable(if f.version.is_empty() { "HEAD" } else { &f.version }),
                )
            } else {
                format!(
                    "\nfetched: {} {} from {} (sha256 {digest}{cached})",
                    crate::diagnostics::printable(&f.name),
                    crate::diagnostics::printable(&f.version),
                    crate::diagnostics::printable(&f.url),
                )
            });
        }
        line
    }

    pub fn outcomes(&self) -> impl Iterator<Item = (&Unit, &CheckOutcome)> {
        self.units
            .iter()
            .filter_map(|u| u.verification.as_ref().map(|v| (u, v)))
            .flat_map(|(u, v)| v.results.iter().map(move |c| (u, c)))
    }
}

/// A suppression's reason as every report carries it: free text from the repository, so
/// control characters and bidirectional controls escaped (no line of its own, such as a
/// `::error::` in a JUnit body a runner prints, and no text that reads backwards), and links
/// defanged (`https[:]//…`, `www[.]…`): a pull request cannot put a clickable link in the
/// job summary, the code-scanning alert or the merge-request widget.
pub fn neutral_reason(reason: &str) -> String {
    let printable = crate::diagnostics::printable(reason);
    let mut out = printable.replace("://", "[:]//");
    let mut at = 0;
    while let Some(i) = out[at..].to_ascii_lowercase().find("www.").map(|i| i + at) {
        out.replace_range(i + 3..i + 4, "[.]");
        at = i + 6;
    }
    out
}

/// A suppression as the report shows it: its kind and where it is.
fn suppression(a: &Analysis, s: crate::findings::Suppressed) -> Suppression {
    Suppression {
        kind: match s.by {
            crate::findings::SuppressedBy::Annotation => SuppressionKind::InSource,
            crate::findings::SuppressedBy::Config => SuppressionKind::External,
        },
        justification: neutral_reason(&s.reason),
        file: a.sources.path(s.span.file).display().to_string(),
        line: s.span.start.line,
        column: s.span.start.column,
    }
}

fn verification(a: &Analysis, r: &crate::findings::UnitResult, context: &Context, hidden: &mut usize) -> Verification {
    let place = |span: Option<crate::source::Span>| Place::of(a, span);
    let topology = |t: &crate::model::Topology| TopologyOut {
        nodes: t.nodes(),
        nodes_per_pool: t.nodes_per_pool.clone(),
        replicas: a.units[r.unit]
            .workloads()
            .zip(&t.replicas)
            .filter_map(|(w, n)| n.map(|n| (a.objects[w].id.to_string(), n)))
            .collect(),
        description: crate::search::describe(crate::search::Subject::of(a), r.unit, t),
        node_list: crate::model::ir::cluster_nodes(&a.config, t)
            .0
            .iter()
            .map(|slot| NodeOut {
                name: slot.pool.node_name(slot.index),
                pool: slot.pool.name.clone(),
                zone: slot.zone_name(),
                absent: slot.absent,
            })
            .collect(),
    };
    let mut results = Vec::new();
    for c in &r.results {
        let baseline_state = c.baseline.map(|existing| {
            if existing {
                BaselineState::Unchanged
            } else {
                BaselineState::New
            }
        });
        // A result nothing judged (none is asked for in a report of units only) shows its
        // check's level.
        let judgement =
            context
                .judgements
                .get(&(r.unit, c.check))
                .cloned()
                .unwrap_or_else(|| crate::findings::Judgement {
                    level: a.check_level(c.check),
                    suppressed: None,
                    hidden: false,
                });
        if judgement.hidden {
            *hidden += 1;
            continue;
        }
        let (verdict, reason, location, steps) = match &c.verdict {
            Verdict::Violated { steps, location } => (VerdictKind::Violated, None, *location, steps.as_slice()),
            Verdict::Verified => (VerdictKind::Verified, None, None, &[][..]),
            Verdict::Inconclusive(why) => (VerdictKind::Inconclusive, Some(why.to_string()), None, &[][..]),
            Verdict::NotChecked => (
                VerdictKind::NotChecked,
                Some("not modelled yet".to_string()),
                None,
                &[][..],
            ),
        };
        let at = place(location);
        results.push(CheckOutcome {
            check: c.check.to_string(),
            verdict,
            level: judgement.level,
            reason,
            engine_error: matches!(
                c.verdict,
                Verdict::Inconclusive(crate::engine::Inconclusive::EngineError(_))
            ),
            baseline_state,
            topology: c.topology.as_ref().map(topology),
            held_up_to: c.held_up_to.as_ref().map(topology),
            held_topologies: c.held_topologies,
            partial: c.held_up_to.is_some() && matches!(&c.verdict, Verdict::Inconclusive(why) if why.is_limit()),
            file: at.file,
            line: at.line,
            column: at.column,
            end_line: at.end_line,
            end_column: at.end_column,
            fix: c.fix.as_ref().map(|f| FixOut {
                summary: f.summary.clone(),
                verified_on: f.verified_on.clone(),
                file: a.sources.path(f.location.file).display().to_string(),
                line: f.location.start.line,
                column: f.location.start.column,
                replacement: super::fix_edit::replacement(a, f),
            }),
            suppression: judgement.suppressed.map(|s| suppression(a, s)),
            caused_by: None,
            also_breaks: Vec::new(),
            steps: steps
                .iter()
                .map(|s| {
                    let at = place(s.location);
                    StepOut {
                        actor: s.actor.to_string(),
                        message: s.message.clone(),
                        file: at.file,
                        line: at.line,
                        column: at.column,
                        end_line: at.end_line,
                        end_column: at.end_column,
                        effect: s.effect.clone(),
                    }
                })
                .collect(),
        });
    }
    super::causes::link_root_causes(&mut results);
    Verification {
        search: Search {
            planned: r.search.planned,
            explored: r.search.explored,
            bound: r.search.bound.clone(),
            fault_model: r.search.fault_model.clone(),
            verified_up_to: r.search.verified_up_to.as_ref().map(topology),
        },
        unmodelled_events: crate::search::unmodelled_events(&a.config)
            .into_iter()
            .map(String::from)
            .collect(),
        notes: a.units[r.unit].notes(&a.objects, &a.config),
        states: r.effort.states,
        results,
        run: Some(RunStats {
            cached: r.effort.cached,
            shares_runs_with: r.effort.shares_runs_with.map(|u| a.units[u].id.clone()),
            elapsed: r.effort.elapsed,
            generate: r.effort.generate,
            engine: r.effort.timings,
        }),
    }
}

/// A span as the report shows it: path, start, and an end on the start line (a mapping's span
/// ends lines later; a region that long would hide which field is meant).
#[derive(Default)]
struct Place {
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
}

impl Place {
    fn of(a: &Analysis, span: Option<crate::source::Span>) -> Place {
        let Some(s) = span else { return Place::default() };
        let end_column = if s.end.line == s.start.line && s.end.column > s.start.column {
            s.end.column
        } else {
            let text = &a.sources.file(s.file).text;
            let line_chars = text
                .lines()
                .nth(s.start.line.saturating_sub(1) as usize)
                .map_or(0, |l| l.trim_end().chars().count() as u32);
            (line_chars + 1).max(s.start.column + 1)
        };
        Place {
            file: Some(a.sources.path(s.file).display().to_string()),
            line: Some(s.start.line),
            column: Some(s.start.column),
            end_line: Some(s.start.line),
            end_column: Some(end_column),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every format tells an inconclusive check the same way: why, where, and up to where it held.
    #[test]
    fn inconclusive_text_says_where_it_held() {
        let topology = |nodes: u32, description: &str| serde_json::json!({"nodes": nodes, "nodesPerPool": [nodes], "description": description});
        let outcome: CheckOutcome = serde_json::from_value(serde_json::json!({
            "check": "min-replicas-available",
            "verdict": "inconclusive",
            "reason": "memory limit of 1024 MiB reached",
            "topology": topology(6, "6 nodes"),
            "heldUpTo": topology(5, "5 nodes"),
        }))
        .unwrap();
        assert_eq!(
            outcome.inconclusive_text(),
            "memory limit of 1024 MiB reached (at 6 nodes); it held up to 5 nodes"
        );
        let first: CheckOutcome = serde_json::from_value(serde_json::json!({
            "check": "min-replicas-available", "verdict": "inconclusive", "reason": "time limit",
        }))
        .unwrap();
        assert_eq!(first.inconclusive_text(), "time limit");
    }
}

#[cfg(test)]
mod neutral_reason_tests {
    use super::neutral_reason;

    #[test]
    fn reasons_carry_no_link_line_break_or_override() {
        assert_eq!(
            neutral_reason("see https://evil.example/x and WWW.evil.example\n::error::x \u{202e}txt"),
            "see https[:]//evil.example/x and WWW[.]evil.example\\n::error::x \\u{202e}txt"
        );
        assert_eq!(
            neutral_reason("accepted: capacity reserved"),
            "accepted: capacity reserved"
        );
    }
}

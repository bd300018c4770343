//! The report as plain, owned data: what every output format renders, what `--format json`
//! writes, and what `kivi-lint merge` reads back from shards. Field names are the JSON
//! schema's (docs/reports.md, "JSON output"); fields are only ever added within a schema version.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diagnostics::Severity;
use crate::discover::ScopeKind;
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
    pub units: Vec<UnitOut>,
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
pub struct UnitOut {
    pub id: String,
    pub name: String,
    pub scope: String,
    pub scope_kind: ScopeKind,
    pub members: Vec<MemberOut>,
    pub node_pools: Vec<String>,
    /// The unit's own cluster, when it is not the report's: the assumed one that admits what
    /// its workloads require of nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster: Vec<Pool>,
    pub checks: Vec<String>,
    pub edges: Vec<EdgeOut>,
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
pub struct MemberOut {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub role: Role,
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl MemberOut {
    /// `Kind/namespace/name`, as objects are named everywhere else.
    pub fn id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{ns}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EdgeOut {
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

impl FixOut {
    /// Where it was verified, in a sentence's words: the cluster, and the violations it was
    /// verified apart from.
    pub fn verified(&self) -> String {
        match self.apart_from {
            0 => self.verified_on.clone(),
            n => format!(
                "{}, apart from the check's {} in the unit",
                self.verified_on,
                crate::diagnostics::plural(n, "other violation")
            ),
        }
    }
}

/// A verified fix: what to change, and where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixOut {
    pub summary: String,
    /// The cluster the fix was verified on.
    #[serde(default)]
    pub verified_on: String,
    /// `--all`: the check's other violations in the unit the fix was verified apart from: it
    /// ends this violation, they stay until their own fixes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub apart_from: usize,
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
    /// Per unit index and result (its position among the unit's results: `--all` gives a
    /// check several), the policy's level, suppression and PR-mode hiding of the result
    /// ([`crate::findings::Policy::judge`]): the report shows them, it decides nothing.
    pub judgements: BTreeMap<(usize, usize), crate::findings::Judgement>,
}

impl Report {
    /// Every check outcome of every verified unit.
    /// What the scan covered, in one line: "coverage: 61 of 75 workloads in verification
    /// units; not rendered: 8 (remote source, network off)".
    pub fn coverage_line(&self) -> String {
        let s = &self.summary;
        let mut line = format!(
            "coverage: {} of {} in verification units",
            s.workloads_in_units,
            super::plural(s.workloads, "workload")
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

    pub fn outcomes(&self) -> impl Iterator<Item = (&UnitOut, &CheckOutcome)> {
        self.units
            .iter()
            .filter_map(|u| u.verification.as_ref().map(|v| (u, v)))
            .flat_map(|(u, v)| v.results.iter().map(move |c| (u, c)))
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

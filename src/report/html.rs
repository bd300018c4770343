//! One self-contained HTML page (no network): per unit its verdicts, and each counterexample
//! as a timeline of cluster states. Nodes are grouped by zone (else pool); pods are boxes that
//! appear, move, go Pending and disappear step by step, with the manifest lines of each step
//! alongside.
//!
//! The states are computed here, not in the browser, so they are tested with the rest of the
//! report. Everything from the manifests travels as JSON inside the page and reaches the DOM
//! through `textContent` only.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Emit;
use super::document::{StepOut, VerdictKind};
use super::violation::{self, Finding};
use crate::findings::Change;

const STYLE: &str = include_str!("html/report.css");
const SCRIPT: &str = include_str!("html/report.js");

pub fn render(e: &Emit) -> String {
    page_html(&Page::new(e))
}

/// `kivi-lint simulate --format html`: each run as a unit with one timeline, drawn as a
/// counterexample's. Excerpts only from files under `repo_root`.
pub fn render_simulations(
    runs: &[super::simulation::Simulation],
    repo_root: Option<&std::path::Path>,
    exit_code: u8,
) -> String {
    let mut sources = Sources::within(repo_root);
    let units = runs.iter().map(|run| simulation_view(run, &mut sources)).collect();
    page_html(&Page {
        version: env!("CARGO_PKG_VERSION").to_string(),
        exit_code,
        exit_description: super::exit::describe(exit_code),
        units,
        diagnostics: Vec::new(),
    })
}

fn simulation_view(run: &super::simulation::Simulation, sources: &mut Sources) -> UnitView {
    use super::simulation::SimulationOutcome;
    let (check, level, verdict, headline) = match &run.outcome {
        SimulationOutcome::Violated { check } => (
            check.clone(),
            "error",
            "violated",
            format!("seed {}: the run violates {check}", run.seed),
        ),
        SimulationOutcome::Settled => (
            "simulation".to_string(),
            "note",
            "verified",
            format!("seed {}: the cluster settles, no check fails on the way", run.seed),
        ),
        SimulationOutcome::NotRun { why } => (
            "simulation".to_string(),
            "note",
            "inconclusive",
            format!("seed {}: no run ({why})", run.seed),
        ),
    };
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in &run.nodes {
        groups
            .entry(n.zone.clone().unwrap_or_else(|| n.pool.clone()))
            .or_default()
            .push(n.name.clone());
    }
    let absent = run.nodes.iter().filter(|n| n.absent).map(|n| n.name.clone()).collect();
    let states = states(&run.steps, absent);
    UnitView {
        name: run.unit.clone(),
        scope: format!("simulated on {}", run.cluster),
        verdicts: vec![(check.clone(), verdict, run.checks.join(", "))],
        findings: vec![FindingView {
            check,
            level,
            headline,
            at: None,
            excerpt: Vec::new(),
            suppressed: None,
            fix: None,
            topology: Some(run.cluster.clone()),
            timeline: "Simulated run",
            groups: groups.into_iter().collect(),
            steps: step_views(&run.steps, states, sources),
        }],
    }
}

fn page_html(page: &Page) -> String {
    let data = serde_json::to_string(page).expect("serialisable");
    // `</script>` (and `<!--`) inside the JSON would end the script element early.
    let data = data.replace('<', "\\u003c").replace('>', "\\u003e");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
         <title>kivi-lint report</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>kivi-lint report</h1><p id=\"summary\"></p></header>\n<main id=\"units\"></main>\n\
         <noscript>This report needs JavaScript to draw the timelines; the JSON report has the same data.</noscript>\n\
         <script type=\"application/json\" id=\"report-data\">{data}</script>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

#[derive(Serialize)]
struct Page {
    version: String,
    exit_code: u8,
    exit_description: &'static str,
    units: Vec<UnitView>,
    diagnostics: Vec<String>,
}

#[derive(Serialize)]
struct UnitView {
    name: String,
    scope: String,
    verdicts: Vec<(String, &'static str, String)>,
    findings: Vec<FindingView>,
}

#[derive(Serialize)]
struct FindingView {
    check: String,
    level: &'static str,
    headline: String,
    at: Option<String>,
    /// The manifest lines around the causing field.
    excerpt: Vec<(u32, String)>,
    suppressed: Option<String>,
    /// A verified fix, with where to make it.
    fix: Option<String>,
    topology: Option<String>,
    /// What the timeline is: a counterexample, or a simulated run.
    timeline: &'static str,
    /// Node names, grouped: `(zone or pool, [node])`.
    groups: Vec<(String, Vec<String>)>,
    steps: Vec<StepView>,
}

#[derive(Serialize)]
struct StepView {
    actor: String,
    message: String,
    at: Option<String>,
    /// The manifest lines around the step's field, `(line number, text)`.
    excerpt: Vec<(u32, String)>,
    /// Cluster state after the step.
    state: State,
    /// The pod or node the step changed.
    changed: Option<String>,
}

#[derive(Clone, Default, Serialize)]
struct State {
    /// `(pod, node or "", phase)`, in creation order.
    pods: Vec<(String, String, &'static str)>,
    down: Vec<String>,
    cordoned: Vec<String>,
}

impl Page {
    fn new(e: &Emit) -> Page {
        let r = e.report;
        let mut sources = Sources::within(e.repo_root.as_deref());
        let findings = violation::findings(r);
        let units = r
            .units
            .iter()
            .filter_map(|u| {
                let v = u.verification.as_ref()?;
                Some(UnitView {
                    name: u.name.clone(),
                    scope: u.scope.clone(),
                    verdicts: v
                        .results
                        .iter()
                        .map(|c| {
                            let verdict = match c.verdict {
                                VerdictKind::Violated if c.suppression.is_some() => "suppressed",
                                VerdictKind::Violated => "violated",
                                VerdictKind::Verified => "verified",
                                VerdictKind::Inconclusive if c.partial => "partial",
                                VerdictKind::Inconclusive => "inconclusive",
                                VerdictKind::NotChecked => "not-checked",
                            };
                            let detail = match c.verdict {
                                VerdictKind::Inconclusive => Some(c.inconclusive_text()),
                                _ => c.reason.clone(),
                            }
                            .or_else(|| c.topology.as_ref().map(|t| t.description.clone()))
                            .unwrap_or_default();
                            (c.check.clone(), verdict, detail)
                        })
                        .collect(),
                    findings: findings
                        .iter()
                        .filter(|f| std::ptr::eq(f.unit, u))
                        .map(|f| finding_view(f, &mut sources))
                        .collect(),
                })
            })
            .collect();
        Page {
            version: r.tool.version.clone(),
            exit_code: e.exit_code,
            exit_description: super::exit::describe(e.exit_code),
            units,
            diagnostics: r
                .diagnostics
                .iter()
                .filter(|d| d.severity != crate::diagnostics::Severity::Info)
                .map(|d| {
                    format!(
                        "{}:{}:{}: {}: {}",
                        d.file,
                        d.line,
                        d.column,
                        d.severity.label(),
                        d.message
                    )
                })
                .collect(),
        }
    }
}

fn finding_view(f: &Finding, sources: &mut Sources) -> FindingView {
    let o = f.outcome;
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(t) = &o.topology {
        for n in &t.node_list {
            groups
                .entry(n.zone.clone().unwrap_or_else(|| n.pool.clone()))
                .or_default()
                .push(n.name.clone());
        }
    }
    // Nodes the cluster autoscaler may add are shown down until it adds them.
    let absent: Vec<String> = o
        .topology
        .iter()
        .flat_map(|t| t.node_list.iter().filter(|n| n.absent).map(|n| n.name.clone()))
        .collect();
    let states = states(&o.steps, absent);
    FindingView {
        check: o.check.clone(),
        level: if f.suppressed() { "suppressed" } else { o.level.as_str() },
        headline: f.headline(),
        at: f.region().map(|r| format!("{}:{}", r.file, r.line)),
        excerpt: f.region().map(|r| sources.excerpt(r.file, r.line)).unwrap_or_default(),
        suppressed: o.suppression.as_ref().map(|s| s.justification.clone()),
        fix: o
            .fix
            .as_ref()
            .map(|f| format!("{} ({}:{}; verified on {})", f.summary, f.file, f.line, f.verified())),
        topology: o.topology.as_ref().map(|t| t.description.clone()),
        timeline: "Counterexample",
        groups: groups.into_iter().collect(),
        steps: step_views(&o.steps, states, sources),
    }
}

/// Each step with the manifest lines around its field and the cluster state after it.
fn step_views(steps: &[StepOut], states: Vec<(State, Option<String>)>, sources: &mut Sources) -> Vec<StepView> {
    steps
        .iter()
        .zip(states)
        .map(|(s, (state, changed))| StepView {
            actor: s.actor.clone(),
            message: s.message.clone(),
            at: s.file.as_ref().zip(s.line).map(|(f, l)| format!("{f}:{l}")),
            excerpt: s
                .file
                .as_ref()
                .zip(s.line)
                .map(|(file, line)| sources.excerpt(file, line))
                .unwrap_or_default(),
            state,
            changed,
        })
        .collect()
}

/// The cluster state after each step, and what the step changed.
fn states(steps: &[StepOut], down: Vec<String>) -> Vec<(State, Option<String>)> {
    let mut state = State {
        down,
        ..State::default()
    };
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let mut changed = None;
        if let Some(effect) = &s.effect {
            let pod = effect.pod.clone().unwrap_or_default();
            let node = effect.node.clone().unwrap_or_default();
            let place = |state: &mut State, node: &str, phase| match state.pods.iter_mut().find(|p| p.0 == pod) {
                Some(p) => {
                    if !node.is_empty() {
                        p.1 = node.to_string();
                    }
                    p.2 = phase;
                }
                None => state.pods.push((pod.clone(), node.to_string(), phase)),
            };
            let set = |list: &mut Vec<String>, on: bool| {
                list.retain(|n| *n != node);
                if on {
                    list.push(node.clone());
                    list.sort();
                }
            };
            match effect.change {
                Change::PodCreated => place(&mut state, "", "pending"),
                Change::PodBound => place(&mut state, &node, "bound"),
                Change::PodUnschedulable => place(&mut state, "", "unschedulable"),
                Change::PodStarted => place(&mut state, &node, "running"),
                Change::PodRemoved => state.pods.retain(|p| p.0 != pod),
                Change::NodeDown => set(&mut state.down, true),
                Change::NodeUp => set(&mut state.down, false),
                Change::NodeCordoned => set(&mut state.cordoned, true),
                Change::NodeUncordoned => set(&mut state.cordoned, false),
            }
            changed = Some(if pod.is_empty() { node } else { pod });
        }
        out.push((state.clone(), changed));
    }
    out
}

/// Manifest files read for excerpts, once each: only files inside the repository. A merged
/// report's file names come from the shards' JSON, not from a scan, so a name that leads
/// elsewhere (an absolute path, `..`, a symlink out) gives no excerpt and is never read.
struct Sources {
    /// The repository root, canonical; `None`: nothing is read.
    root: Option<std::path::PathBuf>,
    files: BTreeMap<String, Option<Vec<String>>>,
}

impl Sources {
    fn within(root: Option<&std::path::Path>) -> Sources {
        Sources {
            root: root.and_then(|r| r.canonicalize().ok()),
            files: BTreeMap::new(),
        }
    }

    /// Two lines either side of `line` (rendered files that no longer exist give nothing).
    fn excerpt(&mut self, file: &str, line: u32) -> Vec<(u32, String)> {
        let root = self.root.as_deref();
        let lines = self.files.entry(file.to_string()).or_insert_with(|| {
            let path = std::path::Path::new(file).canonicalize().ok()?;
            if !root.is_some_and(|r| path.starts_with(r)) || !path.is_file() {
                return None;
            }
            // Decoded as the manifest reader decoded it (a BOM, UTF-16), so lines match spans.
            crate::source::read_text(&path)
                .ok()
                .map(|t| t.lines().map(String::from).collect())
        });
        let Some(lines) = lines else { return Vec::new() };
        let first = line.saturating_sub(2).max(1);
        (first..=line + 2)
            .filter_map(|n| lines.get(n as usize - 1).map(|t| (n, t.clone())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Effect;

    fn step(change: Change, pod: Option<&str>, node: Option<&str>) -> StepOut {
        StepOut {
            actor: "a".into(),
            message: "m".into(),
            file: None,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            effect: Some(Effect {
                change,
                pod: pod.map(String::from),
                node: node.map(String::from),
            }),
        }
    }

    #[test]
    fn pods_appear_move_go_pending_and_disappear() {
        let steps = [
            step(Change::PodCreated, Some("web-1"), None),
            step(Change::PodBound, Some("web-1"), Some("n-1")),
            step(Change::PodStarted, Some("web-1"), Some("n-1")),
            step(Change::NodeDown, None, Some("n-1")),
            step(Change::PodRemoved, Some("web-1"), Some("n-1")),
            step(Change::PodCreated, Some("web-2"), None),
            step(Change::PodUnschedulable, Some("web-2"), None),
        ];
        let s = states(&steps, Vec::new());
        assert_eq!(s[0].0.pods, vec![("web-1".into(), "".into(), "pending")]);
        assert_eq!(s[2].0.pods, vec![("web-1".into(), "n-1".into(), "running")]);
        assert_eq!(s[3].0.down, vec!["n-1".to_string()]);
        assert!(s[4].0.pods.is_empty());
        assert_eq!(s[6].0.pods, vec![("web-2".into(), "".into(), "unschedulable")]);
        assert_eq!(s[6].1.as_deref(), Some("web-2"));
    }
}

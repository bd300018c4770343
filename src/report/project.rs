//! The report as a projection of an analysis and its results: every format reads the
//! [`Report`] built here, and nothing in it decides a verdict (the policy's judgements come in
//! the [`Context`]).

use crate::analysis::Analysis;
use crate::diagnostics::Severity;
use crate::discover::ScopeKind;
use crate::findings::Verdict;

use super::document::*;

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
                UnitOut {
                    id: u.id.clone(),
                    name: u.name.clone(),
                    scope: scope_path,
                    scope_kind,
                    members: u
                        .members
                        .iter()
                        .map(|m| {
                            let o = &a.objects[m.object];
                            MemberOut {
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
                        .map(|e| EdgeOut {
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

/// A counterexample's step as reports tell it, located in `a`'s files.
pub(crate) fn step_out(a: &Analysis, s: &crate::findings::Step) -> StepOut {
    let at = Place::of(a, s.location);
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
        description: r.facts(t).description,
        node_list: r
            .facts(t)
            .nodes
            .into_iter()
            .map(|n| NodeOut {
                name: n.name,
                pool: n.pool,
                zone: n.zone,
                absent: n.absent,
            })
            .collect(),
    };
    let mut results = Vec::new();
    for (i, c) in r.results.iter().enumerate() {
        let baseline_state = c.baseline.map(|existing| {
            if existing {
                BaselineState::Unchanged
            } else {
                BaselineState::New
            }
        });
        // A result nothing judged (none is asked for in a report of units only) shows its
        // check's level.
        let judgement = context
            .judgements
            .get(&(r.unit, i))
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
                apart_from: f.apart_from,
                file: a.sources.path(f.location.file).display().to_string(),
                line: f.location.start.line,
                column: f.location.start.column,
                replacement: super::fix_edit::replacement(a, f),
            }),
            suppression: judgement.suppressed.map(|s| suppression(a, s)),
            caused_by: None,
            also_breaks: Vec::new(),
            steps: steps.iter().map(|s| step_out(a, s)).collect(),
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
        unmodelled_events: r.unmodelled_events.iter().map(|e| e.to_string()).collect(),
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

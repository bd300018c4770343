//! SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: one run, the whole rule
//! catalogue, one result per violation with the causing field as its region, the other objects
//! as related locations and the counterexample as a code flow.

use serde_json::{Value, json};

use super::Emit;
use super::document::{SuppressionKind, VerdictKind};
use super::violation::{self, Finding, Region};
use crate::checks::{CHECKS, Level};
use crate::diagnostics::Severity;

pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// GitHub keeps the first 5,000 results of a run; more only make the upload bigger.
const MAX_RESULTS: usize = 5000;
/// GitHub shows 1,000 thread-flow locations per result.
const MAX_FLOW_STEPS: usize = 1000;

/// The rule of input errors (a manifest or config kivi-lint cannot read as Kubernetes
/// would): after the checks, so the checks' rule indices stay theirs.
const INPUT_ERROR: &str = "input-error";

pub fn render(e: &Emit) -> String {
    // Input errors are results too: code scanning shows results, not notifications, and a
    // run that exits 2 must say why where the pull request is reviewed.
    let inputs = e
        .report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| input_result(e, d));
    let mut results: Vec<Value> = inputs
        .chain(violation::findings(e.report).iter().map(|f| result(e, f)))
        .collect();
    // Keep the most severe when there are too many: errors, then warnings, then notes.
    // What is left out is said as a notification of the run: a result needs a rule and a
    // place, and this has neither.
    let mut omitted = 0;
    if results.len() > MAX_RESULTS {
        omitted = results.len() - MAX_RESULTS;
        results.sort_by_key(|r| level_rank(r["level"].as_str().unwrap_or("note")));
        results.truncate(MAX_RESULTS);
    }
    let mut notifications: Vec<Value> = e
        .report
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .map(|d| {
            json!({
                "level": match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    _ => "note",
                },
                "message": {"text": d.message},
                "locations": [location(e, &Region { file: &d.file, line: d.line, column: d.column, end_line: d.end_line.unwrap_or(d.line), end_column: d.end_column.unwrap_or(d.column + 1) }, None)],
            })
        })
        .collect();
    if omitted > 0 {
        notifications.push(json!({
            "level": "warning",
            "message": {"text": format!(
                "{} omitted: code scanning takes at most {MAX_RESULTS} results a run, the most severe kept; `--format json=FILE` lists them all",
                super::plural(omitted, "more finding")
            )},
        }));
    }
    for f in violation::inconclusive(e.report) {
        let why = f.outcome.inconclusive_text();
        notifications.push(json!({
            "level": if f.outcome.engine_error { "error" } else if f.outcome.partial { "note" } else { "warning" },
            "message": {"text": format!("{} of unit {} is {}: {why}", f.check(), f.unit.name, if f.outcome.partial { "partial" } else { "inconclusive" })},
            "associatedRule": {"id": f.check(), "index": rule_index(f.check())},
        }));
    }
    let mut invocation = json!({
        "executionSuccessful": e.exit_code != super::exit::INPUT_ERROR,
        "exitCode": e.exit_code,
        "exitCodeDescription": super::exit::describe(e.exit_code),
        "toolExecutionNotifications": notifications,
    });
    let mut base_ids = json!({});
    if let Some(dir) = &e.working_directory {
        invocation["workingDirectory"] = json!({"uri": dir});
        base_ids[SRCROOT] = json!({"uri": dir});
    }
    let log = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kivi-lint",
                "semanticVersion": e.report.tool.version,
                "version": e.report.tool.version,
                "informationUri": crate::checks::INFORMATION_URI,
                "rules": CHECKS.iter().map(rule).chain([input_rule()]).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": base_ids,
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": results,
        }],
    });
    let mut out = serde_json::to_string_pretty(&log).expect("SARIF is serialisable");
    out.push('\n');
    out
}

fn level_rank(level: &str) -> u8 {
    match level {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    }
}

fn rule_index(check: &str) -> usize {
    CHECKS.iter().position(|c| c.id.as_str() == check).unwrap_or(0)
}

fn level(l: Level) -> &'static str {
    l.as_str()
}

fn rule(c: &crate::checks::Check) -> Value {
    json!({
        "id": c.id,
        "name": c.rule_name(),
        "shortDescription": {"text": c.summary},
        "fullDescription": {"text": c.definition},
        "help": {"text": c.help_text(), "markdown": c.help_markdown()},
        "helpUri": c.help_uri(),
        "defaultConfiguration": {"level": level(c.level)},
        "properties": {
            "tags": c.tags,
            "precision": "high",
            "problem.severity": match c.level {
                Level::Error => "error",
                Level::Warning => "warning",
                Level::Note => "recommendation",
            },
        },
    })
}

fn input_rule() -> Value {
    json!({
        "id": INPUT_ERROR,
        "name": "InputError",
        "shortDescription": {"text": "A manifest or the config cannot be read as Kubernetes reads it"},
        "fullDescription": {"text": "kivi-lint could not read this input (invalid YAML, a field Kubernetes rejects, a renderer that failed, a path it may not read): what it defines is not verified until it is fixed."},
        "help": {"text": "Fix the input at the location shown; the message says what Kubernetes expects.", "markdown": "Fix the input at the location shown; the message says what Kubernetes expects."},
        "helpUri": format!("{}#input-errors", crate::checks::docs_uri("docs/usage.md")),
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["input"], "precision": "very-high", "problem.severity": "error"},
    })
}

/// An input error as a result of the `input-error` rule, at its line.
fn input_result(e: &Emit, d: &super::document::Diagnostic) -> Value {
    let fingerprint = violation::input_fingerprint(&e.uri(&d.file), &d.message);
    let region = Region {
        file: &d.file,
        line: d.line.max(1),
        column: d.column.max(1),
        end_line: d.line.max(1),
        end_column: d.column.max(1) + 1,
    };
    json!({
        "ruleId": INPUT_ERROR,
        "ruleIndex": CHECKS.len(),
        "level": "error",
        "message": {"text": d.message},
        "partialFingerprints": {"kiviLintInput/v1": fingerprint},
        "locations": [location(e, &region, None)],
    })
}

/// The base of every repository-relative URI: code scanning resolves it against its checkout,
/// other viewers against `originalUriBaseIds`.
const SRCROOT: &str = "%SRCROOT%";

/// An artifact location: repository-relative against `%SRCROOT%`, else absolute.
fn artifact(e: &Emit, file: &str) -> Value {
    let uri = e.uri(file);
    if uri.starts_with("file:") {
        json!({ "uri": uri })
    } else {
        json!({ "uri": uri, "uriBaseId": SRCROOT })
    }
}

/// A physical location with a repository-relative URI.
fn location(e: &Emit, r: &Region, message: Option<String>) -> Value {
    let mut l = json!({
        "physicalLocation": {
            "artifactLocation": artifact(e, r.file),
            "region": {
                "startLine": r.line,
                "startColumn": r.column,
                "endLine": r.end_line,
                "endColumn": r.end_column,
            },
        },
    });
    if let Some(text) = message {
        l["message"] = json!({ "text": text });
    }
    l
}

fn result(e: &Emit, f: &Finding) -> Value {
    let o = f.outcome;
    let mut result = json!({
        "ruleId": f.check(),
        "ruleIndex": rule_index(f.check()),
        "level": level(f.level()),
        "message": {"text": f.message()},
        "partialFingerprints": {"kiviLintFinding/v1": f.fingerprint(&e.uri(&f.unit.scope))},
        "properties": {"unit": f.unit.name, "unitId": f.unit.id, "scope": f.unit.scope},
    });
    let primary = f.primary();
    result["locations"] = match f.region() {
        Some(r) => json!([location(e, &r, primary.map(|p| p.id()))]),
        None => json!([]),
    };
    // The checks the same cause also breaks, at their fields, then the unit's other objects.
    let consequences = f.consequences();
    let related: Vec<Value> = consequences
        .iter()
        .filter_map(|c| {
            c.region()
                .map(|r| location(e, &r, Some(format!("also breaks {}", c.check()))))
        })
        .chain(f.related().map(|m| location(e, &Region::of_member(m), Some(m.id()))))
        .enumerate()
        .map(|(i, mut l)| {
            l["id"] = json!(i + 1);
            l
        })
        .collect();
    if !related.is_empty() {
        result["relatedLocations"] = json!(related);
    }
    if let Some(t) = &o.topology {
        result["properties"]["topology"] = json!(t.description);
    }
    if let Some(fix) = &o.fix {
        result["properties"]["fix"] = json!({
            "summary": fix.summary,
            "artifactLocation": artifact(e, &fix.file),
            "line": fix.line,
            "verifiedOn": fix.verified_on,
        });
        if fix.apart_from > 0 {
            result["properties"]["fix"]["apartFrom"] = json!(fix.apart_from);
        }
        // A fix that is one value's new text is an edit code scanning and editors can apply.
        if let Some(r) = &fix.replacement {
            result["fixes"] = json!([{
                "description": {"text": format!("{} (verified on {})", fix.summary, fix.verified())},
                "artifactChanges": [{
                    "artifactLocation": artifact(e, &fix.file),
                    "replacements": [{
                        "deletedRegion": {
                            "startLine": fix.line,
                            "startColumn": fix.column,
                            "endLine": fix.line,
                            "endColumn": r.end_column,
                        },
                        "insertedContent": {"text": r.text},
                    }],
                }],
            }]);
        }
    }
    let steps: Vec<Value> = o
        .steps
        .iter()
        .take(MAX_FLOW_STEPS)
        .enumerate()
        .map(|(i, s)| {
            let text = format!("[{}] {}: {}", i + 1, s.actor, s.message);
            let location = match Region::of_step(s) {
                Some(r) => location(e, &r, Some(text)),
                None => json!({"message": {"text": text}}),
            };
            json!({"location": location, "executionOrder": i + 1, "kinds": [s.actor]})
        })
        .collect();
    if !steps.is_empty() {
        result["codeFlows"] = json!([{
            "message": {"text": format!("Counterexample found by SPIN{}", o.topology.as_ref().map(|t| format!(" on {}", t.description)).unwrap_or_default())},
            "threadFlows": [{"locations": steps}],
        }]);
    }
    if let Some(s) = &o.suppression {
        let mut suppression = json!({
            "kind": match s.kind {
                SuppressionKind::InSource => "inSource",
                SuppressionKind::External => "external",
            },
            "status": "accepted",
            "justification": s.justification,
        });
        let at = Region {
            file: &s.file,
            line: s.line,
            column: s.column,
            end_line: s.line,
            end_column: s.column + 1,
        };
        suppression["location"] = location(e, &at, None);
        result["suppressions"] = json!([suppression]);
    }
    if let Some(b) = o.baseline_state {
        result["baselineState"] = json!(match b {
            super::document::BaselineState::New => "new",
            super::document::BaselineState::Unchanged => "unchanged",
        });
    }
    debug_assert_eq!(o.verdict, VerdictKind::Violated);
    result
}

//! GitLab Code Quality: a JSON array of issues for the merge request widget. Input errors and
//! warnings are issues too (`input-error`, `input-warning`); suppressed findings stay in, as
//! `info`, so nothing disappears silently.

use serde_json::{Value, json};

use super::Emit;
use super::violation;
use crate::checks::Level;
use crate::diagnostics::Severity;

pub fn render(e: &Emit) -> String {
    // Input errors and warnings first: a run that exits 2 still shows why in the widget.
    let inputs = e.report.diagnostics.iter().filter_map(|d| {
        let severity = match d.severity {
            Severity::Error => "major",
            Severity::Warning => "minor",
            Severity::Note | Severity::Info => return None,
        };
        let path = e.path(&d.file);
        Some(json!({
            "description": d.message,
            "check_name": format!("input-{}", d.severity.label()),
            "fingerprint": violation::input_fingerprint(&path, &d.message),
            "severity": severity,
            "location": {"path": path, "lines": {"begin": d.line.max(1)}},
        }))
    });
    let issues: Vec<Value> = inputs
        .chain(violation::findings(e.report).iter().map(|f| {
            let severity = match (f.suppressed(), f.level()) {
                (true, _) => "info",
                (false, Level::Error) => "major",
                (false, Level::Warning) => "minor",
                (false, Level::Note) => "info",
            };
            let mut description = match &f.outcome.suppression {
                Some(s) => format!("[suppressed: {}] {}", s.justification, f.headline()),
                None => f.headline(),
            };
            if let Some(fix) = f.fix_line() {
                description.push(' ');
                description.push_str(&fix);
            }
            let (path, line) = f.region().map_or((String::new(), 1), |r| (e.path(r.file), r.line));
            json!({
                "description": description,
                "check_name": f.check(),
                "fingerprint": f.fingerprint(&e.uri(&f.unit.scope)),
                "severity": severity,
                "location": {"path": path, "lines": {"begin": line}},
            })
        }))
        .collect();
    let mut out = serde_json::to_string_pretty(&issues).expect("serialisable");
    out.push('\n');
    out
}

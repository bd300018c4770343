//! GitLab Code Quality: a JSON array of issues for the merge request widget. Suppressed
//! findings stay in, as `info`, so nothing disappears silently.

use serde_json::{Value, json};

use super::Emit;
use super::finding;
use crate::checks::Level;

pub fn render(e: &Emit) -> String {
    let issues: Vec<Value> = finding::findings(e.report)
        .iter()
        .map(|f| {
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
            let (path, line) = f.region().map_or((String::new(), 1), |r| (e.uri(r.file), r.line));
            json!({
                "description": description,
                "check_name": f.check(),
                "fingerprint": f.fingerprint(),
                "severity": severity,
                "location": {"path": path, "lines": {"begin": line}},
            })
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&issues).expect("serialisable");
    out.push('\n');
    out
}

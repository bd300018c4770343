//! JSON report: the report document serialised as it is (schema in docs/reports.md, versioned by
//! `schemaVersion`).

use super::document::Report;

pub fn render(report: &Report) -> String {
    let mut out = serde_json::to_string_pretty(report).expect("the report serialises");
    out.push('\n');
    out
}

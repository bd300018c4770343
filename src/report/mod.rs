//! Reports: one emitter per output format. Stdout carries only the chosen report.

pub mod human;
pub mod json;
pub mod merge;
pub mod model;

pub use model::Report;

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for people (default).
    Human,
    /// The documented JSON schema (see README, "JSON output").
    Json,
}

/// The report of a verification run in `format`.
pub fn results(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Json => json::render(report),
        Format::Human => human::results(report, color),
    }
}

/// The report of `kivi-lint units` (no verification) in `format`.
pub fn units(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Json => json::render(report),
        Format::Human => human::units(report, color),
    }
}

/// The check registry, for `kivi-lint rules`.
pub fn rules(format: Format) -> String {
    use crate::checks::CHECKS;
    match format {
        Format::Json => {
            let list: Vec<serde_json::Value> = CHECKS
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id,
                        "aliases": c.aliases,
                        "level": c.level.as_str(),
                        "summary": c.summary,
                        "definition": c.definition,
                        "params": c.params.iter().map(|p| serde_json::json!({"name": p.name, "description": p.description, "default": p.default})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let mut out = serde_json::to_string_pretty(&list).expect("serialisable");
            out.push('\n');
            out
        }
        Format::Human => {
            let mut out = String::new();
            for c in CHECKS {
                out.push_str(&format!("{} ({})\n  {}\n", c.id, c.level.as_str(), c.definition));
                if !c.aliases.is_empty() {
                    out.push_str(&format!("  aliases: {}\n", c.aliases.join(", ")));
                }
                for p in c.params {
                    let default = p.default.map(|d| format!(" (default {d})")).unwrap_or_default();
                    out.push_str(&format!("  param {}: {}{}\n", p.name, p.description, default));
                }
                out.push('\n');
            }
            out
        }
    }
}

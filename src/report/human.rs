//! Human-readable reports.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use crate::analysis::Analysis;
use crate::diagnostics::Severity;
use crate::units::Role;

fn paint(color: bool, style: Style, text: &str) -> String {
    if color {
        format!("{}{}{}", style.render(), text, style.render_reset())
    } else {
        text.to_string()
    }
}

/// One block per unit: members with their locations, node pools, checks, and why the
/// workloads were grouped.
pub fn units(a: &Analysis, color: bool) -> String {
    let mut out = String::new();
    let bold = Style::new().bold();
    let dim = Style::new().dimmed();
    let cyan = Style::new().fg_color(Some(AnsiColor::Cyan.into()));
    for u in &a.units {
        let scope = a
            .scopes
            .get(u.scope)
            .map(|s| format!("{:?} {}", s.kind, s.path.display()).to_lowercase())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} {}  {}",
            paint(color, bold, "unit"),
            paint(color, cyan, &u.id),
            paint(color, bold, &u.name)
        );
        let _ = writeln!(out, "  scope: {scope}");
        let width = u
            .members
            .iter()
            .map(|m| a.objects[m.object].id.to_string().len())
            .max()
            .unwrap_or(0);
        for m in &u.members {
            let o = &a.objects[m.object];
            let role = match m.role {
                Role::Workload => "",
                Role::Autoscaler => " (autoscaler)",
                Role::DisruptionBudget => " (disruption budget)",
                Role::DeschedulerPolicy => " (descheduler policy)",
            };
            let at = format!("{}:{}", a.sources.path(o.span.file).display(), o.span.start.line);
            let _ = writeln!(out, "  {:width$}  {}{}", o.id.to_string(), paint(color, dim, &at), role);
        }
        let pools = if u.node_pools.is_empty() {
            "none".to_string()
        } else {
            u.node_pools.join(", ")
        };
        let _ = writeln!(out, "  node pools: {pools}");
        let _ = writeln!(out, "  checks: {}", u.checks.join(", "));
        for e in &u.edges {
            let _ = writeln!(
                out,
                "  grouped: {} ↔ {}: {}",
                a.objects[e.from].id, a.objects[e.to].id, e.reason
            );
        }
        out.push('\n');
    }
    out.push_str(&summary(a));
    out
}

/// `N units from M objects in F files (R renders); E errors, W warnings`.
pub fn summary(a: &Analysis) -> String {
    let objects = a.objects.iter().filter(|o| !o.embedded).count();
    let workloads = a.objects.iter().filter(|o| o.workload().is_some()).count();
    format!(
        "{} units, {} workloads, {} objects from {} files and {} renders; {} errors, {} warnings\n",
        a.units.len(),
        workloads,
        objects,
        a.files,
        a.renders,
        a.diagnostics.count(Severity::Error),
        a.diagnostics.count(Severity::Warning)
    )
}

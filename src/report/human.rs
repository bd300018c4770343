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

/// Verdict of every check of every unit, with counterexamples.
pub fn results(a: &Analysis, results: &[crate::scaling::UnitResult], color: bool) -> String {
    use crate::findings::Verdict;
    let mut out = String::new();
    let bold = Style::new().bold();
    let red = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
    let green = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let yellow = Style::new().fg_color(Some(AnsiColor::Yellow.into()));
    let dim = Style::new().dimmed();
    let (mut violated, mut verified, mut inconclusive) = (0, 0, 0);
    let unmodelled = crate::scaling::unmodelled_events(&a.config);
    for r in results {
        let u = &a.units[r.unit];
        let scope = a
            .scopes
            .get(u.scope)
            .map(|s| s.path.display().to_string())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} {}  {}  {}",
            paint(color, bold, "unit"),
            u.id,
            paint(color, bold, &u.name),
            paint(color, dim, &scope)
        );
        if r.search.planned > 0 {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    color,
                    dim,
                    &format!(
                        "{} of {} topologies explored; search bounded by {}",
                        r.search.explored,
                        r.search.planned,
                        if r.search.bound.is_empty() {
                            "one topology"
                        } else {
                            &r.search.bound
                        }
                    )
                )
            );
        }
        for c in &r.results {
            match &c.verdict {
                Verdict::Violated { steps, location } => {
                    violated += 1;
                    let at = location
                        .map(|s| format!("  {}", crate::diagnostics::location_string(&a.sources, s)))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "  {} {}{}",
                        paint(color, red, "✗ violated"),
                        paint(color, bold, c.check),
                        at
                    );
                    if let Some(t) = &c.topology {
                        let _ = writeln!(out, "    at {}", crate::scaling::describe(a, r.unit, t));
                    }
                    for (i, step) in steps.iter().enumerate() {
                        let at = step
                            .location
                            .map(|s| format!(" — {}:{}", a.sources.path(s.file).display(), s.start.line))
                            .unwrap_or_default();
                        let _ = writeln!(
                            out,
                            "    [{}] {}: {}{}",
                            i + 1,
                            step.actor,
                            step.message,
                            paint(color, dim, &at)
                        );
                    }
                }
                Verdict::Verified => {
                    verified += 1;
                    let up_to = c
                        .topology
                        .as_ref()
                        .map(|t| {
                            paint(
                                color,
                                dim,
                                &format!(" up to {}", crate::scaling::describe(a, r.unit, t)),
                            )
                        })
                        .unwrap_or_default();
                    let _ = writeln!(out, "  {} {}{}", paint(color, green, "✓ verified"), c.check, up_to);
                }
                Verdict::Inconclusive(why) => {
                    inconclusive += 1;
                    let at = c
                        .topology
                        .as_ref()
                        .map(|t| format!(" (at {})", crate::scaling::describe(a, r.unit, t)))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "  {} {}: {}{}",
                        paint(color, yellow, "? inconclusive"),
                        c.check,
                        why,
                        at
                    );
                }
                Verdict::NotChecked => {
                    let _ = writeln!(
                        out,
                        "  {} {}: not modelled yet",
                        paint(color, dim, "- not checked"),
                        c.check
                    );
                }
            }
        }
        if !unmodelled.is_empty() {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    color,
                    yellow,
                    &format!(
                        "note: events not modelled yet, so not explored: {}",
                        unmodelled.join(", ")
                    )
                )
            );
        }
        let t = &r.timings;
        if r.cached {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    color,
                    dim,
                    "verdicts from the result cache (--no-cache to verify again)"
                )
            );
        } else {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    color,
                    dim,
                    &format!(
                        "{:.2} s, {} states (generate {:.0?}, spin -a {:.0?}, compile {:.0?}, pan {:.0?}, replay {:.0?})",
                        r.elapsed.as_secs_f64(),
                        r.states,
                        r.generate,
                        t.spin,
                        t.compile,
                        t.pan,
                        t.replay
                    )
                )
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} units checked: {violated} violated, {verified} verified, {inconclusive} inconclusive",
        results.len()
    );
    out
}

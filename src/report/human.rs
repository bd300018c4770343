//! Human-readable reports.

use crate::diagnostics::printable;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use super::document::{
    BaselineState, CheckOutcome, MemberOut, NotVerified, Report, RunStats, StepOut, UnitOut, VerdictKind,
};
use super::plural;
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
pub fn units(r: &Report, color: bool) -> String {
    let mut out = String::new();
    let bold = Style::new().bold();
    let dim = Style::new().dimmed();
    let cyan = Style::new().fg_color(Some(AnsiColor::Cyan.into()));
    for u in &r.units {
        let kind = u.scope_kind.name();
        let _ = writeln!(
            out,
            "{} {}  {}",
            paint(color, bold, "unit"),
            paint(color, cyan, &u.id),
            paint(color, bold, &u.name)
        );
        let _ = writeln!(out, "  scope: {kind} {}", u.scope);
        let width = u.members.iter().map(|m| m.id().len()).max().unwrap_or(0);
        for m in &u.members {
            let role = match m.role {
                Role::Workload => "",
                Role::Autoscaler => " (autoscaler)",
                Role::DisruptionBudget => " (disruption budget)",
                Role::DeschedulerPolicy => " (descheduler policy)",
                Role::Service => " (service)",
                Role::Storage => " (storage)",
            };
            let at = format!("{}:{}", printable(&m.file), m.line);
            let _ = writeln!(out, "  {:width$}  {}{}", m.id(), paint(color, dim, &at), role);
        }
        let pools = if u.node_pools.is_empty() {
            "none".to_string()
        } else {
            u.node_pools.join(", ")
        };
        let _ = writeln!(out, "  node pools: {pools}");
        let _ = writeln!(out, "  checks: {}", u.checks.join(", "));
        for e in &u.edges {
            let _ = writeln!(out, "  grouped: {} ↔ {}: {}", e.from, e.to, e.reason);
        }
        out.push('\n');
    }
    out.push_str(&summary(r));
    out
}

/// `N units from M objects in F files (R renders); E errors, W warnings`.
pub fn summary(r: &Report) -> String {
    let s = &r.summary;
    format!(
        "{}, {}, {} from {} and {}; {}, {}\n",
        plural(s.units, "unit"),
        plural(s.workloads, "workload"),
        plural(s.objects, "object"),
        plural(s.files, "file"),
        plural(s.renders, "render"),
        plural(s.errors, "error"),
        plural(s.warnings, "warning")
    ) + &r.coverage_line()
        + "\n"
}

/// Verdict of every check of every verified unit, with counterexamples.
pub fn results(r: &Report, color: bool, full_traces: bool) -> String {
    let mut out = String::new();
    let bold = Style::new().bold();
    let green = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let yellow = Style::new().fg_color(Some(AnsiColor::Yellow.into()));
    let dim = Style::new().dimmed();
    let (mut violated, mut verified, mut inconclusive, mut checked) = (0, 0, 0, 0);
    let mut partial = 0;
    for u in &r.units {
        let Some(v) = &u.verification else { continue };
        checked += 1;
        let _ = writeln!(
            out,
            "{} {}  {}  {}",
            paint(color, bold, "unit"),
            u.id,
            paint(color, bold, &u.name),
            paint(color, dim, &u.scope)
        );
        if v.search.planned > 0 {
            let bound = if v.search.bound.is_empty() {
                "one topology"
            } else {
                &v.search.bound
            };
            let mut line = format!(
                "{} of {} topologies explored; search bounded by {bound}",
                v.search.explored, v.search.planned
            );
            if !v.search.fault_model.is_empty() {
                line.push_str("; fault model: ");
                line.push_str(&v.search.fault_model);
            }
            let _ = writeln!(out, "  {}", paint(color, dim, &line));
        }
        // The first screen of a unit: one block per independent problem (what happens, where,
        // the verified fix, what else it breaks), each said once; then every other check; then
        // the counterexamples.
        // Counted as every report counts them: one per independent problem, not one per check
        // it breaks, and suppressed ones apart.
        violated += v
            .results
            .iter()
            .filter(|c| c.verdict == VerdictKind::Violated && c.caused_by.is_none() && c.suppression.is_none())
            .count();
        let mut roots: Vec<&CheckOutcome> = v
            .results
            .iter()
            .filter(|c| c.verdict == VerdictKind::Violated && c.caused_by.is_none())
            .collect();
        roots.sort_by_key(|c| c.level != crate::checks::Level::Error);
        for c in &roots {
            out.push_str(&problem(r, u, c, color, full_traces));
        }
        for c in &v.results {
            match c.verdict {
                VerdictKind::Violated => {}
                VerdictKind::Verified => {
                    verified += 1;
                    let up_to = c
                        .topology
                        .as_ref()
                        .map(|t| paint(color, dim, &format!(" up to {}", t.description)))
                        .unwrap_or_default();
                    let _ = writeln!(out, "  {} {}{}", paint(color, green, "✓ verified"), c.check, up_to);
                }
                VerdictKind::Inconclusive => {
                    let label = if c.partial {
                        partial += 1;
                        "◐ partial"
                    } else {
                        inconclusive += 1;
                        "? inconclusive"
                    };
                    let _ = writeln!(
                        out,
                        "  {} {}: {}",
                        paint(color, yellow, label),
                        c.check,
                        c.inconclusive_text()
                    );
                }
                VerdictKind::NotChecked => {
                    let _ = writeln!(
                        out,
                        "  {} {}: not modelled yet",
                        paint(color, dim, "- not checked"),
                        c.check
                    );
                }
            }
        }
        for n in &u.not_checked {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                paint(color, yellow, "- not checked"),
                n.check,
                n.reason
            );
        }
        for note in &v.notes {
            let note = format!("note: {}", printable(note));
            let _ = writeln!(out, "  {}", paint(color, yellow, &note));
        }
        if !v.unmodelled_events.is_empty() {
            let note = format!(
                "note: events not modelled yet, so not explored: {}",
                v.unmodelled_events.join(", ")
            );
            let _ = writeln!(out, "  {}", paint(color, yellow, &note));
        }
        for c in roots.iter().filter(|c| c.suppression.is_none() || full_traces) {
            out.push_str(&trace(u, c, color, full_traces));
        }
        out.push_str(&run_line(v, color));
        out.push('\n');
    }
    out.push_str(&totals(
        r,
        Totals {
            checked,
            violated,
            verified,
            inconclusive,
            partial,
        },
    ));
    out
}

/// How a unit's verdicts were reached: its runs' time and states, or where they came from.
fn run_line(v: &super::document::Verification, color: bool) -> String {
    let mut out = String::new();
    let dim = Style::new().dimmed();
    match &v.run {
        Some(RunStats {
            shares_runs_with: Some(unit),
            ..
        }) => {
            let line = format!("the same models and inputs as unit {unit}: verdicts from its runs");
            let _ = writeln!(out, "  {}", paint(color, dim, &line));
        }
        Some(run) if run.cached => {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    color,
                    dim,
                    "verdicts from the result cache (--no-cache to verify again)"
                )
            );
        }
        Some(run) => {
            let t = &run.engine;
            let line = format!(
                "{:.2} s, {} states (generate {:.0?}, spin -a {:.0?}, compile {:.0?}, pan {:.0?}, replay {:.0?})",
                run.elapsed.as_secs_f64(),
                v.states,
                run.generate,
                t.spin,
                t.compile,
                t.pan,
                t.replay
            );
            let _ = writeln!(out, "  {}", paint(color, dim, &line));
        }
        None => {
            let _ = writeln!(out, "  {}", paint(color, dim, &format!("{} states", v.states)));
        }
    }
    out
}

/// The units checked and their verdicts, counted as every report counts them.
struct Totals {
    checked: usize,
    violated: usize,
    verified: usize,
    inconclusive: usize,
    partial: usize,
}

/// The last lines: the verdicts counted, the coverage, PR mode's and a shard's share.
fn totals(r: &Report, t: Totals) -> String {
    let Totals {
        checked,
        violated,
        verified,
        inconclusive,
        partial,
    } = t;
    let mut out = String::new();
    let suppressed = r
        .outcomes()
        .filter(|(_, c)| c.verdict == VerdictKind::Violated && c.caused_by.is_none() && c.suppression.is_some())
        .count();
    let suppressed = if suppressed > 0 {
        format!(" ({suppressed} more suppressed)")
    } else {
        String::new()
    };
    if r.summary.objects == 0 {
        let mut paths: Vec<String> = Vec::new();
        for s in &r.scopes {
            let p = printable(&s.path).into_owned();
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
        let _ = writeln!(out, "no Kubernetes objects found under {}", paths.join(", "));
    } else {
        let partial = if partial > 0 {
            format!(", {partial} partial")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{} checked: {violated} violated{suppressed}, {verified} verified{partial}, {inconclusive} inconclusive",
            plural(checked, "unit")
        );
    }
    let _ = writeln!(out, "{}", r.coverage_line());
    if let Some(c) = &r.changed_since {
        let mut line = format!(
            "changed since {}: {} unchanged, not verified again",
            c.revision,
            plural(c.unchanged_units, "unit")
        );
        if c.existing_findings_hidden > 0 {
            line.push_str(&format!(
                "; {} also on {} not shown (--all-findings shows them)",
                plural(c.existing_findings_hidden, "violation"),
                c.revision
            ));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(s) = &r.shard {
        let _ = writeln!(
            out,
            "shard {} of {}: {} units left to the other shards (`kivi-lint merge` joins the JSON reports)",
            s.index,
            s.count,
            r.units
                .iter()
                .filter(|u| u.not_verified == Some(NotVerified::OtherShard))
                .count()
        );
    }
    out
}

fn base_name(r: &Report) -> &str {
    r.changed_since
        .as_ref()
        .map_or("the base revision", |c| c.revision.as_str())
}

/// The pod a step is about, if any.
fn pod_of(s: &StepOut) -> Option<&str> {
    s.effect.as_ref().and_then(|e| e.pod.as_deref())
}

/// The steps of a counterexample that concern the finding: every step but those about the
/// pods of workloads the finding does not involve. Involved are the finding's workload and
/// the workloads of pods that steps with a cause (a located step other than a creation) or
/// the last steps name.
/// One independent problem of a unit: the headline, the causing field, the verified fix (its
/// own, else the one verified for what it also breaks) and the checks it also breaks.
fn problem(r: &Report, u: &UnitOut, c: &CheckOutcome, color: bool, full_traces: bool) -> String {
    let mut out = String::new();
    let bold = Style::new().bold();
    let red = Style::new().bold().fg_color(Some(AnsiColor::Red.into()));
    let green = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let yellow = Style::new().fg_color(Some(AnsiColor::Yellow.into()));
    let dim = Style::new().dimmed();
    let finding = super::violation::Finding { unit: u, outcome: c };
    let existing = match c.baseline_state {
        Some(BaselineState::Unchanged) => paint(color, dim, &format!(" (also on {})", base_name(r))),
        _ => String::new(),
    };
    let (mark, suppressed) = match &c.suppression {
        Some(s) => (
            paint(color, dim, "✗"),
            paint(
                color,
                yellow,
                &format!(" (suppressed: {})", printable(&s.justification)),
            ),
        ),
        None => (paint(color, red, "✗"), String::new()),
    };
    let _ = writeln!(
        out,
        "  {mark} {} {}: {}{existing}{suppressed}",
        c.level.as_str(),
        paint(color, bold, &c.check),
        finding.headline()
    );
    if let (Some(f), Some(l), Some(col)) = (&c.file, c.line, c.column) {
        let _ = writeln!(out, "    --> {}:{l}:{col}", printable(f));
    }
    let consequences: Vec<&CheckOutcome> = finding.consequences().iter().map(|f| f.outcome).collect();
    // An acknowledged finding is one line and its place: its fix and trace are for `-v`
    // (and every other format).
    if c.suppression.is_some() && !full_traces {
        let what = if c.fix.is_some() { "its fix and its" } else { "its" };
        let line = format!("{what} {} steps are left out (-v shows them)", c.steps.len());
        let _ = writeln!(out, "    {}", paint(color, dim, &line));
        return out;
    }
    let fix_line = |f: &super::document::FixOut, verified: String| {
        format!(
            "    {} {} ({verified}){}\n",
            paint(color, green, "fix:"),
            f.summary,
            paint(color, dim, &format!(" — {}:{}", printable(&f.file), f.line))
        )
    };
    match &c.fix {
        Some(f) => {
            let also: Vec<&str> = consequences
                .iter()
                .filter(|o| {
                    o.fix
                        .as_ref()
                        .is_some_and(|g| (&g.summary, &g.file, g.line) == (&f.summary, &f.file, f.line))
                })
                .map(|o| o.check.as_str())
                .collect();
            let verified = if f.apart_from > 0 {
                format!("verified on {}: this violation ends with it", f.verified())
            } else if also.is_empty() {
                format!("verified on {}: the check holds with it", f.verified_on)
            } else {
                format!("verified for {}, {} on {}", c.check, also.join(", "), f.verified_on)
            };
            out.push_str(&fix_line(f, verified));
        }
        None => {
            // The fixes verified for what the same cause breaks, each named with the checks
            // it was verified for, each printed once.
            let mut borrowed: Vec<(&super::document::FixOut, Vec<&str>)> = Vec::new();
            for o in &consequences {
                let Some(f) = &o.fix else { continue };
                match borrowed
                    .iter_mut()
                    .find(|(g, _)| (&g.summary, &g.file, g.line) == (&f.summary, &f.file, f.line))
                {
                    Some((_, checks)) => checks.push(&o.check),
                    None => borrowed.push((f, vec![&o.check])),
                }
            }
            for (f, checks) in borrowed {
                out.push_str(&fix_line(
                    f,
                    format!("verified for {} on {}", checks.join(", "), f.verified_on),
                ));
            }
        }
    }
    if !consequences.is_empty() {
        let named: Vec<String> = consequences
            .iter()
            .map(|o| {
                let at = match (&o.file, o.line) {
                    (Some(f), Some(l)) if (Some(f), Some(l)) != (c.file.as_ref(), c.line) => {
                        format!(" ({}:{l})", printable(f))
                    }
                    _ => String::new(),
                };
                let level = if o.level == c.level {
                    String::new()
                } else {
                    format!(" ({})", o.level.as_str())
                };
                format!("{}{level}{at}", o.check)
            })
            .collect();
        let _ = writeln!(out, "    also breaks {}", named.join(", "));
    }
    out
}

/// A problem's counterexample: the steps of the workloads involved (every step with `-v`).
fn trace(u: &UnitOut, c: &CheckOutcome, color: bool, full_traces: bool) -> String {
    let mut out = String::new();
    let dim = Style::new().dimmed();
    let finding = super::violation::Finding { unit: u, outcome: c };
    let shown = if full_traces {
        (0..c.steps.len()).collect()
    } else {
        involved_steps(u, c, finding.workload())
    };
    // `--all`: a check's several violations, each trail named by where it points.
    let several = u.verification.as_ref().is_some_and(|v| {
        v.results
            .iter()
            .filter(|o| o.check == c.check && o.verdict == VerdictKind::Violated)
            .count()
            > 1
    });
    match (&c.file, c.line) {
        (Some(f), Some(l)) if several => {
            let _ = writeln!(out, "  {} counterexample ({}:{l}):", c.check, printable(f));
        }
        _ => {
            let _ = writeln!(out, "  {} counterexample:", c.check);
        }
    }
    for &i in &shown {
        let step = &c.steps[i];
        let at = match (&step.file, step.line) {
            (Some(f), Some(l)) => format!(" — {}:{l}", printable(f)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "    [{}] {}: {}{}",
            i + 1,
            step.actor,
            printable(&step.message),
            paint(color, dim, &at)
        );
    }
    if shown.len() < c.steps.len() {
        let hidden = c.steps.len() - shown.len();
        let line = format!(
            "… {} of other workloads' pods left out (-v shows every step)",
            super::plural(hidden, "step")
        );
        let _ = writeln!(out, "    {}", paint(color, dim, &line));
    }
    out
}

fn involved_steps(u: &UnitOut, c: &CheckOutcome, primary: Option<&MemberOut>) -> Vec<usize> {
    let workloads: Vec<&str> = u
        .members
        .iter()
        .filter(|m| m.role == Role::Workload)
        .map(|m| m.name.as_str())
        .collect();
    // The workload a pod belongs to: the longest workload name it extends (`cart-redis-0` is
    // cart-redis's, not cart's).
    let owner = |pod: &str| -> Option<&str> {
        workloads
            .iter()
            .copied()
            .filter(|w| pod.strip_prefix(*w).is_some_and(|rest| rest.starts_with('-')))
            .max_by_key(|w| w.len())
    };
    let mut involved: Vec<&str> = primary.map(|m| m.name.as_str()).into_iter().collect();
    let tail = c.steps.len().saturating_sub(3);
    for (i, s) in c.steps.iter().enumerate() {
        let created = s
            .effect
            .as_ref()
            .is_some_and(|e| e.change == crate::findings::Change::PodCreated);
        if (s.file.is_some() && !created) || i >= tail {
            involved.extend(pod_of(s).and_then(owner));
            for w in &workloads {
                if s.message.contains(&format!(" {w}-")) || s.message.contains(&format!("/{w} ")) {
                    involved.push(w);
                }
            }
        }
    }
    (0..c.steps.len())
        .filter(|&i| match pod_of(&c.steps[i]).and_then(owner) {
            Some(w) => involved.contains(&w),
            None => true,
        })
        .collect()
}

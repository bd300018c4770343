//! Markdown for GitHub job summaries and merge request comments: a table of findings, then
//! each counterexample as a Mermaid sequence diagram (controllers and events as actors, the
//! steps as messages).

use std::fmt::Write as _;

use super::document::VerdictKind;
use super::violation::{self, Finding};
use super::{Emit, plural};

/// GitHub accepts about 1 MiB of job summary per step; stay well under it.
const MAX_BYTES: usize = 900 * 1024;

/// Input errors listed in the summary, at most.
const MAX_ERRORS: usize = 50;

pub fn render(e: &Emit) -> String {
    let r = e.report;
    let findings = violation::findings(r);
    let mut out = String::new();
    let count = |k: VerdictKind| r.outcomes().filter(|(_, c)| c.verdict == k).count();
    let suppressed = findings.iter().filter(|f| f.suppressed()).count();
    let partial = r.outcomes().filter(|(_, c)| c.partial).count();
    let _ = writeln!(out, "## kivi-lint {}\n", r.tool.version);
    let _ = writeln!(
        out,
        "{} checked: **{} violated**{}, {} verified{}, {} inconclusive. {} input errors, {} warnings. Exit code {} ({}).\n",
        plural(r.units.iter().filter(|u| u.verification.is_some()).count(), "unit"),
        findings.len() - suppressed,
        if suppressed > 0 {
            format!(" ({suppressed} more suppressed)")
        } else {
            String::new()
        },
        count(VerdictKind::Verified),
        match partial {
            0 => String::new(),
            n => format!(", {n} partial"),
        },
        count(VerdictKind::Inconclusive) - partial,
        r.summary.errors,
        r.summary.warnings,
        e.exit_code,
        super::exit::describe(e.exit_code),
    );
    let _ = writeln!(out, "{}.\n", sentence(&r.coverage_line()));
    // Input errors are why a run exits 2: said here, not only in the log (at most 50).
    let errors: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::diagnostics::Severity::Error)
        .collect();
    if !errors.is_empty() {
        out.push_str("Input errors:\n\n");
        for d in errors.iter().take(MAX_ERRORS) {
            let _ = writeln!(
                out,
                "- ❌ `{}:{}:{}` {}",
                code_path(&e.path(&d.file)),
                d.line,
                d.column,
                text(&d.message)
            );
        }
        if errors.len() > MAX_ERRORS {
            let _ = writeln!(out, "- … {} more (the log has them all)", errors.len() - MAX_ERRORS);
        }
        out.push('\n');
    }
    if findings.is_empty() {
        out.push_str("No findings.\n");
    } else {
        out.push_str("| | check | unit | object | where |\n|---|---|---|---|---|\n");
        for f in &findings {
            let mark = match (f.suppressed(), f.level()) {
                (true, _) => "⚪ suppressed",
                (false, crate::checks::Level::Error) => "🔴 error",
                (false, crate::checks::Level::Warning) => "🟠 warning",
                (false, crate::checks::Level::Note) => "🔵 note",
            };
            let object = f.primary().map(|m| m.id()).unwrap_or_default();
            let at = f
                .region()
                .map(|r| format!("`{}:{}`", code_cell(&e.path(r.file)), r.line))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "| {mark} | [`{}`]({}) | {} | `{}` | {at} |",
                f.check(),
                crate::checks::find(f.check()).map(|c| c.help_uri()).unwrap_or_default(),
                cell(&f.unit.name),
                code_cell(&object)
            );
        }
        out.push('\n');
    }
    for f in violation::inconclusive(r) {
        let _ = writeln!(
            out,
            "- {} `{}` of unit {} is {}: {}",
            if f.outcome.partial { "◐" } else { "❔" },
            f.check(),
            cell(&f.unit.name),
            if f.outcome.partial { "partial" } else { "inconclusive" },
            sentence(&f.outcome.inconclusive_text())
        );
    }
    let mut omitted = 0;
    for f in &findings {
        let section = details(e, f);
        if out.len() + section.len() > MAX_BYTES {
            omitted += 1;
            continue;
        }
        out.push_str(&section);
    }
    if omitted > 0 {
        let _ = writeln!(
            out,
            "\n{omitted} more counterexamples left out to stay within the summary size limit; see the JSON or HTML report."
        );
    }
    out
}

fn details(e: &Emit, f: &Finding) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n### `{}` in {}\n", f.check(), cell(&f.unit.name));
    let _ = writeln!(out, "{}\n", sentence(&f.headline()));
    if let Some(r) = f.region() {
        let _ = writeln!(
            out,
            "Caused by `{}:{}:{}`.\n",
            code_path(&e.path(r.file)),
            r.line,
            r.column
        );
    }
    let consequences = f.consequences();
    if !consequences.is_empty() {
        let checks: Vec<String> = consequences.iter().map(|c| format!("`{}`", c.check())).collect();
        let _ = writeln!(out, "The same cause also breaks {}.\n", checks.join(", "));
    }
    // Its own fix, else the one verified for what it also breaks.
    let fix = f
        .outcome
        .fix
        .as_ref()
        .or_else(|| consequences.iter().find_map(|c| c.outcome.fix.as_ref()));
    if let Some(fix) = fix {
        let _ = writeln!(
            out,
            "**Fix** (verified by kivi-lint on {}): {} (`{}:{}`).\n",
            fix.verified(),
            sentence(&fix.summary),
            code_path(&e.path(&fix.file)),
            fix.line
        );
    }
    if let Some(s) = &f.outcome.suppression {
        let _ = writeln!(out, "Suppressed: {}\n", text(&s.justification));
    }
    out.push_str(&mermaid(f));
    out
}

/// The counterexample as a sequence diagram: each step is a message from its actor to the
/// cluster.
pub fn mermaid(f: &Finding) -> String {
    let mut actors: Vec<&str> = Vec::new();
    for s in &f.outcome.steps {
        if !actors.contains(&s.actor.as_str()) {
            actors.push(&s.actor);
        }
    }
    let mut out = String::from("```mermaid\nsequenceDiagram\n");
    for (i, a) in actors.iter().enumerate() {
        let _ = writeln!(out, "    participant a{i} as {}", mermaid_text(a));
    }
    out.push_str("    participant cluster as cluster\n");
    for (n, s) in f.outcome.steps.iter().enumerate() {
        let i = actors.iter().position(|a| *a == s.actor).unwrap_or(0);
        let at = match (&s.file, s.line) {
            (Some(file), Some(line)) => format!(" ({file}:{line})"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "    a{i}->>cluster: {}. {}{}",
            n + 1,
            mermaid_text(&s.message),
            mermaid_text(&at)
        );
    }
    out.push_str("```\n");
    out
}

/// Mermaid ends a statement at `;` and reads `#…;` as an entity: write both as entities.
/// Backticks (which would close the code fence) and angle brackets (HTML) are entities too,
/// and control characters are spaces.
fn mermaid_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '`' => out.push_str("#96;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text from the input in Markdown (a table cell, a sentence): every character Markdown or
/// HTML would act on is escaped, and line breaks and control characters are spaces, so it
/// cannot open a code fence, a link, raw HTML or a new table row.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::diagnostics::printable(s).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// kivi-lint's own sentences (which use `code` for field names) with values from the input
/// in them: HTML and line breaks neutralised, Markdown code spans kept.
fn sentence(s: &str) -> String {
    crate::diagnostics::printable(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A table cell: no pipes or line breaks.
fn cell(s: &str) -> String {
    text(s)
}

/// A table cell's code span: inside one only a backtick (which would end it) and a pipe
/// (which GitHub's tables read first) act.
/// A file name in a code span outside a table: a backtick cannot end the span.
fn code_path(s: &str) -> String {
    crate::diagnostics::printable(s).replace('`', "'")
}

fn code_cell(s: &str) -> String {
    crate::diagnostics::printable(s).replace('`', "'").replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mermaid_text_escapes_statement_ends() {
        assert_eq!(mermaid_text("a; b #1"), "a#59; b #35;1");
        assert_eq!(mermaid_text("```\n<img>"), "#96;#96;#96; #60;img#62;");
    }

    #[test]
    fn input_text_cannot_break_out() {
        assert_eq!(text("a|b\n```<script>"), "a\\|b\\\\n\\`\\`\\`&lt;script&gt;");
        assert_eq!(sentence("`maxSkew` <b>"), "`maxSkew` &lt;b&gt;");
    }
}

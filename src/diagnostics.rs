//! Located diagnostics about the input: `path:line:col: message`, with the offending line.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use serde::Serialize;

use crate::source::{SourceMap, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    /// What kivi-lint assumed or left out, shown without `-v`: not a problem in the input.
    Note,
    Info,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Info => "info",
        }
    }
}

/// A problem with the input, located in a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
            help: None,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn note(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Note,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn info(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Info,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Diagnostics of a run, in the order they were found.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::error(span, message));
    }

    pub fn warning(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::warning(span, message));
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|d| d.severity == severity).count()
    }

    /// Sort by file path, position and message so that output does not depend on discovery order.
    pub fn sort(&mut self, sources: &SourceMap) {
        self.items.sort_by(|a, b| {
            (sources.path(a.span.file), a.span.start, a.severity, &a.message).cmp(&(
                sources.path(b.span.file),
                b.span.start,
                b.severity,
                &b.message,
            ))
        });
        self.items.dedup();
    }
}

/// `path:line:col` of a span.
pub fn location_string(sources: &SourceMap, span: Span) -> String {
    format!(
        "{}:{}:{}",
        sources.path(span.file).display(),
        span.start.line,
        span.start.column
    )
}

/// Render a diagnostic the way rustc does: header, location, the source line and a caret.
pub fn render(d: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let paint = |style: Style, text: &str| -> String {
        if color {
            format!("{}{}{}", style.render(), text, style.render_reset())
        } else {
            text.to_string()
        }
    };
    let level_style = match d.severity {
        Severity::Error => Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
        Severity::Warning => Style::new().bold().fg_color(Some(AnsiColor::Yellow.into())),
        Severity::Note | Severity::Info => Style::new().bold().fg_color(Some(AnsiColor::Cyan.into())),
    };
    let gutter_style = Style::new().bold().fg_color(Some(AnsiColor::Blue.into()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}{}",
        paint(level_style, d.severity.label()),
        paint(Style::new().bold(), &format!(": {}", d.message))
    );
    let line_no = d.span.start.line;
    let width = line_no.to_string().len();
    let pad = " ".repeat(width);
    let _ = writeln!(
        out,
        "{pad}{} {}",
        paint(gutter_style, "-->"),
        location_string(sources, d.span)
    );
    if let Some(text) = sources.line_text(d.span.file, line_no) {
        let shown: String = text.chars().take(200).collect();
        let col = d.span.start.column.max(1) as usize - 1;
        let len = if d.span.end.line == line_no && d.span.end.column > d.span.start.column {
            (d.span.end.column - d.span.start.column) as usize
        } else {
            1
        };
        let len = len.min(shown.chars().count().saturating_sub(col).max(1));
        let _ = writeln!(out, "{pad} {}", paint(gutter_style, "|"));
        let _ = writeln!(
            out,
            "{} {} {}",
            paint(gutter_style, &line_no.to_string()),
            paint(gutter_style, "|"),
            shown
        );
        let _ = writeln!(
            out,
            "{pad} {} {}{}",
            paint(gutter_style, "|"),
            " ".repeat(col.min(200)),
            paint(level_style, &"^".repeat(len))
        );
    }
    if let Some(help) = &d.help {
        let _ = writeln!(
            out,
            "{pad} {} {}",
            paint(gutter_style, "="),
            paint(Style::new().bold(), &format!("help: {help}"))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FileId, Location};

    #[test]
    fn renders_location_line_and_caret() {
        let mut sources = SourceMap::default();
        let file = sources.add("deploy/web.yaml", "spec:\n  replicas: three\n");
        let span = Span {
            file,
            start: Location { line: 2, column: 13 },
            end: Location { line: 2, column: 18 },
        };
        let d = Diagnostic::error(span, "expected an integer").with_help("write a number");
        let text = render(&d, &sources, false);
        assert_eq!(
            text,
            "error: expected an integer\n --> deploy/web.yaml:2:13\n  |\n2 |   replicas: three\n  |             ^^^^^\n  = help: write a number\n"
        );
        assert_eq!(location_string(&sources, span), "deploy/web.yaml:2:13");
        let _ = FileId(0);
    }
}

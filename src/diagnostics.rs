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
        printable(&sources.path(span.file).display().to_string()),
        span.start.line,
        span.start.column
    )
}

/// `1 file`, `2 files`: a count in words, the same in every message and report.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `s` with its first letter in upper case: a sentence from a message.
pub fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// Text from the input (a file name, a value, a source line) as it may reach a terminal, a
/// log or a CI runner: every control character (line breaks, ESC, C1) and every bidirectional
/// override escaped, so it can neither start a line of its own (a `::error::` workflow
/// command) nor drive the terminal (cursor moves, OSC titles and links). Tabs stay.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
    };
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.chars()
            .flat_map(|c| {
                if unsafe_char(c) {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect(),
    )
}

/// A whole text for a terminal whose own line breaks and colours are kivi-lint's: control
/// characters other than line breaks escaped, and escape sequences other than SGR colours
/// (`ESC [ digits ; m`) too. A defence in depth behind `printable` on each inserted value.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}' {
            let rest = &text[i + 1..];
            let sgr = rest.strip_prefix('[').and_then(|r| {
                let n = r.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
                (r.as_bytes().get(n) == Some(&b'm')).then_some(n + 2)
            });
            if let Some(len) = sgr {
                out.push(c);
                out.push_str(&rest[..len]);
                for _ in 0..len {
                    chars.next();
                }
                continue;
            }
        }
        if c == '\n' || c == '\t' {
            out.push(c);
        } else {
            out.push_str(&printable(c.encode_utf8(&mut [0; 4])));
        }
    }
    out
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
        paint(Style::new().bold(), &format!(": {}", printable(&d.message)))
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
        let raw: String = text.chars().take(200).collect();
        let raw_col = (d.span.start.column.max(1) as usize - 1).min(raw.chars().count());
        // The caret's column in the escaped line: what precedes it, escaped.
        let col = printable(&raw.chars().take(raw_col).collect::<String>())
            .chars()
            .count();
        let shown = printable(&raw).into_owned();
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
            paint(Style::new().bold(), &format!("help: {}", printable(help)))
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

    /// A file name or line that would start a workflow command or drive the terminal is
    /// escaped: every line of the rendering starts with kivi-lint's own text.
    #[test]
    fn control_characters_never_reach_the_terminal() {
        let mut sources = SourceMap::default();
        let file = sources.add("a\n::error::pwn.yaml", "x: \u{1b}]0;title\u{7}\u{1b}[2J y\n");
        let span = Span {
            file,
            start: Location { line: 1, column: 19 },
            end: Location { line: 1, column: 20 },
        };
        let d = Diagnostic::error(span, "bad\r\n::warning::x").with_help("\u{202e}evil");
        let text = render(&d, &sources, false);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{202e}'),
            "{text}"
        );
        assert!(text.lines().all(|l| !l.starts_with("::")), "{text}");
        assert!(text.contains("a\\n::error::pwn.yaml:1:19"), "{text}");
        // The caret stays under the character it points at.
        let line = text.lines().find(|l| l.starts_with("1 |")).unwrap();
        let caret = text.lines().find(|l| l.contains('^')).unwrap();
        assert_eq!(&line[caret.find('^').unwrap()..][..1], "y", "{text}");
        assert_eq!(
            terminal_safe("\u{1b}[1mok\u{1b}[0m\u{1b}]8;;x\u{7}\n"),
            "\u{1b}[1mok\u{1b}[0m\\u{1b}]8;;x\\u{7}\n"
        );
    }
}

#[cfg(test)]
mod words_tests {
    use super::{capitalized, plural};

    #[test]
    fn counts_and_sentences_read_as_words() {
        assert_eq!(capitalized("no feasible node for web-3"), "No feasible node for web-3");
        assert_eq!(capitalized(""), "");
        assert_eq!(plural(1, "node"), "1 node");
        assert_eq!(plural(3, "manifest file"), "3 manifest files");
    }
}

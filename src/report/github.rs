//! GitHub Actions workflow commands: the human report in a collapsed group, then one
//! annotation per finding on the causing line. GitHub shows at most 10 annotations of each
//! level per step, so the rest are counted in a final notice rather than dropped unsaid.

use super::Emit;
use super::violation::{self, Finding};
use crate::checks::Level;
use crate::diagnostics::Severity;

/// Annotations per level that GitHub shows for one step.
const PER_LEVEL: usize = 10;

pub fn render(e: &Emit) -> String {
    let mut out = String::new();
    out.push_str("::group::kivi-lint report\n");
    // The human report holds text from the input (file names, messages): GitHub must not read
    // any of its lines as a workflow command. `stop-commands` pauses them until the token: a
    // hash of the JSON report, which holds every input text the body shows (so no input can
    // contain its own hash) and, unlike the body's timings, is the same on every run.
    let body = crate::diagnostics::terminal_safe(&super::human::results(e.report, false, e.full_traces));
    let mut seed = super::json::render(e.report);
    let token = loop {
        let token = blake3::hash(seed.as_bytes()).to_hex()[..32].to_string();
        if !body.contains(&token) {
            break token;
        }
        seed.push('\n');
    };
    out.push_str(&format!("::stop-commands::{token}\n"));
    out.push_str(&body);
    out.push_str(&format!("::{token}::\n"));
    out.push_str("::endgroup::\n");
    let mut annotations: Vec<Annotation> = Vec::new();
    for d in &e.report.diagnostics {
        let level = match d.severity {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
            Severity::Note => Level::Note,
            Severity::Info => continue,
        };
        annotations.push(Annotation {
            level,
            file: Some(e.path(&d.file)),
            line: d.line,
            end_line: d.end_line.unwrap_or(d.line),
            column: d.column,
            end_column: d.end_column.filter(|_| d.end_line.is_none_or(|l| l == d.line)),
            title: "kivi-lint input".into(),
            message: d.message.clone(),
        });
    }
    for f in violation::findings(e.report).iter().filter(|f| !f.suppressed()) {
        annotations.push(annotation(e, f));
    }
    for f in violation::inconclusive(e.report) {
        annotations.push(Annotation {
            level: if f.outcome.engine_error {
                Level::Error
            } else if f.outcome.partial {
                Level::Note
            } else {
                Level::Warning
            },
            file: None,
            line: 0,
            end_line: 0,
            column: 0,
            end_column: None,
            title: format!(
                "kivi-lint {} {}",
                f.check(),
                if f.outcome.partial { "partial" } else { "inconclusive" }
            ),
            message: format!(
                "{} of unit {} could not be decided: {}",
                f.check(),
                f.unit.name,
                f.outcome.inconclusive_text()
            ),
        });
    }
    // Most severe first; the order within a level is the report's.
    annotations.sort_by_key(|a| a.level);
    let mut shown = [0usize; 3];
    let mut left = 0;
    for a in &annotations {
        let n = &mut shown[a.level as usize];
        if *n == PER_LEVEL {
            left += 1;
            continue;
        }
        *n += 1;
        out.push_str(&a.command());
        out.push('\n');
    }
    if left > 0 {
        out.push_str(&format!(
            "::notice title=kivi-lint::{left} more findings not annotated (GitHub shows {PER_LEVEL} per level); see the report above, the job summary or code scanning\n"
        ));
    }
    out
}

struct Annotation {
    level: Level,
    file: Option<String>,
    line: u32,
    end_line: u32,
    column: u32,
    end_column: Option<u32>,
    title: String,
    message: String,
}

impl Annotation {
    fn command(&self) -> String {
        let command = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "notice",
        };
        let mut props = Vec::new();
        if let Some(file) = &self.file {
            props.push(format!("file={}", property(file)));
            props.push(format!("line={}", self.line));
            props.push(format!("endLine={}", self.end_line));
            props.push(format!("col={}", self.column));
            if let Some(end) = self.end_column {
                props.push(format!("endColumn={end}"));
            }
        }
        props.push(format!("title={}", property(&self.title)));
        format!("::{command} {}::{}", props.join(","), data(&self.message))
    }
}

fn annotation(e: &Emit, f: &Finding) -> Annotation {
    let region = f.region();
    let mut message = f.headline();
    if let Some(fix) = f.fix_line() {
        message.push('\n');
        message.push_str(&fix);
    }
    for (i, s) in f.outcome.steps.iter().enumerate() {
        message.push_str(&format!("\n[{}] {}: {}", i + 1, s.actor, s.message));
    }
    Annotation {
        level: f.level(),
        file: region.map(|r| e.path(r.file)),
        line: region.map_or(1, |r| r.line),
        end_line: region.map_or(1, |r| r.end_line),
        column: region.map_or(1, |r| r.column),
        end_column: region.map(|r| r.end_column),
        title: f.check().to_string(),
        message,
    }
}

/// Escaping of a command's message.
pub fn data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escaping of a property value: as data, plus `:` and `,`.
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}

//! A verified fix as an edit of its file, for the formats that can apply one (SARIF `fixes`).

use super::document::ReplacementOut;
use crate::analysis::Analysis;
use crate::findings::Fix;

/// The replacement of the fix `f`, only where the text at its location is the value itself (a
/// plain or quoted scalar on one line): never a template expression (a Helm template's
/// `{{ .Values.x }}`), whose value comes from elsewhere.
pub fn replacement(a: &Analysis, f: &Fix) -> Option<ReplacementOut> {
    let text = f.replacement.as_ref()?;
    let at = f.location;
    if at.start.line != at.end.line || at.end.column <= at.start.column {
        return None;
    }
    let line = a.sources.line_text(at.file, at.start.line)?;
    let old: String = line
        .chars()
        .skip(at.start.column as usize - 1)
        .take((at.end.column - at.start.column) as usize)
        .collect();
    Some(ReplacementOut {
        end_column: at.end.column,
        text: rewritten(&old, text)?,
    })
}

/// `new` in the place of `old`, quoted as `old` is; `None` unless `old` is a plain scalar.
fn rewritten(old: &str, new: &str) -> Option<String> {
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
    let quoted = |q: char| old.strip_prefix(q).and_then(|o| o.strip_suffix(q)).is_some_and(plain);
    if plain(old) {
        Some(new.to_string())
    } else if quoted('"') {
        Some(format!("\"{new}\""))
    } else if quoted('\'') {
        Some(format!("'{new}'"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::rewritten;

    #[test]
    fn only_a_plain_or_quoted_scalar_is_rewritten() {
        assert_eq!(
            rewritten("DoNotSchedule", "ScheduleAnyway").as_deref(),
            Some("ScheduleAnyway")
        );
        assert_eq!(rewritten("\"1\"", "2").as_deref(), Some("\"2\""));
        assert_eq!(rewritten("'500m'", "300m").as_deref(), Some("'300m'"));
        assert_eq!(rewritten("{{ .Values.skew }}", "2"), None);
        assert_eq!(rewritten("${SKEW}", "2"), None);
        assert_eq!(rewritten("", "2"), None);
    }
}

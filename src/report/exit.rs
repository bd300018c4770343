//! kivi-lint's exit codes and what each means (the binary exits with them; SARIF,
//! Markdown and HTML reports state them).

pub const OK: u8 = 0;
pub const FINDINGS: u8 = 1;
pub const INPUT_ERROR: u8 = 2;
pub const INCONCLUSIVE: u8 = 3;
/// Ctrl-C (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// What an exit code means (SARIF `exitCodeDescription`, summaries).
pub fn describe(code: u8) -> &'static str {
    match code {
        OK => "no unsuppressed finding at or above --fail-on",
        FINDINGS => "findings at or above --fail-on",
        INPUT_ERROR => "input, configuration or model-checker error",
        INCONCLUSIVE => "some checks are inconclusive (a time, memory or depth limit was reached)",
        INTERRUPTED => "interrupted",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_distinct() {
        let codes = [OK, FINDINGS, INPUT_ERROR, INCONCLUSIVE, INTERRUPTED];
        let mut sorted = codes.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len());
    }
}

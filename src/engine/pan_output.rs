//! Reading pan's report. pan exits 0 whether or not it found an error, so the verdict comes
//! from its text: `pan:1:` lines, `errors: N`, and the limit messages.

/// What kind of error pan found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PanError {
    /// `assert(...)` failed; the text of the assertion.
    Assertion(String),
    /// A process blocked outside a valid end state (deadlock).
    InvalidEndState,
    /// A non-progress cycle (`-DNP`, `pan -l`).
    NonProgressCycle,
    /// An acceptance cycle of a never claim (`pan -a`).
    AcceptanceCycle,
    /// A never claim reached its end.
    ClaimReached,
    Other(String),
}

/// Why a search ended without a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    Depth,
    Memory,
    VectorSize,
    /// The search stopped early for another reason pan gave.
    Incomplete(String),
}

/// pan's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statistics {
    pub states_stored: u64,
    pub transitions: u64,
    pub depth_reached: u64,
    pub memory_kib: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PanResult {
    Violated(PanError),
    Verified,
    Limited(Limit),
}

/// The moves of each proctype a model counts with `KIVI_PROFILE` set (`kivi-profile: NAME N`
/// lines, printed as pan exits), as `Scheduler 12, Kubelet 9`; empty without them.
pub fn profile(output: &str) -> String {
    let moves: Vec<String> = output
        .lines()
        .filter_map(|l| l.trim().strip_prefix("kivi-profile: "))
        .map(str::to_string)
        .collect();
    moves.join(", ")
}

/// `-vv`: the moves per proctype of a profiled run (`KIVI_PROFILE`), beside its states.
pub fn log_profile(output: &str, states: u64) {
    let moves = profile(output);
    if !moves.is_empty() {
        tracing::debug!("pan moves per proctype ({states} states): {moves}");
    }
}

/// Parse pan's standard output.
pub fn parse(output: &str) -> (PanResult, Statistics) {
    let mut stats = Statistics::default();
    let mut errors = 0u64;
    let mut violation = None;
    let mut limit = None;
    let mut incomplete = false;
    // pan's completion report: the `State-vector ..., errors: N` line and the stored states.
    // Nothing is verified without both (a pan that printed nothing has verified nothing).
    let mut summary = false;
    let mut stored = false;
    for line in output.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("pan:1: ") {
            violation.get_or_insert_with(|| classify(rest));
        } else if t.contains("reached -DMEMLIM bound") || t.starts_with("pan: out of memory") {
            limit = Some(Limit::Memory);
        } else if t.contains("max search depth too small") {
            limit.get_or_insert(Limit::Depth);
        } else if t.contains("VECTORSZ too small") {
            limit = Some(Limit::VectorSize);
        } else if t.starts_with("Warning: Search not completed") {
            incomplete = true;
        } else if t == "kivi: step budget reached" {
            // the model's own bound (`KIVI_STEP_BUDGET`), set for shortening searches only
            limit.get_or_insert(Limit::Incomplete("the search's step budget ran out".into()));
        } else if let Some(i) = t.find("errors: ") {
            summary |= t.starts_with("State-vector ");
            errors = leading_number(&t[i + 8..]);
            if let Some(d) = t.find("depth reached ") {
                stats.depth_reached = leading_number(&t[d + 14..]);
            }
        } else if t.ends_with("states, stored") || t.contains(" states, stored (") {
            stored = true;
            stats.states_stored = leading_number(t);
        } else if t.contains("transitions (= stored+matched)") {
            stats.transitions = leading_number(t);
        } else if t.ends_with("total actual memory usage") {
            let mb: f64 = t.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0.0);
            stats.memory_kib = (mb * 1024.0) as u64;
        }
    }
    let result = match (errors, violation, limit) {
        (n, Some(v), _) if n > 0 => PanResult::Violated(v),
        (n, None, _) if n > 0 => {
            PanResult::Violated(PanError::Other("pan reported an error without a description".into()))
        }
        (_, _, Some(l)) => PanResult::Limited(l),
        _ if incomplete => PanResult::Limited(Limit::Incomplete(
            "pan reports that the search was not completed".into(),
        )),
        _ if !(summary && stored) => PanResult::Limited(Limit::Incomplete(
            "pan ended without its completion report (no `State-vector ..., errors: 0` and stored states)".into(),
        )),
        _ => PanResult::Verified,
    };
    (result, stats)
}

fn classify(text: &str) -> PanError {
    // Strip pan's "(at depth N)" suffix.
    let text = text.rsplit_once(" (at depth").map_or(text, |(t, _)| t).trim();
    if let Some(rest) = text.strip_prefix("assertion violated") {
        return PanError::Assertion(rest.trim().to_string());
    }
    match text {
        "invalid end state" => PanError::InvalidEndState,
        "non-progress cycle" => PanError::NonProgressCycle,
        "acceptance cycle" => PanError::AcceptanceCycle,
        "end state in claim reached" => PanError::ClaimReached,
        other => PanError::Other(other.to_string()),
    }
}

/// The number a text starts with; pan prints large counts as `1.2e+06`.
fn leading_number(s: &str) -> u64 {
    let token = s.split_whitespace().next().unwrap_or("").trim_end_matches(',');
    token
        .parse::<u64>()
        .unwrap_or_else(|_| token.parse::<f64>().map_or(0, |f| f as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_lists_each_proctypes_moves() {
        let out = "       52 states, stored\nkivi-profile: Scheduler 10\nkivi-profile: Kubelet 9\n";
        assert_eq!(profile(out), "Scheduler 10, Kubelet 9");
        assert_eq!(profile("       52 states, stored\n"), "");
    }

    #[test]
    fn assertion_with_statistics() {
        let out = "pan:1: assertion violated (x!=5) (at depth 16)\npan: wrote m.pml.trail\nWarning: Search not completed\nState-vector 12 byte, depth reached 16, errors: 1\n       17 states, stored\n       17 transitions (= stored+matched)\n  128.195\ttotal actual memory usage\n";
        let (r, s) = parse(out);
        assert_eq!(r, PanResult::Violated(PanError::Assertion("(x!=5)".into())));
        assert_eq!(
            (s.states_stored, s.transitions, s.depth_reached, s.memory_kib),
            (17, 17, 16, 131_271)
        );
    }

    #[test]
    fn limits_and_success() {
        assert_eq!(
            parse("error: max search depth too small\nState-vector 12 byte, depth reached 99, errors: 0\n").0,
            PanResult::Limited(Limit::Depth)
        );
        assert_eq!(parse("pan: reached -DMEMLIM bound\nWarning: Search not completed\nState-vector 0 byte, depth reached 0, errors: 0\n").0, PanResult::Limited(Limit::Memory));
        assert_eq!(
            parse("State-vector 12 byte, depth reached 403, errors: 0\n      404 states, stored\n").0,
            PanResult::Verified
        );
        // A non-progress search counts the states it visited beside the stored ones.
        let (r, s) =
            parse("State-vector 172 byte, depth reached 80, errors: 0\n       41 states, stored (61 visited)\n");
        assert_eq!((r, s.states_stored), (PanResult::Verified, 41));
        assert_eq!(
            parse("pan:1: invalid end state (at depth -1)\nState-vector 20 byte, depth reached 0, errors: 1\n").0,
            PanResult::Violated(PanError::InvalidEndState)
        );
        assert_eq!(leading_number("1.2e+06 states"), 1_200_000);
    }

    /// A pan that printed nothing, or stopped before its summary, verified nothing.
    #[test]
    fn no_completion_report_is_never_verified() {
        for out in [
            "",
            "garbage\n",
            "State-vector 12 byte, depth reached 3, errors: 0\n",
            "      404 states, stored\n",
        ] {
            assert!(
                matches!(parse(out).0, PanResult::Limited(Limit::Incomplete(_))),
                "{out:?}"
            );
        }
    }

    /// A search the model's step budget ended is not complete, whatever else pan printed.
    #[test]
    fn step_budget_is_never_verified() {
        let out = "kivi: step budget reached\nWarning: Search not completed\nState-vector 12 byte, depth reached 3, errors: 0\n      404 states, stored\n";
        assert_eq!(
            parse(out).0,
            PanResult::Limited(Limit::Incomplete("the search's step budget ran out".into()))
        );
    }
}

//! What every machine format says about one violation: its headline, the object to fix, the
//! other objects involved and a stable fingerprint. Kept in one place so SARIF, JUnit, GitHub
//! annotations, Code Quality and the Markdown and HTML reports agree.

use super::document::{CheckOutcome, MemberOut, Report, StepOut, UnitOut, VerdictKind};
use crate::checks::Level;
use crate::units::Role;

/// A violated check of a unit.
#[derive(Clone, Copy)]
pub struct Finding<'a> {
    pub unit: &'a UnitOut,
    pub outcome: &'a CheckOutcome,
}

/// Every violation of the report, in report order (units, then checks), but for those that
/// follow from another's root cause (listed with it as `also_breaks`).
pub fn findings(report: &Report) -> Vec<Finding<'_>> {
    report
        .outcomes()
        .filter(|(_, c)| c.verdict == VerdictKind::Violated && c.caused_by.is_none())
        .map(|(unit, outcome)| Finding { unit, outcome })
        .collect()
}

/// Every outcome that could not be decided: an engine error or a limit reached.
pub fn inconclusive(report: &Report) -> Vec<Finding<'_>> {
    report
        .outcomes()
        .filter(|(_, c)| c.verdict == VerdictKind::Inconclusive)
        .map(|(unit, outcome)| Finding { unit, outcome })
        .collect()
}

impl<'a> Finding<'a> {
    pub fn check(&self) -> &'a str {
        &self.outcome.check
    }

    pub fn level(&self) -> Level {
        self.outcome.level
    }

    pub fn suppressed(&self) -> bool {
        self.outcome.suppression.is_some()
    }

    /// The object to fix: the member whose manifest holds the causing field, else the first
    /// workload of the unit.
    pub fn primary(&self) -> Option<&'a MemberOut> {
        let members = &self.unit.members;
        let located = match (&self.outcome.file, self.outcome.line) {
            (Some(file), Some(line)) => members
                .iter()
                .filter(|m| &m.file == file && m.line <= line)
                .max_by_key(|m| m.line),
            _ => None,
        };
        located.or_else(|| members.iter().find(|m| m.role == Role::Workload))
    }

    /// The workload the finding is counted against (JUnit test cases are per workload): the
    /// primary object if it is a workload, else the first workload the trace names.
    pub fn workload(&self) -> Option<&'a MemberOut> {
        let workloads = || self.unit.members.iter().filter(|m| m.role == Role::Workload);
        if let Some(p) = self.primary().filter(|p| p.role == Role::Workload) {
            return Some(p);
        }
        let named = self.outcome.steps.iter().rev().find_map(|s| {
            workloads().find(|w| s.message.contains(&w.id()) || s.message.contains(&format!("{}-", w.name)))
        });
        named.or_else(|| workloads().next())
    }

    /// The unit's other violations that follow from this one's root cause.
    pub fn consequences(&self) -> Vec<Finding<'a>> {
        let unit = self.unit;
        unit.verification
            .iter()
            .flat_map(|v| &v.results)
            .filter(|c| c.caused_by.as_deref() == Some(self.check()))
            .map(|outcome| Finding { unit, outcome })
            .collect()
    }

    /// The other members of the unit, for related locations.
    pub fn related(&self) -> impl Iterator<Item = &'a MemberOut> {
        let primary = self.primary().map(MemberOut::id);
        self.unit.members.iter().filter(move |m| Some(m.id()) != primary)
    }

    /// One sentence that stands alone (GitHub shows only the first when space is short).
    pub fn headline(&self) -> String {
        let o = self.outcome;
        let decisive = o.decisive_step().map(|s| crate::diagnostics::capitalized(&s.message));
        let what = decisive.unwrap_or_else(|| format!("{} is violated", o.check));
        let at = o
            .topology
            .as_ref()
            .map(|t| format!(" (found on {})", t.description))
            .unwrap_or_default();
        format!("{what}{at}.")
    }

    /// The headline, then the check's definition and how the trace goes.
    pub fn message(&self) -> String {
        let mut out = self.headline();
        if let Some(check) = crate::checks::find(self.check()) {
            out.push_str(&format!(" Check {}: {}", check.id, check.summary));
            out.push('.');
        }
        out.push_str(&format!(
            " Unit {} ({}); the counterexample has {} steps.",
            self.unit.name,
            self.unit.scope,
            self.outcome.steps.len()
        ));
        if !self.outcome.also_breaks.is_empty() {
            out.push_str(&format!(
                " The same cause also breaks {}.",
                self.outcome.also_breaks.join(", ")
            ));
        }
        if let Some(f) = self.fix_line() {
            out.push_str(&format!(" {f}"));
        }
        if let Some(s) = &self.outcome.suppression {
            out.push_str(&format!(" Suppressed: {}", s.justification));
        }
        out
    }

    /// `Fix (verified by kivi-lint): … (file:line).`, when the search found one.
    pub fn fix_line(&self) -> Option<String> {
        self.outcome.fix.as_ref().map(|f| {
            format!(
                "Fix (verified by kivi-lint on {}): {} ({}:{}).",
                f.verified(),
                f.summary,
                f.file,
                f.line
            )
        })
    }

    /// A key that stays the same while the same check fails on the same object of the same
    /// unit, whatever the line numbers, the counterexample, the scanned path or the working
    /// directory: the scope counts as a repository-relative URI (`scope_uri`), so moving the
    /// Action's `path:` does not close and reopen every alert.
    pub fn fingerprint(&self, scope_uri: &str) -> String {
        let mut hasher = blake3::Hasher::new();
        for part in [
            "kiviLintFinding/v1",
            self.check(),
            scope_uri,
            &self.unit.name,
            &self.primary().map(MemberOut::id).unwrap_or_default(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update(&[0]);
        }
        hasher.finalize().to_hex()[..32].to_string()
    }

    /// `(file, line, column, end line, end column)` of the causing field, else of the primary
    /// object's start.
    pub fn region(&self) -> Option<Region<'a>> {
        let o = self.outcome;
        match (&o.file, o.line, o.column) {
            (Some(file), Some(line), Some(column)) => Some(Region {
                file,
                line,
                column,
                end_line: o.end_line.unwrap_or(line),
                end_column: o.end_column.unwrap_or(column + 1),
            }),
            _ => self.primary().map(Region::of_member),
        }
    }
}

/// A 1-based range on one line (end column exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region<'a> {
    pub file: &'a str,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

impl<'a> Region<'a> {
    pub fn of_member(m: &'a MemberOut) -> Region<'a> {
        Region {
            file: &m.file,
            line: m.line,
            column: m.column,
            end_line: m.line,
            end_column: m.column + 1,
        }
    }

    pub fn of_step(s: &'a StepOut) -> Option<Region<'a>> {
        let (file, line, column) = (s.file.as_deref()?, s.line?, s.column?);
        Some(Region {
            file,
            line,
            column,
            end_line: s.end_line.unwrap_or(line),
            end_column: s.end_column.unwrap_or(column + 1),
        })
    }
}

/// The fingerprint of an input error or warning at `path` (repository-relative) saying
/// `message`: the same in SARIF and Code Quality, and when lines move.
pub fn input_fingerprint(path: &str, message: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in ["kiviLintInput/v1", path, message] {
        hasher.update(part.as_bytes());
        hasher.update(&[0]);
    }
    hasher.finalize().to_hex()[..32].to_string()
}

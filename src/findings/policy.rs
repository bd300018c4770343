//! What a report does with a check's result, decided before anything is written: its level
//! (config `checks.severity`, else the check's default), whether an annotation or a config
//! entry suppresses a violation, and whether PR mode hides it because the base revision has it
//! too. The report then only projects these decisions (`report::Report::new`).

use crate::analysis::Analysis;
use crate::checks::{CheckId, Level};
use crate::config::Date;
use crate::source::Span;

/// The inputs of the decisions that do not come from the analysis.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// The date an expiring config suppression is compared with; `None` when no violation is
    /// judged (a report of units only).
    pub today: Option<Date>,
    /// `ignore-check.kivi-lint.io` annotations count (off with `--no-inline-suppressions`).
    pub inline_suppressions: bool,
    /// Violations the base revision has too stay in the report (`--all-findings`).
    pub all_findings: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            today: None,
            inline_suppressions: true,
            all_findings: false,
        }
    }
}

/// Where a suppression comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuppressedBy {
    /// An `ignore-check.kivi-lint.io/<check>` (or `ignore-all`) annotation on a member.
    Annotation,
    /// An entry of the config's `suppressions`.
    Config,
}

/// A violation acknowledged by its owners: still reported, not counted.
#[derive(Clone, Debug, PartialEq)]
pub struct Suppressed {
    pub by: SuppressedBy,
    pub reason: String,
    /// The annotation or the config entry.
    pub span: Span,
}

/// What the policy decided for one check's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    pub level: Level,
    /// Violations only: the annotation or config entry that suppresses it.
    pub suppressed: Option<Suppressed>,
    /// PR mode leaves the result out of the report.
    pub hidden: bool,
}

impl Policy {
    /// The decisions for `result`, a result of unit `unit`.
    pub fn judge(&self, a: &Analysis, unit: usize, result: &super::CheckResult) -> Judgement {
        Judgement {
            level: self.level(a, result.check),
            suppressed: matches!(result.verdict, super::Verdict::Violated { .. })
                .then(|| self.suppression(a, unit, result.check))
                .flatten(),
            hidden: self.hides(result.baseline),
        }
    }

    /// The level of `check`'s findings.
    pub fn level(&self, a: &Analysis, check: CheckId) -> Level {
        a.check_level(check)
    }

    /// A result PR mode leaves out: the base revision has the same violation
    /// (`baseline`: whether it has), unless every finding is wanted.
    pub fn hides(&self, baseline: Option<bool>) -> bool {
        baseline == Some(true) && !self.all_findings
    }

    /// The annotation or config entry that suppresses `check`'s findings in `unit`, if any.
    /// Annotations count on every member object; an expired config entry does not count.
    pub fn suppression(&self, a: &Analysis, unit: usize, check: CheckId) -> Option<Suppressed> {
        let members = || a.units[unit].members.iter().map(|m| &a.objects[m.object]);
        let inline = members()
            .filter(|_| self.inline_suppressions)
            .flat_map(|o| &o.ignores)
            .find(|i| {
                i.check
                    .as_deref()
                    .is_none_or(|c| crate::checks::find(c).is_some_and(|k| k.id == check))
            })
            .map(|i| Suppressed {
                by: SuppressedBy::Annotation,
                reason: i.reason.clone(),
                span: i.span,
            });
        inline.or_else(|| {
            a.config
                .suppressions
                .iter()
                .filter(|s| s.check == check && s.expires.is_none_or(|e| self.today.is_none_or(|today| e >= today)))
                .find(|s| members().any(|o| o.id == s.object))
                .map(|s| Suppressed {
                    by: SuppressedBy::Config,
                    reason: s.reason.clone(),
                    span: s.span,
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Policy;

    /// PR mode hides what the base revision has too, unless every finding is wanted; a result
    /// outside PR mode (no baseline) or new on the branch always shows.
    #[test]
    fn pr_mode_hides_only_what_the_base_has_too() {
        let policy = Policy::default();
        assert!(policy.hides(Some(true)));
        assert!(!policy.hides(Some(false)) && !policy.hides(None));
        let all = Policy {
            all_findings: true,
            ..Policy::default()
        };
        assert!(!all.hides(Some(true)));
    }
}

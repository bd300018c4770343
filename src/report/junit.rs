//! JUnit XML for GitLab, Jenkins and other test report viewers: a test suite per unit, a test
//! case per (check × workload), passes included so trends show.
//!
//! Times are left out: they differ from run to run, and the report must not.

use std::collections::BTreeSet;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use super::Emit;
use super::finding::Finding;
use super::model::{Member, VerdictKind};
use crate::diagnostics::Severity;
use crate::units::Role;

pub fn render(e: &Emit) -> String {
    let mut junit = JunitReport::new("kivi-lint");
    let mut names = BTreeSet::new();
    let inputs: Vec<TestCase> = e
        .report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(d.message.as_str()).set_type("input-error");
            let name = unique(&mut names, format!("input {}:{}:{}", d.file, d.line, d.column));
            let mut case = TestCase::new(name, status);
            case.set_classname("inputs");
            case.extra.insert("file".into(), d.file.as_str().into());
            case.extra.insert("line".into(), d.line.to_string().into());
            case
        })
        .collect();
    if !inputs.is_empty() {
        let mut suite = TestSuite::new("inputs");
        suite.add_test_cases(inputs);
        junit.add_test_suite(suite);
    }
    for unit in &e.report.units {
        let Some(v) = &unit.verification else { continue };
        let mut suite = TestSuite::new(format!("{} ({})", unit.name, unit.scope));
        suite.add_property(("unit", unit.id.as_str()));
        suite.add_property(("kivi-lint", e.report.tool.version.as_str()));
        let workloads: Vec<&Member> = unit.members.iter().filter(|m| m.role == Role::Workload).collect();
        for outcome in &v.results {
            let finding = Finding { unit, outcome };
            let failing = (outcome.verdict == VerdictKind::Violated)
                .then(|| finding.workload().map(Member::id))
                .flatten();
            for w in &workloads {
                let status = status(&finding, failing.as_deref() == Some(&w.id()));
                let name = unique(&mut names, format!("{} {}", outcome.check, w.id()));
                let mut case = TestCase::new(name, status);
                case.set_classname(unit.name.as_str());
                let (file, line) = match (&outcome.file, outcome.line) {
                    (Some(f), Some(l)) if failing.as_deref() == Some(&w.id()) => (f.as_str(), l),
                    _ => (w.file.as_str(), w.line),
                };
                case.extra.insert("file".into(), file.into());
                case.extra.insert("line".into(), line.to_string().into());
                suite.add_test_case(case);
            }
        }
        junit.add_test_suite(suite);
    }
    junit.to_string().expect("JUnit XML serialises") + "\n"
}

/// GitLab keeps only the first of test cases with the same name: make each name unique.
fn unique(names: &mut BTreeSet<String>, name: String) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while !names.insert(candidate.clone()) {
        candidate = format!("{name} #{n}");
        n += 1;
    }
    candidate
}

fn status(f: &Finding, failing_here: bool) -> TestCaseStatus {
    let o = f.outcome;
    match o.verdict {
        VerdictKind::Violated if failing_here => match &o.suppression {
            Some(s) => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(format!("suppressed: {}", s.justification));
                st
            }
            None => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(f.headline())
                    .set_type(o.check.as_str())
                    .set_description(trace(f));
                st
            }
        },
        VerdictKind::Inconclusive => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            st.set_message(format!("inconclusive: {}", o.reason.as_deref().unwrap_or("no verdict")))
                .set_type(if o.engine_error { "engine-error" } else { "inconclusive" });
            st
        }
        VerdictKind::NotChecked => {
            let mut st = TestCaseStatus::skipped();
            st.set_message("not modelled yet");
            st
        }
        _ => TestCaseStatus::success(),
    }
}

/// The failure body: the message, then one `path:line` line per counterexample step.
fn trace(f: &Finding) -> String {
    let mut out = f.message();
    out.push_str("\n\n");
    for (i, s) in f.outcome.steps.iter().enumerate() {
        let at = match (&s.file, s.line) {
            (Some(file), Some(line)) => format!("{file}:{line}: "),
            _ => String::new(),
        };
        out.push_str(&format!("{at}[{}] {}: {}\n", i + 1, s.actor, s.message));
    }
    if let Some(c) = crate::checks::find(f.check()) {
        out.push_str(&format!("\n{}\n", c.help_uri()));
    }
    out
}

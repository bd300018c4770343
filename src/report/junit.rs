//! JUnit XML for GitLab, Jenkins and other test report viewers: a test suite per unit, a test
//! case per (check × workload), passes included so trends show.
//!
//! Times are left out: they differ from run to run, and the report must not.

use std::collections::BTreeSet;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use super::Emit;
use super::document::{MemberOut, VerdictKind};
use super::violation::Finding;
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
            status
                .set_message(d.message.as_str())
                .set_type("input-error")
                .set_description(format!("{}:{}:{}: {}", d.file, d.line, d.column, d.message));
            let name = unique(&mut names, format!("input {}:{}:{}", d.file, d.line, d.column));
            let mut case = TestCase::new(name, status);
            case.set_classname("inputs");
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
        let workloads: Vec<&MemberOut> = unit.members.iter().filter(|m| m.role == Role::Workload).collect();
        for outcome in &v.results {
            let finding = Finding { unit, outcome };
            let failing = (outcome.verdict == VerdictKind::Violated)
                .then(|| finding.workload().map(MemberOut::id))
                .flatten();
            for w in &workloads {
                // junit-10.xsd (Jenkins) allows no `file` or `line` on a test case: the place
                // opens the body text of whatever did not pass.
                let (file, line) = match (&outcome.file, outcome.line) {
                    (Some(f), Some(l)) if failing.as_deref() == Some(&w.id()) => (f.as_str(), l),
                    _ => (w.file.as_str(), w.line),
                };
                let at = format!("{file}:{line}");
                let status = status(&finding, failing.as_deref() == Some(&w.id()), &at);
                let name = unique(&mut names, format!("{} {}", outcome.check, w.id()));
                let mut case = TestCase::new(name, status);
                case.set_classname(unit.name.as_str());
                suite.add_test_case(case);
            }
        }
        junit.add_test_suite(suite);
    }
    let xml = junit.to_string().expect("JUnit XML serialises") + "\n";
    // junit-10.xsd has no `skipped` on `testsuites` (only on each `testsuite`).
    match xml.find("<testsuites ") {
        Some(start) => {
            let end = xml[start..].find('>').map_or(xml.len(), |e| start + e);
            let head = without_attribute(&xml[start..end], " skipped=\"");
            format!("{}{}{}", &xml[..start], head, &xml[end..])
        }
        None => xml,
    }
}

/// `element` without its attribute that starts with `attribute` (`name="`).
fn without_attribute(element: &str, attribute: &str) -> String {
    match element.find(attribute) {
        Some(i) => {
            let value_end = element[i + attribute.len()..]
                .find('"')
                .map_or(element.len(), |e| i + attribute.len() + e + 1);
            format!("{}{}", &element[..i], &element[value_end..])
        }
        None => element.to_string(),
    }
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

/// What a test case reports. Whatever did not pass has body text (GitLab shows the body, not
/// the message), starting with the place `at`.
fn status(f: &Finding, failing_here: bool, at: &str) -> TestCaseStatus {
    let o = f.outcome;
    match o.verdict {
        // A violation that follows from another finding of the unit (its counterexample passes
        // through that one's cause) is reported with it, as every other report does: one
        // failure per independent problem, not one per check it breaks.
        VerdictKind::Violated if failing_here && o.suppression.is_none() && o.caused_by.is_some() => {
            let root = o.caused_by.as_deref().unwrap_or_default();
            let message = format!("follows from the {root} finding of this unit: {}", f.headline());
            let mut st = TestCaseStatus::skipped();
            st.set_message(message.as_str())
                .set_description(format!("{at}: {message}\n\n{}", trace(f)));
            st
        }
        VerdictKind::Violated if failing_here => match &o.suppression {
            Some(s) => {
                let message = format!("suppressed: {}", s.justification);
                let mut st = TestCaseStatus::skipped();
                st.set_message(message.as_str())
                    .set_description(format!("{at}: {message}\n\n{}", f.headline()));
                st
            }
            None => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(f.headline())
                    .set_type(o.check.as_str())
                    .set_description(format!("{at}: {}", trace(f)));
                st
            }
        },
        // A partial verdict passes with a note (unless --require-complete): skipped, not failed.
        VerdictKind::Inconclusive if o.partial => {
            let message = format!("partial: {}", o.inconclusive_text());
            let mut st = TestCaseStatus::skipped();
            st.set_message(message.as_str())
                .set_description(format!("{at}: {} {message}", o.check));
            st
        }
        VerdictKind::Inconclusive => {
            let message = format!("inconclusive: {}", o.inconclusive_text());
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            st.set_message(message.as_str())
                .set_type(if o.engine_error { "engine-error" } else { "inconclusive" })
                .set_description(format!("{at}: {} {message}", o.check));
            st
        }
        VerdictKind::NotChecked => {
            let mut st = TestCaseStatus::skipped();
            st.set_message("not modelled yet")
                .set_description(format!("{at}: {} is not modelled yet for this unit", o.check));
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

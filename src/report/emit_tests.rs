//! Every emitter on one report built in memory (as ruff tests its emitters): a unit with a
//! violated check (a fix that is one value's new text, a two-step counterexample), a partial
//! check and a verified one, plus one input error. No SPIN, no compiler: the binary-level tests
//! in `tests/reports.rs` keep one snapshot per format of real runs.

use super::document::Report;
use super::{Emit, Format, results};

/// The report, as the JSON schema writes it.
fn report() -> Report {
    serde_json::from_str(REPORT).expect("the report deserializes")
}

const REPORT: &str = r#"{
  "schemaVersion": 2,
  "tool": {"name": "kivi-lint", "version": "0.1.0"},
  "config": null,
  "cluster": [],
  "summary": {
    "files": 2, "renders": 0, "objects": 1, "workloads": 1,
    "objectsByKind": {"Deployment": 1}, "skippedDocuments": 0, "units": 1,
    "workloadsInUnits": 1, "errors": 1, "warnings": 0
  },
  "scopes": [{"kind": "files", "path": "deploy"}],
  "units": [{
    "id": "0123456789ab", "name": "shop/web", "scope": "deploy", "scopeKind": "files",
    "members": [{"kind": "Deployment", "namespace": "shop", "name": "web", "role": "workload",
                 "file": "deploy/web.yaml", "line": 3, "column": 3}],
    "nodePools": ["zone-a"],
    "checks": ["pods-schedulable", "min-replicas-available", "rollout-completes"],
    "edges": [],
    "verification": {
      "search": {"planned": 4, "explored": 4, "bound": "the pools' `max`"},
      "unmodelledEvents": [],
      "states": 120,
      "results": [
        {
          "check": "pods-schedulable", "verdict": "violated", "level": "error",
          "file": "deploy/web.yaml", "line": 12, "column": 20, "endLine": 12, "endColumn": 33,
          "topology": {"nodes": 3, "nodesPerPool": [3], "description": "3 nodes (zone-a 3)"},
          "fix": {"summary": "set `whenUnsatisfiable: ScheduleAnyway` on topologySpreadConstraints[0]",
                  "file": "deploy/web.yaml", "line": 12, "column": 20,
                  "verifiedOn": "3 nodes (zone-a 3)",
                  "replacement": {"endColumn": 33, "text": "ScheduleAnyway"}},
          "steps": [
            {"actor": "deployment-controller", "message": "creates pod web-4",
             "file": "deploy/web.yaml", "line": 5, "column": 13},
            {"actor": "scheduler",
             "message": "no feasible node for web-4: 3 node(s) would break topologySpreadConstraints[0]",
             "file": "deploy/web.yaml", "line": 12, "column": 20}
          ]
        },
        {
          "check": "min-replicas-available", "verdict": "inconclusive", "level": "error",
          "reason": "memory limit of 1024 MiB reached",
          "topology": {"nodes": 4, "nodesPerPool": [4], "description": "4 nodes (zone-a 4)"},
          "heldUpTo": {"nodes": 3, "nodesPerPool": [3], "description": "3 nodes (zone-a 3)"},
          "heldTopologies": 2, "partial": true
        },
        {
          "check": "rollout-completes", "verdict": "verified", "level": "error",
          "topology": {"nodes": 4, "nodesPerPool": [4], "description": "4 nodes (zone-a 4)"}
        }
      ]
    }
  }],
  "diagnostics": [{"severity": "error", "file": "deploy/bad.yaml", "line": 4, "column": 13,
                   "endLine": 4, "endColumn": 18, "message": "`replicas` must be an integer"}]
}"#;

fn emitted(format: Format) -> String {
    let report = report();
    results(&Emit::new(&report, 1), format)
}

#[test]
fn human_leads_with_the_finding_its_place_and_fix() {
    let out = emitted(Format::Human);
    assert!(
        out.contains("✗ error pods-schedulable: No feasible node for web-4"),
        "{out}"
    );
    assert!(out.contains("--> deploy/web.yaml:12:20"), "{out}");
    assert!(out.contains("fix: set `whenUnsatisfiable: ScheduleAnyway`"), "{out}");
    assert!(
        out.contains("◐ partial min-replicas-available: holds up to 3 nodes (zone-a 3)"),
        "{out}"
    );
    assert!(out.contains("✓ verified rollout-completes"), "{out}");
}

#[test]
fn sarif_has_the_finding_its_whole_region_and_fix_the_input_error_and_the_partial_as_a_note() {
    let sarif: serde_json::Value = serde_json::from_str(&emitted(Format::Sarif)).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let finding = results.iter().find(|r| r["ruleId"] == "pods-schedulable").unwrap();
    let region = &finding["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(12), Some(20))
    );
    assert_eq!(region["endColumn"], 33, "{region}");
    let change = &finding["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(change["insertedContent"]["text"], "ScheduleAnyway", "{finding}");
    // A partial verdict is no result: a notification of the run, at level note.
    assert!(
        !results.iter().any(|r| r["ruleId"] == "min-replicas-available"),
        "{results:?}"
    );
    let notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let partial = notes
        .iter()
        .find(|n| n["associatedRule"]["id"] == "min-replicas-available")
        .unwrap();
    assert_eq!(partial["level"], "note", "{partial}");
    assert!(
        results.iter().any(|r| r["message"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("must be an integer")),
        "the input error is a result: {results:?}"
    );
}

#[test]
fn junit_fails_the_finding_and_skips_the_partial() {
    let out = emitted(Format::Junit);
    assert_eq!(out.matches("<failure").count(), 1, "{out}");
    assert!(out.contains("partial: holds up to 3 nodes"), "{out}");
}

#[test]
fn code_quality_has_the_finding_and_the_input_error() {
    let issues: serde_json::Value = serde_json::from_str(&emitted(Format::Codequality)).unwrap();
    let names: Vec<&str> = issues
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["check_name"].as_str())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "pods-schedulable").count(),
        1,
        "{names:?}"
    );
    assert_eq!(names.len(), 2, "the finding and the input error: {names:?}");
}

#[test]
fn github_annotates_the_line_and_notes_the_partial() {
    let out = emitted(Format::Github);
    assert!(
        out.lines()
            .any(|l| l.starts_with("::error file=deploy/web.yaml,line=12")),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("::notice ")), "{out}");
}

#[test]
fn markdown_has_one_section_per_finding() {
    let out = emitted(Format::Markdown);
    assert_eq!(out.lines().filter(|l| l.starts_with("### ")).count(), 1, "{out}");
    assert!(out.contains("◐"), "{out}");
}

#[test]
fn json_round_trips_and_html_loads_nothing() {
    let report = report();
    let json = super::json::render(&report);
    let again: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(again, report);
    let html = emitted(Format::Html);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    for remote in ["<link", " src=", "http://", "https://"] {
        assert!(!html.contains(remote), "the HTML report loads nothing ({remote})");
    }
    assert!(html.contains("no feasible node for web-4"), "its data is embedded");
}

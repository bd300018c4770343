//! Every report format, end to end through the binary: snapshots for the Kivi fixtures and
//! demo-shop, SARIF validated against the official 2.1.0 schema, regions on the causing
//! fields, JUnit that parses, and the HTML report rendered in headless Chromium.

use std::collections::BTreeMap;

use serde_json::Value;

mod common;
use common::{kivi, root};

/// Formats written to files, and the file names they get.
const FILES: [(&str, &str); 6] = [
    ("json", "report.json"),
    ("sarif", "report.sarif"),
    ("junit", "junit.xml"),
    ("codequality", "codequality.json"),
    ("markdown", "summary.md"),
    ("html", "report.html"),
];

struct Reports {
    code: i32,
    /// `--format github` on stdout.
    github: String,
    stderr: String,
    files: BTreeMap<&'static str, String>,
    _dir: assert_fs::TempDir,
}

/// Run `kivi-lint ARGS` with every format at once: github on stdout, the rest to files.
fn all_formats(args: &[&str]) -> Reports {
    let dir = assert_fs::TempDir::new().unwrap();
    let mut cmd = kivi();
    cmd.args(args).args(["--color", "never", "--format", "github"]);
    for (format, name) in FILES {
        cmd.arg("--format")
            .arg(format!("{format}={}", dir.path().join(name).display()));
    }
    let out = cmd.output().unwrap();
    let files = FILES
        .iter()
        .map(|(format, name)| {
            let text = std::fs::read_to_string(dir.path().join(name))
                .unwrap_or_else(|e| panic!("{format} report not written: {e}"));
            (*format, text)
        })
        .collect();
    Reports {
        code: out.status.code().unwrap_or(-1),
        github: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        files,
        _dir: dir,
    }
}

/// Lines that depend on the machine or the cache: run times, and whether verdicts were cached.
fn without_run_stats(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("verdicts from the result cache")
                || (t.contains(" s, ") && t.contains(" states (generate")))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn sarif_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(include_str!("schemas/sarif-schema-2.1.0.json")).unwrap();
    jsonschema::validator_for(&schema).expect("the SARIF schema compiles")
}

/// Schema-valid, and every result's region is the causing field: inside the file, not the
/// object's first line, on a non-empty range of text.
fn check_sarif(text: &str) -> Value {
    let sarif: Value = serde_json::from_str(text).expect("SARIF is JSON");
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF does not validate: {errors:#?}");
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "kivi-lint");
    assert!(run["results"].is_array(), "results is always present");
    for result in run["results"].as_array().unwrap() {
        let location = &result["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"].as_str().unwrap();
        assert!(
            !uri.starts_with('/') && !uri.contains(".."),
            "{uri} is repository-relative"
        );
        let region = &location["region"];
        let line = region["startLine"].as_u64().unwrap() as usize;
        let (start, end) = (
            region["startColumn"].as_u64().unwrap() as usize,
            region["endColumn"].as_u64().unwrap() as usize,
        );
        assert!(line > 1, "{uri}: a finding on line 1");
        let source = std::fs::read_to_string(root().join(uri)).unwrap();
        let text: Vec<char> = source.lines().nth(line - 1).unwrap().chars().collect();
        assert!(
            start < end && end - 1 <= text.len(),
            "{uri}:{line}: region {start}..{end}"
        );
        let field: String = text[start - 1..end - 1].iter().collect();
        let line_text: String = text.iter().collect();
        assert!(!field.trim().is_empty(), "{uri}:{line}: empty region");
        for object_start in ["apiVersion:", "kind:", "metadata:", "---"] {
            assert!(
                !line_text.trim_start().starts_with(object_start),
                "{uri}:{line}: region on the object, not the field: {line_text}"
            );
        }
        assert!(
            result["partialFingerprints"]["kiviLintFinding/v1"].is_string(),
            "a stable fingerprint"
        );
        let flow = &result["codeFlows"][0]["threadFlows"][0]["locations"];
        assert!(
            flow.as_array().is_some_and(|l| !l.is_empty()),
            "the counterexample as a code flow"
        );
    }
    sarif
}

/// The JSON the HTML page draws from.
fn html_data(html: &str) -> Value {
    let start = html.find("id=\"report-data\">").expect("embedded data") + "id=\"report-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// Check every format of a fixture and snapshot it.
fn reports_of(name: &str, args: &[&str], code: i32) {
    let r = all_formats(args);
    assert_eq!(r.code, code, "{name}: exit code; stderr:\n{}", r.stderr);
    for (format, _) in FILES {
        assert!(
            r.stderr.contains(&format!("wrote {format} to ")),
            "{name}: `wrote {format}` on stderr"
        );
    }
    let mut sarif = check_sarif(&r.files["sarif"]);
    // The checkout's absolute path differs between machines.
    sarif["runs"][0]["invocations"][0]["workingDirectory"]["uri"] = Value::from("file:///[repository]/");
    insta::assert_snapshot!(format!("{name}-sarif"), serde_json::to_string_pretty(&sarif).unwrap());

    let junit = &r.files["junit"];
    let parsed = quick_junit::Report::deserialize_from_str(junit).expect("JUnit XML parses");
    let mut names: Vec<String> = parsed
        .test_suites
        .iter()
        .flat_map(|s| s.test_cases.iter().map(|c| c.name.to_string()))
        .collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count, "{name}: JUnit test case names are unique");
    insta::assert_snapshot!(format!("{name}-junit"), junit);

    let quality: Value = serde_json::from_str(&r.files["codequality"]).unwrap();
    let issues = quality.as_array().expect("Code Quality is an array");
    for issue in issues {
        for field in ["description", "check_name", "fingerprint", "severity"] {
            assert!(issue[field].is_string(), "{name}: Code Quality {field}");
        }
        assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() > 1);
    }
    insta::assert_snapshot!(format!("{name}-codequality"), &r.files["codequality"]);
    insta::assert_snapshot!(format!("{name}-markdown"), &r.files["markdown"]);
    insta::assert_snapshot!(format!("{name}-github"), without_run_stats(&r.github));

    let html = &r.files["html"];
    assert!(html.starts_with("<!DOCTYPE html>"));
    for remote in ["<link", " src=", "http://", "https://"] {
        assert!(
            !html.contains(remote),
            "{name}: the HTML report loads nothing ({remote})"
        );
    }
    insta::assert_snapshot!(
        format!("{name}-html-data"),
        serde_json::to_string_pretty(&html_data(html)).unwrap()
    );
    insta::assert_snapshot!(format!("{name}-json"), &r.files["json"]);
}

macro_rules! report_case {
    ($($test:ident: $fixture:literal, $code:literal;)*) => {
        $(
            #[test]
            fn $test() {
                reports_of($fixture, &[concat!("fixtures/", $fixture)], $code);
            }
        )*
    };
}

report_case! {
    kivi_c1: "kivi-c1", 0;
    kivi_c1_safe: "kivi-c1-safe", 0;
    kivi_c2: "kivi-c2", 1;
    kivi_c2_safe: "kivi-c2-safe", 0;
    kivi_c3: "kivi-c3", 1;
    kivi_c3_safe: "kivi-c3-safe", 0;
    kivi_c4: "kivi-c4", 1;
    kivi_c4_safe: "kivi-c4-safe", 0;
    kivi_c5: "kivi-c5", 1;
    kivi_c5_safe: "kivi-c5-safe", 0;
    kivi_c6: "kivi-c6", 1;
    kivi_c6_safe: "kivi-c6-safe", 0;
    kivi_c7: "kivi-c7", 1;
    kivi_c7_safe: "kivi-c7-safe", 0;
    kivi_c8: "kivi-c8", 1;
    kivi_c8_safe: "kivi-c8-safe", 0;
}

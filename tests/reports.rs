//! Every report format, end to end through the binary: snapshots for the Kivi fixtures and
//! demo-shop, SARIF validated against the official 2.1.0 schema, regions on the causing
//! fields, JUnit that parses, and the HTML report rendered in headless Chromium.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{kivi, root, stdout_of};

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
/// The fixture whose report every format's snapshot is of: demo-shop's staging overlay (four
/// workloads, an HPA, a PDB, a descheduler policy, one finding with a fix). The emitters
/// themselves are unit-tested in memory (`src/report/emit_tests.rs`); every other fixture keeps
/// its JSON snapshot, the record of its verdicts and traces, and is validated in every format.
const FORMAT_SNAPSHOTS: &str = "demo-shop-staging";

fn reports_of(name: &str, args: &[&str], code: i32) {
    let r = all_formats(args);
    assert_eq!(r.code, code, "{name}: exit code; stderr:\n{}", r.stderr);
    for (format, _) in FILES {
        assert!(
            r.stderr.contains(&format!("wrote {format} to ")),
            "{name}: `wrote {format}` on stderr"
        );
    }
    let every_format = name == FORMAT_SNAPSHOTS;
    let mut sarif = check_sarif(&r.files["sarif"]);
    // The checkout's absolute path differs between machines.
    sarif["runs"][0]["invocations"][0]["workingDirectory"]["uri"] = Value::from("file:///[repository]/");
    sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] = Value::from("file:///[repository]/");
    // The rule catalogue is the same in every report: one snapshot of it.
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"].take();
    if every_format {
        insta::assert_snapshot!("sarif-rules", serde_json::to_string_pretty(&rules).unwrap());
        insta::assert_snapshot!(format!("{name}-sarif"), serde_json::to_string_pretty(&sarif).unwrap());
    }

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
    validate_junit(name, junit);

    let quality: Value = serde_json::from_str(&r.files["codequality"]).unwrap();
    let issues = quality.as_array().expect("Code Quality is an array");
    for issue in issues {
        for field in ["description", "check_name", "fingerprint", "severity"] {
            assert!(issue[field].is_string(), "{name}: Code Quality {field}");
        }
        assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() > 1);
    }

    let html = &r.files["html"];
    assert!(html.starts_with("<!DOCTYPE html>"));
    for remote in ["<link", " src=", "http://", "https://"] {
        assert!(
            !html.contains(remote),
            "{name}: the HTML report loads nothing ({remote})"
        );
    }
    if every_format {
        insta::assert_snapshot!(format!("{name}-junit"), junit);
        insta::assert_snapshot!(format!("{name}-codequality"), &r.files["codequality"]);
        insta::assert_snapshot!(format!("{name}-markdown"), &r.files["markdown"]);
        insta::assert_snapshot!(format!("{name}-github"), without_run_stats(&r.github));
        insta::assert_snapshot!(
            format!("{name}-html-data"),
            serde_json::to_string_pretty(&html_data(html)).unwrap()
        );
    }
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
    drain_blocked_by_pdb: "drain-blocked-by-pdb", 1;
    drain_blocked_by_pdb_safe: "drain-blocked-by-pdb-safe", 0;
    daemonset_overhead: "daemonset-overhead", 1;
    statefulset_ordered_stuck: "statefulset-ordered-stuck", 1;
    autoscaler_zone_template: "autoscaler-zone-template", 1;
    autoscaler_scale_down_downtime: "autoscaler-scale-down-downtime", 1;
    stale_reads_spread: "stale-reads-spread", 0;
}

/// demo-shop's staging overlay: four workloads with an HPA, a PDB and a descheduler policy,
/// rendered by kustomize. (Production reaches the 60 s time limit on some checks, so its
/// verdicts depend on the machine.)
#[test]
fn demo_shop_staging() {
    reports_of("demo-shop-staging", &["fixtures/demo-shop/apps/staging"], 1);
}

/// One cause, one finding, in every format: demo-shop (both overlays: findings that follow
/// from another's cause, a warning, fixes) has as many JUnit failures as SARIF results, Code
/// Quality issues, GitHub annotations and Markdown sections, and as the JSON's findings.
#[test]
fn demo_shop_findings_are_counted_alike_in_every_format() {
    let r = all_formats(&["fixtures/demo-shop"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json: Value = serde_json::from_str(&r.files["json"]).unwrap();
    let findings = json["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["verification"]["results"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["verdict"] == "violated" && c.get("causedBy").is_none())
        .count();
    assert!(findings >= 2, "{json}");
    let junit = r.files["junit"].matches("<failure").count();
    let sarif: Value = serde_json::from_str(&r.files["sarif"]).unwrap();
    let sarif = sarif["runs"][0]["results"].as_array().unwrap().len();
    let quality: Value = serde_json::from_str(&r.files["codequality"]).unwrap();
    let quality = quality.as_array().unwrap().len();
    let annotations = r
        .github
        .lines()
        .filter(|l| l.starts_with("::error ") || l.starts_with("::warning "))
        .count();
    let markdown = r.files["markdown"].lines().filter(|l| l.starts_with("### ")).count();
    assert_eq!(
        [junit, sarif, quality, annotations, markdown],
        [findings; 5],
        "JUnit, SARIF, Code Quality, annotations, Markdown"
    );
}

fn chromium() -> PathBuf {
    common::tool(&["chromium", "chromium-browser", "google-chrome"], "chromium")
}

/// Run headless Chromium on a local file with the flags a closed network needs.
fn headless(page: &Path, profile: &Path, extra: &[String]) -> std::process::Output {
    assert_cmd::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--window-size=1400,1200",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap()
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let dir = assert_fs::TempDir::new().unwrap();
    let page = dir.path().join("report.html");
    kivi()
        .args(["fixtures/kivi-c7", "-q", "--format"])
        .arg(format!("html={}", page.display()))
        .assert()
        .code(1);
    let profile = dir.path().join("profile");
    let dom = headless(&page, &profile, &["--dump-dom".into()]);
    let html = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    let body = html
        .find("<body")
        .map(|i| &html[i..i + html[i..].find('>').unwrap()])
        .unwrap_or("");
    // c7's two violations share one cause (the pinned node's NoExecute taint): one finding.
    assert!(
        body.contains("data-rendered=\"1\""),
        "the script drew the finding: {body}\n{log}"
    );
    assert!(!body.contains("data-errors"), "script errors: {body}");
    let console_errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("Error")))
        .collect();
    assert!(console_errors.is_empty(), "console errors: {console_errors:#?}");
    // The timeline: nodes grouped, pods drawn, the last step's state shown.
    assert!(html.contains("class=\"node"), "nodes are drawn");
    assert!(html.contains("class=\"pod "), "pods are drawn");
    assert!(html.contains("step 1"), "a step counter");

    // A trace longer than its list (kivi-c1: 28 steps) opens with the last, current step
    // scrolled into view.
    let long = dir.path().join("long.html");
    kivi()
        .args(["fixtures/kivi-c1", "-q", "--no-fixes", "--format"])
        .arg(format!("html={}", long.display()))
        .assert()
        .code(0);
    let dom = headless(&long, &profile, &["--dump-dom".into()]);
    let html_long = String::from_utf8_lossy(&dom.stdout);
    let scrolled: u32 = html_long
        .split("data-scroll-top=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no scroll position: {html_long}"));
    assert!(scrolled > 0, "the step list is scrolled to the current step");

    let shot = dir.path().join("report.png");
    let out = headless(&page, &profile, &[format!("--screenshot={}", shot.display())]);
    let png = std::fs::read(&shot)
        .unwrap_or_else(|e| panic!("no screenshot ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a real screenshot");
}

#[test]
fn at_most_one_format_on_stdout() {
    kivi()
        .args(["fixtures/kivi-c3", "--format", "json", "--format", "sarif"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("only one format can go to stdout"));
    kivi()
        .args(["fixtures/kivi-c3", "--format", "pdf"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("expected one of human, json, sarif"));
    kivi()
        .args(["fixtures/kivi-c3", "--format", "sarif=a", "--format", "junit=a"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("is the file of two formats"));
    // A report file that cannot be written fails the run, after the others are written.
    let dir = assert_fs::TempDir::new().unwrap();
    std::fs::write(dir.path().join("file"), "").unwrap();
    let blocked = dir.path().join("file/report.sarif");
    kivi()
        .args(["fixtures/kivi-c3", "-q", "--format", "json"])
        .arg("--format")
        .arg(format!("sarif={}", blocked.display()))
        .assert()
        .code(2)
        .stdout(predicates::str::contains("\"schemaVersion\""))
        .stderr(predicates::str::contains("cannot write the sarif report"));
}

#[test]
fn github_actions_get_annotations_and_a_job_summary() {
    let dir = assert_fs::TempDir::new().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = kivi()
        .args(["fixtures/kivi-c3", "-q"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.starts_with("::group::kivi-lint report\n"), "{out}");
    assert!(
        out.contains("::error file=fixtures/kivi-c3/deploy/php-apache.yaml,line=26,endLine=26,col=20,endColumn=21,title=pods-schedulable::No feasible node for php-apache-6"),
        "{out}"
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.starts_with("earlier step\n## kivi-lint"), "appended: {summary}");
    assert!(summary.contains("```mermaid\nsequenceDiagram\n"), "{summary}");
    assert!(summary.contains("participant a1 as scheduler"), "{summary}");
}

#[test]
fn annotations_stop_at_ten_per_level_and_say_how_many_more() {
    // Twelve copies of a unit with two violations of one cause (one finding each),
    // re-rendered through `merge`, which reads any JSON report.
    let mut report: Value =
        serde_json::from_str(&stdout_of(&["fixtures/kivi-c7", "-q", "--format", "json"], 1)).unwrap();
    let unit = report["units"][0].clone();
    let units: Vec<Value> = (0..12)
        .map(|i| {
            let mut u = unit.clone();
            u["id"] = Value::from(format!("{}{i:02}", &unit["id"].as_str().unwrap()[..10]));
            u
        })
        .collect();
    report["units"] = Value::Array(units);
    let dir = assert_fs::TempDir::new().unwrap();
    let file = dir.path().join("report.json");
    std::fs::write(&file, serde_json::to_string(&report).unwrap()).unwrap();
    let out = stdout_of(&["merge", "--format", "github", file.to_str().unwrap()], 1);
    let errors = out.lines().filter(|l| l.starts_with("::error ")).count();
    assert_eq!(errors, 10, "{out}");
    assert!(
        out.contains("::notice title=kivi-lint::2 more findings not annotated"),
        "{out}"
    );
}

#[test]
fn suppressed_findings_are_reported_but_do_not_fail() {
    let r = all_formats(&["fixtures/suppressed"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sarif = check_sarif(&r.files["sarif"]);
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "pods-schedulable");
    let suppression = &result["suppressions"][0];
    assert_eq!(suppression["kind"], "inSource");
    assert_eq!(
        suppression["justification"],
        "zone-b gets a second node in the next capacity round"
    );
    assert_eq!(suppression["location"]["physicalLocation"]["region"]["startLine"], 14);
    assert!(r.files["junit"].contains("<skipped message=\"suppressed: zone-b gets a second node"));
    assert!(!r.github.contains("::error"), "no annotation for a suppressed finding");
    assert!(
        r.github
            .contains("(suppressed: zone-b gets a second node in the next capacity round)")
    );
    assert!(
        r.github.contains("1 unit checked: 0 violated (1 more suppressed)"),
        "{}",
        r.github
    );
    assert!(r.files["codequality"].contains("\"severity\": \"info\""));
    let report: Value = serde_json::from_str(&r.files["json"]).unwrap();
    let outcome = &report["units"][0]["verification"]["results"][0];
    assert_eq!(outcome["suppression"]["kind"], "in-source");

    // Audits ignore the annotations.
    kivi()
        .args(["fixtures/suppressed", "-q", "--no-inline-suppressions"])
        .assert()
        .code(1);
}

#[test]
fn config_suppressions_expire() {
    let dir = assert_fs::TempDir::new().unwrap();
    let repo = dir.path();
    std::fs::create_dir_all(repo.join("deploy")).unwrap();
    std::fs::copy(
        root().join("fixtures/kivi-c3/deploy/php-apache.yaml"),
        repo.join("deploy/php-apache.yaml"),
    )
    .unwrap();
    let config = std::fs::read_to_string(root().join("fixtures/kivi-c3/.kivi-lint.yaml")).unwrap();
    std::fs::write(
        repo.join(".kivi-lint.yaml"),
        format!(
            "{config}suppressions:\n  - check: pods-schedulable\n    object: Deployment/default/php-apache\n    reason: accepted until the zone-b expansion\n    expires: 2027-01-31\n"
        ),
    )
    .unwrap();
    let run = |today: &str, code: i32| {
        let out = kivi()
            .arg(repo)
            .args(["--format", "sarif"])
            .env("KIVI_LINT_TODAY", today)
            .assert()
            .code(code)
            .get_output()
            .clone();
        (
            serde_json::from_slice::<Value>(&out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (sarif, _) = run("2027-01-31", 0);
    let suppression = &sarif["runs"][0]["results"][0]["suppressions"][0];
    assert_eq!(suppression["kind"], "external");
    assert_eq!(suppression["justification"], "accepted until the zone-b expansion");
    let (sarif, stderr) = run("2027-02-01", 1);
    assert!(sarif["runs"][0]["results"][0]["suppressions"].is_null());
    assert!(
        stderr.contains(
            "warning: the suppression of pods-schedulable for Deployment/default/php-apache expired on 2027-01-31"
        ),
        "{stderr}"
    );
}

#[test]
fn rules_and_explain_document_every_check() {
    let markdown = stdout_of(&["rules", "--format", "markdown"], 0);
    // docs/rules.md is this output, so help URIs in SARIF lead to it.
    let committed = std::fs::read_to_string(root().join("docs/rules.md")).unwrap();
    assert_eq!(
        markdown, committed,
        "docs/rules.md is stale: kivi-lint rules --format markdown > docs/rules.md"
    );
    let rules: Value = serde_json::from_str(&stdout_of(&["rules", "--format", "json"], 0)).unwrap();
    for rule in rules.as_array().unwrap() {
        let id = rule["id"].as_str().unwrap();
        assert!(markdown.contains(&format!("\n## {id}\n")));
        let text = stdout_of(&["explain", id], 0);
        assert!(text.contains("Example: ") && text.contains("Usual fixes:"), "{text}");
    }
    kivi()
        .args(["explain", "no_kernel_panic"])
        .assert()
        .success()
        .stdout(predicates::str::starts_with("no-node-overload (error)"));
    kivi()
        .args(["explain", "nope"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no check `nope`"));
}

/// Validate a JUnit report against junit-10.xsd (Jenkins' xUnit plugin) with xmllint, a
/// real validator, and check that whatever did not pass has body text (GitLab shows it).
fn validate_junit(name: &str, junit: &str) {
    let dir = assert_fs::TempDir::new().unwrap();
    let file = dir.path().join("junit.xml");
    std::fs::write(&file, junit).unwrap();
    let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/junit-10.xsd");
    let out = std::process::Command::new(common::tool(&["xmllint"], "libxml2-utils"))
        .args(["--noout", "--schema"])
        .arg(&schema)
        .arg(&file)
        .output()
        .expect("xmllint runs");
    assert!(
        out.status.success(),
        "{name}: JUnit report invalid against junit-10.xsd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for element in ["<failure ", "<error ", "<skipped "] {
        for (i, _) in junit.match_indices(element) {
            let rest = &junit[i..];
            let end = rest.find('>').unwrap();
            assert!(!rest[..end].ends_with('/'), "{name}: {element}…/> has no body text");
        }
    }
}

/// A run with input errors (exit 2) still fills GitLab's Code Quality widget: each input
/// error and warning is an issue at its line.
#[test]
fn code_quality_includes_input_errors() {
    let dir = assert_fs::TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      topologySpreadConstraints:\n      - {maxSkew: 0, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n      containers: [{name: c, image: nginx}]\n",
    )
    .unwrap();
    let out = common::kivi()
        .args(["--no-fixes", "--format", "codequality"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let issues: Value = serde_json::from_slice(&out.stdout).unwrap();
    let input = issues
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["check_name"] == "input-error")
        .unwrap_or_else(|| panic!("{issues}"));
    assert_eq!(input["severity"], "major");
    assert_eq!(input["location"]["lines"]["begin"], 11);
    assert!(
        input["location"]["path"].as_str().unwrap().ends_with("bad.yaml"),
        "{input}"
    );
    assert!(input["description"].as_str().unwrap().contains("maxSkew"), "{input}");
    assert!(input["fingerprint"].is_string());
}

/// Input errors are SARIF results of the `input-error` rule at their line (code scanning
/// shows results, not notifications), valid against the SARIF 2.1.0 schema.
#[test]
fn sarif_input_errors_are_results() {
    let dir = assert_fs::TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      topologySpreadConstraints:\n      - {maxSkew: 0, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n      containers: [{name: c, image: nginx}]\n",
    )
    .unwrap();
    let out = kivi()
        .args(["--no-fixes", "--format", "sarif"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // The schema only: check_sarif reads the regions' files from the repository.
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> = sarif_validator().iter_errors(&sarif).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let run = &sarif["runs"][0];
    let result = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "input-error")
        .unwrap_or_else(|| panic!("{sarif}"));
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(run["tool"]["driver"]["rules"][index]["id"], "input-error");
    assert_eq!(result["level"], "error");
    assert_eq!(result["locations"][0]["physicalLocation"]["region"]["startLine"], 11);
    assert!(result["message"]["text"].as_str().unwrap().contains("maxSkew"));
}

/// One finding has one fingerprint whatever the scanned path or the working directory:
/// code scanning matches alerts by it, so changing the Action's `path:` must not close and
/// reopen them. URIs are relative to the repository root, against `%SRCROOT%`, and help
/// links are pinned to this release.
#[test]
fn sarif_fingerprints_do_not_depend_on_the_scanned_path() {
    let repo = assert_fs::TempDir::new().unwrap();
    let deploy = repo.path().join("deploy");
    std::fs::create_dir_all(&deploy).unwrap();
    common::copy_tree(&root().join("fixtures/drain-blocked-by-pdb"), &deploy);
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let run = |cwd: &Path, args: &[&str]| -> Value {
        let out = kivi()
            .current_dir(cwd)
            .args(["--no-fixes", "--format", "sarif"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let config = deploy.join(".kivi-lint.yaml");
    let config = config.to_str().unwrap();
    let runs = [
        run(repo.path(), &["deploy", "--config", config]),
        run(repo.path(), &["deploy/k8s", "--config", config]),
        run(repo.path(), &["./deploy/k8s/", "--config", config]),
        run(&deploy, &["."]),
        run(&deploy.join("k8s"), &[".", "--config", config]),
    ];
    let key = |s: &Value| -> Vec<(String, String, String, String)> {
        s["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let at = &r["locations"][0]["physicalLocation"]["artifactLocation"];
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["kiviLintFinding/v1"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    at["uri"].as_str().unwrap().to_string(),
                    at["uriBaseId"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let first = key(&runs[0]);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(
        (first[0].2.as_str(), first[0].3.as_str()),
        ("deploy/k8s/pdb.yaml", "%SRCROOT%")
    );
    for r in &runs[1..] {
        assert_eq!(key(r), first);
    }
    let base = runs[0]["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(base.starts_with("file:///") && base.ends_with('/'), "{base}");
    let help = runs[0]["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"]
        .as_str()
        .unwrap();
    assert!(
        help.contains(&format!("/blob/v{}/", env!("CARGO_PKG_VERSION"))),
        "{help}"
    );
    let errors: Vec<String> = sarif_validator().iter_errors(&runs[0]).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Past the 5,000 results code scanning takes, the most severe are kept and the rest is said
/// as a notification of the run (a result needs a rule and a place): 5,001 files with invalid
/// YAML give 5,000 results and one warning notification that counts the omitted one.
#[test]
fn sarif_past_its_result_limit_says_what_it_left_out() {
    let dir = assert_fs::TempDir::new().unwrap();
    for i in 0..5001 {
        std::fs::write(dir.path().join(format!("bad-{i:04}.yaml")), "kind: [unclosed\n").unwrap();
    }
    let out = kivi()
        .args(["--no-cache", "--format", "sarif"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> = sarif_validator().iter_errors(&sarif).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let run = &sarif["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 5000);
    assert!(
        run["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| !r["locations"].as_array().unwrap().is_empty())
    );
    let notes = run["invocations"][0]["toolExecutionNotifications"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("1 more finding omitted")),
        "{notes:?}"
    );
}

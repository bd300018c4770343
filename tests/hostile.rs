//! Hostile input: kivi-lint reads untrusted pull requests, generates PROMELA and C from them
//! and compiles it. Each input here must end in a located diagnostic or a bounded
//! verification: never a panic, a hang, unbounded memory, or code injection.

use std::path::Path;

use assert_fs::prelude::*;
use serde_json::Value;

mod common;
use common::kivi;

/// Strings that would break out of a PROMELA string, comment or line, or reach the C compiler.
const PAYLOADS: &[&str] = &[
    "\"); system(\"touch /tmp/kivi-pwned\"); //",
    "*/ c_code { system(\"touch /tmp/kivi-pwned\"); } /*",
    "#define RUNNING 0",
    "a\\\"b",
    "line\nbreak",
    "%d%s%n",
];

/// A repository whose names, labels, namespaces and images carry the payloads, and whose
/// nodes pool and label keys do too.
fn injection_repo(dir: &assert_fs::TempDir) {
    let mut docs = Vec::new();
    for (i, payload) in PAYLOADS.iter().enumerate() {
        let text = serde_json::to_string(payload).unwrap();
        // An extended resource and a Service selector carry the payload too.
        let device = serde_json::to_string(&format!("{payload}/device")).unwrap();
        docs.push(format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: svc-{i}, namespace: shop}}\nspec: {{selector: {{app: {text}}}}}\n"
        ));
        docs.push(format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: shop
  labels: {{app: {text}, {text}: x}}
  annotations: {{note: {text}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {text}}}}}
  template:
    metadata:
      labels: {{app: {text}, tier: {text}}}
    spec:
      nodeSelector: {{pool: {text}}}
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: {text}, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: {text}}}}}}}
      containers:
      - name: c
        image: {text}
        resources: {{requests: {{cpu: 100m, memory: 64Mi, {device}: 1}}}}
"#
        ));
    }
    dir.child("apps/web.yaml").write_str(&docs.join("---\n")).unwrap();
    let labels: Vec<String> = PAYLOADS
        .iter()
        .map(|p| {
            let t = serde_json::to_string(p).unwrap();
            format!("{t}: {t}")
        })
        .collect();
    dir.child(".kivi-lint.yaml")
        .write_str(&format!(
            "cluster:\n  nodePools:\n  - name: pool\n    count: 2\n    labels: {{pool: x, {}}}\n    allocatable: {{cpu: \"4\", memory: 8Gi, pods: 20}}\n",
            labels.join(", ")
        ))
        .unwrap();
}

#[test]
fn names_and_labels_never_reach_the_model_as_text() {
    let pwned = Path::new("/tmp/kivi-pwned");
    let _ = std::fs::remove_file(pwned);
    let dir = assert_fs::TempDir::new().unwrap();
    injection_repo(&dir);
    let models = dir.child("models");
    let out = kivi()
        .args([
            "--format",
            "json",
            "-q",
            "--no-fixes",
            "--scale",
            "1",
            "--timeout",
            "120s",
            "--emit-models",
        ])
        .arg(models.path())
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(matches!(out.status.code(), Some(0..=3)), "{:?} {stderr}", out.status);
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert!(!report["units"].as_array().unwrap().is_empty(), "{report}");
    assert!(!pwned.exists(), "code from a manifest ran");

    let mut template_literals = std::collections::BTreeSet::new();
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![crate_dir.join("templates"), crate_dir.join("templates/probes")];
    // Each controller's templates are in its folder.
    for entry in std::fs::read_dir(crate_dir.join("src/controllers")).unwrap() {
        dirs.push(entry.unwrap().path());
    }
    for dir in &dirs {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "pml") {
                template_literals.extend(
                    literals(&std::fs::read_to_string(path).unwrap())
                        .iter()
                        .map(|l| shape(l)),
                );
            }
        }
    }
    // The checks' monitors and the events' templates live in their folders.
    for check in kivi_lint::checks::CHECKS {
        template_literals.extend(literals(check.monitor).iter().map(|l| shape(l)));
    }
    for (_, text) in kivi_lint::events::templates() {
        template_literals.extend(literals(text).iter().map(|l| shape(l)));
    }
    let mut generated = 0;
    let mut with_scalars = 0;
    for entry in std::fs::read_dir(models.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        generated += 1;
        // The payload-named extended resources are in the model, as indices.
        if text
            .lines()
            .any(|l| l.starts_with("#define SCALARS ") && !l.ends_with(" 0"))
        {
            with_scalars += 1;
        }
        for needle in [
            "pwned",
            "system(",
            "#define RUNNING 0",
            "a\\\"b",
            "%n",
            "line\nbreak",
            "shop",
            "web-",
        ] {
            assert!(!text.contains(needle), "{} contains {needle:?}", path.display());
        }
        if path.extension().is_some_and(|e| e == "input") {
            // The input is numbers only: `table index value` lines.
            assert!(
                text.lines()
                    .all(|l| l.split_whitespace().all(|w| w.parse::<i64>().is_ok())),
                "{}",
                path.display()
            );
        } else {
            // Every string literal of the model is one the templates have themselves.
            for literal in literals(&text) {
                assert!(
                    template_literals.contains(&shape(&literal)),
                    "{}: string literal {literal:?}",
                    path.display()
                );
            }
        }
    }
    assert!(generated >= 2, "no model was written");
    assert!(with_scalars >= 1, "no model accounts the extended resources");
}

/// The string literals of PROMELA text, outside comments.
fn literals(text: &str) -> Vec<String> {
    without_comments(text)
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// A literal with its template placeholders (`{{ k }}`) and numbers made `0`: the templates
/// render numbers (check indices) into some formats, never text.
fn shape(literal: &str) -> String {
    let mut out = String::new();
    let mut rest = literal;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        out.push('0');
        rest = rest[start..].find("}}").map_or("", |end| &rest[start + end + 2..]);
    }
    out.push_str(rest);
    let mut shaped = String::new();
    for c in out.chars() {
        if c.is_ascii_digit() {
            if !shaped.ends_with('#') {
                shaped.push('#');
            }
        } else {
            shaped.push(c);
        }
    }
    shaped
}

/// PROMELA text without its `/* ... */` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = rest[start + 2..]
            .find("*/")
            .map_or("", |end| &rest[start + 2 + end + 2..]);
    }
    out.push_str(rest);
    out
}

#[test]
fn absurd_values_are_bounded_or_located() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("apps/absurd.yaml")
        .write_str(
            r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2147483647
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 100000
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: 99999999999999999999
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers:
      - {name: c, image: nginx, resources: {requests: {cpu: "-1", memory: 99999999999999999999Ei}}}
"#,
        )
        .unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("cluster:\n  nodePools:\n  - name: big\n    count: 1000\n    allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}\n  - name: absurd\n    count: 5000\n    allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}\n")
        .unwrap();
    let out = kivi()
        .args([
            "--format",
            "json",
            "-q",
            "--no-fixes",
            "--timeout",
            "60s",
            "--no-cache",
            "--color",
            "never",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for located in [
        "absurd.yaml:25:13",
        "absurd.yaml:31:61",
        "absurd.yaml:31:75",
        ".kivi-lint.yaml:7:12",
    ] {
        assert!(stderr.contains(located), "{located}: {stderr}");
    }
    // The rest of the run goes on: web is verified (bounded) and its autoscaler's maximum is
    // the topology's pod capacity, not a table of 100000 entries that overflows.
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("default/web"), "{text}");
    assert!(!text.contains("-31072"), "{text}");
}

#[test]
fn huge_files_scalars_and_templates_are_located_errors() {
    let dir = assert_fs::TempDir::new().unwrap();
    // 17 MiB: over the 16 MiB a manifest may have.
    let mut huge = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n");
    while huge.len() < 17 * 1024 * 1024 {
        huge.push_str("  k: ");
        huge.push_str(&"x".repeat(1 << 16));
        huge.push('\n');
    }
    dir.child("huge.yaml").write_str(&huge).unwrap();
    // One 8 MiB scalar in an otherwise valid Deployment.
    dir.child("scalar.yaml")
        .write_str(&format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: long, annotations: {{a: {}}}}}\nspec:\n  selector: {{matchLabels: {{app: long}}}}\n  template:\n    metadata: {{labels: {{app: long}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n",
            "y".repeat(8 << 20)
        ))
        .unwrap();
    dir.child("dup.yaml")
        .write_str("apiVersion: v1\nkind: Pod\nmetadata: {name: dup}\nmetadata: {name: dup2}\nspec: {containers: [{name: c, image: nginx}]}\n")
        .unwrap();
    dir.child("chart-template.yaml")
        .write_str("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\nspec:\n  replicas: {{ .Values.replicas }}\n")
        .unwrap();
    let out = kivi()
        .args(["units", "--color", "never", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("huge.yaml") && stderr.contains("16 MiB"), "{stderr}");
    assert!(
        stderr.contains("dup.yaml:4:1") && stderr.contains("duplicate key `metadata`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("chart-template.yaml:4:10") && stderr.contains("looks like a template"),
        "{stderr}"
    );
    // The long annotation is data, and the Deployment is read.
    assert!(String::from_utf8_lossy(&out.stdout).contains("default/long"));
}

/// A name Kubernetes rejects (here with a terminal escape sequence) is a located input error,
/// shown escaped: no control character from a manifest reaches the terminal or a report.
#[test]
fn names_kubernetes_rejects_are_located_and_escaped() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("app.yaml")
        .write_str("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: \"evil\\u001b[31mRED\", namespace: \"ns\\u0007\"}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: e}}\n  template:\n    metadata: {labels: {app: e}}\n    spec:\n      containers: [{name: c, image: e}]\n")
        .unwrap();
    for format in ["human", "json", "sarif", "github"] {
        let out = kivi()
            .args(["--no-fixes", "--format", format])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}: {out:?}");
        for stream in [&out.stdout, &out.stderr] {
            assert!(
                !stream.contains(&0x1b) && !stream.contains(&0x07),
                "{format}: {}",
                String::from_utf8_lossy(stream)
            );
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("app.yaml:3:"), "{format}: {stderr}");
        assert!(stderr.contains("not a valid Deployment name"), "{format}: {stderr}");
    }
}

// ---------------------------------------------------------------------------------------
// Round 2: what an attacker's pull request and a cancelled CI job do (issue 21).

/// A repository that verifies quickly: one 2-replica Deployment on one node, no events.
fn small_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("app.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join(".kivi-lint.yaml"),
        "cluster:\n  nodePools:\n  - {name: pool, count: 1, allocatable: {cpu: \"4\", memory: 8Gi, pods: 20}}\nevents: []\n",
    )
    .unwrap();
}

/// The verdicts of a JSON report on stdout.
fn report_verdicts(out: &std::process::Output) -> Vec<(String, String)> {
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    common::verdicts(&v)
}

/// CI caches are usually relative paths: `--cache-dir relcache` and KIVI_LINT_CACHE_DIR=relcache
/// verify (pan runs in directories of its own, so the path is made absolute first).
#[test]
fn a_relative_cache_directory_verifies() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(dir.path());
    for by_flag in [true, false] {
        let mut cmd = kivi();
        cmd.current_dir(dir.path())
            .args(["--format", "json", "--no-fixes", "--scale", "current"]);
        if by_flag {
            cmd.args(["--cache-dir", "relcache"]);
        } else {
            cmd.env("KIVI_LINT_CACHE_DIR", "relcache-env");
        }
        let out = cmd.arg(".").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let v = report_verdicts(&out);
        assert!(!v.is_empty() && v.iter().all(|(_, v)| v == "verified"), "{v:?}");
    }
    assert!(dir.path().join("relcache/pan").is_dir());
    assert!(dir.path().join("relcache-env/pan").is_dir());
}

/// A compiler that builds a `pan` printing nothing: nothing is verified without pan's
/// completion report, and the run is inconclusive (exit 3), not cached as verified.
#[test]
fn a_pan_without_its_completion_report_verifies_nothing() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(&dir.path().join("repo"));
    let cc = dir.path().join("fake-cc");
    std::fs::write(
        &cc,
        "#!/bin/sh\n# writes a pan that exits 0 and prints nothing\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; shift; done\nprintf '#!/bin/sh\\nexit 0\\n' > \"$out\"; chmod +x \"$out\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for _ in 0..2 {
        let out = kivi()
            .env("KIVI_CC", &cc)
            .env("KIVI_QUICK_CC", &cc)
            .env("KIVI_LINT_CACHE_DIR", dir.path().join("cache"))
            .args(["--format", "json", "--no-fixes", "--scale", "current"])
            .arg(dir.path().join("repo"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
        let v = report_verdicts(&out);
        assert!(!v.is_empty() && v.iter().all(|(_, v)| v == "inconclusive"), "{v:?}");
    }
}

/// Alias bombs are counted in bytes too: a 1 MB scalar aliased 5,000 times (5 GB once
/// expanded) is a located error at the alias, not gigabytes of memory.
#[test]
fn an_alias_bomb_of_a_large_scalar_is_a_located_error() {
    let dir = assert_fs::TempDir::new().unwrap();
    let big = "A".repeat(1 << 20);
    let aliases = "  - *big\n".repeat(5000);
    dir.child("bomb.yaml")
        .write_str(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: bomb}}\ndata:\n  big: &big \"{big}\"\nlist:\n{aliases}"
        ))
        .unwrap();
    let out = kivi()
        .args(["units", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("alias expansion exceeds 16 MiB"), "{stderr}");
    assert!(stderr.contains("bomb.yaml:"), "{stderr}");
}

/// The repository's own config cannot make the topology enumeration exhaust memory or time:
/// 16 pools of up to 4 nodes under `maxNodes: 64` (5^16 node vectors) and 6 pools of up to
/// 20 nodes are enumerated lazily, smallest first, up to `maxTopologies`, and verified.
#[test]
fn wide_pools_in_the_config_are_enumerated_lazily() {
    for (pools, max, max_nodes) in [(16, 4, 64), (6, 20, 64)] {
        let dir = assert_fs::TempDir::new().unwrap();
        small_repo(dir.path());
        let list: String = (0..pools)
            .map(|i| {
                format!(
                    "  - {{name: p{i}, count: 1, min: 0, max: {max}, labels: {{k{i}: v}}, allocatable: {{cpu: \"{}\", memory: 8Gi, pods: 20}}}}\n",
                    i + 1
                )
            })
            .collect();
        dir.child(".kivi-lint.yaml")
            .write_str(&format!(
                "cluster:\n  nodePools:\n{list}events: []\nscaling: {{maxNodes: {max_nodes}}}\n"
            ))
            .unwrap();
        let out = kivi()
            .args(["--format", "json", "--no-fixes", "--timeout", "60"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let search = &v["units"][0]["verification"]["search"];
        assert_eq!(search["planned"], 100, "{search}");
        assert!(
            search["bound"]
                .as_str()
                .unwrap()
                .contains("scaling.maxTopologies (100)"),
            "{search}"
        );
    }
    // Sixteen interchangeable pools: few canonical topologies per size among astronomically
    // many orderings. The enumeration stops at its budget and says so.
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(dir.path());
    let list: String = (0..16)
        .map(|i| {
            format!(
                "  - {{name: p{i}, count: 1, min: 0, max: 4, allocatable: {{cpu: \"4\", memory: 8Gi, pods: 20}}}}\n"
            )
        })
        .collect();
    dir.child(".kivi-lint.yaml")
        .write_str(&format!(
            "cluster:\n  nodePools:\n{list}events: []\nscaling: {{maxNodes: 64}}\n"
        ))
        .unwrap();
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "--timeout", "120"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let search = &v["units"][0]["verification"]["search"];
    assert!(
        search["bound"]
            .as_str()
            .unwrap()
            .contains("the topology enumeration's budget"),
        "{search}"
    );
}

/// A file name holding a line break and `::error::`, and a source line holding terminal
/// escapes, reach no output raw: stderr and the human report escape them (even with
/// `--color never`), GitHub reads no line of the report as a workflow command but kivi-lint's
/// own, and Markdown keeps no raw HTML or code fence from the input.
#[test]
fn input_text_cannot_inject_workflow_commands_markup_or_terminal_escapes() {
    let dir = assert_fs::TempDir::new().unwrap();
    let name = "a\n::error::pwn\r::stop-commands::x.yaml";
    std::fs::write(
        dir.path().join(name),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx}]\nx: \u{1b}]0;title\u{7}\u{1b}[2J <script>``` [\n",
    )
    .unwrap();
    for format in ["human", "github", "markdown"] {
        let out = kivi()
            .args(["--color", "never", "--no-fixes", "--format", format])
            .arg(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\r'),
                "{format} {what}: {text:?}"
            );
        }
        assert!(stderr.lines().all(|l| !l.starts_with("::")), "{stderr}");
        match format {
            "github" => {
                let commands: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
                let token = commands[1].strip_prefix("::stop-commands::").expect("stop-commands");
                assert_eq!(commands[0], "::group::kivi-lint report");
                assert_eq!(commands[2], format!("::{token}::"));
                assert_eq!(commands[3], "::endgroup::");
                for c in &commands[4..] {
                    assert!(
                        c.starts_with("::error file=") || c.starts_with("::warning ") || c.starts_with("::notice "),
                        "{c}"
                    );
                    assert!(!c.contains('\n'));
                }
            }
            "markdown" => {
                assert!(!stdout.contains("<script"), "{stdout}");
                assert_eq!(stdout.matches("```").count() % 2, 0, "{stdout}");
            }
            _ => assert!(stdout.lines().all(|l| !l.starts_with("::")), "{stdout}"),
        }
    }
}

/// A report file or an emitted model that a pull request committed as a symbolic link is
/// replaced by a regular file: the link's target is never written.
#[test]
fn output_files_never_follow_symbolic_links() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(&dir.path().join("repo"));
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("repo/kivi-lint.sarif")).unwrap();
    std::fs::create_dir_all(dir.path().join("models")).unwrap();
    let out = kivi()
        .current_dir(dir.path().join("repo"))
        .args([
            "--no-fixes",
            "--scale",
            "current",
            "--format",
            "sarif=kivi-lint.sarif",
            "--emit-models",
        ])
        .arg(dir.path().join("models"))
        .arg(".")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let written = dir.path().join("repo/kivi-lint.sarif");
    let meta = std::fs::symlink_metadata(&written).unwrap();
    assert!(!meta.file_type().is_symlink());
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o644
    );
    assert!(
        std::fs::read_to_string(&written)
            .unwrap()
            .contains("\"version\": \"2.1.0\"")
    );
    // The same for a model file that is a link.
    let model = std::fs::read_dir(dir.path().join("models"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "pml"))
        .unwrap();
    std::fs::remove_file(&model).unwrap();
    std::os::unix::fs::symlink(&victim, &model).unwrap();
    kivi()
        .current_dir(dir.path().join("repo"))
        .args(["--no-fixes", "--scale", "current", "--format", "json", "--emit-models"])
        .arg(dir.path().join("models"))
        .arg(".")
        .assert()
        .code(0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::read_to_string(&model).unwrap().contains("proctype"));
}

/// The config of a pull request cannot read the runner's files: `cluster.fromNodes`,
/// `scheduler.config`, `descheduler.policy` and an `apply` directory outside the repository
/// are located errors, and nothing of those files reaches the output.
#[test]
fn config_paths_are_confined_to_the_repository() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(&dir.path().join("repo"));
    std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("outside/id_rsa"), "-----BEGIN SECRET KEY-----\n").unwrap();
    for config in [
        "cluster:\n  fromNodes: /proc/self/environ\n",
        "cluster:\n  fromNodes: ../outside/id_rsa\n",
        "scheduler: {config: ../outside/id_rsa}\n",
        "descheduler: {policy: ../outside/id_rsa}\n",
        "events: [{type: apply, from: ../outside}]\n",
    ] {
        dir.child("repo/.kivi-lint.yaml").write_str(config).unwrap();
        let out = kivi()
            .env("KIVI_SECRET_MARKER", "s3cr3t-value")
            .args(["units"])
            .arg(dir.path().join("repo"))
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{config}: {all}");
        assert!(all.contains("outside the repository"), "{config}: {all}");
        assert!(
            !all.contains("s3cr3t-value") && !all.contains("SECRET KEY"),
            "{config}: {all}"
        );
    }
    // Inside the repository, and with the flag, the path is read.
    std::fs::copy(dir.path().join("outside/id_rsa"), dir.path().join("repo/nodes.yaml")).unwrap();
    dir.child("repo/.kivi-lint.yaml")
        .write_str("cluster:\n  fromNodes: nodes.yaml\n")
        .unwrap();
    let out = kivi().args(["units"]).arg(dir.path().join("repo")).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("outside the repository"));
    dir.child("repo/.kivi-lint.yaml")
        .write_str("cluster:\n  fromNodes: ../outside/id_rsa\n")
        .unwrap();
    let out = kivi()
        .args(["units", "--allow-outside-repository"])
        .arg(dir.path().join("repo"))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("outside the repository"));
}

/// A cancelled CI job (SIGTERM) stops every model-checker run and compiler with its process
/// group, removes its temporary directories and exits 130, within seconds.
#[test]
fn sigterm_stops_every_child_and_cleans_up() {
    let dir = assert_fs::TempDir::new().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // A repository whose search takes far longer than the test: the demo shop, whose
    // production unit runs into the memory limit after tens of seconds.
    std::fs::create_dir_all(dir.path().join("repo")).unwrap();
    common::copy_tree(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo-shop"),
        &dir.path().join("repo"),
    );
    let binary = assert_cmd::cargo::cargo_bin("kivi-lint");
    let mut child = std::process::Command::new(binary)
        .env("TMPDIR", &tmp)
        .args(["--no-cache", "--quiet", "--format", "json"])
        .arg(dir.path().join("repo"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a model-checker run has started in its temporary directory.
    let started = std::time::Instant::now();
    while std::fs::read_dir(&tmp).unwrap().count() == 0 && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let signalled = std::time::Instant::now();
    std::process::Command::new("kill")
        .args(["-s", "TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(signalled.elapsed().as_secs() < 10, "{:?}", signalled.elapsed());
    // No process is left working in the temporary directory, and it is empty.
    std::thread::sleep(std::time::Duration::from_millis(200));
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) {
            assert!(
                !cwd.starts_with(&tmp),
                "process {:?} still runs in {}",
                entry.file_name(),
                cwd.display()
            );
        }
    }
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `-j 10000` is capped at a multiple of the cores: no panic spawning threads.
#[test]
fn absurd_job_counts_are_capped() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(dir.path());
    let out = kivi()
        .args(["-j", "10000", "--no-fixes", "--scale", "current", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Nothing named on the command line passes silently: a FIFO, a device, a link loop and a
/// missing path are located errors (exit 2), never "0 files".
#[test]
fn paths_that_yield_nothing_are_errors() {
    let dir = assert_fs::TempDir::new().unwrap();
    let fifo = dir.path().join("fifo.yaml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let looped = dir.path().join("loop.yaml");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    for (path, says) in [
        (fifo.as_path(), "neither a regular file nor a directory"),
        (Path::new("/dev/zero"), "neither a regular file nor a directory"),
        (looped.as_path(), "symbolic link that cannot be followed"),
        (Path::new("/no/such/path"), "does not exist"),
    ] {
        let out = kivi()
            .args(["units"])
            .arg(path)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", path.display());
        assert!(stderr.contains(says), "{}: {stderr}", path.display());
        // A place, not a code frame of an empty line.
        assert!(!stderr.contains("1 |"), "{stderr}");
    }
}

/// A manifest that is a symbolic link to a file inside the repository is read; one leading
/// out of it is a located warning and is not read; an ignore file that hides every manifest
/// is an error, not a clean scan of nothing; an unreadable directory is an error.
#[test]
fn discovery_never_skips_manifests_silently() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(&dir.path().join("real"));
    std::fs::create_dir_all(dir.path().join("repo")).unwrap();
    std::fs::copy(dir.path().join("real/app.yaml"), dir.path().join("repo/target.txt")).unwrap();
    std::os::unix::fs::symlink("target.txt", dir.path().join("repo/app.yaml")).unwrap();
    std::fs::write(dir.path().join("secret.yaml"), "password: hunter2\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.yaml"), dir.path().join("repo/outside.yaml")).unwrap();
    let out = kivi()
        .args(["units", "--format", "json"])
        .arg(dir.path().join("repo"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["units"].as_array().unwrap().len(), 1, "{stderr}");
    assert!(
        stderr.contains("outside.yaml") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    // A link to a directory is not followed, and says so.
    std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("repo/more")).unwrap();
    let out = kivi().args(["units"]).arg(dir.path().join("repo")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("a symbolic link to a directory is not followed"),
        "{stderr}"
    );
    // A link to a manifest read anyway is not a second copy of its objects.
    std::os::unix::fs::symlink("app.yaml", dir.path().join("repo/latest.yaml")).unwrap();
    let out = kivi()
        .args(["units", "--format", "json"])
        .arg(dir.path().join("repo"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["units"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["summary"]["objects"], 1, "{v}");

    let hidden = dir.path().join("hidden");
    small_repo(&hidden);
    std::fs::write(hidden.join(".ignore"), "*.yaml\n").unwrap();
    let out = kivi().args(["units"]).arg(&hidden).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("hidden by `.gitignore` or `.ignore`"), "{stderr}");

    // An unreadable directory: root reads any, so as root the scan runs as `nobody`
    // (setpriv), in a tree `nobody` may enter.
    let locked = dir.path().join("locked");
    small_repo(&locked.join("sub"));
    std::fs::copy(locked.join("sub/app.yaml"), locked.join("app.yaml")).unwrap();
    for d in [dir.path(), locked.as_path()] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(locked.join("sub"), std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("kivi-lint");
    let as_nobody = || {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&binary);
        c
    };
    let command = if std::fs::read_dir(locked.join("sub")).is_err() {
        Some(std::process::Command::new(&binary))
    } else if as_nobody().arg("--version").output().is_ok_and(|o| o.status.success()) {
        Some(as_nobody())
    } else {
        None
    };
    match command {
        Some(mut command) => {
            let out = command.args(["units", "--no-cache"]).arg(&locked).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("Permission denied"), "{stderr}");
        }
        None => eprintln!("skipped the unreadable-directory case: no way to run without root's reads"),
    }
    std::fs::set_permissions(locked.join("sub"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// The resources-only kustomize shortcut refuses what kustomize refuses: a resource outside
/// the kustomization's directory (the load restrictor) and a resource listed twice go to the
/// real renderer, whose error is reported; neither is read as if kustomize had built it.
#[test]
fn the_kustomize_shortcut_refuses_what_kustomize_refuses() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(&dir.path().join("k"));
    std::fs::copy(dir.path().join("k/app.yaml"), dir.path().join("outside.yaml")).unwrap();
    // (Outside the scanned repository kivi-lint refuses it first; with the flag that lifts
    // that, kustomize's load restrictor does.)
    for (kustomization, says, flag) in [
        ("resources:\n- ../outside.yaml\n", "outside the repository", None),
        (
            "resources:\n- ../outside.yaml\n",
            "is not in or below",
            Some("--allow-outside-repository"),
        ),
        ("resources:\n- app.yaml\n- app.yaml\n", "already registered id", None),
    ] {
        dir.child("k/kustomization.yaml").write_str(kustomization).unwrap();
        let out = kivi()
            .args(["units"])
            .args(flag)
            .arg(dir.path().join("k"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{kustomization}: {stderr}");
        assert!(stderr.contains(says), "{kustomization}: {stderr}");
    }
}

/// A small `--run-memory` (16 to 128 MiB) is a bound, not an engine error: the violations of
/// kivi-c1 are still found and replayed (the replay uses the search's hash table size, not
/// pan's 128 MiB default), and what does not fit is inconclusive.
#[test]
fn a_small_run_memory_is_a_bound_not_an_engine_error() {
    for memory in ["16", "64", "128"] {
        let out = kivi()
            .args([
                "--no-fixes",
                "--format",
                "json",
                "--run-memory",
                memory,
                "fixtures/kivi-c1",
            ])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let results = common::verdicts(&v);
        let text = v.to_string();
        assert!(!text.contains("engineError"), "{memory}: {text}");
        assert!(results.iter().any(|(_, v)| v == "violated"), "{memory}: {results:?}");
        // kivi-c1's violation is a warning: not an error exit either way.
        assert!(matches!(out.status.code(), Some(0 | 1)), "{memory}: {:?}", out.status);
    }
}

/// `kivi-lint -v units DIR` runs the units command (it read `units` as a path and scanned).
#[test]
fn shared_options_before_a_subcommand_keep_the_subcommand() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(dir.path());
    let out = kivi().args(["-v", "units"]).arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("1 unit, 1 workload") && !stdout.contains("checked"),
        "{stdout}"
    );
}

/// The JSON report of one shard (`I/N`) of fixtures/pr-mode/repo.
fn pr_mode_shard(shard: &str) -> String {
    let out = kivi()
        .args([
            "--format",
            "json",
            "-q",
            "--no-fixes",
            "--shard",
            shard,
            "fixtures/pr-mode/repo",
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// `merge` takes shards that partition the units: a forged shard that also verifies another
/// shard's unit, or marks a unit "unchanged" without PR mode, is refused at its file.
#[test]
fn merge_refuses_shards_that_do_not_partition_the_units() {
    let dir = assert_fs::TempDir::new().unwrap();
    let scan = |shard: &str| -> Value { serde_json::from_str(&pr_mode_shard(shard)).unwrap() };
    let one = scan("1/2");
    let two = scan("2/2");
    let path = |name: &str, v: &Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
        p
    };
    let first = path("one.json", &one);
    let mine = one["units"]
        .as_array()
        .unwrap()
        .iter()
        .position(|u| u.get("verification").is_some())
        .unwrap();
    // Shard 2 claims shard 1's unit too.
    let mut both = two.clone();
    both["units"][mine]["verification"] = one["units"][mine]["verification"].clone();
    both["units"][mine].as_object_mut().unwrap().remove("notVerified");
    // Shard 2 calls shard 1's unit unchanged.
    let mut unchanged = two.clone();
    unchanged["units"][mine]["notVerified"] = Value::from("unchanged");
    for (forged, says) in [(both, "verified by two shards"), (unchanged, "marked unchanged")] {
        let second = path("forged.json", &forged);
        let out = kivi().arg("merge").arg(&first).arg(&second).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("forged.json:1:1") && stderr.contains(says), "{stderr}");
    }
}

/// Pools whose `min` add up to more than `scaling.maxNodes` are an error at `maxNodes` that
/// says so (was "no node pool can have a node"); without `maxNodes`, the search grows to
/// the smallest cluster the pools allow.
#[test]
fn pools_larger_than_max_nodes_are_explained() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(dir.path());
    let pools = "cluster:\n  nodePools:\n  - {name: a, count: 5, allocatable: {cpu: \"4\", memory: 8Gi, pods: 20}}\n  - {name: b, count: 4, allocatable: {cpu: \"4\", memory: 8Gi, pods: 20}}\nevents: []\n";
    dir.child(".kivi-lint.yaml")
        .write_str(&format!("{pools}scaling: {{maxNodes: 6}}\n"))
        .unwrap();
    let out = kivi().args(["units"]).arg(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`min` add up to 9 nodes") && stderr.contains(".kivi-lint.yaml:6:"),
        "{stderr}"
    );
    dir.child(".kivi-lint.yaml").write_str(pools).unwrap();
    let out = kivi()
        .args(["--no-fixes", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v = report_verdicts(&out);
    assert!(!v.is_empty() && v.iter().all(|(_, v)| v == "verified"), "{v:?}");
}

/// A renderer that hangs: `--timeout` bounds it (was 120 s under `--timeout 5`), and SIGINT
/// stops it with its process group and removes its wrapper directory (exit 130).
#[test]
fn timeout_and_interrupts_stop_a_hanging_renderer() {
    let dir = assert_fs::TempDir::new().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["kustomize", "kubectl"] {
        let path = bin.join(name);
        std::fs::write(&path, "#!/bin/sh\nsleep 300\n").unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    small_repo(&dir.path().join("k"));
    dir.child("k/kustomization.yaml")
        .write_str("resources:\n- app.yaml\nnamePrefix: x-\n")
        .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let sleeping = || -> usize {
        // Processes running the fake renderer's `sleep 300`.
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x00300\x00"))
            .count()
    };
    let before = sleeping();
    let started = std::time::Instant::now();
    let out = kivi()
        .env("PATH", &path)
        .args(["--timeout", "3", "--no-fixes"])
        .arg(dir.path().join("k"))
        .output()
        .unwrap();
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    assert!(out.status.code().is_some(), "{out:?}");
    assert!(sleeping() <= before, "the renderer's sleep is still running");

    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kivi-lint"))
        .env("PATH", &path)
        .env("TMPDIR", &tmp)
        .args(["--no-fixes", "--quiet"])
        .arg(dir.path().join("k"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    std::process::Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(sleeping() <= before, "the renderer's sleep is still running");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Log lines (`-v`) quote paths too: a config file named with a line break and `::error::`
/// starts no line of stderr.
#[test]
fn log_lines_escape_the_paths_they_quote() {
    let dir = assert_fs::TempDir::new().unwrap();
    small_repo(dir.path());
    let config = dir.path().join("c\n::error::x.yaml");
    std::fs::write(&config, "events: []\n").unwrap();
    let out = kivi()
        .args(["-v", "units", "-c"])
        .arg(&config)
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("using config"), "{stderr}");
    assert!(stderr.lines().all(|l| !l.starts_with("::")), "{stderr}");
}

/// A kustomization naming a pipe or a device as a transformer's config: kivi-lint never opens
/// it (a pipe blocks, a device never ends), reports the entry where it is written and ends.
#[test]
fn kustomize_entries_naming_pipes_or_devices_are_not_read() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("kustomization.yaml")
        .write_str("resources: [cm.yaml]\ntransformers: [pipe, zero]\n")
        .unwrap();
    dir.child("cm.yaml")
        .write_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
        .unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(fifo.success());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("kivi-lint");
    let mut child = std::process::Command::new(binary)
        .args(["--no-fixes", "--format", "json"])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed().as_secs() > 60 {
            let _ = child.kill();
            panic!("kivi-lint still runs after 60 s: it opened the pipe or reads the device");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`pipe` is not a regular file or a directory") && stderr.contains("kustomization.yaml:2"),
        "{stderr}"
    );
}

/// A merged report's file names come from the shards' JSON: the HTML report shows excerpts of
/// repository files only. A shard that names a file outside the repository (absolute, `..`,
/// a symlink out) gets no excerpt, and the file is never read.
#[test]
fn merged_html_reads_no_file_outside_the_repository() {
    let dir = assert_fs::TempDir::new().unwrap();
    let secret = dir.path().join("secret.yaml");
    std::fs::write(&secret, "password: hunter2-outside-the-repository\n".repeat(40)).unwrap();
    let (one, two) = (pr_mode_shard("1/2"), pr_mode_shard("2/2"));
    let manifest = "fixtures/pr-mode/repo/apps/checkout/deployment.yaml";
    assert!(one.contains(manifest) || two.contains(manifest));
    let merge = |first: &str, second: &str| -> String {
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, first).unwrap();
        std::fs::write(&b, second).unwrap();
        let out = kivi()
            .args(["merge", "--format", "html"])
            .arg(&a)
            .arg(&b)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // As the scan wrote them: the manifest's lines are excerpted.
    assert!(merge(&one, &two).contains("maxSkew: 1"));
    // A symlink inside the repository (in a hidden directory no other test scans) to the file.
    // Removed even when an assertion fails.
    struct Removed(std::path::PathBuf);
    impl Drop for Removed {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let links = Removed(std::path::PathBuf::from(format!(
        ".hostile-links-{}",
        std::process::id()
    )));
    let link = links.0.join("outside.yaml");
    let symlinked = std::fs::create_dir_all(&links.0).is_ok() && std::os::unix::fs::symlink(&secret, &link).is_ok();
    let relative = format!("../{}", secret.strip_prefix("/").unwrap().display());
    let mut names = vec![secret.display().to_string(), format!("{}{relative}", "../".repeat(8))];
    if symlinked {
        names.push(link.display().to_string());
    }
    for name in names {
        let forge = |text: &str| text.replace(manifest, &name);
        let html = merge(&forge(&one), &forge(&two));
        assert!(html.contains(&name), "{name}: the forged name is in the report");
        assert!(
            !html.contains("hunter2"),
            "{name}: a file outside the repository was read"
        );
    }
}

/// A cache directory the repository commits (GitLab's template keeps it in the project
/// directory) is not used: its entries could be forged verdicts, and a committed symlink would
/// point kivi-lint's writes outside the repository.
#[test]
fn a_cache_directory_the_repository_commits_is_not_used() {
    let git = |dir: &Path, args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    let outside = assert_fs::TempDir::new().unwrap();
    for symlinked in [false, true] {
        let repo = assert_fs::TempDir::new().unwrap();
        common::copy_tree(&common::root().join("fixtures/kivi-c3"), repo.path());
        let cache = repo.path().join(".kivi-lint-cache");
        if symlinked {
            std::os::unix::fs::symlink(outside.path(), &cache).unwrap();
        } else {
            std::fs::create_dir_all(cache.join("results")).unwrap();
            std::fs::write(cache.join("results/forged.json"), "{}").unwrap();
        }
        git(repo.path(), &["init", "-q"]);
        git(repo.path(), &["add", "-A"]);
        git(repo.path(), &["commit", "-q", "-m", "a change"]);
        let out = kivi()
            .current_dir(repo.path())
            .env("KIVI_LINT_CACHE_DIR", ".kivi-lint-cache")
            .args(["--format", "json", "--no-fixes", "."])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("commits `.kivi-lint-cache") && stderr.contains("running without a cache"),
            "{stderr}"
        );
        let written: Vec<_> = std::fs::read_dir(if symlinked { outside.path().to_path_buf() } else { cache })
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            written.is_empty() || written == ["results"],
            "symlinked {symlinked}: {written:?}"
        );
    }
}

/// A duplicate key in a document that is no Kubernetes object (a static site's config beside
/// the manifests, as bitnami-labs/sealed-secrets' `site/config.yaml`) is a note, not an input
/// error: that document is not read. In a manifest it stays an error (Kubernetes rejects it).
#[test]
fn a_duplicate_key_outside_kubernetes_objects_is_a_note() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("site/config.yaml")
        .write_str("title: docs\nmenu:\n  - name: Overview\n    url: /docs/\n    name: Demo\n")
        .unwrap();
    dir.child("app.yaml")
        .write_str("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: nginx}]}\n")
        .unwrap();
    let out = kivi()
        .args(["units", "--color", "never"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("note: duplicate key `name`") && stderr.contains("config.yaml:5:5"),
        "{stderr}"
    );
    assert!(stderr.contains("not a Kubernetes object"), "{stderr}");
}

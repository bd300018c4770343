//! Robustness over `../shared/corpus/real/` (override with `KIVI_CORPUS`): manifests from public
//! repositories, including files that are hostile to parsers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use assert_cmd::Command;
use kivi_lint::analysis::{Request, analyze};
use serde_json::Value;

mod common;

/// The corpus, or `None` (the test skipped, saying so) where it is not beside the clone.
fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("KIVI_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => common::shared_corpus("real")?,
    };
    assert!(
        dir.join("stats.json").is_file(),
        "corpus not found at {} (set KIVI_CORPUS)",
        dir.display()
    );
    Some(dir)
}

fn stats(corpus: &std::path::Path) -> BTreeMap<String, Value> {
    serde_json::from_str(&std::fs::read_to_string(corpus.join("stats.json")).unwrap()).unwrap()
}

/// Where kivi-lint deliberately counts differently from stats.json, which was made with a
/// plain PyYAML pass: (repository, kind, difference, why).
const DELIBERATE: &[(&str, &str, i64, &str)] = &[
    (
        "prometheus-operator__kube-prometheus",
        "CustomResourceDefinition",
        1,
        "manifests/setup/0alertmanagerConfigCustomResourceDefinition.yaml holds the plain scalar `=`; \
         PyYAML rejects it (YAML 1.1 `value` tag), go-yaml, kubectl and kivi-lint read it",
    ),
    (
        "kubernetes__examples",
        "Policy",
        1,
        "_archived/scheduler-policy/scheduler-policy-config-with-extender.json is valid JSON indented \
         with a tab; PyYAML rejects the tab, kubectl and kivi-lint read it",
    ),
];

/// Reading every file as it is (no rendering), the per-kind object counts are those of
/// stats.json, but for the documented differences; every file yields objects, a located
/// diagnostic or a located note that its documents are not Kubernetes objects.
#[test]
fn raw_counts_match_stats_json() {
    let Some(root) = corpus() else { return };
    for (repo, expected) in stats(&root) {
        let analysis = analyze(&Request {
            paths: vec![root.join(&repo)],
            config: None,
            stdin_filename: None,
            render: false,
            jobs: 2,
            allow_outside_repository: false,
            allow_empty: true,
            repository: None,
            file_ids_from: 0,
            strict: false,
            network: Default::default(),
            cluster_state: None,
        });
        let counts = analysis.objects_by_kind();
        let deliberate = |kind: &str| -> i64 {
            DELIBERATE
                .iter()
                .filter(|d| d.0 == repo && d.1 == kind)
                .map(|d| d.2)
                .sum()
        };
        for pair in expected["top_kinds"].as_array().unwrap() {
            let kind = pair[0].as_str().unwrap();
            let want = pair[1].as_i64().unwrap() + deliberate(kind);
            let got = counts.get(kind).copied().unwrap_or(0) as i64;
            assert_eq!(got, want, "{repo}: objects of kind {kind}");
        }
        let total: i64 = DELIBERATE.iter().filter(|d| d.0 == repo).map(|d| d.2).sum();
        let want_objects = expected["stats"]["objects"].as_i64().unwrap() + total;
        let got_objects = analysis.objects.iter().filter(|o| !o.embedded).count() as i64;
        assert_eq!(got_objects, want_objects, "{repo}: objects");
        if let Some(crds) = expected["stats"].get("CRD") {
            assert_eq!(
                counts.get("CustomResourceDefinition").copied().unwrap_or(0) as i64,
                crds.as_i64().unwrap() + deliberate("CustomResourceDefinition"),
                "{repo}: CRDs"
            );
        }

        // Every file read accounts for itself.
        let mut accounted: BTreeSet<u32> = BTreeSet::new();
        accounted.extend(analysis.objects.iter().map(|o| o.span.file.0));
        accounted.extend(analysis.diagnostics.iter().map(|d| d.span.file.0));
        accounted.extend(analysis.skipped.iter().map(|s| s.span.file.0));
        let config_files: usize = 1; // the embedded default config is the first source
        for id in config_files as u32..analysis.sources.len() as u32 {
            let path = analysis.sources.path(kivi_lint::source::FileId(id));
            assert!(
                accounted.contains(&id),
                "{repo}: {} yields neither objects, diagnostics nor notes",
                path.display()
            );
        }
        assert_eq!(
            analysis.files,
            analysis.sources.len() - config_files,
            "{repo}: files read"
        );
    }
}

/// Rendering kustomize directories (with the real `kubectl kustomize`), every repository gives
/// units or located diagnostics and never crashes.
#[test]
fn every_repository_renders_and_groups() {
    let Some(root) = corpus() else { return };
    for repo in stats(&root).keys() {
        let out = Command::cargo_bin("kivi-lint")
            .unwrap()
            .args(["units", "--format", "json"])
            .arg(root.join(repo))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(matches!(code, Some(0) | Some(2)), "{repo}: exit {code:?}\n{stderr}");
        assert!(!stderr.contains("panicked"), "{repo}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{repo}: {e}"));
        let errors = v["summary"]["errors"].as_u64().unwrap();
        assert_eq!(code == Some(2), errors > 0, "{repo}: exit code follows input errors");
        for d in v["diagnostics"].as_array().unwrap() {
            assert!(
                d["line"].as_u64().unwrap() >= 1 && d["column"].as_u64().unwrap() >= 1,
                "{repo}: {d}"
            );
        }
        // Kustomize renders map objects back to source files, never to the rendered stream.
        for u in v["units"].as_array().unwrap() {
            for m in u["members"].as_array().unwrap() {
                assert!(
                    !m["file"].as_str().unwrap().ends_with("(kustomize build)"),
                    "{repo}: {m}"
                );
            }
        }
    }
}

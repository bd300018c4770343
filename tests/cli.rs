//! End-to-end tests through the binary, on the repositories in `fixtures/`.

use std::path::Path;

use assert_fs::prelude::*;
use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::{copy_tree, kivi, root};

/// Run `kivi-lint units --format json ARGS`, check the exit code, parse stdout.
fn units_json(args: &[&str], code: i32) -> Value {
    let out = kivi()
        .arg("units")
        .arg("--format")
        .arg("json")
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

/// Run `kivi-lint ARGS` with plain output, check the exit code, return (stdout, stderr).
fn run(args: &[&str], code: i32) -> (String, String) {
    let out = kivi()
        .args(args)
        .args(["--color", "never"])
        .assert()
        .code(code)
        .get_output()
        .clone();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn unit_names(v: &Value) -> Vec<String> {
    v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap().to_string())
        .collect()
}

fn member<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["members"].as_array().unwrap())
        .find(|m| {
            let ns = m["namespace"].as_str().map(|n| format!("{n}/")).unwrap_or_default();
            format!("{}/{}{}", m["kind"].as_str().unwrap(), ns, m["name"].as_str().unwrap()) == id
        })
        .unwrap_or_else(|| panic!("no member {id}"))
}

#[test]
fn version_and_help() {
    kivi()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("kivi-lint {}\n", env!("CARGO_PKG_VERSION")));
    kivi()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("units"));
}

#[test]
fn rules_list_every_check() {
    kivi()
        .arg("rules")
        .assert()
        .success()
        .stdout(predicate::str::contains("pods-schedulable (error)"))
        .stdout(predicate::str::contains("aliases: pod_always_schedulable"));
    let out = kivi()
        .args(["rules", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), kivi_lint::checks::CHECKS.len());
}

#[test]
fn config_default_prints_the_embedded_default() {
    kivi()
        .args(["config", "--default"])
        .assert()
        .success()
        .stdout(include_str!("../src/config/default.yaml"));
}

#[test]
fn demo_shop_units_by_overlay_with_source_lines() {
    let v = units_json(&["fixtures/demo-shop"], 0);
    assert_eq!(
        unit_names(&v),
        ["shop/cart (+3 workloads)", "shop-staging/cart (+3 workloads)"]
    );
    assert_eq!(v["config"], "fixtures/demo-shop/.kivi-lint.yaml");
    // Objects rendered by kustomize point at their base files.
    let checkout = member(&v, "Deployment/shop/checkout");
    assert_eq!(
        checkout["file"],
        "fixtures/demo-shop/apps/base/checkout/deployment.yaml"
    );
    assert_eq!(checkout["line"], 1);
    assert_eq!(
        member(&v, "HorizontalPodAutoscaler/shop/frontend")["role"],
        "autoscaler"
    );
    assert_eq!(
        member(&v, "PodDisruptionBudget/shop/frontend")["role"],
        "disruption-budget"
    );
    let policy = member(&v, "DeschedulerPolicy/kube-system/descheduler-policy[policy.yaml]");
    assert_eq!(policy["file"], "fixtures/demo-shop/platform/descheduler-policy.yaml");
    assert_eq!(policy["line"], 8);
    // `exclude: [docs/**]` in the config.
    assert!(!v.to_string().contains("docs-example"));
    let unit = &v["units"][0];
    assert_eq!(unit["scopeKind"], "kustomize");
    assert_eq!(unit["nodePools"], serde_json::json!(["zone-a", "zone-b", "zone-c"]));
    assert!(
        unit["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "no-replica-oscillation")
    );
    assert_eq!(v["cluster"].as_array().unwrap().len(), 3);
    assert_eq!(v["summary"]["errors"], 0);
}

#[test]
fn demo_shop_reports_snapshot() {
    let human = kivi()
        .args(["units", "--color", "never", "fixtures/demo-shop"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!("demo_shop_units_human", String::from_utf8(human).unwrap());
    let json = kivi()
        .args(["units", "--format", "json", "fixtures/demo-shop"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!("demo_shop_units_json", String::from_utf8(json).unwrap());
}

#[test]
fn output_is_deterministic() {
    let run = || {
        kivi()
            .args(["units", "--format", "json", "fixtures/demo-shop", "fixtures/bad-input"])
            .assert()
            .code(2)
            .get_output()
            .stdout
            .clone()
    };
    let first = run();
    for jobs in ["1", "4"] {
        let other = kivi()
            .args([
                "units",
                "--format",
                "json",
                "-j",
                jobs,
                "fixtures/demo-shop",
                "fixtures/bad-input",
            ])
            .assert()
            .code(2)
            .get_output()
            .stdout
            .clone();
        assert_eq!(first, other, "-j {jobs}");
    }
    assert_eq!(first, run());
}

#[test]
fn kivi_c3_violates_pods_schedulable_and_its_twin_is_verified() {
    let (stdout, _) = run(&["fixtures/kivi-c3"], 1);
    for expected in [
        "✗ error pods-schedulable: No feasible node for php-apache-6",
        "--> fixtures/kivi-c3/deploy/php-apache.yaml:26:20",
        "load-change: the pods of Deployment/default/php-apache now use 200% of their cpu request",
        "HorizontalPodAutoscaler/default/php-apache scales Deployment/default/php-apache from 5 to 6 replicas",
        "deployment-controller: creates pod php-apache-6",
        "scheduler: no feasible node for php-apache-6: 3 node(s) would break topologySpreadConstraints[0] (kubernetes.io/hostname, maxSkew 1) or topologySpreadConstraints[1] (topology.kubernetes.io/zone, maxSkew 1)",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?} in:\n{stdout}");
    }
    let dir = assert_fs::TempDir::new().unwrap();
    let (stdout, _) = run(
        &["fixtures/kivi-c3-safe", "--emit-models", dir.path().to_str().unwrap()],
        0,
    );
    assert!(stdout.contains("✓ verified pods-schedulable"), "{stdout}");
    // The emitted model holds no name from the manifests: integers only.
    let model = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(model).unwrap();
    for name in ["php-apache", "zone-a", "zone-b", "kubernetes.io", "hpa-example"] {
        assert!(!text.contains(name), "{name} in the model");
    }
    let out = kivi()
        .args(["--format", "json", "fixtures/kivi-c3"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let result = &v["units"][0]["verification"]["results"][0];
    assert_eq!(result["check"], "pods-schedulable");
    assert_eq!(result["verdict"], "violated");
    assert_eq!(result["line"], 26);
    assert!(result["steps"].as_array().unwrap().len() >= 5);
}

#[test]
fn bad_input_gives_located_errors_and_the_rest_is_read() {
    let assert = kivi()
        .args(["units", "--color", "never", "fixtures/bad-input"])
        .assert()
        .code(2);
    let out = assert.get_output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "fixtures/bad-input/apps/broken.yaml:14:13",
        "fixtures/bad-input/apps/duplicate-keys.yaml:9:3",
        "duplicate key `minAvailable`",
        "fixtures/bad-input/apps/wrong-types.yaml:6:13",
        "`replicas` must be an integer, found the string `three`",
        "fixtures/bad-input/apps/wrong-types.yaml:18:20",
        "`12parsecs` is not a valid quantity",
        "fixtures/bad-input/apps/wrong-types.yaml:21:20",
        "`maxSkew` must be at least 1",
        "fixtures/bad-input/templates-saved-as-yaml/deployment.yaml:4:10",
        "looks like a template",
    ] {
        assert!(stderr.contains(expected), "missing {expected:?} in:\n{stderr}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Every file is still read: good.yaml's Deployment is, but duplicate-keys.yaml's PDB,
    // an input error, acts on it, so it is not verified (a note says why); wrong-types.yaml's
    // Deployment, reported as errors, is not verified as well. Nothing with an input error
    // reaches the model.
    assert!(stdout.contains("2 workloads, 4 objects from 5 files"), "{stdout}");
    assert!(!stdout.contains("Deployment/default/web"), "{stdout}");
    let v = units_json(&["fixtures/bad-input"], 2);
    assert!(
        v["diagnostics"].as_array().unwrap().iter().any(|d| d["message"]
            == "Deployment/default/api is not verified: PodDisruptionBudget/default/api, which acts on it, has input errors"),
        "{v}"
    );
    let errors: Vec<&Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    assert!(errors.len() >= 5, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|d| d["line"].as_u64().unwrap() >= 1 && d["column"].as_u64().unwrap() >= 1)
    );
}

#[test]
fn invalid_utf8_huge_and_hostile_files_are_located_errors() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("latin1.yaml")
        .write_binary(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n")
        .unwrap();
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    dir.child("bomb.yaml").write_str(&bomb).unwrap();
    dir.child("deep.yaml")
        .write_str(&format!(
            "a:\n{}",
            (1..200).map(|i| format!("{}b:\n", "  ".repeat(i))).collect::<String>()
        ))
        .unwrap();
    dir.child("ok.yaml")
        .write_str("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c, image: busybox}]}\n")
        .unwrap();
    let out = kivi()
        .args(["units", "--color", "never"])
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("latin1.yaml:3:21") && stderr.contains("not valid UTF-8"),
        "{stderr}"
    );
    assert!(stderr.contains("billion-laughs"), "{stderr}");
    assert!(stderr.contains("nesting deeper than 128"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Pod/default/ok"));
}

#[test]
fn stdin_is_read_with_its_name() {
    let manifest = std::fs::read_to_string(root().join("fixtures/bad-input/apps/good.yaml")).unwrap();
    let out = kivi()
        .args(["units", "--format", "json", "--stdin-filename", "deploy/api.yaml", "-"])
        .write_stdin(manifest)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(member(&v, "Deployment/default/api")["file"], "deploy/api.yaml");
    assert_eq!(v["scopes"][0]["kind"], "stdin");
}

#[test]
fn kustomize_errors_point_at_base_lines() {
    let (stdout, stderr) = run(&["units", "fixtures/kustomize-provenance"], 2);
    assert!(
        stderr.contains("fixtures/kustomize-provenance/base/deployment.yaml:19:20"),
        "{stderr}"
    );
    // The rendered Deployment carries that error, so it is reported, not verified as well.
    assert!(!stdout.contains("Deployment/prod/prod-api"), "{stdout}");
    let v = units_json(&["fixtures/kustomize-provenance"], 2);
    // Namespace and name prefix come from the overlay, as kustomize renders them.
    assert_eq!(v["summary"]["objectsByKind"]["Deployment"], 1, "{v}");
}

#[test]
fn kustomize_plugins_are_not_run_and_say_so() {
    let (_, stderr) = run(&["units", "fixtures/kustomize-plugin"], 2);
    let at = "fixtures/kustomize-plugin/overlay/kustomization.yaml";
    assert!(
        stderr.contains(&format!("{at}:6:5"))
            && stderr.contains("`generators` entry `secrets-from-vault.yaml` is a kustomize plugin (`apiVersion: someteam.example.com/v1`, `kind: VaultSecretGenerator`)"),
        "{stderr}"
    );
    // One note per kustomization, however many plugins it has.
    assert!(stderr.contains("(and 1 more such entry)"), "{stderr}");
    // The builtin LabelTransformer is not a plugin.
    assert!(!stderr.contains(&format!("{at}:8:")), "{stderr}");
    // A limit of kivi-lint, not a mistake in the repository: a note, counted in the coverage.
    assert!(
        stderr.contains("note: kustomization fixtures/kustomize-plugin/overlay is not verified"),
        "{stderr}"
    );
    let v = units_json(&["--allow-empty", "fixtures/kustomize-plugin"], 0);
    assert_eq!(v["summary"]["notRendered"][0]["limit"], "plugin", "{v}");
    // --strict makes it an error.
    let (_, stderr) = run(&["units", "--strict", "--allow-empty", "fixtures/kustomize-plugin"], 2);
    assert!(
        stderr.contains("error: kustomization fixtures/kustomize-plugin/overlay is not verified"),
        "{stderr}"
    );
}

#[test]
fn remote_kustomize_bases_are_a_located_note_with_the_network_off() {
    let (_, stderr) = run(&["units", "fixtures/remote-base"], 2);
    assert!(
        stderr.contains("fixtures/remote-base/overlay/kustomization.yaml:4:5"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "the remote resource `https://github.com/example/platform//base?ref=v1.2.0` needs the network, which is off"
        ),
        "{stderr}"
    );
    // Nothing else is there, so nothing was verified: the scan says why.
    assert!(stderr.contains("1 source could not be rendered here"), "{stderr}");
    let (stdout, _) = run(&["units", "--allow-empty", "fixtures/remote-base"], 0);
    assert!(
        stdout
            .contains("coverage: 0 of 0 workloads in verification units; not rendered: 1 (remote source, network off)"),
        "{stdout}"
    );
}

/// PATH without any directory that holds a `helm` (scripts/setup installs a real one; the
/// stand-in of `common::kivi_with_helm_stand_in` lives in tests/bin, never on PATH).
fn path_without_helm() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let kept: Vec<&str> = path
        .split(':')
        .filter(|d| !Path::new(d).join("helm").is_file())
        .collect();
    kept.join(":")
}

#[test]
fn helm_chart_without_helm_is_an_input_error() {
    let out = kivi()
        .env("PATH", path_without_helm())
        .args(["units", "--color", "never", "fixtures/helm-chart"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fixtures/helm-chart/charts/web/Chart.yaml:1:1"),
        "{stderr}"
    );
    assert!(stderr.contains("`helm` is not on PATH"), "{stderr}");
}

#[test]
fn helm_chart_is_rendered_with_config_values_and_mapped_to_templates() {
    let args_file = assert_fs::NamedTempFile::new("helm-args").unwrap();
    let out = common::kivi_with_helm_stand_in(args_file.path())
        .args(["units", "--format", "json", "fixtures/helm-chart"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let args: Vec<String> = std::fs::read_to_string(args_file.path())
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    // Options as `--name=value`, the release name and chart after `--`: nothing from the
    // repository can be read by helm as an option.
    assert_eq!(args[..3], ["template", "--namespace=web", "--skip-tests"]);
    assert!(
        args[3].starts_with("--values=") && args[3].ends_with("charts/web/values-prod.yaml"),
        "{args:?}"
    );
    assert_eq!(args[4..6], ["--", "shop"]);
    assert!(args[6].ends_with("fixtures/helm-chart/charts/web"), "{args:?}");
    assert_eq!(args.len(), 7, "{args:?}");
    assert_eq!(unit_names(&v), ["web/shop-web"]);
    let deployment = member(&v, "Deployment/web/shop-web");
    assert_eq!(
        deployment["file"],
        "fixtures/helm-chart/charts/web/templates/deployment.yaml"
    );
    let hpa = member(&v, "HorizontalPodAutoscaler/web/shop-web");
    assert_eq!(hpa["file"], "fixtures/helm-chart/charts/web/templates/hpa.yaml");
    assert_eq!(hpa["line"], 3, "the template's `kind:` line");
    assert_eq!(v["scopes"][1]["kind"], "helm");
}

#[test]
fn from_nodes_snapshot_becomes_pools() {
    let v = units_json(&["fixtures/from-nodes"], 0);
    let pools: Vec<(String, u64)> = v["cluster"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        pools,
        [
            ("default-pool-us-central1-a".to_string(), 2),
            ("default-pool-us-central1-b".to_string(), 1),
            ("gpu-pool-us-central1-a".to_string(), 1)
        ]
    );
    let gpu = &v["cluster"][2];
    assert_eq!(gpu["allocatable"]["cpuMillis"], 7910);
    assert_eq!(gpu["taints"][0]["key"], "nvidia.com/gpu");
    assert!(
        gpu["labels"].get("kubernetes.io/hostname").is_none(),
        "hostname labels are per node"
    );
    let units = v["units"].as_array().unwrap();
    let inference = units.iter().find(|u| u["name"] == "ml/inference").unwrap();
    assert_eq!(inference["nodePools"], serde_json::json!(["gpu-pool-us-central1-a"]));
}

#[test]
fn config_errors_are_located_and_fail_the_run() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str(
            "apiVersion: kivi-lint/v1alpha1\nkind: Config\nscaling: {maxNode: 6}\nchecks: {disable: [no-such-check]}\n",
        )
        .unwrap();
    dir.child("app.yaml")
        .write_str(include_str!("../fixtures/bad-input/apps/good.yaml"))
        .unwrap();
    let out = kivi()
        .args(["units", "--color", "never"])
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".kivi-lint.yaml:3:11"), "{stderr}");
    assert!(
        stderr.contains("unknown field `maxNode` in `scaling`") && stderr.contains("did you mean `maxNodes`?"),
        "{stderr}"
    );
    assert!(stderr.contains("unknown check `no-such-check`"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Deployment/default/api"));
}

#[test]
fn config_is_found_walking_up_or_given() {
    let v = units_json(&["fixtures/demo-shop/apps/production"], 0);
    assert_eq!(v["config"], "fixtures/demo-shop/.kivi-lint.yaml");
    let v = units_json(
        &[
            "-c",
            "fixtures/from-nodes/.kivi-lint.yaml",
            "fixtures/bad-input/apps/good.yaml",
        ],
        0,
    );
    assert_eq!(v["config"], "fixtures/from-nodes/.kivi-lint.yaml");
    assert_eq!(v["cluster"][0]["name"], "default-pool-us-central1-a");
}

#[test]
fn without_config_the_default_is_used_and_said_with_verbose() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".git").create_dir_all().unwrap();
    dir.child("app.yaml")
        .write_str(include_str!("../fixtures/bad-input/apps/good.yaml"))
        .unwrap();
    dir.child("notes.yaml").write_str("just: data\n").unwrap();
    kivi()
        .args(["units", "-v"])
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicate::str::contains("using the embedded default config"))
        .stderr(predicate::str::contains(
            "notes.yaml:1:1: note: skipped: document has no `apiVersion` and `kind`",
        ));
}

#[test]
fn gitignore_and_no_render() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".gitignore").write_str("generated/\n").unwrap();
    dir.child("generated/app.yaml")
        .write_str(include_str!("../fixtures/bad-input/apps/good.yaml"))
        .unwrap();
    dir.child("keep/app.yaml")
        .write_str(&include_str!("../fixtures/bad-input/apps/good.yaml").replace("name: api", "name: kept"))
        .unwrap();
    let v = units_json(&[dir.path().to_str().unwrap()], 0);
    assert_eq!(unit_names(&v), ["default/kept"]);
    // Without rendering, a kustomize base is read file by file.
    // Its base and its overlay's patch each define the Deployment: two directories, so two
    // environments, never one merged object. Both have input errors (the base `maxSkew: 0`,
    // the patch no pod template), so neither is verified as well.
    let v = units_json(&["--no-render", "fixtures/kustomize-provenance"], 2);
    assert_eq!(v["summary"]["renders"], 0);
    assert_eq!(v["summary"]["objectsByKind"]["Kustomization"], 2);
    assert_eq!(v["summary"]["objectsByKind"]["Deployment"], 2);
    assert!(unit_names(&v).is_empty(), "{v}");
}

#[test]
fn color_quiet_and_missing_paths() {
    kivi()
        .args(["units", "--color", "always", "fixtures/bad-input"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("\u{1b}["));
    kivi()
        .args(["units", "--color", "never", "fixtures/bad-input"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("\u{1b}[").not());
    kivi()
        .env("NO_COLOR", "1")
        .args(["units", "fixtures/bad-input"])
        .assert()
        .stderr(predicate::str::contains("\u{1b}[").not());
    kivi()
        .args(["units", "-q", "fixtures/from-nodes", "fixtures/remote-base"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("warning").not());
    kivi()
        .args(["units", "--color", "never", "no/such/dir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/dir:1:1"))
        .stderr(predicate::str::contains("does not exist"));
}

#[test]
fn units_edges_explain_grouping() {
    let v = units_json(&["fixtures/demo-shop/apps/production"], 0);
    let edges = v["units"][0]["edges"].as_array().unwrap();
    assert!(edges.iter().any(|e| e["from"] == "Deployment/shop/cart"
        && e["to"] == "StatefulSet/shop/cart-redis"
        && e["reason"] == "its podAffinity selects their pods"));
}

/// Run a fixture through the check command and compare every listed check's verdict.
fn assert_verdicts(fixture: &str, code: i32, expected: &[(&str, &str)]) {
    let out = kivi()
        .args(["--format", "json", &format!("fixtures/{fixture}")])
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let results = v["units"][0]["verification"]["results"].as_array().unwrap();
    for (check, verdict) in expected {
        let r = results
            .iter()
            .find(|r| r["check"] == *check)
            .unwrap_or_else(|| panic!("{fixture}: no {check}"));
        assert_eq!(r["verdict"], *verdict, "{fixture}: {check}: {r}");
        if *verdict == "violated" {
            assert!(
                r["steps"].as_array().is_some_and(|s| !s.is_empty()),
                "{fixture}: {check} has a trace"
            );
            assert!(r["line"].as_u64().is_some(), "{fixture}: {check} points at a line");
        }
    }
}

/// Every fixture with an `expected.txt` (Kivi's eight cases, the labeled corpus's cases and
/// one violating fixture per check, each with its safe twin) reaches the exit code and the
/// verdict of every check it lists. c1's finding is of a warning-level check, which does not
/// fail the run. The fixtures run two at a time.
#[test]
fn every_fixture_reaches_its_expected_verdicts() {
    let expected = common::expected_verdicts();
    assert!(expected.len() > 20, "fixtures/*/expected.txt: {}", expected.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(e) = expected.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let pairs: Vec<(&str, &str)> = e.verdicts.iter().map(|(c, v)| (c.as_str(), v.as_str())).collect();
                    assert_verdicts(&e.fixture, e.exit, &pairs);
                }
            });
        }
    });
}

/// Every metric type the autoscaling API defines is modelled (memory and ContainerResource
/// too): no warning, and the autoscaler's checks apply. A type the API does not define is a
/// located input error (exit 2), as the API server rejects it.
#[test]
fn autoscaler_metrics_are_modelled_and_unknown_types_are_errors() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 256Mi}}}]\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 8\n  metrics:\n";
    let units = |metric: &str, code: i32| {
        let dir = assert_fs::TempDir::new().unwrap();
        dir.child("app.yaml")
            .write_str(&format!("{deployment}{metric}"))
            .unwrap();
        let assert = common::kivi()
            .args(["units", "--format", "json"])
            .arg(dir.path())
            .assert()
            .code(code);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
        let units: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
        let checks: Vec<String> = units["units"][0]["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        (stderr, checks)
    };
    for metric in [
        "  - type: ContainerResource\n    containerResource: {name: cpu, container: c, target: {type: Utilization, averageUtilization: 60}}\n",
        "  - type: Resource\n    resource: {name: memory, target: {type: Utilization, averageUtilization: 75}}\n",
        "  - type: Resource\n    resource: {name: memory, target: {type: AverageValue, averageValue: 200Mi}}\n",
        "  - type: Pods\n    pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: '100'}}\n",
    ] {
        let (stderr, checks) = units(metric, 0);
        assert!(!stderr.contains("warning"), "{metric}: {stderr}");
        assert!(
            checks.iter().any(|c| c == "no-replica-oscillation"),
            "{metric}: {checks:?}"
        );
    }
    let (stderr, _) = units("  - type: Memory\n    resource: {name: memory}\n", 2);
    assert!(stderr.contains("app.yaml:20:11"), "{stderr}");
    assert!(stderr.contains("`Memory` is not a metric type"), "{stderr}");
}

/// An extended resource is filtered like cpu: the trace names it when it is what does not fit.
#[test]
fn extended_resources_are_named_in_the_trace() {
    let out = common::stdout_of(&["fixtures/gpu-rollout"], 1);
    assert!(
        out.contains("1 node(s) lack cpu, memory, pod slots or nvidia.com/gpu"),
        "{out}"
    );
    assert!(out.contains("set `maxSurge: 0` and `maxUnavailable: 1`"), "{out}");
}

/// The scheduler profile's addedAffinity, which the pod's manifest does not show, is named in
/// the trace and located in the KubeSchedulerConfiguration.
#[test]
fn added_affinity_is_named_and_located() {
    let out = common::stdout_of(&["fixtures/added-affinity-daemonset", "--format", "github"], 1);
    assert!(
        out.contains("the scheduler profile's addedAffinity excludes 1 of them"),
        "{out}"
    );
    assert!(out.contains("platform/kube-scheduler-config.yaml,line=12"), "{out}");
}

/// A RequestedToCapacityRatio strategy needs a valid shape: a bad one is a located input error
/// (exit 2), and the rest of the scan still runs.
#[test]
fn invalid_ratio_shape_is_a_located_error() {
    let dir = assert_fs::TempDir::new().unwrap();
    copy_tree(&root().join("fixtures/lownodeutilization-binpacking-safe"), dir.path());
    std::fs::write(
        dir.path().join("platform/kube-scheduler-config.yaml"),
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: default-scheduler\n    pluginConfig:\n      - name: NodeResourcesFit\n        args:\n          scoringStrategy:\n            type: RequestedToCapacityRatio\n            requestedToCapacityRatio:\n              shape: [{utilization: 80, score: 10}, {utilization: 20, score: 0}]\n",
    )
    .unwrap();
    let assert = common::kivi().arg(dir.path()).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("kube-scheduler-config.yaml:11:"), "{stderr}");
    assert!(stderr.contains("strictly increasing"), "{stderr}");
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(stdout.contains("unit checked"), "{stdout}");
}

/// The cluster autoscaler's trace says what it did and why it did not help: the node the cloud
/// started in the wrong zone, and the scale-up that never came (kubernetes/autoscaler#4848).
#[test]
fn autoscaler_traces_name_the_zone_and_the_missing_scale_up() {
    let out = common::stdout_of(
        &["--format", "json", "--no-fixes", "fixtures/autoscaler-zone-template"],
        1,
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let r = &v["units"][0]["verification"]["results"][0];
    let steps = steps_of(r);
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("cluster-autoscaler: adds workers-4 to pool workers")
                && s.contains("the cloud starts it in eu-central-1a")),
        "{steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("cluster-autoscaler: no scale-up for web-")),
        "{steps:#?}"
    );
    let nodes = r["topology"]["nodeList"].as_array().unwrap();
    assert_eq!(
        nodes.iter().filter(|n| n["absent"] == true).count(),
        9,
        "3 slots in each of 3 zones"
    );
    let out = common::stdout_of(
        &[
            "--format",
            "json",
            "--no-fixes",
            "fixtures/autoscaler-scale-down-downtime",
        ],
        1,
    );
    assert!(out.contains("is unneeded") && out.contains("evicts api-1"), "{out}");
}

/// Run real git in `dir`, with an identity for commits.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `apply` from a git ref: the committed revision is what the cluster runs, the working tree
/// is applied over it (the pull-request case). Real git.
#[test]
fn apply_from_a_git_ref_reads_the_committed_revision() {
    let dir = assert_fs::TempDir::new().unwrap();
    let fixture = std::path::Path::new("fixtures/apply-drops-replicas");
    for file in [".kivi-lint.yaml", "deploy/hpa.yaml"] {
        dir.child(file)
            .write_str(&std::fs::read_to_string(fixture.join(file)).unwrap())
            .unwrap();
    }
    let config = std::fs::read_to_string(fixture.join(".kivi-lint.yaml"))
        .unwrap()
        .replace("from: revisions/previous", "from: HEAD");
    dir.child(".kivi-lint.yaml").write_str(&config).unwrap();
    dir.child("deploy/storefront.yaml")
        .write_str(&std::fs::read_to_string(fixture.join("revisions/previous/deploy/storefront.yaml")).unwrap())
        .unwrap();
    let git = |args: &[&str]| git(dir.path(), args);
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "release"]);
    // The change under review: replicas removed.
    dir.child("deploy/storefront.yaml")
        .write_str(&std::fs::read_to_string(fixture.join("deploy/storefront.yaml")).unwrap())
        .unwrap();
    let out = kivi()
        .args(["--format", "json"])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let results = v["units"][0]["verification"]["results"].as_array().unwrap();
    let r = results.iter().find(|r| r["check"] == "min-replicas-available").unwrap();
    assert_eq!(r["verdict"], "violated", "{r}");
    assert!(r["steps"].to_string().contains("kubectl apply removes it"), "{r}");

    // A ref that does not exist is a located error.
    dir.child(".kivi-lint.yaml")
        .write_str(&config.replace("from: HEAD", "from: no-such-branch"))
        .unwrap();
    kivi()
        .args(["--color", "never"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(".kivi-lint.yaml:"))
        .stderr(predicate::str::contains(
            "`no-such-branch` is not a directory or a git ref",
        ));
}

/// The steps of the first violated check of a fixture, as `actor: message` lines.
fn violation_steps(fixture: &str, check: &str) -> Vec<String> {
    let out = kivi()
        .args(["--format", "json", &format!("fixtures/{fixture}")])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = v["units"][0]["verification"]["results"].as_array().unwrap();
    let r = results.iter().find(|r| r["check"] == check).expect("the check");
    steps_of(r)
}

/// A check result's counterexample steps as `actor: message`.
fn steps_of(result: &Value) -> Vec<String> {
    result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{}: {}", s["actor"].as_str().unwrap(), s["message"].as_str().unwrap()))
        .collect()
}

/// The informer delivers the deletion of the pod it had not delivered, not of the replacement
/// that took its slot; pods-balanced points at the per-node spread constraint, not at the
/// pod template.
#[test]
fn stale_read_trace_names_the_deleted_pod_and_balance_points_at_the_spread() {
    let steps = violation_steps("stale-reads-spread", "pods-balanced");
    let undelivered = steps.iter().find_map(|s| {
        s.strip_prefix("informer: has not delivered the deletion of ")
            .and_then(|rest| rest.split(' ').next())
    });
    let undelivered = undelivered.expect("a stale read");
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with(&format!("informer: delivers the deletion of {undelivered} from"))),
        "{steps:#?}"
    );
    let out = kivi()
        .args(["--format", "json", "fixtures/stale-reads-spread"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = v["units"][0]["verification"]["results"].as_array().unwrap();
    let r = results.iter().find(|r| r["check"] == "pods-balanced").unwrap();
    // `- maxSkew: 1` of the hostname constraint (DoNotSchedule), line 17.
    assert_eq!(
        (r["line"].as_u64(), r["column"].as_u64()),
        (Some(17), Some(20)),
        "{r:#}"
    );
}

#[test]
fn node_failure_trace_names_the_failed_node_and_the_pending_replacement() {
    let steps = violation_steps("zone-outage-spread", "pods-schedulable");
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("node-failure: zone-") && s.contains("stops reporting")),
        "{steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("taint-eviction-controller: deletes checkout-")),
        "{steps:#?}"
    );
    assert!(
        steps.iter().any(|s| s.contains("no feasible node for checkout-4")
            && s.contains("1 node(s) are not ready")
            && s.contains("topologySpreadConstraints[0] (topology.kubernetes.io/zone, maxSkew 1)")),
        "{steps:#?}"
    );
}

#[test]
fn statefulset_pods_start_in_ordinal_order_and_daemonset_pods_on_every_node() {
    let steps = violation_steps("statefulset-ordered-stuck", "pods-schedulable");
    let created: Vec<&String> = steps.iter().filter(|s| s.contains("creates pod")).collect();
    assert_eq!(created.len(), 3, "{steps:#?}");
    // OrderedReady: each ordinal is created only once the one before it runs.
    for (k, name) in ["db-0", "db-1", "db-2"].iter().enumerate() {
        assert!(
            created[k].starts_with(&format!("statefulset-controller: creates pod {name}")),
            "{steps:#?}"
        );
    }
    let started = |name: &str| {
        steps
            .iter()
            .position(|s| s.contains(&format!("starts {name} ")))
            .unwrap()
    };
    let creating = |name: &str| {
        steps
            .iter()
            .position(|s| s.contains(&format!("creates pod {name}")))
            .unwrap()
    };
    assert!(
        started("db-0") < creating("db-1") && started("db-1") < creating("db-2"),
        "{steps:#?}"
    );

    let steps = violation_steps("daemonset-overhead", "pods-schedulable");
    for node in ["pool-1-1", "pool-1-2", "pool-1-3"] {
        assert_eq!(
            steps
                .iter()
                .filter(|s| s.contains("binds log-agent-") && s.ends_with(&format!("to {node}")))
                .count(),
            1,
            "one agent on {node}: {steps:#?}"
        );
    }
}

#[test]
fn eventually_stable_violations_are_lassos() {
    // A livelock: taint eviction and the ReplicaSet undo each other forever.
    let steps = violation_steps("noexecute-reschedule-loop", "eventually-stable");
    let cycle = steps
        .iter()
        .position(|s| s.starts_with("cycle: from here on, the steps below repeat forever"))
        .unwrap_or_else(|| panic!("a cycle marker: {steps:#?}"));
    let repeating = &steps[cycle + 1..];
    assert!(
        repeating
            .iter()
            .any(|s| s.starts_with("taint-eviction-controller: evicts")),
        "{steps:#?}"
    );
    assert!(repeating.iter().any(|s| s.contains("creates pod")), "{steps:#?}");
    // GitOps sync against the HPA (Kivi's c2): the replica count never settles.
    let steps = violation_steps("kivi-c2", "eventually-stable");
    let cycle = steps.iter().position(|s| s.starts_with("cycle:")).expect("a cycle");
    assert!(
        steps[cycle + 1..]
            .iter()
            .any(|s| s.starts_with("gitops-sync: re-applies")),
        "{steps:#?}"
    );
    assert!(
        steps[cycle + 1..]
            .iter()
            .any(|s| s.starts_with("horizontal-pod-autoscaler:")),
        "{steps:#?}"
    );
}

#[test]
fn drain_trace_says_no_budget_protects_the_pod() {
    let steps = violation_steps("drain-pdb", "min-replicas-available");
    assert!(
        steps.iter().any(|s| s.starts_with("node-drain: cordons pool-1-")),
        "{steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("node-drain: evicts api-") && s.ends_with("no PodDisruptionBudget selects it")),
        "{steps:#?}"
    );
}

#[test]
fn fail_on_sets_the_level_that_fails_the_run() {
    // kivi-c1's only finding is of the warning-level no-replica-oscillation.
    kivi()
        .args(["--fail-on", "warning", "-q", "fixtures/kivi-c1"])
        .assert()
        .code(1);
    kivi()
        .args(["--fail-on", "note", "-q", "fixtures/kivi-c1"])
        .assert()
        .code(1);
    kivi()
        .args(["--fail-on", "never", "-q", "fixtures/kivi-c3"])
        .assert()
        .code(0);
    kivi()
        .args(["--fail-on", "sometimes", "fixtures/kivi-c3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--fail-on"));
}

#[test]
fn required_anti_affinity_leaves_the_fourth_replica_pending() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".git").create_dir_all().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: worker, count: 3, min: 3, max: 3, allocatable: {cpu: '4', memory: 16Gi}}\nevents: []\n")
        .unwrap();
    dir.child("redis.yaml")
        .write_str(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: redis}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: redis}}\n  template:\n    metadata: {labels: {app: redis}}\n    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            - topologyKey: kubernetes.io/hostname\n              labelSelector: {matchLabels: {app: redis}}\n      containers: [{name: redis, image: redis, resources: {requests: {cpu: 100m}}}]\n",
        )
        .unwrap();
    let out = kivi()
        .args(["--color", "never"])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8(out).unwrap();
    assert!(stdout.contains("✗ error pods-schedulable"), "{stdout}");
    assert!(stdout.contains("redis.yaml:13:28"), "{stdout}");
    assert!(
        stdout.contains("no feasible node for redis-3: 3 node(s) would break podAntiAffinity required term 0 (kubernetes.io/hostname) of StatefulSet/default/redis"),
        "{stdout}"
    );
}

#[test]
fn missing_spin_says_how_to_install_it() {
    kivi()
        .env("KIVI_SPIN", "/no/such/spin")
        .args(["--color", "never", "fixtures/kivi-c3-safe"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "install SPIN (Debian and Ubuntu: `apt-get install spin`; macOS: `brew install spin`)",
        ));
}

#[test]
fn verification_output_is_deterministic() {
    let run = || {
        kivi()
            .args(["--format", "json", "fixtures/kivi-c3"])
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone()
    };
    let first = run();
    assert_eq!(first, run());
    let v: Value = serde_json::from_slice(&first).unwrap();
    assert!(v["units"][0]["verification"]["states"].as_u64().unwrap() > 0);
}

/// JSON, SARIF and JUnit are byte-identical across runs and `-j` (each run is a new process,
/// with its own hash seeds, and no cache).
#[test]
fn reports_are_byte_identical_across_runs_and_jobs() {
    let dir = assert_fs::TempDir::new().unwrap();
    let run = |jobs: &str, name: &str| -> Vec<Vec<u8>> {
        let files: Vec<std::path::PathBuf> = ["json", "sarif", "junit"]
            .iter()
            .map(|f| dir.path().join(format!("{name}.{f}")))
            .collect();
        let mut cmd = kivi();
        cmd.args(["-q", "--no-cache", "-j", jobs]);
        for (format, file) in ["json", "sarif", "junit"].iter().zip(&files) {
            cmd.arg("--format").arg(format!("{format}={}", file.display()));
        }
        cmd.args(["fixtures/kivi-c3", "fixtures/kivi-c1-safe"]).assert().code(1);
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    };
    let first = run("1", "a");
    assert_eq!(first, run("2", "b"), "-j 1 and -j 2 differ");
    assert_eq!(first, run("2", "c"), "two runs differ");
    assert!(first.iter().all(|r| r.len() > 100));
}

#[test]
fn timeout_stops_the_scan_with_a_report_of_what_is_undecided() {
    let out = kivi()
        .args([
            "--format",
            "json",
            "--no-cache",
            "--no-fixes",
            "--timeout",
            "1",
            // A unit whose search takes far longer than the second (kivi-c4 now finishes
            // within it on a fast machine).
            "fixtures/demo-shop/apps/production",
        ])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(1 | 3)), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--timeout of 1 s reached"), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the scan's --timeout of 1 s was reached"), "{text}");
    assert!(!text.contains("\"verdict\": \"verified\""), "{text}");
    // Durations are checked.
    kivi()
        .args(["--timeout", "soon", "fixtures/kivi-c4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a duration"));
}

/// Run a scan with `--format json` and its own cache directory; parse stdout.
fn scan_json(args: &[&str], cache: &Path) -> (i32, Value) {
    let out = kivi()
        .args(["--format", "json", "-q", "--cache-dir"])
        .arg(cache)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// The verification part of a report, without what depends on the machine or the cache.
fn verdicts(report: &Value) -> Value {
    let mut units = report["units"].as_array().unwrap().clone();
    for u in &mut units {
        if let Some(v) = u["verification"].as_object_mut() {
            v.remove("states");
        }
    }
    Value::Array(units.into_iter().map(|u| u["verification"].clone()).collect())
}

#[test]
fn scaling_search_reports_the_smallest_violating_topology() {
    let cache = assert_fs::TempDir::new().unwrap();
    let (code, report) = scan_json(&["fixtures/kivi-c3"], cache.path());
    assert_eq!(code, 1);
    let v = &report["units"][0]["verification"];
    // zone-a 1..2 × zone-b 1 × php-apache 5..6 replicas: 4 topologies, smallest first.
    assert_eq!(v["search"]["planned"], 4);
    assert_eq!(v["search"]["explored"], 4);
    let r = v["results"].as_array().unwrap();
    let violated = r.iter().find(|r| r["check"] == "pods-schedulable").unwrap();
    assert_eq!(violated["verdict"], "violated");
    assert_eq!(violated["topology"]["nodesPerPool"], serde_json::json!([2, 1]));
    assert_eq!(violated["topology"]["replicas"]["Deployment/default/php-apache"], 5);
    let verified = r.iter().find(|r| r["check"] == "min-replicas-available").unwrap();
    assert_eq!(verified["verdict"], "verified");
    assert_eq!(verified["topology"]["nodes"], 3);

    // One topology only: the pools' count today.
    let (code, report) = scan_json(&["--scale", "current", "fixtures/kivi-c3"], cache.path());
    assert_eq!(code, 1);
    assert_eq!(report["units"][0]["verification"]["search"]["planned"], 1);
    kivi()
        .args(["--scale", "0", "fixtures/kivi-c3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--scale"));
}

#[test]
fn verdicts_do_not_depend_on_jobs_or_the_cache() {
    let cache = assert_fs::TempDir::new().unwrap();
    for fixture in ["fixtures/kivi-c8", "fixtures/kivi-c1"] {
        let (code1, one) = scan_json(&["-j", "1", "--no-cache", fixture], cache.path());
        let (code2, two) = scan_json(&["-j", "2", fixture], cache.path());
        // The second run with the same cache takes its verdicts from the result cache.
        let (code3, again) = scan_json(&["-j", "2", fixture], cache.path());
        assert_eq!((code1, code2, code3), (code1, code1, code1));
        assert_eq!(verdicts(&one), verdicts(&two), "{fixture}: -j 1 and -j 2 differ");
        assert_eq!(verdicts(&two), verdicts(&again), "{fixture}: the cached run differs");
    }
    // The cache holds compiled models and results.
    assert!(cache.path().join("pan").is_dir());
    assert!(std::fs::read_dir(cache.path().join("results")).unwrap().count() >= 2);
}

#[test]
fn cached_run_says_so() {
    let cache = assert_fs::TempDir::new().unwrap();
    let run = || {
        kivi()
            .args(["--color", "never", "-q", "--cache-dir"])
            .arg(cache.path())
            .arg("fixtures/kivi-c6-safe")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let first = String::from_utf8(run()).unwrap();
    assert!(!first.contains("result cache"), "{first}");
    let second = String::from_utf8(run()).unwrap();
    assert!(second.contains("verdicts from the result cache"), "{second}");
}

/// `fixtures/pr-mode/repo` committed in a fresh git repository (real git).
fn pr_mode_repository() -> assert_fs::TempDir {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("repo").create_dir_all().unwrap();
    copy_tree(&root().join("fixtures/pr-mode/repo"), &dir.path().join("repo"));
    let git = |args: &[&str]| git(&dir.path().join("repo"), args);
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    dir
}

/// The results of the unit whose name is `name`, or `None` when it was not verified.
fn unit_results<'a>(report: &'a Value, name: &str) -> Option<&'a Vec<Value>> {
    let unit = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == name)
        .unwrap_or_else(|| panic!("no unit {name}"));
    unit["verification"]["results"].as_array()
}

#[test]
fn pr_mode_verifies_changed_units_and_reports_new_violations() {
    let dir = pr_mode_repository();
    let repo = dir.path().join("repo");
    let cache = dir.path().join("cache");
    let scan = |extra: &[&str]| {
        let out = kivi()
            .current_dir(&repo)
            .args(["--format", "json", "-q", "--changed-since", "HEAD", "--cache-dir"])
            .arg(&cache)
            .args(extra)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code().unwrap(), report)
    };

    // Nothing changed: nothing is verified, and the existing violation does not fail the run.
    let (code, report) = scan(&[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["changedSince"]["unchangedUnits"], 2);
    for u in report["units"].as_array().unwrap() {
        assert_eq!(u["notVerified"], "unchanged", "{u}");
        assert!(u.get("verification").is_none());
    }

    // The pull request: checkout changes but keeps its violation; search gains one.
    copy_tree(&root().join("fixtures/pr-mode/change"), &repo);
    let (code, report) = scan(&[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["changedSince"]["unchangedUnits"], 0);
    assert_eq!(report["changedSince"]["existingFindingsHidden"], 1);
    let search = unit_results(&report, "search/search").unwrap();
    let new = search.iter().find(|r| r["verdict"] == "violated").unwrap();
    assert_eq!(new["check"], "pods-schedulable");
    assert_eq!(new["baselineState"], "new");
    assert_eq!(new["file"], "apps/search/deployment.yaml");
    let checkout = unit_results(&report, "checkout/checkout").unwrap();
    assert!(checkout.iter().all(|r| r["verdict"] == "verified"), "{checkout:?}");

    // --all-findings keeps the existing violation, marked as such.
    let (code, report) = scan(&["--all-findings"]);
    assert_eq!(code, 1);
    let checkout = unit_results(&report, "checkout/checkout").unwrap();
    let existing = checkout.iter().find(|r| r["verdict"] == "violated").unwrap();
    assert_eq!(existing["baselineState"], "unchanged");
    kivi()
        .current_dir(&repo)
        .args([
            "--color",
            "never",
            "-q",
            "--changed-since",
            "HEAD",
            "--all-findings",
            "--cache-dir",
        ])
        .arg(&cache)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("(also on HEAD)"));

    // The human report says what PR mode left out.
    kivi()
        .current_dir(&repo)
        .args(["--color", "never", "-q", "--changed-since", "HEAD", "--cache-dir"])
        .arg(&cache)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "changed since HEAD: 0 units unchanged, not verified again; 1 violation also on HEAD not shown",
        ));

    // A ref that does not exist, and a directory outside any repository, are input errors.
    kivi()
        .current_dir(&repo)
        .args(["--changed-since", "no-such-branch"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`no-such-branch` is not a directory or a git ref",
        ));
    let outside = assert_fs::TempDir::new().unwrap();
    kivi()
        .current_dir(outside.path())
        .args(["--changed-since", "HEAD"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not in a git repository"));
}

/// A base revision with two violations of one check shows one; a pull request that fixes it
/// is not blamed for the other (`fixtures/pr-mode-hidden`).
#[test]
fn pr_mode_does_not_blame_a_pull_request_for_a_violation_the_fixed_one_hid() {
    let dir = assert_fs::TempDir::new().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    copy_tree(&root().join("fixtures/pr-mode-hidden/repo"), &repo);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let cache = dir.path().join("cache");
    let scan = || {
        let out = kivi()
            .current_dir(&repo)
            .args([
                "--format",
                "json",
                "-q",
                "--all-findings",
                "--changed-since",
                "HEAD",
                "--cache-dir",
            ])
            .arg(&cache)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code().unwrap(), report)
    };
    let drain = |report: &Value| {
        let results = report["units"][0]["verification"]["results"]
            .as_array()
            .unwrap()
            .clone();
        results.into_iter().find(|r| r["check"] == "drain-completes").unwrap()
    };
    copy_tree(&root().join("fixtures/pr-mode-hidden/change"), &repo);
    let (code, report) = scan();
    assert_eq!(code, 1, "{report}");
    let found = drain(&report);
    assert_eq!(found["verdict"], "violated", "{found}");
    // `api`'s budget, `maxUnavailable: 0`.
    assert_eq!(found["line"], 45, "{found}");
    assert_eq!(found["baselineState"], "unchanged", "{found}");

    // The same edit that also breaks `api`'s budget, which the base kept: new.
    let fixed = std::fs::read_to_string(repo.join("app.yaml")).unwrap();
    git(&repo, &["checkout", "-q", "app.yaml"]);
    let base = std::fs::read_to_string(repo.join("app.yaml")).unwrap();
    std::fs::write(
        repo.join("app.yaml"),
        base.replace("maxUnavailable: 0", "maxUnavailable: 1"),
    )
    .unwrap();
    git(&repo, &["commit", "-q", "-am", "api may lose a pod"]);
    std::fs::write(repo.join("app.yaml"), fixed).unwrap();
    let (code, report) = scan();
    assert_eq!(code, 1, "{report}");
    let found = drain(&report);
    // `api`'s budget, `maxUnavailable: 0`.
    assert_eq!(found["line"], 45, "{found}");
    assert_eq!(found["baselineState"], "new", "{found}");
}

#[test]
fn shards_merge_into_the_report_of_one_run() {
    let dir = assert_fs::TempDir::new().unwrap();
    let cache = dir.path().join("cache");
    let scan = |extra: &[&str], out: &str| {
        let output = kivi()
            .args(["--format", "json", "-q", "--cache-dir"])
            .arg(&cache)
            .args(extra)
            .arg("fixtures/pr-mode/repo")
            .output()
            .unwrap();
        std::fs::write(dir.path().join(out), &output.stdout).unwrap();
        let report = serde_json::from_slice::<Value>(&output.stdout).unwrap();
        (output.status.code().unwrap(), report)
    };
    let (code, whole) = scan(&[], "whole.json");
    assert_eq!(code, 1);
    // Each shard's exit code is about its own units: one has the violation.
    let (code1, one) = scan(&["--shard", "1/2"], "shard-1.json");
    let (code2, two) = scan(&["--shard", "2/2"], "shard-2.json");
    assert_eq!(code1 + code2, 1);
    // Each shard verifies one of the two units and says the other is another shard's.
    for (shard, index) in [(&one, 1), (&two, 2)] {
        assert_eq!(shard["shard"], serde_json::json!({"index": index, "count": 2}));
        let units = shard["units"].as_array().unwrap();
        assert_eq!(units.iter().filter(|u| u.get("verification").is_some()).count(), 1);
        assert_eq!(units.iter().filter(|u| u["notVerified"] == "other-shard").count(), 1);
    }
    let path = |f: &str| dir.path().join(f).display().to_string();
    let merged = kivi()
        .args([
            "merge",
            "--format",
            "json",
            &path("shard-2.json"),
            &path("shard-1.json"),
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let merged: Value = serde_json::from_slice(&merged).unwrap();
    // The merged report is the unsharded one.
    assert_eq!(merged, whole);

    // Any format.
    kivi()
        .args([
            "merge",
            "--color",
            "never",
            &path("shard-1.json"),
            &path("shard-2.json"),
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("2 units checked: 1 violated"));
    // A missing shard, a shard given twice, and a file that is not a report are input errors.
    kivi()
        .args(["merge", &path("shard-1.json")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shard 2/2 is missing"));
    kivi()
        .args(["merge", &path("shard-1.json"), &path("shard-1.json")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("given twice"));
    dir.child("bad.json")
        .write_str("{\"schemaVersion\": 2,\n  \"tool\": 7\n")
        .unwrap();
    kivi()
        .args(["merge", &path("bad.json"), &path("shard-1.json")])
        .assert()
        .code(2)
        .stderr(predicate::str::is_match(r"bad\.json:\d+:\d+: error: not JSON").unwrap());
    kivi()
        .args(["--shard", "3/2", "fixtures/pr-mode/repo"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected I/N"));
}

/// Two apps alike but for their names: one search, each counterexample in its own names.
#[test]
fn units_alike_but_for_names_share_one_search() {
    let dir = assert_fs::TempDir::new().unwrap();
    copy_tree(&root().join("fixtures/pr-mode/repo"), dir.path());
    copy_tree(
        &root().join("fixtures/pr-mode/change/apps/search"),
        &dir.path().join("apps/search"),
    );
    let out = kivi()
        .args(["--color", "never", "-q", "--no-cache"])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let human = String::from_utf8(out).unwrap();
    assert_eq!(
        human.matches("the same models and inputs as unit").count(),
        1,
        "{human}"
    );
    let (code, report) = scan_json(&["--no-cache", &dir.path().display().to_string()], dir.path());
    assert_eq!(code, 1);
    for app in ["checkout", "search"] {
        let results = unit_results(&report, &format!("{app}/{app}")).unwrap();
        let violated = results.iter().find(|r| r["verdict"] == "violated").unwrap();
        let steps = violated["steps"].to_string();
        assert!(steps.contains(&format!("Deployment/{app}/{app}")), "{steps}");
        let file = violated["file"].as_str().unwrap();
        assert!(file.ends_with(&format!("apps/{app}/deployment.yaml")), "{file}");
    }
}

/// The fix of each violated check, from the JSON report.
fn fixes(fixture: &str, extra: &[&str]) -> Vec<(String, Option<String>)> {
    let out = kivi()
        .args(["--format", "json", &format!("fixtures/{fixture}")])
        .args(extra)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["verification"]["results"].as_array().unwrap())
        .filter(|r| r["verdict"] == "violated")
        .map(|r| {
            (
                r["check"].as_str().unwrap().to_string(),
                r["fix"]["summary"].as_str().map(String::from),
            )
        })
        .collect()
}

/// Fix candidates cost model-checker runs: by default only error-level findings get them.
#[test]
fn warnings_get_fixes_only_on_request() {
    let found = fixes("kivi-c1", &[]);
    let (_, summary) = found
        .iter()
        .find(|(c, _)| c == "no-replica-oscillation")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(summary, &None, "{found:?}");
}

#[test]
fn violations_come_with_fixes_the_model_checker_verified() {
    // Warning-level findings (no-replica-oscillation, eventually-stable) get fixes on request.
    let expect = |fixture: &str, check: &str, fix: &str| {
        let found = fixes(fixture, &["--fixes-for", "warning"]);
        let (_, summary) = found
            .iter()
            .find(|(c, _)| c == check)
            .unwrap_or_else(|| panic!("{fixture}: {found:?}"));
        assert!(
            summary.as_deref().is_some_and(|s| s.contains(fix)),
            "{fixture}: {check}: {summary:?}"
        );
    };
    expect(
        "kivi-c3",
        "pods-schedulable",
        "set `whenUnsatisfiable: ScheduleAnyway` on topologySpreadConstraints[0]",
    );
    expect(
        "drain-blocked-by-pdb",
        "drain-completes",
        "replace `minAvailable` with `maxUnavailable: 1`",
    );
    expect(
        "antiaffinity-rollout",
        "rollout-completes",
        "set `maxSurge: 0` and `maxUnavailable: 1`",
    );
    expect(
        "statefulset-ordered-stuck",
        "pods-schedulable",
        "make podAntiAffinity term 0 (kubernetes.io/hostname)",
    );
    expect(
        "kivi-c8",
        "no-eviction-loop",
        "balance only `DoNotSchedule` constraints",
    );
    expect(
        "noexecute-reschedule-loop",
        "no-eviction-loop",
        "remove `tolerationSeconds` from toleration 0",
    );
    expect(
        "kivi-c2",
        "eventually-stable",
        "leave `spec.replicas` out of the manifest of Deployment/default/frontend",
    );
    // Kivi's own fixes for c1 and c6.
    expect(
        "kivi-c1",
        "no-replica-oscillation",
        "`readinessProbe.initialDelaySeconds: 120`",
    );
    expect(
        "kivi-c6",
        "min-replicas-available",
        "set `whenUnsatisfiable: DoNotSchedule` on topologySpreadConstraints[0]",
    );
    expect("kivi-c7", "no-eviction-loop", "remove `spec.nodeName: edge-1`");
    // Fixes found through the counterexample's steps, or computed from the cluster.
    expect("kivi-c4", "no-node-overload", "from 1320m to 1300m");
    expect("kivi-c4", "min-replicas-available", "from 1320m to 1300m");
    expect("daemonset-overhead", "pods-schedulable", "from 1600m to 1500m");
    expect(
        "autoscaler-scale-down-downtime",
        "min-replicas-available",
        "run 2 replicas of Deployment/billing/api and add a PodDisruptionBudget with `maxUnavailable: 1`",
    );
    expect("drain-pdb", "min-replicas-available", "add a PodDisruptionBudget");
    expect(
        "apply-drops-replicas",
        "min-replicas-available",
        "`kubectl apply edit-last-applied`",
    );
    expect(
        "kivi-c5",
        "min-replicas-available",
        "disable the descheduler plugin RemoveDuplicates",
    );
    // A violation no manifest change fixes gets no fix, and --no-fixes looks for none.
    assert!(fixes("stale-reads-spread", &[]).iter().all(|(_, f)| f.is_none()));
    assert!(fixes("kivi-c3", &["--no-fixes"]).iter().all(|(_, f)| f.is_none()));
}

/// Issue 41 (6): an acknowledged (suppressed) finding is one line and its place in the human
/// report, not its whole trace; `-v` shows the trace.
#[test]
fn suppressed_findings_print_no_trace_unless_verbose() {
    let short = common::stdout_of(&["--color", "never", "fixtures/suppressed"], 0);
    assert!(short.contains("(suppressed: "), "{short}");
    assert!(
        short.contains("its fix and its 20 steps are left out (-v shows them)"),
        "{short}"
    );
    assert!(!short.contains("[1] deployment-controller"), "{short}");
    let full = common::stdout_of(&["--color", "never", "-v", "fixtures/suppressed"], 0);
    assert!(full.contains("[1] deployment-controller"), "{full}");
}

/// Issue 41 (6): one fix, printed once. A root finding without a fix of its own shows the
/// fixes verified for what its cause also breaks; the same fix verified for several of them is
/// one line naming each (a report read back by `kivi-lint merge`, with gpu-rollout's
/// rollout-completes fix copied onto two more results of the same cause).
#[test]
fn a_fix_shared_by_several_findings_is_printed_once() {
    let out = common::kivi()
        .args(["--format", "json", "-q", "fixtures/gpu-rollout"])
        .output()
        .unwrap();
    let mut report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = report["units"][0]["verification"]["results"].as_array_mut().unwrap();
    let borrowed = results
        .iter()
        .find(|r| r["causedBy"] == "pods-schedulable" && r["fix"].is_object())
        .expect("gpu-rollout's rollout-completes carries the fix")
        .clone();
    for check in ["min-replicas-available", "eventually-stable"] {
        let mut copy = borrowed.clone();
        copy["check"] = Value::from(check);
        results.push(copy);
    }
    let dir = assert_fs::TempDir::new().unwrap();
    let file = dir.path().join("report.json");
    std::fs::write(&file, serde_json::to_string(&report).unwrap()).unwrap();
    let out = common::kivi()
        .args(["merge", "--color", "never", "--format", "human"])
        .arg(&file)
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert_eq!(human.matches("fix: set `maxSurge: 0`").count(), 1, "{human}");
    assert!(
        human.contains("verified for rollout-completes, min-replicas-available, eventually-stable on"),
        "{human}"
    );
}

/// Issue 41 (6): a unit leads with one block per independent problem (headline, place, fix,
/// what else it breaks), then every other check, then the counterexamples. A violation of the
/// same cause has no line of its own.
#[test]
fn a_unit_leads_with_its_problems_each_said_once() {
    let out = common::stdout_of(&["--color", "never", "-q", "fixtures/kivi-c2"], 1);
    let at = |text: &str| out.find(text).unwrap_or_else(|| panic!("no {text:?} in {out}"));
    let problem = at("✗ error min-replicas-available: Deployment/default/frontend has 1 available replica");
    let consequence = at("    also breaks eventually-stable (warning)");
    let verified = at("✓ verified pods-schedulable");
    let trace = at("  min-replicas-available counterexample:");
    assert!(
        problem < consequence && consequence < verified && verified < trace,
        "{out}"
    );
    assert!(!out.contains("✗ warning eventually-stable"), "{out}");
    assert_eq!(out.matches("fix: leave `spec.replicas` out").count(), 1, "{out}");
}

/// A `--config` that cannot be read is exit 2 at once, with its located error in the reports:
/// the default cluster is not verified in its place. And a human report asked for with a
/// file is not printed to stdout as well.
#[test]
fn an_unreadable_config_stops_before_verifying_and_a_human_file_is_not_echoed() {
    let dir = assert_fs::TempDir::new().unwrap();
    let json = dir.path().join("report.json");
    let out = kivi()
        .args(["--no-cache", "fixtures/kivi-c3", "--config"])
        .arg(dir.path().join("missing.yaml"))
        .arg("--format")
        .arg(format!("json={}", json.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing.yaml:1:1"), "{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        report["units"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["verification"].is_null()),
        "{report}"
    );
    assert_eq!(report["summary"]["errors"], 1, "{report}");

    let human = dir.path().join("report.txt");
    let out = kivi()
        .args(["--no-cache", "--no-fixes", "fixtures/kivi-c3-safe", "--format"])
        .arg(format!("human={}", human.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        std::fs::read_to_string(&human)
            .unwrap()
            .contains("✓ verified pods-schedulable")
    );
}

/// Without spin nothing can be verified: every check is inconclusive with the engine's error
/// (exit 2), in every report asked for, not a run that writes none.
#[test]
fn without_spin_the_reports_say_why_nothing_was_verified() {
    let bin = assert_fs::TempDir::new().unwrap();
    for tool in ["kubectl", "helm", "git", "cc", "gcc", "tcc"] {
        if let Ok(path) = which(tool) {
            std::os::unix::fs::symlink(path, bin.path().join(tool)).unwrap();
        }
    }
    let dir = assert_fs::TempDir::new().unwrap();
    let json = dir.path().join("report.json");
    let out = kivi()
        .env("PATH", bin.path())
        .env_remove("KIVI_SPIN")
        .args(["--no-cache", "fixtures/kivi-c3", "--format"])
        .arg(format!("json={}", json.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = report["units"][0]["verification"]["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{report}");
    for r in results {
        assert_eq!(r["verdict"], "inconclusive", "{r}");
        assert_eq!(r["engineError"], true, "{r}");
        assert!(r["reason"].as_str().unwrap().contains("spin"), "{r}");
    }
}

/// The path of `tool` on PATH.
fn which(tool: &str) -> Result<std::path::PathBuf, ()> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

/// A Node whose name the API server would reject is a located error (exit 2) and no node of a
/// pool: the other nodes' pools are as they were.
#[test]
fn from_nodes_leaves_out_a_node_with_an_invalid_name() {
    let dir = assert_fs::TempDir::new().unwrap();
    common::copy_tree(&root().join("fixtures/from-nodes"), dir.path());
    let nodes = std::fs::read_to_string(dir.path().join("nodes.yaml")).unwrap();
    let first = nodes.split("\n- apiVersion: v1\n").nth(1).unwrap();
    let bad = first.replace(
        "\n    name: gke-prod-default-pool-1a2b3c4d-6xkq",
        "\n    name: Bad_Node",
    );
    std::fs::write(
        dir.path().join("nodes.yaml"),
        nodes.replacen("items:\n", &format!("items:\n- apiVersion: v1\n{bad}\n"), 1),
    )
    .unwrap();
    let out = kivi()
        .args(["units", "--format", "json", "--color", "never"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("nodes.yaml:") && stderr.contains("Bad_Node"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let counts: Vec<u64> = v["cluster"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [2, 1, 1], "{}", v["cluster"]);
}

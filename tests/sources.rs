//! What a GitOps repository deploys, rendered for real: Helm charts with `file://` and remote
//! dependencies, chart-testing values, charts that need values, Flux HelmReleases and Flux
//! post-build substitution, with a real `helm` (scripts/setup installs it) and the network off.
//! Fixtures: `fixtures/helm-sources`, `fixtures/flux-postbuild` (their READMEs say what each
//! case is and where it comes from).

mod common;

use common::kivi;
use serde_json::Value;

fn helm_on_path() {
    assert!(
        which::which("helm").is_ok(),
        "these tests render charts with a real Helm: run scripts/setup (or scripts/install-helm)"
    );
}

fn json(args: &[&str], code: i32) -> Value {
    let out = kivi().args(args).assert().code(code).get_output().stdout.clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

fn unit<'v>(v: &'v Value, scope: &str) -> &'v Value {
    v["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["scope"] == scope)
        .unwrap_or_else(|| panic!("no unit of scope {scope}: {v}"))
}

fn verdict(u: &Value, check: &str) -> String {
    u["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == check)
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn charts_render_with_their_sources_and_what_cannot_be_had_is_a_counted_note() {
    helm_on_path();
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "fixtures/helm-sources"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);

    // A `file://` dependency is rendered with its parent, located in its own templates, with
    // the parent's values (3 replicas, no autoscaler).
    let umbrella = unit(&v, "fixtures/helm-sources/charts/umbrella");
    let members = umbrella["members"].as_array().unwrap();
    assert!(
        members
            .iter()
            .any(|m| m["kind"] == "Deployment"
                && m["file"] == "fixtures/helm-sources/charts/web/templates/deployment.yaml"),
        "{umbrella}"
    );
    assert!(
        !members.iter().any(|m| m["kind"] == "HorizontalPodAutoscaler"),
        "{umbrella}"
    );

    // chart-testing: one scope per `ci/*-values.yaml`.
    unit(&v, "fixtures/helm-sources/charts/tested/ci/large-values.yaml");
    unit(&v, "fixtures/helm-sources/charts/tested/ci/small-values.yaml");

    // The HelmRelease's chart, as helm-controller installs it: release `shop-web`
    // (targetNamespace-name) in `shop`, the ConfigMap's 5 replicas and the inline
    // `minAvailable: 5`, which blocks every drain.
    let release = unit(&v, "fixtures/helm-sources/charts/web (HelmRelease flux-system/web)");
    assert_eq!(release["name"], "shop/shop-web-web", "{release}");
    assert_eq!(verdict(release, "drain-completes"), "violated", "{release}");
    // The chart alone, with its own values, drains.
    assert_eq!(
        verdict(unit(&v, "fixtures/helm-sources/charts/web"), "drain-completes"),
        "verified"
    );

    // What cannot be rendered: one located note each, counted, never an error.
    assert_eq!(v["summary"]["errors"], 0, "{stderr}");
    let limits: Vec<(&str, &str)> = v["summary"]["notRendered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["limit"].as_str().unwrap(), n["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        limits,
        vec![
            ("network-off", "chart fixtures/helm-sources/charts/remote-dep"),
            ("needs-values", "chart fixtures/helm-sources/charts/needs-values"),
            ("network-off", "HelmRelease podinfo/podinfo"),
        ]
    );
    for at in [
        "fixtures/helm-sources/charts/remote-dep/Chart.yaml:7:17",
        "fixtures/helm-sources/charts/needs-values/templates/deployment.yaml:15:20",
        "fixtures/helm-sources/flux/releases.yaml:43:14",
    ] {
        assert!(stderr.contains(at), "{at} in {stderr}");
    }
    assert!(stderr.contains("image.tag is required"), "{stderr}");

    // --strict: every one of them is an input error.
    let strict = json(&["units", "--format", "json", "--strict", "fixtures/helm-sources"], 2);
    assert_eq!(strict["summary"]["errors"], 3, "{strict}");
}

#[test]
fn the_coverage_line_ends_the_human_report() {
    helm_on_path();
    let out = kivi()
        .args(["units", "--color", "never", "fixtures/helm-sources"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8_lossy(&out);
    assert!(
        stdout.ends_with(
            "coverage: 5 of 5 workloads in verification units; not rendered: 2 (remote source, network off), 1 (chart needs values)\n"
        ),
        "{stdout}"
    );
}

#[test]
fn flux_post_build_values_reach_the_verified_objects_and_locate_the_finding() {
    let v = json(&["--format", "json", "--no-fixes", "fixtures/flux-postbuild"], 1);
    let u = &v["units"][0];
    // `${APP_NAMESPACE}` and `${API_REPLICAS}` from the ConfigMap of `substituteFrom`.
    assert_eq!(u["name"], "payments/api", "{u}");
    let drain = u["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "drain-completes")
        .unwrap();
    assert_eq!(drain["verdict"], "violated", "{drain}");
    // `minAvailable: ${MIN_AVAILABLE}` is decided by the Kustomization's `substitute`: the
    // finding points there.
    let text = drain.to_string();
    assert!(
        text.contains("fixtures/flux-postbuild/clusters/production/apps.yaml"),
        "{text}"
    );
    assert!(v["summary"]["notRendered"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn a_placeholder_nothing_fills_leaves_its_document_out_with_a_note() {
    let dir = assert_fs::TempDir::new().unwrap();
    let manifest = dir.path().join("app.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ${NAMESPACE}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: \"web:${TAG}\"}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: ${NAMESPACE:-shop}\nspec:\n  replicas: ${REPLICAS:-2}\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      containers: [{name: api, image: \"api:${TAG}\"}]\n",
    )
    .unwrap();
    let path = manifest.to_str().unwrap();
    let out = kivi()
        .args(["units", "--format", "json", path])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `api` has defaults for what is read (an image tag is not): verified as `shop/api`.
    assert_eq!(v["units"][0]["name"], "shop/api", "{v}");
    assert_eq!(v["units"].as_array().unwrap().len(), 1, "{v}");
    assert!(stderr.contains("app.yaml:5:14"), "{stderr}");
    assert!(
        stderr.contains("`${NAMESPACE}` is filled in at deploy time"),
        "{stderr}"
    );
    assert_eq!(v["summary"]["notRendered"][0]["limit"], "placeholder", "{v}");
}

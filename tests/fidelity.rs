//! Model fidelity, round 2 (issue 20): behaviours the model got wrong, each against upstream.
//! Items 1 and 2 (the Recreate arithmetic, the descheduler's NodeFit) are conformance cases in
//! `tests/conformance/local/`; these run whole scans.

mod common;

use assert_fs::prelude::*;
use common::{kivi, root, verdicts};
use serde_json::Value;

/// A cold scan of `dir` with JSON output: its `(check, verdict)` pairs and the process output.
fn scan(dir: &std::path::Path) -> (Vec<(String, String)>, std::process::Output) {
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "--no-cache"])
        .arg(dir)
        .output()
        .unwrap();
    (
        verdicts(&serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)),
        out,
    )
}

const CLUSTER: &str = "cluster:\n  nodePools:\n    - {name: worker, count: 3, min: 3, max: 3, allocatable: {cpu: '8', memory: 32Gi, pods: 110}}\n";

/// Item 4. Ready pods in their startup phase take their share of the demand: with a startup
/// usage equal to the target, GetResourceReplicas never sees more than the target, so the
/// autoscaler never scales (kivi-c1, whose startup usage is twice its target, still
/// oscillates: `tests/cli.rs`).
#[test]
fn pods_in_their_startup_phase_share_the_demand() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str(&format!(
            "apiVersion: kivi-lint/v1alpha1\nkind: Config\n{CLUSTER}workloads:\n  Deployment/default/api:\n    usage: {{cpu: 500m}}\n    startup: {{cpu: '1', seconds: 120}}\nevents: []\nchecks:\n  enable: [no-replica-oscillation, pods-schedulable]\n"
        ))
        .unwrap();
    dir.child("api.yaml")
        .write_str(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 5\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      containers:\n      - name: c\n        image: api:1\n        resources: {requests: {cpu: '1', memory: 1Gi}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: api}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  minReplicas: 5\n  maxReplicas: 10\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 100}}\n",
        )
        .unwrap();
    let (v, out) = scan(dir.path());
    assert!(
        v.contains(&("no-replica-oscillation".into(), "verified".into())),
        "{v:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A copy of fixtures/apply-drops-replicas' manifests (not its config) in a temporary directory,
/// and the fixture's path.
fn apply_fixture() -> (assert_fs::TempDir, std::path::PathBuf) {
    let dir = assert_fs::TempDir::new().unwrap();
    let fixture = root().join("fixtures/apply-drops-replicas");
    for file in [
        "deploy/hpa.yaml",
        "deploy/storefront.yaml",
        "revisions/previous/deploy/hpa.yaml",
        "revisions/previous/deploy/storefront.yaml",
    ] {
        dir.child(file)
            .write_str(&std::fs::read_to_string(fixture.join(file)).unwrap())
            .unwrap();
    }
    (dir, fixture)
}

/// Item 5. `apply.from` is read whatever `include` selects: a previous revision outside the
/// include globs is still the cluster's state before the apply (the drop below the HPA minimum
/// is found), and a previous revision without workloads is an input error (exit 2).
#[test]
fn the_previous_revision_is_read_whatever_include_selects() {
    let (dir, fixture) = apply_fixture();
    let config = std::fs::read_to_string(fixture.join(".kivi-lint.yaml")).unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str(&format!("{config}include: [\"deploy/**\"]\n"))
        .unwrap();
    let (v, out) = scan(dir.path());
    assert!(
        v.contains(&("min-replicas-available".into(), "violated".into())),
        "{v:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A previous revision with nothing to apply over.
    std::fs::remove_dir_all(dir.path().join("revisions/previous/deploy")).unwrap();
    dir.child("revisions/previous/README.md")
        .write_str("nothing\n")
        .unwrap();
    let (_, out) = scan(dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds no workloads"), "{stderr}");
    assert!(stderr.contains(".kivi-lint.yaml:"), "{stderr}");
}

/// An `apply` that changes the only workload's pod template rolls it out; the rollout event then
/// has no workload left to roll out, and the model must not stop there (it blocked inside its
/// atomic step: every check came back as an engine error, "the model stopped without a check
/// failing").
#[test]
fn a_rollout_after_an_apply_rolled_everything_out_is_no_engine_error() {
    let (dir, fixture) = apply_fixture();
    let current = std::fs::read_to_string(fixture.join("deploy/storefront.yaml")).unwrap();
    assert!(current.contains("storefront:7.2.0"), "{current}");
    dir.child("deploy/storefront.yaml")
        .write_str(&current.replace("storefront:7.2.0", "storefront:7.3.0"))
        .unwrap();
    let config = std::fs::read_to_string(fixture.join(".kivi-lint.yaml")).unwrap();
    let config = config.replace(
        "enable: [min-replicas-available, pods-schedulable]",
        "enable: [min-replicas-available, pods-schedulable, rollout-completes]",
    );
    assert!(config.contains("rollout-completes"), "{config}");
    dir.child(".kivi-lint.yaml").write_str(&config).unwrap();
    let (v, out) = scan(dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        v.contains(&("min-replicas-available".into(), "violated".into())),
        "{v:?}\n{stderr}"
    );
    assert!(
        v.iter().all(|(_, verdict)| verdict != "inconclusive"),
        "{v:?}\n{stderr}"
    );
    assert_ne!(out.status.code(), Some(2), "{stderr}");
}

/// Item 3. Identical pods are one class (symmetry reduction), so a workload of 210 replicas —
/// more pod slots than a model held before (200) — is verified, not "beyond the model's
/// bounds"; 2 nodes of 110 pods hold them all.
#[test]
fn two_hundred_identical_pods_are_verified() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: workers, count: 2, min: 2, max: 2, allocatable: {cpu: '64', memory: 256Gi, pods: 110}}\nevents: []\nchecks:\n  enable: [pods-schedulable]\n")
        .unwrap();
    dir.child("app.yaml")
        .write_str("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: many}\nspec:\n  replicas: 210\n  selector: {matchLabels: {app: many}}\n  template:\n    metadata: {labels: {app: many}}\n    spec:\n      containers:\n      - name: c\n        image: many:1\n        resources: {requests: {cpu: 10m, memory: 16Mi}}\n")
        .unwrap();
    let (v, out) = scan(dir.path());
    assert_eq!(
        v,
        vec![("pods-schedulable".to_string(), "verified".to_string())],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Item 6. The TaintTolerationComparisonOperators gate is a config switch: on (the default),
/// a `Gt` toleration admits the pod onto a node whose taint value is larger; off, it
/// tolerates nothing, with a located note, and the pod stays Pending.
#[test]
fn the_comparison_operator_gate_is_a_config_switch() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("app.yaml")
        .write_str("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: batch}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: batch}}\n  template:\n    metadata: {labels: {app: batch}}\n    spec:\n      tolerations:\n      - {key: sla, operator: Gt, value: '900', effect: NoSchedule}\n      containers:\n      - name: c\n        image: batch:1\n        resources: {requests: {cpu: 100m}}\n")
        .unwrap();
    let run = |gate: &str| {
        dir.child(".kivi-lint.yaml")
            .write_str(&format!(
                "apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {{name: workers, count: 1, min: 1, max: 1, allocatable: {{cpu: '4', memory: 16Gi, pods: 110}}, taints: [{{key: sla, value: '950', effect: NoSchedule}}]}}\nevents: []\nchecks:\n  enable: [pods-schedulable]\n{gate}"
            ))
            .unwrap();
        let (v, out) = scan(dir.path());
        (v, String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (on, _) = run("");
    assert_eq!(on, vec![("pods-schedulable".to_string(), "verified".to_string())]);
    let (off, stderr) = run("featureGates: {TaintTolerationComparisonOperators: false}\n");
    assert_eq!(
        off,
        vec![("pods-schedulable".to_string(), "violated".to_string())],
        "{stderr}"
    );
    assert!(
        stderr.contains("app.yaml:11:") && stderr.contains("feature gate is off"),
        "{stderr}"
    );
}

/// Item 6 (metrics). An HPA on Pods, Object, External or memory (Resource and
/// ContainerResource) metrics acts in the model: the load level moves its metrics against
/// their targets, and the largest proposal wins. With room for two 3-cpu pods per pool of 3
/// nodes, maxReplicas 6 on such a metric is unschedulable; maxReplicas 3 is not. Before, the
/// model's autoscaler did not act on such an HPA and both verified.
#[test]
fn an_autoscaler_on_custom_metrics_scales() {
    for (max, expected) in [(6, "violated"), (3, "verified")] {
        for metric in [
            "- type: External\n    external:\n      metric: {name: queue_messages_ready}\n      target: {type: AverageValue, averageValue: '30'}\n",
            "- type: Pods\n    pods:\n      metric: {name: requests_per_second}\n      target: {type: AverageValue, averageValue: '100'}\n",
            "- type: Object\n    object:\n      describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main}\n      metric: {name: requests_per_second}\n      target: {type: Value, value: '2k'}\n",
            "- type: Resource\n    resource: {name: memory, target: {type: Utilization, averageUtilization: 70}}\n",
            "- type: Resource\n    resource: {name: memory, target: {type: AverageValue, averageValue: 700Mi}}\n",
            "- type: ContainerResource\n    containerResource: {name: memory, container: c, target: {type: Utilization, averageUtilization: 70}}\n",
        ] {
            let dir = assert_fs::TempDir::new().unwrap();
            dir.child(".kivi-lint.yaml")
                .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: w, count: 3, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents:\n  - {type: load-change, workloads: ['*'], max: 300%}\nchecks:\n  enable: [pods-schedulable]\n")
                .unwrap();
            dir.child("worker.yaml")
                .write_str(&format!(
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: worker}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: worker}}}}\n  template:\n    metadata: {{labels: {{app: worker}}}}\n    spec:\n      containers:\n      - name: c\n        image: worker:1\n        resources: {{requests: {{cpu: '3', memory: 1Gi}}}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: worker}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: worker}}\n  minReplicas: 2\n  maxReplicas: {max}\n  metrics:\n  {metric}"
                ))
                .unwrap();
            let (v, out) = scan(dir.path());
            assert!(
                v.contains(&("pods-schedulable".into(), expected.into())),
                "maxReplicas {max}, {metric}: {v:?}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Item 6 (stabilisation and policy periods). The autoscaler keeps upstream's logs with age
/// classes for time (docs/conformance.md, "Time in the autoscaler"). With a long scale-down window and
/// policy periods longer than the sync period in both directions, a decision the logs hold
/// back is taken again once time has moved an entry past a boundary: every wait ends, so
/// eventually-stable holds, and nothing else is claimed.
#[test]
fn an_autoscaler_waits_out_its_windows_and_periods() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: w, count: 3, min: 3, max: 3, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents:\n  - {type: load-change, workloads: ['*'], max: 300%}\nchecks:\n  enable: [eventually-stable, pods-schedulable]\n")
        .unwrap();
    dir.child("api.yaml")
        .write_str("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      containers:\n      - name: c\n        image: api:1\n        resources: {requests: {cpu: '1', memory: 1Gi}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: api}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  minReplicas: 2\n  maxReplicas: 4\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\n  behavior:\n    scaleUp:\n      policies: [{type: Pods, value: 1, periodSeconds: 120}]\n    scaleDown:\n      stabilizationWindowSeconds: 600\n      policies: [{type: Pods, value: 1, periodSeconds: 60}]\n")
        .unwrap();
    let (v, out) = scan(dir.path());
    assert_eq!(v.len(), 2, "{v:?}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        v.iter().all(|(_, verdict)| verdict == "verified"),
        "{v:?}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

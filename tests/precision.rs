//! Precision: what kivi-lint must not claim. Default assumptions that would manufacture
//! findings, scopes that would join unrelated manifests, pods that are not long-running
//! workloads, model bounds that would cut replicas, and one cause reported more than once.

mod common;

use assert_fs::prelude::*;
use common::{kivi, verdicts};
use proptest::prelude::*;
use serde_json::Value;

fn deployment(name: &str, replicas: u32, spec_extra: &str, resources: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n{spec_extra}      containers:\n      - name: c\n        image: nginx\n        resources: {{requests: {resources}}}\n"
    )
}

/// The check command's JSON report and stderr, asserting the exit code.
fn check(args: &[&str], code: i32) -> (Value, String) {
    let out = kivi()
        .args(["--format", "json", "--no-fixes"])
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .clone();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (report, String::from_utf8_lossy(&out.stderr).to_string())
}

/// The first violated result of the report's first unit.
fn first_violated(report: &Value) -> Value {
    report["units"][0]["verification"]["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["verdict"] == "violated"))
        .cloned()
        .unwrap_or_else(|| panic!("no violation: {report}"))
}

fn units_json(path: &std::path::Path) -> (Value, String) {
    let out = kivi().args(["units", "--format", "json"]).arg(path).output().unwrap();
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The first thing a new user runs: a plain Deployment, no config. Nothing is violated at any
/// level (pods-balanced, about rebalancing Kubernetes never promises, is opt-in).
#[test]
fn plain_three_replica_deployment_gives_no_violation() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("app.yaml")
        .write_str(&deployment("web", 3, "", "{cpu: 100m, memory: 128Mi}"))
        .unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 0);
    let v = verdicts(&report);
    assert!(!v.is_empty(), "{stderr}");
    assert!(v.iter().all(|(_, verdict)| verdict == "verified"), "{v:?}");
    assert!(!v.iter().any(|(c, _)| c == "pods-balanced"), "{v:?}");
}

/// With no cluster described, the assumed nodes admit what the manifests require of them
/// (labels, node groups, GPUs, ephemeral storage, hugepages, a custom topology key) and a note
/// says so; against a described cluster the same mismatch is reported.
#[test]
fn assumed_cluster_admits_static_node_requirements() {
    let dir = assert_fs::TempDir::new().unwrap();
    let spec = "      nodeSelector: {kubernetes.io/arch: arm64, karpenter.sh/capacity-type: spot}\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions: [{key: eks.amazonaws.com/nodegroup, operator: In, values: [gpu-ng]}]\n      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: infer}}}\n";
    dir.child("app.yaml")
        .write_str(&deployment(
            "infer",
            2,
            spec,
            "{cpu: '6', memory: 40Gi, nvidia.com/gpu: 1, ephemeral-storage: 20Gi, hugepages-2Mi: 1Gi}",
        ))
        .unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 0);
    assert!(
        verdicts(&report)
            .iter()
            .any(|(c, v)| c == "pods-schedulable" && v == "verified"),
        "{report}\n{stderr}"
    );
    assert!(stderr.contains("note: no cluster is described"), "{stderr}");
    assert!(stderr.contains("kubernetes.io/arch=arm64"), "{stderr}");
    assert!(stderr.contains("nvidia.com/gpu"), "{stderr}");

    // Described: plain nodes. The requirement no pool meets is reported, not assumed away.
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: plain, count: 2, allocatable: {cpu: '8', memory: 64Gi, pods: 110}}\nevents: []\n")
        .unwrap();
    let (_, stderr) = units_json(dir.path());
    assert!(!stderr.contains("no cluster is described"), "{stderr}");
    assert!(stderr.contains("no node pool"), "{stderr}");
}

/// Issue 41 (1): assumptions are made per unit, never for the whole scan. Alternative
/// Deployments of one directory asking for different accelerators, one directory's `In
/// prod-app` beside another's `NotIn prod-app`, and, within one unit, an arm64 workload whose
/// pods avoid an amd64 one's: each is admitted (the last by an assumed pool of its own).
#[test]
fn cluster_assumptions_are_per_unit_and_per_workload_class() {
    let dir = assert_fs::TempDir::new().unwrap();
    for (name, gpu) in [
        ("a100", "nvidia-tesla-a100"),
        ("h100", "nvidia-h100-80gb"),
        ("l4", "nvidia-l4"),
    ] {
        let spec = format!("      nodeSelector: {{cloud.google.com/gke-accelerator: {gpu}}}\n");
        dir.child(format!("serving/{name}.yaml"))
            .write_str(&deployment(name, 1, &spec, "{cpu: '1', nvidia.com/gpu: 1}"))
            .unwrap();
    }
    let node_group = |op: &str| {
        format!(
            "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions: [{{key: nodegroup-type, operator: {op}, values: [prod-app]}}]\n"
        )
    };
    dir.child("prod/app.yaml")
        .write_str(&deployment("app", 2, &node_group("In"), "{cpu: 100m}"))
        .unwrap();
    dir.child("troubleshooting/metrics.yaml")
        .write_str(&deployment("metrics", 1, &node_group("NotIn"), "{cpu: 100m}"))
        .unwrap();
    let avoid = |arch: &str, other: &str| {
        format!(
            "      nodeSelector: {{kubernetes.io/arch: {arch}}}\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - {{topologyKey: kubernetes.io/hostname, labelSelector: {{matchLabels: {{app: {other}}}}}}}\n"
        )
    };
    dir.child("mixed/arm.yaml")
        .write_str(&deployment("arm", 2, &avoid("arm64", "x86"), "{cpu: 100m}"))
        .unwrap();
    dir.child("mixed/x86.yaml")
        .write_str(&deployment("x86", 2, &avoid("amd64", "arm"), "{cpu: 100m}"))
        .unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 0);
    let v = verdicts(&report);
    assert!(v.iter().all(|(_, verdict)| verdict == "verified"), "{v:?}\n{stderr}");
    let units = report["units"].as_array().unwrap();
    assert_eq!(units.len(), 6, "{report}");
    for u in units {
        assert!(
            u["verification"]["results"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["check"] == "pods-schedulable" && r["verdict"] == "verified"),
            "{u}"
        );
    }
    let mixed = units
        .iter()
        .find(|u| u["name"] == "shop/arm (+1 workloads)")
        .expect("one unit of both");
    let pools: Vec<&str> = mixed["cluster"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        pools,
        [
            "zone-a",
            "zone-b",
            "zone-c",
            "zone-a-pool2",
            "zone-b-pool2",
            "zone-c-pool2"
        ]
    );
    assert!(
        stderr.contains("each unit is verified against an assumed one"),
        "{stderr}"
    );
    assert!(stderr.contains("a node pool of their own"), "{stderr}");
    assert!(!stderr.contains("not admitted"), "{stderr}");
}

/// A pod that no assumed node can admit (it wants a node that is not Linux, and the kubelet
/// labels every assumed node `kubernetes.io/os: linux`) is never a finding: its unit is not
/// checked, and a note names it.
#[test]
fn pods_no_assumption_admits_are_named_never_found() {
    let dir = assert_fs::TempDir::new().unwrap();
    let spec = "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions: [{key: kubernetes.io/os, operator: NotIn, values: [linux]}]\n";
    dir.child("win.yaml")
        .write_str(&deployment("win", 2, spec, "{cpu: 100m}"))
        .unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 0);
    assert!(verdicts(&report).is_empty(), "{report}");
    let not_checked = &report["units"][0]["notChecked"];
    assert!(
        not_checked.as_array().is_some_and(|a| !a.is_empty()
            && a.iter()
                .all(|n| n["reason"].as_str().unwrap().contains("cannot assume"))),
        "{report}"
    );
    assert!(stderr.contains("admits the pods of Deployment/shop/win"), "{stderr}");
}

/// Pods that may not share a node (each workload's required hostname anti-affinity against
/// its own pods and the other's) get as many assumed nodes as the steady state needs: how
/// many nodes a real cluster has is not known. What needs more than that is still found: the
/// rolling update's surge pod.
#[test]
fn assumed_nodes_hold_pods_that_may_not_share_one() {
    let dir = assert_fs::TempDir::new().unwrap();
    let apart = "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchExpressions: [{key: app, operator: In, values: [db, router]}]}}\n";
    let router = deployment("router", 3, apart, "{cpu: 100m}").replace(
        "  selector:",
        "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n  selector:",
    );
    dir.child("router.yaml").write_str(&router).unwrap();
    let db = deployment("db", 3, apart, "{cpu: 100m}").replace(
        "  selector:",
        "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n  selector:",
    );
    dir.child("db.yaml").write_str(&db).unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 0);
    let v = verdicts(&report);
    assert!(v.iter().all(|(_, verdict)| verdict == "verified"), "{v:?}\n{stderr}");
    assert!(
        stderr.contains("up to 2 nodes per zone where pods may not share a node"),
        "{stderr}"
    );
    // With a surge pod the rollout needs a seventh node: found.
    dir.child("router.yaml")
        .write_str(&deployment("router", 3, apart, "{cpu: 100m}"))
        .unwrap();
    let (report, _) = check(&[dir.path().to_str().unwrap()], 1);
    assert!(
        verdicts(&report)
            .iter()
            .any(|(c, v)| c == "rollout-completes" && v == "violated"),
        "{report}"
    );
}

/// Plain files: each directory is a scope; the same object in two directories is two
/// environments, never "defined more than once"; an HPA in another directory joins its target.
#[test]
fn scopes_follow_directories_and_duplicates_are_environments() {
    let dir = assert_fs::TempDir::new().unwrap();
    let web = deployment("web", 2, "", "{cpu: 100m}");
    dir.child("staging/web.yaml").write_str(&web).unwrap();
    dir.child("production/web.yaml").write_str(&web).unwrap();
    dir.child("examples/a.yaml")
        .write_str(&deployment("demo", 1, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("examples/b.yaml")
        .write_str(&deployment("demo", 2, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("autoscaling/hpa.yaml")
        .write_str("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: api, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  minReplicas: 2\n  maxReplicas: 3\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]\n")
        .unwrap();
    dir.child("apps/api.yaml")
        .write_str(&deployment("api", 2, "", "{cpu: 100m}"))
        .unwrap();
    let (v, stderr) = units_json(dir.path());
    assert!(!stderr.contains("defined more than once"), "{stderr}");
    let units = v["units"].as_array().unwrap();
    // staging/web, production/web, demo twice (two variants of one directory), api with its HPA.
    assert_eq!(units.len(), 5, "{v}");
    let api = units.iter().find(|u| u["name"] == "shop/api").unwrap();
    assert!(
        api["members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "autoscaler"),
        "{api}"
    );
}

/// Go's test inputs are skipped with one note; an include glob naming testdata brings them back.
#[test]
fn testdata_is_skipped_with_one_note() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("deploy/app.yaml")
        .write_str(&deployment("app", 1, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("pkg/testdata/a.yaml")
        .write_str(&deployment("t1", 1, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("pkg/testdata/b.yaml")
        .write_str(&deployment("t2", 1, "", "{cpu: 10m}"))
        .unwrap();
    let (v, stderr) = units_json(dir.path());
    assert_eq!(v["units"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        stderr.matches("under `testdata/` directories skipped").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("2 manifest files"), "{stderr}");
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ninclude: ['**', '**/testdata/**']\n")
        .unwrap();
    let (v, _) = units_json(dir.path());
    assert_eq!(v["units"].as_array().unwrap().len(), 3, "{v}");
}

/// Hook Pods and Pods that run to completion are not long-running workloads; a bare Pod is
/// not judged by min-replicas-available (nothing recreates it), and its creation is told as
/// `kubectl-apply`, never the deployment controller.
#[test]
fn pods_that_are_not_long_running_workloads_are_not_judged() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("hooks.yaml")
        .write_str("apiVersion: v1\nkind: Pod\nmetadata: {name: test-connection, annotations: {helm.sh/hook: test}}\nspec:\n  containers: [{name: c, image: busybox}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: migrate}\nspec:\n  restartPolicy: Never\n  containers: [{name: c, image: busybox}]\n")
        .unwrap();
    let (v, _) = units_json(dir.path());
    assert_eq!(v["units"].as_array().unwrap().len(), 0, "{v}");

    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("pod.yaml")
        .write_str("apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: '16'}}}]\n")
        .unwrap();
    // Default cluster, node failures: the bare Pod may be lost, which Kubernetes never promises
    // otherwise.
    let (report, _) = check(&[dir.path().to_str().unwrap()], 0);
    assert!(
        verdicts(&report)
            .iter()
            .any(|(c, v)| c == "min-replicas-available" && v == "verified"),
        "{report}"
    );
    // A described cluster too small for it: Pending, created by kubectl apply.
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: small, count: 1, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: []\n")
        .unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 1);
    let steps = report["units"][0]["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["verdict"] == "violated")
        .map(|r| r["steps"].clone())
        .unwrap_or_else(|| panic!("{report}\n{stderr}"));
    assert_eq!(steps[0]["actor"], "kubectl-apply", "{steps}");
}

/// A node holds its allocatable pods: 20 light replicas are not "unschedulable after 18"
/// (the old podsPerNode cap). A unit beyond the model's bounds is undecided (a partial verdict
/// with fewer replicas), never a finding or an engine error.
#[test]
fn model_bounds_never_produce_a_violation() {
    // 20 replicas once interleaved into millions of states; with the pods of a workload kept
    // in one order (symmetry reduction) it is a few hundred thousand, verified well within
    // the memory bound.
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: workers, count: 2, allocatable: {cpu: '8', memory: 32Gi, pods: 110}}\nevents: []\n")
        .unwrap();
    dir.child("app.yaml")
        .write_str(&deployment("light", 20, "", "{cpu: 10m, memory: 16Mi}"))
        .unwrap();
    let out = kivi()
        .args([
            "--format",
            "json",
            "--no-fixes",
            "--scale",
            "current",
            "--run-memory",
            "256",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = verdicts(&serde_json::from_slice(&out.stdout).unwrap());
    assert!(!v.is_empty() && v.iter().all(|(_, v)| v == "verified"), "{v:?}");

    // The same Deployment with no config: the whole default search (3 to 6 nodes, a node
    // failure, a rollout) within the default limits. It was inconclusive at 4 nodes while the
    // kubelet could run ahead of the controllers (README, Verification: time scales).
    std::fs::remove_file(dir.path().join(".kivi-lint.yaml")).unwrap();
    let (report, _) = check(&[dir.path().to_str().unwrap()], 0);
    let v = verdicts(&report);
    assert!(!v.is_empty() && v.iter().all(|(_, v)| v == "verified"), "{v:?}");
    assert_eq!(report["units"][0]["verification"]["search"]["explored"], 4, "{report}");

    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("app.yaml")
        .write_str(&deployment("huge", 300, "", "{cpu: 10m, memory: 16Mi}"))
        .unwrap();
    // Undecided at 300 replicas, it is searched again with fewer: a partial verdict that says
    // with how many it holds (a pass with a note), never a verdict on the manifests' count.
    let (report, _) = check(&[dir.path().to_str().unwrap()], 0);
    let results = report["units"][0]["verification"]["results"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        results.iter().all(|r| r["verdict"] == "inconclusive"
            && r["partial"] == true
            && r["heldUpTo"]["replicas"]["Deployment/shop/huge"]
                .as_u64()
                .is_some_and(|n| n < 300)
            && r["reason"]
                .as_str()
                .unwrap_or_default()
                .contains("beyond the model's bounds")
            && r.get("engineError").is_none()),
        "{results:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    /// Raising a bound never turns verified into violated: every check verified with each node
    /// holding just the replicas stays verified when nodes hold their full allocatable pods.
    #[test]
    fn raising_the_pod_bound_never_turns_verified_into_violated(
        replicas in 1u32..5,
        skew in 1u32..3,
        hard in proptest::bool::ANY,
    ) {
        let dir = assert_fs::TempDir::new().unwrap();
        let spread = format!(
            "      topologySpreadConstraints:\n      - {{maxSkew: {skew}, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: {}, labelSelector: {{matchLabels: {{app: w}}}}}}\n",
            if hard { "DoNotSchedule" } else { "ScheduleAnyway" }
        );
        dir.child("app.yaml").write_str(&deployment("w", replicas, &spread, "{cpu: 100m}")).unwrap();
        let config = |pods: u32| format!(
            "apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {{name: workers, count: 2, allocatable: {{cpu: '4', memory: 16Gi, pods: {pods}}}}}\nevents: [{{type: node-failure}}]\n"
        );
        let run = |pods: u32| {
            dir.child(".kivi-lint.yaml").write_str(&config(pods)).unwrap();
            let out = kivi()
                .args(["--format", "json", "--no-fixes", "--scale", "current"])
                .arg(dir.path())
                .output()
                .unwrap();
            verdicts(&serde_json::from_slice(&out.stdout).unwrap_or(Value::Null))
        };
        let tight = run(replicas);
        let loose = run(110);
        for (check, verdict) in &tight {
            if verdict == "verified" {
                prop_assert!(
                    loose.iter().any(|(c, v)| c == check && v == "verified"),
                    "{check}: verified with {replicas} pods per node, not with 110: {loose:?}"
                );
            }
        }
    }
}

/// Valid input read as Kubernetes reads it: UTF-16 with a byte order mark; and an object
/// already reported as an input error is not verified as well.
#[test]
fn utf16_manifests_are_read_and_invalid_objects_are_not_verified() {
    let dir = assert_fs::TempDir::new().unwrap();
    let text = deployment("wide", 2, "", "{cpu: 10m}");
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    dir.child("utf16.yaml").write_binary(&bytes).unwrap();
    dir.child("bad.yaml")
        .write_str(
            &deployment("bad", 2, "", "{cpu: 10m}").replace("{app: bad}}\n  template", "{app: other}}\n  template"),
        )
        .unwrap();
    let (v, stderr) = units_json(dir.path());
    assert!(
        stderr.contains("`selector` does not match the pod template's labels"),
        "{stderr}"
    );
    let names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shop/wide"], "{v}");
}

/// A field an overlay changes is located in the overlay: `replicas:` at its count, a
/// strategic-merge patch file at its line (JSON 6902 patches: `discover::overlay`'s tests).
#[test]
fn overlay_changes_are_located_in_the_overlay() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("base/kustomization.yaml")
        .write_str("resources: [deployment.yaml]\n")
        .unwrap();
    dir.child("base/deployment.yaml")
        .write_str(&deployment("api", 2, "", "{cpu: 100m}"))
        .unwrap();
    dir.child("prod/kustomization.yaml")
        .write_str("resources: [../base]\nreplicas:\n- name: api\n  count: 3\npatches:\n- path: cpu.yaml\n")
        .unwrap();
    dir.child("prod/cpu.yaml")
        .write_str("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: shop}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources:\n          requests:\n            cpu: 3\n")
        .unwrap();
    // Two nodes of 4 cpu: the third replica of 3 cpu fits nowhere.
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: two, count: 2, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: []\n")
        .unwrap();
    let config = dir.path().join(".kivi-lint.yaml");
    let prod = dir.path().join("prod");
    let (report, stderr) = check(&["-c", config.to_str().unwrap(), prod.to_str().unwrap()], 1);
    let result = report["units"][0]["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "pods-schedulable")
        .cloned()
        .unwrap_or_else(|| panic!("{report}\n{stderr}"));
    assert_eq!(result["verdict"], "violated", "{result}");
    assert!(result["file"].as_str().unwrap().ends_with("prod/cpu.yaml"), "{result}");
    assert_eq!(result["line"], 11, "{result}");
    let steps = result["steps"].as_array().unwrap();
    let created = steps.iter().find(|s| s["actor"] == "deployment-controller").unwrap();
    assert!(
        created["file"].as_str().unwrap().ends_with("prod/kustomization.yaml"),
        "{created}"
    );
    assert_eq!(created["line"], 4, "{created}");
}

/// The path an Argo CD Application with `directory.recurse` (or a Flux Kustomization)
/// deploys is one deployment: the directories under it are one scope.
#[test]
fn a_declared_gitops_path_is_one_scope() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("argo/app.yaml")
        .write_str("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n  source: {repoURL: 'https://example.com/repo.git', path: deploy/prod, directory: {recurse: true}}\n  destination: {server: 'https://kubernetes.default.svc', namespace: shop}\n")
        .unwrap();
    dir.child("deploy/prod/web/web.yaml")
        .write_str(&deployment("web", 2, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("deploy/prod/api/api.yaml")
        .write_str(&deployment("api", 2, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("deploy/dev/api.yaml")
        .write_str(&deployment("api", 1, "", "{cpu: 10m}"))
        .unwrap();
    let (v, _) = units_json(dir.path());
    let scope_of = |name: &str, file: &str| -> String {
        v["units"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == name && u["members"][0]["file"].as_str().unwrap().ends_with(file))
            .map(|u| u["scope"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{v}"))
    };
    assert_eq!(
        scope_of("shop/web", "web.yaml"),
        scope_of("shop/api", "prod/api/api.yaml")
    );
    assert_ne!(
        scope_of("shop/api", "dev/api.yaml"),
        scope_of("shop/api", "prod/api/api.yaml")
    );
}

/// Without `directory.recurse`, Argo CD reads the path's own files only: its subdirectories
/// are no part of that Application.
#[test]
fn a_directory_source_without_recurse_deploys_no_subdirectory() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("argo/app.yaml")
        .write_str("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n  source: {repoURL: 'https://example.com/repo.git', path: deploy/prod}\n  destination: {server: 'https://kubernetes.default.svc', namespace: shop}\n")
        .unwrap();
    dir.child("deploy/prod/web.yaml")
        .write_str(&deployment("web", 2, "", "{cpu: 10m}"))
        .unwrap();
    dir.child("deploy/prod/api/api.yaml")
        .write_str(&deployment("api", 2, "", "{cpu: 10m}"))
        .unwrap();
    let (v, _) = units_json(dir.path());
    let mut units: Vec<(String, String)> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let scope = u["scope"].as_str().unwrap();
            let tail = scope.rsplit("deploy/").next().unwrap().to_string();
            (u["name"].as_str().unwrap().to_string(), tail)
        })
        .collect();
    units.sort();
    assert_eq!(
        units,
        [
            ("shop/api".to_string(), "prod/api".to_string()),
            ("shop/web".to_string(), "prod".to_string())
        ],
        "{v}"
    );
}

/// No finding is without a location: a pod that only requests ephemeral storage, more than any
/// node has, is located at that request (it had no location before).
#[test]
fn resource_and_node_requirement_findings_are_located() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: small, count: 1, allocatable: {cpu: '4', memory: 16Gi, pods: 110, ephemeral-storage: 1Gi}}\nevents: []\n")
        .unwrap();
    dir.child("app.yaml")
        .write_str(&deployment("scratch", 1, "", "{ephemeral-storage: 8Gi}"))
        .unwrap();
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 1);
    let result = report["units"][0]["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["verdict"] == "violated")
        .cloned()
        .unwrap_or_else(|| panic!("{report}\n{stderr}"));
    assert!(result["file"].as_str().unwrap().ends_with("app.yaml"), "{result}");
    assert_eq!(result["line"], 13, "{result}");
}

/// Issue 41 (5): the textbook PodDisruptionBudgets that block every drain are found with no
/// config (`minAvailable` equal to the replicas, `maxUnavailable: 0`, `minAvailable` equal to
/// the HPA's minReplicas), each with a verified fix at the budget's field; `maxUnavailable: 1`
/// on 3 replicas is verified. `kivi-lint rules` says the check needs node-drain and that
/// kivi-lint adds it.
#[test]
fn pod_disruption_budgets_that_block_every_drain_are_found_with_no_config() {
    let hpa = "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 4\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]\n";
    for (budget, extra, blocks) in [
        ("minAvailable: 3", "", true),
        ("maxUnavailable: 0", "", true),
        ("minAvailable: 2", hpa, true),
        ("maxUnavailable: 1", "", false),
    ] {
        let dir = assert_fs::TempDir::new().unwrap();
        dir.child("app.yaml")
            .write_str(&format!(
                "{}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web, namespace: shop}}\nspec:\n  {budget}\n  selector: {{matchLabels: {{app: web}}}}\n{extra}",
                deployment("web", 3, "", "{cpu: 100m, memory: 128Mi}")
            ))
            .unwrap();
        let out = kivi()
            .args(["--format", "json", "--fixes-for", "error"])
            .arg(dir.path())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let drain = report["units"][0]["verification"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "drain-completes")
            .cloned()
            .unwrap_or_else(|| panic!("{budget}: {report}"));
        let others_verified = verdicts(&report)
            .iter()
            .filter(|(c, _)| c != "drain-completes")
            .all(|(_, v)| v == "verified");
        assert!(others_verified, "{budget}: {report}");
        if blocks {
            assert_eq!(drain["verdict"], "violated", "{budget}: {drain}");
            assert_eq!(out.status.code(), Some(1), "{budget}");
            assert_eq!(drain["line"], 19, "{budget}: at the budget's field: {drain}");
            assert!(
                drain["fix"]["verifiedOn"].is_string(),
                "{budget}: a verified fix: {drain}"
            );
        } else {
            assert_eq!(drain["verdict"], "verified", "{budget}: {drain}");
            assert_eq!(out.status.code(), Some(0), "{budget}");
        }
    }
    let rules = kivi().args(["rules", "--format", "json"]).output().unwrap();
    let rules: Value = serde_json::from_slice(&rules.stdout).unwrap();
    let drain = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "drain-completes")
        .unwrap();
    assert_eq!(drain["needsEvents"], serde_json::json!(["node-drain"]));
    assert_eq!(drain["addsItsEvents"], true);
}

/// Issue 41 (3): the trace says when the descheduler declines to evict a pod a plugin chose,
/// and why. Three single-node zones placed 2/1/0 (fixtures/descheduler-spread-rebalance-safe),
/// with a PodDisruptionBudget that allows no disruption: the rebalancing eviction is refused,
/// the pods stay unbalanced, and the step points at the budget.
#[test]
fn the_trace_says_when_the_descheduler_declines_to_evict() {
    let dir = assert_fs::TempDir::new().unwrap();
    let fixture = common::root().join("fixtures/descheduler-spread-rebalance-safe");
    for file in ["app.yaml", ".kivi-lint.yaml"] {
        std::fs::copy(fixture.join(file), dir.path().join(file)).unwrap();
    }
    let app = std::fs::read_to_string(dir.path().join("app.yaml")).unwrap();
    std::fs::write(
        dir.path().join("app.yaml"),
        format!("{app}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec:\n  minAvailable: 3\n  selector: {{matchLabels: {{app: web}}}}\n"),
    )
    .unwrap();
    // pods-balanced is a warning: exit 0.
    let (report, stderr) = check(&[dir.path().to_str().unwrap()], 0);
    let balanced = report["units"][0]["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "pods-balanced")
        .cloned()
        .unwrap_or_else(|| panic!("{report}\n{stderr}"));
    assert_eq!(balanced["verdict"], "violated", "{balanced}");
    let declined = balanced["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["actor"] == "descheduler")
        .unwrap_or_else(|| panic!("{balanced}"));
    let message = declined["message"].as_str().unwrap();
    assert!(
        message.contains("RemovePodsViolatingTopologySpreadConstraint would evict")
            && message.contains("the evictor declines: PodDisruptionBudget/default/web allows no disruption"),
        "{message}"
    );
    assert!(declined["line"].as_u64().is_some(), "located at the budget: {declined}");
}

/// Issue 41 (4): the pods of Jobs and CronJobs take room while they run, as many at once as
/// `parallelism` and `completions` allow; a suspended one takes none. No check judges them,
/// and the report says what the model does not see of them.
#[test]
fn batch_pods_take_room_and_are_never_judged() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: small, count: 1, min: 1, max: 1, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: []\n")
        .unwrap();
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: '2'}}}]\n";
    let job = |suspend: bool| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: migrate}}\nspec:\n  suspend: {suspend}\n  parallelism: 3\n  completions: 1\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: '3'}}}}}}]\n"
        )
    };
    dir.child("web.yaml").write_str(web).unwrap();
    dir.child("job.yaml").write_str(&job(false)).unwrap();
    let path = dir.path().to_str().unwrap();
    // One migrate pod at once (completions 1), 3 cores: web's 2 no longer fit.
    let (report, _) = check(&[path], 1);
    let unit = &report["units"][0];
    assert!(unit["name"].as_str().unwrap().starts_with("default/web"), "{unit}");
    let violated = first_violated(&report);
    assert_eq!(violated["check"], "pods-schedulable");
    assert!(violated["file"].as_str().unwrap().ends_with("web.yaml"), "{violated}");
    let notes = unit["verification"]["notes"].to_string();
    assert!(notes.contains("Job/default/migrate runs to completion"), "{notes}");
    // Suspended, it runs no pod.
    dir.child("job.yaml").write_str(&job(true)).unwrap();
    let (report, _) = check(&[path], 0);
    assert!(verdicts(&report).iter().all(|(_, v)| v == "verified"), "{report}");

    // A unit whose pods request nothing has no capacity to check, and the report says so.
    dir.child("job.yaml").write_str("").unwrap();
    dir.child("web.yaml")
        .write_str(&web.replace(", resources: {requests: {cpu: '2'}}", ""))
        .unwrap();
    let (report, _) = check(&[path], 0);
    let notes = report["units"][0]["verification"]["notes"].to_string();
    assert!(notes.contains("no pod of the unit requests cpu or memory"), "{notes}");
}

/// Issue 41 (4): a claim bound to a volume in a zone without a node keeps its pod Pending (at
/// the volume's node affinity); a regional class's volumes attach in every zone it allows; a
/// class that is not among the objects is named as not modelled.
#[test]
fn volumes_keep_pods_in_their_zones() {
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child(".kivi-lint.yaml")
        .write_str("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: a, count: 1, min: 1, max: 1, labels: {topology.kubernetes.io/zone: z-a}, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\n    - {name: b, count: 1, min: 1, max: 1, labels: {topology.kubernetes.io/zone: z-b}, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: []\n")
        .unwrap();
    let app = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: app}}\n  template:\n    metadata: {labels: {app: app}}\n    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]\n      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n";
    dir.child("app.yaml").write_str(app).unwrap();
    let bound = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {volumeName: disk-1, storageClassName: ''}\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: disk-1}\nspec:\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n        - matchExpressions: [{key: topology.ebs.csi.aws.com/zone, operator: In, values: [z-c]}]\n";
    dir.child("volume.yaml").write_str(bound).unwrap();
    let path = dir.path().to_str().unwrap();
    let (report, _) = check(&[path], 1);
    let unit = &report["units"][0];
    let violated = first_violated(&report);
    assert_eq!(violated["check"], "pods-schedulable");
    assert!(
        violated["file"].as_str().unwrap().ends_with("volume.yaml"),
        "{violated}"
    );
    assert_eq!(violated["line"], 12, "the volume's node affinity: {violated}");
    let steps = violated["steps"].to_string();
    assert!(steps.contains("2 node(s) had volume node affinity conflict"), "{steps}");
    let members = unit["members"].to_string();
    assert!(members.contains("\"role\":\"storage\""), "{members}");

    // A regional class: its volumes attach in both zones, from the start.
    dir.child("volume.yaml")
        .write_str("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: regional}\n---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: regional}\nprovisioner: pd.csi.storage.gke.io\nparameters: {replication-type: regional-pd}\n")
        .unwrap();
    let (report, _) = check(&[path], 0);
    assert!(verdicts(&report).iter().all(|(_, v)| v == "verified"), "{report}");

    // A class the scan does not have: said, not guessed.
    dir.child("volume.yaml")
        .write_str(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {storageClassName: fast}\n",
        )
        .unwrap();
    let (report, _) = check(&[path], 0);
    let notes = report["units"][0]["verification"]["notes"].to_string();
    assert!(
        notes.contains("StorageClass fast of Deployment/default/app's claims is not among the scanned objects"),
        "{notes}"
    );
}

/// Issue 41 (3): pods the descheduler never considers get no trace step; the report says
/// which, and why (here local storage with evictLocalStoragePods off).
#[test]
fn the_report_names_pods_the_descheduler_never_evicts() {
    let dir = assert_fs::TempDir::new().unwrap();
    let app = std::fs::read_to_string("fixtures/descheduler-spread-rebalance/app.yaml").unwrap();
    let with_cache = app.replace(
        "      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]",
        "      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n      volumes: [{name: cache, emptyDir: {}}]",
    );
    assert_ne!(app, with_cache);
    dir.child("app.yaml").write_str(&with_cache).unwrap();
    let (report, _) = check(&[dir.path().to_str().unwrap()], 0);
    let notes = report["units"][0]["verification"]["notes"].to_string();
    assert!(
        notes.contains("the descheduler never evicts Deployment/default/web's pods: they have local storage"),
        "{notes}"
    );
}

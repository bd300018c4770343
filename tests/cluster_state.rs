//! `--cluster-state`: the running cluster (its nodes, its pods on them) as the model's start,
//! through the binary with the real spin and C compiler.

mod common;

use common::kivi;
use serde_json::Value;

const FIXTURE: &str = "fixtures/cluster-state-placement";

fn scan(args: &[&str]) -> (i32, Value) {
    let out = kivi()
        .args(["--no-fixes", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code().unwrap(),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
    )
}

fn pods_schedulable(report: &Value) -> &Value {
    report["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["verification"]["results"].as_array().unwrap())
        .find(|c| c["check"] == "pods-schedulable")
        .expect("pods-schedulable is checked")
}

/// The violation exists only because of where the pods run now: from an empty cluster the
/// same manifests are verified; from the saved state, the report-builder has no node, and the
/// counterexample starts where the state file has the api pods.
#[test]
fn the_current_placement_decides_the_verdict() {
    let (code, empty) = scan(&[FIXTURE]);
    assert_eq!(code, 0, "{empty:#}");
    assert_eq!(pods_schedulable(&empty)["verdict"], "verified");

    let state = format!("{FIXTURE}/cluster-state.yaml");
    let (code, running) = scan(&["--cluster-state", &state, FIXTURE]);
    assert_eq!(code, 1, "{running:#}");
    let check = pods_schedulable(&running);
    assert_eq!(check["verdict"], "violated");
    assert_eq!(check["file"], format!("{FIXTURE}/deploy/report-builder.yaml"));
    let steps: Vec<&str> = check["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["message"].as_str().unwrap())
        .collect();
    // The first state is the file's: one api pod on each worker.
    assert_eq!(steps[0], "api-1 runs on primary-1 as the run starts", "{steps:#?}");
    assert_eq!(steps[1], "api-2 runs on secondary-1 as the run starts", "{steps:#?}");
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("no feasible node for report-builder-1")),
        "{steps:#?}"
    );
    // The pods of a workload the repository does not have are said to be left out.
    let notes = running["diagnostics"].to_string();
    assert!(
        notes.contains("1 running pod of a workload this scan does not have is not modelled: the cpu and memory it requests are reserved on its node"),
        "{notes}"
    );
}

#[test]
fn a_cluster_state_that_cannot_be_read_is_an_input_error() {
    let (code, report) = scan(&["--cluster-state", "no/such/state.yaml", FIXTURE]);
    assert_eq!(code, 2, "{report:#}");
    assert!(
        report["diagnostics"].to_string().contains("--cluster-state"),
        "{report:#}"
    );
    // Nor is a file with a YAML error half read: nothing is verified against the config's
    // cluster instead, and each check says why.
    let dir = assert_fs::TempDir::new().unwrap();
    let state = dir.path().join("state.yaml");
    let text = std::fs::read_to_string(format!("{FIXTURE}/cluster-state.yaml")).unwrap();
    std::fs::write(&state, format!("{text}\n- {{ unclosed: [\n")).unwrap();
    let (code, report) = scan(&["--cluster-state", state.to_str().unwrap(), FIXTURE]);
    assert_eq!(code, 2, "{report:#}");
    let found = pods_schedulable(&report);
    assert_eq!(found["verdict"], "inconclusive", "{found:#}");
    assert!(
        found["reason"].as_str().unwrap().contains("could not be read"),
        "{found:#}"
    );
}

/// `kivi-lint snapshot` runs `kubectl get … -o json` (here a stand-in on PATH printing what a
/// real cluster would) and writes a file `--cluster-state` reads, without what may be secret.
#[test]
fn a_snapshot_is_a_cluster_state_without_secrets() {
    use std::os::unix::fs::PermissionsExt;
    let dir = assert_fs::TempDir::new().unwrap();
    let kubectl = dir.path().join("kubectl");
    std::fs::write(
        &kubectl,
        "#!/bin/sh\n[ \"$1 $2 $3\" = \"get nodes,pods,deployments,replicasets,statefulsets,daemonsets,hpa,pdb --all-namespaces\" ] || exit 3\ncat \"$KIVI_TEST_KUBECTL_OUTPUT\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap());
    let saved = dir.path().join("state.yaml");
    let out = kivi()
        .env("PATH", &path)
        .env(
            "KIVI_TEST_KUBECTL_OUTPUT",
            common::root().join(FIXTURE).join("kubectl-get.json"),
        )
        .args(["snapshot", "-o"])
        .arg(&saved)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&saved).unwrap();
    for secret in ["hunter2", "aHVudGVyMg", "last-applied-configuration", "\"Secret\""] {
        assert!(!text.contains(secret), "{secret} is in the snapshot");
    }
    let (code, report) = scan(&["--cluster-state", saved.to_str().unwrap(), FIXTURE]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(pods_schedulable(&report)["verdict"], "violated");
}

/// An autoscaled workload starts at the count of its pods running now, not the manifests':
/// the HPA owns `spec.replicas` in the cluster. The running cluster is one topology.
#[test]
fn an_autoscaled_workload_starts_at_its_running_count() {
    let dir = assert_fs::TempDir::new().unwrap();
    let repo = dir.path();
    std::fs::write(
        repo.join("web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n          resources: {requests: {cpu: 500m, memory: 256Mi}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 6\n  metrics:\n    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}\n",
    )
    .unwrap();
    std::fs::write(
        repo.join(".kivi-lint.yaml"),
        "apiVersion: kivi-lint/v1alpha1\nkind: Config\nevents: []\nchecks: {enable: [pods-schedulable]}\n",
    )
    .unwrap();
    let mut state = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for n in 1..=2 {
        state.push_str(&format!(
            "- apiVersion: v1\n  kind: Node\n  metadata: {{name: node-{n}, labels: {{kubernetes.io/hostname: node-{n}, kubernetes.io/os: linux, kubernetes.io/arch: amd64}}}}\n  status: {{allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}}}\n"
        ));
    }
    for (i, node) in ["node-1", "node-1", "node-2", "node-2", "node-2"].iter().enumerate() {
        state.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web-6b7c8d9f5-{i}\n    namespace: shop\n    labels: {{app: web, pod-template-hash: 6b7c8d9f5}}\n    ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-6b7c8d9f5, controller: true, uid: u{i}}}]\n  spec:\n    nodeName: {node}\n    containers: [{{name: web, image: 'nginx:1.27', resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}}}]\n"
        ));
    }
    let state_file = dir.path().join("state.yaml");
    std::fs::write(&state_file, state).unwrap();
    let out = kivi()
        .args(["--no-fixes", "--format", "json", "--cluster-state"])
        .arg(&state_file)
        .arg(repo)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    let check = pods_schedulable(&report);
    assert_eq!(check["verdict"], "verified", "{report:#}");
    let topology = &check["topology"];
    assert_eq!(topology["nodes"], 2, "{topology:#}");
    assert_eq!(topology["replicas"]["Deployment/shop/web"], 5, "{topology:#}");
}

/// `--cluster-state -` reads it from stdin (`kubectl get … -o yaml | kivi-lint
/// --cluster-state - .`), once: its notes point at `-`.
#[test]
fn the_cluster_state_can_come_from_stdin() {
    let state = std::fs::read_to_string(common::root().join(FIXTURE).join("cluster-state.yaml")).unwrap();
    let out = kivi()
        .args(["--no-fixes", "--format", "json", "--cluster-state", "-", FIXTURE])
        .write_stdin(state)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(pods_schedulable(&report)["verdict"], "violated");
    let notes = report["diagnostics"].as_array().unwrap();
    assert!(notes.iter().any(|d| d["file"] == "-"), "{notes:#?}");

    // Manifests from stdin too: one of them has to be a file.
    let out = kivi()
        .args(["--cluster-state", "-", "-"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("would both read stdin"));
}

/// A pod of a workload the repository does not have still takes room on its node: its
/// requests are reserved there. With both api pods on the primary worker the report-builder
/// would fit the secondary one, but another team's 1-CPU pod runs there.
#[test]
fn pods_the_repository_does_not_have_take_their_room() {
    let state = std::fs::read_to_string(common::root().join(FIXTURE).join("cluster-state.yaml"))
        .unwrap()
        .replace("nodeName: secondary-1", "nodeName: primary-1");
    let foreign = "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: etl-7f9c6d5b8-q2w4e\n    namespace: data\n    labels: {app: etl, pod-template-hash: 7f9c6d5b8}\n    ownerReferences:\n    - {apiVersion: apps/v1, kind: ReplicaSet, name: etl-7f9c6d5b8, controller: true, uid: u9}\n  spec:\n    nodeName: secondary-1\n    containers:\n    - name: etl\n      image: registry.example.com/data/etl:2.0\n      resources:\n        requests: {cpu: \"1\", memory: 1Gi}\n";
    let run = |state: String| {
        let out = kivi()
            .args(["--no-fixes", "--format", "json", "--cluster-state", "-", FIXTURE])
            .write_stdin(state)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code().unwrap(), pods_schedulable(&report)["verdict"].clone())
    };
    assert_eq!(run(state.clone()), (0, "verified".into()));
    assert_eq!(run(format!("{state}{foreign}")), (1, "violated".into()));
}

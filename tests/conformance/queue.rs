//! Scheduling-queue cases: a pod the scheduler found no node for, and a cluster event after
//! it (an assigned pod deleted, a pod its affinity needs bound). Upstream's queue moves the
//! pod back to be tried again on the events its failing plugins register, as their queueing
//! hints decide, and flushes the rest after at most 5 minutes
//! (pkg/scheduler/backend/queue/scheduling_queue.go, podMaxInUnschedulablePodsDuration). The
//! outcome a case states is the settled one: whether the pod ends placed or Pending.
//!
//! The case runs through the kivi-lint binary as a user runs it: its manifests and a described
//! cluster of one pool per node (each node is `<pool>-1`) and the pods running at the start
//! (`running`: `cluster.initialPods`) in a scratch directory, with `pods-schedulable` the only
//! check on the unit of the workload `web`, whose pod is the one waiting: verified means it was
//! placed whatever retried it, violated that it stays Pending.

use serde_json::Value as Json;

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn run(case: &Json) -> Result<(), String> {
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kivi-queue-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = run_in(case, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(case: &Json, dir: &std::path::Path) -> Result<(), String> {
    let mut config = String::from("apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n");
    for node in case["nodes"].as_array().ok_or("no `nodes`")? {
        let name = node["name"].as_str().ok_or("a node without `name`")?;
        let cpu = node["cpu"].as_str().unwrap_or("4");
        let zone = node["zone"].as_str().unwrap_or("zone-a");
        config.push_str(&format!(
            "    - {{name: {name}, count: 1, min: 1, max: 1, labels: {{topology.kubernetes.io/zone: {zone}}}, allocatable: {{cpu: '{cpu}', memory: 16Gi, pods: 110}}}}\n"
        ));
    }
    // Pods running when the model starts: assigned pods.
    if let Some(running) = case["running"].as_array() {
        config.push_str("  initialPods:\n");
        for r in running {
            config.push_str(&format!(
                "    - {{workload: {}, node: {}, count: {}}}\n",
                r["workload"].as_str().ok_or("`running` without `workload`")?,
                r["node"].as_str().ok_or("`running` without `node`")?,
                r["count"].as_i64().unwrap_or(1)
            ));
        }
    }
    config.push_str("events: []\nchecks:\n  enable: [pods-schedulable]\n");
    std::fs::write(dir.join(".kivi-lint.yaml"), config).map_err(|e| e.to_string())?;
    let manifests = case["manifests"].as_str().ok_or("no `manifests`")?;
    std::fs::write(dir.join("manifests.yaml"), manifests).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kivi-lint"))
        .args(["--format", "json", "--no-fixes", "--no-cache", "-q"])
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    let report: Json = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)))?;
    // The unit of the pending pod, `web`'s (the others' pods are placed or never judged).
    let unit = report["units"]
        .as_array()
        .ok_or("no units")?
        .iter()
        .find(|u| {
            u["members"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["name"] == "web"))
        })
        .ok_or("no unit has the workload `web`")?;
    let verdict = unit["verification"]["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["check"] == "pods-schedulable"))
        .and_then(|r| r["verdict"].as_str())
        .ok_or("no pods-schedulable result")?
        .to_string();
    let want = match case["expect"].as_str() {
        Some("placed") => "verified",
        Some("pending") => "violated",
        other => return Err(format!("`expect` must be placed or pending, not {other:?}")),
    };
    if verdict == want {
        Ok(())
    } else {
        Err(format!("pods-schedulable {verdict}, want {want} ({})", case["expect"]))
    }
}

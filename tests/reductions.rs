//! State-space reductions keep every verdict: each fixture is verified with the reductions
//! (the default) and without them (`scaling.symmetry: false`), and every check must reach the
//! same verdict, with a counterexample no longer than the unreduced model's. The same holds for
//! the time-scale semantics (the kubelet waits for the controllers) against the
//! `controller-lag` fault, which lifts it.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{copy_tree, kivi, root};
use serde_json::Value;

/// How a fixture's config is varied.
#[derive(Clone, Copy)]
enum Variant {
    /// The config as it is.
    AsIs,
    /// `scaling.symmetry: false`.
    NoSymmetry,
    /// `controller-lag` added to `faults`.
    ControllerLag,
    /// `events.combine: true`: the events interleaved in one model.
    Combined,
}

/// The fixture's config (the default config when it has none) with the variant applied.
fn config_for(fixture: &Path, variant: Variant) -> String {
    let text = std::fs::read_to_string(fixture.join(".kivi-lint.yaml")).unwrap_or_else(|_| {
        let out = kivi().args(["config", "--default"]).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    });
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let (key, flow, block, alone) = match variant {
        Variant::AsIs => return text,
        Variant::Combined => return combined(&lines),
        Variant::NoSymmetry => (
            "scaling:",
            "{symmetry: false, ",
            "  symmetry: false",
            "scaling: {symmetry: false}",
        ),
        Variant::ControllerLag => (
            "faults:",
            "[controller-lag, ",
            "  - controller-lag",
            "faults: [controller-lag]",
        ),
    };
    let open = &flow[..1];
    match lines.iter().position(|l| l.starts_with(key)) {
        Some(i) if lines[i].contains(open) => lines[i] = lines[i].replacen(open, flow, 1),
        Some(i) => lines.insert(i + 1, block.to_string()),
        None => lines.push(alone.to_string()),
    }
    lines.join("\n") + "\n"
}

/// (unit number, check) → (verdict, counterexample steps). A counterexample that ends in a
/// cycle counts as 0 steps: the cycle search returns the first lasso it closes, not the
/// shortest, so its length says nothing about the model (only the verdict is compared).
/// The config's `events` list as `{combine: true, list: [...]}`.
fn combined(lines: &[String]) -> String {
    let mut out = Vec::new();
    let mut in_events = false;
    for line in lines {
        if line == "events:" {
            out.push("events:".to_string());
            out.push("  combine: true".to_string());
            out.push("  list:".to_string());
            in_events = true;
            continue;
        }
        if let Some(flow) = line.strip_prefix("events: [") {
            out.push(format!("events: {{combine: true, list: [{flow}}}"));
            continue;
        }
        if in_events && (line.starts_with("  ") || line.trim().is_empty()) {
            out.push(format!("  {line}"));
            continue;
        }
        in_events = false;
        out.push(line.clone());
    }
    out.join("\n") + "\n"
}

fn verdicts(fixture: &str, variant: Variant) -> BTreeMap<(String, String), (String, usize)> {
    let dir = assert_fs::TempDir::new().unwrap();
    let source = root().join("fixtures").join(fixture);
    copy_tree(&source, dir.path());
    std::fs::write(dir.path().join(".kivi-lint.yaml"), config_for(&source, variant)).unwrap();
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "-q"])
        .arg(dir.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{fixture}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut verdicts = BTreeMap::new();
    // Units in report order (their ids hash the config, which differs).
    for (u, unit) in report["units"].as_array().unwrap().iter().enumerate() {
        for r in unit["verification"]["results"].as_array().unwrap() {
            verdicts.insert(
                (u.to_string(), r["check"].as_str().unwrap().to_string()),
                (
                    r["verdict"].as_str().unwrap().to_string(),
                    r["steps"].as_array().map_or(0, |steps| {
                        if steps.iter().any(|s| s["actor"] == "cycle") {
                            0
                        } else {
                            steps.len()
                        }
                    }),
                ),
            );
        }
    }
    verdicts
}

/// The fixtures both variants are compared on: every one with a config of its own.
fn fixtures() -> Vec<String> {
    let mut fixtures: Vec<String> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            // demo-shop's largest unit runs into the time limit either way; helm-chart's HPA
            // (up to 10 replicas) into the memory limit without the symmetry reduction.
            let fixture = root().join("fixtures").join(name);
            name != "demo-shop"
                && name != "helm-chart"
                && !name.contains("bad-input")
                && fixture.join(".kivi-lint.yaml").is_file()
        })
        .collect();
    fixtures.sort();
    assert!(fixtures.len() > 30, "{fixtures:?}");
    fixtures
}

/// Every check of every fixture: the same verdict both ways, and a counterexample of the
/// default model no longer than the other's.
fn compare(other: Variant, what: &str) {
    let mut differences = Vec::new();
    for fixture in &fixtures() {
        let reduced = verdicts(fixture, Variant::AsIs);
        let full = verdicts(fixture, other);
        assert_eq!(
            reduced.keys().collect::<Vec<_>>(),
            full.keys().collect::<Vec<_>>(),
            "{fixture}"
        );
        for (key, (verdict, steps)) in &reduced {
            let (full_verdict, full_steps) = &full[key];
            if verdict != full_verdict || steps > full_steps {
                differences.push(format!(
                    "{fixture} {}: {verdict} in {steps} steps, {what} {full_verdict} in {full_steps}",
                    key.1
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{differences:#?}");
}

/// Each kind of disruption alone, from every replica count the autoscalers can hold (the
/// default fault model), reaches every fixture's verdict that the events interleaved in one
/// model reach, with a counterexample no longer.
#[test]
fn each_disruption_alone_keeps_every_fixture_verdict() {
    compare(Variant::Combined, "with the events combined");
}

#[test]
fn symmetry_reduction_keeps_every_fixture_verdict() {
    compare(Variant::NoSymmetry, "without the reduction");
}

/// The kubelet waiting for the scheduler and the workload controllers (time scales) finds
/// what letting it run ahead (`controller-lag`) finds.
#[test]
fn time_scales_keep_every_fixture_verdict() {
    compare(Variant::ControllerLag, "with controller-lag");
}

/// A load change of a workload that no HPA scales and no node-overload event reads changes
/// nothing a step reads: the model leaves it out (and the default config's fault model has no
/// load search for it). With an HPA it stays.
#[test]
fn unread_load_levels_are_not_explored() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - {name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}\n";
    let hpa = "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 4\n  metrics:\n  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}\n";
    for (manifests, explored) in [(deployment.to_string(), false), (format!("{deployment}{hpa}"), true)] {
        let (text, _) = emitted(&[("app.yaml", &manifests)], "1");
        assert_eq!(text.contains("run LoadChange()"), explored, "hpa: {explored}");
    }
}

/// kivi-lint's JSON report on `dir` (no fixes).
fn json_report(dir: &Path) -> Value {
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "-q"])
        .arg(dir)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// The model and the first topology's input kivi-lint emits (`--emit-models`) for a repository
/// of `files` (path, text), verified at `--scale scale`.
fn emitted(files: &[(&str, &str)], scale: &str) -> (String, String) {
    use assert_fs::prelude::*;
    let dir = assert_fs::TempDir::new().unwrap();
    for (path, text) in files {
        dir.child(path).write_str(text).unwrap();
    }
    let models = assert_fs::TempDir::new().unwrap();
    let out = kivi()
        .args(["--no-fixes", "-q", "--scale", scale, "--emit-models"])
        .arg(models.path())
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    // Every file of the kind, in name order, one after the other: a unit of several searches
    // (the fault model's parts) has a model and inputs for each.
    let file = |ext: &str| {
        let mut paths: Vec<_> = std::fs::read_dir(models.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(ext))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "no {ext} emitted");
        paths
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect::<String>()
    };
    (file(".pml"), file(".1.input"))
}

/// Zone pools that differ only by what the unit's pods never look at are one topology per
/// size. Elsewhere in the scan, a Pod naming a node and a hard spread over a `node` key make
/// the assumed cluster give the first pool that node and every pool a `node` label; a plain
/// Deployment still gets 4 topologies (3 to 6 nodes), not one per pool swap.
#[test]
fn pools_differing_in_what_the_pods_ignore_are_interchangeable() {
    use assert_fs::prelude::*;
    let deployment = |name: &str, extra: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n{extra}      containers:\n      - {{name: c, image: nginx, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}\n"
        )
    };
    let dir = assert_fs::TempDir::new().unwrap();
    dir.child("plain/app.yaml").write_str(&deployment("plain", "")).unwrap();
    dir.child("spread/app.yaml")
        .write_str(&deployment(
            "spread",
            "      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: node, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}\n",
        ))
        .unwrap();
    dir.child("pinned/app.yaml")
        .write_str(&deployment("pinned", "      nodeName: foo-node\n"))
        .unwrap();
    let report = json_report(dir.path());
    let planned = |name: &str| {
        report["units"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"].as_str().is_some_and(|n| n.ends_with(name)))
            .map(|u| u["verification"]["search"]["planned"].as_u64().unwrap())
            .unwrap_or_else(|| panic!("{name}: {report}"))
    };
    assert_eq!(planned("/plain"), 4);
    assert_eq!(planned("/spread"), 4);
}

/// Whole zones trade places: three zones of two nodes each that a zone spread treats alike are
/// one group of node classes (the model sorts them as blocks). A node affinity to one zone
/// tells that zone apart; the other two still trade places. The group table is read from the
/// emitted model and input.
#[test]
fn zones_the_pods_treat_alike_trade_places() {
    let config = "apiVersion: kivi-lint/v1alpha1\nkind: Config\ncluster:\n  nodePools:\n    - {name: zone-a, count: 2, labels: {topology.kubernetes.io/zone: a}, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\n    - {name: zone-b, count: 2, labels: {topology.kubernetes.io/zone: b}, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\n    - {name: zone-c, count: 2, labels: {topology.kubernetes.io/zone: c}, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\nchecks:\n  enable: [pods-schedulable]\n";
    let deployment = |affinity: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\nspec:\n  replicas: 3\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n{affinity}      topologySpreadConstraints:\n      - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}\n      containers:\n      - {{name: c, image: nginx, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}\n"
        )
    };
    let not_in_a = "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions: [{key: topology.kubernetes.io/zone, operator: NotIn, values: [a]}]\n";
    // (node classes, their groups) as the model reads them: class per node 1..6, group per class.
    let tables = |manifest: String| {
        let (model, input) = emitted(&[(".kivi-lint.yaml", config), ("app.yaml", &manifest)], "current");
        let table = |name: &str| {
            let at = model.find(&format!(" -> {name}[in_index] = in_value")).unwrap();
            let number = model[..at].rsplit("in_table == ").next().unwrap().trim().to_string();
            let mut values = vec![0i64; 7];
            for line in input.lines() {
                let v: Vec<&str> = line.split(' ').collect();
                if v[0] == number {
                    values[v[1].parse::<usize>().unwrap()] = v[2].parse().unwrap();
                }
            }
            values
        };
        (table("node_class"), table("class_group"))
    };
    let (classes, groups) = tables(deployment(""));
    assert_eq!(&classes[1..], [1, 1, 2, 2, 3, 3]);
    assert_eq!(&groups[1..4], [1, 1, 1]);
    let (classes, groups) = tables(deployment(not_in_a));
    assert_eq!(&classes[1..], [1, 1, 2, 2, 3, 3]);
    // zone a's class is not in a group; b's and c's are one
    let group = |node: usize| groups[classes[node] as usize];
    assert_eq!((group(1), group(3), group(5)), (0, 1, 1));
}

/// Pools that differ only in their bounds are alike to the model unless the cluster
/// autoscaler scales them: zones a and b of 1..3 nodes and zone c of 1..2 give one topology
/// per multiset of sizes up to 6 nodes (111, 211, 311, 221, 321, 222); with the autoscaler,
/// whose model reads the bounds, zone c is told apart again (a and b still swap: 9).
#[test]
fn pools_differing_only_in_bounds_are_interchangeable_without_the_autoscaler() {
    use assert_fs::prelude::*;
    let pools = "cluster:\n  nodePools:\n    - {name: zone-a, count: 1, min: 1, max: 3, labels: {topology.kubernetes.io/zone: a}, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\n    - {name: zone-b, count: 1, min: 1, max: 3, labels: {topology.kubernetes.io/zone: b}, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\n    - {name: zone-c, count: 1, min: 1, max: 2, labels: {topology.kubernetes.io/zone: c}, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\nchecks:\n  enable: [pods-schedulable]\nscaling: {maxNodes: 6}\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n      containers:\n      - {name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}\n";
    let planned = |events: &str| {
        let dir = assert_fs::TempDir::new().unwrap();
        dir.child(".kivi-lint.yaml")
            .write_str(&format!(
                "apiVersion: kivi-lint/v1alpha1\nkind: Config\n{pools}{events}"
            ))
            .unwrap();
        dir.child("app.yaml").write_str(deployment).unwrap();
        json_report(dir.path())["units"][0]["verification"]["search"]["planned"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(planned(""), 6);
    assert_eq!(planned("events:\n  - {type: cluster-autoscaler}\n"), 9);
}

//! Descheduler cases: each case becomes a cluster (one node pool per node of the node list),
//! its pods as bare Pods bound to their nodes with `spec.nodeName` (owners, images, volumes,
//! annotations and priority as the case gives them), and a DeschedulerPolicy that enables the
//! case's plugin with its args and the DefaultEvictor's. kivi-lint builds the unit's IR and
//! model from its own templates with the descheduler probe (`templates/probes/descheduler.pml`):
//! once every pod runs, the descheduler's run prints each eviction, and pan's trail replays it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kivi_lint::config::Config;
use kivi_lint::engine::{Engine, TraceEvent};

use kivi_lint::model::{Generator, Topology, ir};
use kivi_lint::source::SourceMap;
use kivi_lint::units::{Member, Role, Unit};
use serde_json::{Value as Json, json};

use crate::scheduler::{load_documents, pool, run_probe};

/// The check name that puts the probe in the model.
const PROBE: &str = "descheduler";

/// A Pod manifest for a case pod. Priority becomes a PriorityClass of that value, as the
/// Priority admission plugin would have resolved it.
fn pod_manifest(pod: &Json) -> Result<Json, String> {
    let mut containers = Vec::new();
    for (i, c) in pod["containers"].as_array().into_iter().flatten().enumerate() {
        let requests = c["requests"].clone();
        for key in requests.as_object().into_iter().flat_map(|m| m.keys()) {
            if !matches!(key.as_str(), "cpu" | "memory") {
                return Err(format!("requests {key}"));
            }
        }
        containers.push(json!({
            "name": format!("c{i}"),
            "image": c["image"].as_str().unwrap_or(""),
            "resources": {"requests": requests},
        }));
    }
    let mut spec = serde_json::Map::new();
    spec.insert("containers".into(), Json::Array(containers));
    for key in [
        "nodeName",
        "nodeSelector",
        "affinity",
        "tolerations",
        "topologySpreadConstraints",
        "volumes",
    ] {
        if !pod[key].is_null() {
            spec.insert(key.into(), pod[key].clone());
        }
    }
    if let Some(p) = pod["priority"].as_i64() {
        spec.insert("priorityClassName".into(), json!(priority_class(p)));
    }
    let namespace = pod["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default");
    let owners: Vec<Json> = pod["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| json!({"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["name"].as_str().unwrap_or("")}))
        .collect();
    // Upstream's unit tests never meet the API server's name validation (`NOT1`); kivi-lint
    // does, as the API server would: the pod's name is lower-cased, which changes nothing the
    // plugins decide (the listing order is taken from the original names).
    let metadata = json!({
        "name": pod["name"].as_str().unwrap_or("").to_lowercase(),
        "namespace": namespace,
        "labels": pod["labels"].clone(),
        "annotations": pod["annotations"].clone(),
        "ownerReferences": owners,
    });
    Ok(crate::scheduler::pod_document(pod, metadata, Json::Object(spec)))
}

fn priority_class(value: i64) -> String {
    if value < 0 {
        format!("priority-minus-{}", -value)
    } else {
        format!("priority-{value}")
    }
}

/// The DeschedulerPolicy (descheduler/v1alpha2) of a case: one profile, its plugin enabled at
/// the balance extension point.
fn policy(config: &Json) -> Json {
    let plugin = config["plugin"].as_str().unwrap_or("");
    let mut args = config["args"].clone();
    if args.is_null() {
        args = json!({});
    }
    json!({
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "metadata": {"name": "policy"},
        "profiles": [{
            "name": "conformance",
            "pluginConfig": [
                {"name": "DefaultEvictor", "args": config["defaultEvictor"].clone()},
                {"name": plugin, "args": args},
            ],
            "plugins": {"balance": {"enabled": [plugin]}},
        }],
    })
}

/// Run one descheduler case. `Err` is a failure with its reason.
pub fn run(case: &Json, engine: &Engine, generator: &Generator) -> Result<(), String> {
    let nodes: Vec<&Json> = case["nodes"].as_array().into_iter().flatten().collect();
    let mut sources = SourceMap::default();
    let mut config = Config::default_for(Path::new("."), &mut sources);
    config.cluster.pools = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| pool(i + 1, n))
        .collect::<Result<_, _>>()?;
    // A pod on a node outside the list the plugin is given is never listed: leave it out.
    // The plugins list pods node by node, each node's in the informer's order (by
    // namespace/name key); the model lists them in slot order, so the slots follow that order.
    let node_index = |p: &Json| nodes.iter().position(|n| n["name"] == p["nodeName"]);
    let mut pods: Vec<&Json> = case["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| node_index(p).is_some())
        .collect();
    pods.sort_by_key(|p| {
        let namespace = p["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default");
        (
            node_index(p),
            format!("{namespace}/{}", p["name"].as_str().unwrap_or("")),
        )
    });
    let mut documents = Vec::new();
    for p in &pods {
        documents.push(pod_manifest(p)?);
    }
    let workloads = documents.len();
    let priorities: BTreeSet<i64> = pods.iter().filter_map(|p| p["priority"].as_i64()).collect();
    for value in priorities {
        documents.push(json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": priority_class(value)},
            "value": value,
        }));
    }
    documents.push(policy(&case["config"]));
    let objects = load_documents(&mut sources, &documents)?;
    let mut members: Vec<Member> = (0..workloads)
        .map(|object| Member {
            object,
            role: Role::Workload,
        })
        .collect();
    members.push(Member {
        object: objects.len() - 1,
        role: Role::DeschedulerPolicy,
    });
    let unit = Unit {
        id: "conformance".into(),
        name: "conformance".into(),
        scope: 0,
        members,
        node_pools: config.cluster.pools.iter().map(|p| p.name.clone()).collect(),
        checks: Vec::new(),
        edges: Vec::new(),
        not_checked: Vec::new(),
        cluster: None,
        drain_alone: false,
    };
    let (mut built, names) = ir::build(
        &unit,
        &objects,
        &config,
        &Default::default(),
        &Topology::current(&config),
    )
    .map_err(|e| format!("no model: {e}"))?;
    built.probe = Some(PROBE);
    // Upstream's test cluster starts with every pod running where `nodeName` puts it: so does
    // the model (as `cluster.initialPods` would), rather than scheduling them one by one.
    for w in &mut built.workloads {
        let node = built.templates[w.template - 1].node_name as usize;
        w.initial = vec![(node, 1)];
    }
    let trace = run_probe(
        &built,
        engine,
        generator,
        "the probe never saw a descheduler run with every pod running",
    )?;
    // Slot → pod name: each workload (a bare Pod) has one slot.
    let slot_pod: BTreeMap<i64, &str> = built
        .workloads
        .iter()
        .zip(&names.workloads)
        .map(|(w, &object)| (w.first_slot as i64, objects[object].id.name.as_str()))
        .collect();
    let (count, evicted) = evictions(&trace, &slot_pod);
    let expect = &case["expect"];
    let want = expect["evictedCount"].as_i64().unwrap_or(-1);
    if count != want {
        return Err(format!(
            "evictedCount: kivi-lint {count} ({}), upstream {want}",
            evicted.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    for name in expect["evictedPodsInclude"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap_or("").to_lowercase();
        if !evicted.contains(&name) {
            return Err(format!(
                "evictedPodsInclude: {name} not evicted (kivi-lint evicts {})",
                evicted.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(())
}

/// The eviction calls the probe's run made, and the pods it evicted.
fn evictions(trace: &[TraceEvent], slot_pod: &BTreeMap<i64, &str>) -> (i64, BTreeSet<String>) {
    let mut count = 0;
    let mut evicted = BTreeSet::new();
    for e in trace {
        if let [93, slot, _plugin, calls] = e.values.as_slice() {
            count += calls;
            evicted.insert(
                slot_pod
                    .get(slot)
                    .map_or_else(|| format!("slot {slot}"), |n| n.to_string()),
            );
        }
    }
    (count, evicted)
}

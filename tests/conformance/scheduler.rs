//! Scheduler plugin cases: each case becomes a cluster (one node pool per node), bare Pods
//! bound to their nodes with `spec.nodeName`, and the incoming Pod last. kivi-lint builds the
//! unit's IR and model from its own templates with the scheduler probe
//! (`templates/probes/scheduler.pml`), and pan's trail replays what the scheduler's cycle for
//! the incoming pod decided on each node.
//!
//! Upstream runs one plugin in isolation; the model runs them all. Isolation is done on the
//! IR, never on the model: the plugins not under test are given nothing to say (every node
//! passes the static filters for a PodTopologySpread case, the candidate nodes for a Score
//! case; the other score plugins get weight 0).

use std::collections::BTreeMap;
use std::path::Path;

use kivi_lint::config::{Config, NodePool};
use kivi_lint::engine::{Engine, TraceEvent, Verdict};
use kivi_lint::manifest::node::NodeResources;
use kivi_lint::manifest::pod::{Amounts, is_scalar_resource};
use kivi_lint::manifest::quantity::Quantity;
use kivi_lint::manifest::scheduler_config::SchedulerProfile;
use kivi_lint::manifest::taint::{Taint, TaintEffect};
use kivi_lint::manifest::{self, Body, Labels, Object};
use kivi_lint::model::{Generator, Shape, Topology, input, ir};
use kivi_lint::source::{SourceMap, Span};
use kivi_lint::units::{Member, Role, Unit};
use serde_json::{Value as Json, json};

/// The check name that puts the probe in the model.
const PROBE: &str = "scheduler";

/// What one run of the probe printed.
#[derive(Debug, Default)]
struct Cycle {
    /// Per node (in case order): static, cpu short, memory short, pods full, feasible, score.
    nodes: Vec<[i64; 6]>,
    /// Per hard constraint: per node (counted, domain, matching pods in its domain).
    domains: BTreeMap<i64, Vec<(bool, i64, i64)>>,
    /// Per node (in case order): the score over every node that passes the static filters,
    /// as upstream's Score tests call Score without Filter.
    scores: Vec<i64>,
    /// Per node (1-based) the scalar resources (by index into `scalar_names`) it is short of.
    scalar_short: BTreeMap<i64, Vec<i64>>,
    scalar_names: Vec<String>,
}

struct Scenario<'a> {
    case: &'a Json,
    node_names: Vec<String>,
}

pub fn quantity(v: &Json, milli: bool) -> Result<i64, String> {
    let text = match v {
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        other => return Err(format!("not a quantity: {other}")),
    };
    let q = Quantity::parse(&text).map_err(|e| format!("{text}: {e:?}"))?;
    if milli { q.milli_value() } else { q.value() }.map_err(|e| format!("{text}: {e:?}"))
}

pub fn labels(v: &Json) -> Labels {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), String::from)))
                .collect()
        })
        .unwrap_or_default()
}

/// One pool of one node, as the case describes it.
pub fn pool(index: usize, node: &Json) -> Result<NodePool, String> {
    let name = node["name"].as_str().unwrap_or("node").to_string();
    let allocatable = &node["allocatable"];
    for key in allocatable.as_object().into_iter().flat_map(|m| m.keys()) {
        if !matches!(key.as_str(), "cpu" | "memory" | "pods") && !is_scalar_resource(key) {
            return Err(format!("allocatable {key}"));
        }
    }
    let get = |k: &str, milli: bool| -> Result<Option<i64>, String> {
        match &allocatable[k] {
            Json::Null => Ok(None),
            v => quantity(v, milli).map(Some),
        }
    };
    let mut taints = Vec::new();
    for t in node["taints"].as_array().into_iter().flatten() {
        let effect = match t["effect"].as_str() {
            Some("NoSchedule") => TaintEffect::NoSchedule,
            Some("PreferNoSchedule") => TaintEffect::PreferNoSchedule,
            Some("NoExecute") => TaintEffect::NoExecute,
            other => return Err(format!("taint effect {other:?}")),
        };
        taints.push(Taint {
            key: t["key"].as_str().unwrap_or("").to_string(),
            value: t["value"].as_str().unwrap_or("").to_string(),
            effect,
        });
    }
    Ok(NodePool {
        name: format!("pool-{index}"),
        count: 1,
        min: 1,
        max: 1,
        labels: labels(&node["labels"]),
        scalar_allocatable: allocatable
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| is_scalar_resource(k))
            .map(|(k, v)| quantity(v, false).map(|q| (k.clone(), q)))
            .collect::<Result<_, _>>()?,
        hostname_labels: Vec::new(),
        // `spec.unschedulable` (cordoned): upstream's test nodes set it without the taint the
        // node lifecycle controller adds in a cluster.
        unschedulable: node["unschedulable"] == Json::Bool(true),
        // Upstream's test nodes (st.MakeNode) have 32 pod slots and no cpu or memory.
        allocatable: NodeResources {
            cpu_millis: get("cpu", true)?.unwrap_or(0),
            memory_bytes: get("memory", false)?.unwrap_or(0),
            pods: get("pods", false)?.unwrap_or(32),
        },
        reserved: Amounts::default(),
        taints,
        zones: Vec::new(),
        node_names: vec![name],
        span: Span::default(),
    })
}

fn containers(list: &Json) -> Result<Vec<Json>, String> {
    let mut out = Vec::new();
    for (i, c) in list.as_array().into_iter().flatten().enumerate() {
        let requests = c["requests"].clone();
        for key in requests.as_object().into_iter().flat_map(|m| m.keys()) {
            if !matches!(key.as_str(), "cpu" | "memory") && !is_scalar_resource(key) {
                return Err(format!("requests {key}"));
            }
        }
        out.push(json!({"name": format!("c{i}"), "image": "x", "resources": {"requests": requests}}));
    }
    Ok(out)
}

/// A Pod manifest (JSON, which is YAML) for a case pod.
fn pod_manifest(pod: &Json, node_name: Option<&str>, gates: &Json) -> Result<Json, String> {
    let mut spec = serde_json::Map::new();
    let mut app = containers(&pod["containers"])?;
    if app.is_empty() {
        // Upstream's test pods may have no container (the API would reject that): one that
        // requests nothing, explicitly, so that scoring adds no default request either.
        let nothing = if pod["containers"].is_array() {
            json!({"cpu": "0", "memory": "0"})
        } else {
            json!({})
        };
        app.push(json!({"name": "c0", "image": "x", "resources": {"requests": nothing}}));
    }
    spec.insert("containers".into(), Json::Array(app));
    let init = containers(&pod["initContainers"])?;
    if !init.is_empty() {
        spec.insert("initContainers".into(), Json::Array(init));
    }
    for key in ["nodeSelector", "affinity", "tolerations", "overhead"] {
        if !pod[key].is_null() {
            spec.insert(key.into(), pod[key].clone());
        }
    }
    if let Some(list) = pod["topologySpreadConstraints"].as_array() {
        // A feature gate that is off makes the plugin ignore the field (README of the suite).
        let mut list = list.clone();
        for c in &mut list {
            let c = c.as_object_mut().expect("a constraint");
            if gates["matchLabelKeys"] == json!(false) {
                c.remove("matchLabelKeys");
            }
            if gates["nodeInclusionPolicy"] == json!(false) {
                c.remove("nodeAffinityPolicy");
                c.remove("nodeTaintsPolicy");
            }
        }
        spec.insert("topologySpreadConstraints".into(), Json::Array(list));
    }
    if let Some(n) = node_name {
        spec.insert("nodeName".into(), json!(n));
    }
    let namespace = pod["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default");
    // Upstream's unit tests skip the API server's name validation; kivi-lint does not: the
    // name is lower-cased (nothing the scheduler decides reads it).
    let name = pod["name"].as_str().unwrap_or("").to_lowercase();
    let metadata = json!({"name": name, "namespace": namespace, "labels": pod["labels"].clone()});
    Ok(pod_document(pod, metadata, Json::Object(spec)))
}

/// The Pod manifest of a case pod with its `metadata` and `spec`. A pod the case marks as
/// being deleted gets a `deletionTimestamp`: kivi-lint starts it terminating on its node.
pub fn pod_document(pod: &Json, mut metadata: Json, spec: Json) -> Json {
    if pod["terminating"] == json!(true) || !pod["deletionTimestamp"].is_null() {
        metadata["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
    })
}

impl<'a> Scenario<'a> {
    fn new(case: &'a Json) -> Scenario<'a> {
        let node_names = case["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| n["name"].as_str().unwrap_or("node").to_string())
            .collect();
        Scenario { case, node_names }
    }

    /// Build the unit, let `isolate` adjust its IR, run the probe.
    fn run(&self, engine: &Engine, generator: &Generator, isolate: &dyn Fn(&mut ir::Ir)) -> Result<Cycle, String> {
        let case = self.case;
        let gates = &case["config"]["featureGates"];
        let mut sources = SourceMap::default();
        let mut config = Config::default_for(Path::new("."), &mut sources);
        config.cluster.pools = case["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, n)| pool(i + 1, n))
            .collect::<Result<_, _>>()?;
        if config.cluster.pools.is_empty() {
            // Upstream's PreFilter may run with no node; a model needs one. A node without
            // labels lacks every topology key, so no constraint counts it.
            config.cluster.pools.push(pool(1, &json!({"name": "placeholder"}))?);
        }
        let environment = kivi_lint::config::Environment {
            scheduler_profile: Some(scheduler_profile(&mut sources, &case["config"])?),
            ..Default::default()
        };
        let mut documents = Vec::new();
        for (i, service) in case["services"].as_array().into_iter().flatten().enumerate() {
            if service["kind"] != json!("Service") {
                return Err(format!("a {} selecting pods", service["kind"]));
            }
            let namespace = service["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or("default");
            documents.push(json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": format!("service-{i}"), "namespace": namespace},
                "spec": {"selector": service["selector"].clone()},
            }));
        }
        for p in case["existingPods"].as_array().into_iter().flatten() {
            documents.push(pod_manifest(p, p["nodeName"].as_str(), gates)?);
        }
        documents.push(pod_manifest(&case["pod"], None, gates)?);
        let mut objects = load_documents(&mut sources, &documents)?;
        // The comparison-operator gate turned off, as the config's `featureGates` turns it off.
        if gates["taintTolerationComparisonOperators"] == json!(false) {
            config.comparison_operators = false;
            for o in &mut objects {
                o.without_comparison_operators();
            }
        }
        let unit = Unit {
            id: "conformance".into(),
            name: "conformance".into(),
            scope: 0,
            members: (0..objects.len())
                .map(|object| Member {
                    object,
                    role: match objects[object].body {
                        Body::Service { .. } => Role::Service,
                        _ => Role::Workload,
                    },
                })
                .collect(),
            node_pools: config.cluster.pools.iter().map(|p| p.name.clone()).collect(),
            checks: Vec::new(),
            edges: Vec::new(),
            not_checked: Vec::new(),
            cluster: None,
            drain_alone: false,
        };
        let (mut built, names) = ir::build(&unit, &objects, &config, &environment, &Topology::current(&config))
            .map_err(|e| format!("no model: {e}"))?;
        built.probe = Some(PROBE);
        isolate(&mut built);
        let trace = run_probe(
            &built,
            engine,
            generator,
            "the probe never saw the incoming pod's cycle",
        )?;
        let mut cycle = decode(&trace);
        cycle.scalar_names = names.scalar_resources;
        Ok(cycle)
    }
}

/// The case's plugin args as a KubeSchedulerConfiguration, read through kivi-lint's own
/// reader: its `default-scheduler` profile.
fn scheduler_profile(sources: &mut SourceMap, config: &Json) -> Result<SchedulerProfile, String> {
    let plugin = config["plugin"].as_str().unwrap_or("");
    let mut args = config["args"].as_object().cloned().unwrap_or_default();
    if plugin == "PodTopologySpread" {
        for key in ["defaultingType", "defaultConstraints"] {
            if !config[key].is_null() {
                args.insert(key.into(), config[key].clone());
            }
        }
    }
    let document = json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "pluginConfig": [{"name": plugin, "args": args}],
        }],
    });
    let objects = load_documents(sources, &[document])?;
    match &objects[0].body {
        Body::SchedulerConfiguration(c) => c
            .profile("default-scheduler")
            .cloned()
            .ok_or_else(|| "no default-scheduler profile".to_string()),
        _ => Err("not read as a KubeSchedulerConfiguration".to_string()),
    }
}

/// Read a case's manifests (JSON, which is YAML) through kivi-lint's own reader; any
/// diagnostic, or an object it did not read, fails the case.
pub fn load_documents(sources: &mut SourceMap, documents: &[Json]) -> Result<Vec<Object>, String> {
    let mut diagnostics = kivi_lint::diagnostics::Diagnostics::default();
    let text: Vec<String> = documents.iter().map(|d| d.to_string()).collect();
    let (_, loaded) = manifest::load_text(sources, "case.yaml", &text.join("\n---\n"), &mut diagnostics);
    if let Some(d) = diagnostics.iter().next() {
        return Err(format!("kivi-lint rejects the case: {}", d.message));
    }
    if loaded.objects.len() != documents.len() {
        return Err(format!("{} of {} objects read", loaded.objects.len(), documents.len()));
    }
    Ok(loaded.objects)
}

/// Render the model of `built` with its probe, run pan, and return the trail the probe's
/// `assert(false)` left; `unseen` is the failure when the probe never fired.
pub fn run_probe(
    built: &ir::Ir,
    engine: &Engine,
    generator: &Generator,
    unseen: &str,
) -> Result<Vec<TraceEvent>, String> {
    let shape = Shape::of([built]);
    let model = generator.render(built, &shape).map_err(|e| e.to_string())?;
    let input = input(built, &shape, &[]);
    // For debugging a case: KIVI_CONFORMANCE_DUMP=dir keeps the last model and input.
    if let Some(dir) = std::env::var_os("KIVI_CONFORMANCE_DUMP") {
        let dir = std::path::PathBuf::from(dir);
        let _ = std::fs::write(dir.join("model.pml"), &model);
        let _ = std::fs::write(dir.join("input.txt"), &input);
    }
    let outcome = engine
        .verify(&model, &input, &std::sync::atomic::AtomicBool::new(false))
        .map_err(|e| e.to_string())?;
    match outcome.verdict {
        Verdict::Violated { trace, .. } => Ok(trace),
        Verdict::Verified => Err(unseen.to_string()),
        Verdict::Inconclusive(why) => Err(format!("inconclusive: {why}")),
    }
}

fn decode(trace: &[TraceEvent]) -> Cycle {
    let mut cycle = Cycle::default();
    for e in trace {
        match e.values.as_slice() {
            [90, _node, rest @ ..] if rest.len() == 6 => {
                cycle.nodes.push([rest[0], rest[1], rest[2], rest[3], rest[4], rest[5]]);
            }
            [92, _node, score] => cycle.scores.push(*score),
            [94, node, k, short] if *short != 0 => {
                cycle.scalar_short.entry(*node).or_default().push(*k);
            }
            [91, k, _node, counted, domain, count] => {
                cycle
                    .domains
                    .entry(*k)
                    .or_default()
                    .push((*counted != 0, *domain, *count));
            }
            _ => {}
        }
    }
    cycle
}

/// Every node's bit set.
fn all_nodes(ir: &ir::Ir) -> u32 {
    (1..=ir.nodes.len()).fold(0, |m, n| m | (1 << n))
}

fn incoming(ir: &mut ir::Ir) -> &mut ir::IrTemplate {
    ir.templates.last_mut().expect("the incoming pod's template")
}

fn compare<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: kivi-lint {got:?}, upstream {want:?}"))
    }
}

fn status_map(expect: &Json) -> BTreeMap<String, String> {
    expect
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Run one case of a scheduler file. `Err` is a failure with its reason.
pub fn run(file: &str, case: &Json, engine: &Engine, generator: &Generator) -> Result<(), String> {
    let scenario = Scenario::new(case);
    let expect = &case["expect"];
    let plugin = case["config"]["plugin"].as_str().unwrap_or("");
    match file {
        "scheduler_filter_topologyspread.yaml" => {
            let cycle = scenario.run(engine, generator, &|ir| {
                let all = all_nodes(ir);
                incoming(ir).static_nodes = all;
            })?;
            let got = filter_statuses(&scenario, &cycle, |i, row| {
                if row[4] != 0 {
                    "Success"
                } else if lacks_spread_key(case, i) {
                    "UnschedulableAndUnresolvable"
                } else {
                    "Unschedulable"
                }
            });
            compare("filterStatus", got, status_map(&expect["filterStatus"]))
        }
        "scheduler_filter_noderesourcesfit.yaml" => {
            let cycle = scenario.run(engine, generator, &|_| {})?;
            let row = cycle.nodes.first().ok_or("no node")?;
            let mut reasons = Vec::new();
            if row[3] != 0 {
                reasons.push("Too many pods".to_string());
            }
            if row[1] != 0 {
                reasons.push("Insufficient cpu".to_string());
            }
            if row[2] != 0 {
                reasons.push("Insufficient memory".to_string());
            }
            for k in cycle.scalar_short.get(&1).into_iter().flatten() {
                reasons.push(format!("Insufficient {}", cycle.scalar_names[*k as usize]));
            }
            let mut want: Vec<String> = expect["reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(String::from))
                .collect();
            want.sort();
            reasons.sort();
            compare("reasons", reasons, want)
        }
        "scheduler_filter_tainttoleration.yaml" | "scheduler_filter_nodeaffinity.yaml" => {
            let cycle = scenario.run(engine, generator, &|_| {})?;
            let got = filter_statuses(&scenario, &cycle, |_, row| {
                if row[0] != 0 {
                    "Success"
                } else {
                    "UnschedulableAndUnresolvable"
                }
            });
            compare("filterStatus", got, status_map(&expect["filterStatus"]))
        }
        "scheduler_score_topologyspread.yaml"
        | "scheduler_score_tainttoleration.yaml"
        | "scheduler_score_nodeaffinity.yaml"
        | "scheduler_score_noderesourcesfit.yaml" => {
            let candidates: Vec<String> = case["candidateNodes"]
                .as_array()
                .map(|c| c.iter().filter_map(|n| n.as_str().map(String::from)).collect())
                .unwrap_or_else(|| scenario.node_names.clone());
            let mask = scenario
                .node_names
                .iter()
                .enumerate()
                .filter(|(_, n)| candidates.contains(n))
                .fold(0u32, |m, (i, _)| m | (1 << (i + 1)));
            let cycle = scenario.run(engine, generator, &|ir| {
                incoming(ir).static_nodes = mask;
                let s = &mut ir.scoring;
                s.fit = 0;
                s.balanced = 0;
                s.spread = 0;
                s.taint = 0;
                s.affinity = 0;
                match plugin {
                    "PodTopologySpread" => s.spread = 1,
                    "TaintToleration" => s.taint = 1,
                    "NodeAffinity" => s.affinity = 1,
                    _ => s.fit = 1,
                }
            })?;
            let want = &expect["normalizedScores"];
            let want = if want.is_null() { &expect["scores"] } else { want };
            let want: BTreeMap<String, i64> = want
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_i64().unwrap_or(-1)))
                .collect();
            let got: BTreeMap<String, i64> = scenario
                .node_names
                .iter()
                .zip(&cycle.scores)
                .filter(|(n, _)| want.contains_key(*n))
                .map(|(n, score)| (n.clone(), *score))
                .collect();
            compare("scores", got, want)
        }
        "scheduler_prefilter_topologyspread.yaml" => {
            let cycle = scenario.run(engine, generator, &|ir| {
                let all = all_nodes(ir);
                incoming(ir).static_nodes = all;
            })?;
            let want_status = expect["preFilterStatus"].as_str().unwrap_or("");
            let got_status = if cycle.domains.is_empty() { "Skip" } else { "Success" };
            compare("preFilterStatus", got_status, want_status)?;
            let want: Vec<BTreeMap<String, i64>> = expect["tpValueToMatchNum"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    m.as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), v.as_i64().unwrap_or(-1)))
                        .collect()
                })
                .collect();
            let keys = hard_keys(case);
            let got: Vec<BTreeMap<String, i64>> = cycle
                .domains
                .values()
                .enumerate()
                .map(|(k, per_node)| {
                    let mut m = BTreeMap::new();
                    for (i, (counted, domain, count)) in per_node.iter().enumerate() {
                        let value = keys
                            .get(k)
                            .and_then(|key| case["nodes"][i]["labels"][key].as_str())
                            .map(String::from);
                        if *counted
                            && *domain > 0
                            && let Some(v) = value
                        {
                            m.insert(v, *count);
                        }
                    }
                    m
                })
                .collect();
            compare("tpValueToMatchNum", got, want)
        }
        _ => Err(format!("no scheduler harness for {file}")),
    }
}

/// The topology keys of the incoming pod's DoNotSchedule constraints, in order.
fn hard_keys(case: &Json) -> Vec<String> {
    case["pod"]["topologySpreadConstraints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["whenUnsatisfiable"] == json!("DoNotSchedule"))
        .filter_map(|c| c["topologyKey"].as_str().map(String::from))
        .collect()
}

/// Whether node `i` lacks a hard constraint's topology key (Filter's
/// UnschedulableAndUnresolvable).
fn lacks_spread_key(case: &Json, i: usize) -> bool {
    let node_labels = &case["nodes"][i]["labels"];
    hard_keys(case).iter().any(|k| node_labels[k].is_null())
}

fn filter_statuses(
    scenario: &Scenario,
    cycle: &Cycle,
    status: impl Fn(usize, &[i64; 6]) -> &'static str,
) -> BTreeMap<String, String> {
    scenario
        .node_names
        .iter()
        .zip(&cycle.nodes)
        .enumerate()
        .map(|(i, (n, row))| (n.clone(), status(i, row).to_string()))
        .collect()
}

//! Controller arithmetic cases (HPA replica calculation and normalisation, Deployment rolling
//! update): the logic is deterministic, so a file's cases run in one standalone model, the
//! probe template (`templates/probes/{autoscaler,deployment}.pml`, which includes the
//! controller's own arithmetic template) plus an `init` with every case's inputs, through one
//! SPIN simulation. Each case prints its results under its index.
//!
//! Only numbers reach the generated `init`: the case's quantities, counts and the limits
//! kivi-lint computes from a manifest built for the case.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use kivi_lint::manifest::quantity::IntOrPercent;
use kivi_lint::manifest::{self, Body};
use kivi_lint::model::{Generator, ir};
use kivi_lint::source::SourceMap;
use serde_json::{Value as Json, json};

use crate::cases::Case;

/// What one case needs from the simulation's output, and how to judge it.
type Judge = Box<dyn Fn(&BTreeMap<i64, Vec<i64>>) -> Result<(), String> + Send + Sync>;

/// A case turned into PROMELA statements (numbers only) and a judge of the printed lines.
struct Prepared {
    statements: String,
    judge: Judge,
}

/// Run the cases of an HPA or Deployment file: per case index, `Ok` or the failure.
pub fn run_file(
    file: &str,
    cases: &[(usize, &Case)],
    spin: &Path,
    generator: &Generator,
) -> Vec<(usize, Result<(), String>)> {
    let probe = if file.starts_with("hpa_") {
        "autoscaler"
    } else {
        "deployment"
    };
    let mut prepared = Vec::new();
    let mut results = Vec::new();
    for (i, case) in cases {
        let k = *i as i64;
        let p = match file {
            "hpa_replicas.yaml" => replica_calculation(k, &case.body),
            "hpa_normalization.yaml" => normalization(k, &case.body),
            "deployment_rollout.yaml" => rolling_update(k, &case.body),
            _ => Err(format!("no arithmetic harness for {file}")),
        };
        match p {
            Ok(p) => prepared.push((*i, p)),
            Err(e) => results.push((*i, Err(e))),
        }
    }
    if prepared.is_empty() {
        return results;
    }
    let mut model = match generator.render_probe(probe) {
        Ok(m) => m,
        Err(e) => return cases.iter().map(|(i, _)| (*i, Err(e.to_string()))).collect(),
    };
    model.push_str("\ninit {\n  d_step {\n");
    for (_, p) in &prepared {
        model.push_str(&p.statements);
    }
    model.push_str("  }\n}\n");
    let printed = match simulate(spin, &model) {
        Ok(p) => p,
        Err(e) => return cases.iter().map(|(i, _)| (*i, Err(e.clone()))).collect(),
    };
    for (i, p) in prepared {
        let lines: BTreeMap<i64, Vec<i64>> = printed
            .iter()
            .filter(|l| l.get(1) == Some(&(i as i64)))
            .map(|l| (l[0], l[2..].to_vec()))
            .collect();
        results.push((i, (p.judge)(&lines)));
    }
    results
}

/// `spin` simulation of `model`: the `KIVI:` lines, as numbers.
fn simulate(spin: &Path, model: &str) -> Result<Vec<Vec<i64>>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("probe.pml");
    std::fs::write(&path, model).map_err(|e| e.to_string())?;
    if let Some(d) = std::env::var_os("KIVI_CONFORMANCE_DUMP") {
        let _ = std::fs::write(Path::new(&d).join("probe.pml"), model);
    }
    let out = Command::new(spin)
        .arg("probe.pml")
        .current_dir(dir.path())
        .output()
        .map_err(|e| format!("spin: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || stdout.contains("error") {
        return Err(format!(
            "spin failed: {}{}",
            stdout.lines().take(5).collect::<Vec<_>>().join(" | "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("KIVI:"))
        .map(|l| l.split(':').filter_map(|v| v.trim().parse().ok()).collect())
        .collect())
}

fn int(v: &Json, what: &str) -> Result<i64, String> {
    v.as_i64().ok_or_else(|| format!("{what}: not an integer: {v}"))
}

fn compare(what: &str, got: i64, want: &Json) -> Result<(), String> {
    match want.as_i64() {
        Some(w) if w == got => Ok(()),
        _ => Err(format!("{what}: kivi-lint {got}, upstream {want}")),
    }
}

fn line(lines: &BTreeMap<i64, Vec<i64>>, tag: i64, len: usize) -> Result<&[i64], String> {
    lines
        .get(&tag)
        .filter(|l| l.len() == len)
        .map(Vec::as_slice)
        .ok_or_else(|| "the probe printed nothing".to_string())
}

// --- HPA ---------------------------------------------------------------------------------

/// GetResourceReplicas for a cpu Resource metric, GetMetricReplicas and the Object and
/// External variants for the others (replica_calculator.pml).
fn replica_calculation(k: i64, case: &Json) -> Result<Prepared, String> {
    let metric = &case["metric"];
    // A resource metric with an average value target is GetRawResourceReplicas, the plain
    // per-pod calculation.
    let resource = matches!(metric["type"].as_str(), Some("Resource" | "ContainerResource"));
    if !resource || metric["targetAverageUtilization"].is_null() {
        return metric_replicas(k, case);
    }
    let target = int(&metric["targetAverageUtilization"], "targetAverageUtilization")?;
    let usage = &metric["podUsageMilli"];
    let mut s = format!(
        "    rc_begin({}, {target});\n",
        int(&case["currentReplicas"], "currentReplicas")?
    );
    if metric["resource"] != "cpu" {
        s.push_str("    rc_not_cpu();\n");
    }
    for pod in case["pods"].as_array().into_iter().flatten() {
        let phase = group_phase(pod)?;
        let ready = i64::from(pod["ready"] == json!(true));
        // Started within the cpu initialisation period: with the harness's zero-time Ready
        // transition and metric timestamps, such a pod is unready.
        let recent = i64::from(pod["startTime"] == json!("now"));
        let name = pod["name"].as_str().unwrap_or("");
        let (metric, used) = match usage[name].as_i64() {
            Some(u) => (1, u),
            None => (0, 0),
        };
        let request = pod["requestMilli"].as_i64().unwrap_or(0);
        let _ = writeln!(
            s,
            "    rc_add_pod({phase}, {ready}, {recent}, {metric}, {request}, {used});"
        );
    }
    let _ = writeln!(s, "    probe_replica_calculation({k});");
    let expect = case["expect"].clone();
    Ok(Prepared {
        statements: s,
        judge: Box::new(move |lines| {
            let l = line(lines, 95, 4)?;
            let (error, desired, util, raw) = (l[0], l[1], l[2], l[3]);
            if let Some(verdict) = judge_error(error, &expect) {
                return verdict;
            }
            compare("replicas", desired, &expect["replicas"])?;
            compare("usage", util, &expect["usage"])?;
            if !expect["rawAverageValueMilli"].is_null() {
                compare("rawAverageValue", raw, &expect["rawAverageValueMilli"])?;
            }
            Ok(())
        }),
    })
}

/// groupPods: Failed or deleted pods are ignored, Pending ones unready.
fn group_phase(pod: &Json) -> Result<&'static str, String> {
    match (pod["phase"].as_str(), pod["deleting"] == json!(true)) {
        (Some("Failed"), _) | (_, true) => Ok("RC_IGNORED"),
        (Some("Pending"), _) => Ok("RC_PENDING"),
        (Some("Running"), _) => Ok("RC_RUNNING"),
        (other, _) => Err(format!("pod phase {other:?}")),
    }
}

/// The replica calculation's error against the case's: `Some` verdict when either has one
/// (replica_calculator.pml's rc_error codes for upstream's messages).
fn judge_error(error: i64, expect: &Json) -> Option<Result<(), String>> {
    let Some(text) = expect["errorContains"].as_str() else {
        return (error != 0).then(|| Err(format!("kivi-lint error {error}, upstream {expect}")));
    };
    let want = [
        ("no metrics returned", 1),
        ("did not receive metrics", 2),
        ("missing request", 3),
        ("no pods returned", 4),
    ]
    .iter()
    .find(|(message, _)| text.contains(message))
    .map(|(_, code)| *code);
    Some(match want {
        Some(w) if w == error => Ok(()),
        Some(_) => Err(format!("error: kivi-lint {error}, upstream {text:?}")),
        None => Err(format!("unknown error {text:?}")),
    })
}

/// A Pods, Object or External metric: its arithmetic in replica_calculator.pml, as the
/// model's Autoscaler runs it.
fn metric_replicas(k: i64, case: &Json) -> Result<Prepared, String> {
    let metric = &case["metric"];
    let current = int(&case["currentReplicas"], "currentReplicas")?;
    let pods: Vec<&Json> = case["pods"].as_array().into_iter().flatten().collect();
    let sum = |v: &Json| v.as_array().into_iter().flatten().filter_map(Json::as_i64).sum::<i64>();
    // getReadyPodsCount: Running pods whose Ready condition is true.
    let ready = pods
        .iter()
        .filter(|p| p["phase"] == "Running" && p["ready"] == json!(true))
        .count();
    let (kind, target, value) = match metric["type"].as_str() {
        Some("Pods" | "Resource" | "ContainerResource") => (
            1,
            int(&metric["targetAverageValueMilli"], "targetAverageValueMilli")?,
            0,
        ),
        Some("Object") => (
            2,
            int(&metric["targetValueMilli"], "targetValueMilli")?,
            int(&metric["valueMilli"], "valueMilli")?,
        ),
        Some("External") => (
            2,
            int(&metric["targetValueMilli"], "targetValueMilli")?,
            sum(&metric["valuesMilli"]),
        ),
        Some("ObjectAverageValue") => (
            3,
            int(&metric["targetAverageValueMilli"], "targetAverageValueMilli")?,
            int(&metric["valueMilli"], "valueMilli")?,
        ),
        Some("ExternalAverageValue") => (
            3,
            int(&metric["targetAverageValueMilli"], "targetAverageValueMilli")?,
            sum(&metric["valuesMilli"]),
        ),
        other => return Err(format!("metric type {other:?}")),
    };
    let mut s = format!("    rc_begin({current}, {target});\n");
    // groupPods' readiness rules are cpu's: a cpu average value keeps them.
    if metric["resource"] != "cpu" {
        s.push_str("    rc_not_cpu();\n");
    }
    let values = if metric["podValuesMilli"].is_null() {
        &metric["podUsageMilli"]
    } else {
        &metric["podValuesMilli"]
    };
    for pod in &pods {
        let phase = group_phase(pod)?;
        let name = pod["name"].as_str().unwrap_or("");
        let (has, used) = match values[name].as_i64() {
            Some(u) => (1, u),
            None => (0, 0),
        };
        let ready = i64::from(pod["ready"] == json!(true));
        let recent = i64::from(pod["startTime"] == json!("now"));
        let _ = writeln!(s, "    rc_add_pod({phase}, {ready}, {recent}, {has}, 0, {used});");
    }
    let _ = writeln!(s, "    probe_metric_replicas({k}, {kind}, {value}, {ready});");
    let expect = case["expect"].clone();
    Ok(Prepared {
        statements: s,
        judge: Box::new(move |lines| {
            let l = line(lines, 97, 3)?;
            let (error, desired, usage) = (l[0], l[1], l[2]);
            if let Some(verdict) = judge_error(error, &expect) {
                return verdict;
            }
            compare("replicas", desired, &expect["replicas"])?;
            compare("usage", usage, &expect["usage"])
        }),
    })
}

const CONDITIONS: [&str; 5] = [
    "DesiredWithinRange",
    "TooFewReplicas",
    "TooManyReplicas",
    "ScaleUpLimit",
    "ScaleDownLimit",
];

/// An HPA manifest with `behavior` (none when `Null`), read by kivi-lint, as the model's
/// autoscaler: its rules, and the age classes its logs are compared in.
fn autoscaler(behavior: &Json, min: i64, max: i64) -> Result<ir::IrAutoscaler, String> {
    let mut spec = json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": min.max(1),
        "maxReplicas": max.max(1),
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
    });
    if let Json::Object(b) = behavior {
        // `scaleUp: null` is the default rules, as an absent key.
        let b: serde_json::Map<String, Json> = b
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        spec["behavior"] = Json::Object(b);
    }
    let text = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": spec,
    })
    .to_string();
    let mut sources = SourceMap::default();
    let mut diagnostics = kivi_lint::diagnostics::Diagnostics::default();
    let (_, loaded) = manifest::load_text(&mut sources, "hpa.yaml", &text, &mut diagnostics);
    if let Some(d) = diagnostics.iter().next() {
        return Err(format!("kivi-lint rejects the HPA: {}", d.message));
    }
    let Some(Body::HorizontalPodAutoscaler(h)) = loaded.objects.first().map(|o| &o.body) else {
        return Err("no HPA read".into());
    };
    let (scale_up, scale_down) = ir::scaling_rules(h);
    Ok(ir::IrAutoscaler {
        min: min.max(1),
        max: max.max(1),
        target: 50,
        metrics: ir::IrMetrics::default(),
        behavior: h.behavior,
        scale_up,
        scale_down,
    })
}

/// Statements that give workload 1 of the probe the autoscaler's rules (the model's tables, as
/// kivi-lint writes them) and the case's logs, each entry's age as its class.
fn setup(a: &ir::IrAutoscaler, recommendations: &Json, up_events: &Json, down_events: &Json) -> Result<String, String> {
    let mut s = String::from("    probe_reset();\n");
    for (table, index, value) in kivi_lint::model::input::autoscaler_rules(a, 1, 10) {
        let _ = writeln!(s, "    {table}[{index}] = {value};");
    }
    for r in recommendations.as_array().into_iter().flatten() {
        let replicas = int(&r["replicas"], "replicas")?;
        let age = a.class(int(&r["ageSeconds"], "ageSeconds")?);
        let _ = writeln!(s, "    probe_add_recommendation({replicas}, {age});");
    }
    for (d, events) in [up_events, down_events].into_iter().enumerate() {
        for e in events.as_array().into_iter().flatten() {
            let change = int(&e["replicaChange"], "replicaChange")?;
            let age = a.class(int(&e["ageSeconds"], "ageSeconds")?);
            let _ = writeln!(s, "    probe_add_event({d}, {change}, {age});");
        }
    }
    Ok(s)
}

/// The logged values a probe line lists after its `entries` count, `width` numbers per entry.
fn entries(l: &[i64], width: usize) -> Vec<&[i64]> {
    let n = l[1].max(0) as usize;
    l[2..].chunks(width).take(n).collect()
}

/// horizontal.go normalisation, stabilisation and scale-event bookkeeping, through
/// autoscaler_normalization.pml with the rules and age classes kivi-lint computes.
fn normalization(k: i64, case: &Json) -> Result<Prepared, String> {
    let input = &case["input"];
    let expect = case["expect"].clone();
    let none = Json::Null;
    match case["function"].as_str() {
        Some(f @ ("calculateScaleUpLimitWithScalingRules" | "calculateScaleDownLimitWithBehaviors")) => {
            let d = i64::from(f == "calculateScaleDownLimitWithBehaviors");
            let key = if d == 0 { "scaleUp" } else { "scaleDown" };
            let current = int(&input["currentReplicas"], "currentReplicas")?;
            let a = autoscaler(&json!({ key: input["rules"].clone() }), 1, current.max(1))?;
            let mut statements = setup(&a, &none, &input["scaleUpEvents"], &input["scaleDownEvents"])?;
            let _ = writeln!(statements, "    probe_policy_limit({k}, {d}, {current});");
            Ok(Prepared {
                statements,
                judge: Box::new(move |lines| compare("limit", line(lines, 93, 1)?[0], &expect["limit"])),
            })
        }
        Some(f @ ("convertDesiredReplicasWithRules" | "convertDesiredReplicasWithBehaviorRate")) => {
            let current = int(&input["currentReplicas"], "currentReplicas")?;
            let desired = int(&input["desiredReplicas"], "desiredReplicas")?;
            let min = int(&input["minReplicas"], "minReplicas")?;
            let max = int(&input["maxReplicas"], "maxReplicas")?;
            let behavior = if f == "convertDesiredReplicasWithBehaviorRate" {
                match &input["behavior"] {
                    Json::Null => json!({}),
                    b => b.clone(),
                }
            } else {
                Json::Null
            };
            let a = autoscaler(&behavior, min, max)?;
            let mut statements = setup(&a, &none, &input["scaleUpEvents"], &input["scaleDownEvents"])?;
            let _ = writeln!(
                statements,
                "    probe_normalization({k}, {current}, {desired}, {min}, {max});"
            );
            Ok(Prepared {
                statements,
                judge: Box::new(move |lines| {
                    let l = line(lines, 96, 2)?;
                    compare("replicas", l[0], &expect["replicas"])?;
                    let condition = CONDITIONS.get(l[1] as usize).copied().unwrap_or("?");
                    if expect["condition"].as_str() == Some(condition) {
                        Ok(())
                    } else {
                        Err(format!(
                            "condition: kivi-lint {condition}, upstream {}",
                            expect["condition"]
                        ))
                    }
                }),
            })
        }
        Some(f @ ("stabilizeRecommendation" | "stabilizeRecommendationWithBehaviors")) => {
            let desired = int(&input["desiredReplicas"], "desiredReplicas")?;
            let a = if f == "stabilizeRecommendation" {
                // The legacy window is the controller's flag, 5 minutes unless set.
                let window = int(&input["downscaleStabilizationWindowSeconds"], "window")?;
                if window != ir::LEGACY_DOWNSCALE_WINDOW {
                    return Err(format!(
                        "a downscale window of {window} s is a controller flag kivi-lint does not read"
                    ));
                }
                autoscaler(&Json::Null, 1, 1)?
            } else {
                autoscaler(
                    &json!({
                        "scaleUp": {"stabilizationWindowSeconds": input["scaleUpStabilizationWindowSeconds"].clone()},
                        "scaleDown": {"stabilizationWindowSeconds": input["scaleDownStabilizationWindowSeconds"].clone()},
                    }),
                    1,
                    1,
                )?
            };
            // The legacy function has no current count; it is not read there.
            let current = input["currentReplicas"].as_i64().unwrap_or(0);
            let mut statements = setup(&a, &input["recommendations"], &none, &none)?;
            let _ = writeln!(statements, "    probe_stabilize({k}, {current}, {desired});");
            Ok(Prepared {
                statements,
                judge: Box::new(move |lines| {
                    let l = line(lines, 92, 10)?;
                    compare("replicas", l[0], &expect["replicas"])?;
                    if let Some(n) = expect.get("recommendationsLogLength") {
                        compare("recommendationsLogLength", l[1], n)?;
                    }
                    if let Some(want) = expect["storedRecommendations"].as_array() {
                        let got: Vec<i64> = entries(l, 1).iter().map(|e| e[0]).collect();
                        let want: Vec<i64> = want.iter().filter_map(Json::as_i64).collect();
                        if got != want {
                            return Err(format!("stored recommendations: kivi-lint {got:?}, upstream {want:?}"));
                        }
                    }
                    Ok(())
                }),
            })
        }
        Some("getReplicasChangePerPeriod+storeScaleEvent") => {
            // Upstream checks both directions: events of one direction, a change of
            // `replicaChange` from 10 replicas, rules (or none: no behavior) for that direction.
            let period = int(&input["periodSeconds"], "periodSeconds")?;
            let change = int(&input["replicaChange"], "replicaChange")?;
            let rules = &input["rules"];
            let mut statements = String::new();
            for (d, key) in [(0, "scaleUp"), (1, "scaleDown")] {
                // getReplicasChangePerPeriod is asked about `period`, which need not be one of
                // the rules' periods (kivi-lint only ever asks about an autoscaler's own): a
                // policy of that period in the other direction, which storing this direction's
                // event does not read, puts it among the age classes. Without rules, that policy
                // stands for them too and storing stays off (no behavior).
                let other = if d == 0 { "scaleDown" } else { "scaleUp" };
                let query = json!({"policies": [{"type": "Pods", "value": 1, "periodSeconds": period}]});
                let classes = if rules.is_null() {
                    json!({ key: query.clone(), other: query })
                } else {
                    json!({ key: rules.clone(), other: query })
                };
                let a = autoscaler(&classes, 1, 20)?;
                let (up, down) = if d == 0 {
                    (&input["previousEvents"], &none)
                } else {
                    (&none, &input["previousEvents"])
                };
                statements.push_str(&setup(&a, &none, up, down)?);
                let _ = writeln!(statements, "    hpa_behavior[1] = {};", i64::from(!rules.is_null()));
                let new = if d == 0 { 10 + change } else { 10 - change };
                let _ = writeln!(
                    statements,
                    "    probe_store_event({k}, {d}, {}, 10, {new});",
                    a.class(period)
                );
            }
            Ok(Prepared {
                statements,
                judge: Box::new(move |lines| {
                    for d in 0..2 {
                        let direction = if d == 0 { "up" } else { "down" };
                        let l = line(lines, 91 - d, 18)?;
                        compare(
                            &format!("{direction}: replicasChangePerPeriod"),
                            l[0],
                            &expect["replicasChangePerPeriod"],
                        )?;
                        let got: Vec<(i64, bool)> = entries(l, 2).iter().map(|e| (e[0], e[1] != 0)).collect();
                        let want: Vec<(i64, bool)> = expect["storedEvents"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|e| {
                                (
                                    e["replicaChange"].as_i64().unwrap_or(-1),
                                    e["outdated"].as_bool().unwrap_or(false),
                                )
                            })
                            .collect();
                        if got != want {
                            return Err(format!(
                                "{direction}: stored events (change, outdated): kivi-lint {got:?}, upstream {want:?}"
                            ));
                        }
                    }
                    Ok(())
                }),
            })
        }
        other => Err(format!("no harness for {other:?}")),
    }
}

// --- Deployment --------------------------------------------------------------------------

/// An IntOrString as the model stores it (a count, or a percentage negated); `None` for a
/// value kivi-lint's reader rejects. Unset is 0 in these unit tests.
fn int_or_percent(v: &Json) -> Option<i64> {
    match v {
        Json::Null => Some(0),
        Json::Number(n) => n.as_i64(),
        Json::String(s) => match IntOrPercent::parse_percent(s)? {
            IntOrPercent::Int(i) => Some(i64::from(i)),
            IntOrPercent::Percent(p) => Some(-i64::from(p)),
        },
        _ => None,
    }
}

fn sum(list: &Json, key: &str) -> i64 {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r[key].as_i64())
        .sum()
}

/// rolling_update.pml's inlines.
fn rolling_update(k: i64, case: &Json) -> Result<Prepared, String> {
    let input = &case["input"];
    let expect = case["expect"].clone();
    let replicas = input["deploymentReplicas"]
        .as_i64()
        .or(input["replicas"].as_i64())
        .or(input["desiredReplicas"].as_i64())
        .unwrap_or(0);
    let (surge, unavailable) = match (
        int_or_percent(&input["maxSurge"]),
        int_or_percent(&input["maxUnavailable"]),
    ) {
        (Some(s), Some(u)) => (s, u),
        _ => {
            // kivi-lint's reader rejects the value, as ResolveFenceposts errors.
            return Ok(Prepared {
                statements: String::new(),
                judge: Box::new(move |_| {
                    if expect["error"] == json!(true) {
                        Ok(())
                    } else {
                        Err("kivi-lint rejects the IntOrString".into())
                    }
                }),
            });
        }
    };
    // MaxUnavailable and NewRSNewReplicas depend on the strategy (RollingUpdate when unset).
    let recreate = i64::from(input["strategy"] == json!("Recreate"));
    let fenceposts = format!("    max_unavailable({recreate}, {surge}, {unavailable}, {replicas});\n");
    let old = &input["oldReplicaSets"];
    let (statements, judge): (String, Judge) = match case["function"].as_str() {
        Some("ResolveFenceposts") => (
            format!("    resolve_fenceposts({surge}, {unavailable}, {replicas});\n    probe_fenceposts({k});\n"),
            Box::new(move |lines| {
                let l = line(lines, 97, 2)?;
                if expect["error"] == json!(true) {
                    return Err("kivi-lint accepts the values".into());
                }
                compare("surge", l[0], &expect["surge"])?;
                compare("unavailable", l[1], &expect["unavailable"])
            }),
        ),
        Some("MaxUnavailable") => (
            format!("{fenceposts}    probe_fenceposts({k});\n"),
            Box::new(move |lines| compare("maxUnavailable", line(lines, 97, 2)?[1], &expect["maxUnavailable"])),
        ),
        Some("NewRSNewReplicas") => {
            let all = sum(&input["allReplicaSets"], "specReplicas");
            let new = int(&input["newReplicaSetSpecReplicas"], "newReplicaSetSpecReplicas")?;
            (
                format!(
                    "{fenceposts}    new_rs_new_replicas({recreate}, {replicas}, {all}, {new});\n    probe_new_replica_set({k});\n"
                ),
                Box::new(move |lines| {
                    compare(
                        "newReplicaSetReplicas",
                        line(lines, 98, 1)?[0],
                        &expect["newReplicaSetReplicas"],
                    )
                }),
            )
        }
        Some("reconcileNewReplicaSet") => {
            let new = int(&input["newReplicaSet"]["specReplicas"], "newReplicaSet")?;
            let all = sum(old, "specReplicas") + new;
            (
                format!(
                    "{fenceposts}    reconcile_new_replica_set({replicas}, {all}, {new});\n    probe_new_replica_set({k});\n"
                ),
                Box::new(move |lines| {
                    let got = line(lines, 98, 1)?[0];
                    compare(
                        "scaled",
                        i64::from(got != new),
                        &json!(i64::from(expect["scaled"] == json!(true))),
                    )?;
                    if expect["newReplicaSetReplicas"].is_null() {
                        Ok(())
                    } else {
                        compare("newReplicaSetReplicas", got, &expect["newReplicaSetReplicas"])
                    }
                }),
            )
        }
        Some("reconcileOldReplicaSets") => {
            let (old_spec, old_available) = one_old(old)?;
            let new = &input["newReplicaSet"];
            let (new_spec, new_available) = (
                int(&new["specReplicas"], "new")?,
                int(&new["availableReplicas"], "new")?,
            );
            (
                format!(
                    "{fenceposts}    reconcile_old_replica_sets({replicas}, {old_spec}, {old_available}, {new_spec}, {new_available});\n    probe_old_replica_sets({k});\n"
                ),
                Box::new(move |lines| {
                    let got = line(lines, 99, 3)?[0];
                    compare(
                        "scaled",
                        i64::from(got != old_spec),
                        &json!(i64::from(expect["scaled"] == json!(true))),
                    )?;
                    if expect["declaredOldReplicas"].is_null() || expect["scaled"] != json!(true) {
                        Ok(())
                    } else {
                        compare("declaredOldReplicas", got, &expect["declaredOldReplicas"])
                    }
                }),
            )
        }
        Some("DeploymentComplete") => {
            let status = &input["status"];
            let (status_replicas, updated, available) = (
                int(&status["replicas"], "status.replicas")?,
                int(&status["updatedReplicas"], "status.updatedReplicas")?,
                int(&status["availableReplicas"], "status.availableReplicas")?,
            );
            (
                format!(
                    "    deployment_complete({replicas}, {status_replicas}, {updated}, {available});\n    probe_complete({k});\n"
                ),
                Box::new(move |lines| {
                    compare(
                        "complete",
                        line(lines, 88, 1)?[0],
                        &json!(i64::from(expect["complete"] == json!(true))),
                    )
                }),
            )
        }
        Some("cleanupUnhealthyReplicas") => {
            let (old_spec, old_available) = one_old(old)?;
            let budget = int(&input["maxCleanupCount"], "maxCleanupCount")?;
            (
                format!(
                    "    cleanup_unhealthy_replicas({budget}, {old_spec}, {old_available});\n    probe_old_replica_sets({k});\n"
                ),
                Box::new(move |lines| compare("cleanupCount", line(lines, 99, 3)?[1], &expect["cleanupCount"])),
            )
        }
        Some("scaleDownOldReplicaSetsForRollingUpdate") => {
            let (old_spec, old_available) = one_old(old)?;
            (
                format!(
                    "{fenceposts}    scale_down_old_replica_sets({replicas}, {old_available}, {old_spec});\n    probe_old_replica_sets({k});\n"
                ),
                Box::new(move |lines| {
                    let scaled_down = line(lines, 99, 3)?[2];
                    compare(
                        "scaled",
                        i64::from(scaled_down > 0),
                        &json!(i64::from(expect["scaled"] == json!(true))),
                    )?;
                    if expect["oldReplicaSetReplicas"].is_null() {
                        Ok(())
                    } else {
                        compare(
                            "oldReplicaSetReplicas",
                            old_spec - scaled_down,
                            &expect["oldReplicaSetReplicas"],
                        )
                    }
                }),
            )
        }
        other => return Err(format!("no harness for {other:?}")),
    };
    Ok(Prepared { statements, judge })
}

/// The one old ReplicaSet of a case: (spec.replicas, status.availableReplicas).
fn one_old(list: &Json) -> Result<(i64, i64), String> {
    match list.as_array().map(Vec::as_slice) {
        Some([rs]) => Ok((
            int(&rs["specReplicas"], "specReplicas")?,
            int(&rs["availableReplicas"], "availableReplicas")?,
        )),
        _ => Err("the model rolls one old ReplicaSet".into()),
    }
}

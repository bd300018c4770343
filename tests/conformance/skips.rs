//! The one place where a peer case may be skipped, each with its reason. A skipped case is
//! counted in the summary; any other case must pass.
//!
//! Most skips are rules: a case that uses a feature kivi-lint does not model (an extended
//! resource, a stabilisation window, ...) is skipped wherever it comes from, so
//! cases held back from `../shared/peer_tests` are judged the same way.

use serde_json::Value as Json;

const EXTENDED: &str = "NodeResourcesFit scores cpu and memory only in kivi-lint: ephemeral storage, hugepages and extended resources are filtered (they must fit) but not scored (README, Model semantics)";

const NO_CLOCK_EVENTS: &str = "the model has no clock: each autoscaler decision starts its own policy period, without the scale events of the last periodSeconds; after recent events upstream allows a smaller step than the model, which over-approximates the scaling rate (README, Model fidelity)";
const STABILIZATION: &str = "the model has no clock and no recommendation log: a recommendation in a stabilised direction is applied once the autoscaler has seen it twice, with anything free to happen in between, rather than the max or min over a timed window (README, Model fidelity)";
const EVENT_LOG: &str = "scale-event bookkeeping (storeScaleEvent, getReplicasChangePerPeriod) is timed; the model keeps no event log (see the policy period abstraction, README, Model fidelity)";
const DEPLOYMENT_STATUS: &str = "Deployment status sums and the Progressing condition (with its deadline) are not modelled: the model counts pod states directly, and rollout-completes is DeploymentComplete (modelled and checked) once the cluster has settled";

const MIN_DOMAINS_SOFT: &str = "the API server rejects this pod (minDomains requires whenUnsatisfiable: DoNotSchedule); kivi-lint reports the same located error, as the test shows";

/// Whether a case pod requests a non-zero amount of `resource`.
fn requests(pod: &Json, resource: &str) -> bool {
    ["containers", "initContainers"].iter().any(|list| {
        pod[*list].as_array().into_iter().flatten().any(|c| {
            c["requests"][resource].as_str().is_some_and(|q| q != "0")
                || c["requests"][resource].as_i64().is_some_and(|q| q != 0)
        })
    })
}

fn any_pod(case: &Json, test: impl Fn(&Json) -> bool) -> bool {
    ["pod", "existingPods", "pods"].iter().any(|k| match &case[*k] {
        Json::Array(list) => list.iter().any(&test),
        Json::Null => false,
        pod => test(pod),
    })
}

fn constraints(pod: &Json) -> impl Iterator<Item = &Json> {
    pod["topologySpreadConstraints"].as_array().into_iter().flatten()
}

/// An HPA scale event of `events` still inside the longest period of `rules`.
fn events_inside_period(events: &Json, rules: &Json) -> bool {
    let longest = rules["policies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["periodSeconds"].as_i64())
        .max()
        .unwrap_or(0);
    events
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| e["ageSeconds"].as_i64().is_some_and(|age| age < longest))
}

/// The reason a case is skipped, if it is: the first rule that describes it.
pub fn reason(file: &str, _name: &str, case: &Json) -> Option<&'static str> {
    let config = &case["config"];
    if file.starts_with("scheduler_") {
        // A scalar resource the pod does not request leaves the score (resource_allocation.go),
        // as kivi-lint leaves every one out.
        if config["args"]["scoringStrategy"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .any(|name| !matches!(name, "cpu" | "memory") && requests(&case["pod"], name))
        {
            return Some(EXTENDED);
        }
        if any_pod(case, |p| {
            constraints(p).any(|c| !c["minDomains"].is_null() && c["whenUnsatisfiable"] == "ScheduleAnyway")
        }) {
            return Some(MIN_DOMAINS_SOFT);
        }
    }
    if file.starts_with("hpa_normalization") {
        let function = case["function"].as_str().unwrap_or("");
        if function.starts_with("stabilizeRecommendation") {
            return Some(STABILIZATION);
        }
        if function.contains("storeScaleEvent") || function.contains("getReplicasChangePerPeriod") {
            return Some(EVENT_LOG);
        }
        let input = &case["input"];
        // Events only matter where the limit binds: a result that is the desired count (within
        // min and max) is what the model computes too.
        let desired = input["desiredReplicas"].as_i64();
        let clamped = desired.map(|d| {
            d.max(input["minReplicas"].as_i64().unwrap_or(d))
                .min(input["maxReplicas"].as_i64().unwrap_or(d))
        });
        let limited = clamped.is_none() || case["expect"]["replicas"].as_i64() != clamped;
        if limited
            && (events_inside_period(&input["scaleUpEvents"], &input["behavior"]["scaleUp"])
                || events_inside_period(&input["scaleDownEvents"], &input["behavior"]["scaleDown"])
                || events_inside_period(&input["scaleUpEvents"], &input["rules"])
                || events_inside_period(&input["scaleDownEvents"], &input["rules"]))
        {
            return Some(NO_CLOCK_EVENTS);
        }
    }
    if file.starts_with("deployment_") {
        let function = case["function"].as_str().unwrap_or("");
        if function.starts_with("GetReplicaCount")
            || function.starts_with("GetActualReplicaCount")
            || function.starts_with("GetTerminatingReplicaCount")
            || function == "DeploymentProgressing"
        {
            return Some(DEPLOYMENT_STATUS);
        }
    }
    None
}

//! The one place where a peer case may be skipped, each with its reason. A skipped case is
//! counted in the summary; any other case must pass.
//!
//! Most skips are rules: a case that uses a feature kivi-lint does not model (an extended
//! resource, a stabilisation window, ...) is skipped wherever it comes from, so
//! cases held back from the peer suite (`tests/conformance/cases/`) are judged the same way.

use serde_json::Value as Json;

const EXTENDED: &str = "NodeResourcesFit scores cpu and memory only in kivi-lint: ephemeral storage, hugepages and extended resources are filtered (they must fit) but not scored (docs/model.md)";

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

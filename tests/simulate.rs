//! `kivi-lint simulate`: one seeded run of a unit as a timeline, through the binary with the
//! real spin and C compiler.

mod common;

use common::kivi;
use serde_json::Value;

fn simulate(args: &[&str]) -> (i32, String) {
    let out = kivi().arg("simulate").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

/// Kivi's published counterexample for c3 (its README): the CPU usage changes, the HPA scales
/// from 5 to 6, the Deployment creates a pod and no node is feasible for it. Seed 1 draws that
/// run, every time, and says where each step comes from.
#[test]
fn a_seed_draws_kivis_c3_counterexample_every_time() {
    let args = ["--seed", "1", "--format", "json", "fixtures/kivi-c3"];
    let (code, first) = simulate(&args);
    assert_eq!(code, 1, "{first}");
    let (_, again) = simulate(&args);
    assert_eq!(first, again, "the same seed, the same run");
    let report: Value = serde_json::from_str(&first).unwrap();
    let run = &report["simulations"][0];
    assert_eq!(run["seed"], 1);
    assert_eq!(run["outcome"]["kind"], "violated");
    assert_eq!(run["outcome"]["check"], "pods-schedulable");
    let steps = run["steps"].as_array().unwrap();
    let position = |actor: &str, text: &str| {
        steps
            .iter()
            .position(|s| s["actor"] == actor && s["message"].as_str().unwrap().contains(text))
            .unwrap_or_else(|| panic!("no {actor} step with {text:?}: {steps:#?}"))
    };
    let load = position("load-change", "of their cpu request");
    let scaled = position("horizontal-pod-autoscaler", "from 5 to 6 replicas");
    let created = position("deployment-controller", "creates pod php-apache-6");
    let pending = position("scheduler", "no feasible node for php-apache-6");
    assert!(load < scaled && scaled < created && created < pending, "{steps:#?}");
    // Located as findings are: the HPA's maxReplicas, the spread constraint that rejects.
    assert_eq!(steps[scaled]["file"], "fixtures/kivi-c3/deploy/php-apache.yaml");
    assert_eq!(steps[pending]["line"], 26);
    assert_eq!(steps.last().unwrap()["actor"], "check");
}

/// The fixed twin settles: every pod placed, the run ends without a finding (exit 0).
#[test]
fn the_safe_twin_settles() {
    let (code, out) = simulate(&["--seed", "1", "fixtures/kivi-c3-safe"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("from 5 to 6 replicas"), "{out}");
    assert!(
        out.contains("the run ends: the cluster has settled, no check failed"),
        "{out}"
    );
}

/// Another seed may draw another run; each is told whole, from the first pod to its end.
#[test]
fn seeds_draw_different_runs() {
    let runs: Vec<String> = ["1", "4"]
        .iter()
        .map(|s| simulate(&["--seed", s, "--format", "json", "fixtures/kivi-c3"]).1)
        .collect();
    assert_ne!(runs[0], runs[1]);
}

#[test]
fn an_unknown_unit_is_a_usage_error() {
    let out = kivi()
        .args(["simulate", "--unit", "no-such-unit", "fixtures/kivi-c3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no unit `no-such-unit`"));
}

/// The HTML page draws the run as a counterexample's timeline: the data travels as JSON in
/// the page, every step with the cluster state after it.
#[test]
fn the_html_page_carries_the_timeline() {
    let (code, page) = simulate(&["--seed", "1", "--format", "html", "fixtures/kivi-c3"]);
    assert_eq!(code, 1);
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    let data = page
        .split("<script type=\"application/json\" id=\"report-data\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the page's data");
    let data: Value = serde_json::from_str(data).unwrap();
    let steps = data["units"][0]["findings"][0]["steps"].as_array().unwrap();
    let pending = steps
        .iter()
        .find(|s| {
            s["message"]
                .as_str()
                .unwrap()
                .starts_with("no feasible node for php-apache-6")
        })
        .expect("the pending pod's step");
    assert!(
        pending["state"]["pods"]
            .to_string()
            .contains("\"php-apache-6\",\"\",\"unschedulable\""),
        "{pending}"
    );
}

/// `--scenario`: the events' first steps come in its order, and only those; the model still
/// chooses which node and which level. A drain under way goes on to its end.
#[test]
fn a_scenario_orders_the_environment() {
    for (scenario, first) in [
        ("load-change; node-drain", "load-change"),
        ("node-drain, load-change", "node-drain"),
    ] {
        let (_, out) = simulate(&[
            "--seed",
            "2",
            "--scenario",
            scenario,
            "--format",
            "json",
            "fixtures/drain-blocked-at-hpa-min",
        ]);
        let report: Value = serde_json::from_str(&out).unwrap();
        let run = &report["simulations"][0];
        assert_eq!(run["environmentSteps"], 2, "{run:#}");
        let actors: Vec<&str> = run["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["actor"].as_str().unwrap())
            .filter(|a| *a == "load-change" || *a == "node-drain")
            .collect();
        assert_eq!(actors.first(), Some(&first), "{scenario}: {actors:?}");
        // Each event's first step once: one load change, one drain started.
        assert_eq!(
            actors.iter().filter(|a| **a == "load-change").count(),
            1,
            "{scenario}: {actors:?}"
        );
        let starts = run["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["message"].as_str().unwrap().contains("starts draining"))
            .count();
        assert_eq!(starts, 1, "{scenario}: {run:#}");
    }
}

#[test]
fn a_scenario_of_an_event_the_config_lacks_says_so() {
    let (code, out) = simulate(&["--scenario", "node-failure", "fixtures/drain-blocked-at-hpa-min"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("no run: the scenario's `node-failure` is not an event of this unit's config (it has: load-change, node-drain)"),
        "{out}"
    );
}

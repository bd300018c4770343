//! `--all`: every distinct violation of a check in a unit, each with its counterexample and a
//! fix verified apart from the others, through the binary with the real spin and C compiler.

mod common;

use common::{copy_tree, kivi, root};
use serde_json::Value;

fn scan(args: &[&str]) -> (i32, String) {
    let out = kivi().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

/// The pods-schedulable outcomes of a JSON report's units, in order.
fn pods_schedulable(report: &str) -> Vec<Value> {
    let report: Value = serde_json::from_str(report).unwrap();
    report["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["verification"]["results"].as_array().cloned().unwrap_or_default())
        .filter(|r| r["check"] == "pods-schedulable")
        .collect()
}

/// Two independent problems in one unit (a 4th anti-affine replica on 3 nodes, a request larger
/// than any node): without `--all` the first is reported; with it both, each at its own field,
/// with a trail that ends with its pod Pending and a fix verified apart from the other.
#[test]
fn all_reports_both_problems_of_a_unit_each_with_its_fix() {
    let fixture = "fixtures/all-two-pending";
    let (code, first) = scan(&["--format", "json", "-q", "--no-cache", fixture]);
    assert_eq!(code, 1, "{first}");
    let one = pods_schedulable(&first);
    assert_eq!(one.len(), 1, "{one:#?}");
    assert_eq!(one[0]["line"], 26, "{:#?}", one[0]);

    let (code, every) = scan(&["--all", "--format", "json", "-q", "--no-cache", fixture]);
    assert_eq!(code, 1, "{every}");
    let found = pods_schedulable(&every);
    let at: Vec<(String, u64)> = found
        .iter()
        .map(|r| {
            let file = r["file"].as_str().unwrap();
            let name = file.rsplit('/').next().unwrap().to_string();
            (name, r["line"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        at,
        [("redis-cache.yaml".to_string(), 26), ("cpu-demo.yaml".to_string(), 24)],
        "{found:#?}"
    );
    for (r, (pod, fix)) in found.iter().zip([
        ("redis-cache-4", "preferredDuringSchedulingIgnoredDuringExecution"),
        ("cpu-demo-1", "lower the cpu request of container cpu-demo-ctr"),
    ]) {
        assert_eq!(r["verdict"], "violated");
        let steps = r["steps"].as_array().unwrap();
        assert!(
            steps.iter().any(|s| s["actor"] == "scheduler"
                && s["message"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("no feasible node for {pod}"))),
            "{steps:#?}"
        );
        assert_eq!(steps.last().unwrap()["actor"], "check", "{steps:#?}");
        assert!(r["fix"]["summary"].as_str().unwrap().contains(fix), "{r:#?}");
        assert_eq!(r["fix"]["apartFrom"], 1, "{r:#?}");
    }

    // Every format says both; the human one names each trail by where it points and says each
    // fix ends its violation, not that the check holds.
    let (_, github) = scan(&["--all", "--format", "github", "-q", fixture]);
    assert_eq!(github.matches("::error ").count(), 2, "{github}");
    let (_, human) = scan(&["--all", "--color", "never", fixture]);
    assert!(
        human.contains("pods-schedulable counterexample (fixtures/all-two-pending/manifests/cpu-demo.yaml:24):"),
        "{human}"
    );
    assert_eq!(human.matches("this violation ends with it").count(), 2, "{human}");
    assert!(!human.contains("the check holds with it"), "{human}");

    // The same report at any -j.
    let (_, sequential) = scan(&["--all", "--format", "sarif", "-j", "1", "--no-cache", fixture]);
    let (_, parallel) = scan(&["--all", "--format", "sarif", "-j", "2", "--no-cache", fixture]);
    assert_eq!(sequential, parallel);

    let (code, safe) = scan(&[
        "--all",
        "--format",
        "json",
        "-q",
        "--no-cache",
        "fixtures/all-two-pending-safe",
    ]);
    assert_eq!(code, 0, "{safe}");
    assert!(
        pods_schedulable(&safe).iter().all(|r| r["verdict"] == "verified"),
        "{safe}"
    );
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// PR mode with `--all` compares each violation with the base's: the one the base has is
/// unchanged (hidden unless `--all-findings`), the one the pull request adds is new.
#[test]
fn pr_mode_compares_every_violation_with_the_base() {
    let dir = assert_fs::TempDir::new().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    copy_tree(&root().join("fixtures/all-two-pending"), &repo);
    let demo = repo.join("manifests/cpu-demo.yaml");
    let too_big = std::fs::read_to_string(&demo).unwrap();
    std::fs::write(&demo, too_big.replace("cpu: \"100\"", "cpu: \"1\"")).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(
        &repo,
        &["commit", "-q", "-m", "base: redis-cache has one replica too many"],
    );
    std::fs::write(&demo, too_big).unwrap();
    let run = |extra: &[&str]| {
        let out = kivi()
            .current_dir(&repo)
            .args([
                "--all",
                "--format",
                "json",
                "-q",
                "--no-cache",
                "--changed-since",
                "HEAD",
            ])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, report) = run(&["--all-findings"]);
    assert_eq!(code, 1, "{report}");
    let states: Vec<(u64, String)> = pods_schedulable(&report)
        .iter()
        .filter(|r| r["verdict"] == "violated")
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["baselineState"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [(26, "unchanged".to_string()), (24, "new".to_string())],
        "{report}"
    );

    // Without --all-findings the one the base has is hidden, the new one shown.
    let (code, report) = run(&[]);
    assert_eq!(code, 1, "{report}");
    let shown: Vec<u64> = pods_schedulable(&report)
        .iter()
        .filter(|r| r["verdict"] == "violated")
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(shown, [24], "{report}");
}

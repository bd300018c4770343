//! What a pull request cannot do, round 3 (issue 40): each test is an attack that once worked
//! on main (3eb655f), run as the attacker would run it. `tests/hostile.rs` holds the rounds
//! before; the README's Security table names the test of each line.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{kivi, root};

/// A directory under the test target's temporary directory, fresh for each call.
fn scratch(name: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pull-request-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// stdout and stderr of a run, as text.
fn text_of(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n";

/// Item 2 and 9: the repository's config cannot hand `helm template` options. A release name
/// `--post-renderer=evil.sh` (which would run a program), a namespace `--kube-apiserver=…`
/// and values files outside the repository are located errors; helm is run with neither, and
/// with its positionals after `--`.
#[test]
fn helm_options_from_the_config_never_reach_helms_command_line() {
    let repo = scratch("helm");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        &repo.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    );
    write(&repo.join("chart/templates/deployment.yaml"), DEPLOYMENT);
    write(
        &repo.join(".kivi-lint.yaml"),
        "helm:\n  releaseName: \"--post-renderer=evil.sh\"\n  namespace: \"--kube-apiserver=http://10.0.0.1\"\n  values: [\"/etc/passwd\", \"../../../../etc/shadow\"]\n",
    );
    let args_file = repo.join("../helm-args");
    let path = format!(
        "{}:{}",
        root().join("tests/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = kivi()
        .env("PATH", path)
        .env(
            "KIVI_TEST_HELM_OUTPUT",
            root().join("fixtures/helm-chart/rendered/web.yaml"),
        )
        .env("KIVI_TEST_HELM_ARGS", &args_file)
        .args(["units", "--color", "never"])
        .arg(&repo)
        .output()
        .unwrap();
    let all = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    for (line, field) in [(2, "helm.releaseName"), (3, "helm.namespace")] {
        assert!(
            all.contains(&format!(".kivi-lint.yaml:{line}:")),
            "{field} located: {all}"
        );
        assert!(all.contains(field), "{all}");
    }
    assert_eq!(all.matches("outside the repository").count(), 2, "{all}");
    assert!(!all.contains("root:x:0"), "nothing of /etc/passwd is echoed: {all}");
    let args = std::fs::read_to_string(&args_file).expect("helm ran with the defaults");
    assert!(
        !args.contains("post-renderer") && !args.contains("kube-apiserver"),
        "{args}"
    );
    assert!(!args.contains("/etc/"), "{args}");
    let lines: Vec<&str> = args.lines().collect();
    let separator = lines.iter().position(|l| *l == "--").expect("a `--`");
    assert_eq!(lines.len(), separator + 3, "release and chart only after `--`: {args}");
    assert!(
        lines[..separator]
            .iter()
            .all(|l| l.starts_with("--") || *l == "template"),
        "{args}"
    );
}

#[allow(dead_code)]
fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text_of(out)))
}

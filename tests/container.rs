//! The image's ownership cases, reproduced without a Docker engine: the binary runs under
//! another uid with `setpriv`, in the environment the Dockerfile gives it (`HOME` absent,
//! `KIVI_LINT_CACHE_DIR` a directory any user may write, `docker/gitconfig` as the system git
//! config).
//!
//! - A bind-mounted workspace belongs to the host user. Run as the image's own uid, kivi-lint
//!   cannot write its reports there and says how to run it instead; run as the workspace's
//!   owner (`docker run --user "$(id -u):$(id -g)"`), it can.
//! - A workspace checked out by someone else (a CI runner, a root-owned volume): git refuses
//!   it as "dubious ownership" unless the image's system config trusts it, and
//!   `--changed-since` needs git.
//!
//! `setpriv` changes uid only as root; elsewhere these tests say so and do nothing.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::root;

/// The Dockerfile's `USER`.
const IMAGE_UID: u32 = 10001;
/// The host user who owns the bind-mounted workspace.
const HOST_UID: u32 = 4242;
/// A CI runner's uid, other than the workspace's owner.
const RUNNER_UID: u32 = 4343;

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        resources: {requests: {cpu: 100m}}\n";

/// A git repository with one committed manifest, owned by `owner`, in a directory every
/// user may enter; and a cache directory like the image's `/cache` (mode 1777).
fn workspace(owner: u32) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let base = tempfile::tempdir().unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ws = base.path().join("repo");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("web.yaml"), DEPLOYMENT).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(&ws)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "."]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "web"]);
    let chown = Command::new("chown")
        .args(["-R", &format!("{owner}:{owner}")])
        .arg(&ws)
        .status()
        .unwrap();
    assert!(chown.success());
    let cache = base.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o1777)).unwrap();
    (base, ws, cache)
}

/// kivi-lint as `uid` in `cwd`, with the image's environment.
fn run_as(uid: u32, cwd: &Path, cache: &Path, gitconfig: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid",
        &uid.to_string(),
        "--regid",
        &uid.to_string(),
        "--clear-groups",
    ])
    .arg("env")
    .arg("-i")
    .arg(format!("PATH={}", std::env::var("PATH").unwrap_or_default()))
    .arg("HOME=/nonexistent")
    .arg(format!("KIVI_LINT_CACHE_DIR={}", cache.display()));
    match gitconfig {
        Some(file) => c.arg(format!("GIT_CONFIG_SYSTEM={}", file.display())),
        None => c.arg("GIT_CONFIG_NOSYSTEM=1"),
    };
    c.arg(env!("CARGO_BIN_EXE_kivi-lint"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn reports_are_written_when_the_image_runs_as_the_workspace_owner() {
    if !is_root() {
        eprintln!("not root: setpriv cannot change uid here; the ownership cases are not run");
        return;
    }
    let (_base, ws, cache) = workspace(HOST_UID);
    let args = [
        "--no-fixes",
        "--format",
        "human",
        "--format",
        "sarif=kivi-lint.sarif",
        ".",
    ];

    // The image's own uid against the host user's files: the defect this reproduces.
    let out = run_as(IMAGE_UID, &ws, &cache, None, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write the sarif report") && stderr.contains("Permission denied"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--user \"$(id -u):$(id -g)\""),
        "says how to run it: {stderr}"
    );

    // As the README runs it: the workspace's owner, with no home directory.
    let out = run_as(HOST_UID, &ws, &cache, None, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sarif = std::fs::metadata(ws.join("kivi-lint.sarif")).expect("the report is written");
    assert_eq!(sarif.uid(), HOST_UID, "the host user owns the report");
    // The verifier cache is usable, not silently skipped.
    assert!(!stderr.contains("cache directory unusable"), "{stderr}");
    assert!(
        std::fs::read_dir(&cache).unwrap().next().is_some(),
        "the cache was written"
    );
}

#[test]
fn changed_since_reads_a_workspace_another_user_owns_with_the_image_git_config() {
    if !is_root() {
        eprintln!("not root: setpriv cannot change uid here; the ownership cases are not run");
        return;
    }
    let (_base, ws, cache) = workspace(HOST_UID);
    let args = ["--no-fixes", "--changed-since", "HEAD", "--format", "json", "."];

    // Without the image's git config, git refuses the repository.
    let out = run_as(RUNNER_UID, &ws, &cache, None, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("dubious ownership"), "{stderr}");

    let gitconfig = root().join("docker/gitconfig");
    let out = run_as(RUNNER_UID, &ws, &cache, Some(&gitconfig), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["units"].is_array(), "{report}");
}

/// The image renders charts with the Helm that setup installs and the tests run.
#[test]
fn the_image_installs_the_helm_release_setup_pins() {
    let script = std::fs::read_to_string(root().join("scripts/install-helm")).unwrap();
    let version = script
        .lines()
        .find_map(|l| l.strip_prefix("HELM_VERSION="))
        .and_then(|v| v.split_whitespace().next())
        .expect("scripts/install-helm pins HELM_VERSION");
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    for arch in ["amd64", "arm64"] {
        let archive = format!("https://get.helm.sh/helm-{version}-linux-{arch}.tar.gz");
        assert!(
            dockerfile.contains(&archive),
            "the Dockerfile does not install {archive}"
        );
    }
}

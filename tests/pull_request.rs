//! What a pull request cannot do, round 3 (issue 40): each test is an attack that once worked
//! on main (3eb655f), run as the attacker would run it. `tests/hostile.rs` holds the rounds
//! before; docs/security.md's table names the test of each line.

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
    let out = common::kivi_with_helm_stand_in(&args_file)
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

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text_of(out)))
}

/// A server on this machine's loopback that counts the requests it is sent, until dropped.
struct RecordingServer {
    port: u16,
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl RecordingServer {
    fn start() -> RecordingServer {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (seen, done) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            // Bounded: it stops when the test drops it, or after a minute whatever happens.
            let started = std::time::Instant::now();
            while !done.load(Ordering::Relaxed) && started.elapsed().as_secs() < 60 {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        seen.fetch_add(1, Ordering::SeqCst);
                        let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(1)));
                        let _ = stream.read(&mut [0u8; 1024]);
                        let body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: s3cr3t}\n";
                        let _ = write!(
                            stream,
                            "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            }
        });
        RecordingServer { port, requests, stop }
    }

    fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for RecordingServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Item 3: kustomize reads its keys without regard to case, and so does the check before it
/// runs. `RESOURCES:`, `Resources:` and a generator's `FILES:` naming a loopback server or
/// `file://` are located errors; the server records no request; nothing of another
/// repository on the machine reaches the report.
#[test]
fn remote_kustomize_entries_are_refused_whatever_the_keys_case() {
    let server = RecordingServer::start();
    let repo = scratch("case");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let other = scratch("other-repository");
    write(
        &other.join("token.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {token: 0th3r-t0ken}\n",
    );
    let url = format!("http://127.0.0.1:{}/secret.yaml", server.port);
    for (dir, kustomization) in [
        ("upper", format!("RESOURCES: [{url}]\n")),
        ("title", format!("Resources: [\"file://{}\"]\n", other.display())),
        ("fold", format!("reſources: [{url}]\n")),
        (
            "generator",
            format!("configMapGenerator:\n- name: c\n  FILES: [{url}]\n"),
        ),
    ] {
        write(&repo.join(dir).join("kustomization.yaml"), &kustomization);
        write(&repo.join(dir).join("app.yaml"), DEPLOYMENT);
    }
    let out = kivi().args(["units", "--color", "never"]).arg(&repo).output().unwrap();
    let all = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    for dir in ["upper", "title", "fold", "generator"] {
        assert!(all.contains(&format!("{dir}/kustomization.yaml:")), "{dir}: {all}");
    }
    assert_eq!(all.matches("needs the network, which is off").count(), 3, "{all}");
    assert_eq!(
        all.matches("is refused: kivi-lint reads nothing outside the repository")
            .count(),
        1,
        "{all}"
    );
    assert!(!all.contains("s3cr3t") && !all.contains("0th3r-t0ken"), "{all}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(server.requests(), 0, "the loopback server was reached");
}

/// Item 4: a kustomization that only an unused `kind: Component`, or only a cycle, builds on
/// is still verified (or its cycle is an error): never "no Kubernetes objects", exit 0.
#[test]
fn kustomizations_only_a_component_or_a_cycle_uses_are_not_skipped() {
    let repo = scratch("component");
    write(&repo.join("prod/deploy.yaml"), DEPLOYMENT);
    write(&repo.join("prod/kustomization.yaml"), "resources: [deploy.yaml]\n");
    write(
        &repo.join("unused/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [../prod]\n",
    );
    let out = kivi().args(["units", "--format", "json"]).arg(&repo).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let units = json(&out);
    assert_eq!(units["units"].as_array().map(Vec::len), Some(1), "{units}");

    let repo = scratch("cycle");
    write(&repo.join("prod/deploy.yaml"), DEPLOYMENT);
    write(&repo.join("prod/kustomization.yaml"), "resources: [deploy.yaml]\n");
    write(
        &repo.join("decoy/kustomization.yaml"),
        "resources: [../prod, ../decoy2]\n",
    );
    write(&repo.join("decoy2/kustomization.yaml"), "resources: [../decoy]\n");
    let out = kivi().args(["units", "--color", "never"]).arg(&repo).output().unwrap();
    let all = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("decoy/kustomization.yaml:1:1"), "{all}");
    assert!(!all.contains("no Kubernetes objects"), "{all}");
}

/// Items 15 and 16: kivi-lint reads what kustomize reads, and nothing outside the
/// repository: a kustomization file that is a symbolic link is an error (kustomize does not
/// read it), and a base outside the repository is a located error whose content is not
/// echoed, unless `--allow-outside-repository`.
#[test]
fn symlinked_kustomizations_and_bases_outside_the_repository_are_refused() {
    let repo = scratch("linked");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo.join("app/deploy.yaml"), DEPLOYMENT);
    write(&repo.join("elsewhere/k.yaml"), "resources: [deploy.yaml]\n");
    std::os::unix::fs::symlink("../elsewhere/k.yaml", repo.join("app/kustomization.yaml")).unwrap();
    let out = kivi().args(["units", "--color", "never"]).arg(&repo).output().unwrap();
    let all = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("app/kustomization.yaml:1:1") && all.contains("symbolic link"),
        "{all}"
    );

    let outside = scratch("outside");
    write(
        &outside.join("base/deploy.yaml"),
        &DEPLOYMENT.replace("image: nginx", "image: registry.internal/s3cr3t-image"),
    );
    write(&outside.join("base/kustomization.yaml"), "resources: [deploy.yaml]\n");
    let repo = scratch("outside-base");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        &repo.join("app/kustomization.yaml"),
        &format!("resources: [\"{}\"]\n", outside.join("base").display()),
    );
    let out = kivi().args(["units", "--color", "never"]).arg(&repo).output().unwrap();
    let all = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("app/kustomization.yaml:1:13") && all.contains("outside the repository"),
        "{all}"
    );
    assert!(!all.contains("s3cr3t"), "{all}");
    let out = kivi()
        .args(["units", "--format", "json", "--allow-outside-repository"])
        .arg(&repo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
}

/// Item 5: where git cannot say whether the repository commits the cache (here: the checkout
/// belongs to another user and git refuses it as "dubious ownership", or its `.git` is
/// broken), the cache is not used: the guard fails closed, and says so.
#[test]
fn a_cache_git_cannot_judge_is_not_trusted() {
    let repo = scratch("dubious");
    write(&repo.join("app.yaml"), DEPLOYMENT);
    let cache = repo.join(".kivi-lint-cache");
    std::fs::create_dir_all(cache.join("results")).unwrap();
    write(&cache.join("results/forged.json"), "[]");
    let git = std::process::Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(&repo)
        .status();
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n");
    let dubious = git.is_ok_and(|s| s.success())
        && root.unwrap_or(false)
        && std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&repo)
            .status()
            .is_ok_and(|s| s.success());
    if !dubious {
        // No other user to hand the checkout to: a `.git` git cannot read.
        let _ = std::fs::remove_dir_all(repo.join(".git"));
        write(&repo.join(".git"), "gitdir: /nonexistent/kivi-lint-test\n");
    }
    let out = kivi()
        .env("KIVI_LINT_CACHE_DIR", &cache)
        .args(["--color", "never", "--no-fixes"])
        .arg(&repo)
        .output()
        .unwrap();
    let all = text_of(&out);
    assert!(
        all.contains("cannot be told") && all.contains("running without a cache"),
        "{all}"
    );
}

/// Item 6: in a git checkout a committed manifest is read whatever `.gitignore` or `.ignore`
/// say (`kubectl apply -R` would apply it); outside git the ignore files decide, and `-v`
/// names each manifest they hide.
#[test]
fn ignore_files_do_not_hide_committed_manifests() {
    let git = |repo: &Path, args: &[&str]| {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", text_of(&status));
    };
    for ignore_file in ["deploy/.ignore", ".gitignore"] {
        let repo = scratch("ignored");
        write(&repo.join("deploy/app.yaml"), DEPLOYMENT);
        write(&repo.join("deploy/notes.yaml"), "title: not a manifest\n");
        write(&repo.join(ignore_file), "app.yaml\n");
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-f", "."]);
        git(&repo, &["commit", "-q", "-m", "c"]);
        let out = kivi()
            .args(["units", "--format", "json"])
            .arg(repo.join("deploy"))
            .output()
            .unwrap();
        let units = json(&out);
        assert_eq!(
            units["units"].as_array().map(Vec::len),
            Some(1),
            "{ignore_file}: {units}"
        );
    }
    // Outside every work tree (this project's target directory is in one).
    let plain = assert_fs::TempDir::new().unwrap();
    let plain = plain.path();
    write(&plain.join("deploy/app.yaml"), DEPLOYMENT);
    write(
        &plain.join("deploy/other.yaml"),
        &DEPLOYMENT.replace("name: web", "name: api"),
    );
    write(&plain.join("deploy/.ignore"), "app.yaml\n");
    let out = kivi()
        .args(["units", "-v", "--color", "never"])
        .arg(plain.join("deploy"))
        .output()
        .unwrap();
    let all = text_of(&out);
    assert!(all.contains("not read:") && all.contains("deploy/app.yaml"), "{all}");
    assert!(
        !all.contains("Deployment/default/web"),
        "outside git the ignore file decides: {all}"
    );
}

/// The processes whose working directory is under `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Item 12: kivi-lint killed with SIGKILL (it cannot clean up) leaves no model checker, no
/// compiler and no renderer running: the kernel kills each child with the thread that
/// started it. The next run removes the temporary directories a dead run left.
#[test]
fn a_killed_run_leaves_no_process_and_its_directories_go_next_time() {
    let tmp = scratch("tmp");
    let repo = scratch("slow");
    // The demo shop: its search runs far longer than this test.
    common::copy_tree(&root().join("fixtures/demo-shop"), &repo);
    let binary = assert_cmd::cargo::cargo_bin("kivi-lint");
    let mut child = std::process::Command::new(&binary)
        .env("TMPDIR", &tmp)
        .args(["--no-cache", "--quiet", "--format", "json"])
        .arg(&repo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while processes_in(&tmp).is_empty() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!processes_in(&tmp).is_empty(), "a child ran in the temporary directory");
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = std::time::Instant::now();
    while !processes_in(&tmp).is_empty() && killed.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(processes_in(&tmp), Vec::<String>::new(), "children outlived kivi-lint");
    let left: Vec<std::path::PathBuf> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert!(!left.is_empty(), "a killed run cannot clean up");
    // An hour later, the next run removes them.
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    for dir in &left {
        std::fs::File::open(dir).unwrap().set_modified(long_ago).unwrap();
    }
    let out = std::process::Command::new(&binary)
        .env("TMPDIR", &tmp)
        .env("KIVI_LINT_CACHE_DIR", tmp.join("../cache"))
        .args(["--no-fixes", "-q"])
        .arg(root().join("fixtures/kivi-c3"))
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{}", text_of(&out));
    for dir in &left {
        assert!(!dir.exists(), "{} is left", dir.display());
    }
}

/// Item 8: a render is bounded like every other input. A kustomization that generates
/// ConfigMaps from one large file twenty times is a located error at its kustomization
/// (with a 15 MiB file, 300 MiB of output, kustomize alone took 2.2 GiB and kivi-lint more;
/// the renderer's memory limit stops that one, the output limit this smaller one).
#[test]
fn a_render_that_would_take_gigabytes_is_a_located_error() {
    let repo = scratch("generator");
    write(
        &repo.join("big.txt"),
        &format!("{}\n", "x".repeat(1023)).repeat(4 * 1024),
    );
    let generators: String = (0..20)
        .map(|i| format!("- {{name: cm{i}, files: [big.txt]}}\n"))
        .collect();
    write(
        &repo.join("kustomization.yaml"),
        &format!("configMapGenerator:\n{generators}"),
    );
    let out = kivi().args(["units", "--color", "never"]).arg(&repo).output().unwrap();
    let all = text_of(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("kustomization.yaml:1:1"), "{all}");
    assert!(
        all.contains("the limit on a render") || all.contains("the limit on any child's output"),
        "{all}"
    );
}

/// Items 10 and 13: a suppression's reason is the repository's text, and a file name is the
/// repository's too. The reason's link is defanged and its bidirectional override and line
/// break escaped in every format; a file named `my app%.yaml` is `my app%.yaml` (GitHub's
/// `my app%25.yaml` on the wire) where a file name is wanted, percent-encoded only in SARIF's
/// URIs.
#[test]
fn reasons_and_file_names_reach_every_format_neutral_and_as_they_are() {
    let repo = scratch("reasons");
    common::copy_tree(&root().join("fixtures/kivi-c3"), &repo);
    std::fs::rename(repo.join("deploy/php-apache.yaml"), repo.join("deploy/my app%.yaml")).unwrap();
    // A second copy of the Deployment, suppressed with a hostile reason.
    let manifest = std::fs::read_to_string(repo.join("deploy/my app%.yaml")).unwrap();
    write(
        &repo.join("deploy/other.yaml"),
        &manifest.replace("php-apache", "other"),
    );
    let config = std::fs::read_to_string(repo.join(".kivi-lint.yaml")).unwrap();
    write(
        &repo.join(".kivi-lint.yaml"),
        &format!(
            "{config}suppressions:\n  - {{check: pods-schedulable, object: Deployment/default/other, reason: \"see https://evil.example/x\\n::error::pwned \\u202Etxt.exe\"}}\n"
        ),
    );
    let reports = scratch("reports");
    let mut command = kivi();
    command
        .current_dir(&repo)
        .args(["--no-fixes", "--color", "never", "--fail-on", "never", "."]);
    for format in ["json", "sarif", "junit", "codequality", "markdown", "github"] {
        command.args(["--format", &format!("{format}={}", reports.join(format).display())]);
    }
    let out = command.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    for format in ["json", "sarif", "junit", "codequality", "markdown", "github"] {
        let text = std::fs::read_to_string(reports.join(format)).unwrap();
        assert!(text.contains("pwned"), "{format} carries the reason: {text}");
        assert!(!text.contains("https://evil"), "{format} has a live link: {text}");
        assert!(!text.contains('\u{202e}'), "{format} has a bidirectional override");
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("::error::pwned")),
            "{format}: {text}"
        );
    }
    let github = std::fs::read_to_string(reports.join("github")).unwrap();
    // (Paths are relative to the work tree that holds the scratch directory.)
    assert!(github.contains("/deploy/my app%25.yaml,line="), "{github}");
    let codequality = std::fs::read_to_string(reports.join("codequality")).unwrap();
    assert!(codequality.contains("/deploy/my app%.yaml\""), "{codequality}");
    let markdown = std::fs::read_to_string(reports.join("markdown")).unwrap();
    assert!(markdown.contains("deploy/my app%.yaml:"), "{markdown}");
    let sarif = std::fs::read_to_string(reports.join("sarif")).unwrap();
    assert!(sarif.contains("deploy/my%20app%25.yaml"), "{sarif}");
}

/// Item 7: a violation the search can reach within its bounds is found whatever an HPA's
/// `maxReplicas` says. kivi-c3 with `maxReplicas: 10000` (more pods than one model holds on
/// its 3-node topologies) still gets its pods-schedulable finding, from the same 5 replicas
/// on the same 3 nodes, with the held `maxReplicas` said; a run that needed the autoscaler
/// above the held value is inconclusive, never a finding.
#[test]
fn a_huge_max_replicas_does_not_hide_a_violation() {
    let repo = scratch("evasion");
    common::copy_tree(&root().join("fixtures/kivi-c3"), &repo);
    let manifest = repo.join("deploy/php-apache.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("maxReplicas: 6"));
    write(&manifest, &text.replace("maxReplicas: 6", "maxReplicas: 10000"));
    let out = kivi()
        .args(["--no-fixes", "--format", "json"])
        .arg(&repo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    let report = json(&out);
    let results = report["units"][0]["verification"]["results"]
        .as_array()
        .unwrap()
        .clone();
    let verdict = |check: &str| {
        results
            .iter()
            .find(|r| r["check"] == check)
            .map(|r| r["verdict"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    };
    assert_eq!(verdict("pods-schedulable"), "violated", "{report}");
    assert_ne!(
        verdict("no-replica-oscillation"),
        "violated",
        "a run beyond the held maxReplicas is no finding: {report}"
    );
    assert!(report.to_string().contains("maxReplicas held at"), "{report}");
}

/// Item 1: the model's templates are the binary's own. There is no option that reads them
/// from a directory (a `main.pml` a pull request commits could embed C that pan runs).
#[test]
fn templates_cannot_be_read_from_the_repository() {
    let out = kivi()
        .args(["--templates-dir", "evil.yaml", "fixtures/kivi-c3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text_of(&out));
    assert!(
        text_of(&out).contains("unexpected argument '--templates-dir'"),
        "{}",
        text_of(&out)
    );
}

/// Item 20: a scan that finds no Kubernetes object is an error, not a silent green (a wrong
/// path, or the image run with the repository mounted elsewhere than /repo), with a SARIF
/// notification; `--allow-empty` makes it a pass where that is expected.
#[test]
fn an_empty_scan_fails_unless_allowed() {
    let empty = scratch("empty");
    write(&empty.join("notes.yaml"), "title: not a manifest\n");
    let out = kivi()
        .args(["--color", "never", "--format", "sarif"])
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text_of(&out));
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notifications = &sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert!(
        notifications.to_string().contains("no Kubernetes objects found"),
        "{sarif}"
    );
    let out = kivi()
        .args(["--color", "never", "--allow-empty"])
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
}

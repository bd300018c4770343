//! What the integration tests share: the repository root and the binary with a test cache.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of the shared corpus beside the clone (`../shared/corpus/<rel>`: other people's
/// repositories, which this repository does not carry). Where it is not there, the test says
/// on one line that it was skipped and why, and passes; with `KIVI_REQUIRE_CORPUS` set (as
/// `.ci/run` sets it) it fails instead.
#[allow(dead_code)]
pub fn shared_corpus(rel: &str) -> Option<PathBuf> {
    let dir = root().join("../shared/corpus").join(rel);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("KIVI_REQUIRE_CORPUS").is_none(),
        "the shared corpus is required (KIVI_REQUIRE_CORPUS) but {} is not there",
        dir.display()
    );
    eprintln!(
        "skipped: {} is not beside the clone (the shared corpus of public repositories; CI requires it)",
        dir.display()
    );
    None
}

/// A tool a test needs, from PATH; a test without it fails saying what to run. `package` is
/// what `scripts/setup` installs it with.
#[allow(dead_code)]
pub fn tool(names: &[&str], package: &str) -> PathBuf {
    names.iter().find_map(|n| which::which(n).ok()).unwrap_or_else(|| {
        panic!(
            "this test needs `{}` ({package}), which is not on PATH: run `scripts/setup`",
            names[0]
        )
    })
}

/// The binary, run from the repository root, with no colour settings or logging from the
/// environment. SPIN and a C compiler must be there: without them every verdict would be an
/// engine error, and the test would fail far from the reason.
pub fn kivi() -> Command {
    tool(&["spin"], "spin");
    tool(&["cc", "gcc", "clang"], "gcc");
    let mut c = Command::cargo_bin("kivi-lint").expect("binary built");
    c.current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("KIVI_LINT_LOG")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        // Compiled models are shared by the tests of one build, never with the user's cache.
        .env(
            "KIVI_LINT_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
        );
    c
}

/// Run `kivi-lint ARGS`, check the exit code, return stdout.
// Each test crate compiles this module; not all of them use every helper.
#[allow(dead_code)]
pub fn stdout_of(args: &[&str], code: i32) -> String {
    let out = kivi().args(args).assert().code(code).get_output().stdout.clone();
    String::from_utf8(out).expect("stdout is UTF-8")
}

/// Copy every file under `from` into `to`, keeping relative paths.
#[allow(dead_code)]
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `(check, verdict)` of every result of a JSON report, in report order.
#[allow(dead_code)]
pub fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|u| u["verification"]["results"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["check"].as_str().unwrap_or_default().to_string(),
                r["verdict"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// What a fixture says kivi-lint concludes on it (`fixtures/<name>/expected.txt`): the exit
/// code, then `check verdict` pairs in its order.
#[allow(dead_code)]
pub struct Expected {
    pub fixture: String,
    pub exit: i32,
    pub verdicts: Vec<(String, String)>,
}

/// Every fixture's expectation, by fixture name.
#[allow(dead_code)]
pub fn expected_verdicts() -> Vec<Expected> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root().join("fixtures")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("expected.txt")) else {
            continue;
        };
        let fixture = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut exit = None;
        let mut verdicts = Vec::new();
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let (key, value) = line
                .split_once(' ')
                .unwrap_or_else(|| panic!("{fixture}/expected.txt: `{line}`"));
            if key == "exit" {
                exit = Some(
                    value
                        .parse()
                        .unwrap_or_else(|_| panic!("{fixture}/expected.txt: `{line}`")),
                );
            } else {
                verdicts.push((key.to_string(), value.to_string()));
            }
        }
        let exit = exit.unwrap_or_else(|| panic!("{fixture}/expected.txt has no `exit` line"));
        out.push(Expected {
            fixture,
            exit,
            verdicts,
        });
    }
    out.sort_by(|a, b| a.fixture.cmp(&b.fixture));
    out
}

/// The binary with `tests/bin/helm` first on PATH: a stand-in that records its arguments in
/// `args_file` and prints the chart fixtures/helm-chart rendered beforehand.
#[allow(dead_code)]
pub fn kivi_with_helm_stand_in(args_file: &Path) -> Command {
    let path = format!(
        "{}:{}",
        root().join("tests/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = kivi();
    c.env("PATH", path)
        .env(
            "KIVI_TEST_HELM_OUTPUT",
            root().join("fixtures/helm-chart/rendered/web.yaml"),
        )
        .env("KIVI_TEST_HELM_ARGS", args_file);
    c
}

/// An HTTP server on loopback that serves the files of a directory and records every request
/// path: a Helm chart repository for the tests, and the witness that nothing else was asked.
#[allow(dead_code)]
pub struct FileServer {
    pub port: u16,
    requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[allow(dead_code)]
impl FileServer {
    pub fn start(root: &Path) -> FileServer {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (seen, done, root) = (requests.clone(), stop.clone(), root.to_path_buf());
        std::thread::spawn(move || {
            // Bounded: it stops when the test drops it, or after five minutes.
            let started = std::time::Instant::now();
            while !done.load(Ordering::Relaxed) && started.elapsed().as_secs() < 300 {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 16384 {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => break,
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                seen.lock().unwrap().push(path.clone());
                // A static server: the query (git's `?service=`) names no other file.
                let file = root.join(path.split('?').next().unwrap_or_default().trim_start_matches('/'));
                let response = match std::fs::read(&file) {
                    Ok(body) if !path.contains("..") => {
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend(body);
                        r
                    }
                    _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
                };
                let _ = stream.write_all(&response);
            }
        });
        FileServer { port, requests, stop }
    }

    /// Every request path so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

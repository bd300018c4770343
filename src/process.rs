//! Running a child process (kustomize, helm, spin, the C compiler, pan) with a time limit,
//! killing its whole process group when the limit is reached.

use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use thiserror::Error;
use wait_timeout::ChildExt;

/// Set once by Ctrl-C, SIGTERM (a cancelled CI job) or `--timeout`: every child started
/// through this module is stopped with its whole group, and none is started any more.
static CANCELLED: AtomicBool = AtomicBool::new(false);
/// Why, as the messages of stopped children say it.
static WHY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Stop every child, now and from now on (see [`CANCELLED`]), because of `why` ("the run
/// was interrupted").
pub fn cancel_all(why: &str) {
    let _ = WHY.set(why.to_string());
    CANCELLED.store(true, Ordering::SeqCst);
}

/// Why children are stopped: what `cancel_all` said, else (a run's own cancel flag) that the
/// run was cancelled.
fn why() -> String {
    WHY.get().cloned().unwrap_or_else(|| "the run was cancelled".into())
}

/// Whether [`cancel_all`] was called.
pub fn cancelled() -> bool {
    CANCELLED.load(Ordering::SeqCst)
}

pub struct Finished {
    pub success: bool,
    /// The exit code, if the process exited.
    pub code: Option<i32>,
    /// The signal that ended the process, if one did.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

#[derive(Debug, Error)]
pub enum RunError {
    #[error("cannot run `{program}`: {message}")]
    Spawn { program: String, message: String },
    #[error("`{program}` did not finish within {} s and was stopped", limit.as_secs_f64())]
    TimedOut { program: String, limit: Duration },
    #[error("`{program}` was stopped: {why}")]
    Cancelled { program: String, why: String },
    #[error("`{program}` wrote more than {} MiB and was stopped (the limit on any child's output)", MAX_OUTPUT >> 20)]
    TooMuchOutput { program: String },
    #[error("{0}")]
    Io(String),
}

impl From<RunError> for String {
    fn from(e: RunError) -> String {
        e.to_string()
    }
}

/// Keep a renderer off the network, as a second line behind refusing remote references.
/// Where the kernel lets this user make a network namespace (`unshare --net
/// --map-root-user`), the renderer runs in one, which has no interface but its own
/// loopback: nothing on this machine or beyond can be reached. Elsewhere (GitHub's Ubuntu
/// images restrict user namespaces) every HTTP(S) request goes to a closed local port, which
/// Go's HTTP client skips for loopback hosts, and git may use no transport at all.
pub fn offline(command: Command) -> Command {
    const NOWHERE: &str = "http://127.0.0.1:9";
    let mut command = match isolating_namespace() {
        Some(unshare) => {
            let mut wrapped = Command::new(unshare);
            wrapped
                .args(["--net", "--map-root-user", "--"])
                .arg(command.get_program())
                .args(command.get_args());
            if let Some(dir) = command.get_current_dir() {
                wrapped.current_dir(dir);
            }
            for (key, value) in command.get_envs() {
                match value {
                    Some(v) => wrapped.env(key, v),
                    None => wrapped.env_remove(key),
                };
            }
            wrapped
        }
        None => command,
    };
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        command.env(var, NOWHERE);
    }
    // SAFETY: setrlimit is async-signal-safe; the limit is a constant.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: RENDERER_MEMORY as libc::rlim_t,
                rlim_max: RENDERER_MEMORY as libc::rlim_t,
            };
            let _ = libc::setrlimit(libc::RLIMIT_DATA, &limit);
            Ok(())
        });
    }
    command
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        // No transport at all: `file` would let a base clone another repository on this
        // machine.
        .env("GIT_ALLOW_PROTOCOL", "none")
        .env("GIT_TERMINAL_PROMPT", "0");
    command
}

/// `unshare`, if it can give this user a network namespace here (probed once).
fn isolating_namespace() -> Option<&'static std::path::Path> {
    static UNSHARE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    UNSHARE
        .get_or_init(|| {
            let unshare = which::which("unshare").ok()?;
            let mut probe = Command::new(&unshare);
            probe.args(["--net", "--map-root-user", "--", "true"]);
            let works = run(probe, Duration::from_secs(10)).is_ok_and(|f| f.success);
            tracing::debug!(
                "renderers run {} a network namespace of their own",
                if works { "in" } else { "without" }
            );
            works.then_some(unshare)
        })
        .as_deref()
}

/// The most a child may write to stdout or to stderr: a render larger than this is no
/// repository's (the largest charts render a few MiB), and reading it would take memory
/// without bound (a kustomize generator reading one large file many times).
pub const MAX_OUTPUT: u64 = 64 << 20;

/// The data segment a renderer may have (`RLIMIT_DATA`, which bounds Go's heap): kustomize
/// asked to generate 300 MiB used 2.2 GiB before; it now fails at the limit. Real renders
/// (the largest public charts) stay under a few hundred MiB.
const RENDERER_MEMORY: u64 = 1 << 30;

/// Why a renderer failed, when it was the memory limit: Go's runtime says "out of memory"
/// and a stack dump that explains nothing to a user.
pub fn out_of_memory(stderr: &str) -> Option<String> {
    stderr.contains("runtime: out of memory").then(|| {
        format!(
            "it needed more than {} GiB of memory, the limit on a render, and was stopped",
            RENDERER_MEMORY >> 30
        )
    })
}

/// Run `command` to completion or until `timeout`. Output goes to temporary files, so a child
/// that writes a lot cannot block on a full pipe while we wait. The child leads its own process
/// group, so a compiler's or renderer's own children are stopped with it.
pub fn run(command: Command, timeout: Duration) -> Result<Finished, RunError> {
    run_cancellable(command, timeout, None)
}

/// [`run`], also stopping the child (and its group) as soon as `cancel` is set: Ctrl-C, or a
/// result elsewhere that makes this one useless.
pub fn run_cancellable(
    mut command: Command,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Finished, RunError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let io = |e: std::io::Error| RunError::Io(format!("running `{program}`: {e}"));
    let mut out = tempfile::tempfile().map_err(io)?;
    let mut err = tempfile::tempfile().map_err(io)?;
    command
        .stdin(Stdio::null())
        .stdout(out.try_clone().map_err(io)?)
        .stderr(err.try_clone().map_err(io)?)
        .process_group(0);
    bound_child(&mut command, timeout);
    let started = Instant::now();
    if cancelled() {
        return Err(RunError::Cancelled { program, why: why() });
    }
    let mut child = command.spawn().map_err(|e| RunError::Spawn {
        program: program.clone(),
        message: e.to_string(),
    })?;
    // Wait in short slices, looking at the cancel flags in between.
    let slice = Duration::from_millis(20);
    let status = loop {
        let left = timeout.saturating_sub(started.elapsed());
        if let Some(status) = child.wait_timeout(slice.min(left)).map_err(io)? {
            break status;
        }
        if too_much_output(&out, &err) {
            kill_group(child.id());
            let _ = child.wait();
            return Err(RunError::TooMuchOutput { program });
        }
        if cancelled() || cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            kill_group(child.id());
            let _ = child.wait();
            return Err(RunError::Cancelled { program, why: why() });
        }
        if started.elapsed() >= timeout {
            kill_group(child.id());
            let _ = child.wait();
            return Err(RunError::TimedOut {
                program,
                limit: timeout,
            });
        }
    };
    // A child that wrote everything just before exiting was not seen in the loop.
    if too_much_output(&out, &err) {
        return Err(RunError::TooMuchOutput { program });
    }
    Ok(Finished {
        success: status.success(),
        code: status.code(),
        signal: status.signal(),
        stdout: read_all(&mut out),
        stderr: read_all(&mut err),
        elapsed: started.elapsed(),
    })
}

/// A child outlives neither kivi-lint nor its own limit, even when kivi-lint is killed with
/// SIGKILL and cannot stop it: the kernel sends it SIGKILL when the thread that started it
/// ends (`PR_SET_PDEATHSIG`), and its CPU time is capped (`RLIMIT_CPU`) at its time limit
/// on every core, plus a margin, so an orphan stops by itself.
fn bound_child(command: &mut Command, timeout: Duration) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let seconds = timeout
        .as_secs()
        .saturating_add(1)
        .saturating_mul(cores)
        .saturating_add(10);
    // SAFETY: the closure runs in the child between fork and exec and makes only
    // async-signal-safe system calls (prctl, getppid, setrlimit) on values computed before.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the call above: nothing would signal this child.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("kivi-lint ended before its child started"));
            }
            let limit = libc::rlimit {
                rlim_cur: seconds as libc::rlim_t,
                rlim_max: seconds as libc::rlim_t,
            };
            // A limit already lower stays (setrlimit may not raise the hard limit).
            let _ = libc::setrlimit(libc::RLIMIT_CPU, &limit);
            Ok(())
        });
    }
}

/// A temporary directory of this run: its name holds this process's id, so that a later run
/// can tell it from a live run's and remove it if this one was killed before it could.
pub fn temporary_dir(kind: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("kivi-lint-{kind}-{}-", std::process::id()))
        .tempdir()
}

/// Remove what killed runs left in the temporary directory: `kivi-lint-<kind>-<pid>-*`
/// directories of this user whose process is gone and that have not changed for an hour (a
/// process id can be another namespace's). Returns how many were removed.
pub fn remove_stale_temporary_dirs() -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = stale_pid(&name.to_string_lossy()) else {
            continue;
        };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(3600));
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let gone =
            unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if meta.is_dir() && meta.uid() == uid && old && gone && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process id in a temporary directory's name `kivi-lint-<kind>-<pid>-<random>`.
fn stale_pid(name: &str) -> Option<libc::pid_t> {
    let rest = name.strip_prefix("kivi-lint-")?;
    let mut parts = rest.splitn(3, '-');
    let (_kind, pid, _random) = (parts.next()?, parts.next()?, parts.next()?);
    pid.parse().ok().filter(|p| *p > 0)
}

/// Whether a child's stdout or stderr (the files they go to) passed [`MAX_OUTPUT`].
fn too_much_output(out: &File, err: &File) -> bool {
    [out, err]
        .iter()
        .any(|f| f.metadata().is_ok_and(|m| m.len() > MAX_OUTPUT))
}

fn read_all(file: &mut File) -> String {
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

fn kill_group(pid: u32) {
    // The child leads its own group (process_group(0)), so its pid is the group id.
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--"])
        .arg(format!("-{pid}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_renderers_see_no_network() {
        let mut env = Command::new("env");
        env.env("NO_PROXY", "*").env("KEPT", "yes");
        let out = run(offline(env), Duration::from_secs(10)).unwrap();
        assert!(out.stdout.contains("HTTPS_PROXY=http://127.0.0.1:9"), "{}", out.stdout);
        assert!(out.stdout.contains("GIT_ALLOW_PROTOCOL=none"));
        assert!(out.stdout.contains("KEPT=yes"), "the command's own environment is kept");
        assert!(!out.stdout.contains("NO_PROXY="));
        // Where a network namespace can be had, loopback is the namespace's own: a server
        // listening on this machine's loopback cannot be reached.
        if isolating_namespace().is_some() {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let mut connect = Command::new("bash");
            connect.args(["-c", &format!("exec 3<>/dev/tcp/127.0.0.1/{port}")]);
            let out = run(offline(connect), Duration::from_secs(10)).unwrap();
            assert!(!out.success, "connected to this machine's loopback");
        }
    }

    #[test]
    fn output_is_bounded() {
        // A child that keeps writing, and one that writes it all at once and exits at once.
        for script in ["exec yes kivi-lint", "exec head -c 70000000 /dev/zero"] {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            let started = Instant::now();
            assert!(
                matches!(run(c, Duration::from_secs(60)), Err(RunError::TooMuchOutput { .. })),
                "{script}"
            );
            assert!(started.elapsed() < Duration::from_secs(30));
        }
    }

    #[test]
    fn children_die_with_the_thread_that_started_them() {
        // The thread that starts the child ends without waiting for it, as when kivi-lint is
        // killed: the kernel kills the child.
        let mut child = std::thread::spawn(|| {
            let mut c = Command::new("sleep");
            c.arg("30");
            bound_child(&mut c, Duration::from_secs(60));
            c.spawn().unwrap()
        })
        .join()
        .unwrap();
        let status = child
            .wait_timeout(Duration::from_secs(10))
            .unwrap()
            .expect("the child died");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert_eq!(stale_pid("kivi-lint-run-1234-abc"), Some(1234));
        assert_eq!(stale_pid("kivi-lint-run-abc"), None);
    }

    #[test]
    fn output_exit_and_time_limit() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo out; echo err >&2; exit 3"]);
        let f = run(c, Duration::from_secs(10)).unwrap();
        assert_eq!(
            (f.stdout.as_str(), f.stderr.as_str(), f.code, f.success),
            ("out\n", "err\n", Some(3), false)
        );
        let mut c = Command::new("sh");
        // The grandchild `sleep` must die with the group too.
        c.args(["-c", "sleep 30 & sleep 30"]);
        let started = Instant::now();
        assert!(matches!(
            run(c, Duration::from_millis(200)),
            Err(RunError::TimedOut { .. })
        ));
        assert!(started.elapsed() < Duration::from_secs(5));
        let cancel = AtomicBool::new(true);
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30 & sleep 30"]);
        let started = Instant::now();
        assert!(matches!(
            run_cancellable(c, Duration::from_secs(60), Some(&cancel)),
            Err(RunError::Cancelled { .. })
        ));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(matches!(
            run(Command::new("/no/such/program"), Duration::from_secs(1)),
            Err(RunError::Spawn { .. })
        ));
    }
}

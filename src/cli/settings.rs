//! A scan's flags resolved once (after ripgrep's `HiArgs`): clap's structs become one
//! immutable [`Settings`] before anything runs, and nothing after reads them. What the config
//! file adds is resolved by `analysis` (the file as written, then the scan's environment).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use super::args::{self, FailOn, GlobalArgs, ScanArgs};
use super::output;
use crate::report::Output;
use crate::run::Scan;

/// Everything a scan does, decided from its command line.
pub(super) struct Settings {
    /// What to analyse and verify; `None` in pre-commit mode when no changed file belongs to a
    /// render unit (nothing to check: exit 0).
    pub plan: Option<Scan>,
    /// The reports to write, and where.
    pub outputs: Vec<Output>,
    pub fail_on: FailOn,
    pub require_complete: bool,
    /// The whole scan's bound (`--timeout`).
    pub timeout: Option<Duration>,
    /// A `--config` named on the command line (one that cannot be read stops the scan).
    pub config: Option<PathBuf>,
    pub stdout_color: bool,
    pub stderr_color: bool,
    /// `-v` and more: every step of a counterexample, the skipped documents.
    pub verbose: u8,
    pub quiet: bool,
}

impl Settings {
    /// Resolve `scan` and `global`; `Err` is a usage error said in one line (exit 2).
    pub(super) fn resolve(scan: &ScanArgs, global: &GlobalArgs) -> Result<Settings, String> {
        let outputs = output::outputs(&global.format)?;
        let cluster_state = cluster_state(scan)?;
        Ok(Settings {
            plan: plan(scan, cluster_state),
            outputs,
            fail_on: scan.fail_on,
            require_complete: scan.require_complete,
            timeout: scan.timeout,
            config: scan.config.clone(),
            stdout_color: global.color.enabled(std::io::stdout().is_terminal()),
            stderr_color: global.color.enabled(std::io::stderr().is_terminal()),
            verbose: global.verbose,
            quiet: global.quiet,
        })
    }

    /// The format written to stdout (`human` unless `--format` sends another there).
    pub(super) fn stdout_format(&self) -> crate::report::Format {
        self.outputs
            .iter()
            .find(|o| o.file.is_none())
            .map_or(crate::report::Format::Human, |o| o.format)
    }

    /// The `--config` named, and it cannot be read.
    pub(super) fn unreadable_config(&self) -> bool {
        self.config.as_ref().is_some_and(|p| !p.is_file())
    }
}

/// The scan's plan: paths (in pre-commit mode, the render units of the changed files), the
/// engine's limits, the network, the cache, PR mode, shards, fixes.
/// `--cluster-state`: a file, or stdin (`-`) read once, here.
fn cluster_state(scan: &ScanArgs) -> Result<Option<crate::config::cluster_state::Source>, String> {
    use crate::config::cluster_state::Source;
    use std::io::Read;
    let Some(path) = &scan.cluster_state else {
        return Ok(None);
    };
    if path.as_os_str() != "-" {
        return Ok(Some(Source::File(path.clone())));
    }
    if scan.paths.iter().any(|p| p.as_os_str() == "-") {
        return Err(
            "`--cluster-state -` and manifests from `-` would both read stdin: save the cluster state to a file".into(),
        );
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("--cluster-state -: cannot read stdin: {e}"))?;
    Ok(Some(Source::Stdin(text.into())))
}

fn plan(scan: &ScanArgs, cluster_state: Option<crate::config::cluster_state::Source>) -> Option<Scan> {
    // At most 8 per core: each job is a thread and a child process, and more than that only
    // multiplies memory (`-j 10000` once failed to spawn its threads).
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let jobs = scan.jobs.unwrap_or(cores).clamp(1, cores * 8);
    let paths = if scan.pre_commit {
        let roots = crate::discover::render_roots(&scan.paths);
        tracing::info!(
            "pre-commit: {} changed files in {} render units",
            scan.paths.len(),
            roots.len()
        );
        if roots.is_empty() {
            return None;
        }
        roots
    } else {
        scan.paths.clone()
    };
    let mut engine = crate::engine::Options::default();
    if let Some(limit) = scan.run_time_limit {
        engine.time_limit = limit;
    }
    if let Some(mb) = scan.run_memory {
        engine.memory_mb = mb;
    }
    engine.random_runs = scan.simulate;
    let network = crate::discover::fetch::Network {
        allowed: scan.allow_network,
        forbidden: scan.no_network,
        trusted_hosts: scan.allow_host.clone(),
        allowed_hosts: Vec::new(),
        cache: args::cache_dir(scan),
    };
    Some(Scan {
        request: crate::analysis::Request {
            paths,
            config: scan.config.clone(),
            stdin_filename: scan.stdin_filename.clone(),
            render: !scan.no_render,
            jobs,
            allow_outside_repository: scan.allow_outside_repository,
            // pre-commit hands over every changed YAML file, Kubernetes or not.
            allow_empty: scan.allow_empty || scan.pre_commit,
            repository: None,
            file_ids_from: 0,
            strict: scan.strict,
            network,
            cluster_state,
        },
        engine,
        cache_dir: args::cache_dir(scan),
        emit_models: scan.emit_models.clone(),
        // The running cluster is one topology: its nodes, as they are.
        scale: scan.scale.unwrap_or(if scan.cluster_state.is_some() {
            crate::search::Scale::Current
        } else {
            crate::search::Scale::Search
        }),
        all: scan.all,
        changed_since: scan.changed_since.clone(),
        all_findings: scan.all_findings,
        no_inline_suppressions: scan.no_inline_suppressions,
        shard: scan.shard,
        fixes_for: (!scan.no_fixes).then(|| scan.fixes_for.level()),
    })
}

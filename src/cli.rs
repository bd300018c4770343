//! The command line: argument parsing, logging set-up, dispatch and exit codes.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::analysis::{self, Analysis};
use crate::config::DEFAULT_CONFIG;
use crate::diagnostics::{self, Severity};
use crate::report::{self, Format, Output, RulesFormat};

/// Exit codes (documented in the README).
/// Exit codes live with the reports that state them; the binary exits with them.
pub use crate::report::exit;

#[derive(Parser, Debug)]
#[command(
    name = "kivi-lint",
    version,
    about = "Verify Kubernetes configurations by model checking their controllers",
    long_about = "kivi-lint scans a GitOps repository (plain YAML, kustomize, Helm), groups workloads \
                  into verification units and checks how the Kubernetes controllers act on them.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    #[command(flatten)]
    scan: ScanArgs,

    #[command(flatten)]
    global: GlobalArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the verification units.
    Units {
        #[command(flatten)]
        scan: Box<ScanArgs>,
        #[command(flatten)]
        global: GlobalArgs,
    },
    /// List the checks: ids, aliases, default levels and definitions.
    Rules {
        /// Output format.
        #[arg(short = 'f', long, value_enum, default_value_t = RulesFormat::Human)]
        format: RulesFormat,
    },
    /// Explain a check: its definition, an example and the usual fixes.
    Explain {
        /// A check id (or a Kivi alias).
        #[arg(value_name = "CHECK")]
        check: String,
    },
    /// Join the JSON reports of shards (`--shard i/n`) into one report.
    Merge {
        /// JSON reports written with `--format json`, one per shard.
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// Exit 1 when a finding at or above this level exists (`never`: findings do not fail).
        #[arg(long, value_enum, default_value_t = FailOn::Error, value_name = "LEVEL")]
        fail_on: FailOn,
        #[command(flatten)]
        global: GlobalArgs,
    },
    /// Show configuration.
    Config {
        /// Print the embedded default configuration.
        #[arg(long)]
        default: bool,
    },
}

#[derive(Args, Debug, Clone)]
struct ScanArgs {
    /// Files or directories to scan; `-` reads manifests from stdin.
    #[arg(value_name = "PATH", default_value = ".")]
    paths: Vec<PathBuf>,

    /// Config file (default: .kivi-lint.yaml found walking up from the first path).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    config: Option<PathBuf>,

    /// Let the config name files outside its repository (`cluster.fromNodes`,
    /// `scheduler.config`, `descheduler.policy`, an `apply` event's directory).
    #[arg(long)]
    allow_outside_repository: bool,

    /// Name shown for manifests read from stdin.
    #[arg(long, value_name = "NAME")]
    stdin_filename: Option<String>,

    /// Read every YAML file as it is, without rendering kustomize directories or Helm charts.
    #[arg(long)]
    no_render: bool,

    /// Renders and model-checker runs at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,

    /// Verify one topology only: `current` (each pool's `count`) or N nodes in every pool.
    /// Default: the incremental search from the smallest topology up.
    #[arg(long, value_name = "N|current", value_parser = parse_scale)]
    scale: Option<crate::scaling::Scale>,

    /// Keep searching larger topologies after a check's first violation.
    #[arg(long)]
    all: bool,

    /// Where compiled models are kept between runs (default: $KIVI_LINT_CACHE_DIR, else the
    /// user cache directory, ~/.cache/kivi-lint).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Neither read nor write the cache.
    #[arg(long)]
    no_cache: bool,

    /// PR mode: verify only the units that changed since this git ref, and report only the
    /// violations it does not have.
    #[arg(long, value_name = "GIT-REF")]
    changed_since: Option<String>,

    /// With --changed-since, report the violations the base revision has too.
    #[arg(long, requires = "changed_since")]
    all_findings: bool,

    /// Verify only shard I of N (1-based): a deterministic slice of the units, for parallel CI
    /// jobs; join the JSON reports with `kivi-lint merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<crate::report::model::Shard>,

    /// Read PROMELA templates from DIR where it has a file of the same name (experiments).
    #[arg(long, value_name = "DIR")]
    templates_dir: Option<PathBuf>,

    /// Write each unit's generated PROMELA model to DIR/<unit id>.pml.
    #[arg(long, value_name = "DIR")]
    emit_models: Option<PathBuf>,

    /// Exit 1 when a finding at or above this level exists (`never`: findings do not fail).
    #[arg(long, value_enum, default_value_t = FailOn::Error, value_name = "LEVEL")]
    fail_on: FailOn,

    /// Ignore `ignore-check.kivi-lint.io/<check>` annotations (audits); config suppressions
    /// still apply.
    #[arg(long)]
    no_inline_suppressions: bool,

    /// pre-commit mode: the paths are changed files; check each render unit they belong to
    /// (chart root, kustomization root, else directory) once.
    #[arg(long)]
    pre_commit: bool,

    /// Do not look for fixes (each candidate fix of a violation costs a model-checker run).
    #[arg(long)]
    no_fixes: bool,

    /// Look for fixes of findings at or above this level (default: errors only).
    #[arg(long, value_enum, default_value_t = FixesFor::Error, value_name = "LEVEL")]
    fixes_for: FixesFor,

    /// Stop the whole run after this long (`90s`, `10m`, or seconds): what is not decided by
    /// then is inconclusive, with this as the reason, and the reports are still written.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    timeout: Option<std::time::Duration>,

    /// Time limit of each model-checker run (default 60s); a run that reaches it is
    /// inconclusive.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    run_time_limit: Option<std::time::Duration>,

    /// Memory limit of each model-checker run, in MiB (default 1024); a run that reaches it is
    /// inconclusive.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u32).range(16..))]
    run_memory: Option<u32>,

    /// After a model-checker run that cannot finish (memory, time or depth limit), N seeded
    /// random runs (randomised bitstate searches of a fixed size): a violation one finds is
    /// reported with its trace; none leaves the check inconclusive, never verified.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RANDOM_RUNS, value_parser = clap::value_parser!(u32).range(0..=64))]
    simulate: u32,
}

/// `--simulate`'s default: a few seconds after a search that already spent its limit.
const DEFAULT_RANDOM_RUNS: u32 = 3;

/// `90`, `90s`, `10m` or `1h`.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (like 90s, 10m or 1h)"))?;
    let seconds = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        _ => return Err(format!("`{s}` is not a duration (like 90s, 10m or 1h)")),
    };
    if seconds == 0 {
        return Err("a duration must be at least 1s".into());
    }
    Ok(std::time::Duration::from_secs(seconds))
}

fn parse_scale(s: &str) -> Result<crate::scaling::Scale, String> {
    use crate::scaling::Scale;
    match s {
        "current" => Ok(Scale::Current),
        n => match n.parse::<u32>() {
            Ok(n) if (1..=30).contains(&n) => Ok(Scale::Nodes(n)),
            _ => Err("expected `current` or a node count per pool from 1 to 30".into()),
        },
    }
}

fn parse_shard(s: &str) -> Result<crate::report::model::Shard, String> {
    let parsed = s
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
    match parsed {
        Some((index, count)) if count >= 1 && (1..=count).contains(&index) => {
            Ok(crate::report::model::Shard { index, count })
        }
        _ => Err("expected I/N with 1 ≤ I ≤ N, e.g. 2/4".into()),
    }
}

/// The units of shard `shard` among `units`: every n-th, so shards get as many units as
/// possible alike, and the slice depends only on the units.
fn shard_units(units: &[usize], shard: crate::report::model::Shard) -> Vec<usize> {
    units
        .iter()
        .copied()
        .skip(shard.index - 1)
        .step_by(shard.count)
        .collect()
}

/// The cache directory: the flag, else KIVI_LINT_CACHE_DIR, else the user cache directory.
/// (The engine makes it absolute: pan runs in directories of its own.)
fn cache_dir(scan: &ScanArgs) -> Option<PathBuf> {
    if scan.no_cache {
        return None;
    }
    let nonempty = |v: std::ffi::OsString| (!v.is_empty()).then(|| PathBuf::from(v));
    scan.cache_dir
        .clone()
        .or_else(|| std::env::var_os("KIVI_LINT_CACHE_DIR").and_then(nonempty))
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .and_then(nonempty)
                .map(|d| d.join("kivi-lint"))
        })
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(nonempty)
                .map(|d| d.join(".cache").join("kivi-lint"))
        })
}

/// The lowest finding level fixes are searched for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FixesFor {
    Error,
    Warning,
    Note,
}

impl FixesFor {
    fn level(self) -> crate::checks::Level {
        match self {
            FixesFor::Error => crate::checks::Level::Error,
            FixesFor::Warning => crate::checks::Level::Warning,
            FixesFor::Note => crate::checks::Level::Note,
        }
    }
}

/// The lowest finding level that makes the run fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Note,
    Never,
}

impl FailOn {
    fn fails(self, level: crate::checks::Level) -> bool {
        use crate::checks::Level;
        match self {
            FailOn::Error => level == Level::Error,
            FailOn::Warning => level <= Level::Warning,
            FailOn::Note => true,
            FailOn::Never => false,
        }
    }
}

#[derive(Args, Debug, Clone)]
struct GlobalArgs {
    /// Report format, repeatable: human (default), json, sarif, junit, github, codequality,
    /// markdown, html. `FORMAT=FILE` writes to FILE; at most one format goes to stdout. On
    /// GitHub Actions (GITHUB_ACTIONS=true) with no stdout format, `github` is added.
    #[arg(short = 'f', long = "format", value_name = "FORMAT[=FILE]")]
    format: Vec<Output>,

    /// Print only the report and errors.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,

    /// More detail on stderr (-v: config and skipped documents, -vv: debug logs).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,

    /// When to use colors (NO_COLOR is honoured with `auto`).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    fn enabled(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                terminal
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var("TERM").map_or(true, |t| t != "dumb")
            }
        }
    }
}

/// `kivi-lint -v units DIR` is `kivi-lint units -v DIR`: the options every command shares
/// may come before the subcommand (clap would read `units` as a path to scan).
fn subcommand_first(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let shared = |a: &str| -> Option<usize> {
        match a {
            "-q" | "--quiet" | "--verbose" => Some(1),
            "--color" | "-f" | "--format" => Some(2),
            _ if a.starts_with("--color=") || a.starts_with("--format=") => Some(1),
            _ if a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| c == 'v') => Some(1),
            _ => None,
        }
    };
    let mut i = 1;
    while let Some(width) = args.get(i).and_then(|a| a.to_str()).and_then(shared) {
        i += width;
    }
    let with_shared = ["units", "merge"];
    match args.get(i).and_then(|a| a.to_str()) {
        Some(name) if i > 1 && with_shared.contains(&name) => {
            let mut out = vec![args[0].clone(), args[i].clone()];
            out.extend(args[1..i].iter().cloned());
            out.extend(args[i + 1..].iter().cloned());
            out
        }
        _ => args,
    }
}

/// Run the command line; returns the process exit code.
pub fn run() -> Result<u8> {
    let cli = Cli::parse_from(subcommand_first(std::env::args_os().collect()));
    match cli.command {
        Some(Command::Config { default }) => {
            if !default {
                anyhow::bail!("use `kivi-lint config --default` to print the default configuration");
            }
            std::io::stdout().write_all(DEFAULT_CONFIG.as_bytes())?;
            Ok(exit::OK)
        }
        Some(Command::Units { scan, global }) => scan_command(&scan, &global, true),
        Some(Command::Merge { files, fail_on, global }) => merge_command(&files, fail_on, &global),
        Some(Command::Rules { format }) => {
            std::io::stdout().write_all(report::rules(format).as_bytes())?;
            Ok(exit::OK)
        }
        Some(Command::Explain { check }) => match crate::checks::find(&check) {
            Some(c) => {
                std::io::stdout().write_all(report::explain(c).as_bytes())?;
                Ok(exit::OK)
            }
            None => {
                eprintln!(
                    "error: no check `{check}`; known checks: {}",
                    crate::checks::known_names()
                );
                Ok(exit::INPUT_ERROR)
            }
        },
        None => scan_command(&cli.scan, &cli.global, false),
    }
}

fn init_logging(global: &GlobalArgs, color: bool) {
    let level = if global.quiet {
        "error"
    } else {
        match global.verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("KIVI_LINT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LogLine(Vec::new()))
        .with_ansi(color)
        .without_time()
        .with_target(false)
        .try_init();
}

/// One log event, written to stderr when done: the messages quote paths and names from the
/// input, so its control characters are escaped (a line break in a file name must not start
/// a `::error::` line) but for the event's own final line break and colours.
struct LogLine(Vec<u8>);

impl std::io::Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let (body, end) = match text.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (&*text, ""),
        };
        let safe = diagnostics::terminal_safe(body).replace('\n', "\\n");
        let _ = std::io::stderr().write_all(format!("{safe}{end}").as_bytes());
    }
}

fn scan_command(scan: &ScanArgs, global: &GlobalArgs, units_only: bool) -> Result<u8> {
    let started = std::time::Instant::now();
    let stderr_color = global.color.enabled(std::io::stderr().is_terminal());
    let stdout_color = global.color.enabled(std::io::stdout().is_terminal());
    init_logging(global, stderr_color);
    let outputs = match outputs(&global.format) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
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
            return Ok(exit::OK);
        }
        roots
    } else {
        scan.paths.clone()
    };
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let cancel = std::sync::Arc::clone(&cancel);
        // Ctrl-C, and SIGTERM or SIGHUP (a cancelled CI job, `timeout`): stop every child
        // (renderers, the compiler, pan, each with its process group), start none, and return
        // through the normal path so that temporary and build directories are removed.
        let _ = ctrlc::set_handler(move || {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            crate::process::cancel_all("the run was interrupted");
        });
    }
    // --timeout: a watchdog stops every child at the deadline, renders included, as Ctrl-C
    // does, but the report is still written with what was not decided marked inconclusive.
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (finished, watchdog) = std::sync::mpsc::channel::<()>();
    if let Some(limit) = scan.timeout {
        let left = limit.saturating_sub(started.elapsed());
        let cancel = std::sync::Arc::clone(&cancel);
        let timed_out = std::sync::Arc::clone(&timed_out);
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = watchdog.recv_timeout(left) {
                timed_out.store(true, std::sync::atomic::Ordering::Relaxed);
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                crate::process::cancel_all(&format!("the scan's --timeout of {} s was reached", limit.as_secs()));
            }
        });
    }
    let request = analysis::Request {
        paths,
        config: scan.config.clone(),
        stdin_filename: scan.stdin_filename.clone(),
        render: !scan.no_render,
        jobs,
        allow_outside_repository: scan.allow_outside_repository,
    };
    let analysis = analysis::analyze(&request);
    if cancel.load(std::sync::atomic::Ordering::Relaxed) && !timed_out.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("error: interrupted");
        return Ok(exit::INTERRUPTED);
    }
    print_diagnostics(&analysis, global, stderr_color)?;
    if units_only {
        let report = report::Report::new(&analysis, None, &report::model::Context::default());
        let format = outputs
            .iter()
            .find(|o| o.file.is_none())
            .map_or(Format::Human, |o| o.format);
        let Some(text) = report::units(&report, format, stdout_color) else {
            eprintln!(
                "error: `kivi-lint units` prints `human` or `json`, not `{}`",
                format.name()
            );
            return Ok(exit::INPUT_ERROR);
        };
        std::io::stdout().write_all(text.as_bytes())?;
        return Ok(if analysis.diagnostics.has_errors() {
            exit::INPUT_ERROR
        } else {
            exit::OK
        });
    }
    let tools = match crate::engine::Tools::find() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let generator = crate::model::Generator::new(scan.templates_dir.as_deref())?;
    let cache = cache_dir(scan);
    let options = crate::scaling::Options {
        emit_models: scan.emit_models.clone(),
        result_cache: cache.as_ref().map(|d| d.join("results")),
        jobs,
        scale: scan.scale.unwrap_or(crate::scaling::Scale::Search),
        all: scan.all,
    };
    let mut engine_options = crate::engine::Options::default();
    if let Some(limit) = scan.run_time_limit {
        engine_options.time_limit = limit;
    }
    if let Some(mb) = scan.run_memory {
        engine_options.memory_mb = mb;
    }
    engine_options.random_runs = scan.simulate;
    let engine = match crate::engine::Engine::new(tools, engine_options.clone(), cache.as_deref()) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!("cache directory unusable ({e}); running without a cache");
            crate::engine::Engine::new(crate::engine::Tools::find()?, engine_options, None)?
        }
    };
    let mut progress = crate::progress::Reporter::new(global.quiet);
    let mut context = report::model::Context {
        shard: scan.shard,
        changed_since: scan.changed_since.clone(),
        all_findings: scan.all_findings,
        no_inline_suppressions: scan.no_inline_suppressions,
        ..Default::default()
    };
    let mut selected: Vec<usize> = (0..analysis.units.len()).collect();
    let base = match &scan.changed_since {
        None => None,
        Some(git_ref) => match crate::changes::analyze_base(&request, git_ref) {
            Ok(base) => Some(base),
            Err(e) => {
                eprintln!("error: --changed-since {git_ref}: {e}");
                return Ok(exit::INPUT_ERROR);
            }
        },
    };
    if let Some(base) = &base {
        let unchanged = crate::changes::unchanged_units(&analysis, base, &generator, &engine, &options);
        tracing::info!(
            "{} of {} units unchanged since {}",
            unchanged.len(),
            selected.len(),
            base.revision
        );
        selected.retain(|u| !unchanged.contains(u));
        context.not_verified.extend(
            unchanged
                .into_iter()
                .map(|u| (u, report::model::NotVerified::Unchanged)),
        );
    }
    if let Some(shard) = scan.shard {
        let mine = shard_units(&selected, shard);
        context.not_verified.extend(
            selected
                .iter()
                .filter(|u| !mine.contains(u))
                .map(|&u| (u, report::model::NotVerified::OtherShard)),
        );
        selected = mine;
    }
    let on_progress = |p: &crate::scaling::Progress| progress.update(p);
    let mut results = crate::scaling::verify(
        &analysis,
        &selected,
        &generator,
        &engine,
        &options,
        &cancel,
        &on_progress,
    );
    if let Some(base) = &base {
        crate::changes::mark_existing(
            &analysis,
            &mut results,
            base,
            &generator,
            &engine,
            &options,
            &cancel,
            &on_progress,
        );
    }
    if !scan.no_fixes {
        crate::fixes::suggest(
            &analysis,
            &mut results,
            scan.fixes_for.level(),
            &generator,
            &engine,
            &options,
            &cancel,
            &|what: &str| progress.phase(what),
        );
    }
    progress.finish();
    drop(finished);
    if timed_out.load(std::sync::atomic::Ordering::Relaxed) {
        let limit = scan.timeout.unwrap_or_default();
        eprintln!(
            "warning: --timeout of {} s reached: what was not decided is inconclusive",
            limit.as_secs()
        );
        crate::scaling::mark_timed_out(&mut results, limit);
    } else if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("error: interrupted");
        return Ok(exit::INTERRUPTED);
    }
    let report = report::Report::new(&analysis, Some(&results), &context);
    let code = exit_code(&report, scan.fail_on);
    let written = write_reports(&report, &outputs, code, stdout_color, global.verbose > 0)?;
    for r in &results {
        tracing::info!(
            "unit {}: generate {:.0?}, spin -a {:.0?}, compile {:.0?}, pan {:.0?}, replay {:.0?}",
            analysis.units[r.unit].id,
            r.generate,
            r.timings.spin,
            r.timings.compile,
            r.timings.pan,
            r.timings.replay
        );
    }
    tracing::info!(
        "discover {:.0?}, manifests {:.0?}, units {:.0?}",
        analysis.timings.discover,
        analysis.timings.manifests,
        analysis.timings.units
    );
    Ok(if written { code } else { exit::INPUT_ERROR })
}

/// The outputs asked for, checked: at most one on stdout, no file twice. On GitHub Actions
/// with no stdout format, `github`; elsewhere `human`.
fn outputs(asked: &[Output]) -> Result<Vec<Output>, String> {
    let to_stdout: Vec<&Output> = asked.iter().filter(|o| o.file.is_none()).collect();
    if to_stdout.len() > 1 {
        let names: Vec<&str> = to_stdout.iter().map(|o| o.format.name()).collect();
        return Err(format!(
            "only one format can go to stdout, got {}; give the others a file: --format {}=FILE",
            names.join(", "),
            names[1]
        ));
    }
    let mut files = std::collections::BTreeSet::new();
    for o in asked {
        if let Some(f) = &o.file
            && !files.insert(f.clone())
        {
            return Err(format!("{} is the file of two formats", f.display()));
        }
    }
    let mut out = asked.to_vec();
    if to_stdout.is_empty() {
        let on_github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
        out.push(Output {
            format: if on_github { Format::Github } else { Format::Human },
            file: None,
        });
    }
    Ok(out)
}

/// Where the working directory is in its git repository: the path from the root to it, and
/// the root as a `file://` URI. Outside a repository, the working directory is the root.
fn repository_position() -> (std::path::PathBuf, Option<std::path::PathBuf>, Option<String>) {
    let Ok(cwd) = std::env::current_dir() else {
        return (std::path::PathBuf::new(), None, None);
    };
    let root = cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(&cwd);
    let prefix = cwd.strip_prefix(root).map(|p| p.to_path_buf()).unwrap_or_default();
    let uri = format!(
        "file:///{}/",
        report::repo_uri(std::path::Path::new(""), &root.display().to_string())
    );
    (prefix, Some(root.to_path_buf()), Some(uri))
}

/// Write every report; `false` when a file could not be written.
fn write_reports(
    report: &report::Report,
    outputs: &[Output],
    code: u8,
    stdout_color: bool,
    full_traces: bool,
) -> Result<bool> {
    let (repo_prefix, repo_root, working_directory) = repository_position();
    let emit = report::Emit {
        report,
        color: stdout_color,
        repo_prefix,
        repo_root,
        working_directory,
        exit_code: code,
        full_traces,
    };
    let mut ok = true;
    for o in outputs {
        let text = report::results(&emit, o.format);
        match &o.file {
            None => std::io::stdout().write_all(text.as_bytes())?,
            Some(file) => {
                let written = file
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| crate::source::write_replacing(file, text.as_bytes()));
                match written {
                    Ok(()) => eprintln!("wrote {} to {}", o.format.name(), file.display()),
                    Err(e) => {
                        // The usual cause in a container: the image's user does not own the
                        // bind-mounted workspace.
                        let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
                            "\n  = help: in a container, run kivi-lint as the owner of the mounted directory: `docker run --user \"$(id -u):$(id -g)\" …`"
                        } else {
                            ""
                        };
                        eprintln!(
                            "error: cannot write the {} report to {}: {e}{hint}",
                            o.format.name(),
                            file.display()
                        );
                        ok = false;
                    }
                }
            }
        }
    }
    // The job summary goes with the annotations: one Markdown report per step.
    if outputs.iter().any(|o| o.format == Format::Github)
        && let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty())
    {
        let text = report::results(&emit, Format::Markdown);
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = appended {
            eprintln!(
                "error: cannot append the job summary to {}: {e}",
                std::path::Path::new(&summary).display()
            );
            ok = false;
        }
    }
    Ok(ok)
}

/// `kivi-lint merge`: read the shards' JSON reports, join them, print the report.
fn merge_command(files: &[PathBuf], fail_on: FailOn, global: &GlobalArgs) -> Result<u8> {
    let stderr_color = global.color.enabled(std::io::stderr().is_terminal());
    let stdout_color = global.color.enabled(std::io::stdout().is_terminal());
    init_logging(global, stderr_color);
    let mut reports = Vec::new();
    let mut failed = false;
    for file in files {
        let shown = crate::discover::display_path(file);
        let text = match crate::discover::read_source(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "{}:1:1: error: {}",
                    diagnostics::printable(&shown.display().to_string()),
                    diagnostics::printable(&e.message)
                );
                failed = true;
                continue;
            }
        };
        match report::merge::parse(&text) {
            Ok(r) => reports.push(r),
            Err((message, line, column)) => {
                eprintln!(
                    "{}:{line}:{column}: error: {}",
                    diagnostics::printable(&shown.display().to_string()),
                    diagnostics::printable(&message)
                );
                failed = true;
            }
        }
    }
    if failed {
        return Ok(exit::INPUT_ERROR);
    }
    let merged = match report::merge::merge(reports) {
        Ok(m) => m,
        Err(report::merge::MergeError::Invalid { file, message }) => {
            eprintln!(
                "{}:1:1: error: {message}",
                crate::discover::display_path(&files[file]).display()
            );
            return Ok(exit::INPUT_ERROR);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    // The shards scanned the same files, so each holds every diagnostic: print them once.
    if !global.quiet {
        for d in &merged.diagnostics {
            if d.severity == Severity::Info && global.verbose == 0 {
                continue;
            }
            let severity = d.severity.label();
            eprintln!(
                "{}:{}:{}: {severity}: {}",
                diagnostics::printable(&d.file),
                d.line,
                d.column,
                diagnostics::printable(&d.message)
            );
        }
    }
    let code = exit_code(&merged, fail_on);
    let outputs = match outputs(&global.format) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let written = write_reports(&merged, &outputs, code, stdout_color, global.verbose > 0)?;
    Ok(if written { code } else { exit::INPUT_ERROR })
}

/// 2 for input or engine errors, else 1 for findings at or above `fail_on`, else 3 when
/// something was inconclusive, else 0. Violations a PR-mode report leaves out do not count.
fn exit_code(report: &report::Report, fail_on: FailOn) -> u8 {
    use report::model::VerdictKind;
    let outcomes = || report.outcomes().map(|(_, c)| c);
    if report.summary.errors > 0 || outcomes().any(|c| c.engine_error) {
        exit::INPUT_ERROR
    } else if outcomes()
        .any(|c| c.verdict == VerdictKind::Violated && c.suppression.is_none() && fail_on.fails(c.level))
    {
        exit::FINDINGS
    } else if outcomes().any(|c| c.verdict == VerdictKind::Inconclusive) {
        exit::INCONCLUSIVE
    } else {
        exit::OK
    }
}

fn print_diagnostics(a: &Analysis, global: &GlobalArgs, color: bool) -> Result<()> {
    let mut err = std::io::stderr().lock();
    for d in a.diagnostics.iter() {
        if global.quiet && d.severity != Severity::Error {
            continue;
        }
        if d.severity == Severity::Info && global.verbose == 0 {
            continue;
        }
        err.write_all(diagnostics::render(d, &a.sources, color).as_bytes())?;
        err.write_all(b"\n")?;
    }
    if global.verbose > 0 {
        for s in &a.skipped {
            writeln!(
                err,
                "{}: note: skipped: {}",
                diagnostics::location_string(&a.sources, s.span),
                s.reason
            )?;
        }
        if !a.skipped.is_empty() {
            writeln!(err, "{} documents skipped (not Kubernetes objects)", a.skipped.len())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn shards_partition_the_units_evenly() {
        let units: Vec<usize> = (0..11).collect();
        for count in 1..=12 {
            let mut seen = Vec::new();
            for index in 1..=count {
                let mine = shard_units(&units, crate::report::model::Shard { index, count });
                assert!(mine.len() <= units.len().div_ceil(count));
                assert!(mine.len() >= units.len() / count);
                seen.extend(mine);
            }
            seen.sort();
            assert_eq!(seen, units, "{count} shards");
        }
        assert!(parse_shard("0/2").is_err());
        assert!(parse_shard("3/2").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
        assert_eq!(parse_shard("2/3").unwrap().index, 2);
    }

    #[test]
    fn shared_options_may_precede_the_subcommand() {
        let args = |s: &str| s.split(' ').map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(subcommand_first(args("k -v units d")), args("k units -v d"));
        assert_eq!(
            subcommand_first(args("k -vv --color never -f json units d")),
            args("k units -vv --color never -f json d")
        );
        assert_eq!(subcommand_first(args("k -v d")), args("k -v d"));
        assert_eq!(subcommand_first(args("k units -v d")), args("k units -v d"));
        assert_eq!(subcommand_first(args("k --no-cache units")), args("k --no-cache units"));
    }

    #[test]
    fn exit_codes_are_distinct() {
        let codes = [exit::OK, exit::FINDINGS, exit::INPUT_ERROR, exit::INCONCLUSIVE];
        let mut sorted = codes.to_vec();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len());
    }
}

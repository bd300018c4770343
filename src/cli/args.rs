//! The command line's arguments: clap's types, their parsers, and what they resolve to
//! (the cache directory, the fix and failure levels).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::report::Output;

#[derive(Args, Debug, Clone)]
pub(crate) struct ScanArgs {
    /// Files or directories to scan; `-` reads manifests from stdin.
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,

    /// Config file (default: .kivi-lint.yaml found walking up from the first path).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Let the config name files outside its repository (`cluster.fromNodes`,
    /// `scheduler.config`, `descheduler.policy`, an `apply` event's directory).
    #[arg(long)]
    pub(crate) allow_outside_repository: bool,

    /// A scan that finds no Kubernetes object passes (otherwise it is an error, exit 2: a
    /// wrong path or an empty mount would pass as "nothing wrong").
    #[arg(long)]
    pub(crate) allow_empty: bool,

    /// A source kivi-lint cannot render (a remote base or chart with the network off, a
    /// `${VAR}` template, a chart that needs values) is an input error, exit 2, instead of a
    /// note in the coverage line
    #[arg(long)]
    pub(crate) strict: bool,

    /// Let renders fetch remote Helm charts and chart dependencies, remote kustomize bases and
    /// files, and deployers' paths in other Git repositories (into the cache), from public
    /// https hosts only; `render.network` in the config does the same
    #[arg(long)]
    pub(crate) allow_network: bool,

    /// With --allow-network, a host that may be fetched from even on loopback or a private
    /// range, and over http (an internal chart repository); repeatable
    #[arg(long, value_name = "HOST")]
    pub(crate) allow_host: Vec<String>,

    /// Never fetch, whatever the config's `render.network` says (CI on untrusted pull
    /// requests: the config is theirs)
    #[arg(long, conflicts_with = "allow_network")]
    pub(crate) no_network: bool,

    /// Name shown for manifests read from stdin.
    #[arg(long, value_name = "NAME")]
    pub(crate) stdin_filename: Option<String>,

    /// Read every YAML file as it is, without rendering kustomize directories or Helm charts.
    #[arg(long)]
    pub(crate) no_render: bool,

    /// Renders and model-checker runs at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub(crate) jobs: Option<usize>,

    /// Verify one topology only: `current` (each pool's `count`) or N nodes in every pool.
    /// Default: the incremental search from the smallest topology up.
    #[arg(long, value_name = "N|current", value_parser = parse_scale)]
    pub(crate) scale: Option<crate::search::Scale>,

    /// Report every distinct violation of a check in a unit, not only the first: one per
    /// workload (and per field it points at), each with its counterexample and its own fix,
    /// up to 8 per check and topology; larger topologies are searched after a violation.
    #[arg(long)]
    pub(crate) all: bool,

    /// Where compiled models are kept between runs (default: $KIVI_LINT_CACHE_DIR, else the
    /// user cache directory, ~/.cache/kivi-lint).
    #[arg(long, value_name = "DIR")]
    pub(crate) cache_dir: Option<PathBuf>,

    /// Neither read nor write the cache.
    #[arg(long)]
    pub(crate) no_cache: bool,

    /// PR mode: verify only the units that changed since this git ref, and report only the
    /// violations it does not have.
    #[arg(long, value_name = "GIT-REF")]
    pub(crate) changed_since: Option<String>,

    /// With --changed-since, report the violations the base revision has too.
    #[arg(long, requires = "changed_since")]
    pub(crate) all_findings: bool,

    /// Verify only shard I of N (1-based): a deterministic slice of the units, for parallel CI
    /// jobs; join the JSON reports with `kivi-lint merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub(crate) shard: Option<crate::report::document::Shard>,

    /// Write each unit's generated PROMELA model to DIR/<unit id>.pml (one per search of its
    /// fault model: DIR/<unit id>.<search>.pml).
    #[arg(long, value_name = "DIR")]
    pub(crate) emit_models: Option<PathBuf>,

    /// Exit 1 when a finding at or above this level exists (`never`: findings do not fail).
    #[arg(long, value_enum, default_value_t = FailOn::Error, value_name = "LEVEL")]
    pub(crate) fail_on: FailOn,

    /// Exit 3 for a partial verdict too: a check that held on every topology up to a size,
    /// then hit a limit (by default that passes, with a note).
    #[arg(long)]
    pub(crate) require_complete: bool,

    /// Ignore `ignore-check.kivi-lint.io/<check>` annotations (audits); config suppressions
    /// still apply.
    #[arg(long)]
    pub(crate) no_inline_suppressions: bool,

    /// pre-commit mode: the paths are changed files; check each render unit they belong to
    /// (chart root, kustomization root, else directory) once.
    #[arg(long)]
    pub(crate) pre_commit: bool,

    /// Do not look for fixes (each candidate fix of a violation costs a model-checker run).
    #[arg(long)]
    pub(crate) no_fixes: bool,

    /// Look for fixes of findings at or above this level (default: errors only).
    #[arg(long, value_enum, default_value_t = FixesFor::Error, value_name = "LEVEL")]
    pub(crate) fixes_for: FixesFor,

    /// Stop the whole run after this long (`90s`, `10m`, or seconds): what is not decided by
    /// then is inconclusive, with this as the reason, and the reports are still written.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<std::time::Duration>,

    /// Time limit of each model-checker run (default 60s); a run that reaches it is
    /// inconclusive.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) run_time_limit: Option<std::time::Duration>,

    /// Memory limit of each model-checker run, in MiB (default 1024); a run that reaches it is
    /// inconclusive.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u32).range(16..))]
    pub(crate) run_memory: Option<u32>,

    /// The running cluster as the model's start: a file of `kubectl get
    /// nodes,pods,deployments,replicasets,statefulsets,daemonsets,hpa,pdb -A -o yaml` (what
    /// `kivi-lint snapshot` writes), or `-` for stdin. Its nodes replace the config's cluster,
    /// its running pods start on their nodes.
    #[arg(long, value_name = "FILE")]
    pub(crate) cluster_state: Option<PathBuf>,

    /// After a model-checker run that cannot finish (memory, time or depth limit), N seeded
    /// random runs (randomised bitstate searches of a fixed size): a violation one finds is
    /// reported with its trace; none leaves the check inconclusive, never verified.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RANDOM_RUNS, value_parser = clap::value_parser!(u32).range(0..=64))]
    pub(crate) simulate: u32,
}

/// `--simulate`'s default: none. On the ecosystem corpus three runs found nothing the
/// exhaustive searches had missed and cost bank-of-anthos 43 s more (147 s → 190 s).
const DEFAULT_RANDOM_RUNS: u32 = 0;

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

fn parse_scale(s: &str) -> Result<crate::search::Scale, String> {
    use crate::search::Scale;
    match s {
        "current" => Ok(Scale::Current),
        n => match n.parse::<u32>() {
            Ok(n) if (1..=30).contains(&n) => Ok(Scale::Nodes(n)),
            _ => Err("expected `current` or a node count per pool from 1 to 30".into()),
        },
    }
}

fn parse_shard(s: &str) -> Result<crate::report::document::Shard, String> {
    let parsed = s
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
    match parsed {
        Some((index, count)) if count >= 1 && (1..=count).contains(&index) => {
            Ok(crate::report::document::Shard { index, count })
        }
        _ => Err("expected I/N with 1 ≤ I ≤ N, e.g. 2/4".into()),
    }
}

/// The cache directory: the flag, else KIVI_LINT_CACHE_DIR, else the user cache directory.
/// (The engine makes it absolute: pan runs in directories of its own.)
pub(crate) fn cache_dir(scan: &ScanArgs) -> Option<PathBuf> {
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
pub(crate) enum FixesFor {
    Error,
    Warning,
    Note,
}

impl FixesFor {
    pub(crate) fn level(self) -> crate::checks::Level {
        match self {
            FixesFor::Error => crate::checks::Level::Error,
            FixesFor::Warning => crate::checks::Level::Warning,
            FixesFor::Note => crate::checks::Level::Note,
        }
    }
}

/// The lowest finding level that makes the run fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum FailOn {
    Error,
    Warning,
    Note,
    Never,
}

impl FailOn {
    pub(crate) fn fails(self, level: crate::checks::Level) -> bool {
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
pub(crate) struct GlobalArgs {
    /// Report format, repeatable: human (default), json, sarif, junit, github, codequality,
    /// markdown, html. `FORMAT=FILE` writes to FILE; at most one format goes to stdout. On
    /// GitHub Actions (GITHUB_ACTIONS=true) with no stdout format, `github` is added.
    #[arg(short = 'f', long = "format", value_name = "FORMAT[=FILE]")]
    pub(crate) format: Vec<Output>,

    /// Print only the report and errors.
    #[arg(short, long, conflicts_with = "verbose")]
    pub(crate) quiet: bool,

    /// More detail on stderr (-v: config and skipped documents, -vv: debug logs).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// When to use colors (NO_COLOR is honoured with `auto`).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    pub(crate) fn enabled(self, terminal: bool) -> bool {
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
pub(crate) fn subcommand_first(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
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
    let with_shared = ["units", "merge", "simulate"];
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn shards_are_parsed_and_checked() {
        assert!(parse_shard("0/2").is_err());
        assert!(parse_shard("3/2").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
        assert_eq!(parse_shard("2/3").unwrap().index, 2);
    }
}

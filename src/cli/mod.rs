//! The command line: dispatch of the subcommands, and the scan's flags turned into a
//! [`crate::run::Scan`]. Arguments are in `args`, what is written in `output`.

mod args;
mod merge;
mod output;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::config::DEFAULT_CONFIG;
use crate::report::{self, Format, RulesFormat};
use crate::run::{Scan, Session, Stopped};
use args::{FailOn, GlobalArgs, ScanArgs};

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
        /// Exit 3 for a partial verdict too (a check that held up to a size, then hit a limit).
        #[arg(long)]
        require_complete: bool,
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

/// Run the command line; returns the process exit code.
pub fn run() -> Result<u8> {
    let cli = Cli::parse_from(args::subcommand_first(std::env::args_os().collect()));
    match cli.command {
        Some(Command::Config { default }) => {
            if !default {
                anyhow::bail!("use `kivi-lint config --default` to print the default configuration");
            }
            std::io::stdout().write_all(DEFAULT_CONFIG.as_bytes())?;
            Ok(exit::OK)
        }
        Some(Command::Units { scan, global }) => scan_command(&scan, &global, true),
        Some(Command::Merge {
            files,
            fail_on,
            require_complete,
            global,
        }) => merge::merge_command(&files, fail_on, require_complete, &global),
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

fn scan_command(scan: &ScanArgs, global: &GlobalArgs, units_only: bool) -> Result<u8> {
    let started = std::time::Instant::now();
    let stderr_color = global.color.enabled(std::io::stderr().is_terminal());
    let stdout_color = global.color.enabled(std::io::stdout().is_terminal());
    output::init_logging(global, stderr_color);
    let outputs = match output::outputs(&global.format) {
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
    let plan = Scan {
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
        },
        engine,
        cache_dir: args::cache_dir(scan),
        emit_models: scan.emit_models.clone(),
        scale: scan.scale.unwrap_or(crate::search::Scale::Search),
        all: scan.all,
        changed_since: scan.changed_since.clone(),
        all_findings: scan.all_findings,
        no_inline_suppressions: scan.no_inline_suppressions,
        shard: scan.shard,
        fixes_for: (!scan.no_fixes).then(|| scan.fixes_for.level()),
    };
    let session = Session::start(started, scan.timeout);
    let stopped = |why: Stopped| -> u8 {
        match why {
            Stopped::Interrupted => {
                eprintln!("error: interrupted");
                exit::INTERRUPTED
            }
            Stopped::Error(e) => {
                eprintln!("error: {e}");
                exit::INPUT_ERROR
            }
        }
    };
    let analysis = match session.analyze(&plan.request) {
        Ok(a) => a,
        Err(why) => return Ok(stopped(why)),
    };
    output::print_diagnostics(&analysis, global, stderr_color)?;
    if units_only {
        let report = report::Report::new(&analysis, None, &report::document::Context::default());
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
    // A `--config` that cannot be read leaves the default cluster in its place: verifying that
    // would answer a question nobody asked. Its located error is the answer (exit 2), in
    // every report asked for.
    if scan.config.as_ref().is_some_and(|p| !p.is_file()) {
        let report = report::Report::new(&analysis, Some(&[]), &report::document::Context::default());
        let code = output::exit_code(&report, scan.fail_on, scan.require_complete);
        let written = output::write_reports(&report, &outputs, code, stdout_color, global.verbose > 0)?;
        return Ok(if written { code } else { exit::INPUT_ERROR });
    }
    let mut progress = crate::progress::Reporter::new(global.quiet);
    let verified = session.verify(&analysis, &plan, &progress);
    progress.finish();
    drop(session);
    let verified = match verified {
        Ok(v) => v,
        Err(why) => return Ok(stopped(why)),
    };
    if let Some(why) = &verified.unverifiable {
        eprintln!("error: {why}: nothing was verified (every check is inconclusive)");
    }
    if let Some(limit) = verified.timed_out {
        eprintln!(
            "warning: --timeout of {} s reached: what was not decided is inconclusive",
            limit.as_secs()
        );
    }
    let results = verified.results;
    let report = report::Report::new(&analysis, Some(&results), &verified.context);
    let code = output::exit_code(&report, scan.fail_on, scan.require_complete);
    let written = output::write_reports(&report, &outputs, code, stdout_color, global.verbose > 0)?;
    for r in &results {
        tracing::info!(
            "unit {}: generate {:.0?}, spin -a {:.0?}, compile {:.0?}, pan {:.0?}, replay {:.0?}",
            analysis.units[r.unit].id,
            r.effort.generate,
            r.effort.timings.spin,
            r.effort.timings.compile,
            r.effort.timings.pan,
            r.effort.timings.replay
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}

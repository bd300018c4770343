//! The command line: dispatch of the subcommands, and a scan run from its resolved
//! [`settings::Settings`]. Arguments are in `args`, what is written in `output`.

mod args;
mod merge;
mod output;
mod settings;
mod simulate;
mod snapshot;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::config::DEFAULT_CONFIG;
use crate::report::{self, RulesFormat};
use crate::run::{Session, Stopped};
use args::{FailOn, GlobalArgs, ScanArgs};
use settings::Settings;

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
    /// One seeded run of each unit's model as a timeline: what the controllers do on the
    /// cluster the config describes, with every configured event, until the cluster settles
    /// after the environment acted `--steps` times (or a check fails on the way: exit 1).
    Simulate {
        /// The run's seed: the same seed, the same run.
        #[arg(long, default_value_t = 1, value_name = "N")]
        seed: u32,
        /// The environment's steps (its events) before the run may end.
        #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=200))]
        steps: u32,
        /// Only the unit with this id or name (`kivi-lint units` lists them).
        #[arg(long, value_name = "UNIT")]
        unit: Option<String>,
        /// The environment's steps, in order: event types of the config separated by `;`
        /// or `,` (`"node-failure; load-change"`); the model chooses which node, which level.
        /// Only these events act, each step once; `--steps` is their number.
        #[arg(long, value_name = "EVENTS")]
        scenario: Option<String>,
        #[command(flatten)]
        scan: Box<ScanArgs>,
        #[command(flatten)]
        global: GlobalArgs,
    },
    /// Save the running cluster for `--cluster-state` (`kubectl get nodes,pods,deployments,
    /// replicasets,statefulsets,daemonsets,hpa,pdb -A -o json`), with Secrets, ConfigMaps,
    /// environment values and last-applied configurations dropped.
    Snapshot {
        /// Write it here (default: stdout).
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// The kubeconfig context to read (default: the current one).
        #[arg(long, value_name = "NAME")]
        context: Option<String>,
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
        Some(Command::Simulate {
            seed,
            steps,
            unit,
            scenario,
            scan,
            global,
        }) => simulate::simulate_command(
            &scan,
            &global,
            &simulate::Request {
                seed,
                steps,
                unit: unit.as_deref(),
                scenario: scenario
                    .iter()
                    .flat_map(|s| s.split([';', ',']))
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            },
        ),
        Some(Command::Merge {
            files,
            fail_on,
            require_complete,
            global,
        }) => merge::merge_command(&files, fail_on, require_complete, &global),
        Some(Command::Snapshot { output, context }) => {
            snapshot::snapshot_command(&snapshot::Request { output, context })
        }
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

/// Logging on and the command line resolved; `Err` is the exit code of a usage error.
fn resolve(scan: &ScanArgs, global: &GlobalArgs) -> Result<Settings, u8> {
    output::init_logging(global, global.color.enabled(std::io::stderr().is_terminal()));
    Settings::resolve(scan, global).map_err(|e| {
        eprintln!("error: {e}");
        exit::INPUT_ERROR
    })
}

/// The session and the analysis of what `plan` names, its diagnostics printed; `Err` is the
/// exit code of a scan that stopped.
fn analyze(
    settings: &Settings,
    plan: &crate::run::Scan,
    started: std::time::Instant,
) -> Result<Result<(Session, crate::analysis::Analysis), u8>> {
    let session = Session::start(started, settings.timeout);
    let analysis = match session.analyze(&plan.request) {
        Ok(a) => a,
        Err(why) => return Ok(Err(stopped(why))),
    };
    output::print_diagnostics(&analysis, settings.quiet, settings.verbose, settings.stderr_color)?;
    Ok(Ok((session, analysis)))
}

fn scan_command(scan: &ScanArgs, global: &GlobalArgs, units_only: bool) -> Result<u8> {
    let started = std::time::Instant::now();
    let settings = match resolve(scan, global) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let Some(plan) = &settings.plan else {
        // pre-commit: no changed file belongs to a render unit.
        return Ok(exit::OK);
    };
    let (session, analysis) = match analyze(&settings, plan, started)? {
        Ok(analyzed) => analyzed,
        Err(code) => return Ok(code),
    };
    if units_only {
        return print_units(&analysis, &settings);
    }
    // A `--config` that cannot be read leaves the default cluster in its place: verifying that
    // would answer a question nobody asked. Its located error is the answer (exit 2), in
    // every report asked for.
    if settings.unreadable_config() {
        let report = report::Report::new(&analysis, Some(&[]), &report::document::Context::default());
        return finish(&report, &settings);
    }
    let mut progress = crate::progress::Reporter::new(settings.quiet);
    let verified = session.verify(&analysis, plan, &progress);
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
    let report = report::Report::new(&analysis, Some(&verified.results), &verified.context);
    let code = finish(&report, &settings);
    log_timings(&analysis, &verified.results);
    code
}

/// The exit code of a scan stopped before its reports.
fn stopped(why: Stopped) -> u8 {
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
}

/// `kivi-lint units`: the units in `human` or `json` on stdout.
fn print_units(analysis: &crate::analysis::Analysis, settings: &Settings) -> Result<u8> {
    let report = report::Report::new(analysis, None, &report::document::Context::default());
    let format = settings.stdout_format();
    let Some(text) = report::units(&report, format, settings.stdout_color) else {
        eprintln!(
            "error: `kivi-lint units` prints `human` or `json`, not `{}`",
            format.name()
        );
        return Ok(exit::INPUT_ERROR);
    };
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(if analysis.diagnostics.has_errors() {
        exit::INPUT_ERROR
    } else {
        exit::OK
    })
}

/// Write every report asked for; the exit code the report states (2 if one could not be
/// written).
fn finish(report: &report::Report, settings: &Settings) -> Result<u8> {
    let code = output::exit_code(report, settings.fail_on, settings.require_complete);
    let written = output::write_reports(
        report,
        &settings.outputs,
        code,
        settings.stdout_color,
        settings.verbose > 0,
    )?;
    Ok(if written { code } else { exit::INPUT_ERROR })
}

/// `-v`: where each unit's time went, and the analysis'.
fn log_timings(analysis: &crate::analysis::Analysis, results: &[crate::findings::UnitResult]) {
    for r in results {
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

//! What the command line writes: logs and diagnostics on stderr, reports on stdout and in
//! files, and the exit code a report makes.

use std::io::Write;

use anyhow::Result;

use super::args::{FailOn, GlobalArgs};
use crate::analysis::Analysis;
use crate::diagnostics::{self, Severity};
use crate::report::{self, Format, Output, exit};

pub(crate) fn init_logging(global: &GlobalArgs, color: bool) {
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

/// The outputs asked for, checked: at most one on stdout, no file twice. With no stdout
/// format, `github` on GitHub Actions, elsewhere `human`, unless that format has a file.
pub(crate) fn outputs(asked: &[Output]) -> Result<Vec<Output>, String> {
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
    // Reports to files only: stdout gets the annotations on GitHub Actions, elsewhere the
    // human report for the log, unless that was asked for with a file of its own.
    let on_github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let default = if on_github { Format::Github } else { Format::Human };
    if to_stdout.is_empty() && !asked.iter().any(|o| o.format == default) {
        out.push(Output {
            format: default,
            file: None,
        });
    }
    Ok(out)
}

/// Where the working directory is in its git repository: the path from the root to it, and
/// the root as a `file://` URI. Outside a repository, the working directory is the root.
pub(crate) fn repository_position() -> (std::path::PathBuf, Option<std::path::PathBuf>, Option<String>) {
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
pub(crate) fn write_reports(
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

/// 2 for input or engine errors, else 1 for findings at or above `fail_on`, else 3 when
/// something was inconclusive, else 0. Violations a PR-mode report leaves out do not count.
pub(crate) fn exit_code(report: &report::Report, fail_on: FailOn, require_complete: bool) -> u8 {
    use report::document::VerdictKind;
    let outcomes = || report.outcomes().map(|(_, c)| c);
    if report.summary.errors > 0 || outcomes().any(|c| c.engine_error) {
        exit::INPUT_ERROR
    } else if outcomes()
        .any(|c| c.verdict == VerdictKind::Violated && c.suppression.is_none() && fail_on.fails(c.level))
    {
        exit::FINDINGS
    } else if outcomes().any(|c| c.verdict == VerdictKind::Inconclusive && (!c.partial || require_complete)) {
        exit::INCONCLUSIVE
    } else {
        exit::OK
    }
}

pub(crate) fn print_diagnostics(a: &Analysis, quiet: bool, verbose: u8, color: bool) -> Result<()> {
    let mut err = std::io::stderr().lock();
    for d in a.diagnostics.iter() {
        if quiet && d.severity != Severity::Error {
            continue;
        }
        if d.severity == Severity::Info && verbose == 0 {
            continue;
        }
        err.write_all(diagnostics::render(d, &a.sources, color).as_bytes())?;
        err.write_all(b"\n")?;
    }
    if verbose > 0 {
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

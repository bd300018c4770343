//! `kivi-lint merge`: the shards' JSON reports joined into one.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;

use super::args::{FailOn, GlobalArgs};
use super::output;
use crate::diagnostics::{self, Severity};
use crate::report::{self, exit};

/// `kivi-lint merge`: read the shards' JSON reports, join them, print the report.
pub(super) fn merge_command(
    files: &[PathBuf],
    fail_on: FailOn,
    require_complete: bool,
    global: &GlobalArgs,
) -> Result<u8> {
    let stderr_color = global.color.enabled(std::io::stderr().is_terminal());
    let stdout_color = global.color.enabled(std::io::stdout().is_terminal());
    output::init_logging(global, stderr_color);
    let mut reports = Vec::new();
    let mut failed = false;
    for file in files {
        let shown = crate::source::display_path(file);
        let text = match crate::source::read_source(file) {
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
                crate::source::display_path(&files[file]).display()
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
    let code = output::exit_code(&merged, fail_on, require_complete);
    let outputs = match output::outputs(&global.format) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let written = output::write_reports(&merged, &outputs, code, stdout_color, global.verbose > 0)?;
    Ok(if written { code } else { exit::INPUT_ERROR })
}

//! Helm render units: a directory with `Chart.yaml`, rendered with `helm template` when `helm`
//! is on PATH. Rendered documents map back to their templates through the `# Source:` comments.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::config::HelmOptions;

const RENDER_TIMEOUT: Duration = Duration::from_secs(120);

/// Values files for a chart: each configured path is looked up beside the chart first, then
/// beside the config file, and only inside the repository unless the user allowed otherwise.
/// Missing ones are returned separately so they can be reported.
pub fn values_files(chart: &Path, options: &HelmOptions, base_dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for v in &options.values {
        let candidates = [chart.join(v), base_dir.join(v)];
        let allowed = |c: &PathBuf| {
            options
                .confine
                .as_deref()
                .is_none_or(|root| crate::config::inside(root, Path::new(""), c))
        };
        match candidates.iter().find(|c| allowed(c) && c.is_file()) {
            Some(c) => found.push(c.clone()),
            None => missing.push(v.clone()),
        }
    }
    (found, missing)
}

/// `helm template <release> <chart> --namespace <ns> -f <values>...`, without network access
/// (`helm template` does not contact a cluster; dependencies must be vendored in `charts/`).
pub fn render(helm: &Path, chart: &Path, options: &HelmOptions, values: &[PathBuf]) -> Result<String, String> {
    run(template_command(helm, chart, options, values))
}

/// The command line of [`render`]: every option as `--name=value`, the positionals after `--`,
/// so no value from the repository can be read by helm as an option of its own.
fn template_command(helm: &Path, chart: &Path, options: &HelmOptions, values: &[PathBuf]) -> Command {
    let mut command = Command::new(helm);
    command
        .arg("template")
        .arg(format!("--namespace={}", options.namespace))
        .arg("--skip-tests");
    for v in values {
        let mut arg = std::ffi::OsString::from("--values=");
        arg.push(v);
        command.arg(arg);
    }
    command.arg("--").arg(&options.release_name).arg(chart);
    command
}

fn run(command: Command) -> Result<String, String> {
    let finished = crate::process::run(crate::process::offline(command), RENDER_TIMEOUT)?;
    if !finished.success {
        if let Some(why) = crate::process::out_of_memory(&finished.stderr) {
            return Err(format!("helm template failed: {why}"));
        }
        let text: String = finished.stderr.trim().lines().take(5).collect::<Vec<_>>().join(" ");
        return Err(format!("helm template failed: {text}"));
    }
    Ok(finished.stdout)
}

/// `(line, template path)` of every `# Source: <chart>/templates/x.yaml` comment, in order.
pub fn source_comments(rendered: &str) -> Vec<(u32, String)> {
    rendered
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            l.strip_prefix("# Source: ")
                .map(|p| (i as u32 + 1, p.trim().to_string()))
        })
        .collect()
}

/// The template file of a `# Source:` path: the first component is the chart's name.
pub fn template_path(chart: &Path, source: &str) -> Option<PathBuf> {
    let (_, rest) = source.split_once('/')?;
    let path = chart.join(rest);
    // Never leave the chart directory, whatever the comment says.
    (!rest.split('/').any(|c| c == "..")).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_comments_and_template_paths() {
        let out = "---\n# Source: podinfo/templates/service.yaml\napiVersion: v1\n---\n# Source: podinfo/charts/redis/templates/x.yaml\nkind: A\n";
        let c = source_comments(out);
        assert_eq!(
            c,
            vec![
                (2, "podinfo/templates/service.yaml".into()),
                (5, "podinfo/charts/redis/templates/x.yaml".into())
            ]
        );
        assert_eq!(
            template_path(Path::new("/c"), &c[1].1).unwrap(),
            PathBuf::from("/c/charts/redis/templates/x.yaml")
        );
        assert!(template_path(Path::new("/c"), "p/../../etc/passwd").is_none());
    }
}

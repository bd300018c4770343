//! Helm render units: a directory with `Chart.yaml`, rendered with `helm template` when `helm`
//! is on PATH. Rendered documents map back to their templates through the `# Source:` comments.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::config::HelmOptions;
use crate::source::{FileId, SourceMap, Span};
use crate::yaml::{self, Node};

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

/// A dependency of a chart, as its `Chart.yaml` (or a v1 chart's `requirements.yaml`) lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Dependency {
    pub name: String,
    /// The name its templates render under (`alias`, else `name`).
    pub key: String,
    pub version: String,
    pub repository: String,
    /// The list entry, for notes.
    pub span: Span,
}

/// A dependency staged into a chart's `charts/`: a chart directory of the repository
/// (`file://`) or a fetched archive.
#[derive(Clone, Debug, PartialEq)]
pub struct Subchart {
    /// The name its templates render under.
    pub key: String,
    pub source: PathBuf,
    /// Its entry in `dependencies`: where the objects of an archive are located.
    pub at: Span,
}

impl Subchart {
    fn archive(&self) -> bool {
        self.source.extension().is_some_and(|e| e == "tgz")
    }
}

/// Where a dependency can be had.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// In the chart's `charts/` already.
    Vendored,
    /// A `file://` chart in the repository.
    Local(PathBuf),
    /// A `file://` path that is no chart, or not in the repository: helm would fail too.
    Broken(String),
    /// A chart repository or registry: the network.
    Remote,
}

/// The dependencies of `chart`, read from its `Chart.yaml` (already in `sources` as `file`)
/// and a v1 chart's `requirements.yaml`.
pub fn dependencies(chart: &Path, file: FileId, sources: &mut SourceMap) -> Vec<Dependency> {
    let mut lists: Vec<(FileId, String)> = vec![(file, sources.file(file).text.to_string())];
    let requirements = chart.join("requirements.yaml");
    if requirements.is_file()
        && let Ok(text) = crate::source::read_text(&requirements)
    {
        let shown = crate::source::display_path(&requirements);
        let id = sources
            .find(&shown)
            .unwrap_or_else(|| sources.add(shown, text.as_str()));
        lists.push((id, text));
    }
    let mut out = Vec::new();
    for (id, text) in lists {
        let stream = yaml::parse(&text, id, &yaml::Limits::default());
        let Some(doc) = stream.documents.first() else { continue };
        for entry in doc.root.get("dependencies").and_then(Node::as_seq).unwrap_or_default() {
            let field = |k: &str| entry.get(k).and_then(Node::scalar_text).unwrap_or_default().to_string();
            let name = field("name");
            if name.is_empty() {
                continue;
            }
            let alias = field("alias");
            out.push(Dependency {
                key: if alias.is_empty() { name.clone() } else { alias },
                name,
                version: field("version"),
                repository: field("repository"),
                span: entry.get("repository").map_or(entry.span, |r| r.span),
            });
        }
    }
    out
}

impl Dependency {
    /// Where this dependency of `chart` comes from; a `file://` chart must lie in one of
    /// `repositories` (canonical paths), as everything kivi-lint reads does.
    pub fn source(&self, chart: &Path, repositories: &[PathBuf]) -> Source {
        if vendored(chart, &self.name) {
            return Source::Vendored;
        }
        let Some(path) = self.repository.strip_prefix("file://") else {
            return Source::Remote;
        };
        let dir = chart.join(path);
        match std::fs::canonicalize(&dir) {
            Ok(c) if !repositories.iter().any(|r| c.starts_with(r)) => Source::Broken(format!(
                "the `file://` dependency `{}` is outside the repository: kivi-lint does not read it",
                crate::diagnostics::printable(&self.name)
            )),
            Ok(c) if c.join("Chart.yaml").is_file() => Source::Local(c),
            _ => Source::Broken(format!(
                "the `file://` dependency `{}` is not a chart: `{}` has no Chart.yaml",
                crate::diagnostics::printable(&self.name),
                crate::diagnostics::printable(path)
            )),
        }
    }
}

/// Whether `charts/` holds the chart `name`: a directory whose Chart.yaml names it, or an
/// archive `name-<version>.tgz`.
fn vendored(chart: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(chart.join("charts")) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let path = e.path();
        let file = e.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            crate::source::read_text(&path.join("Chart.yaml")).is_ok_and(|t| {
                t.lines().any(|l| {
                    l.trim_start() == l
                        && l.strip_prefix("name:")
                            .is_some_and(|n| n.trim().trim_matches(['"', '\'']) == name)
                })
            })
        } else {
            file.strip_suffix(".tgz")
                .and_then(|f| f.strip_prefix(name))
                .is_some_and(|rest| rest.starts_with('-') && rest[1..].starts_with(|c: char| c.is_ascii_digit()))
        }
    })
}

/// A directory that reads as `chart` with each of `local` (the key its templates render
/// under, the chart's directory) in its `charts/`: links, so nothing is copied and the
/// repository is never written to.
pub fn stage(chart: &Path, local: &[Subchart]) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("kivi-lint-chart-").tempdir()?;
    let chart = std::fs::canonicalize(chart)?;
    for entry in std::fs::read_dir(&chart)? {
        let entry = entry?;
        if entry.file_name() != "charts" {
            std::os::unix::fs::symlink(entry.path(), dir.path().join(entry.file_name()))?;
        }
    }
    let charts = dir.path().join("charts");
    std::fs::create_dir(&charts)?;
    if let Ok(entries) = std::fs::read_dir(chart.join("charts")) {
        for entry in entries {
            let entry = entry?;
            std::os::unix::fs::symlink(entry.path(), charts.join(entry.file_name()))?;
        }
    }
    for (i, sub) in local.iter().enumerate() {
        // Helm finds a subchart by the name in its Chart.yaml, whatever its directory; an
        // archive (a fetched chart) must keep its `.tgz`.
        let name = format!("kivi-lint-dependency-{i}{}", if sub.archive() { ".tgz" } else { "" });
        std::os::unix::fs::symlink(&sub.source, charts.join(name))?;
    }
    Ok(dir)
}

/// Why `helm template` failed: a chart that needs values (a template's `fail` or
/// `required`, at its line) or anything else.
#[derive(Clone, Debug, PartialEq)]
pub enum RenderError {
    NeedsValues {
        /// The `# Source:`-style path of the template, its line and the chart's message.
        template: String,
        line: u32,
        column: u32,
        message: String,
    },
    Failed(String),
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::NeedsValues { template, message, .. } => {
                write!(f, "helm template failed: {template}: {message}")
            }
            RenderError::Failed(message) => f.write_str(message),
        }
    }
}

/// `execution error at (chart/templates/x.yaml:12:4): a value is required` is what helm
/// says when a template's `fail` or `required` stops it.
fn execution_error(stderr: &str) -> Option<RenderError> {
    if let Some(nil) = nil_value(stderr) {
        return Some(nil);
    }
    let rest = stderr.split("execution error at (").nth(1)?;
    let (at, message) = rest.split_once("): ")?;
    let mut parts = at.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let template = parts.next()?.to_string();
    Some(RenderError::NeedsValues {
        template,
        line,
        column,
        message: message.lines().next().unwrap_or_default().trim().to_string(),
    })
}

/// `Error: chart/templates/x.yaml:15:60: executing "…" at <.Values.image.tag>: nil pointer
/// evaluating interface {}.tag`: a template reads a value under one the values do not have.
fn nil_value(stderr: &str) -> Option<RenderError> {
    let line = stderr.lines().find(|l| l.contains("nil pointer evaluating"))?;
    let rest = line.split("Error: ").nth(1)?;
    let (at, _) = rest.split_once(": executing ")?;
    let mut parts = at.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line_number = parts.next()?.parse().ok()?;
    let template = parts.next()?.to_string();
    let value = rest
        .split(" at <")
        .nth(1)
        .and_then(|v| v.split_once(">:"))
        .map(|(v, _)| v)?;
    Some(RenderError::NeedsValues {
        template,
        line: line_number,
        column,
        message: format!("`{value}` is read, and the values do not have what holds it"),
    })
}

/// `helm template <release> <chart> --namespace <ns> -f <values>...`, without network access
/// (`helm template` does not contact a cluster; dependencies are in `charts/`, or staged
/// there by [`stage`]).
pub fn render(helm: &Path, chart: &Path, options: &HelmOptions, values: &[PathBuf]) -> Result<String, RenderError> {
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

fn run(command: Command) -> Result<String, RenderError> {
    let finished = crate::process::run(crate::process::offline(command), RENDER_TIMEOUT)
        .map_err(|e| RenderError::Failed(e.to_string()))?;
    if !finished.success {
        if let Some(why) = crate::process::out_of_memory(&finished.stderr) {
            return Err(RenderError::Failed(format!("helm template failed: {why}")));
        }
        if let Some(needs_values) = execution_error(&finished.stderr) {
            return Err(needs_values);
        }
        // Helm's informational log lines (symbolic links followed) are not the error.
        let text: String = finished
            .stderr
            .trim()
            .lines()
            .filter(|l| !l.starts_with("level=INFO"))
            .take(5)
            .collect::<Vec<_>>()
            .join(" ");
        return Err(RenderError::Failed(format!("helm template failed: {text}")));
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

/// Where the objects of a `# Source:` path are located.
#[derive(Clone, Debug, PartialEq)]
pub enum TemplateAt {
    /// A template file of the repository.
    File(PathBuf),
    /// A fetched archive's template: at the dependency that brings it.
    Dependency(Span),
}

/// The template of a `# Source:` path: the first component is the chart's name; a subchart
/// staged from a `file://` dependency maps to its directory, a fetched one to its entry.
pub fn template_path(chart: &Path, source: &str, local: &[Subchart]) -> Option<TemplateAt> {
    let (_, rest) = source.split_once('/')?;
    // Never leave the chart directory, whatever the comment says.
    if rest.split('/').any(|c| c == "..") {
        return None;
    }
    if let Some(sub) = rest.strip_prefix("charts/")
        && let Some((key, inner)) = sub.split_once('/')
        && let Some(staged) = local.iter().find(|s| s.key == key)
    {
        return Some(if staged.archive() {
            TemplateAt::Dependency(staged.at)
        } else {
            TemplateAt::File(staged.source.join(inner))
        });
    }
    Some(TemplateAt::File(chart.join(rest)))
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
            template_path(Path::new("/c"), &c[1].1, &[]).unwrap(),
            TemplateAt::File(PathBuf::from("/c/charts/redis/templates/x.yaml"))
        );
        let at = Span::point(FileId(3), crate::source::Location::START);
        let sub = |source: &str| Subchart {
            key: "redis".into(),
            source: PathBuf::from(source),
            at,
        };
        assert_eq!(
            template_path(Path::new("/c"), &c[1].1, &[sub("/r")]).unwrap(),
            TemplateAt::File(PathBuf::from("/r/templates/x.yaml"))
        );
        assert_eq!(
            template_path(Path::new("/c"), &c[1].1, &[sub("/cache/x.tgz")]).unwrap(),
            TemplateAt::Dependency(at)
        );
        assert!(template_path(Path::new("/c"), "p/../../etc/passwd", &[]).is_none());
    }

    #[test]
    fn a_failed_template_names_its_line_and_message() {
        let stderr = "Error: execution error at (podinfo/templates/deployment.yaml:12:4): image.tag is required\n";
        assert_eq!(
            execution_error(stderr),
            Some(RenderError::NeedsValues {
                template: "podinfo/templates/deployment.yaml".into(),
                line: 12,
                column: 4,
                message: "image.tag is required".into()
            })
        );
        assert_eq!(execution_error("Error: parse error"), None);
        let nil = "Error: c/templates/d.yaml:15:60: executing \"c/templates/d.yaml\" at <.Values.image.tag>: nil pointer evaluating interface {}.tag\n";
        assert_eq!(
            execution_error(nil),
            Some(RenderError::NeedsValues {
                template: "c/templates/d.yaml".into(),
                line: 15,
                column: 60,
                message: "`.Values.image.tag` is read, and the values do not have what holds it".into()
            })
        );
    }
}

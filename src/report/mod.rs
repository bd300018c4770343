//! Reports: one emitter per output format. Stdout carries only the chosen report.

mod causes;
pub mod codequality;
pub mod document;
#[cfg(test)]
mod emit_tests;
pub mod exit;
mod fix_edit;
pub mod github;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod merge;
mod outcome;
mod project;
pub mod sarif;
pub mod simulation;
pub mod violation;

pub use document::Report;

use std::path::{Component, Path, PathBuf};

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Format {
    /// Text for people (default).
    Human,
    /// The documented JSON schema (docs/reports.md, "JSON output").
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// JUnit XML, for GitLab and Jenkins test reports.
    Junit,
    /// GitHub Actions workflow commands (annotations on the causing lines).
    Github,
    /// GitLab Code Quality JSON.
    Codequality,
    /// Markdown with Mermaid counterexamples (what the GitHub job summary gets).
    Markdown,
    /// One self-contained HTML page with each counterexample as a timeline of cluster states.
    Html,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
            Format::Github => "github",
            Format::Codequality => "codequality",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }
}

/// `--format FORMAT[=FILE]`: a report and where it goes (stdout without a file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub format: Format,
    pub file: Option<PathBuf>,
}

impl std::str::FromStr for Output {
    type Err = String;

    fn from_str(s: &str) -> Result<Output, String> {
        let (name, file) = match s.split_once('=') {
            Some((name, "")) => return Err(format!("`{name}=` needs a file name after `=`")),
            Some((name, file)) => (name, Some(PathBuf::from(file))),
            None => (s, None),
        };
        let format = Format::from_str(name, true).map_err(|_| {
            let names: Vec<&str> = Format::value_variants().iter().map(|f| f.name()).collect();
            format!(
                "unknown format `{name}`; expected one of {}, optionally `=FILE`",
                names.join(", ")
            )
        })?;
        Ok(Output { format, file })
    }
}

/// What an emitter needs besides the report.
#[derive(Clone, Debug)]
pub struct Emit<'a> {
    pub report: &'a Report,
    pub color: bool,
    /// The working directory relative to the repository root (`""` at the root): report paths
    /// are relative to the working directory, SARIF and annotations want them relative to the
    /// repository.
    pub repo_prefix: PathBuf,
    /// The repository root, to make absolute report paths relative.
    pub repo_root: Option<PathBuf>,
    /// `file://` URI of the repository root, for SARIF's `workingDirectory`.
    pub working_directory: Option<String>,
    pub exit_code: u8,
    /// Human output shows every step of a counterexample (`-v`), not only those of the
    /// objects the finding is about.
    pub full_traces: bool,
}

impl<'a> Emit<'a> {
    /// For a report printed where the repository root is the working directory.
    pub fn new(report: &'a Report, exit_code: u8) -> Emit<'a> {
        Emit {
            report,
            color: false,
            repo_prefix: PathBuf::new(),
            repo_root: None,
            working_directory: None,
            exit_code,
            full_traces: false,
        }
    }

    /// A report path as a repository-relative URI reference: forward slashes, `.` and `..`
    /// resolved, reserved characters percent-encoded.
    pub fn uri(&self, path: &str) -> String {
        let p = Path::new(path);
        if p.is_absolute() {
            return match self.repo_root.as_deref().and_then(|root| p.strip_prefix(root).ok()) {
                Some(inside) => repo_uri(Path::new(""), &inside.to_string_lossy()),
                // Outside the repository: an absolute URI is all that can be said.
                None => format!("file:///{}", repo_uri(Path::new(""), path)),
            };
        }
        repo_uri(&self.repo_prefix, path)
    }

    /// [`Emit::uri`] as a file name: repository-relative, not percent-encoded; outside the
    /// repository, the absolute path as it is.
    pub fn path(&self, path: &str) -> String {
        let p = Path::new(path);
        if p.is_absolute() {
            return match self.repo_root.as_deref().and_then(|root| p.strip_prefix(root).ok()) {
                Some(inside) => repo_path(Path::new(""), &inside.to_string_lossy()),
                None => path.to_string(),
            };
        }
        repo_path(&self.repo_prefix, path)
    }
}

/// `path` (relative to the working directory) as a URI reference relative to the repository
/// root, where the working directory is `prefix`.
pub fn repo_uri(prefix: &Path, path: &str) -> String {
    let mut out = String::new();
    for (i, p) in repo_parts(prefix, path).iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        for b in p.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// `path` relative to the repository root as a file name, for the consumers that want one
/// and not a URI (GitHub annotations, GitLab Code Quality, Markdown): `my app.yaml`, never
/// `my%20app.yaml`.
pub fn repo_path(prefix: &Path, path: &str) -> String {
    repo_parts(prefix, path).join("/")
}

/// The components of `prefix/path` with `.` and `..` resolved.
fn repo_parts(prefix: &Path, path: &str) -> Vec<String> {
    let joined = prefix.join(path);
    let mut parts: Vec<String> = Vec::new();
    for c in Path::new(&joined).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.last().is_some_and(|p| p != "..") {
                    parts.pop();
                } else {
                    parts.push("..".into());
                }
            }
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => parts.clear(),
        }
    }
    parts
}

/// The report of a verification run in `format`.
pub fn results(e: &Emit, format: Format) -> String {
    match format {
        Format::Json => json::render(e.report),
        Format::Human => crate::diagnostics::terminal_safe(&human::results(e.report, e.color, e.full_traces)),
        Format::Sarif => sarif::render(e),
        Format::Junit => junit::render(e),
        Format::Github => github::render(e),
        Format::Codequality => codequality::render(e),
        Format::Markdown => markdown::render(e),
        Format::Html => html::render(e),
    }
}

/// The report of `kivi-lint units` (no verification): `human` or `json` only.
pub fn units(report: &Report, format: Format, color: bool) -> Option<String> {
    match format {
        Format::Json => Some(json::render(report)),
        Format::Human => Some(crate::diagnostics::terminal_safe(&human::units(report, color))),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Human,
    Json,
    Markdown,
}

/// The check registry, for `kivi-lint rules`.
pub fn rules(format: RulesFormat) -> String {
    use crate::checks::CHECKS;
    match format {
        RulesFormat::Json => {
            let list: Vec<serde_json::Value> = CHECKS
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id,
                        "aliases": c.aliases,
                        "level": c.level.as_str(),
                        "summary": c.summary,
                        "definition": c.definition,
                        "tags": c.tags,
                        "defaultEnabled": c.default_enabled,
                        "runsIn": c.applies.condition(),
                        "needsEvents": c.applies.needs_events(),
                        "addsItsEvents": c.applies.adds_its_events(),
                        "example": c.example,
                        "fixes": c.fixes,
                        "helpUri": c.help_uri(),
                        "params": c.params.iter().map(|p| serde_json::json!({"name": p.name, "description": p.description, "default": p.default})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let mut out = serde_json::to_string_pretty(&list).expect("serialisable");
            out.push('\n');
            out
        }
        RulesFormat::Markdown => {
            let mut out = String::from("# kivi-lint checks\n\nGenerated by `kivi-lint rules --format markdown`.\n");
            for c in CHECKS {
                let needs = c.applies.needs_events();
                let needs = if needs.is_empty() {
                    String::new()
                } else if c.applies.adds_its_events() {
                    format!(
                        " It needs the `{}` event, which kivi-lint adds itself where a unit has a PodDisruptionBudget.",
                        needs.join("`, `")
                    )
                } else {
                    format!(
                        " It needs the `{}` event in the config's `events`; without it a unit it concerns says \"not checked\".",
                        needs.join("`, `")
                    )
                };
                out.push_str(&format!(
                    "\n## {}\n\n{}.\n\n**Runs in:** {}.{needs}\n\n{}",
                    c.id,
                    capitalized(c.summary),
                    c.applies.condition(),
                    c.help_markdown()
                ));
            }
            out
        }
        RulesFormat::Human => {
            let mut out = String::new();
            for c in CHECKS {
                out.push_str(&format!("{} ({})\n  {}\n", c.id, c.level.as_str(), c.definition));
                let enabled = if c.default_enabled {
                    "on by default"
                } else {
                    "off unless `checks.enable` lists it"
                };
                out.push_str(&format!("  runs: {enabled}, in {}\n", c.applies.condition()));
                if c.applies.adds_its_events() {
                    out.push_str(&format!(
                        "  needs the event: {} (added by kivi-lint where a unit has a PodDisruptionBudget)\n",
                        c.applies.needs_events().join(", ")
                    ));
                } else if !c.applies.needs_events().is_empty() {
                    out.push_str(&format!(
                        "  needs the event: {} (config `events`); without it, \"not checked\"\n",
                        c.applies.needs_events().join(", ")
                    ));
                }
                if !c.aliases.is_empty() {
                    out.push_str(&format!("  aliases: {}\n", c.aliases.join(", ")));
                }
                for p in c.params {
                    let default = p.default.map(|d| format!(" (default {d})")).unwrap_or_default();
                    out.push_str(&format!("  param {}: {}{}\n", p.name, p.description, default));
                }
                out.push('\n');
            }
            out
        }
    }
}

/// `kivi-lint explain <check>`: the definition, an example and the usual fixes.
pub fn explain(check: &crate::checks::Check) -> String {
    let mut out = format!("{} ({}): {}\n\n", check.id, check.level.as_str(), check.summary);
    out.push_str(&check.help_text());
    if !check.aliases.is_empty() {
        out.push_str(&format!("\nKivi names: {}\n", check.aliases.join(", ")));
    }
    for p in check.params {
        let default = p.default.map(|d| format!(" (default {d})")).unwrap_or_default();
        out.push_str(&format!("param {}: {}{}\n", p.name, p.description, default));
    }
    out.push_str(&format!("\nDocs: {}\n", check.help_uri()));
    out
}

pub(crate) use crate::diagnostics::{capitalized, plural};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_parse_with_and_without_files() {
        let o: Output = "sarif=out/k.sarif".parse().unwrap();
        assert_eq!(o.format, Format::Sarif);
        assert_eq!(o.file.as_deref(), Some(Path::new("out/k.sarif")));
        assert_eq!("HTML".parse::<Output>().unwrap().format, Format::Html);
        assert!("sarif=".parse::<Output>().is_err());
        assert!("pdf".parse::<Output>().unwrap_err().contains("expected one of human"));
    }

    #[test]
    fn uris_are_repository_relative() {
        assert_eq!(repo_uri(Path::new(""), "./a b/c.yaml"), "a%20b/c.yaml");
        assert_eq!(repo_path(Path::new(""), "./a b/c%.yaml"), "a b/c%.yaml");
        let prefix = Path::new("sub/dir");
        assert_eq!(repo_uri(prefix, "../x.yaml"), "sub/x.yaml");
        assert_eq!(repo_uri(prefix, "y.yaml"), "sub/dir/y.yaml");
    }
}

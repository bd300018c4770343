//! Kustomize render units.
//!
//! A directory with a kustomization file is built with `kustomize build` or `kubectl kustomize`,
//! never with exec or function plugins (no `--enable-alpha-plugins`, `--enable-exec`) and never
//! with remote bases: every referenced resource must exist locally, which is checked before the
//! renderer runs, so it has nothing to fetch. Origin annotations (`buildMetadata`) are requested
//! through a wrapper kustomization so that objects map back to their source files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::diagnostics::Diagnostic;
use crate::manifest::read::truncate;
use crate::source::{FileId, SourceMap, Span};
use crate::yaml::{self, Node};

mod build;
mod fields;
pub use build::*;
use fields::canonical_fields;

pub const FILE_NAMES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];
const RENDER_TIMEOUT: Duration = Duration::from_secs(120);

/// The kustomization file of a directory, if it has one: a regular file, or a symbolic link,
/// which [`read`] reports (kustomize does not read one).
pub fn kustomization_file(dir: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file() || p.is_symlink())
}

/// Keep `k` from building on anything outside `repositories` (kustomize would, with a
/// relative path that climbs out or an absolute one): each such entry is a located error,
/// and neither it nor what it holds is read, so none of it is echoed in a report.
pub fn confine(k: &mut Kustomization, repositories: &[PathBuf]) {
    let inside = |p: &Path| std::fs::canonicalize(p).is_ok_and(|c| repositories.iter().any(|r| c.starts_with(r)));
    let outside: Vec<PathBuf> = k.dirs.iter().chain(&k.files).filter(|p| !inside(p)).cloned().collect();
    if outside.is_empty() {
        return;
    }
    k.dirs.retain(|d| !outside.contains(d));
    k.files.retain(|f| !outside.contains(f));
    k.resources.retain(|r| !outside.contains(r));
    k.patch_files.retain(|p| !outside.contains(&p.path));
    let at = k
        .file_id
        .map_or(Span::point(FileId(0), crate::source::Location::START), |id| {
            Span::point(id, crate::source::Location::START)
        });
    for path in outside {
        let span = k.spans.get(&path).copied().unwrap_or(at);
        k.problems.push(
            Diagnostic::error(
                span,
                format!(
                    "`{}` is outside the repository: kivi-lint does not read it",
                    truncate(
                        &super::display_path(&crate::source::normalize(&path))
                            .display()
                            .to_string()
                    )
                ),
            )
            .with_help("vendor it into the repository, or pass --allow-outside-repository for a repository you trust"),
        );
    }
}

/// What a kustomization refers to on disk.
#[derive(Debug, Default)]
pub struct Kustomization {
    pub dir: PathBuf,
    pub file: PathBuf,
    pub file_id: Option<FileId>,
    /// `kind: Component`: only usable from another kustomization.
    pub component: bool,
    /// Directories it builds on (resources, bases, components that are directories).
    pub dirs: Vec<PathBuf>,
    /// Files it reads (resources, patches, generator inputs, ...).
    pub files: Vec<PathBuf>,
    /// Problems that make it unbuildable anywhere (missing files, YAML errors, paths outside
    /// the repository).
    pub problems: Vec<Diagnostic>,
    /// What kivi-lint does not do that it needs (the network, plugins): it is not rendered,
    /// with a note, but its configuration is not wrong.
    pub limits: Vec<LimitHit>,
    /// It only lists local resources (files or directories) and sets nothing else, so its
    /// output is exactly the objects of those resources.
    pub resources_only: bool,
    /// The `resources` entries, in order, resolved.
    pub resources: Vec<PathBuf>,
    /// Patch files, read later with their own lines.
    pub patch_files: Vec<super::overlay::PatchFile>,
    /// Inline patches and `replicas` entries, at their lines in the kustomization.
    pub changes: Vec<super::overlay::Change>,
    /// Where each entry of `dirs` and `files` is written.
    pub spans: std::collections::HashMap<PathBuf, Span>,
}

/// One entry of a kustomization that kivi-lint cannot build.
#[derive(Clone, Debug)]
pub struct LimitHit {
    pub span: Span,
    pub limit: super::coverage::Limit,
    pub detail: String,
    pub help: String,
    /// The remote base or file the entry names, as written (what `stage` may fetch).
    pub remote: Option<String>,
}

fn looks_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
        || entry.contains("?ref=")
        || entry.contains(".git//")
}

/// Read a kustomization and the local paths it references.
pub fn read(dir: &Path, file: &Path, sources: &mut SourceMap) -> Kustomization {
    let mut k = Kustomization {
        dir: dir.to_path_buf(),
        file: file.to_path_buf(),
        ..Default::default()
    };
    if file.is_symlink() {
        let id = sources.add(super::display_path(file), "");
        k.problems.push(
            Diagnostic::error(
                Span::point(id, crate::source::Location::START),
                "this kustomization file is a symbolic link, which kustomize does not read",
            )
            .with_help("replace the link with the file it points to"),
        );
        return k;
    }
    let text = match super::read_source(file) {
        Ok(t) => t,
        Err(e) => {
            let id = sources.add(super::display_path(file), "");
            k.problems
                .push(Diagnostic::error(Span::point(id, e.location), e.message));
            return k;
        }
    };
    let id = sources.add(super::display_path(file), text.as_str());
    k.file_id = Some(id);
    let stream = yaml::parse(&text, id, &yaml::Limits::default());
    for e in stream.errors {
        k.problems.push(Diagnostic::error(e.span, e.message));
    }
    let Some(mut root) = stream.documents.into_iter().next().map(|d| d.root) else {
        return k;
    };
    canonical_fields(&mut root);
    let root = &root;
    k.component = root.get("kind").and_then(Node::as_str) == Some("Component");
    k.resources_only = root.as_map().is_some_and(|m| {
        m.iter()
            .all(|(key, _)| matches!(key.as_str(), Some("apiVersion" | "kind" | "resources" | "metadata")))
    });

    // (node, may be a directory, may be `key=path`)
    let mut entries: Vec<(&Node, bool, bool)> = Vec::new();
    for key in ["resources", "bases", "components"] {
        entries.extend(seq(root, key).iter().map(|n| (n, true, false)));
    }
    for key in ["crds", "configurations", "patchesStrategicMerge"] {
        entries.extend(seq(root, key).iter().map(|n| (n, false, false)));
    }
    // Generator, transformer and validator configs: kustomize's builtin ones are fine; any
    // other is an exec or KRM function plugin, which kivi-lint never runs.
    for key in ["generators", "transformers", "validators"] {
        for node in seq(root, key) {
            if let Some(problem) = plugin(dir, key, node) {
                k.limits.push(LimitHit {
                    span: problem.span,
                    limit: super::coverage::Limit::Plugin,
                    detail: problem.message,
                    help: problem.help.unwrap_or_default(),
                    remote: None,
                });
            } else {
                entries.push((node, false, false));
            }
        }
    }
    for key in ["patches", "patchesJson6902", "replacements"] {
        for item in seq(root, key) {
            if let Some(p) = item.get("path") {
                entries.push((p, false, false));
            }
        }
    }
    overlay_changes(dir, root, id, &text, &mut k);
    if let Some(p) = root.at(&["openapi", "path"]) {
        entries.push((p, false, false));
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in seq(root, key) {
            for field in ["files", "envs"] {
                entries.extend(seq(generator, field).iter().map(|n| (n, false, true)));
            }
            if let Some(env) = generator.get("env") {
                entries.push((env, false, false));
            }
        }
    }
    if let Some(h) = root.get("helmCharts").filter(|h| !h.is_null()) {
        k.limits.push(LimitHit {
            span: h.span,
            limit: super::coverage::Limit::Plugin,
            detail: "`helmCharts` needs `kustomize build --enable-helm`, which kivi-lint does not use".into(),
            help: "render the chart with kivi-lint's Helm support (a directory with Chart.yaml) instead".into(),
            remote: None,
        });
    }
    for (node, may_be_dir, keyed) in entries {
        add_entry(&mut k, dir, root, node, may_be_dir, keyed);
    }
    k
}

/// The path an entry of the kustomization names (`may_be_dir`: a resource, base or component;
/// `keyed`: a generator's `key=path`), added to what `k` builds on, or the problem or limit
/// it is.
fn add_entry(k: &mut Kustomization, dir: &Path, root: &Node, node: &Node, may_be_dir: bool, keyed: bool) {
    let Some(text) = node.as_str() else {
        return;
    };
    // `key=path` in generators; inline patches contain line breaks.
    let path_text = if keyed {
        text.split_once('=').map_or(text, |(_, p)| p)
    } else {
        text
    }
    .trim();
    if path_text.is_empty() || text.contains('\n') {
        return;
    }
    let path = dir.join(path_text);
    if may_be_dir
        && root
            .get("resources")
            .and_then(Node::as_seq)
            .is_some_and(|r| r.iter().any(|n| std::ptr::eq(n, node)))
    {
        k.resources.push(path.clone());
    }
    if path.is_dir() && may_be_dir {
        k.spans.insert(path.clone(), node.span);
        k.dirs.push(path);
    } else if path.is_file() {
        k.spans.insert(path.clone(), node.span);
        k.files.push(path);
    } else if path_text.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("file://")) {
        // Not the network: a path anywhere on the machine, which kivi-lint never reads.
        k.problems.push(Diagnostic::error(
            node.span,
            format!(
                "`{}` is refused: kivi-lint reads nothing outside the repository",
                truncate(path_text)
            ),
        ));
    } else if looks_remote(path_text) {
        k.limits.push(LimitHit {
            span: node.span,
            limit: super::coverage::Limit::NetworkOff,
            detail: format!(
                "the remote resource `{}` {}",
                truncate(path_text),
                super::coverage::NETWORK_OFF
            ),
            help: "vendor the base into the repository, allow the network (--allow-network) to fetch it, or exclude this kustomization".into(),
            remote: Some(path_text.to_string()),
        });
    } else if path_text.contains(['*', '?', '[']) {
        // kustomize accepts globs in a few fields; it resolves them itself.
        k.resources_only = false;
    } else {
        // A pipe, a socket or a device is not a file kustomize can load.
        let what = if path.exists() {
            "is not a regular file or a directory"
        } else {
            "does not exist"
        };
        k.problems.push(Diagnostic::error(
            node.span,
            format!("`{}` {what}", truncate(path_text)),
        ));
    }
}

/// A located error when the `key` entry `node` configures a plugin rather than a builtin
/// generator, transformer or validator.
fn plugin(dir: &Path, key: &str, node: &Node) -> Option<Diagnostic> {
    let text = node.as_str()?;
    // An entry is a path to a config file, or (with a line break) the config itself.
    let config = if text.contains('\n') {
        text.to_string()
    } else {
        // Only a regular file below the kustomization (kustomize's root-only load
        // restriction), read within the size limit: a path in a pull request must not make
        // kivi-lint open a pipe, read a device or look at a file elsewhere on the machine.
        let path = std::fs::canonicalize(dir.join(text.trim())).ok()?;
        let root = std::fs::canonicalize(dir).ok()?;
        if !path.starts_with(&root) || !path.is_file() {
            return None;
        }
        crate::source::read_text(&path).ok()?
    };
    let stream = yaml::parse(&config, FileId(u32::MAX), &yaml::Limits::default());
    for doc in &stream.documents {
        let api_version = doc.root.get("apiVersion").and_then(Node::as_str).unwrap_or("");
        let function = doc
            .root
            .at(&["metadata", "annotations", "config.kubernetes.io/function"])
            .is_some();
        if api_version != "builtin" || function {
            let kind = doc.root.get("kind").and_then(Node::as_str).unwrap_or("?");
            return Some(
                Diagnostic::error(
                    node.span,
                    format!(
                        "{} is a kustomize plugin (`apiVersion: {}`, `kind: {}`): kivi-lint renders without exec or function plugins",
                        if text.contains('\n') {
                            format!("this inline `{key}` config")
                        } else {
                            format!("`{key}` entry `{}`", truncate(text.trim()))
                        },
                        truncate(api_version),
                        truncate(kind)
                    ),
                )
                .with_help("render this overlay in CI before kivi-lint and scan the output, or exclude it"),
            );
        }
    }
    None
}

fn seq<'n>(node: &'n Node, key: &str) -> &'n [Node] {
    node.get(key).and_then(Node::as_seq).unwrap_or_default()
}

use crate::source::normalize;

/// What this kustomization changes in the objects it renders, for their locations: its patch
/// files (read later, with their lines), its inline patches and its `replicas` entries.
fn overlay_changes(dir: &Path, root: &Node, file: crate::source::FileId, source: &str, k: &mut Kustomization) {
    use super::overlay::{Change, PatchFile, Target};
    let target_of = |item: &Node| Target {
        kind: item.at(&["target", "kind"]).and_then(Node::as_str).map(String::from),
        name: item.at(&["target", "name"]).and_then(Node::as_str).map(String::from),
    };
    // An inline patch's text sits in a block scalar (`patch: |-`): its lines are the lines
    // after the scalar's indicator, indented; a flow or quoted string points at the entry.
    let lines: Vec<&str> = source.split('\n').collect();
    let inline = |text: &str, value: &Node, target: Target| -> Option<Change> {
        let mut doc = yaml::parse(text, file, &yaml::Limits::default())
            .documents
            .into_iter()
            .next()?
            .root;
        // Where the scalar's first content line is, and its indentation: the span starts at
        // the indicator (`|-`) or, as saphyr reports it, at the content itself.
        let (line, column) = (value.span.start.line as usize, value.span.start.column as usize);
        let block = |l: &str| {
            let t = l.trim_end().trim_end_matches(['-', '+']);
            t.ends_with('|') || t.ends_with('>')
        };
        let at_indicator = lines
            .get(line - 1)
            .and_then(|l| l.chars().nth(column.saturating_sub(1)))
            .is_some_and(|c| c == '|' || c == '>');
        let content = if at_indicator {
            lines
                .get(line)
                .map(|l| (line as u32, (l.len() - l.trim_start().len()) as u32))
        } else if line >= 2 && lines.get(line - 2).is_some_and(|l| block(l)) {
            Some((line as u32 - 1, column as u32 - 1))
        } else {
            None
        };
        match content {
            Some((lines_before, indent)) => doc.for_each_mut(&mut |n| {
                for at in [&mut n.span.start, &mut n.span.end] {
                    at.line += lines_before;
                    at.column += indent;
                }
            }),
            None => crate::discover::provenance::remap_all(&mut doc, value.span),
        }
        Some(if doc.as_seq().is_some() {
            Change::Json {
                ops: super::overlay::json_ops(&doc),
                target,
            }
        } else {
            Change::Merge { patch: doc, target }
        })
    };
    for entry in seq(root, "patchesStrategicMerge") {
        match entry.as_str() {
            Some(text) if text.contains('\n') => k.changes.extend(inline(text, entry, Target::default())),
            Some(path) => k.patch_files.push(PatchFile {
                path: dir.join(path.trim()),
                target: Target::default(),
                json: false,
            }),
            None => {}
        }
    }
    for (key, json) in [("patches", false), ("patchesJson6902", true)] {
        for item in seq(root, key) {
            let target = target_of(item);
            if let Some(path) = item.get("path").and_then(Node::as_str) {
                k.patch_files.push(PatchFile {
                    path: dir.join(path.trim()),
                    target,
                    json,
                });
            } else if let Some(patch) = item.get("patch")
                && let Some(text) = patch.as_str()
            {
                k.changes.extend(inline(text, patch, target));
            }
        }
    }
    for item in seq(root, "replicas") {
        if let (Some(name), Some(count)) = (item.get("name").and_then(Node::as_str), item.get("count")) {
            k.changes.push(Change::Replicas {
                name: name.to_string(),
                count: count.span,
            });
        }
    }
    for item in seq(root, "images") {
        let Some(name) = item.get("name").and_then(Node::as_str) else {
            continue;
        };
        // The field that changes the image: the digest, else the tag, else the new name.
        let field = ["digest", "newTag", "newName"]
            .iter()
            .find_map(|f| item.get(f))
            .map_or(item.span, |n| n.span);
        let new_name = item.get("newName").and_then(Node::as_str).unwrap_or(name);
        k.changes.push(Change::Images {
            image: new_name.to_string(),
            span: field,
        });
    }
}

#[cfg(test)]
mod tests;

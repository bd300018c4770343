//! Discovery: from paths to parsed YAML documents, with provenance.
//!
//! Walks the paths honouring `.gitignore` and the config's `include`/`exclude` globs, reads
//! `.yaml`/`.yml`/`.json` files, renders kustomize directories and Helm charts (each one a
//! *scope*: an environment of its own), and maps rendered objects back to their source lines.

mod appset;
mod argocd;
pub mod coverage;
mod deployed;
mod documents;
use documents::*;
pub mod fetch;
mod flux;
pub mod helm;
pub mod kustomize;
mod origins;
pub mod overlay;
mod placeholders;
pub mod provenance;
mod release;
mod releases;
mod remote;
mod render;
pub mod revision;
mod stage;
mod walk;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;

use crate::config::Config;
use crate::diagnostics::{Diagnostic, Diagnostics};
// File reading is the source map's job; discovery's callers keep finding it here.
use crate::source::{FileId, Location, SourceMap, Span, location_of_offset};
pub use crate::source::{MAX_FILE_BYTES, ReadError, display_path, read_source, read_text};
use crate::yaml::{self, Document, Node};

use origins::*;
use render::*;
use walk::*;

const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeKind {
    /// Plain manifest files under one scanned path.
    Files,
    Kustomize,
    Helm,
    Stdin,
    /// A plain directory of another Git repository, fetched (see `remote`).
    Git,
}

impl ScopeKind {
    /// The name in reports, as JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            ScopeKind::Files => "files",
            ScopeKind::Kustomize => "kustomize",
            ScopeKind::Helm => "helm",
            ScopeKind::Stdin => "stdin",
            ScopeKind::Git => "git",
        }
    }
}

/// Objects of one scope are deployed together; objects of different scopes (two overlays, two
/// charts) are different environments and never share a verification unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Scope {
    pub kind: ScopeKind,
    pub path: PathBuf,
}

/// Documents read from one file or render, in one scope.
#[derive(Debug)]
pub struct Batch {
    pub scope: usize,
    /// The file read, or the render root's kustomization/Chart.yaml.
    pub file: FileId,
    pub documents: Vec<Document>,
    pub default_namespace: String,
    /// The deployer whose build this is (`Kustomization ns/name`, `Application name`), when a
    /// deployer's own options made it; else the deployer of its path applies.
    pub deployer: Option<String>,
    /// Made by discovery from other documents (an ApplicationSet's Applications), not read.
    pub generated: bool,
}

#[derive(Debug, Default)]
pub struct Discovery {
    pub scopes: Vec<Scope>,
    pub batches: Vec<Batch>,
    /// Files read one by one.
    pub files: usize,
    /// Kustomize and Helm renders attempted.
    pub renders: usize,
    /// Files holding no document at all (comments only, empty).
    pub empty_files: Vec<FileId>,
    /// Sources left out because of what kivi-lint cannot do here, each with a note.
    pub not_rendered: Vec<coverage::NotRendered>,
    /// Remote charts the renders used, fetched now or from the cache.
    pub fetched: Vec<fetch::Fetched>,
    /// Every kustomization read, by directory: deployers build them again with their options.
    kustomizations: BTreeMap<PathBuf, kustomize::Kustomization>,
}

impl Discovery {
    /// Record a source left out for what kivi-lint cannot do here: a located note, an error
    /// under `--strict` (see `coverage::record`).
    fn leave_out(
        &mut self,
        options: &Options,
        diags: &mut Diagnostics,
        span: Span,
        what: coverage::NotRendered,
        help: &str,
    ) {
        let settings = (options.strict, options.network.allowed);
        coverage::record(&mut self.not_rendered, diags, settings, span, what, help);
    }
}

pub struct Options<'a> {
    /// Paths to scan; `-` reads stdin.
    pub paths: &'a [PathBuf],
    pub stdin_filename: Option<&'a str>,
    pub config: &'a Config,
    /// Render kustomize directories and Helm charts (else read every file as it is).
    pub render: bool,
    /// Renders run at once.
    pub jobs: usize,
    /// Kustomizations may build on directories and files outside the repository of the path
    /// that holds them (`--allow-outside-repository`); kustomize itself would.
    pub allow_outside_repository: bool,
    /// The repository root, when the caller knows it (a checked-out base revision).
    pub repository: Option<&'a Path>,
    /// What cannot be rendered is an error, not a note (`--strict`).
    pub strict: bool,
    /// Whether remote charts may be fetched, and from where (`fetch`).
    pub network: &'a fetch::Network,
    /// Globs left out beside the config's `exclude` (the `apply` event's previous revision).
    pub history: &'a [String],
}

/// Discover, render and parse everything under `options.paths`.
pub fn discover(options: &Options, sources: &mut SourceMap, diags: &mut Diagnostics) -> Discovery {
    let mut discovery = Discovery::default();
    let fetcher = fetch::Fetcher::new(options.network.clone());
    let filter = Filter::new(options.config, options.history);
    let mut jobs: Vec<(usize, Job)> = Vec::new();
    let mut named_files_scope: Option<usize> = None;
    for path in options.paths {
        if path.as_os_str() == "-" {
            read_stdin(options, sources, diags, &mut discovery);
            continue;
        }
        if let Some(problem) = unreadable_path(path) {
            let file = sources.add(display_path(path), "");
            diags.error(
                Span::point(file, Location::START),
                format!(
                    "{}: {problem}",
                    crate::diagnostics::printable(&path.display().to_string())
                ),
            );
            continue;
        }
        if path.is_file() {
            // Files named explicitly share one scope, which `scopes` splits by directory as
            // it does a scanned directory's files: `kivi-lint deploy/a.yaml deploy/b.yaml`
            // checks one deployment, as `kivi-lint deploy` does.
            let scope = *named_files_scope.get_or_insert_with(|| {
                discovery.scopes.push(Scope {
                    kind: ScopeKind::Files,
                    path: display_path(path),
                });
                discovery.scopes.len() - 1
            });
            // A file named explicitly is read even if `exclude` matches it.
            read_plain(path, scope, sources, diags, &mut discovery);
            continue;
        }
        let scope = discovery.scopes.len();
        discovery.scopes.push(Scope {
            kind: ScopeKind::Files,
            path: display_path(path),
        });
        let (walked, errors) = walk(path, !filter.testdata);
        if let Some(first) = walked.testdata.first() {
            let n = walked.testdata.len();
            let dir = first
                .ancestors()
                .find(|a| a.file_name().is_some_and(|f| f == TESTDATA))
                .unwrap_or(first);
            let file = sources.add(display_path(dir), "");
            diags.push(
                Diagnostic::note(
                    Span::point(file, Location::START),
                    format!(
                        "{} under `{TESTDATA}/` directories skipped: Go's convention for test inputs, not deployed configuration",
                        crate::diagnostics::plural(n, "manifest file")
                    ),
                )
                .with_help(format!("to check them, add a glob naming `{TESTDATA}` to `include`, e.g. `**/{TESTDATA}/**`")),
            );
        }
        // A directory that cannot be read may hold manifests: the scan is incomplete, and
        // must not pass as if it were not.
        for e in errors {
            let file = sources.add(display_path(path), "");
            diags.error(
                Span::point(file, Location::START),
                format!("while walking the directory: {}", crate::diagnostics::printable(&e)),
            );
        }
        for link in &walked.links {
            let file = sources.add(display_path(link), "");
            diags.warning(
                Span::point(file, Location::START),
                "a symbolic link to a file outside the scanned path, or to no file; not read",
            );
        }
        for link in &walked.linked_dirs {
            let file = sources.add(display_path(link), "");
            diags.push(
                Diagnostic::note(
                    Span::point(file, Location::START),
                    "a symbolic link to a directory is not followed; its manifests are not read from here",
                )
                .with_help("name the directory on the command line to check it"),
            );
        }
        if walked.files.is_empty() && walked.testdata.is_empty() {
            let hidden = hidden_manifests(path);
            if hidden > 0 {
                let file = sources.add(display_path(path), "");
                diags.push(
                    Diagnostic::error(
                        Span::point(file, Location::START),
                        format!(
                            "every manifest file under this path is hidden by `.gitignore` or `.ignore` ({}): nothing would be checked",
                            crate::diagnostics::plural(hidden, "file")
                        ),
                    )
                    .with_help("name the files on the command line, or change the ignore file"),
                );
            }
        }
        let plain = if options.render {
            let (renders, plain) = plan_renders(options, &fetcher, &filter, &walked, sources, diags, &mut discovery);
            jobs.extend(renders);
            plain
        } else {
            // Without rendering, chart templates are Go templates, not YAML: leave them out.
            walked
                .files
                .iter()
                .filter(|f| !walked.chart_dirs.iter().any(|c| f.starts_with(c.join("templates"))))
                .cloned()
                .collect()
        };
        for file in plain.iter().filter(|f| filter.admits(f)) {
            read_plain(file, scope, sources, diags, &mut discovery);
        }
    }
    run_renders(options, jobs, sources, diags, &mut discovery);
    expand_application_sets(options, diags, &mut discovery);
    if options.render {
        deployed::build_with_options(options, &fetcher, sources, diags, &mut discovery);
    }
    fill_placeholders(options, sources, diags, &mut discovery);
    if options.render {
        releases::render_helm_releases(options, &fetcher, sources, diags, &mut discovery);
    }
    discovery.fetched = fetcher.fetched();
    discovery
}

/// Each ApplicationSet's Applications, beside it: checked as the Applications they are (see
/// `appset`); what cannot be expanded is a note.
fn expand_application_sets(options: &Options, diags: &mut Diagnostics, discovery: &mut Discovery) {
    let roots = source_roots(options);
    let mut left_out = Vec::new();
    let mut made = Vec::new();
    for batch in &discovery.batches {
        let mut generated = Vec::new();
        for doc in batch.documents.iter().filter(|d| appset::is_application_set(&d.root)) {
            // Its Git repository is taken to be the first of `roots` where it makes
            // Applications (the repository, else a scanned directory), as Flux paths resolve.
            let mut results = roots.iter().map(|r| appset::expand(&doc.root, r));
            let first = results.next().unwrap_or_default();
            let expanded = if first.applications.is_empty() {
                results.find(|e| !e.applications.is_empty()).unwrap_or(first)
            } else {
                first
            };
            let name = doc
                .root
                .at(&["metadata", "name"])
                .and_then(Node::as_str)
                .unwrap_or_default();
            generated.extend(expanded.applications.into_iter().map(|root| Document { root }));
            left_out.extend(
                expanded
                    .left_out
                    .into_iter()
                    .map(|(span, detail)| (span, name.to_string(), detail)),
            );
        }
        if !generated.is_empty() {
            made.push(Batch {
                scope: batch.scope,
                file: batch.file,
                documents: generated,
                default_namespace: batch.default_namespace.clone(),
                deployer: None,
                generated: true,
            });
        }
    }
    discovery.batches.extend(made);
    for (span, name, detail) in left_out {
        discovery.leave_out(
            options,
            diags,
            span,
            coverage::NotRendered {
                limit: coverage::Limit::Generator,
                source: format!("ApplicationSet {}", crate::diagnostics::printable(&name)),
                detail,
            },
            "check the Applications it makes by scanning them (`argocd appset generate`), or list them with a `list` generator",
        );
    }
}

/// Where the paths of Flux objects are resolved (their GitRepository is taken to be this
/// repository): the repository the scan belongs to (the caller's, else the first scanned
/// path's), then each scanned directory, for a repository kept in a subdirectory. Canonical.
fn source_roots(options: &Options) -> Vec<PathBuf> {
    let dirs: Vec<&Path> = scanned_dirs(options).collect();
    let repository = options
        .repository
        .and_then(|r| std::fs::canonicalize(r).ok())
        .or_else(|| dirs.first().map(|d| crate::config::repository_root(d)));
    let mut roots: Vec<PathBuf> = repository.into_iter().collect();
    for d in dirs {
        let d = if d.as_os_str().is_empty() { Path::new(".") } else { d };
        if let Ok(c) = std::fs::canonicalize(d)
            && !roots.contains(&c)
        {
            roots.push(c);
        }
    }
    roots
}

/// The roots the paths of `deployer` resolve under: `roots` (the repository, then the scanned
/// directories); when it deploys from the repository its own file is in (an Argo CD
/// Application whose `repoURL` is a template's placeholder, a Flux object of the bootstrap
/// GitRepository `flux-system`), then the directories holding that file, nearest first, up to
/// the repository: a GitOps layout kept in a subdirectory (a sample, a workshop, a template
/// repository) names its paths from there. A deployer of another repository (a named
/// `repoURL`, another GitRepository) resolves from that one's root only.
fn roots_near(roots: &[PathBuf], sources: &SourceMap, deployer: &Node) -> Vec<PathBuf> {
    let mut out = roots.to_vec();
    let named = |source: &Node| {
        source
            .get("repoURL")
            .and_then(Node::as_str)
            .is_some_and(|u| u.contains("://") || u.starts_with("git@"))
    };
    let spec = deployer.get("spec");
    let sources_of = spec.and_then(|s| s.get("source")).into_iter().chain(
        spec.and_then(|s| s.get("sources"))
            .and_then(Node::as_seq)
            .unwrap_or_default(),
    );
    let flux_system = [
        &["spec", "sourceRef", "name"][..],
        &["spec", "chart", "spec", "sourceRef", "name"][..],
    ]
    .iter()
    .any(|path| deployer.at(path).and_then(Node::as_str) == Some("flux-system"));
    let placeholder = (argocd::is_application(deployer) && !sources_of.clone().any(named)) || flux_system;
    let path = std::fs::canonicalize(sources.path(deployer.span.file));
    let (true, Some(repository), Ok(path)) = (placeholder, roots.first(), path) else {
        return out;
    };
    for dir in path.ancestors().skip(1) {
        if !dir.starts_with(repository) || dir == repository {
            break;
        }
        if !out.iter().any(|r| r == dir) {
            out.push(dir.to_path_buf());
        }
    }
    out
}

/// The directory of each scanned path (a file's parent), stdin left out.
fn scanned_dirs<'o>(options: &'o Options) -> impl Iterator<Item = &'o Path> {
    options.paths.iter().filter(|p| p.as_os_str() != "-").map(|p| {
        if p.is_dir() {
            p.as_path()
        } else {
            p.parent().unwrap_or(Path::new("."))
        }
    })
}

/// pre-commit mode: the render units that changed files belong to, each once. A file belongs
/// to the nearest directory above it (up to the working directory) that is a Helm chart or a
/// kustomization. Else a Kubernetes manifest belongs to its directory's manifests (not its
/// subdirectories: a manifest at the repository root must not check the whole repository),
/// and any other file (`.pre-commit-config.yaml`, a workflow) to no unit: it checks nothing.
/// A changed kivi-lint config concerns everything.
pub fn render_roots(files: &[PathBuf]) -> Vec<PathBuf> {
    let is_root = |dir: &Path| {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        dir.join("Chart.yaml").is_file() || kustomize::FILE_NAMES.iter().any(|n| dir.join(n).is_file())
    };
    let as_given = |p: &Path| {
        if p.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            p.to_path_buf()
        }
    };
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut plain_dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if matches!(name, ".kivi-lint.yaml" | ".kivi-lint.yml") {
            return vec![PathBuf::from(".")];
        }
        if file.is_dir() {
            roots.push(as_given(file));
            continue;
        }
        let dir = file.parent().unwrap_or(Path::new(""));
        match dir.ancestors().find(|d| is_root(d)) {
            Some(root) => roots.push(as_given(root)),
            None if is_kubernetes_manifest(file) => {
                plain_dirs.insert(dir.to_path_buf());
            }
            None => tracing::info!(
                "pre-commit: {} is not a Kubernetes manifest and belongs to no render unit",
                file.display()
            ),
        }
    }
    roots.sort();
    roots.dedup();
    // A root inside another is rendered with it.
    let all = roots.clone();
    roots.retain(|r| !all.iter().any(|o| o != r && (o == Path::new(".") || r.starts_with(o))));
    // The manifests of each plain directory, unless a root already holds them.
    for dir in plain_dirs {
        let shown = as_given(&dir);
        if roots.iter().any(|r| r == Path::new(".") || shown.starts_with(r)) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&shown) else {
            continue;
        };
        let mut manifests: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| dir.join(e.file_name()))
            .filter(|p| {
                p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| matches!(x, "yaml" | "yml" | "json"))
                    && is_kubernetes_manifest(p)
            })
            .collect();
        manifests.sort();
        roots.extend(manifests);
    }
    roots
}

/// Whether a file holds at least one Kubernetes object (a mapping with `apiVersion` and
/// `kind`), as opposed to other YAML a repository keeps (CI, pre-commit, Helm values).
fn is_kubernetes_manifest(path: &Path) -> bool {
    let Ok(text) = read_text(path) else { return false };
    let mut sources = SourceMap::default();
    let file = sources.add(path.to_path_buf(), text.as_str());
    let stream = yaml::parse(&text, file, &yaml::Limits::default());
    stream.documents.iter().any(|d| {
        d.root.get("kind").and_then(Node::as_str).is_some() && d.root.get("apiVersion").and_then(Node::as_str).is_some()
    })
}

/// The changes of the kustomizations a render builds on, innermost first (so that an outer
/// overlay's change wins): inline ones as read, patch files parsed with their own lines.
fn overlay_changes(
    root: &Path,
    kustomizations: &BTreeMap<PathBuf, kustomize::Kustomization>,
    sources: &mut SourceMap,
) -> Vec<overlay::Change> {
    // Breadth first from the root: outer kustomizations before the bases they build on.
    let mut order: Vec<&kustomize::Kustomization> = Vec::new();
    let mut queue = std::collections::VecDeque::from([root.to_path_buf()]);
    let mut seen = BTreeSet::new();
    while let Some(key) = queue.pop_front() {
        if !seen.insert(key.clone()) {
            continue;
        }
        let Some(k) = kustomizations.get(&key) else { continue };
        order.push(k);
        queue.extend(k.dirs.iter().map(|d| crate::source::normalize(&absolute(d))));
    }
    let mut changes = Vec::new();
    for k in order.into_iter().rev() {
        for p in &k.patch_files {
            let Ok(text) = read_source(&p.path) else { continue };
            let shown = display_path(&p.path);
            let id = sources
                .find(&shown)
                .unwrap_or_else(|| sources.add(shown, text.as_str()));
            for doc in yaml::parse(&text, id, &yaml::Limits::default()).documents {
                if p.json || doc.root.as_seq().is_some() {
                    changes.push(overlay::Change::Json {
                        ops: overlay::json_ops(&doc.root),
                        target: p.target.clone(),
                    });
                } else {
                    changes.push(overlay::Change::Merge {
                        patch: doc.root,
                        target: p.target.clone(),
                    });
                }
            }
        }
        changes.extend(k.changes.iter().cloned());
    }
    changes
}

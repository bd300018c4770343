//! Discovery: from paths to parsed YAML documents, with provenance.
//!
//! Walks the paths honouring `.gitignore` and the config's `include`/`exclude` globs, reads
//! `.yaml`/`.yml`/`.json` files, renders kustomize directories and Helm charts (each one a
//! *scope*: an environment of its own), and maps rendered objects back to their source lines.

pub mod helm;
pub mod kustomize;
pub mod overlay;
pub mod provenance;
pub mod revision;

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

const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeKind {
    /// Plain manifest files under one scanned path.
    Files,
    Kustomize,
    Helm,
    Stdin,
}

impl ScopeKind {
    /// The name in reports, as JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            ScopeKind::Files => "files",
            ScopeKind::Kustomize => "kustomize",
            ScopeKind::Helm => "helm",
            ScopeKind::Stdin => "stdin",
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
}

/// `include`/`exclude` globs, matched against paths relative to the config's directory.
struct Filter {
    base: PathBuf,
    include: GlobSet,
    exclude: GlobSet,
    /// Read files under `testdata/` directories: an `include` glob names them.
    testdata: bool,
}

impl Filter {
    fn new(config: &Config) -> Filter {
        let build = |globs: &[String]| {
            let mut b = GlobSetBuilder::new();
            for g in globs {
                if let Ok(glob) = Glob::new(g) {
                    b.add(glob);
                }
            }
            b.build().unwrap_or_else(|_| GlobSet::empty())
        };
        Filter {
            base: std::fs::canonicalize(&config.base_dir).unwrap_or_else(|_| config.base_dir.clone()),
            include: build(&config.include),
            exclude: build(&config.exclude),
            testdata: config.include.iter().any(|g| g.contains(TESTDATA)),
        }
    }

    fn admits(&self, path: &Path) -> bool {
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let rel = absolute.strip_prefix(&self.base).unwrap_or(&absolute);
        self.include.is_match(rel) && !self.exclude.is_match(rel)
    }
}

#[derive(Default)]
struct Walked {
    files: Vec<PathBuf>,
    /// Symbolic links not followed: to a file outside the walked directory, or to nothing.
    links: Vec<PathBuf>,
    /// Symbolic links to directories, not walked (a link may loop, or lead out of the tree).
    linked_dirs: Vec<PathBuf>,
    kustomize_dirs: Vec<PathBuf>,
    chart_dirs: Vec<PathBuf>,
    /// Manifest files left out because they lie under a `testdata/` directory.
    testdata: Vec<PathBuf>,
}

/// Go's convention for test inputs: files a repository keeps to feed its tests, not to deploy.
const TESTDATA: &str = "testdata";

/// Walk `dir`; with `skip_testdata`, files under a `testdata` directory below `dir` are set
/// aside (a path named on the command line inside one is still walked).
fn walk(dir: &Path, skip_testdata: bool) -> (Walked, Vec<String>) {
    let mut out = Walked::default();
    let mut errors = Vec::new();
    // Links to files inside the directory, with their targets.
    let mut linked: Vec<(PathBuf, PathBuf)> = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                errors.push(e.to_string());
                continue;
            }
        };
        let path = if entry.path_is_symlink() {
            // A link to a file inside the walked directory is read as that file would be;
            // one that leads out of it (or nowhere) is reported, never followed.
            let Ok(target) = std::fs::canonicalize(entry.path()) else {
                out.links.push(entry.into_path());
                continue;
            };
            if target.is_dir() {
                out.linked_dirs.push(entry.into_path());
                continue;
            }
            if !target.is_file() || !std::fs::canonicalize(dir).is_ok_and(|d| target.starts_with(d)) {
                out.links.push(entry.into_path());
                continue;
            }
            linked.push((entry.path().to_path_buf(), target));
            entry.into_path()
        } else if entry.file_type().is_some_and(|t| t.is_file()) {
            entry.into_path()
        } else {
            continue;
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let manifest = EXTENSIONS.contains(&ext) || name == "Kustomization";
        if skip_testdata
            && path
                .strip_prefix(dir)
                .is_ok_and(|rel| rel.components().any(|c| c.as_os_str() == TESTDATA))
        {
            if manifest {
                out.testdata.push(path);
            }
            continue;
        }
        let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if kustomize::FILE_NAMES.contains(&name) {
            out.kustomize_dirs.push(parent.clone());
        }
        if name == "Chart.yaml" {
            out.chart_dirs.push(parent);
        }
        if manifest {
            out.files.push(path);
        }
    }
    // A link to a manifest that is read anyway (`latest.yaml -> v2.yaml`) adds nothing but a
    // second copy of its objects: the file is read once, under its own name.
    if !linked.is_empty() {
        let links: BTreeSet<&PathBuf> = linked.iter().map(|(l, _)| l).collect();
        let mut read: BTreeSet<PathBuf> = out
            .files
            .iter()
            .filter(|f| !links.contains(f))
            .filter_map(|f| std::fs::canonicalize(f).ok())
            .collect();
        // Of several links to one file, the first (in path order) stands for it.
        let redundant: BTreeSet<&PathBuf> = linked
            .iter()
            .filter(|(l, t)| out.files.contains(l) && !read.insert(t.clone()))
            .map(|(l, _)| l)
            .collect();
        out.files.retain(|f| !redundant.contains(f));
    }
    (out, errors)
}

/// Why a path named on the command line cannot be scanned, if it cannot: it does not exist,
/// is a link that leads nowhere, or is neither a regular file nor a directory (a FIFO or a
/// device would block or never end).
fn unreadable_path(path: &Path) -> Option<String> {
    let Ok(own) = std::fs::symlink_metadata(path) else {
        return Some("does not exist".into());
    };
    let target = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if own.file_type().is_symlink() => {
            return Some(format!(
                "is a symbolic link that cannot be followed (a loop, or a missing target): {e}"
            ));
        }
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    if !target.is_file() && !target.is_dir() {
        return Some("is neither a regular file nor a directory (a FIFO, a device or a socket); not read".into());
    }
    None
}

/// Manifest files under `dir` that only the ignore files (`.gitignore`, `.ignore`) hide.
fn hidden_manifests(dir: &Path) -> usize {
    ignore::WalkBuilder::new(dir)
        .hidden(true)
        .ignore(false)
        .git_ignore(false)
        .git_exclude(false)
        .git_global(false)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_str().unwrap_or_default();
            let ext = e.path().extension().and_then(|x| x.to_str()).unwrap_or_default();
            EXTENSIONS.contains(&ext) || name == "Kustomization"
        })
        .take(10_000)
        .count()
}

enum Job {
    Kustomize {
        root: PathBuf,
        file: FileId,
        /// What the kustomizations of its tree change, innermost first.
        changes: Vec<overlay::Change>,
    },
    Helm {
        chart: PathBuf,
        values: Vec<PathBuf>,
    },
}

enum Rendered {
    Kustomize { text: String, wrapper: tempfile::TempDir },
    Helm { text: String },
}

/// Discover, render and parse everything under `options.paths`.
pub fn discover(options: &Options, sources: &mut SourceMap, diags: &mut Diagnostics) -> Discovery {
    let mut discovery = Discovery::default();
    let filter = Filter::new(options.config);
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
                        "{n} manifest file{} under `{TESTDATA}/` directories skipped: Go's convention for test inputs, not deployed configuration",
                        if n == 1 { "" } else { "s" }
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
                            "every manifest file under this path is hidden by `.gitignore` or `.ignore` ({hidden} file{}): nothing would be checked",
                            if hidden == 1 { "" } else { "s" }
                        ),
                    )
                    .with_help("name the files on the command line, or change the ignore file"),
                );
            }
        }
        let plain = if options.render {
            plan_renders(options, &filter, &walked, sources, diags, &mut discovery, &mut jobs)
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
    discovery
}

fn read_stdin(options: &Options, sources: &mut SourceMap, diags: &mut Diagnostics, discovery: &mut Discovery) {
    let name = options.stdin_filename.unwrap_or("<stdin>");
    let scope = discovery.scopes.len();
    discovery.scopes.push(Scope {
        kind: ScopeKind::Stdin,
        path: PathBuf::from(name),
    });
    let mut bytes = Vec::new();
    let result = std::io::stdin().lock().take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes);
    let text = match (result, String::from_utf8(bytes)) {
        (Err(e), _) => Err((format!("cannot read stdin: {e}"), Location::START)),
        (Ok(n), _) if n as u64 > MAX_FILE_BYTES => {
            Err(("stdin is larger than 16 MiB; not read".to_string(), Location::START))
        }
        (Ok(_), Err(e)) => Err((
            "stdin is not valid UTF-8".to_string(),
            location_of_offset(e.as_bytes(), e.utf8_error().valid_up_to()),
        )),
        (Ok(_), Ok(t)) => Ok(t),
    };
    match text {
        Ok(text) => {
            let file = sources.add(name, text.as_str());
            parse_into(&text, file, scope, "default", diags, discovery);
        }
        Err((message, location)) => {
            let file = sources.add(name, "");
            diags.error(Span::point(file, location), message);
        }
    }
}

fn read_plain(path: &Path, scope: usize, sources: &mut SourceMap, diags: &mut Diagnostics, discovery: &mut Discovery) {
    discovery.files += 1;
    match read_source(path) {
        Ok(text) => {
            let file = sources.add(display_path(path), text.as_str());
            parse_into(&text, file, scope, "default", diags, discovery);
        }
        Err(e) => {
            let file = sources.add(display_path(path), "");
            diags.error(Span::point(file, e.location), e.message);
        }
    }
}

fn parse_into(
    text: &str,
    file: FileId,
    scope: usize,
    namespace: &str,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    let stream = yaml::parse(text, file, &yaml::Limits::default());
    let template = text.contains("{{");
    for e in stream.errors {
        let mut d = Diagnostic::error(e.span, e.message);
        if template && e.fatal {
            d = d.with_help("this file looks like a template, not YAML: render it (Helm chart) or add it to `exclude`");
        }
        diags.push(d);
    }
    if stream.documents.is_empty() && !diags.iter().any(|d| d.span.file == file) {
        discovery.empty_files.push(file);
    }
    discovery.batches.push(Batch {
        scope,
        file,
        documents: stream.documents,
        default_namespace: namespace.to_string(),
    });
}

/// Decide what is rendered and return the files left to read one by one.
fn plan_renders(
    options: &Options,
    filter: &Filter,
    walked: &Walked,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
    jobs: &mut Vec<(usize, Job)>,
) -> Vec<PathBuf> {
    // Charts inside charts are subcharts, rendered by their parent.
    let charts: Vec<&PathBuf> = walked
        .chart_dirs
        .iter()
        .filter(|c| !walked.chart_dirs.iter().any(|o| o != *c && c.starts_with(o)))
        .collect();
    let in_chart = |p: &Path| charts.iter().any(|c| p.starts_with(c));

    // Read every kustomization reachable from the walked ones.
    let mut kustomizations: BTreeMap<PathBuf, kustomize::Kustomization> = BTreeMap::new();
    let mut queue: Vec<PathBuf> = walked.kustomize_dirs.iter().filter(|d| !in_chart(d)).cloned().collect();
    while let Some(dir) = queue.pop() {
        let key = crate::source::normalize(&absolute(&dir));
        if kustomizations.contains_key(&key) {
            continue;
        }
        let Some(file) = kustomize::kustomization_file(&dir) else {
            continue;
        };
        let k = kustomize::read(&dir, &file, sources);
        queue.extend(k.dirs.iter().cloned());
        kustomizations.insert(key, k);
    }
    let referenced: BTreeSet<PathBuf> = kustomizations
        .values()
        .flat_map(|k| k.dirs.iter().map(|d| crate::source::normalize(&absolute(d))))
        .collect();
    let mut consumed: BTreeSet<PathBuf> = BTreeSet::new();
    for k in kustomizations.values() {
        consumed.insert(crate::source::normalize(&absolute(&k.file)));
        consumed.extend(k.files.iter().map(|f| crate::source::normalize(&absolute(f))));
    }
    for (key, k) in &kustomizations {
        for problem in &k.problems {
            diags.push(problem.clone());
        }
        let walked_here = walked
            .kustomize_dirs
            .iter()
            .any(|d| crate::source::normalize(&absolute(d)) == *key);
        if !walked_here || referenced.contains(key) || k.component || !filter.admits(&k.file) {
            continue;
        }
        let Some(file) = k.file_id else { continue };
        // Anything wrong in what it builds on (a remote base above all) stops it here, before
        // the renderer could reach for the network.
        if closure_has_problems(key, &kustomizations) {
            diags.push(Diagnostic::error(
                Span::point(file, Location::START),
                format!(
                    "kustomization {} is not rendered: fix the problems reported in it or in its bases",
                    display_path(&k.dir).display()
                ),
            ));
            continue;
        }
        let scope = discovery.scopes.len();
        discovery.scopes.push(Scope {
            kind: ScopeKind::Kustomize,
            path: display_path(&k.dir),
        });
        let direct = resource_files(key, &kustomizations).and_then(|files| read_resources_directly(&files, sources));
        match direct {
            // Nothing to transform: the resources as they are, with exact lines.
            Some(parsed) => {
                for (file, documents) in parsed {
                    discovery.files += 1;
                    discovery.batches.push(Batch {
                        scope,
                        file,
                        documents,
                        default_namespace: "default".into(),
                    });
                }
            }
            None => jobs.push((
                scope,
                Job::Kustomize {
                    root: k.dir.clone(),
                    file,
                    changes: overlay_changes(key, &kustomizations, sources),
                },
            )),
        }
    }

    for chart in &charts {
        let chart_file = chart.join("Chart.yaml");
        if !filter.admits(&chart_file) {
            continue;
        }
        let scope = discovery.scopes.len();
        discovery.scopes.push(Scope {
            kind: ScopeKind::Helm,
            path: display_path(chart),
        });
        let (values, missing) = helm::values_files(chart, &options.config.helm, &options.config.base_dir);
        if !missing.is_empty() {
            let file = sources.add(display_path(&chart_file), read_text(&chart_file).unwrap_or_default());
            for m in missing {
                diags.warning(
                    Span::point(file, Location::START),
                    format!(
                        "values file `{}` (config `helm.values`) is neither in the chart nor beside the config",
                        m.display()
                    ),
                );
            }
        }
        jobs.push((
            scope,
            Job::Helm {
                chart: (*chart).clone(),
                values,
            },
        ));
    }

    walked
        .files
        .iter()
        .filter(|f| {
            let abs = crate::source::normalize(&absolute(f));
            let in_kustomize_dir = f
                .parent()
                .is_some_and(|p| kustomizations.contains_key(&crate::source::normalize(&absolute(p))));
            !consumed.contains(&abs) && !in_kustomize_dir && !in_chart(f)
        })
        .cloned()
        .collect()
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// The resource files of a kustomization whose whole closure only lists resources, in
/// kustomize's order; `None` when something in the closure transforms its resources.
fn resource_files(root: &Path, all: &BTreeMap<PathBuf, kustomize::Kustomization>) -> Option<Vec<PathBuf>> {
    fn collect(
        dir: &Path,
        all: &BTreeMap<PathBuf, kustomize::Kustomization>,
        out: &mut Vec<PathBuf>,
        depth: usize,
    ) -> Option<()> {
        let k = all.get(dir)?;
        if !k.resources_only || depth > 16 {
            return None;
        }
        for r in &k.resources {
            if r.is_dir() {
                collect(&crate::source::normalize(&absolute(r)), all, out, depth + 1)?;
            } else {
                // kustomize's load restrictor: a file resource lies under the directory of
                // the kustomization that lists it (links followed). Anything else is
                // kustomize's to refuse, so the real renderer runs.
                let inside = std::fs::canonicalize(r)
                    .ok()
                    .zip(std::fs::canonicalize(dir).ok())
                    .is_some_and(|(file, root)| file.starts_with(root));
                if !inside {
                    return None;
                }
                out.push(r.clone());
            }
        }
        Some(())
    }
    let mut out = Vec::new();
    collect(root, all, &mut out, 0)?;
    // A file listed twice adds its objects twice, which kustomize refuses.
    let unique: BTreeSet<PathBuf> = out.iter().filter_map(|f| std::fs::canonicalize(f).ok()).collect();
    if unique.len() != out.len() {
        return None;
    }
    Some(out)
}

/// Parse the resource files of a resources-only kustomization, if kustomize would pass every
/// one through unchanged: every document a named object (kustomize rejects anything else, so
/// those go to the real renderer, which reports it).
fn read_resources_directly(files: &[PathBuf], sources: &mut SourceMap) -> Option<Vec<(FileId, Vec<Document>)>> {
    fn named_object(r: &Node) -> bool {
        let kind = r.get("kind").and_then(Node::as_str);
        match (kind, r.get("items").and_then(Node::as_seq)) {
            // kustomize expands lists into their items.
            (Some(k), Some(items)) if k.ends_with("List") => items.iter().all(named_object),
            (Some(_), _) => {
                r.get("apiVersion").and_then(Node::as_str).is_some()
                    && r.at(&["metadata", "name"]).and_then(Node::as_str).is_some()
            }
            (None, _) => false,
        }
    }
    let mut parsed = Vec::with_capacity(files.len());
    // kustomize refuses an object defined twice (the same kind, namespace and name).
    let mut ids = BTreeSet::new();
    let mut unique = |r: &Node| -> bool {
        let at = |path: &[&str]| r.at(path).and_then(Node::as_str).unwrap_or_default().to_string();
        ids.insert((at(&["kind"]), at(&["metadata", "namespace"]), at(&["metadata", "name"])))
    };
    for path in files {
        let text = read_text(path).ok()?;
        let shown = display_path(path);
        let file = sources
            .find(&shown)
            .unwrap_or_else(|| sources.add(shown, text.as_str()));
        let stream = yaml::parse(&text, file, &yaml::Limits::default());
        if !stream.errors.is_empty() || !stream.documents.iter().all(|d| named_object(&d.root)) {
            return None;
        }
        let items = |d: &Document| -> Vec<Node> {
            match d.root.get("items").and_then(Node::as_seq) {
                Some(items) => items.to_vec(),
                None => vec![d.root.clone()],
            }
        };
        if !stream.documents.iter().flat_map(items).all(|r| unique(&r)) {
            return None;
        }
        parsed.push((file, stream.documents));
    }
    Some(parsed)
}

fn closure_has_problems(root: &Path, all: &BTreeMap<PathBuf, kustomize::Kustomization>) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        if let Some(k) = all.get(&dir) {
            if !k.problems.is_empty() {
                return true;
            }
            stack.extend(k.dirs.iter().map(|d| crate::source::normalize(&absolute(d))));
        }
    }
    false
}

fn run_renders(
    options: &Options,
    jobs: Vec<(usize, Job)>,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    if jobs.is_empty() {
        return;
    }
    discovery.renders += jobs.len();
    let kustomize_renderer = kustomize::Renderer::find();
    let helm_binary = which::which("helm").ok();
    let results: Vec<Mutex<Option<Result<Rendered, String>>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = options.jobs.clamp(1, jobs.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, job)) = jobs.get(i) else { break };
                    let started = std::time::Instant::now();
                    let result = match job {
                        Job::Kustomize { root, .. } => match &kustomize_renderer {
                            Some(r) => kustomize::render(root, r).map(|(text, wrapper)| Rendered::Kustomize { text, wrapper }),
                            None => Err("neither `kustomize` nor `kubectl` is on PATH: cannot build this kustomization".into()),
                        },
                        Job::Helm { chart, values } => match &helm_binary {
                            Some(h) => helm::render(h, chart, &options.config.helm, values).map(|text| Rendered::Helm { text }),
                            None => Err("`helm` is not on PATH: cannot render this chart (install Helm, or add the chart to `exclude`)".into()),
                        },
                    };
                    let what = match job {
                        Job::Kustomize { root, .. } => root,
                        Job::Helm { chart, .. } => chart,
                    };
                    tracing::debug!("rendered {} in {:.0?}", what.display(), started.elapsed());
                    *results[i].lock().expect("no panics while holding the lock") = Some(result);
                }
            });
        }
    });
    let mut source_cache: HashMap<PathBuf, Option<(FileId, Vec<Document>)>> = HashMap::new();
    for ((scope, job), result) in jobs.into_iter().zip(results) {
        let result = result.into_inner().expect("lock not poisoned").expect("every job ran");
        match (job, result) {
            (Job::Kustomize { root, file, changes }, Ok(Rendered::Kustomize { text, wrapper })) => {
                let documents = attach_kustomize_origins(
                    &text,
                    KustomizeOutput {
                        root: &root,
                        kustomization: file,
                        wrapper: wrapper.path(),
                        changes: &changes,
                    },
                    sources,
                    diags,
                    &mut source_cache,
                );
                discovery.batches.push(Batch {
                    scope,
                    file,
                    documents,
                    default_namespace: "default".into(),
                });
            }
            (Job::Helm { chart, .. }, Ok(Rendered::Helm { text })) => {
                let chart_file = chart_file_id(&chart, sources);
                let documents = attach_helm_sources(&text, &chart, sources, diags);
                discovery.batches.push(Batch {
                    scope,
                    file: chart_file,
                    documents,
                    default_namespace: options.config.helm.namespace.clone(),
                });
            }
            (Job::Kustomize { file, .. }, Err(message)) => diags.error(Span::point(file, Location::START), message),
            (Job::Helm { chart, .. }, Err(message)) => {
                let file = chart_file_id(&chart, sources);
                diags.error(Span::point(file, Location::START), message);
            }
            _ => unreachable!("each job yields its own kind of output"),
        }
    }
}

fn chart_file_id(chart: &Path, sources: &mut SourceMap) -> FileId {
    let path = chart.join("Chart.yaml");
    let shown = display_path(&path);
    sources
        .find(&shown)
        .unwrap_or_else(|| sources.add(shown, read_text(&path).unwrap_or_default()))
}

/// Parse a source file once per run (several overlays share a base).
fn source_documents<'c>(
    path: &Path,
    sources: &mut SourceMap,
    cache: &'c mut HashMap<PathBuf, Option<(FileId, Vec<Document>)>>,
) -> Option<&'c (FileId, Vec<Document>)> {
    cache
        .entry(path.to_path_buf())
        .or_insert_with(|| {
            let text = read_text(path).ok()?;
            let shown = display_path(path);
            let id = sources
                .find(&shown)
                .unwrap_or_else(|| sources.add(shown, text.as_str()));
            let stream = yaml::parse(&text, id, &yaml::Limits::default());
            Some((id, stream.documents))
        })
        .as_ref()
}

/// A finished kustomize render: its root, its kustomization, the wrapper it was built
/// through, and what its overlays change.
struct KustomizeOutput<'a> {
    root: &'a Path,
    kustomization: FileId,
    wrapper: &'a Path,
    changes: &'a [overlay::Change],
}

fn attach_kustomize_origins(
    text: &str,
    render: KustomizeOutput,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    cache: &mut HashMap<PathBuf, Option<(FileId, Vec<Document>)>>,
) -> Vec<Document> {
    let KustomizeOutput {
        root,
        kustomization,
        wrapper,
        changes,
    } = render;
    let rendered_name = format!("{} (kustomize build)", display_path(root).display());
    let rendered_file = sources.add(rendered_name, text);
    let stream = yaml::parse(text, rendered_file, &yaml::Limits::default());
    for e in stream.errors {
        diags.error(e.span, format!("in kustomize output: {}", e.message));
    }
    let fallback = Span::point(kustomization, Location::START);
    let mut documents = stream.documents;
    for doc in &mut documents {
        match kustomize::take_origin(&mut doc.root, wrapper) {
            Some(kustomize::Origin::File(path)) => match source_documents(&path, sources, cache) {
                Some((_, docs)) => match matching_document(&doc.root, docs) {
                    Some(source) => {
                        provenance::remap_to_source(&mut doc.root, source);
                        // What the overlays change points at the overlays.
                        let kind = source.get("kind").and_then(Node::as_str).unwrap_or_default();
                        let name = source
                            .at(&["metadata", "name"])
                            .and_then(Node::as_str)
                            .unwrap_or_default();
                        overlay::apply(&mut doc.root, kind, name, changes);
                    }
                    None => provenance::remap_all(&mut doc.root, fallback),
                },
                None => provenance::remap_all(&mut doc.root, fallback),
            },
            Some(kustomize::Origin::Generated(path)) => {
                let shown = display_path(&path);
                let id = sources.find(&shown).unwrap_or(kustomization);
                provenance::remap_all(&mut doc.root, Span::point(id, Location::START));
            }
            None => provenance::remap_all(&mut doc.root, fallback),
        }
    }
    documents
}

/// The source document a rendered object came from: same kind, and a name the rendered one
/// contains (kustomize adds prefixes and suffixes).
fn matching_document<'d>(rendered: &Node, docs: &'d [Document]) -> Option<&'d Node> {
    let kind = rendered.get("kind").and_then(Node::scalar_text);
    let name = rendered
        .at(&["metadata", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let same_kind: Vec<&Node> = docs
        .iter()
        .map(|d| &d.root)
        .filter(|d| d.get("kind").and_then(Node::scalar_text) == kind)
        .collect();
    let source_name = |d: &Node| {
        d.at(&["metadata", "name"])
            .and_then(Node::scalar_text)
            .unwrap_or_default()
    };
    same_kind
        .iter()
        .find(|d| source_name(d) == name)
        .or_else(|| {
            same_kind
                .iter()
                .filter(|d| !source_name(d).is_empty() && name.contains(&source_name(d)))
                .max_by_key(|d| source_name(d).len())
        })
        .or(same_kind.first())
        .copied()
        .or_else(|| (docs.len() == 1).then(|| &docs[0].root))
}

fn attach_helm_sources(text: &str, chart: &Path, sources: &mut SourceMap, diags: &mut Diagnostics) -> Vec<Document> {
    let rendered_name = format!("{} (helm template)", display_path(chart).display());
    let rendered_file = sources.add(rendered_name, text);
    let stream = yaml::parse(text, rendered_file, &yaml::Limits::default());
    for e in stream.errors {
        diags.error(e.span, format!("in helm output: {}", e.message));
    }
    let comments = helm::source_comments(text);
    let mut templates: HashMap<PathBuf, FileId> = HashMap::new();
    let mut documents = stream.documents;
    for doc in &mut documents {
        let line = doc.root.span.start.line;
        let Some((_, source)) = comments.iter().rev().find(|(l, _)| *l < line) else {
            continue;
        };
        let Some(path) = helm::template_path(chart, source) else {
            continue;
        };
        let file = *templates.entry(path.clone()).or_insert_with(|| {
            let shown = display_path(&path);
            sources
                .find(&shown)
                .unwrap_or_else(|| sources.add(shown, read_text(&path).unwrap_or_default()))
        });
        let template = sources.file(file).text.clone();
        provenance::remap_to_template(&mut doc.root, &template, file);
    }
    documents
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

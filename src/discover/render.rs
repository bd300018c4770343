//! Render roots (kustomization roots, charts): planned from the walked files, rendered in
//! parallel with `kubectl kustomize` or `helm template`, and their output tied back to the
//! source lines it came from.

use super::*;

mod planner;
mod running;
use planner::Planner;
pub(super) use running::*;

pub(super) enum Job {
    Kustomize {
        root: PathBuf,
        file: FileId,
        /// What the kustomizations of its tree change, innermost first.
        changes: Vec<overlay::Change>,
        /// What the deployer that builds it adds (none for the repository's own render).
        build: kustomize::BuildOptions,
        /// A copy to build instead, its remote bases fetched (see `stage`).
        staged: Option<stage::Staged>,
    },
    Helm {
        chart: PathBuf,
        values: Vec<PathBuf>,
        /// `file://` dependencies staged into its `charts/`: their key and directory.
        local: Vec<helm::Subchart>,
        /// The release name and namespace a deployer (a Flux HelmRelease) gives it, instead
        /// of the config's `helm` ones.
        release: Option<(String, String)>,
        /// A fetched chart archive has no templates in the repository: its objects are located
        /// here (the HelmRelease's chart).
        located: Option<Span>,
    },
}

pub(super) enum Rendered {
    Kustomize { text: String, wrapper: tempfile::TempDir },
    Helm { text: String },
}

/// Decide what is rendered: the renders to run (each with its scope) and the files left to
/// read one by one.
pub(super) fn plan_renders(
    options: &Options,
    fetcher: &fetch::Fetcher,
    filter: &Filter,
    walked: &Walked,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) -> (Vec<(usize, Job)>, Vec<PathBuf>) {
    let mut jobs = Vec::new();
    // Charts inside charts are subcharts, rendered by their parent.
    let charts: Vec<&PathBuf> = walked
        .chart_dirs
        .iter()
        .filter(|c| !walked.chart_dirs.iter().any(|o| o != *c && c.starts_with(o)))
        .collect();
    let in_chart = |p: &Path| charts.iter().any(|c| p.starts_with(c));
    let planner = Planner {
        options,
        fetcher,
        filter,
        repositories: Planner::repositories(options),
    };

    // Read every kustomization reachable from the walked ones.
    let kustomizations = planner.read_kustomizations(walked.kustomize_dirs.iter().filter(|d| !in_chart(d)), sources);
    let referenced: BTreeSet<PathBuf> = kustomizations
        .values()
        .flat_map(|k| k.dirs.iter().map(|d| crate::source::normalize(&absolute(d))))
        .collect();
    let mut consumed: BTreeSet<PathBuf> = BTreeSet::new();
    for k in kustomizations.values() {
        consumed.insert(crate::source::normalize(&absolute(&k.file)));
        consumed.extend(k.files.iter().map(|f| crate::source::normalize(&absolute(f))));
    }
    let roots = render_roots(walked, &kustomizations, &referenced);
    for (key, k) in &kustomizations {
        for problem in &k.problems {
            diags.push(problem.clone());
        }
        if !roots.contains(key) || !filter.admits(&k.file) {
            continue;
        }
        jobs.extend(planner.kustomization(key, k, &kustomizations, sources, diags, discovery));
    }
    for chart in &charts {
        planner.chart(chart, sources, diags, discovery, &mut jobs);
    }

    let plain = walked
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
        .collect();
    discovery.kustomizations.extend(kustomizations);
    (jobs, plain)
}

/// The `file://` dependencies of `chart` to stage, or `None` when it cannot be rendered: a
/// dependency that is broken (an error) or remote (a note: the network is off).
pub(super) fn chart_dependencies(
    chart: &Path,
    repositories: &[PathBuf],
    options: &Options,
    fetcher: &fetch::Fetcher,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) -> Option<Vec<helm::Subchart>> {
    let file = chart_file_id(chart, sources);
    let mut local = Vec::new();
    let mut remote = Vec::new();
    let mut broken = false;
    for dependency in helm::dependencies(chart, file, sources) {
        match dependency.source(chart, repositories) {
            helm::Source::Vendored => {}
            helm::Source::Local(dir) => local.push(helm::Subchart {
                key: dependency.key.clone(),
                source: dir,
                at: dependency.span,
            }),
            helm::Source::Broken(message) => {
                diags.error(dependency.span, message);
                broken = true;
            }
            // A chart of a chart repository or an OCI registry: fetched with the network allowed, or
            // from the cache.
            helm::Source::Remote
                if ["https://", "http://", "oci://"]
                    .iter()
                    .any(|scheme| dependency.repository.starts_with(scheme)) =>
            {
                match fetcher.chart(&dependency.repository, &dependency.name, &dependency.version) {
                    Ok(archive) => local.push(helm::Subchart {
                        key: dependency.key.clone(),
                        source: archive,
                        at: dependency.span,
                    }),
                    Err(fetch::FetchError::NetworkOff) => remote.push(dependency),
                    Err(fetch::FetchError::Refused(why) | fetch::FetchError::Failed(why)) => {
                        diags.error(
                            dependency.span,
                            format!(
                                "the dependency `{}` cannot be fetched: {why}",
                                crate::diagnostics::printable(&dependency.name)
                            ),
                        );
                        broken = true;
                    }
                }
            }
            helm::Source::Remote => remote.push(dependency),
        }
    }
    if let Some(first) = remote.first() {
        let more = match remote.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        discovery.leave_out(
            options,
            diags,
            first.span,
            coverage::NotRendered {
                limit: coverage::Limit::NetworkOff,
                source: format!("chart {}", display_path(chart).display()),
                detail: format!(
                    "its dependency `{}` {} from `{}`{more} is not in `charts/`: fetching it {}",
                    crate::diagnostics::printable(&first.name),
                    crate::diagnostics::printable(&first.version),
                    crate::diagnostics::printable(&first.repository),
                    coverage::NETWORK_OFF,
                ),
            },
            "allow the network (--allow-network) to fetch it into the cache, vendor it (`helm dependency build`, then commit `charts/`), or point `repository` at a `file://` chart in this repository",
        );
        return None;
    }
    (!broken).then_some(local)
}

/// chart-testing's values files of `chart`: `ci/*-values.yaml`, in name order.
fn ci_values(chart: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(chart.join("ci")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("-values.yaml"))
        })
        .collect();
    files.sort();
    files
}

pub(super) fn absolute(path: &Path) -> PathBuf {
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
pub(super) fn resource_files(root: &Path, all: &BTreeMap<PathBuf, kustomize::Kustomization>) -> Option<Vec<PathBuf>> {
    pub(super) fn collect(
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
pub(super) fn read_resources_directly(
    files: &[PathBuf],
    sources: &mut SourceMap,
) -> Option<Vec<(FileId, Vec<Document>)>> {
    pub(super) fn named_object(r: &Node) -> bool {
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

/// The kustomizations rendered on their own: those walked that no other kustomization builds
/// on, then, until every walked one is in a rendered root's closure, the first left over in
/// path order. A kustomization that only a `kind: Component` nobody uses, or only a cycle,
/// builds on is rendered itself (kustomize refuses the cycle where it is one), never skipped.
fn render_roots(
    walked: &Walked,
    all: &BTreeMap<PathBuf, kustomize::Kustomization>,
    referenced: &BTreeSet<PathBuf>,
) -> BTreeSet<PathBuf> {
    let candidates: Vec<&PathBuf> = all
        .iter()
        .filter(|(key, k)| {
            !k.component
                && walked
                    .kustomize_dirs
                    .iter()
                    .any(|d| crate::source::normalize(&absolute(d)) == **key)
        })
        .map(|(key, _)| key)
        .collect();
    let mut roots: BTreeSet<PathBuf> = candidates
        .iter()
        .filter(|key| !referenced.contains(**key))
        .map(|key| (*key).clone())
        .collect();
    let mut covered = BTreeSet::new();
    for root in &roots {
        closure(root, all, &mut covered);
    }
    // Each round covers at least the root it adds: at most one round per kustomization.
    while let Some(left) = candidates.iter().find(|key| !covered.contains(**key)) {
        roots.insert((*left).clone());
        closure(left, all, &mut covered);
    }
    roots
}

/// Every kustomization `root` builds on, itself included, added to `seen`.
fn closure(root: &Path, all: &BTreeMap<PathBuf, kustomize::Kustomization>, seen: &mut BTreeSet<PathBuf>) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        if let Some(k) = all.get(&dir) {
            stack.extend(k.dirs.iter().map(|d| crate::source::normalize(&absolute(d))));
        }
    }
}

/// The first limit met in what `root` builds on, in path order, and how many more there are.
pub(super) fn closure_limit<'k>(
    root: &Path,
    all: &'k BTreeMap<PathBuf, kustomize::Kustomization>,
) -> Option<(&'k kustomize::LimitHit, usize)> {
    let mut builds_on = BTreeSet::new();
    closure(root, all, &mut builds_on);
    let mut hits = builds_on.iter().filter_map(|dir| all.get(dir)).flat_map(|k| &k.limits);
    let first = hits.next()?;
    Some((first, hits.count()))
}

pub(super) fn closure_has_problems(root: &Path, all: &BTreeMap<PathBuf, kustomize::Kustomization>) -> bool {
    let mut builds_on = BTreeSet::new();
    closure(root, all, &mut builds_on);
    builds_on
        .iter()
        .any(|dir| all.get(dir).is_some_and(|k| !k.problems.is_empty()))
}

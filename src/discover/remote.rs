//! Paths that deployers deploy from other Git repositories (a Flux GitRepository, an Argo CD
//! `repoURL`): fetched with the network allowed (`fetch::Fetcher::git`), or read from the
//! cache. A kustomization there is built as the deployer builds it, confined to the checkout;
//! a plain directory's manifests are read (its subdirectories under `recurse`, the files
//! `include`/`exclude` leave). Each is a scope of its own, named after the deployer, and its
//! objects are located at the deployer's `path`: their files are not in this repository.

use super::placeholders::Deployer;
use super::render::{Job, closure_has_problems, closure_limit};
use super::*;

/// What becomes of a deployer's path of another repository.
pub(super) enum Deployed {
    /// A kustomization to build, in this scope.
    Build { scope: usize, job: Box<Job> },
    /// Its manifests were read into this scope.
    Read,
    /// A Helm chart, rendered as a release.
    Chart,
    /// It cannot be had: a rendering limit (`limit`, with why).
    Left(coverage::Limit, String),
    /// It cannot be had: an error (the policy refused it, the fetch failed).
    Failed(String),
}

pub(super) fn deploy(
    fetcher: &fetch::Fetcher,
    d: &Deployer,
    sources: &mut SourceMap,
    discovery: &mut Discovery,
) -> Deployed {
    let printable = crate::diagnostics::printable;
    let not_here = || {
        Deployed::Left(
            coverage::Limit::NetworkOff,
            format!(
                "its path `{}` is not in this repository: it comes from {}, another repository, and fetching it {}",
                printable(&d.path),
                printable(&d.source),
                coverage::NETWORK_OFF
            ),
        )
    };
    let Some((url, reference)) = &d.git else {
        return not_here();
    };
    let tree = match fetcher.git(url, reference) {
        Ok(tree) => tree,
        Err(fetch::FetchError::NetworkOff) => return not_here(),
        Err(fetch::FetchError::Refused(why) | fetch::FetchError::Failed(why)) => {
            return Deployed::Failed(format!(
                "{} cannot be fetched from {}: {}",
                printable(&d.id),
                printable(url),
                printable(&why)
            ));
        }
    };
    let dir = crate::source::normalize(&tree.join(d.path.trim_start_matches("./")));
    if !dir.starts_with(&tree) || !dir.is_dir() {
        return Deployed::Failed(format!(
            "{}: `{}` is not a directory of {} at `{}`",
            printable(&d.id),
            printable(&d.path),
            printable(url),
            printable(if reference.is_empty() { "HEAD" } else { reference })
        ));
    }
    let scope = discovery.scopes.len();
    let shown = format!("{} ({})", printable(url), printable(&d.id));
    if let Some(file) = kustomize::kustomization_file(&dir) {
        discovery.scopes.push(Scope {
            kind: ScopeKind::Kustomize,
            path: PathBuf::from(shown),
        });
        return build(&tree, &dir, &file, d, scope, sources);
    }
    if dir.join("Chart.yaml").is_file() {
        // A chart: rendered as the release the deployer makes of it (`render_helm_releases`).
        return Deployed::Chart;
    }
    discovery.scopes.push(Scope {
        kind: ScopeKind::Git,
        path: PathBuf::from(shown),
    });
    let mut documents = Vec::new();
    for path in manifest_files(&dir, d) {
        let Ok(text) = read_text(&path) else { continue };
        let id = sources.add(display_path(&path), "");
        let stream = yaml::parse(&text, id, &yaml::Limits::default());
        if let Some(error) = stream.errors.first() {
            return Deployed::Failed(format!(
                "{}: `{}` of {} is not valid YAML: {}",
                crate::diagnostics::printable(&d.id),
                crate::diagnostics::printable(&path.strip_prefix(&tree).unwrap_or(&path).display().to_string()),
                crate::diagnostics::printable(url),
                crate::diagnostics::printable(&error.message)
            ));
        }
        for mut doc in stream.documents {
            let object = doc.root.get("kind").and_then(Node::as_str).is_some()
                && doc.root.get("apiVersion").and_then(Node::as_str).is_some();
            if object {
                provenance::remap_all(&mut doc.root, d.at);
                documents.push(doc);
            }
        }
    }
    discovery.batches.push(Batch {
        scope,
        file: d.at.file,
        documents,
        default_namespace: "default".into(),
        deployer: Some(d.id.clone()),
        generated: false,
    });
    Deployed::Read
}

/// A kustomization of a checkout, read with what it builds on (confined to the checkout);
/// anything it cannot build is a limit.
fn build(tree: &Path, dir: &Path, file: &Path, d: &Deployer, scope: usize, sources: &mut SourceMap) -> Deployed {
    let mut all: BTreeMap<PathBuf, kustomize::Kustomization> = BTreeMap::new();
    let mut queue = vec![(dir.to_path_buf(), file.to_path_buf())];
    let trees = [tree.to_path_buf()];
    while let Some((dir, file)) = queue.pop() {
        let key = crate::source::normalize(&dir);
        if all.contains_key(&key) {
            continue;
        }
        let mut k = kustomize::read(&dir, &file, sources);
        kustomize::confine(&mut k, &trees);
        for next in &k.dirs {
            if let Some(f) = kustomize::kustomization_file(next) {
                queue.push((next.clone(), f));
            }
        }
        all.insert(key, k);
    }
    let root = crate::source::normalize(dir);
    let first_problem = all.values().flat_map(|k| &k.problems).next().map(|p| p.message.clone());
    if closure_has_problems(&root, &all) {
        return Deployed::Failed(format!(
            "{}: the kustomization `{}` of {} cannot be built: {}",
            crate::diagnostics::printable(&d.id),
            crate::diagnostics::printable(&d.path),
            crate::diagnostics::printable(&d.source),
            first_problem.unwrap_or_default()
        ));
    }
    if let Some((hit, _)) = closure_limit(&root, &all) {
        return Deployed::Left(
            hit.limit,
            format!("its path `{}`: {}", crate::diagnostics::printable(&d.path), hit.detail),
        );
    }
    let Some(file) = all.get(&root).and_then(|k| k.file_id) else {
        return Deployed::Failed(format!("{}: its kustomization cannot be read", d.id));
    };
    Deployed::Build {
        scope,
        job: Box::new(Job::Kustomize {
            root,
            file,
            changes: Vec::new(),
            build: d.build.clone(),
            staged: None,
        }),
    }
}

/// The manifest files of a plain directory the deployer deploys, in path order.
fn manifest_files(dir: &Path, d: &Deployer) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(listing) = std::fs::read_dir(&at) else { continue };
        for entry in listing.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if kind.is_dir() && d.recurse && !hidden {
                pending.push(path);
            } else if kind.is_file()
                && path.extension().is_some_and(|e| EXTENSIONS.iter().any(|x| e == *x))
                && d.files
                    .as_ref()
                    .is_none_or(|f| f.admits(path.strip_prefix(dir).unwrap_or(&path)))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

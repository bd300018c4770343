//! Kustomizations built as their deployer builds them: with a Flux Kustomization's
//! `components`, `namePrefix`, `nameSuffix` and `images`, or an Argo CD kustomize source's
//! options (`namePrefix`, `nameSuffix`, `commonLabels`, `commonAnnotations`, `images`,
//! `components`). Each such build is a scope of its own, named after its deployer; the path's
//! build without them is dropped, as nobody deploys it so, unless a deployer without options
//! deploys that path too.

use super::render::{Job, closure_has_problems, closure_limit, run_renders};
use super::*;

pub(super) fn build_with_options(
    options: &Options,
    fetcher: &fetch::Fetcher,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    let roots = source_roots(options);
    let deployers = placeholders::deployers(discovery.batches.iter().flat_map(|b| &b.documents), &|d| {
        roots_near(&roots, sources, d)
    });
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let by_dir: BTreeMap<PathBuf, PathBuf> = discovery
        .kustomizations
        .keys()
        .filter_map(|k| Some((canonical(k)?, k.clone())))
        .collect();
    let without_options: BTreeSet<PathBuf> = deployers
        .iter()
        .filter(|d| d.build.is_empty())
        .filter_map(|d| canonical(&d.root))
        .collect();
    let mut jobs = Vec::new();
    let mut built_by: BTreeMap<usize, String> = BTreeMap::new();
    let mut replaced: BTreeSet<PathBuf> = BTreeSet::new();
    let mut seen: Vec<(&str, &Path)> = Vec::new();
    // Builds of other repositories' checkouts: located at the deployer's path.
    let mut elsewhere: BTreeMap<usize, Span> = BTreeMap::new();
    for d in &deployers {
        // One deployer read in two renders (an overlay per environment) builds once.
        if seen.contains(&(d.id.as_str(), d.root.as_path())) {
            continue;
        }
        seen.push((d.id.as_str(), d.root.as_path()));
        for (span, message) in &d.problems {
            diags.warning(*span, message.clone());
        }
        // A path that is not here is another repository's (or a mistake): fetched with the
        // network allowed (`remote`), else a note rather than a silent pass.
        if !d.root.exists() {
            if let Some((scope, job)) = deploy_elsewhere(options, fetcher, d, sources, diags, discovery) {
                jobs.push((scope, job));
                built_by.insert(scope, d.id.clone());
                elsewhere.insert(scope, d.at);
            }
            continue;
        }
        if d.build.is_empty() {
            continue;
        }
        let Some(key) = canonical(&d.root).and_then(|c| by_dir.get(&c)) else {
            // Argo CD builds a path without a kustomization as a directory, without kustomize
            // options; Flux would generate one. Neither is built here with them.
            diags.push(Diagnostic::note(
                d.at,
                format!(
                    "`{}` has no kustomization file: kivi-lint checks it as plain files, without the kustomize options of {}",
                    display_path(&d.root).display(),
                    crate::diagnostics::printable(&d.id)
                ),
            ));
            continue;
        };
        let k = &discovery.kustomizations[key];
        let Some(file) = k.file_id else { continue };
        let components: Vec<PathBuf> = d
            .build
            .components
            .iter()
            .filter_map(|c| canonical(c).and_then(|c| by_dir.get(&c)).cloned())
            .collect();
        let closure: Vec<&PathBuf> = std::iter::once(key).chain(&components).collect();
        // Problems were reported when the repository's kustomizations were read.
        if closure
            .iter()
            .any(|c| closure_has_problems(c, &discovery.kustomizations))
        {
            continue;
        }
        if let Some(hit) = closure
            .iter()
            .find_map(|c| closure_limit(c, &discovery.kustomizations))
            .map(|(hit, _)| hit.clone())
        {
            discovery.leave_out(
                options,
                diags,
                hit.span,
                coverage::NotRendered {
                    limit: hit.limit,
                    source: format!("kustomization {}", display_path(&k.dir).display()),
                    detail: hit.detail.clone(),
                },
                &hit.help,
            );
            continue;
        }
        let scope = discovery.scopes.len();
        discovery.scopes.push(Scope {
            kind: ScopeKind::Kustomize,
            path: PathBuf::from(format!("{} ({})", display_path(&k.dir).display(), d.id)),
        });
        let dir = k.dir.clone();
        jobs.push((
            scope,
            Job::Kustomize {
                root: dir,
                file,
                // The components' changes apply after the path's own (the wrapper's order).
                changes: closure
                    .iter()
                    .flat_map(|c| overlay_changes(c, &discovery.kustomizations, sources))
                    .collect(),
                build: d.build.clone(),
                staged: None,
            },
        ));
        built_by.insert(scope, d.id.clone());
        if let Some(c) = canonical(&d.root)
            && !without_options.contains(&c)
        {
            replaced.insert(c);
        }
    }
    let dropped: BTreeSet<usize> = (0..discovery.scopes.len())
        .filter(|&i| {
            let scope = &discovery.scopes[i];
            scope.kind == ScopeKind::Kustomize
                && !built_by.contains_key(&i)
                && canonical(&scope.path).is_some_and(|p| replaced.contains(&p))
        })
        .collect();
    discovery.batches.retain(|b| !dropped.contains(&b.scope));
    run_renders(options, jobs, sources, diags, discovery);
    for batch in &mut discovery.batches {
        if let Some(id) = built_by.get(&batch.scope) {
            batch.deployer = Some(id.clone());
        }
        if let Some(at) = elsewhere.get(&batch.scope) {
            batch.file = at.file;
            for doc in &mut batch.documents {
                provenance::remap_all(&mut doc.root, *at);
            }
        }
    }
}

/// The build of a deployer whose path is another repository's (or a mistake): fetched with
/// the network allowed (`remote`), else a note rather than a silent pass.
fn deploy_elsewhere(
    options: &Options,
    fetcher: &fetch::Fetcher,
    d: &placeholders::Deployer,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) -> Option<(usize, Job)> {
    match remote::deploy(fetcher, d, sources, discovery) {
        remote::Deployed::Build { scope, job } => return Some((scope, *job)),
        remote::Deployed::Read | remote::Deployed::Chart => {}
        remote::Deployed::Left(limit, detail) => discovery.leave_out(
            options,
            diags,
            d.at,
            coverage::NotRendered {
                limit,
                source: d.id.clone(),
                detail,
            },
            "allow the network (--allow-network) to fetch it, scan the repository that holds that path too, or fix the path if it is meant to be this repository's",
        ),
        remote::Deployed::Failed(message) => diags.error(d.at, message),
    }
    None
}

//! The charts GitOps deployers install (Flux HelmReleases, Argo CD Applications' Helm
//! sources), each rendered as its own scope with the deployer's release name, namespace and
//! values (see `flux`, `argocd`); a chart it cannot have is a note.

use super::render::Job;
use super::*;

/// Render the chart of every Flux HelmRelease and every Helm source of an Argo CD Application
/// found, each its own scope; a chart it cannot have is a note (see `flux`, `argocd`).
pub(super) fn render_helm_releases(
    options: &Options,
    fetcher: &fetch::Fetcher,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    let roots = source_roots(options);
    // Each HelmRelease with the scope that deploys it (an overlay of its own per environment).
    let releases = deployed_releases(discovery, &roots, sources);
    drop_charts_rendered_alone(discovery, &releases);
    let mut jobs = Vec::new();
    // The values files live until the renders are done.
    let mut values_files = Vec::new();
    for (deployed_in, written_in, release) in releases {
        // Named after where it is deployed from: two overlays of one HelmRelease are two
        // environments.
        let shown = match discovery.scopes[deployed_in].kind {
            // Plain files: the directory of the deployer (a scope of its own later).
            ScopeKind::Files => display_path(sources.path(written_in).parent().unwrap_or(Path::new(""))),
            _ => discovery.scopes[deployed_in].path.clone(),
        };
        match release {
            release::Release::Local {
                id,
                chart,
                span,
                release_name,
                namespace,
                mut value_files,
                values,
            } => {
                // A chart of a chart repository is rendered from its archive, and its objects
                // are located at the HelmRelease that deploys it.
                let had = match chart {
                    release::Chart::Path(dir) => {
                        // Its dependencies, as the chart's own render stages them.
                        match render::chart_dependencies(&dir, &roots, options, fetcher, sources, diags, discovery) {
                            Some(local) => Ok((dir, None, local)),
                            None => continue,
                        }
                    }
                    release::Chart::Repository {
                        url,
                        name,
                        version,
                        detail,
                    } => fetcher
                        .chart(&url, &name, &version)
                        .map(|archive| (archive, Some(span), Vec::new()))
                        .map_err(|e| (e, detail, false)),
                    release::Chart::Git {
                        url,
                        reference,
                        path,
                        value_files: chart_values,
                        detail,
                        reported_elsewhere,
                    } => match fetcher.git(&url, &reference) {
                        Ok(tree) => {
                            let dir = crate::source::normalize(&tree.join(path.trim_start_matches("./")));
                            // Not a chart: its deployer reads it (`remote`).
                            if !dir.starts_with(&tree) || !dir.join("Chart.yaml").is_file() {
                                continue;
                            }
                            // The chart's own values files, before the `$ref` ones.
                            let own = chart_values
                                .iter()
                                .map(|written| crate::source::normalize(&dir.join(written)))
                                .filter(|file| file.starts_with(&tree) && file.is_file());
                            value_files = own.chain(value_files).collect();
                            let trees = [tree.clone()];
                            match render::chart_dependencies(&dir, &trees, options, fetcher, sources, diags, discovery)
                            {
                                Some(local) => Ok((dir, Some(span), local)),
                                None => continue,
                            }
                        }
                        Err(e) => Err((e, detail, reported_elsewhere)),
                    },
                };
                let (chart, located, local) = match had {
                    Ok(had) => had,
                    Err((_, _, true)) => continue,
                    Err((fetch::FetchError::NetworkOff, detail, _)) => {
                        let source = format!("{id} in {}", shown.display());
                        remote_chart(options, diags, discovery, span, source, detail, true);
                        continue;
                    }
                    Err((fetch::FetchError::Refused(why) | fetch::FetchError::Failed(why), _, _)) => {
                        diags.error(span, format!("{id}: its chart cannot be fetched: {why}"));
                        continue;
                    }
                };
                let file = tempfile::Builder::new()
                    .prefix("kivi-lint-values-")
                    .suffix(".json")
                    .tempfile()
                    .and_then(|mut f| std::io::Write::write_all(&mut f, values.as_bytes()).map(|()| f));
                let Ok(file) = file else {
                    diags.error(span, format!("{id}: cannot write its values to a temporary file"));
                    continue;
                };
                let scope = discovery.scopes.len();
                discovery.scopes.push(Scope {
                    kind: ScopeKind::Helm,
                    path: PathBuf::from(format!("{} ({id})", shown.display())),
                });
                jobs.push((
                    scope,
                    Job::Helm {
                        chart,
                        values: value_files.into_iter().chain([file.path().to_path_buf()]).collect(),
                        local,
                        release: Some((release_name, namespace)),
                        located,
                    },
                ));
                values_files.push(file);
            }
            release::Release::Remote { id, span, detail } => {
                let source = format!("{id} in {}", shown.display());
                remote_chart(options, diags, discovery, span, source, detail, false);
            }
            release::Release::Invalid { span, message } => diags.error(span, message),
        }
    }
    run_renders(options, jobs, sources, diags, discovery);
}

/// Each HelmRelease (and Argo CD Helm source) with the scope that deploys it (an overlay of
/// its own per environment) and the file it is written in.
fn deployed_releases(
    discovery: &Discovery,
    roots: &[PathBuf],
    sources: &SourceMap,
) -> Vec<(usize, FileId, release::Release)> {
    let documents: Vec<&Document> = discovery.batches.iter().flat_map(|b| &b.documents).collect();
    discovery
        .batches
        .iter()
        .flat_map(|b| b.documents.iter().map(move |d| (b.scope, d)))
        .flat_map(|(scope, d)| {
            let releases = if flux::is_helm_release(&d.root) {
                vec![flux::release(&d.root, &documents, &roots_near(roots, sources, &d.root))]
            } else if argocd::is_application(&d.root) {
                argocd::releases(&d.root, &roots_near(roots, sources, &d.root))
            } else {
                Vec::new()
            };
            releases.into_iter().map(move |r| (scope, d.root.span.file, r))
        })
        .collect()
}

/// A chart a deployer of the repository deploys is verified as deployed, not also alone with
/// its default values (which nobody installs): its own render is dropped, as a kustomize
/// base is not rendered alone. chart-testing's `ci/` renders stay.
fn drop_charts_rendered_alone(discovery: &mut Discovery, releases: &[(usize, FileId, release::Release)]) {
    let deployed: BTreeSet<PathBuf> = releases
        .iter()
        .filter_map(|(_, _, r)| match r {
            release::Release::Local {
                chart: release::Chart::Path(dir),
                ..
            } => std::fs::canonicalize(dir).ok(),
            _ => None,
        })
        .collect();
    let alone: BTreeSet<usize> = (0..discovery.scopes.len())
        .filter(|&i| {
            let scope = &discovery.scopes[i];
            scope.kind == ScopeKind::Helm
                && std::fs::canonicalize(&scope.path).is_ok_and(|p| p.is_dir() && deployed.contains(&p))
        })
        .collect();
    discovery.batches.retain(|b| !alone.contains(&b.scope));
}

/// A deployer's chart left out because it is remote: a note (`fetchable`: the network would
/// have it, a Helm chart repository's).
fn remote_chart(
    options: &Options,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
    span: Span,
    source: String,
    detail: String,
    fetchable: bool,
) {
    let help = if fetchable {
        "allow the network (--allow-network) to fetch it, or vendor the chart into this repository"
    } else {
        "vendor the chart into this repository and deploy it from there, or scan the rendered release"
    };
    discovery.leave_out(
        options,
        diags,
        span,
        coverage::NotRendered {
            limit: coverage::Limit::NetworkOff,
            source,
            detail,
        },
        help,
    );
}

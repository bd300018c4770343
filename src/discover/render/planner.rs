//! The renders of a scan planned: which kustomizations are roots and how each is built, and
//! each chart's renders.

use super::*;

/// What planning the renders of a scan reads: its options, the fetcher for remote bases and
/// charts, the filter of changed files, and the repositories kustomizations may build on.
pub(super) struct Planner<'a> {
    pub(super) options: &'a Options<'a>,
    pub(super) fetcher: &'a fetch::Fetcher,
    pub(super) filter: &'a Filter,
    pub(super) repositories: Vec<PathBuf>,
}

impl Planner<'_> {
    /// What kustomizations may build on: the repositories of the scanned paths and of the config
    /// file (their git work trees, else the paths and the config's directory), unless the user
    /// allowed more.
    pub(super) fn repositories(options: &Options) -> Vec<PathBuf> {
        scanned_dirs(options)
            .chain(
                options
                    .config
                    .path
                    .is_some()
                    .then_some(options.config.base_dir.as_path()),
            )
            .map(crate::config::repository_root)
            .chain(options.repository.and_then(|r| std::fs::canonicalize(r).ok()))
            .collect()
    }

    /// Every kustomization reachable from `dirs`, by normalized directory.
    pub(super) fn read_kustomizations<'d>(
        &self,
        dirs: impl Iterator<Item = &'d PathBuf>,
        sources: &mut SourceMap,
    ) -> BTreeMap<PathBuf, kustomize::Kustomization> {
        let mut kustomizations: BTreeMap<PathBuf, kustomize::Kustomization> = BTreeMap::new();
        let mut queue: Vec<PathBuf> = dirs.cloned().collect();
        while let Some(dir) = queue.pop() {
            let key = crate::source::normalize(&absolute(&dir));
            if kustomizations.contains_key(&key) {
                continue;
            }
            let Some(file) = kustomize::kustomization_file(&dir) else {
                continue;
            };
            let mut k = kustomize::read(&dir, &file, sources);
            if !self.options.allow_outside_repository {
                kustomize::confine(&mut k, &self.repositories);
            }
            queue.extend(k.dirs.iter().cloned());
            kustomizations.insert(key, k);
        }
        kustomizations
    }

    /// The render of the root kustomization `k` (at `key`): a job, else (`None`) its resources
    /// read directly when nothing transforms them, or a diagnostic saying why it is left out.
    pub(super) fn kustomization(
        &self,
        key: &Path,
        k: &kustomize::Kustomization,
        kustomizations: &BTreeMap<PathBuf, kustomize::Kustomization>,
        sources: &mut SourceMap,
        diags: &mut Diagnostics,
        discovery: &mut Discovery,
    ) -> Option<(usize, Job)> {
        let file = k.file_id?;
        // Anything wrong in what it builds on (a remote base above all) stops it here, before
        // the renderer could reach for the network.
        if closure_has_problems(key, kustomizations) {
            diags.push(Diagnostic::error(
                Span::point(file, Location::START),
                format!(
                    "kustomization {} is not rendered: fix the problems reported in it or in its bases",
                    display_path(&k.dir).display()
                ),
            ));
            return None;
        }
        // What kivi-lint cannot build (a remote base with the network off, a plugin) leaves
        // it out with one note, at the first such entry of its closure.
        // Remote bases and files, fetched (network allowed, or the cache), are built from a
        // staged copy.
        let mut builds_on = BTreeSet::new();
        closure(key, kustomizations, &mut builds_on);
        let closure_ks: Vec<&kustomize::Kustomization> =
            builds_on.iter().filter_map(|d| kustomizations.get(d)).collect();
        match stage::remote_closure(&closure_ks, k, &self.repositories, self.fetcher, sources) {
            stage::Staging::Staged(staged) => {
                let scope = discovery.scopes.len();
                discovery.scopes.push(Scope {
                    kind: ScopeKind::Kustomize,
                    path: display_path(&k.dir),
                });
                return Some((
                    scope,
                    Job::Kustomize {
                        root: k.dir.clone(),
                        file,
                        changes: overlay_changes(key, kustomizations, sources),
                        build: kustomize::BuildOptions::default(),
                        staged: Some(staged),
                    },
                ));
            }
            stage::Staging::Error(span, message) => {
                diags.error(span, message);
                return None;
            }
            stage::Staging::Left(span, not_rendered, help) => {
                discovery.leave_out(self.options, diags, span, not_rendered, help);
                return None;
            }
            stage::Staging::NotStaged => {}
        }
        if let Some((hit, more)) = closure_limit(key, kustomizations) {
            let more = match more {
                0 => String::new(),
                n => format!(" (and {n} more such entr{})", if n == 1 { "y" } else { "ies" }),
            };
            discovery.leave_out(
                self.options,
                diags,
                hit.span,
                coverage::NotRendered {
                    limit: hit.limit,
                    source: format!("kustomization {}", display_path(&k.dir).display()),
                    detail: format!("{}{more}", hit.detail),
                },
                &hit.help,
            );
            return None;
        }
        let scope = discovery.scopes.len();
        discovery.scopes.push(Scope {
            kind: ScopeKind::Kustomize,
            path: display_path(&k.dir),
        });
        let direct = resource_files(key, kustomizations).and_then(|files| read_resources_directly(&files, sources));
        match direct {
            // Nothing to transform: the resources as they are, with exact lines.
            Some(parsed) => {
                for (file, documents) in parsed {
                    discovery.files += 1;
                    discovery.batches.push(Batch {
                        scope,
                        deployer: None,
                        generated: false,
                        file,
                        documents,
                        default_namespace: "default".into(),
                    });
                }
                None
            }
            None => Some((
                scope,
                Job::Kustomize {
                    root: k.dir.clone(),
                    file,
                    changes: overlay_changes(key, kustomizations, sources),
                    build: kustomize::BuildOptions::default(),
                    staged: None,
                },
            )),
        }
    }

    /// The renders of a chart: one, or one per `ci/*-values.yaml`.
    pub(super) fn chart(
        &self,
        chart: &Path,
        sources: &mut SourceMap,
        diags: &mut Diagnostics,
        discovery: &mut Discovery,
        jobs: &mut Vec<(usize, Job)>,
    ) {
        let chart_file = chart.join("Chart.yaml");
        if !self.filter.admits(&chart_file) {
            return;
        }
        let Some(local) = chart_dependencies(
            chart,
            &self.repositories,
            self.options,
            self.fetcher,
            sources,
            diags,
            discovery,
        ) else {
            return;
        };
        let (values, missing) = helm::values_files(chart, &self.options.config.helm, &self.options.config.base_dir);
        if !missing.is_empty() {
            let file = chart_file_id(chart, sources);
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
        // chart-testing's convention: a chart that ships `ci/*-values.yaml` is installed once
        // per file, each an environment of its own.
        let variants = ci_values(chart);
        if variants.is_empty() {
            let scope = discovery.scopes.len();
            discovery.scopes.push(Scope {
                kind: ScopeKind::Helm,
                path: display_path(chart),
            });
            jobs.push((
                scope,
                Job::Helm {
                    chart: chart.to_path_buf(),
                    values: values.clone(),
                    local: local.clone(),
                    release: None,
                    located: None,
                },
            ));
        }
        for variant in variants {
            let scope = discovery.scopes.len();
            discovery.scopes.push(Scope {
                kind: ScopeKind::Helm,
                path: display_path(&variant),
            });
            jobs.push((
                scope,
                Job::Helm {
                    chart: chart.to_path_buf(),
                    values: values.iter().cloned().chain([variant]).collect(),
                    local: local.clone(),
                    release: None,
                    located: None,
                },
            ));
        }
    }
}

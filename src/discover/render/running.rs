//! Running the planned renders (kustomize builds and Helm charts) in parallel, each under a
//! time limit, their output read back into documents located in the repository.

use super::*;

pub(in crate::discover) fn run_renders(
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
    let results: Vec<Mutex<Option<Result<Rendered, RenderFailure>>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = options.jobs.clamp(1, jobs.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, job)) = jobs.get(i) else { break };
                    let started = std::time::Instant::now();
                    let result = render_job(job, kustomize_renderer.as_ref(), helm_binary.as_deref(), options);
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
            (
                Job::Kustomize {
                    root,
                    file,
                    changes,
                    staged,
                    ..
                },
                Ok(Rendered::Kustomize { text, wrapper }),
            ) => {
                let documents = attach_kustomize_origins(
                    &text,
                    KustomizeOutput {
                        root: &root,
                        kustomization: file,
                        wrapper: wrapper.path(),
                        changes: &changes,
                        staged: staged.as_ref(),
                    },
                    sources,
                    diags,
                    &mut source_cache,
                );
                discovery.batches.push(Batch {
                    scope,
                    deployer: None,
                    generated: false,
                    file,
                    documents,
                    default_namespace: "default".into(),
                });
            }
            (
                Job::Helm {
                    chart,
                    local,
                    release,
                    located,
                    ..
                },
                Ok(Rendered::Helm { text }),
            ) => {
                let chart_file = match located {
                    Some(at) => at.file,
                    None => chart_file_id(&chart, sources),
                };
                let mut documents = attach_helm_sources(&text, &chart, &local, sources, diags);
                if let Some(at) = located {
                    for doc in &mut documents {
                        provenance::remap_all(&mut doc.root, at);
                    }
                }
                discovery.batches.push(Batch {
                    scope,
                    deployer: None,
                    generated: false,
                    file: chart_file,
                    documents,
                    default_namespace: release.map_or_else(|| options.config.helm.namespace.clone(), |(_, ns)| ns),
                });
            }
            (Job::Kustomize { file, .. }, Err(failure)) => {
                diags.error(Span::point(file, Location::START), failure.to_string())
            }
            (
                Job::Helm { chart, local, .. },
                Err(RenderFailure::Helm(helm::RenderError::NeedsValues {
                    template,
                    line,
                    column,
                    message,
                })),
            ) => {
                // The template's `fail` or `required`, at its line: the chart needs values the
                // repository does not give it here. Not a configuration problem.
                let at = match helm::template_path(&chart, &template, &local) {
                    Some(helm::TemplateAt::File(path)) => {
                        let shown = display_path(&path);
                        let id = sources
                            .find(&shown)
                            .unwrap_or_else(|| sources.add(shown, read_text(&path).unwrap_or_default()));
                        Span::point(id, Location { line, column })
                    }
                    Some(helm::TemplateAt::Dependency(at)) => at,
                    None => Span::point(chart_file_id(&chart, sources), Location::START),
                };
                discovery.leave_out(
                    options,
                    diags,
                    at,
                    coverage::NotRendered {
                        limit: coverage::Limit::NeedsValues,
                        source: format!("chart {}", display_path(&chart).display()),
                        detail: format!(
                            "its template stops without a value: {}",
                            crate::diagnostics::printable(&message)
                        ),
                    },
                    "give the chart values (config `helm.values`, or chart-testing's `ci/*-values.yaml` in the chart)",
                );
            }
            (Job::Helm { chart, .. }, Err(failure)) => {
                let file = chart_file_id(&chart, sources);
                diags.error(Span::point(file, Location::START), failure.to_string());
            }
            _ => unreachable!("each job yields its own kind of output"),
        }
    }
}

/// One planned render, with the renderers found on this machine.
fn render_job(
    job: &Job,
    kustomize_renderer: Option<&kustomize::Renderer>,
    helm_binary: Option<&Path>,
    options: &Options,
) -> Result<Rendered, RenderFailure> {
    match job {
        Job::Kustomize {
            root, build, staged, ..
        } => match kustomize_renderer {
            Some(r) => kustomize::render(
                &staged.as_ref().map_or_else(|| root.clone(), |s| s.copy_of(root)),
                r,
                build,
            )
            .map(|(text, wrapper)| Rendered::Kustomize { text, wrapper })
            .map_err(RenderFailure::Other),
            None => Err(RenderFailure::Other(
                "neither `kustomize` nor `kubectl` is on PATH: cannot build this kustomization".into(),
            )),
        },
        Job::Helm {
            chart,
            values,
            local,
            release,
            ..
        } => match helm_binary {
            Some(h) => render_chart(h, chart, values, local, release.as_ref(), options),
            None => Err(RenderFailure::Other(
                "`helm` is not on PATH: cannot render this chart (install Helm, or add the chart to `exclude`)".into(),
            )),
        },
    }
}

/// Why a render failed.
pub(super) enum RenderFailure {
    Helm(helm::RenderError),
    Other(String),
}

impl std::fmt::Display for RenderFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderFailure::Helm(e) => e.fmt(f),
            RenderFailure::Other(message) => f.write_str(message),
        }
    }
}

/// `helm template` of `chart`, staged with its `file://` dependencies when it has any.
fn render_chart(
    helm: &Path,
    chart: &Path,
    values: &[PathBuf],
    local: &[helm::Subchart],
    release: Option<&(String, String)>,
    options: &Options,
) -> Result<Rendered, RenderFailure> {
    let staged = if local.is_empty() {
        None
    } else {
        Some(
            helm::stage(chart, local)
                .map_err(|e| RenderFailure::Other(format!("cannot stage the chart's `file://` dependencies: {e}")))?,
        )
    };
    let at = staged.as_ref().map_or(chart, |d| d.path());
    let mut helm_options = options.config.helm.clone();
    if let Some((name, namespace)) = release {
        helm_options.release_name = name.clone();
        helm_options.namespace = namespace.clone();
    }
    helm::render(helm, at, &helm_options, values)
        .map(|text| Rendered::Helm { text })
        .map_err(RenderFailure::Helm)
}

pub(in crate::discover) fn chart_file_id(chart: &Path, sources: &mut SourceMap) -> FileId {
    let path = chart.join("Chart.yaml");
    let shown = display_path(&path);
    sources
        .find(&shown)
        .unwrap_or_else(|| sources.add(shown, read_text(&path).unwrap_or_default()))
}

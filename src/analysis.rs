//! The pipeline from paths to verification units, as one call with plain inputs and outputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::checks::CheckId;
use crate::config::{Config, Environment, EnvironmentEvent, PreviousWorkload};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::discover::{self, Scope};
use crate::manifest::{self, Body, Object, Skipped};
use crate::source::{Location, SourceMap, Span};
use crate::units::{self, Unit};

/// What to analyse.
#[derive(Clone, Debug)]
pub struct Request {
    pub paths: Vec<PathBuf>,
    pub config: Option<PathBuf>,
    pub stdin_filename: Option<String>,
    /// Render kustomize directories and Helm charts.
    pub render: bool,
    pub jobs: usize,
    /// The config may name files outside its repository (`--allow-outside-repository`).
    pub allow_outside_repository: bool,
    /// A scan that finds no Kubernetes object is not an error (`--allow-empty`; pre-commit's
    /// changed files; a base revision). Otherwise it is: a wrong path or an empty mount must
    /// not pass as "nothing wrong".
    pub allow_empty: bool,
    /// The repository the scanned paths belong to, where it is known better than from the
    /// paths (a base revision checked out without its `.git`); else their git work tree.
    pub repository: Option<PathBuf>,
    /// The id of the first file read (see [`SourceMap::numbered_from`]); 0 but in PR mode.
    pub file_ids_from: u32,
    /// A source that cannot be rendered here is an input error, not a note (`--strict`).
    pub strict: bool,
    /// `--allow-network` and `--allow-host`, and where fetched charts are cached; the
    /// config's `render` section is added to it.
    pub network: discover::fetch::Network,
    /// `--cluster-state`: the running cluster (its nodes, and its pods on them) in place of
    /// the config's cluster and initial pods.
    pub cluster_state: Option<crate::config::cluster_state::Source>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    pub discover: Duration,
    pub manifests: Duration,
    pub units: Duration,
}

/// Everything the stages produced, for the reports.
#[derive(Debug)]
pub struct Analysis {
    pub sources: SourceMap,
    /// The config as written.
    pub config: Config,
    /// What the scan read of the files it names.
    pub environment: Environment,
    pub scopes: Vec<Scope>,
    pub objects: Vec<Object>,
    pub skipped: Vec<Skipped>,
    pub units: Vec<Unit>,
    pub diagnostics: Diagnostics,
    /// Sources not rendered, and why (`discover::coverage`).
    pub not_rendered: Vec<discover::coverage::NotRendered>,
    /// Remote charts the renders used.
    pub fetched: Vec<discover::fetch::Fetched>,
    /// Files read one by one, and renders attempted.
    pub files: usize,
    pub renders: usize,
    pub timings: Timings,
    /// The `--cluster-state` could not be read (its errors are diagnostics): nothing is
    /// verified, as the verdicts would be about another cluster.
    pub cluster_unread: Option<String>,
}

impl Analysis {
    pub fn objects_by_kind(&self) -> BTreeMap<String, usize> {
        manifest::count_by_kind(self.objects.iter().filter(|o| !o.embedded))
    }

    /// A check's level: config `checks.severity`, else the check's default.
    pub fn check_level(&self, check: CheckId) -> crate::checks::Level {
        self.config
            .checks
            .severity
            .get(&check)
            .copied()
            .unwrap_or(check.check().level)
    }
}

pub fn analyze(request: &Request) -> Analysis {
    let mut sources = SourceMap::numbered_from(request.file_ids_from);
    let mut diags = Diagnostics::default();
    let mut config = load_config(request, &mut sources, &mut diags);
    // The command line's running cluster takes the place of the config's.
    let errors_before = diags.count(crate::diagnostics::Severity::Error);
    let cluster_state = (request.cluster_state.as_ref())
        .map(|source| crate::config::cluster_state::load(source, &mut sources, &mut diags));
    let cluster_unread = (diags.count(crate::diagnostics::Severity::Error) > errors_before).then(|| {
        "the cluster state (--cluster-state) could not be read (its errors are above): nothing is verified against another cluster".to_string()
    });
    // The previous revision of an `apply` event is history, not part of the scan; a saved
    // cluster state in the tree is input, not manifests.
    let mut history = previous_revision_dir(&config);
    history.extend(
        (request.cluster_state.as_ref())
            .and_then(|s| s.path())
            .and_then(|p| inside(&config.base_dir, p)),
    );

    // The config may turn the network on and narrow the hosts; only the command line may
    // trust a host on a private range.
    let network = discover::fetch::Network {
        allowed: request.network.allowed || (config.render.network && !request.network.forbidden),
        allowed_hosts: config.render.allow_hosts.clone(),
        ..request.network.clone()
    };
    let start = Instant::now();
    let discovery = discover::discover(
        &discover::Options {
            paths: &request.paths,
            stdin_filename: request.stdin_filename.as_deref(),
            config: &config,
            render: request.render,
            jobs: request.jobs,
            allow_outside_repository: request.allow_outside_repository,
            repository: request.repository.as_deref(),
            strict: request.strict,
            network: &network,
            history: &history,
        },
        &mut sources,
        &mut diags,
    );
    let discover_time = start.elapsed();

    let start = Instant::now();
    let mut objects = Vec::new();
    let mut skipped = Vec::new();
    for batch in &discovery.batches {
        let loaded = manifest::load(&batch.documents, &batch.default_namespace, &sources, &mut diags);
        objects.extend(loaded.objects.into_iter().map(|mut o| {
            o.scope = batch.scope;
            o.embedded |= batch.generated;
            o
        }));
        skipped.extend(loaded.skipped);
    }
    for &file in &discovery.empty_files {
        skipped.push(Skipped {
            span: Span::point(file, Location::START),
            reason: "file holds no YAML document".into(),
        });
    }
    if objects.is_empty() && !request.allow_empty && !diags.has_errors() {
        no_objects(request, discovery.not_rendered.len(), &mut sources, &mut diags);
    }
    mark_invalid(&mut objects, &diags);
    if let Some(state) = &cluster_state {
        if let Some(cluster) = state.cluster(&objects, &mut diags) {
            config.cluster = cluster;
        }
        if !state.pods.is_empty() {
            config.initial_pods =
                crate::config::cluster_state::initial_pods(state, &config.cluster, &objects, state.at, &mut diags);
        }
    }
    if !config.comparison_operators {
        for span in objects.iter_mut().flat_map(|o| o.without_comparison_operators()) {
            diags.push(Diagnostic::note(
                span,
                "this `Gt`/`Lt` toleration tolerates nothing: the TaintTolerationComparisonOperators feature gate is off (config `featureGates`)",
            ));
        }
    }
    let mut scopes = discovery.scopes;
    crate::scopes::split_file_scopes(&mut objects, &mut scopes, &sources);
    // What the config names (the scheduler's profile, the previous revision), read once; the
    // config stays as written. An assumed cluster is widened per unit, once the units are known.
    let policy = config_policy(&config, &mut objects, &mut sources, &mut diags);
    let environment = Environment {
        scheduler_profile: load_scheduler_config(&config, &mut sources, &mut diags),
        previous_revision: previous_revision(&config, request, &mut diags),
        history,
    };
    check_duplicates(&mut objects, &scopes, &sources, &mut diags);
    check_config_references(&config, &objects, &mut diags);
    check_ignore_annotations(&objects, &mut diags);
    let manifests_time = start.elapsed();

    let start = Instant::now();
    let scope_paths: Vec<String> = scopes.iter().map(|s| s.path.display().to_string()).collect();
    let mut units = units::build(&objects, &config, &scope_paths, policy, &mut diags);
    units::assumed::assume_per_unit(&config.cluster, &objects, &mut units, &mut diags);
    let units_time = start.elapsed();

    diags.sort(&sources);
    skipped.sort_by(|a, b| (sources.path(a.span.file), a.span.start).cmp(&(sources.path(b.span.file), b.span.start)));
    Analysis {
        sources,
        config,
        environment,
        scopes,
        objects,
        skipped,
        units,
        diagnostics: diags,
        not_rendered: discovery.not_rendered,
        fetched: discovery.fetched,
        files: discovery.files,
        renders: discovery.renders,
        timings: Timings {
            discover: discover_time,
            manifests: manifests_time,
            units: units_time,
        },
        cluster_unread,
    }
}

fn load_config(request: &Request, sources: &mut SourceMap, diags: &mut Diagnostics) -> Config {
    if let Some(path) = &request.config {
        tracing::info!("using config {}", path.display());
        return Config::load(
            path,
            &discover::display_path(path),
            sources,
            diags,
            request.allow_outside_repository,
        );
    }
    let start = request
        .paths
        .iter()
        .find(|p| p.as_os_str() != "-")
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    match Config::discover(&start) {
        Some(path) => {
            tracing::info!("using config {}", discover::display_path(&path).display());
            Config::load(
                &path,
                &discover::display_path(&path),
                sources,
                diags,
                request.allow_outside_repository,
            )
        }
        None => {
            tracing::info!(
                "no .kivi-lint.yaml found from {}; using the embedded default config (see `kivi-lint config --default`)",
                start.display()
            );
            let base = if start.is_dir() {
                start.clone()
            } else {
                start.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            Config::default_for(&base, sources)
        }
    }
}

/// The DeschedulerPolicy named by `descheduler.policy`: found among the scanned objects, or
/// read from its file.
fn config_policy(
    config: &Config,
    objects: &mut Vec<Object>,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Option<usize> {
    let path = config.descheduler.policy.as_ref()?;
    let shown = discover::display_path(&path.value);
    let is_policy = |o: &Object| matches!(o.body, Body::DeschedulerPolicy(_));
    if let Some(i) = objects
        .iter()
        .position(|o| is_policy(o) && sources.path(o.span.file) == shown)
    {
        return Some(i);
    }
    let text = match discover::read_source(&path.value) {
        Ok(t) => t,
        Err(e) => {
            diags.push(Diagnostic::error(
                path.span,
                format!("`descheduler.policy`: {}", e.message),
            ));
            return None;
        }
    };
    let (_, loaded) = manifest::load_text(sources, &shown.to_string_lossy(), &text, diags);
    let first = loaded.objects.into_iter().find(is_policy);
    match first {
        Some(mut o) => {
            o.scope = usize::MAX;
            objects.push(o);
            Some(objects.len() - 1)
        }
        None => {
            diags.push(Diagnostic::error(
                path.span,
                format!("`descheduler.policy`: {} holds no DeschedulerPolicy", shown.display()),
            ));
            None
        }
    }
}

/// The `default-scheduler` profile of the KubeSchedulerConfiguration named by
/// `scheduler.config`: its score weights, scoring strategy and default spread constraints drive
/// the model's scheduler.
fn load_scheduler_config(
    config: &Config,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Option<crate::manifest::scheduler_config::SchedulerProfile> {
    let path = config.scheduler.config.as_ref()?;
    let shown = discover::display_path(&path.value);
    match discover::read_source(&path.value) {
        Ok(text) => {
            let (_, loaded) = manifest::load_text(sources, &shown.to_string_lossy(), &text, diags);
            let profile = loaded.objects.iter().find_map(|o| match &o.body {
                Body::SchedulerConfiguration(c) if c.profiles.is_empty() => Some(Default::default()),
                Body::SchedulerConfiguration(c) => Some(c.profile("default-scheduler").cloned().unwrap_or_else(|| {
                    diags.push(Diagnostic::warning(
                        o.span,
                        "this KubeSchedulerConfiguration has no `default-scheduler` profile; the model uses the defaults",
                    ));
                    crate::manifest::scheduler_config::SchedulerProfile::default()
                })),
                _ => None,
            });
            if profile.is_none() {
                diags.push(Diagnostic::error(
                    path.span,
                    format!(
                        "`scheduler.config`: {} holds no KubeSchedulerConfiguration",
                        shown.display()
                    ),
                ));
            }
            profile
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                path.span,
                format!("`scheduler.config`: {}", e.message),
            ));
            None
        }
    }
}

/// The globs that leave out an `apply` event's `from` directory when it is inside the scanned
/// tree: it holds the previous revision, not part of the current one.
fn previous_revision_dir(config: &Config) -> Vec<String> {
    let Some(EnvironmentEvent::Apply { from }) = config.apply_from().map(|e| &e.value) else {
        return Vec::new();
    };
    if !config.base_dir.join(from).is_dir() {
        return Vec::new();
    }
    let rel = from.trim_start_matches("./").trim_end_matches('/').to_string();
    if rel.is_empty() || rel.starts_with("..") {
        return Vec::new();
    }
    vec![rel.clone(), format!("{rel}/**")]
}

/// `path` relative to `base`, when it is inside it.
fn inside(base: &std::path::Path, path: &std::path::Path) -> Option<String> {
    let (base, path) = (std::fs::canonicalize(base).ok()?, std::fs::canonicalize(path).ok()?);
    Some(path.strip_prefix(base).ok()?.to_str()?.to_string()).filter(|r| !r.is_empty())
}

/// Read the `apply` event's previous revision: its workloads' replicas and pod templates. Its
/// own problems are summed up in one warning (it is history, not what is being checked).
fn previous_revision(config: &Config, request: &Request, diags: &mut Diagnostics) -> Option<Vec<PreviousWorkload>> {
    let event = config.apply_from()?;
    let EnvironmentEvent::Apply { from } = &event.value else {
        return None;
    };
    let revision = match discover::revision::resolve(&config.base_dir, from) {
        Ok(r) => r,
        Err(e) => {
            diags.push(Diagnostic::error(event.span, format!("`apply`: {e}")));
            return None;
        }
    };
    // The whole previous revision, whatever `include` and `exclude` select of the current one:
    // a filter that misses its directory must not turn the apply into a creation.
    let mut old_config = config.clone();
    old_config.base_dir = revision.root.clone();
    old_config.include = vec!["**".to_string()];
    old_config.exclude = Vec::new();
    let mut sources = SourceMap::default();
    let mut old_diags = Diagnostics::default();
    let discovery = discover::discover(
        &discover::Options {
            paths: std::slice::from_ref(&revision.root),
            stdin_filename: None,
            config: &old_config,
            render: request.render,
            jobs: request.jobs,
            allow_outside_repository: request.allow_outside_repository,
            repository: None,
            strict: false,
            network: &request.network,
            history: &[],
        },
        &mut sources,
        &mut old_diags,
    );
    let mut workloads = Vec::new();
    for batch in &discovery.batches {
        let loaded = manifest::load(&batch.documents, &batch.default_namespace, &sources, &mut old_diags);
        for o in loaded.objects {
            if let Some(w) = o.workload() {
                workloads.push(PreviousWorkload {
                    id: o.id.clone(),
                    replicas: w.replicas.as_ref().map(|r| r.value),
                    template_hash: w.template_hash,
                });
            }
        }
    }
    if workloads.is_empty() {
        diags.push(Diagnostic::error(
            event.span,
            format!(
                "`apply`: the previous revision `{from}` holds no workloads, so there is nothing the apply could change"
            ),
        ));
        return None;
    }
    let errors = old_diags.count(crate::diagnostics::Severity::Error);
    if errors > 0 {
        diags.push(Diagnostic::warning(
            event.span,
            format!("`apply`: the previous revision `{from}` has {errors} error(s) in its manifests; its other objects are used"),
        ));
    }
    Some(workloads)
}

/// The same object twice in one scope: `kubectl apply` keeps only the last, so earlier ones
/// are shadowed and left out of the units.
fn check_duplicates(objects: &mut [Object], scopes: &[Scope], sources: &SourceMap, diags: &mut Diagnostics) {
    let mut last: BTreeMap<(usize, String), usize> = BTreeMap::new();
    for i in 0..objects.len() {
        let o = &objects[i];
        if o.id.name.is_empty() || o.embedded {
            continue;
        }
        if let Some(earlier) = last.insert((o.scope, o.id.to_string()), i) {
            let scope = scopes
                .get(o.scope)
                .map(|s| s.path.display().to_string())
                .unwrap_or_default();
            let first = &objects[earlier].span;
            diags.push(Diagnostic::warning(
                o.span,
                format!(
                    "{} is defined more than once in {scope} (also at {}:{}); the last definition wins",
                    o.id,
                    sources.path(first.file).display(),
                    first.start.line
                ),
            ));
            objects[earlier].shadowed = true;
        }
    }
}

/// `ignore-check.kivi-lint.io/<check>` annotations must name a check and give a reason.
fn check_ignore_annotations(objects: &[Object], diags: &mut Diagnostics) {
    for o in objects {
        for ignore in &o.ignores {
            if let Some(check) = &ignore.check
                && crate::checks::find(check).is_none()
            {
                diags.push(
                    Diagnostic::warning(
                        ignore.span,
                        format!(
                            "`{}{check}` names no check; it suppresses nothing",
                            crate::manifest::IGNORE_CHECK_PREFIX
                        ),
                    )
                    .with_help(format!("known checks: {}", crate::checks::known_names())),
                );
            }
            if ignore.reason.trim().is_empty() {
                diags.push(Diagnostic::warning(
                    ignore.span,
                    "a suppression annotation should say why in its value",
                ));
            }
        }
    }
}

/// Objects named in the config that no scanned object matches.
fn check_config_references(config: &Config, objects: &[Object], diags: &mut Diagnostics) {
    let known: BTreeSet<String> = objects.iter().map(|o| o.id.to_string()).collect();
    for p in &config.initial_pods {
        if !known.contains(&p.workload.to_string()) {
            diags.push(Diagnostic::warning(
                p.span,
                format!(
                    "`initialPods` names {}, which is not among the scanned objects",
                    p.workload
                ),
            ));
        }
    }
    for (id, assumptions) in &config.workloads {
        if !known.contains(&id.to_string()) {
            diags.push(Diagnostic::warning(
                assumptions.span,
                format!("`workloads` names {id}, which is not among the scanned objects"),
            ));
        }
    }
    let today = crate::config::Date::today();
    for s in &config.suppressions {
        if let Some(expires) = s.expires.filter(|e| *e < today) {
            diags.push(Diagnostic::warning(
                s.span,
                format!(
                    "the suppression of {} for {} expired on {expires}: its findings count again",
                    s.check, s.object
                ),
            ));
        }
        if !known.contains(&s.object.to_string()) {
            diags.push(Diagnostic::warning(
                s.span,
                format!("suppression for {}, which is not among the scanned objects", s.object),
            ));
        }
    }
}

/// The error of a scan that found no Kubernetes object, at the first path scanned.
fn no_objects(request: &Request, not_rendered: usize, sources: &mut SourceMap, diags: &mut Diagnostics) {
    let shown: Vec<String> = request
        .paths
        .iter()
        .map(|p| crate::diagnostics::printable(&discover::display_path(p).display().to_string()).into_owned())
        .collect();
    let first = request
        .paths
        .first()
        .map_or_else(|| std::path::PathBuf::from("."), |p| discover::display_path(p));
    let file = sources.add(first, "");
    diags.push(
        Diagnostic::error(
            Span::point(file, Location::START),
            format!("no Kubernetes objects found under {}: nothing was verified", shown.join(", ")),
        )
        .with_help(if not_rendered > 0 {
            format!(
                "{} could not be rendered here (see the notes); pass --allow-empty where an empty scan is expected",
                crate::diagnostics::plural(not_rendered, "source")
            )
        } else {
            "check the path (the image scans /repo: mount the repository there); pass --allow-empty where an empty scan is expected".to_string()
        }),
    );
}

/// Objects with an input error inside them are reported once, as that error, and not verified.
fn mark_invalid(objects: &mut [Object], diags: &Diagnostics) {
    let errors: Vec<Span> = diags
        .iter()
        .filter(|d| d.severity == crate::diagnostics::Severity::Error)
        .map(|d| d.span)
        .collect();
    for o in objects.iter_mut().filter(|o| !o.embedded) {
        o.invalid = errors
            .iter()
            .any(|e| e.file == o.span.file && o.span.start <= e.start && e.start <= o.span.end);
    }
}

//! `.kivi-lint.yaml`: what kivi-lint assumes about the cluster and the environment.
//!
//! The schema is fixed (other tooling writes these files): unknown fields are located errors.
//! Without a file the embedded default (`default.yaml`) is used.

pub mod assumed;
pub mod cluster;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::checks::{self, Level};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::ObjectId;
use crate::manifest::pod::Amounts;
use crate::manifest::quantity::IntOrPercent;
use crate::manifest::read::{Reader, truncate};
use crate::manifest::scheduler_config::ScoringStrategy;
use crate::source::{SourceMap, Span, Spanned};
use crate::yaml::{self, Node};

pub use cluster::{Cluster, NodePool};

pub const DEFAULT_CONFIG: &str = include_str!("default.yaml");
pub const FILE_NAMES: &[&str] = &[".kivi-lint.yaml", ".kivi-lint.yml"];

#[derive(Clone, Debug, PartialEq)]
pub struct HelmOptions {
    pub values: Vec<PathBuf>,
    pub release_name: String,
    pub namespace: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InitialPods {
    pub workload: ObjectId,
    pub node: String,
    pub count: u32,
    pub span: Span,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SchedulerOptions {
    pub scoring_strategy: Option<Spanned<ScoringStrategy>>,
    pub config: Option<Spanned<PathBuf>>,
    /// The `default-scheduler` profile of the KubeSchedulerConfiguration at `config`, once the
    /// analysis has read it.
    pub profile: Option<crate::manifest::scheduler_config::SchedulerProfile>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeschedulerOptions {
    pub policy: Option<Spanned<PathBuf>>,
    pub interval_seconds: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Startup {
    pub cpu_millis: Option<i64>,
    pub memory_bytes: Option<i64>,
    pub seconds: u32,
}

/// Assumptions about one workload's resource usage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadAssumptions {
    /// Steady usage per pod; default: the requests.
    pub usage: Option<Amounts>,
    pub startup: Option<Startup>,
    pub span: Span,
}

/// What the environment may do; explored non-deterministically by the model.
#[derive(Clone, Debug, PartialEq)]
pub enum EnvironmentEvent {
    /// Per-pod usage may move between 0 and `max_percent` of the request.
    LoadChange {
        workloads: Vec<String>,
        max_percent: u32,
    },
    /// `count` nodes go NotReady; pods are evicted after tolerationSeconds.
    NodeFailure {
        count: u32,
        recover: bool,
    },
    NodeMaintenance,
    NodeDrain,
    NodeOverload {
        threshold_percent: u32,
    },
    Apply {
        from: String,
    },
    GitopsSync,
    /// The cluster autoscaler grows the listed pools (`*`: every pool with `min < max`) while
    /// pods are Pending and shrinks them by nodes whose requests are under
    /// `scale_down_utilization` percent of allocatable.
    ClusterAutoscaler {
        pools: Vec<String>,
        scale_down_utilization: u32,
    },
}

impl EnvironmentEvent {
    /// Whether the cluster autoscaler of this event scales `pool`.
    pub fn autoscales(&self, pool: &NodePool) -> bool {
        match self {
            EnvironmentEvent::ClusterAutoscaler { pools, .. } => {
                pool.min < pool.max && pools.iter().any(|p| p == "*" || *p == pool.name)
            }
            _ => false,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            EnvironmentEvent::LoadChange { .. } => "load-change",
            EnvironmentEvent::NodeFailure { .. } => "node-failure",
            EnvironmentEvent::NodeMaintenance => "node-maintenance",
            EnvironmentEvent::NodeDrain => "node-drain",
            EnvironmentEvent::NodeOverload { .. } => "node-overload",
            EnvironmentEvent::Apply { .. } => "apply",
            EnvironmentEvent::GitopsSync => "gitops-sync",
            EnvironmentEvent::ClusterAutoscaler { .. } => "cluster-autoscaler",
        }
    }

    /// Whether this event evicts or deletes running pods.
    pub fn evicts(&self) -> bool {
        matches!(
            self,
            EnvironmentEvent::NodeFailure { .. }
                | EnvironmentEvent::NodeMaintenance
                | EnvironmentEvent::NodeDrain
                | EnvironmentEvent::NodeOverload { .. }
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChecksConfig {
    /// Canonical ids; empty means every check that applies.
    pub enable: Vec<&'static str>,
    pub disable: Vec<&'static str>,
    pub severity: BTreeMap<&'static str, Level>,
    pub params: BTreeMap<&'static str, BTreeMap<&'static str, i64>>,
}

impl ChecksConfig {
    /// A check runs when `enable` lists it, or when `enable` is empty and the check is on by
    /// default; `disable` always wins.
    pub fn is_enabled(&self, id: &str) -> bool {
        let by_default = crate::checks::find(id).is_none_or(|c| c.default_enabled);
        (if self.enable.is_empty() {
            by_default
        } else {
            self.enable.contains(&id)
        }) && !self.disable.contains(&id)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaling {
    pub max_nodes: u32,
    pub pods_per_node: u32,
    /// At most this many topologies per unit, smallest first.
    pub max_topologies: u32,
    /// The state-space reductions: a workload's identical pods are one class, and usage
    /// levels nothing reads are not explored (off only to compare).
    pub symmetry: bool,
}

/// A calendar date, `YYYY-MM-DD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

impl Date {
    pub fn parse(s: &str) -> Option<Date> {
        let mut it = s.splitn(3, '-');
        let (y, m, d) = (it.next()?, it.next()?, it.next()?);
        if y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return None;
        }
        let date = Date {
            year: y.parse().ok()?,
            month: m.parse().ok()?,
            day: d.parse().ok()?,
        };
        let leap = date.year.is_multiple_of(4) && (!date.year.is_multiple_of(100) || date.year.is_multiple_of(400));
        let days = match date.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days).contains(&date.day).then_some(date)
    }

    /// Today in UTC, or `KIVI_LINT_TODAY` (`YYYY-MM-DD`) when set, so expiry is testable.
    pub fn today() -> Date {
        if let Some(d) = std::env::var("KIVI_LINT_TODAY").ok().and_then(|t| Date::parse(&t)) {
            return d;
        }
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Date::from_days_since_epoch((secs / 86_400) as i64)
    }

    /// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    fn from_days_since_epoch(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as u16;
        Date { year, month, day }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Suppression {
    pub check: &'static str,
    pub object: ObjectId,
    pub reason: String,
    pub expires: Option<Date>,
    pub span: Span,
}

/// A loaded configuration, with every relative path resolved against `base_dir`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it was read from; `None` for the embedded default.
    pub path: Option<PathBuf>,
    pub base_dir: PathBuf,
    pub kubernetes_version: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub helm: HelmOptions,
    pub cluster: Cluster,
    pub initial_pods: Vec<InitialPods>,
    pub scheduler: SchedulerOptions,
    pub descheduler: DeschedulerOptions,
    pub workloads: BTreeMap<ObjectId, WorkloadAssumptions>,
    pub events: Vec<Spanned<EnvironmentEvent>>,
    pub checks: ChecksConfig,
    pub scaling: Scaling,
    pub suppressions: Vec<Suppression>,
    /// `faults: [stale-reads]`: how many deletions of running pods the scheduler's and the
    /// descheduler's informers may not have delivered yet (`lag`, default 1).
    pub stale_reads: Option<Spanned<u32>>,
    /// The workloads of the `apply` event's previous revision, once the analysis has read it.
    pub previous_revision: Option<Vec<PreviousWorkload>>,
    /// `featureGates.TaintTolerationComparisonOperators` (alpha): tolerations with `Gt` and
    /// `Lt` compare numbers when on (the default here); off, they tolerate nothing.
    pub comparison_operators: bool,
}

/// A workload as the `apply` event's previous revision writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct PreviousWorkload {
    pub id: ObjectId,
    /// `spec.replicas`, if written.
    pub replicas: Option<i32>,
    pub template_hash: u64,
}

impl Config {
    /// The `apply` event's `from`, if the config has one.
    pub fn apply_from(&self) -> Option<&Spanned<EnvironmentEvent>> {
        self.events
            .iter()
            .find(|e| matches!(e.value, EnvironmentEvent::Apply { .. }))
    }

    /// The embedded default, resolved against `base_dir`.
    pub fn default_for(base_dir: &Path, sources: &mut SourceMap) -> Config {
        let mut diags = Diagnostics::default();
        let config = Config::parse(
            DEFAULT_CONFIG,
            Path::new("<default config>"),
            None,
            base_dir,
            sources,
            &mut diags,
        );
        debug_assert!(diags.is_empty(), "embedded default config is valid: {diags:?}");
        let mut config = config;
        config.cluster.assumed = true;
        config
    }

    /// Read a config file. Problems are reported as located diagnostics; fields with errors
    /// keep their defaults so that the rest of the run can go on.
    /// The files the config names (`cluster.fromNodes`, `scheduler.config`,
    /// `descheduler.policy`, an `apply` event's `from` directory) must be inside the
    /// repository that holds it (its git work tree, else its directory) unless
    /// `allow_outside` (the `--allow-outside-repository` flag): a pull request's config must
    /// not read, and echo in an error, the runner's files.
    pub fn load(
        path: &Path,
        shown_path: &Path,
        sources: &mut SourceMap,
        diags: &mut Diagnostics,
        allow_outside: bool,
    ) -> Config {
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let confine = (!allow_outside).then(|| repository_root(&base_dir));
        match crate::source::read_text(path) {
            Ok(text) => Config::parse_confined(
                &text,
                shown_path,
                Some(path.to_path_buf()),
                &base_dir,
                confine.as_deref(),
                sources,
                diags,
            ),
            Err(message) => {
                let file = sources.add(shown_path, "");
                diags.push(Diagnostic::error(Span::point(file, Default::default()), message));
                let mut config = Config::default_for(&base_dir, sources);
                config.path = Some(path.to_path_buf());
                config
            }
        }
    }

    pub fn parse(
        text: &str,
        shown_path: &Path,
        path: Option<PathBuf>,
        base_dir: &Path,
        sources: &mut SourceMap,
        diags: &mut Diagnostics,
    ) -> Config {
        Config::parse_confined(text, shown_path, path, base_dir, None, sources, diags)
    }

    fn parse_confined(
        text: &str,
        shown_path: &Path,
        path: Option<PathBuf>,
        base_dir: &Path,
        confine: Option<&Path>,
        sources: &mut SourceMap,
        diags: &mut Diagnostics,
    ) -> Config {
        let file = sources.add(shown_path, text);
        let stream = yaml::parse(text, file, &yaml::Limits::default());
        for e in &stream.errors {
            diags.error(e.span, e.message.clone());
        }
        let empty = Node {
            span: Span::point(file, Default::default()),
            value: yaml::Value::Map(Vec::new()),
        };
        if stream.documents.len() > 1 {
            diags.error(stream.documents[1].root.span, "a config file holds one document");
        }
        let root = stream.documents.first().map_or(&empty, |d| &d.root);
        let mut r = Reader { diags };
        let mut config = ConfigReader {
            r: &mut r,
            base_dir,
            confine,
            sources,
        }
        .read(root);
        config.path = path;
        config
    }

    /// Find `.kivi-lint.yaml` walking up from `start` to the repository root (the first
    /// directory with `.git`) or the file system root.
    pub fn discover(start: &Path) -> Option<PathBuf> {
        let start = std::fs::canonicalize(start).ok()?;
        let mut dir = if start.is_dir() {
            start.as_path()
        } else {
            start.parent()?
        };
        loop {
            for name in FILE_NAMES {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Some(candidate);
                }
            }
            if dir.join(".git").exists() {
                return None;
            }
            dir = dir.parent()?;
        }
    }

    pub fn has_event(&self, f: impl Fn(&EnvironmentEvent) -> bool) -> bool {
        self.events.iter().any(|e| f(&e.value))
    }

    pub fn resolve(&self, path: &Path) -> PathBuf {
        self.base_dir.join(path)
    }
}

struct ConfigReader<'a, 'd> {
    r: &'a mut Reader<'d>,
    base_dir: &'a Path,
    /// The directory the config's paths must stay in, if confined.
    confine: Option<&'a Path>,
    sources: &'a mut SourceMap,
}

/// The git work tree holding `dir` (the nearest ancestor with `.git`), else `dir`; canonical.
fn repository_root(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    })
    .unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&dir)
        .to_path_buf()
}

/// Whether `path` (relative to `base_dir`) stays inside `root` once links and `..` are
/// followed. A path that does not exist is judged by its existing ancestor.
fn inside(root: &Path, base_dir: &Path, path: &Path) -> bool {
    let full = base_dir.join(path);
    let mut probe = full.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(if probe.as_os_str().is_empty() {
            Path::new(".")
        } else {
            probe
        }) {
            let mut resolved = canonical;
            for part in rest.iter().rev() {
                resolved.push(part);
            }
            // `..` left in the part that does not exist yet could still climb out.
            return resolved.starts_with(root) && !resolved.components().any(|c| c == std::path::Component::ParentDir);
        }
        match (probe.parent(), probe.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                probe = parent;
            }
            _ => return false,
        }
    }
}

impl ConfigReader<'_, '_> {
    /// An error at `span` when `path` leaves the repository; `true` when it may be read.
    fn confined(&mut self, span: Span, key: &str, path: &Path) -> bool {
        let Some(root) = self.confine else {
            return true;
        };
        if inside(root, self.base_dir, path) {
            return true;
        }
        self.r.error(
            span,
            format!(
                "`{key}` names a path outside the repository ({}); it is not read (pass --allow-outside-repository to allow it)",
                crate::diagnostics::printable(&root.display().to_string())
            ),
        );
        false
    }
}

/// Report fields not in `allowed` as located errors, with a suggestion when one is close.
fn check_fields(r: &mut Reader, node: &Node, allowed: &[&str], context: &str) {
    let Some(entries) = node.as_map() else {
        r.error(
            node.span,
            format!("`{context}` must be a mapping, found {}", node.type_name()),
        );
        return;
    };
    for (k, _) in entries {
        let key = k.scalar_text().unwrap_or_default();
        if allowed.contains(&key.as_str()) {
            continue;
        }
        let mut d = Diagnostic::error(k.span, format!("unknown field `{}` in `{context}`", truncate(&key)));
        d = match allowed.iter().min_by_key(|a| edit_distance(a, &key)) {
            Some(best) if edit_distance(best, &key) <= 2 => d.with_help(format!("did you mean `{best}`?")),
            _ => d.with_help(format!("expected one of: {}", allowed.join(", "))),
        };
        r.diags.push(d);
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl ConfigReader<'_, '_> {
    fn read(&mut self, root: &Node) -> Config {
        check_fields(
            self.r,
            root,
            &[
                "apiVersion",
                "kind",
                "kubernetesVersion",
                "include",
                "exclude",
                "helm",
                "cluster",
                "scheduler",
                "descheduler",
                "workloads",
                "events",
                "checks",
                "scaling",
                "suppressions",
                "faults",
                "featureGates",
            ],
            "config",
        );
        if let Some(v) = self.r.string(root, "apiVersion")
            && v.value != "kivi-lint/v1alpha1"
        {
            self.r.error(
                v.span,
                format!(
                    "unsupported config `apiVersion: {}` (expected kivi-lint/v1alpha1)",
                    truncate(&v.value)
                ),
            );
        }
        if let Some(k) = self.r.string(root, "kind")
            && k.value != "Config"
        {
            self.r.error(k.span, "config `kind` must be `Config`");
        }
        let kubernetes_version = match self.r.text(root, "kubernetesVersion") {
            Some(v) if is_minor_version(&v.value) => v.value,
            Some(v) => {
                self.r.error(
                    v.span,
                    format!(
                        "`kubernetesVersion` must look like \"1.30\", found `{}`",
                        truncate(&v.value)
                    ),
                );
                "1.30".into()
            }
            None => "1.30".into(),
        };
        let include = if self.r.field(root, "include").is_some() {
            self.globs(root, "include")
        } else {
            vec!["**".into()]
        };
        let exclude = self.globs(root, "exclude");
        let helm = self.helm(root);
        let mut scaling = self.scaling(root);
        let (cluster, initial_pods) = self.cluster(root, &scaling);
        // The smallest cluster the pools allow must fit under `maxNodes`: unset, it grows to
        // that size (up to its limit, 64); set too small, that is an error at it.
        let smallest: u32 = cluster.pools.iter().map(|p| p.min).sum();
        let max_nodes_field = root.get("scaling").and_then(|n| n.get("maxNodes")).map(|n| n.span);
        match max_nodes_field {
            None => scaling.max_nodes = scaling.max_nodes.max(smallest.min(64)),
            Some(span) if smallest > scaling.max_nodes => {
                self.r.diags.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`maxNodes` is {}, but the node pools' `min` add up to {smallest} nodes: no topology fits",
                            scaling.max_nodes
                        ),
                    )
                    .with_help("raise `scaling.maxNodes`, or lower the `min` (or `count`) of `cluster.nodePools`"),
                );
            }
            Some(_) => {}
        }
        let events = self.events(root);
        for event in &events {
            if let EnvironmentEvent::ClusterAutoscaler { pools, .. } = &event.value {
                for name in pools {
                    if name != "*" && !cluster.pools.iter().any(|p| &p.name == name) {
                        self.r.error(
                            event.span,
                            format!("cluster-autoscaler: no node pool is named `{}`", truncate(name)),
                        );
                    }
                }
            }
        }
        Config {
            path: None,
            base_dir: self.base_dir.to_path_buf(),
            kubernetes_version,
            include,
            exclude,
            helm,
            cluster,
            initial_pods,
            scheduler: self.scheduler(root),
            descheduler: self.descheduler(root),
            workloads: self.workloads(root),
            events,
            checks: self.checks(root),
            scaling,
            suppressions: self.suppressions(root),
            stale_reads: self.faults(root),
            previous_revision: None,
            comparison_operators: self.feature_gates(root),
        }
    }

    /// `featureGates: {TaintTolerationComparisonOperators: bool}`, the one gate the model
    /// follows: whether Gt and Lt tolerations compare.
    fn feature_gates(&mut self, root: &Node) -> bool {
        let Some(gates) = self.r.map(root, "featureGates") else {
            return true;
        };
        check_fields(self.r, gates, &["TaintTolerationComparisonOperators"], "featureGates");
        self.r
            .bool(gates, "TaintTolerationComparisonOperators")
            .is_none_or(|b| b.value)
    }

    fn globs(&mut self, root: &Node, key: &str) -> Vec<String> {
        let mut out = Vec::new();
        for item in self.r.seq(root, key) {
            let Some(text) = item.as_str() else {
                self.r.error(item.span, format!("`{key}[]` must be a glob string"));
                continue;
            };
            match globset::Glob::new(text) {
                Ok(_) => out.push(text.to_string()),
                Err(e) => self
                    .r
                    .error(item.span, format!("invalid glob `{}`: {}", truncate(text), e.kind())),
            }
        }
        out
    }

    fn path(&mut self, node: &Node, key: &str) -> Option<Spanned<PathBuf>> {
        let value = self.r.string(node, key)?;
        if value.value.is_empty() {
            self.r.error(value.span, format!("`{key}` must not be empty"));
            return None;
        }
        if !self.confined(value.span, key, Path::new(&value.value)) {
            return None;
        }
        Some(value.map(|p| self.base_dir.join(p)))
    }

    fn helm(&mut self, root: &Node) -> HelmOptions {
        let mut helm = HelmOptions {
            values: Vec::new(),
            release_name: "release".into(),
            namespace: "default".into(),
        };
        if let Some(node) = self.r.map(root, "helm") {
            check_fields(self.r, node, &["values", "releaseName", "namespace"], "helm");
            for v in self.r.seq(node, "values") {
                match v.as_str() {
                    // Resolved per chart: beside the chart first, then beside this file.
                    Some(p) => helm.values.push(PathBuf::from(p)),
                    None => self.r.error(v.span, "`helm.values[]` must be a path"),
                }
            }
            if let Some(n) = self.r.string(node, "releaseName") {
                helm.release_name = n.value;
            }
            if let Some(n) = self.r.string(node, "namespace") {
                helm.namespace = n.value;
            }
        }
        helm
    }

    fn scaling(&mut self, root: &Node) -> Scaling {
        let mut scaling = Scaling {
            max_nodes: 6,
            pods_per_node: 6,
            max_topologies: 100,
            symmetry: true,
        };
        if let Some(node) = self.r.map(root, "scaling") {
            check_fields(
                self.r,
                node,
                &["maxNodes", "podsPerNode", "maxTopologies", "symmetry"],
                "scaling",
            );
            if let Some(b) = self.r.bool(node, "symmetry") {
                scaling.symmetry = b.value;
            }
            if let Some(v) = self.bounded(node, "maxTopologies", 1, 10_000) {
                scaling.max_topologies = v;
            }
            if let Some(v) = self.bounded(node, "maxNodes", 1, 64) {
                scaling.max_nodes = v;
            }
            if let Some(v) = self.bounded(node, "podsPerNode", 1, 64) {
                scaling.pods_per_node = v;
            }
        }
        scaling
    }

    fn bounded(&mut self, node: &Node, key: &str, min: i64, max: i64) -> Option<u32> {
        let v = self.r.int(node, key)?;
        if !(min..=max).contains(&v.value) {
            self.r.error(v.span, format!("`{key}` must be from {min} to {max}"));
            return None;
        }
        Some(v.value as u32)
    }

    fn cluster(&mut self, root: &Node, scaling: &Scaling) -> (Cluster, Vec<InitialPods>) {
        let Some(node) = self.r.map(root, "cluster") else {
            let mut scratch = SourceMap::default();
            let mut cluster = Config::default_for(self.base_dir, &mut scratch).cluster;
            cluster.assumed = true;
            return (cluster, Vec::new());
        };
        check_fields(self.r, node, &["nodePools", "fromNodes", "initialPods"], "cluster");
        if let Some(from) = self.r.string(node, "fromNodes")
            && !self.confined(from.span, "fromNodes", Path::new(&from.value))
        {
            let nothing = Cluster {
                pools: Vec::new(),
                assumed: false,
            };
            return (nothing, Vec::new());
        }
        let cluster = cluster::read(self.r, node, self.base_dir, scaling, self.sources);
        let mut initial = Vec::new();
        for item in self.r.maps(node, "initialPods") {
            check_fields(self.r, item, &["workload", "node", "count"], "cluster.initialPods[]");
            let workload = self.object_id(item, "workload");
            let node_name = self.r.text(item, "node");
            let count = self.r.int(item, "count");
            let (Some(workload), Some(node_name)) = (workload, node_name) else {
                self.r
                    .error(item.span, "an initial pod entry needs `workload` and `node`");
                continue;
            };
            if !cluster.has_node(&node_name.value) {
                self.r.error(
                    node_name.span,
                    format!(
                        "node `{}` is not in the cluster (nodes are named <pool>-1, <pool>-2, ...)",
                        truncate(&node_name.value)
                    ),
                );
                continue;
            }
            let count = match count {
                None => 1,
                Some(c) if (1..=1000).contains(&c.value) => c.value as u32,
                Some(c) => {
                    self.r.error(c.span, "`count` must be from 1 to 1000");
                    continue;
                }
            };
            initial.push(InitialPods {
                workload,
                node: node_name.value,
                count,
                span: item.span,
            });
        }
        (cluster, initial)
    }

    fn object_id(&mut self, node: &Node, key: &str) -> Option<ObjectId> {
        let v = self.r.text(node, key)?;
        let id = ObjectId::parse(&v.value);
        if id.is_none() {
            self.r.error(
                v.span,
                format!("`{key}` must be `Kind/namespace/name`, found `{}`", truncate(&v.value)),
            );
        }
        id
    }

    fn scheduler(&mut self, root: &Node) -> SchedulerOptions {
        let Some(node) = self.r.map(root, "scheduler") else {
            return SchedulerOptions::default();
        };
        check_fields(self.r, node, &["scoringStrategy", "config"], "scheduler");
        SchedulerOptions {
            scoring_strategy: self
                .r
                // RequestedToCapacityRatio needs its shape: from the KubeSchedulerConfiguration.
                .one_of(node, "scoringStrategy", &["LeastAllocated", "MostAllocated"])
                .map(|s| s.map(|s| ScoringStrategy::parse(&s).expect("checked by one_of"))),
            config: self.path(node, "config"),
            profile: None,
        }
    }

    fn descheduler(&mut self, root: &Node) -> DeschedulerOptions {
        let mut options = DeschedulerOptions {
            policy: None,
            interval_seconds: 300,
        };
        if let Some(node) = self.r.map(root, "descheduler") {
            check_fields(self.r, node, &["policy", "intervalSeconds"], "descheduler");
            options.policy = self.path(node, "policy");
            if let Some(v) = self.bounded(node, "intervalSeconds", 1, 86_400) {
                options.interval_seconds = v;
            }
        }
        options
    }

    fn amounts(&mut self, node: &Node, context: &str, extra: &[&str]) -> (Option<i64>, Option<i64>) {
        let mut allowed = vec!["cpu", "memory"];
        allowed.extend_from_slice(extra);
        check_fields(self.r, node, &allowed, context);
        (
            self.r.quantity(node, "cpu", true).map(|v| v.value),
            self.r.quantity(node, "memory", false).map(|v| v.value),
        )
    }

    fn workloads(&mut self, root: &Node) -> BTreeMap<ObjectId, WorkloadAssumptions> {
        let mut out = BTreeMap::new();
        let Some(node) = self.r.map(root, "workloads") else {
            return out;
        };
        for (k, v) in node.as_map().unwrap_or_default() {
            let key = k.scalar_text().unwrap_or_default();
            let Some(id) = ObjectId::parse(&key) else {
                self.r.error(
                    k.span,
                    format!(
                        "workload keys must be `Kind/namespace/name`, found `{}`",
                        truncate(&key)
                    ),
                );
                continue;
            };
            if v.as_map().is_none() {
                self.r.error(v.span, "a workload entry must be a mapping");
                continue;
            }
            check_fields(self.r, v, &["usage", "startup"], &format!("workloads.{key}"));
            let usage = self.r.map(v, "usage").map(|u| {
                let (cpu, memory) = self.amounts(u, "usage", &[]);
                Amounts {
                    cpu_millis: cpu.unwrap_or(0),
                    memory_bytes: memory.unwrap_or(0),
                }
            });
            let startup = self.r.map(v, "startup").map(|s| {
                let (cpu_millis, memory_bytes) = self.amounts(s, "startup", &["seconds"]);
                let seconds = self.bounded(s, "seconds", 1, 86_400).unwrap_or(300);
                Startup {
                    cpu_millis,
                    memory_bytes,
                    seconds,
                }
            });
            out.insert(
                id,
                WorkloadAssumptions {
                    usage,
                    startup,
                    span: k.span,
                },
            );
        }
        out
    }

    fn percent(&mut self, node: &Node, key: &str, default: u32, max: u32) -> u32 {
        let Some(field) = self.r.field(node, key) else {
            return default;
        };
        let parsed = match &field.value {
            yaml::Value::Str(s) => IntOrPercent::parse_percent(s),
            _ => None,
        };
        match parsed {
            Some(IntOrPercent::Percent(p)) if p as u32 <= max && p > 0 => p as u32,
            _ => {
                self.r.error(
                    field.span,
                    format!("`{key}` must be a percentage from 1% to {max}%, such as `200%`"),
                );
                default
            }
        }
    }

    fn events(&mut self, root: &Node) -> Vec<Spanned<EnvironmentEvent>> {
        let mut out = Vec::new();
        for item in self.r.maps(root, "events") {
            let types = [
                "load-change",
                "node-failure",
                "node-maintenance",
                "node-drain",
                "node-overload",
                "apply",
                "gitops-sync",
                "cluster-autoscaler",
            ];
            let Some(ty) = self.r.one_of(item, "type", &types) else {
                if self.r.field(item, "type").is_none() {
                    self.r.error(
                        item.span,
                        format!("an event needs a `type`: one of {}", types.join(", ")),
                    );
                }
                continue;
            };
            let event = match ty.value.as_str() {
                "load-change" => {
                    check_fields(self.r, item, &["type", "workloads", "max"], "events[] (load-change)");
                    let workloads = if self.r.field(item, "workloads").is_some() {
                        self.r.string_list(item, "workloads")
                    } else {
                        vec!["*".into()]
                    };
                    EnvironmentEvent::LoadChange {
                        workloads,
                        max_percent: self.percent(item, "max", 200, 1000),
                    }
                }
                "node-failure" => {
                    check_fields(self.r, item, &["type", "count", "recover"], "events[] (node-failure)");
                    EnvironmentEvent::NodeFailure {
                        count: self.bounded(item, "count", 1, 16).unwrap_or(1),
                        recover: self.r.bool(item, "recover").is_none_or(|b| b.value),
                    }
                }
                "node-maintenance" => {
                    check_fields(self.r, item, &["type"], "events[] (node-maintenance)");
                    EnvironmentEvent::NodeMaintenance
                }
                "node-drain" => {
                    check_fields(self.r, item, &["type"], "events[] (node-drain)");
                    EnvironmentEvent::NodeDrain
                }
                "node-overload" => {
                    check_fields(self.r, item, &["type", "threshold"], "events[] (node-overload)");
                    EnvironmentEvent::NodeOverload {
                        threshold_percent: self.percent(item, "threshold", 100, 100),
                    }
                }
                "apply" => {
                    check_fields(self.r, item, &["type", "from"], "events[] (apply)");
                    match self.r.string(item, "from").filter(|f| !f.value.is_empty()) {
                        // A directory must be in the repository; anything else is a git ref
                        // of it.
                        Some(from)
                            if self.base_dir.join(&from.value).exists()
                                && !self.confined(from.span, "from", Path::new(&from.value)) =>
                        {
                            continue;
                        }
                        Some(from) => EnvironmentEvent::Apply { from: from.value },
                        None => {
                            self.r
                                .error(item.span, "an `apply` event needs `from`: a git ref or a directory");
                            continue;
                        }
                    }
                }
                "cluster-autoscaler" => {
                    check_fields(
                        self.r,
                        item,
                        &["type", "pools", "scaleDownUtilization"],
                        "events[] (cluster-autoscaler)",
                    );
                    let pools = if self.r.field(item, "pools").is_some() {
                        self.r.string_list(item, "pools")
                    } else {
                        vec!["*".into()]
                    };
                    EnvironmentEvent::ClusterAutoscaler {
                        pools,
                        scale_down_utilization: self.percent(item, "scaleDownUtilization", 50, 100),
                    }
                }
                _ => {
                    check_fields(self.r, item, &["type"], "events[] (gitops-sync)");
                    EnvironmentEvent::GitopsSync
                }
            };
            out.push(Spanned::new(event, item.span));
        }
        out
    }

    /// `faults`: `stale-reads`, or `{type: stale-reads, lag: N}`.
    fn faults(&mut self, root: &Node) -> Option<Spanned<u32>> {
        let mut stale = None;
        for item in self.r.seq(root, "faults") {
            let (name, lag) = match &item.value {
                yaml::Value::Map(_) => {
                    check_fields(self.r, item, &["type", "lag"], "faults[]");
                    let name = self.r.text(item, "type").map(|t| t.value).unwrap_or_default();
                    (name, self.bounded(item, "lag", 1, 4).unwrap_or(1))
                }
                _ => (item.scalar_text().unwrap_or_default(), 1),
            };
            if name == "stale-reads" {
                stale = Some(Spanned::new(lag, item.span));
            } else {
                self.r.error(
                    item.span,
                    format!(
                        "unknown fault `{}`: the one kivi-lint models is `stale-reads`",
                        truncate(&name)
                    ),
                );
            }
        }
        stale
    }

    fn check_name(&mut self, node: &Node) -> Option<&'static str> {
        let text = node.scalar_text().unwrap_or_default();
        match checks::find(&text) {
            Some(c) => Some(c.id),
            None => {
                self.r.diags.push(
                    Diagnostic::error(node.span, format!("unknown check `{}`", truncate(&text)))
                        .with_help(format!("known checks: {}", checks::known_names())),
                );
                None
            }
        }
    }

    fn checks(&mut self, root: &Node) -> ChecksConfig {
        let mut out = ChecksConfig::default();
        let Some(node) = self.r.map(root, "checks") else {
            return out;
        };
        check_fields(self.r, node, &["enable", "disable", "severity", "params"], "checks");
        for item in self.r.seq(node, "enable") {
            out.enable.extend(self.check_name(item));
        }
        for item in self.r.seq(node, "disable") {
            out.disable.extend(self.check_name(item));
        }
        if let Some(sev) = self.r.map(node, "severity") {
            for (k, v) in sev.as_map().unwrap_or_default() {
                let Some(id) = self.check_name(k) else { continue };
                match v.as_str().and_then(Level::parse) {
                    Some(level) => {
                        out.severity.insert(id, level);
                    }
                    None => self.r.error(v.span, "severity must be `error`, `warning` or `note`"),
                }
            }
        }
        if let Some(params) = self.r.map(node, "params") {
            for (k, v) in params.as_map().unwrap_or_default() {
                let Some(id) = self.check_name(k) else { continue };
                let check = checks::find(id).expect("known id");
                let names: Vec<&str> = check.params.iter().map(|p| p.name).collect();
                if names.is_empty() {
                    self.r.error(k.span, format!("check `{id}` has no params"));
                    continue;
                }
                check_fields(self.r, v, &names, &format!("checks.params.{id}"));
                let mut values = BTreeMap::new();
                for p in check.params {
                    if let Some(value) = self.r.int(v, p.name) {
                        if value.value < 0 {
                            self.r.error(value.span, format!("`{}` must not be negative", p.name));
                        } else {
                            values.insert(p.name, value.value);
                        }
                    }
                }
                out.params.insert(id, values);
            }
        }
        out
    }

    fn suppressions(&mut self, root: &Node) -> Vec<Suppression> {
        let mut out = Vec::new();
        for item in self.r.maps(root, "suppressions") {
            check_fields(
                self.r,
                item,
                &["check", "object", "reason", "expires"],
                "suppressions[]",
            );
            let check = self.r.field(item, "check").and_then(|c| self.check_name(c));
            let object = self.object_id(item, "object");
            let reason = self.r.text(item, "reason").filter(|r| !r.value.trim().is_empty());
            if reason.is_none() {
                self.r.error(item.span, "a suppression needs a `reason`");
            }
            let expires = match self.r.text(item, "expires") {
                None => None,
                Some(e) => match Date::parse(&e.value) {
                    Some(d) => Some(d),
                    None => {
                        self.r.error(e.span, "`expires` must be a date `YYYY-MM-DD`");
                        continue;
                    }
                },
            };
            if let (Some(check), Some(object), Some(reason)) = (check, object, reason) {
                out.push(Suppression {
                    check,
                    object,
                    reason: reason.value,
                    expires,
                    span: item.span,
                });
            } else if self.r.field(item, "check").is_none() || self.r.field(item, "object").is_none() {
                self.r.error(item.span, "a suppression needs `check` and `object`");
            }
        }
        out
    }
}

fn is_minor_version(v: &str) -> bool {
    let v = v.strip_prefix('v').unwrap_or(v);
    let parts: Vec<&str> = v.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Config, Diagnostics, SourceMap) {
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let c = Config::parse(
            text,
            Path::new(".kivi-lint.yaml"),
            None,
            Path::new("/repo"),
            &mut sources,
            &mut diags,
        );
        (c, diags, sources)
    }

    #[test]
    fn default_config_is_valid() {
        let (c, diags, _) = parse(DEFAULT_CONFIG);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(c.cluster.pools.len(), 3);
        assert_eq!(c.cluster.pools[0].count, 1);
        assert_eq!(c.cluster.pools[0].max, 2);
        assert_eq!(c.events.len(), 2);
        assert_eq!(c.scaling.max_nodes, 6);
    }

    #[test]
    fn full_example_from_the_schema() {
        let text = r#"apiVersion: kivi-lint/v1alpha1
kind: Config
kubernetesVersion: "1.30"
include: ["**"]
exclude: []
helm: {values: [values-prod.yaml], releaseName: release, namespace: default}
cluster:
  nodePools:
    - name: zone-a
      count: 2
      min: 1
      max: 6
      labels: {topology.kubernetes.io/zone: a}
      hostnameLabels: [kubernetes.io/hostname]
      allocatable: {cpu: "4", memory: 16Gi, pods: 110}
      reserved: {cpu: 500m, memory: 1Gi}
      taints: [{key: dedicated, value: db, effect: NoSchedule}]
  initialPods:
    - {workload: Deployment/default/web, node: zone-a-1, count: 2}
scheduler: {scoringStrategy: LeastAllocated, config: kube-scheduler-config.yaml}
descheduler: {policy: deploy/descheduler-policy.yaml, intervalSeconds: 300}
workloads:
  Deployment/default/web:
    usage: {cpu: 300m, memory: 200Mi}
    startup: {cpu: "1", seconds: 300}
events:
  - {type: load-change, workloads: ["*"], max: 200%}
  - {type: node-failure, count: 1, recover: true}
  - {type: node-maintenance}
  - {type: node-drain}
  - {type: node-overload, threshold: 98%}
  - {type: apply, from: main}
  - {type: gitops-sync}
checks:
  enable: []
  disable: []
  severity: {no-replica-oscillation: warning}
  params: {min-replicas-available: {min: 2}, pods-balanced: {maxSkew: 2}, no-eviction-loop: {loops: 3}}
scaling: {maxNodes: 6, podsPerNode: 6, maxTopologies: 100}
suppressions:
  - {check: pods-schedulable, object: Deployment/default/web, reason: "capacity is added by hand", expires: 2027-06-30}
"#;
        let (c, diags, _) = parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(c.helm.values, vec![PathBuf::from("values-prod.yaml")]);
        let pool = &c.cluster.pools[0];
        assert_eq!((pool.count, pool.min, pool.max), (2, 1, 6));
        assert_eq!(pool.allocatable.cpu_millis, 4000);
        assert_eq!(pool.reserved.memory_bytes, 1 << 30);
        assert_eq!(c.initial_pods[0].count, 2);
        assert_eq!(
            c.descheduler.policy.as_ref().unwrap().value,
            PathBuf::from("/repo/deploy/descheduler-policy.yaml")
        );
        assert_eq!(c.events.len(), 7);
        assert_eq!(
            c.events[4].value,
            EnvironmentEvent::NodeOverload { threshold_percent: 98 }
        );
        assert_eq!(c.checks.params["no-eviction-loop"]["loops"], 3);
        assert_eq!(c.suppressions[0].expires.unwrap().to_string(), "2027-06-30");
        assert_eq!(Date::from_days_since_epoch(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days_since_epoch(20_414).to_string(), "2025-11-22");
        assert_eq!(Date::from_days_since_epoch(11_016).to_string(), "2000-02-29");
        let web = ObjectId::parse("Deployment/default/web").unwrap();
        assert_eq!(c.workloads[&web].startup.as_ref().unwrap().cpu_millis, Some(1000));
    }

    #[test]
    fn cluster_autoscaler_and_zones() {
        let (c, diags, _) = parse(
            "cluster:\n  nodePools:\n    - {name: workers, count: 3, min: 3, max: 6, zones: [a, b, c], allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\n    - {name: fixed, count: 1, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: [{type: cluster-autoscaler, scaleDownUtilization: 60%}]\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let workers = &c.cluster.pools[0];
        assert_eq!(workers.zones, ["a", "b", "c"]);
        assert_eq!(
            workers.node_labels(4).get(cluster::ZONE_LABEL).map(String::as_str),
            Some("a")
        );
        assert_eq!(
            workers.node_labels(2).get(cluster::ZONE_LABEL).map(String::as_str),
            Some("b")
        );
        let event = &c.events[0].value;
        assert_eq!(
            *event,
            EnvironmentEvent::ClusterAutoscaler {
                pools: vec!["*".into()],
                scale_down_utilization: 60
            }
        );
        assert!(event.autoscales(workers));
        assert!(
            !event.autoscales(&c.cluster.pools[1]),
            "a fixed-size pool does not scale"
        );

        let (_, diags, _) = parse(
            "cluster:\n  nodePools:\n    - {name: w, count: 1, max: 2, zones: [a, a], labels: {topology.kubernetes.io/zone: a}, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: [{type: cluster-autoscaler, pools: [nope]}]\n",
        );
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert!(messages.iter().any(|m| m.contains("sets both `zones`")), "{messages:?}");
        assert!(
            messages.iter().any(|m| m.contains("lists a zone twice")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("no node pool is named `nope`")),
            "{messages:?}"
        );
    }

    #[test]
    fn faults() {
        let (c, diags, _) = parse("faults: [stale-reads]\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(c.stale_reads.map(|s| s.value), Some(1));
        let (c, diags, _) = parse("faults: [{type: stale-reads, lag: 3}]\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(c.stale_reads.map(|s| s.value), Some(3));
        let (c, _, _) = parse("\n");
        assert!(c.stale_reads.is_none());
        let (_, diags, _) = parse("faults: [crash-restart, {type: stale-reads, lag: 9}]\n");
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert!(
            messages.iter().any(|m| m.contains("unknown fault `crash-restart`")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("`lag` must be from 1 to 4")),
            "{messages:?}"
        );
    }

    #[test]
    fn unknown_fields_are_located_with_a_suggestion() {
        let (_, diags, sources) =
            parse("apiVersion: kivi-lint/v1alpha1\nkind: Config\nscaling: {maxNode: 6}\nclustr: {}\n");
        let d: Vec<_> = diags.iter().collect();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            crate::diagnostics::location_string(&sources, d[0].span),
            ".kivi-lint.yaml:4:1"
        );
        assert_eq!(d[1].help.as_deref(), Some("did you mean `maxNodes`?"));
    }

    #[test]
    fn bad_values() {
        let (_, diags, _) = parse(
            "checks: {enable: [no-such-check], severity: {pods-schedulable: fatal}}\nsuppressions: [{check: pods-schedulable, object: web, reason: x, expires: 2027-02-30}]\nevents: [{type: earthquake}]\ncluster: {initialPods: [{workload: Deployment/default/web, node: zone-z-1}]}\n",
        );
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert!(
            messages.iter().any(|m| m.contains("unknown check `no-such-check`")),
            "{messages:?}"
        );
        assert!(messages.iter().any(|m| m.contains("severity must be")));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("`object` must be `Kind/namespace/name`"))
        );
        assert!(messages.iter().any(|m| m.contains("`type` must be one of")));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("node `zone-z-1` is not in the cluster"))
        );
    }

    #[test]
    fn dates() {
        assert!(Date::parse("2024-02-29").is_some());
        assert!(Date::parse("2023-02-29").is_none());
        assert!(Date::parse("2023-13-01").is_none());
        assert!(Date::parse("23-01-01").is_none());
    }
}

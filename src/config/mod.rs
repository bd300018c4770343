//! `.kivi-lint.yaml`: what kivi-lint assumes about the cluster and the environment.
//!
//! The schema is fixed (other tooling writes these files): unknown fields are located errors.
//! Without a file the embedded default (`default.yaml`) is used.

pub mod cluster;
pub mod cluster_state;
mod date;
mod reader;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::checks::{self, CheckId, Level};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::ObjectId;
use crate::manifest::pod::Amounts;
use crate::manifest::quantity::IntOrPercent;
use crate::manifest::read::{Reader, truncate};
use crate::manifest::scheduler_config::ScoringStrategy;
use crate::source::{SourceMap, Span, Spanned};
use crate::yaml::{self, Node};

pub use cluster::{Cluster, NodePool};
pub use date::Date;
use reader::ConfigReader;
use reader::check_fields;
pub(crate) use reader::{inside, repository_root};

pub const DEFAULT_CONFIG: &str = include_str!("default.yaml");
pub const FILE_NAMES: &[&str] = &[".kivi-lint.yaml", ".kivi-lint.yml"];

#[derive(Clone, Debug, PartialEq)]
pub struct HelmOptions {
    pub values: Vec<PathBuf>,
    /// Checked as Helm checks them (a release name and a namespace), so neither can be read
    /// by `helm` as an option.
    pub release_name: String,
    pub namespace: String,
    /// The repository the values files must stay in (`None`: `--allow-outside-repository`):
    /// each is looked up beside the chart too, which the config reader cannot judge alone.
    pub confine: Option<PathBuf>,
}

/// `render`: the network for renders (off by default) and the public hosts it may reach
/// (empty: any public host). A host on loopback or a private range is trusted only from the
/// command line (`--allow-host`), never from a config a pull request can edit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RenderOptions {
    pub network: bool,
    pub allow_hosts: Vec<String>,
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
    /// An event of the registry the config reader has no rules of its own for
    /// (`events::Configured::WithParams`): its name and its params, defaults filled in.
    Registered {
        name: &'static str,
        params: BTreeMap<&'static str, i64>,
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
            EnvironmentEvent::Registered { name, .. } => name,
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
    pub enable: Vec<CheckId>,
    pub disable: Vec<CheckId>,
    pub severity: BTreeMap<CheckId, Level>,
    pub params: BTreeMap<CheckId, BTreeMap<&'static str, i64>>,
}

impl ChecksConfig {
    /// A check runs when `enable` lists it, or when `enable` is empty and the check is on by
    /// default; `disable` always wins.
    pub fn is_enabled(&self, id: CheckId) -> bool {
        let by_default = id.check().default_enabled;
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

#[derive(Clone, Debug, PartialEq)]
pub struct Suppression {
    pub check: CheckId,
    pub object: ObjectId,
    pub reason: String,
    pub expires: Option<Date>,
    pub span: Span,
}

/// What a scan reads of the files the config names, beside the config as written
/// ([`Config`]): the analysis builds it once, and the model and the fixes read it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Environment {
    /// The `default-scheduler` profile of the KubeSchedulerConfiguration at
    /// `scheduler.config`.
    pub scheduler_profile: Option<crate::manifest::scheduler_config::SchedulerProfile>,
    /// The workloads of the `apply` event's previous revision.
    pub previous_revision: Option<Vec<PreviousWorkload>>,
    /// Globs discovery leaves out beside `exclude`: the previous revision's directory, when it
    /// is inside the scanned tree.
    pub history: Vec<String>,
}

/// A configuration as written, with every relative path resolved against `base_dir`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it was read from; `None` for the embedded default.
    pub path: Option<PathBuf>,
    pub base_dir: PathBuf,
    pub kubernetes_version: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub helm: HelmOptions,
    pub render: RenderOptions,
    pub cluster: Cluster,
    pub initial_pods: Vec<InitialPods>,
    pub scheduler: SchedulerOptions,
    pub descheduler: DeschedulerOptions,
    pub workloads: BTreeMap<ObjectId, WorkloadAssumptions>,
    pub events: Vec<Spanned<EnvironmentEvent>>,
    /// `events.combine`: explore the events interleaved in one model, rather than each kind
    /// of disruption alone from every state the others can leave (the search's fault model).
    pub combine_events: bool,
    pub checks: ChecksConfig,
    pub scaling: Scaling,
    pub suppressions: Vec<Suppression>,
    /// `faults: [stale-reads]`: how many deletions of running pods the scheduler's and the
    /// descheduler's informers may not have delivered yet (`lag`, default 1).
    pub stale_reads: Option<Spanned<u32>>,
    /// `faults: [controller-lag]`: the kubelet may run ahead of the scheduler and the workload
    /// controllers (off: it waits until they have no work, as their reactions take
    /// milliseconds and its own seconds).
    pub controller_lag: Option<Span>,
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

#[cfg(test)]
mod tests;

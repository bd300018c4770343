//! Kubernetes objects read from YAML documents, keeping the span of every field the checks use.
//!
//! Documents without `apiVersion` and `kind` are skipped (and counted); `kind: List` and other
//! `*List` kinds are expanded; objects kivi-lint does not model are kept as opaque objects.

pub mod autoscaling;
pub mod descheduler;
mod load;
pub use load::*;
pub mod node;
pub mod pdb;
pub mod pod;
pub mod quantity;
pub mod read;
pub mod scheduler_config;
pub mod selector;
pub mod storage;
pub mod taint;
pub mod workload;

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::diagnostics::Diagnostics;
use crate::source::{FileId, Location, SourceMap, Span};
use crate::yaml::{self, Node};

pub use autoscaling::HorizontalPodAutoscaler;
pub use descheduler::DeschedulerPolicy;
pub use node::NodeObject;
pub use pdb::PodDisruptionBudget;
pub use read::Reader;
pub use scheduler_config::SchedulerConfiguration;
pub use selector::{LabelSelector, Labels};
pub use workload::{Workload, WorkloadKind};

/// `kind/namespace/name`, or `kind/name` for cluster-scoped objects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectId {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{}/{}/{}", self.kind, ns, self.name),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

impl ObjectId {
    /// Parse `Kind/namespace/name` (or `Kind/name` for cluster-scoped kinds).
    pub fn parse(s: &str) -> Option<ObjectId> {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [kind, ns, name] if !kind.is_empty() && !ns.is_empty() && !name.is_empty() => Some(ObjectId {
                kind: kind.to_string(),
                namespace: Some(ns.to_string()),
                name: name.to_string(),
            }),
            [kind, name] if !kind.is_empty() && !name.is_empty() && is_cluster_scoped(kind) => Some(ObjectId {
                kind: kind.to_string(),
                namespace: None,
                name: name.to_string(),
            }),
            _ => None,
        }
    }
}

/// What kivi-lint reads of an object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Body {
    Workload(Box<Workload>),
    HorizontalPodAutoscaler(Box<HorizontalPodAutoscaler>),
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    DeschedulerPolicy(Box<DeschedulerPolicy>),
    SchedulerConfiguration(Box<SchedulerConfiguration>),
    Node(Box<NodeObject>),
    Namespace,
    /// A v1 Service: only its pod selector matters (the scheduler's default spread
    /// constraints select through it). Empty selects no pod: the API server drops an empty
    /// `selector`, and a Service without one matches nothing (helper.GetPodServices).
    Service {
        selector: Labels,
    },
    /// scheduling.k8s.io PriorityClass: the priority its pods get.
    PriorityClass {
        value: i32,
        global_default: bool,
    },
    /// An Argo CD Application or ApplicationSet, or a Flux Kustomization: the repository
    /// paths it deploys (`spec.source.path`, `spec.sources[].path`, Flux's `spec.path`). A
    /// deployment boundary for plain files (`scopes`).
    DeploySource {
        paths: Vec<DeployedPath>,
    },
    /// storage.k8s.io StorageClass: where and when its volumes are provisioned.
    StorageClass(Box<storage::StorageClass>),
    /// v1 PersistentVolumeClaim.
    PersistentVolumeClaim(Box<storage::PersistentVolumeClaim>),
    /// v1 PersistentVolume: the zones it can be attached in.
    PersistentVolume(Box<storage::PersistentVolume>),
    /// Any other kind: counted, not modelled.
    Other,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Object {
    pub id: ObjectId,
    pub api_version: String,
    pub labels: Labels,
    #[serde(skip)]
    pub span: Span,
    /// Read from a string inside another object (a policy in a ConfigMap key), or made from
    /// one (an ApplicationSet's Applications).
    pub embedded: bool,
    /// Index of the discovery scope (environment) the object belongs to.
    #[serde(skip)]
    pub scope: usize,
    /// A later definition of the same object in the same scope replaces this one.
    #[serde(skip)]
    pub shadowed: bool,
    /// An input error was reported inside it: it is not verified as well (a verdict about an
    /// object Kubernetes would reject, or read otherwise, would be noise).
    #[serde(skip)]
    pub invalid: bool,
    pub body: Body,
    /// `ignore-check.kivi-lint.io/<check>` and `kivi-lint.io/ignore-all` annotations, on the
    /// object or its pod template (upstream charts often expose only pod annotations).
    #[serde(skip)]
    pub ignores: Vec<Ignore>,
}

/// An annotation that acknowledges findings of one check (or all) on an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Ignore {
    /// A check id or alias as written, or `None` for `kivi-lint.io/ignore-all`.
    pub check: Option<String>,
    pub reason: String,
    /// The annotation's key.
    pub span: Span,
}

pub const IGNORE_CHECK_PREFIX: &str = "ignore-check.kivi-lint.io/";
pub const IGNORE_ALL: &str = "kivi-lint.io/ignore-all";

/// The kivi-lint annotations of a `metadata` mapping.
fn read_ignores(metadata: Option<&Node>, out: &mut Vec<Ignore>) {
    let Some(annotations) = metadata.and_then(|m| m.get("annotations")).and_then(|a| a.as_map()) else {
        return;
    };
    for (k, v) in annotations {
        let Some(key) = k.scalar_text() else { continue };
        let check = if let Some(check) = key.strip_prefix(IGNORE_CHECK_PREFIX) {
            Some(check.to_string())
        } else if key == IGNORE_ALL {
            None
        } else {
            continue;
        };
        out.push(Ignore {
            check,
            reason: v.scalar_text().unwrap_or_default(),
            span: k.span,
        });
    }
}

impl Object {
    pub fn workload(&self) -> Option<&Workload> {
        match &self.body {
            Body::Workload(w) => Some(w),
            _ => None,
        }
    }

    pub fn workload_mut(&mut self) -> Option<&mut Workload> {
        match &mut self.body {
            Body::Workload(w) => Some(w),
            _ => None,
        }
    }

    /// With the TaintTolerationComparisonOperators gate off, its pods' `Gt` and `Lt`
    /// tolerations tolerate nothing: they are dropped (see `taint::drop_comparison_operators`).
    /// Returns the dropped ones' spans.
    pub fn without_comparison_operators(&mut self) -> Vec<Span> {
        self.workload_mut()
            .map(|w| taint::drop_comparison_operators(&mut w.template.spec.tolerations))
            .unwrap_or_default()
    }

    pub fn namespace(&self) -> &str {
        self.id.namespace.as_deref().unwrap_or("")
    }

    /// Where a workload's replica count is set: `replicas`, else (the field is left out, so
    /// Kubernetes defaults it) the `spec:` key; the object itself for other kinds.
    pub fn replicas_field(&self) -> Span {
        match self.workload() {
            Some(w) => match &w.replicas {
                Some(r) => r.span,
                None if w.spec_key != Span::default() => w.spec_key,
                None => self.span,
            },
            None => self.span,
        }
    }

    /// A PodDisruptionBudget's `maxUnavailable` or `minAvailable`, the field that says how many
    /// pods it lets go; the object itself for other kinds.
    pub fn budget_field(&self) -> Span {
        match &self.body {
            Body::PodDisruptionBudget(p) => p
                .max_unavailable
                .as_ref()
                .or(p.min_available.as_ref())
                .map_or(self.span, |v| v.span),
            _ => self.span,
        }
    }
}

/// A document that is not a Kubernetes object.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub span: Span,
    pub reason: String,
}

/// Objects read from one file.
#[derive(Debug, Default)]
pub struct Loaded {
    pub objects: Vec<Object>,
    pub skipped: Vec<Skipped>,
}

/// Kinds without a namespace. CRD kinds not listed keep the namespace they are written with.
pub fn is_cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "Node"
            | "Namespace"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "CustomResourceDefinition"
            | "PersistentVolume"
            | "StorageClass"
            | "PriorityClass"
            | "IngressClass"
            | "RuntimeClass"
            | "CSIDriver"
            | "CSINode"
            | "APIService"
            | "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
            | "ClusterIssuer"
            | "GatewayClass"
            | "VolumeSnapshotClass"
            | "DeschedulerPolicy"
            | "KubeSchedulerConfiguration"
            | "Kustomization"
            | "Component"
    )
}

fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Per-kind object counts, for summaries and the corpus test.
pub fn count_by_kind<'a>(objects: impl Iterator<Item = &'a Object>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for o in objects {
        *counts.entry(o.id.kind.clone()).or_insert(0) += 1;
    }
    counts
}

/// Shorthand used by tests and the config loader: parse and load one text.
pub fn load_text(sources: &mut SourceMap, path: &str, text: &str, diags: &mut Diagnostics) -> (FileId, Loaded) {
    let file = sources.add(path, text);
    let stream = yaml::parse(text, file, &yaml::Limits::default());
    for e in &stream.errors {
        diags.error(e.span, e.message.clone());
    }
    let loaded = load(&stream.documents, "default", sources, diags);
    (file, loaded)
}

/// A repository path a deployer deploys, as a directory of plain files.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeployedPath {
    pub path: String,
    /// Its subdirectories are deployed with it (Flux always; Argo CD with `directory.recurse`).
    pub recurse: bool,
    /// Argo CD's `directory.include` and `directory.exclude`: globs over the files' paths
    /// relative to `path` (`*` crosses `/`, `{a,b}` alternatives).
    pub include: Option<String>,
    pub exclude: Option<String>,
}

impl DeployedPath {
    /// Whether a file at `relative` (to `path`) is deployed: `include` matches it (when given)
    /// and `exclude` does not, as Argo CD's repo-server filters a directory.
    pub fn admits(&self, relative: &std::path::Path) -> bool {
        let matches = |pattern: &Option<String>| {
            pattern.as_deref().map(|p| {
                globset::Glob::new(p.trim_start_matches("./"))
                    .map(|g| g.compile_matcher().is_match(relative))
                    .unwrap_or(false)
            })
        };
        matches(&self.include).unwrap_or(true) && !matches(&self.exclude).unwrap_or(false)
    }
}

/// The paths an Argo CD Application's sources deploy (`spec.source.path`,
/// `spec.sources[].path`), with their `directory` options. ApplicationSets are expanded into
/// their Applications by discovery.
fn deploy_source(spec: Option<&Node>) -> Body {
    let paths = spec
        .into_iter()
        .flat_map(|spec| {
            spec.get("source")
                .into_iter()
                .chain(spec.get("sources").and_then(Node::as_seq).unwrap_or_default())
                .filter_map(|source| {
                    let directory = |k: &str| source.at(&["directory", k]);
                    let text = |k: &str| {
                        directory(k)
                            .and_then(Node::as_str)
                            .filter(|t| !t.is_empty())
                            .map(String::from)
                    };
                    Some(DeployedPath {
                        path: source.get("path").and_then(Node::as_str)?.to_string(),
                        recurse: directory("recurse").is_some_and(|r| r.value == crate::yaml::Value::Bool(true)),
                        include: text("include"),
                        exclude: text("exclude"),
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect();
    Body::DeploySource { paths }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod robustness;

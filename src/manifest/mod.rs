//! Kubernetes objects read from YAML documents, keeping the span of every field the checks use.
//!
//! Documents without `apiVersion` and `kind` are skipped (and counted); `kind: List` and other
//! `*List` kinds are expanded; objects kivi-lint does not model are kept as opaque objects.

pub mod autoscaling;
pub mod descheduler;
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

/// Read the objects of parsed documents. `default_namespace` is the namespace of objects that
/// name none (Helm's release namespace, else `default`).
pub fn load(
    documents: &[yaml::Document],
    default_namespace: &str,
    sources: &SourceMap,
    diags: &mut Diagnostics,
) -> Loaded {
    let mut out = Loaded::default();
    for doc in documents {
        load_node(&doc.root, default_namespace, sources, diags, &mut out, 0);
    }
    out
}

fn load_node(
    node: &Node,
    default_namespace: &str,
    sources: &SourceMap,
    diags: &mut Diagnostics,
    out: &mut Loaded,
    depth: usize,
) {
    if node.as_map().is_none() {
        out.skipped.push(Skipped {
            span: node.span,
            reason: format!("document is {}, not a mapping", node.type_name()),
        });
        return;
    }
    let api_version = node.get("apiVersion").filter(|n| !n.is_null());
    let kind = node.get("kind").filter(|n| !n.is_null());
    let (Some(api_version), Some(kind)) = (api_version, kind) else {
        out.skipped.push(Skipped {
            span: node.span,
            reason: "document has no `apiVersion` and `kind`".into(),
        });
        return;
    };
    let mut r = Reader { diags };
    let (Some(api_version), Some(kind_text)) = (api_version.as_str(), kind.as_str()) else {
        r.error(
            if api_version.as_str().is_none() {
                api_version.span
            } else {
                kind.span
            },
            "`apiVersion` and `kind` must be strings",
        );
        return;
    };
    if kind_text.ends_with("List")
        && let Some(items) = node.get("items")
    {
        if depth > 2 {
            r.error(node.span, "lists nested more than two deep");
            return;
        }
        match items.as_seq() {
            Some(items) => {
                for item in items {
                    load_node(item, default_namespace, sources, diags, out, depth + 1);
                }
            }
            None if items.is_null() => {}
            None => r.error(items.span, "`items` must be a list"),
        }
        return;
    }
    if let Some(object) = read_object(&mut r, node, api_version, kind_text, default_namespace) {
        if object.id.kind == "ConfigMap" {
            load_embedded(node, &object, sources, diags, out);
        }
        out.objects.push(object);
    }
}

/// Whether the API server takes names of `kind` only as DNS-1123 subdomains (see
/// [`check_name`]).
pub fn name_is_dns_subdomain(kind: &str) -> bool {
    matches!(
        kind,
        "Deployment"
            | "StatefulSet"
            | "DaemonSet"
            | "ReplicaSet"
            | "ReplicationController"
            | "Pod"
            | "Job"
            | "CronJob"
            | "Service"
            | "HorizontalPodAutoscaler"
            | "PodDisruptionBudget"
            | "Namespace"
            | "ConfigMap"
    )
}

/// A name as the API server validates it: the objects kivi-lint models (workloads, Services,
/// HPAs, PDBs, Namespaces) need a DNS-1123 subdomain; any other kind at least a path segment
/// without control characters. A name Kubernetes rejects is an input error, and its text is
/// shown escaped (it may hold terminal escapes).
fn check_name(r: &mut Reader, name: &crate::source::Spanned<String>, kind: &str) {
    let strict = name_is_dns_subdomain(kind);
    let value = &name.value;
    let ok = if strict {
        read::is_dns_subdomain(value)
    } else {
        value.len() <= 253
            && !value.chars().any(|c| c.is_control() || c == '/' || c == '%')
            && value != "."
            && value != ".."
    };
    if !ok {
        r.error(
            name.span,
            if strict {
                format!(
                    "`metadata.name` `{}` is not a valid {kind} name: lower-case letters, digits, `-` and `.`, at most 253 (a DNS-1123 subdomain)",
                    shown(value)
                )
            } else {
                format!("`metadata.name` `{}` is not a valid name: no `/`, `%` or control characters", shown(value))
            },
        );
    }
}

/// Manifest text in a message: control characters escaped, long text cut.
fn shown(s: &str) -> String {
    let escaped: String = s.chars().flat_map(char::escape_default).collect();
    read::truncate(&escaped)
}

fn read_object(r: &mut Reader, node: &Node, api_version: &str, kind: &str, default_namespace: &str) -> Option<Object> {
    let span = node.span;
    let metadata = r.map(node, "metadata");
    let name = match metadata {
        Some(m) => match r.text(m, "name") {
            Some(n) => {
                check_name(r, &n, kind);
                n.value
            }
            // The API server appends a random suffix to a generateName.
            None => r.text(m, "generateName").map_or_else(String::new, |g| {
                check_name(r, &crate::source::Spanned::new(format!("{}x", g.value), g.span), kind);
                g.value
            }),
        },
        None => String::new(),
    };
    let labels = metadata.map(|m| r.string_map(m, "labels")).unwrap_or_default();
    let namespace = metadata
        .and_then(|m| r.text(m, "namespace"))
        .map(|n| {
            if !n.value.is_empty() && !read::is_dns_label(&n.value) {
                r.error(
                    n.span,
                    format!(
                        "`metadata.namespace` `{}` is not a valid namespace: lower-case letters, digits and `-`, at most 63 (a DNS-1123 label)",
                        shown(&n.value)
                    ),
                );
            }
            n.value
        })
        .filter(|n| !n.is_empty());
    let namespace = if is_cluster_scoped(kind) {
        None
    } else {
        Some(namespace.unwrap_or_else(|| default_namespace.to_string()))
    };
    let group = api_group(api_version);
    let body =
        if let Some(wk) = WorkloadKind::from_kind(kind, group) {
            Some(Body::Workload(Box::new(Workload::read(r, wk, node, span))))
        } else {
            match (group, kind) {
                ("autoscaling", "HorizontalPodAutoscaler") => HorizontalPodAutoscaler::read(r, node, api_version, span)
                    .map(|h| Body::HorizontalPodAutoscaler(Box::new(h))),
                ("policy", "PodDisruptionBudget") => {
                    PodDisruptionBudget::read(r, node, span).map(|p| Body::PodDisruptionBudget(Box::new(p)))
                }
                ("descheduler", "DeschedulerPolicy") => Some(Body::DeschedulerPolicy(Box::new(
                    DeschedulerPolicy::read(r, node, api_version),
                ))),
                ("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration") => Some(Body::SchedulerConfiguration(
                    Box::new(SchedulerConfiguration::read(r, node)),
                )),
                ("", "Node") => Some(Body::Node(Box::new(NodeObject::read(r, node, labels.clone())))),
                ("", "Namespace") => Some(Body::Namespace),
                ("", "Service") => Some(Body::Service {
                    selector: r
                        .map(node, "spec")
                        .map(|spec| r.string_map(spec, "selector"))
                        .unwrap_or_default(),
                }),
                ("argoproj.io", "Application") => Some(deploy_source(node.get("spec"))),
                // Flux builds a path without a kustomization from every manifest under it.
                ("kustomize.toolkit.fluxcd.io", "Kustomization") => Some(Body::DeploySource {
                    paths: node
                        .at(&["spec", "path"])
                        .and_then(Node::as_str)
                        .map(|path| DeployedPath {
                            path: path.to_string(),
                            recurse: true,
                            include: None,
                            exclude: None,
                        })
                        .into_iter()
                        .collect(),
                }),
                ("storage.k8s.io", "StorageClass") => {
                    Some(Body::StorageClass(Box::new(storage::StorageClass::read(r, node, span))))
                }
                ("", "PersistentVolumeClaim") => Some(Body::PersistentVolumeClaim(Box::new(
                    node.get("spec")
                        .map(|s| storage::PersistentVolumeClaim::read_spec(r, s))
                        .unwrap_or(storage::PersistentVolumeClaim {
                            storage_class: None,
                            volume_name: None,
                        }),
                ))),
                ("", "PersistentVolume") => Some(Body::PersistentVolume(Box::new(storage::PersistentVolume::read(
                    r, node,
                )))),
                ("scheduling.k8s.io", "PriorityClass") => Some(Body::PriorityClass {
                    value: r.int32(node, "value").map_or(0, |v| v.value),
                    global_default: r.bool(node, "globalDefault").is_some_and(|b| b.value),
                }),
                _ => Some(Body::Other),
            }
        };
    let modelled = !matches!(
        body,
        Some(Body::Other)
            | Some(Body::DeschedulerPolicy(_))
            | Some(Body::SchedulerConfiguration(_))
            | Some(Body::DeploySource { .. })
    );
    if name.is_empty() && modelled {
        r.error(span, format!("{kind} has no `metadata.name`"));
    }
    let mut ignores = Vec::new();
    read_ignores(metadata, &mut ignores);
    if matches!(body, Some(Body::Workload(_))) {
        let template = node
            .get("spec")
            .and_then(|s| s.get("template"))
            .and_then(|t| t.get("metadata"));
        read_ignores(template, &mut ignores);
    }
    Some(Object {
        id: ObjectId {
            kind: kind.to_string(),
            namespace,
            name,
        },
        api_version: api_version.to_string(),
        labels,
        span,
        embedded: false,
        scope: 0,
        shadowed: false,
        invalid: false,
        body: body.unwrap_or(Body::Other),
        ignores,
    })
}

/// Policies kept as YAML strings in ConfigMap keys (the descheduler's and kube-scheduler's
/// usual deployment). Their nodes are mapped back to the lines of the ConfigMap's block scalar.
fn load_embedded(node: &Node, config_map: &Object, sources: &SourceMap, diags: &mut Diagnostics, out: &mut Loaded) {
    let Some(data) = node.get("data").and_then(Node::as_map) else {
        return;
    };
    for (key, value) in data {
        let Some(text) = value.as_str() else { continue };
        if !(text.contains("DeschedulerPolicy") || text.contains("KubeSchedulerConfiguration")) {
            continue;
        }
        let stream = yaml::parse(text, value.span.file, &yaml::Limits::default());
        let shift = embedded_shift(sources, value.span, text);
        let key_name = key.scalar_text().unwrap_or_default();
        let remap = |span: Span| -> Span {
            match shift {
                Some((line0, indent)) => Span {
                    file: span.file,
                    start: Location {
                        line: span.start.line + line0,
                        column: span.start.column + indent,
                    },
                    end: Location {
                        line: span.end.line + line0,
                        column: span.end.column + indent,
                    },
                },
                None => value.span,
            }
        };
        for e in stream.errors {
            let mut d = crate::diagnostics::Diagnostic::error(
                remap(e.span),
                format!("in ConfigMap key `{key_name}`: {}", e.message),
            );
            if !e.fatal {
                d.severity = crate::diagnostics::Severity::Error;
            }
            diags.push(d);
        }
        for doc in stream.documents {
            let mut root = doc.root;
            root.for_each_mut(&mut |n| n.span = remap(n.span));
            let api_version = root
                .get("apiVersion")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string();
            let kind = root.get("kind").and_then(Node::as_str).unwrap_or_default().to_string();
            if kind != "DeschedulerPolicy" && kind != "KubeSchedulerConfiguration" {
                continue;
            }
            let mut r = Reader { diags };
            if let Some(mut object) = read_object(&mut r, &root, &api_version, &kind, "") {
                object.id.name = format!("{}[{}]", config_map.id.name, key_name);
                object.id.namespace = config_map.id.namespace.clone();
                object.embedded = true;
                out.objects.push(object);
            }
        }
    }
}

/// For a literal block scalar (`key: |`), the line offset and indentation of its content:
/// the parser's span starts at the content, and each content line is a source line.
fn embedded_shift(sources: &SourceMap, span: Span, text: &str) -> Option<(u32, u32)> {
    let indent = span.start.column.checked_sub(1)?;
    let verbatim = text.lines().take(3).enumerate().all(|(i, content)| {
        let source = sources
            .line_text(span.file, span.start.line + i as u32)
            .unwrap_or_default();
        content.is_empty() || source.get(indent as usize..) == Some(content)
    });
    verbatim.then_some((span.start.line - 1, indent))
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

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
    /// paths it deploys (`spec.source.path`, `spec.sources[].path`, the ApplicationSet's
    /// template, Flux's `spec.path`). A deployment boundary for plain files (`scopes`).
    DeploySource {
        paths: Vec<String>,
    },
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
    /// Read from a string inside another object (a policy in a ConfigMap key).
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

/// A name as the API server validates it: the objects kivi-lint models (workloads, Services,
/// HPAs, PDBs, Namespaces) need a DNS-1123 subdomain; any other kind at least a path segment
/// without control characters. A name Kubernetes rejects is an input error, and its text is
/// shown escaped (it may hold terminal escapes).
fn check_name(r: &mut Reader, name: &crate::source::Spanned<String>, kind: &str) {
    let strict = matches!(
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
    );
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
                ("argoproj.io", "ApplicationSet") => Some(deploy_source(node.at(&["spec", "template", "spec"]))),
                ("kustomize.toolkit.fluxcd.io", "Kustomization") => Some(Body::DeploySource {
                    paths: node
                        .at(&["spec", "path"])
                        .and_then(Node::as_str)
                        .map(String::from)
                        .into_iter()
                        .collect(),
                }),
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

/// The repository paths an Argo CD Application spec deploys: its `source.path` and every
/// `sources[].path`.
fn deploy_source(spec: Option<&Node>) -> Body {
    let path = |source: &Node| source.get("path").and_then(Node::as_str).map(String::from);
    let paths = spec
        .into_iter()
        .flat_map(|spec| {
            spec.get("source")
                .into_iter()
                .chain(spec.get("sources").and_then(Node::as_seq).unwrap_or_default())
                .filter_map(path)
                .collect::<Vec<_>>()
        })
        .collect();
    Body::DeploySource { paths }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::pod::{InclusionPolicy, WhenUnsatisfiable};
    use crate::manifest::quantity::IntOrPercent;
    use crate::manifest::workload::UpdateStrategy;

    const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: "0%"}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: init
        resources: {requests: {cpu: "2", memory: 64Mi}}
      containers:
      - name: app
        resources: {requests: {cpu: 500m, memory: 1Gi}}
      - name: sidecar
        resources: {limits: {cpu: 100m, memory: 100Mi}}
      nodeSelector: {disk: ssd}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: web}}
        minDomains: 3
        nodeTaintsPolicy: Honor
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
            topologyKey: kubernetes.io/hostname
"#;

    fn load_one(text: &str) -> (Loaded, Diagnostics, SourceMap) {
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let (_, loaded) = load_text(&mut sources, "t.yaml", text, &mut diags);
        (loaded, diags, sources)
    }

    #[test]
    fn deployment_fields_with_spans() {
        let (loaded, diags, _) = load_one(DEPLOYMENT);
        assert!(diags.is_empty(), "{diags:?}");
        let o = &loaded.objects[0];
        assert_eq!(o.id.to_string(), "Deployment/default/web");
        let w = o.workload().unwrap();
        assert_eq!(w.replicas.as_ref().unwrap().value, 3);
        assert_eq!(w.replicas.as_ref().unwrap().span.start.line, 7);
        // max(app 500m + sidecar-less 100m, init 2000m) = 2000m; memory max(1Gi+100Mi, 64Mi)
        let req = w.template.spec.effective_request();
        assert_eq!(req.cpu_millis, 2000);
        assert_eq!(req.memory_bytes, (1 << 30) + 100 * (1 << 20));
        match &w.strategy {
            UpdateStrategy::RollingUpdate {
                max_surge,
                max_unavailable,
                ..
            } => {
                assert_eq!(max_surge.value, IntOrPercent::Int(1));
                assert_eq!(max_unavailable.value, IntOrPercent::Percent(0));
            }
            s => panic!("{s:?}"),
        }
        let tsc = &w.template.spec.topology_spread_constraints[0];
        assert_eq!(tsc.max_skew.value, 1);
        assert_eq!(tsc.max_skew.span.start.line, 29);
        assert_eq!(tsc.when_unsatisfiable.value, WhenUnsatisfiable::DoNotSchedule);
        assert_eq!(tsc.node_taints_policy, InclusionPolicy::Honor);
        assert_eq!(tsc.node_affinity_policy, InclusionPolicy::Honor);
        assert_eq!(tsc.min_domains.as_ref().unwrap().value, 3);
        assert_eq!(
            w.template.spec.affinity.pod_anti.required[0].topology_key.value,
            "kubernetes.io/hostname"
        );
        assert_eq!(w.template.spec.tolerations.len(), 1);
        assert_eq!(w.template.spec.node_selector["disk"], "ssd");
    }

    #[test]
    fn bad_fields_are_located() {
        let (loaded, diags, sources) = load_one(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: three\n  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, resources: {requests: {cpu: 12parsecs}}}]}}\n",
        );
        assert_eq!(loaded.objects.len(), 1);
        let msgs: Vec<String> = diags
            .iter()
            .map(|d| crate::diagnostics::location_string(&sources, d.span) + " " + &d.message)
            .collect();
        assert!(
            msgs[0].starts_with("t.yaml:5:13 `replicas` must be an integer"),
            "{msgs:?}"
        );
        assert!(msgs.iter().any(|m| m.contains("12parsecs")), "{msgs:?}");
    }

    #[test]
    fn lists_are_expanded_and_documents_without_kind_skipped() {
        let (loaded, _, _) = load_one(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n---\nfoo: bar\n---\n- 1\n",
        );
        assert_eq!(loaded.objects.len(), 2);
        assert_eq!(loaded.skipped.len(), 2);
    }

    /// An empty `metrics` list is defaulted as a missing one: 80% cpu (v2 defaults.go).
    #[test]
    fn hpa_empty_metrics_default_to_cpu() {
        let (loaded, diags, _) = load_one(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: b}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n  metrics: []\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let Body::HorizontalPodAutoscaler(h) = &loaded.objects[0].body else {
            panic!()
        };
        assert!(matches!(
            h.metrics[..],
            [autoscaling::Metric::Resource {
                target: autoscaling::MetricTarget::Utilization(80),
                ..
            }]
        ));
    }

    #[test]
    fn hpa_v1_and_v2() {
        let (loaded, diags, _) = load_one(
            "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 5, targetCPUUtilizationPercentage: 50}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: b}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 10\n  metrics:\n  - {type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}}\n  - {type: External, external: {metric: {name: queue}, target: {type: Value, value: '30'}}}\n  - {type: ContainerResource, containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 70}}}\n  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60, policies: [{type: Percent, value: 50, periodSeconds: 15}]}\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let Body::HorizontalPodAutoscaler(a) = &loaded.objects[0].body else {
            panic!()
        };
        assert_eq!(a.min_replicas.value, 1);
        assert!(matches!(
            a.metrics[0],
            autoscaling::Metric::Resource {
                target: autoscaling::MetricTarget::Utilization(50),
                ..
            }
        ));
        let Body::HorizontalPodAutoscaler(b) = &loaded.objects[1].body else {
            panic!()
        };
        assert!(matches!(
            b.metrics[0],
            autoscaling::Metric::Resource {
                target: autoscaling::MetricTarget::AverageValue(524_288_000),
                ..
            }
        ));
        assert!(matches!(
            b.metrics[1],
            autoscaling::Metric::Custom {
                source: autoscaling::MetricSource::External,
                average: false,
                ..
            }
        ));
        assert!(matches!(
            &b.metrics[2],
            autoscaling::Metric::Resource {
                target: autoscaling::MetricTarget::Utilization(70),
                container: Some(c),
                ..
            } if c == "app"
        ));
        assert_eq!(b.scale_down.as_ref().unwrap().stabilization_window_seconds, Some(60));
    }

    /// autoscaling/v2beta1 writes the target inline; v2beta2 as v2 does.
    #[test]
    fn hpa_v2beta1_and_v2beta2() {
        let (loaded, diags, _) = load_one(
            "apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 5\n  metrics:\n  - {type: Resource, resource: {name: cpu, targetAverageUtilization: 70}}\n  - {type: Resource, resource: {name: cpu, targetAverageValue: 250m}}\n---\napiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: b}\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 5\n  metrics:\n  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let Body::HorizontalPodAutoscaler(a) = &loaded.objects[0].body else {
            panic!()
        };
        assert!(matches!(
            a.metrics[..],
            [
                autoscaling::Metric::Resource {
                    target: autoscaling::MetricTarget::Utilization(70),
                    ..
                },
                autoscaling::Metric::Resource {
                    target: autoscaling::MetricTarget::AverageValue(250),
                    ..
                }
            ]
        ));
        let Body::HorizontalPodAutoscaler(b) = &loaded.objects[1].body else {
            panic!()
        };
        assert!(b.has_modelled_metric());
    }

    #[test]
    fn pdb_defaults_and_selector() {
        let (loaded, diags, _) = load_one(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n",
        );
        assert!(diags.is_empty());
        let Body::PodDisruptionBudget(p) = &loaded.objects[0].body else {
            panic!()
        };
        assert_eq!(p.max_unavailable.as_ref().unwrap().value, IntOrPercent::Int(1));
        assert!(p.min_available.is_none());
    }

    #[test]
    fn descheduler_policy_in_configmap_keeps_lines() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: kube-system}\ndata:\n  policy.yaml: |\n    apiVersion: \"descheduler/v1alpha2\"\n    kind: \"DeschedulerPolicy\"\n    profiles:\n      - name: P\n        pluginConfig:\n        - name: \"LowNodeUtilization\"\n          args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n        plugins:\n          balance:\n            enabled: [\"LowNodeUtilization\"]\n";
        let (loaded, diags, _) = load_one(text);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(loaded.objects.len(), 2);
        let policy = loaded.objects.iter().find(|o| o.embedded).unwrap();
        assert_eq!(policy.id.to_string(), "DeschedulerPolicy/kube-system/d[policy.yaml]");
        let Body::DeschedulerPolicy(p) = &policy.body else {
            panic!()
        };
        let plugin = &p.profiles[0].plugins[0];
        assert_eq!(plugin.name.value, "LowNodeUtilization");
        assert_eq!(plugin.name.span.start.line, 15);
        assert!(plugin.balances_across_workloads());
    }

    #[test]
    fn descheduler_v1alpha1_is_normalised() {
        let (loaded, diags, _) = load_one(
            "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates: {enabled: true}\n  LowNodeUtilization:\n    enabled: true\n    params:\n      nodeResourceUtilizationThresholds: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n  PodLifeTime: {enabled: false}\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let Body::DeschedulerPolicy(p) = &loaded.objects[0].body else {
            panic!()
        };
        assert_eq!(p.profiles.len(), 2);
        assert!(
            matches!(&p.profiles[1].plugins[0].args, descheduler::PluginArgs::NodeUtilization { thresholds, .. } if thresholds["cpu"] == 20)
        );
    }

    #[test]
    fn scheduler_configuration() {
        let (loaded, diags, _) = load_one(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 2}]}}\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let Body::SchedulerConfiguration(c) = &loaded.objects[0].body else {
            panic!()
        };
        let p = c.profile("default-scheduler").unwrap();
        assert_eq!(
            p.scoring_strategy.as_ref().unwrap().value,
            scheduler_config::ScoringStrategy::MostAllocated
        );
        assert_eq!(p.default_constraints.as_ref().unwrap().len(), 1);
        // Listing resources leaves the others out.
        assert_eq!(p.resource_weights.get("cpu"), Some(&2));
        assert_eq!(p.resource_weights.get("memory"), None);
    }

    #[test]
    fn scheduler_configuration_added_affinity_and_ratio_shape() {
        let (loaded, diags, _) = load_one(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [general]}]}]\n        preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu}], requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        let Body::SchedulerConfiguration(c) = &loaded.objects[0].body else {
            panic!()
        };
        let p = c.profile("default-scheduler").unwrap();
        let general: Labels = [
            ("pool".to_string(), "general".to_string()),
            ("zone".to_string(), "a".to_string()),
        ]
        .into();
        let other: Labels = [("pool".to_string(), "gpu".to_string())].into();
        assert!(p.added_affinity.required_matches("n1", &general));
        assert!(!p.added_affinity.required_matches("n2", &other));
        assert_eq!(p.added_affinity.preferred_weight("n1", &general), 5);
        assert_eq!(p.resource_weights.get("cpu"), Some(&1), "an unset weight is 1");
        assert_eq!(
            p.ratio_shape,
            vec![
                scheduler_config::ShapePoint {
                    utilization: 0,
                    score: 0
                },
                scheduler_config::ShapePoint {
                    utilization: 100,
                    score: 10
                }
            ]
        );
    }

    #[test]
    fn ratio_shape_is_validated_with_a_location() {
        for (shape, message) in [
            ("[]", "at least one point"),
            (
                "[{utilization: 50, score: 1}, {utilization: 50, score: 2}]",
                "strictly increasing",
            ),
            ("[{utilization: 101, score: 1}]", "from 0 to 100"),
            ("[{utilization: 10, score: 11}]", "from 0 to 10"),
        ] {
            let text = format!(
                "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {{scoringStrategy: {{type: RequestedToCapacityRatio, requestedToCapacityRatio: {{shape: {shape}}}}}}}\n"
            );
            let (_, diags, _) = load_one(&text);
            let d = diags
                .iter()
                .next()
                .unwrap_or_else(|| panic!("no diagnostic for {shape}"));
            assert!(d.message.contains(message), "{shape}: {}", d.message);
            assert_eq!(d.span.start.line, 6, "{shape}");
        }
    }

    #[test]
    fn object_id_parse() {
        assert_eq!(
            ObjectId::parse("Deployment/default/web").unwrap().to_string(),
            "Deployment/default/web"
        );
        assert_eq!(ObjectId::parse("Node/n1").unwrap().to_string(), "Node/n1");
        assert!(ObjectId::parse("Deployment/web").is_none());
        assert!(ObjectId::parse("web").is_none());
    }
}

#[cfg(test)]
mod robustness {
    use super::*;
    use proptest::prelude::*;

    /// Fragments that steer random text towards YAML and Kubernetes shapes.
    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("apiVersion: apps/v1\n".to_string()),
            Just("kind: Deployment\n".to_string()),
            Just("kind: List\nitems:\n".to_string()),
            Just("metadata: {name: x}\n".to_string()),
            Just("spec:\n  replicas: ".to_string()),
            Just("  template:\n    spec:\n      containers: [{resources: {requests: {cpu: ".to_string()),
            Just("topologySpreadConstraints: [{maxSkew: ".to_string()),
            Just("---\n".to_string()),
            Just("&a [*a]\n".to_string()),
            Just("<<: {a: 1}\n".to_string()),
            "[ -~\n\t]{0,12}".prop_map(|s| s),
            any::<u8>().prop_map(|b| (b as char).to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn any_text_is_read_without_panic(parts in proptest::collection::vec(fragment(), 0..24)) {
            let text: String = parts.concat();
            let mut sources = SourceMap::default();
            let mut diags = Diagnostics::default();
            let (_, loaded) = load_text(&mut sources, "p.yaml", &text, &mut diags);
            for d in diags.iter() {
                prop_assert!(d.span.start.line >= 1 && d.span.start.column >= 1);
                let _ = crate::diagnostics::render(d, &sources, false);
            }
            let _ = loaded;
        }

        #[test]
        fn quantities_round_up_and_scale(int in 0u32..100_000, frac in 0u32..1000) {
            let text = format!("{int}.{frac:03}");
            let q = quantity::Quantity::parse(&text).unwrap();
            prop_assert_eq!(q.milli_value().unwrap(), i64::from(int) * 1000 + i64::from(frac));
            prop_assert_eq!(q.value().unwrap(), i64::from(int) + i64::from(frac > 0));
            let ki = quantity::Quantity::parse(&format!("{int}Ki")).unwrap();
            prop_assert_eq!(ki.value().unwrap(), i64::from(int) * 1024);
        }
    }
}

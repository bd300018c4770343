//! `--cluster-state FILE`: the running cluster as the model's start, from what `kubectl get
//! nodes,pods,... -A -o yaml` prints (`kivi-lint snapshot` writes it). Its Nodes become the
//! cluster's pools as `cluster.fromNodes` reads them; its running Pods, on their nodes, become
//! the initial pods of the workloads that own them (a Deployment's through its ReplicaSet).

use std::collections::BTreeMap;
use std::path::Path;

use super::{Cluster, InitialPods, ObjectId};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::{self, Body, Object, WorkloadKind};
use crate::source::{SourceMap, Span};

/// What a cluster-state file says: the nodes and the pods running on them.
pub struct ClusterState {
    /// The file's start, where notes about it point.
    pub at: Span,
    /// The file as the user named it.
    path: std::path::PathBuf,
    /// Its objects (the Nodes become the cluster once the scan's objects are known).
    objects: Vec<Object>,
    pub pods: Vec<RunningPod>,
}

/// A pod bound to a node and not being deleted, by the object that owns it.
pub struct RunningPod {
    /// Its owner as the repository names it: a ReplicaSet's pods are its Deployment's
    /// (`<deployment>-<pod-template-hash>`, the Deployment controller's naming).
    pub owner: ObjectId,
    pub node: String,
    /// What it requests of its node (cpu, memory): room taken by a pod the scan does not
    /// model.
    pub request: crate::manifest::pod::Amounts,
    pub span: Span,
}

/// Where a cluster state comes from: a file, or what was read from stdin (`-`), kept to be
/// read again by PR mode's base revision.
#[derive(Clone, Debug)]
pub enum Source {
    File(std::path::PathBuf),
    Stdin(std::sync::Arc<str>),
}

impl Source {
    /// The file, if the state is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::File(p) => Some(p),
            Source::Stdin(_) => None,
        }
    }
}

/// Read the cluster state of `source`; a file that cannot be read is an error there.
pub fn load(source: &Source, sources: &mut SourceMap, diags: &mut Diagnostics) -> ClusterState {
    let path = match source {
        Source::Stdin(text) => return read(text, Path::new("-"), sources, diags),
        Source::File(path) => path,
    };
    match crate::source::read_text(path) {
        Ok(text) => read(&text, path, sources, diags),
        Err(message) => {
            let file = sources.add(crate::source::display_path(path), "");
            let at = Span::point(file, crate::source::Location::START);
            diags.push(Diagnostic::error(at, format!("--cluster-state: {message}")));
            ClusterState {
                at,
                path: path.clone(),
                objects: Vec::new(),
                pods: Vec::new(),
            }
        }
    }
}

/// Read a cluster-state file (YAML: a `List` or documents).
pub fn read(text: &str, path: &Path, sources: &mut SourceMap, diags: &mut Diagnostics) -> ClusterState {
    let shown = crate::source::display_path(path);
    let file = sources.add(shown, text);
    let stream = crate::yaml::parse(text, file, &crate::yaml::Limits::default());
    for e in &stream.errors {
        diags.error(e.span, e.message.clone());
    }
    // The objects' own problems are the cluster's, not the repository's: only a Node's
    // matter, said when they make the cluster.
    let mut quiet = Diagnostics::default();
    let loaded = manifest::load(&stream.documents, "default", sources, &mut quiet);
    let pods = loaded.objects.iter().filter_map(running_pod).collect();
    ClusterState {
        at: Span::point(file, crate::source::Location::START),
        path: path.to_path_buf(),
        objects: loaded.objects,
        pods,
    }
}

impl ClusterState {
    /// The cluster its Nodes make, grouped into pools as `cluster.fromNodes` groups them,
    /// with the room that pods of workloads not among `scanned` take on each node reserved;
    /// `None` when it holds no Node (the config's cluster stays).
    pub fn cluster(&self, scanned: &[Object], diags: &mut Diagnostics) -> Option<Cluster> {
        if !self.objects.iter().any(|o| matches!(o.body, Body::Node(_))) {
            return None;
        }
        let mut reserved: BTreeMap<String, crate::manifest::pod::Amounts> = BTreeMap::new();
        for pod in self.pods.iter().filter(|p| !is_scanned(scanned, &p.owner)) {
            let taken = reserved.entry(pod.node.clone()).or_default();
            *taken = taken.saturating_add(pod.request);
        }
        Some(super::cluster::from_nodes(
            &self.objects,
            &reserved,
            self.at,
            &self.path,
            diags,
        ))
    }
}

/// Whether the scan has the workload `id` (not one made from another object).
fn is_scanned(objects: &[Object], id: &ObjectId) -> bool {
    objects.iter().any(|o| !o.embedded && &o.id == id)
}

/// A Pod object that runs on a node, with its owner; `None` for anything else, a pod not
/// bound yet, one being deleted, or a Job's (it runs to completion and leaves).
fn running_pod(o: &Object) -> Option<RunningPod> {
    let w = o.workload().filter(|w| w.kind == WorkloadKind::Pod)?;
    let node = w.template.spec.node_name.as_ref()?.value.clone();
    if w.template.deleting {
        return None;
    }
    let namespace = o.id.namespace.clone();
    let owner = match w.template.owners.first() {
        None => o.id.clone(),
        Some(r) if r.kind == "ReplicaSet" => {
            let hash = w.template.labels.get("pod-template-hash");
            let deployment = hash.and_then(|h| r.name.strip_suffix(&format!("-{h}")));
            match deployment {
                Some(name) => ObjectId {
                    kind: "Deployment".into(),
                    namespace,
                    name: name.to_string(),
                },
                None => ObjectId {
                    kind: "ReplicaSet".into(),
                    namespace,
                    name: r.name.clone(),
                },
            }
        }
        Some(r) if matches!(r.kind.as_str(), "StatefulSet" | "DaemonSet" | "ReplicationController") => ObjectId {
            kind: r.kind.clone(),
            namespace,
            name: r.name.clone(),
        },
        Some(_) => return None,
    };
    Some(RunningPod {
        owner,
        node,
        request: w.template.spec.effective_request(),
        span: o.span,
    })
}

/// The initial pods of the scanned workloads, per workload and node, from the running pods;
/// a note counts those of workloads the scan does not have.
pub fn initial_pods(
    state: &ClusterState,
    cluster: &Cluster,
    objects: &[Object],
    at: Span,
    diags: &mut Diagnostics,
) -> Vec<InitialPods> {
    let scanned = |id: &ObjectId| is_scanned(objects, id);
    let mut counted: BTreeMap<(String, String), InitialPods> = BTreeMap::new();
    let mut elsewhere = 0;
    let mut unknown_node = 0;
    for pod in &state.pods {
        if !scanned(&pod.owner) {
            elsewhere += 1;
            continue;
        }
        if !cluster.has_node(&pod.node) {
            unknown_node += 1;
            continue;
        }
        counted
            .entry((pod.owner.to_string(), pod.node.clone()))
            .and_modify(|p| p.count += 1)
            .or_insert_with(|| InitialPods {
                workload: pod.owner.clone(),
                node: pod.node.clone(),
                count: 1,
                span: pod.span,
            });
    }
    if elsewhere > 0 {
        diags.push(Diagnostic::note(
            at,
            if elsewhere == 1 {
                "1 running pod of a workload this scan does not have is not modelled: the cpu and memory it requests are reserved on its node".to_string()
            } else {
                format!(
                    "{elsewhere} running pods of workloads this scan does not have are not modelled: the cpu and memory they request are reserved on their nodes"
                )
            },
        ));
    }
    if unknown_node > 0 {
        diags.push(Diagnostic::warning(
            at,
            format!(
                "{} on nodes the cluster state does not list {} left out",
                crate::diagnostics::plural(unknown_node, "running pod"),
                if unknown_node == 1 { "is" } else { "are" },
            ),
        ));
    }
    counted.into_values().collect()
}

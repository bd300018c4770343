//! Verification units: workloads that must be verified together.
//!
//! A unit is a connected component of the interaction graph over the workloads of one scope.
//! Edges (each documented in docs/units.md, with what is deliberately not an edge):
//! - an HPA joins its target (the HPA is a member of the target's unit);
//! - a PDB joins every workload whose pods it selects;
//! - a topology spread constraint, pod affinity or anti-affinity term of one workload whose
//!   selector matches another workload's pod labels (in the namespaces the term covers);
//! - a descheduler plugin that balances node utilisation (LowNodeUtilization,
//!   HighNodeUtilization) joins the workloads it may evict that share a node pool;
//! - workloads that can share a node pool and whose requests at their largest replica counts
//!   do not all fit in that pool at its largest size.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub mod assumed;
mod capacity;
mod edges;
mod grouping;
mod notes;
pub mod storage;

use std::borrow::Cow;

use crate::checks::{self, Applies, CheckId};
use crate::config::{Cluster, Config, EnvironmentEvent, NodePool};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::pod::{PodAffinityTerm, PodSpec};
use crate::manifest::read::truncate;
use crate::manifest::selector::{Labels, selects};
use crate::manifest::taint::{TaintEffect, tolerates_for_scheduling};
use crate::manifest::{Body, Object, WorkloadKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Workload,
    Autoscaler,
    DisruptionBudget,
    DeschedulerPolicy,
    /// A Service that decides the workload's default spread constraints.
    Service,
    /// A StorageClass, PersistentVolumeClaim or PersistentVolume that decides the zones the
    /// workload's pods can run in.
    Storage,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Member {
    pub object: usize,
    pub role: Role,
}

/// Why two workloads are in one unit. `reason` reads with `from` as "it" and `to` as
/// "them" ("its podAffinity selects their pods").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unit {
    /// Stable: a hash of the scope and the member identities.
    pub id: String,
    pub name: String,
    pub scope: usize,
    /// Workloads first, then the objects attached to them; indices into the object list.
    pub members: Vec<Member>,
    /// Node pools the unit's pods can use.
    pub node_pools: Vec<String>,
    pub checks: Vec<CheckId>,
    pub edges: Vec<Edge>,
    /// Enabled checks the unit's objects make relevant that no run explores, with why: a
    /// PodDisruptionBudget's `drain-completes` without the `node-drain` event. The report
    /// says "not checked", never "verified".
    pub not_checked: Vec<(CheckId, &'static str)>,
    /// The cluster the unit is verified against when it is not the config's: with no cluster
    /// described, the assumed one that admits what its workloads require of nodes
    /// ([`assumed`]).
    #[serde(skip)]
    pub cluster: Option<Cluster>,
    /// `drain-completes` is explored in a model of its own: the unit has a
    /// PodDisruptionBudget and the config does not drain nodes. A budget that blocks every
    /// drain is the most common availability mistake, so it is checked with no config; the
    /// drain is the only event there, and its combinations with the config's events are not
    /// explored (`search::faults`).
    pub drain_alone: bool,
}

impl Unit {
    /// The config this unit is verified with: the scan's, with the unit's own cluster.
    pub fn config<'c>(&self, config: &'c Config) -> Cow<'c, Config> {
        match &self.cluster {
            Some(cluster) => Cow::Owned(Config {
                cluster: cluster.clone(),
                ..config.clone()
            }),
            None => Cow::Borrowed(config),
        }
    }

    /// The cluster this unit is verified against.
    pub fn cluster<'c>(&'c self, config: &'c Config) -> &'c Cluster {
        self.cluster.as_ref().unwrap_or(&config.cluster)
    }

    /// The cluster this unit is verified against, to edit (a fix's node counts).
    pub fn cluster_mut<'c>(&'c mut self, config: &'c mut Config) -> &'c mut Cluster {
        self.cluster.as_mut().unwrap_or(&mut config.cluster)
    }

    pub fn workloads(&self) -> impl Iterator<Item = usize> + '_ {
        self.members
            .iter()
            .filter(|m| m.role == Role::Workload)
            .map(|m| m.object)
    }

    /// The unit's HorizontalPodAutoscaler that scales workload `w` (its object index too).
    pub fn autoscaler_of<'o>(
        &self,
        objects: &'o [Object],
        w: usize,
    ) -> Option<(usize, &'o crate::manifest::HorizontalPodAutoscaler)> {
        self.members
            .iter()
            .filter(|m| m.role == Role::Autoscaler)
            .find_map(|m| match &objects[m.object].body {
                Body::HorizontalPodAutoscaler(h)
                    if h.scale_target_ref.kind == objects[w].id.kind
                        && h.scale_target_ref.name == objects[w].id.name =>
                {
                    Some((m.object, h.as_ref()))
                }
                _ => None,
            })
    }
}

/// Group the objects into units. Objects are indexed as given.
///
/// `policy` is the DeschedulerPolicy chosen by the config (`descheduler.policy`); without it
/// the first policy among the objects is used.
pub fn build(
    objects: &[Object],
    config: &Config,
    scope_paths: &[String],
    policy: Option<usize>,
    diags: &mut Diagnostics,
) -> Vec<Unit> {
    let graph = Graph::new(objects, config, policy, diags);
    let mut units = Vec::new();
    for scope in graph.scopes() {
        units.extend(graph.units_of_scope(scope, scope_paths.get(scope).map_or("", String::as_str)));
    }
    units.sort_by(|a, b| (a.scope, &a.name, &a.id).cmp(&(b.scope, &b.name, &b.id)));
    units
}

struct Graph<'a> {
    objects: &'a [Object],
    config: &'a Config,
    workloads: Vec<usize>,
    /// Attachments: workload → (object, role).
    attached: BTreeMap<usize, BTreeSet<(usize, Role)>>,
    edges: BTreeSet<Edge>,
    pools: BTreeMap<usize, Vec<usize>>,
    max_replicas: BTreeMap<usize, i64>,
    policy: Option<usize>,
}

impl<'a> Graph<'a> {
    fn new(objects: &'a [Object], config: &'a Config, policy: Option<usize>, diags: &mut Diagnostics) -> Graph<'a> {
        let workloads: Vec<usize> = (0..objects.len())
            .filter(|&i| objects[i].workload().is_some() && !objects[i].shadowed && !objects[i].invalid)
            .filter(|&i| {
                let hook = objects[i].workload().is_some_and(|w| w.hook());
                if hook {
                    diags.push(Diagnostic::info(
                        objects[i].span,
                        format!(
                            "{} is a hook of a release: run around it and deleted after, not verified",
                            objects[i].id
                        ),
                    ));
                }
                !hook
            })
            .collect();
        let mut g = Graph {
            objects,
            config,
            workloads,
            attached: BTreeMap::new(),
            edges: BTreeSet::new(),
            pools: BTreeMap::new(),
            max_replicas: BTreeMap::new(),
            policy,
        };
        g.autoscalers(diags);
        g.disruption_budgets(diags);
        g.services();
        g.volumes();
        g.selector_edges();
        g.external_affinity(diags);
        g.node_pools(diags);
        g.descheduler(diags);
        g.capacity_edges();
        g
    }

    /// Pods that run to completion: capacity consumers, never judged.
    fn batch(&self, w: usize) -> bool {
        self.objects[w].workload().is_some_and(|wl| wl.batch())
    }

    fn workload_spec(&self, w: usize) -> &'a PodSpec {
        &self.objects[w].workload().expect("a workload").template.spec
    }

    fn labels(&self, w: usize) -> &'a Labels {
        &self.objects[w].workload().expect("a workload").template.labels
    }

    fn same_scope_workloads(&self, o: usize) -> impl Iterator<Item = usize> + '_ {
        let scope = self.objects[o].scope;
        self.workloads
            .iter()
            .copied()
            .filter(move |&w| self.objects[w].scope == scope)
    }

    fn edge(&mut self, a: usize, b: usize, reason: String) {
        if a != b {
            self.edges.insert(Edge { from: a, to: b, reason });
        }
    }

    fn autoscalers(&mut self, diags: &mut Diagnostics) {
        for (i, o) in self.objects.iter().enumerate() {
            let Body::HorizontalPodAutoscaler(hpa) = &o.body else {
                continue;
            };
            if o.shadowed {
                continue;
            }
            let target = &hpa.scale_target_ref;
            let found = self.same_scope_workloads(i).find(|&w| {
                let t = &self.objects[w];
                t.id.kind == target.kind && t.id.name == target.name && t.id.namespace == o.id.namespace
            });
            if o.invalid {
                self.not_verified(found.into_iter().collect(), i, diags);
                continue;
            }
            match found {
                Some(w) => {
                    if self
                        .attached
                        .get(&w)
                        .is_some_and(|a| a.iter().any(|(_, r)| *r == Role::Autoscaler))
                    {
                        diags.push(Diagnostic::warning(
                            target.span,
                            format!("{} is the target of more than one HorizontalPodAutoscaler; Kubernetes refuses to scale it (AmbiguousSelector)", self.objects[w].id),
                        ));
                    }
                    self.attached.entry(w).or_default().insert((i, Role::Autoscaler));
                    self.max_replicas.insert(w, i64::from(hpa.max_replicas.value.max(1)));
                }
                None => diags.push(Diagnostic::warning(
                    target.span,
                    format!(
                        "{} targets {}/{}/{}, which is not among the scanned objects",
                        o.id,
                        target.kind,
                        o.namespace(),
                        target.name
                    ),
                )),
            }
        }
    }

    /// Take `workloads` out of verification because `invalid`, which acts on them, has an
    /// input error: the API server would refuse it, and a half-read object (an HPA whose
    /// `maxReplicas` is below its `minReplicas`) is no input a model can be built from. The
    /// error is the finding; a note says what is not verified.
    fn not_verified(&mut self, workloads: Vec<usize>, invalid: usize, diags: &mut Diagnostics) {
        for w in workloads {
            self.workloads.retain(|&x| x != w);
            self.attached.remove(&w);
            diags.push(Diagnostic::info(
                self.objects[w].span,
                format!(
                    "{} is not verified: {}, which acts on it, has input errors",
                    self.objects[w].id, self.objects[invalid].id
                ),
            ));
        }
    }

    fn disruption_budgets(&mut self, diags: &mut Diagnostics) {
        for (i, o) in self.objects.iter().enumerate() {
            let Body::PodDisruptionBudget(pdb) = &o.body else {
                continue;
            };
            if o.shadowed {
                continue;
            }
            let Some(selector) = &pdb.selector else {
                diags.push(Diagnostic::warning(
                    o.span,
                    format!("{} has no selector: it selects no pod", o.id),
                ));
                continue;
            };
            let selected: Vec<usize> = self
                .same_scope_workloads(i)
                .filter(|&w| self.objects[w].namespace() == o.namespace() && selector.matches(self.labels(w)))
                .collect();
            if o.invalid {
                self.not_verified(selected, i, diags);
                continue;
            }
            if selected.is_empty() {
                diags.push(Diagnostic::warning(
                    selector.span,
                    format!("{} selects no pods of the scanned workloads", o.id),
                ));
            }
            for &w in &selected {
                self.attached.entry(w).or_default().insert((i, Role::DisruptionBudget));
            }
            for pair in selected.windows(2) {
                self.edge(pair[0], pair[1], format!("both are selected by {}", o.id));
            }
        }
    }

    /// A Service joins the workloads whose pods it selects where it decides their default
    /// spread constraints: no constraints of their own, and not a Deployment, whose
    /// ReplicaSet's selector already narrows the count to its own pods (DefaultSelector).
    fn services(&mut self) {
        for (i, o) in self.objects.iter().enumerate() {
            let Body::Service { selector } = &o.body else {
                continue;
            };
            if o.shadowed || selector.is_empty() {
                continue;
            }
            let selected: Vec<usize> = self
                .same_scope_workloads(i)
                .filter(|&w| {
                    let workload = self.objects[w].workload().expect("a workload");
                    self.objects[w].namespace() == o.namespace()
                        && workload.kind != WorkloadKind::Deployment
                        && workload.template.spec.topology_spread_constraints.is_empty()
                        && selects(selector, self.labels(w))
                })
                .collect();
            for w in selected {
                self.attached.entry(w).or_default().insert((i, Role::Service));
            }
        }
    }

    /// The classes, claims and volumes that tie a workload's pods to zones.
    fn volumes(&mut self) {
        for &w in &self.workloads {
            for o in storage::pod_volumes(self.objects, w).objects {
                self.attached.entry(w).or_default().insert((o, Role::Storage));
            }
        }
    }

    /// The selector of workload `w`'s default spread constraints, if they apply.
    fn default_spread_selector(&self, w: usize) -> Option<crate::manifest::workload::DefaultSpreadSelector> {
        let workload = self.objects[w].workload().expect("a workload");
        if !workload.template.spec.topology_spread_constraints.is_empty() {
            return None;
        }
        let services =
            self.attached
                .get(&w)
                .into_iter()
                .flatten()
                .filter_map(|(o, role)| match (&self.objects[*o].body, role) {
                    (Body::Service { selector }, Role::Service) => Some(selector),
                    _ => None,
                });
        workload.default_spread_selector(services)
    }

    /// Whether a term of workload `a` covers pods of workload `b`'s namespace.
    fn term_covers_namespace(&self, a: usize, term: &PodAffinityTerm, b: usize) -> bool {
        let ns_b = self.objects[b].namespace();
        if let Some(sel) = &term.namespace_selector {
            if sel.is_empty() {
                return true;
            }
            // Namespace labels are known only for Namespace objects that were scanned; an
            // unknown namespace may match, so it counts (the edge is conservative).
            let known = self
                .objects
                .iter()
                .find(|o| matches!(o.body, Body::Namespace) && o.id.name == ns_b);
            let mut labels = known.map(|o| o.labels.clone()).unwrap_or_default();
            labels.insert("kubernetes.io/metadata.name".into(), ns_b.to_string());
            return known.is_none() || sel.matches(&labels) || term.namespaces.iter().any(|n| n == ns_b);
        }
        if term.namespaces.is_empty() {
            self.objects[a].namespace() == ns_b
        } else {
            term.namespaces.iter().any(|n| n == ns_b)
        }
    }
}

/// Whether some node of the pool (at any size up to `max`) admits the pod spec.
/// A pod with `nodeName` bypasses the scheduler: only the name matters (taints then act
/// through eviction, not admission).
pub fn pool_admits(pool: &NodePool, spec: &PodSpec) -> bool {
    if let Some(name) = &spec.node_name {
        return (1..=pool.max.max(pool.count).max(1)).any(|i| pool.node_name(i) == name.value);
    }
    if !tolerates_for_scheduling(&spec.tolerations, &pool.taints) {
        return false;
    }
    // Every zone of a pool that spans zones has a node among the first `zones.len()`.
    let nodes = pool.max.max(pool.count).max(pool.zones.len() as u32).max(1);
    (1..=nodes).any(|i| {
        let name = pool.node_name(i);
        let labels = pool.node_labels(i);
        spec.node_name.as_ref().is_none_or(|n| n.value == name)
            && selects(&spec.node_selector, &labels)
            && spec
                .affinity
                .node
                .required
                .as_ref()
                .is_none_or(|terms| terms.value.iter().any(|t| t.matches(&name, &labels)))
    })
}

#[cfg(test)]
mod tests;

//! Pod specs: what the scheduler and the controllers read of a pod.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::read::Reader;
use crate::manifest::selector::{LabelSelector, Labels, NodeSelectorTerm};
use crate::manifest::taint::Toleration;
use crate::source::{Span, Spanned};
use crate::yaml::Node;

mod affinity;
use affinity::read_node_affinity;
pub use affinity::*;

/// Whether kube-scheduler accounts a resource other than cpu, memory and pods on a node
/// (NodeResourcesFit): ephemeral storage and the scalar resources, that is hugepages,
/// attachable volumes and every domain-prefixed (extended or `kubernetes.io/`) name. Any other
/// name is ignored by the scheduler (framework.Resource.Add).
pub fn is_scalar_resource(name: &str) -> bool {
    name == "ephemeral-storage"
        || name.starts_with("hugepages-")
        || name.starts_with("attachable-volumes-")
        || name.contains('/')
}

/// Whether a scalar resource is extended: a domain outside `kubernetes.io`. Only those may be
/// left out with NodeResourcesFit's `ignoredResources` and `ignoredResourceGroups`.
pub fn is_extended_resource(name: &str) -> bool {
    name.split_once('/')
        .is_some_and(|(domain, _)| domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io"))
}

/// The scalar resources (`is_scalar_resource`) of a `requests`, `limits` or `allocatable` map,
/// as integers (bytes for storage and hugepages, counts for devices).
pub fn read_scalar_resources(r: &mut Reader, node: &Node) -> BTreeMap<String, Spanned<i64>> {
    let names: Vec<String> = node
        .as_map()
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.as_str().map(String::from))
        .filter(|k| is_scalar_resource(k))
        .collect();
    names
        .into_iter()
        .filter_map(|name| r.quantity(node, &name, false).map(|q| (name, q)))
        .collect()
}

/// Requests or limits of one container, in millicores and bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ResourceAmounts {
    pub cpu_millis: Option<Spanned<i64>>,
    pub memory_bytes: Option<Spanned<i64>>,
    /// Ephemeral storage, hugepages and extended resources (`is_scalar_resource`).
    pub scalars: BTreeMap<String, Spanned<i64>>,
}

impl ResourceAmounts {
    fn read(r: &mut Reader, parent: &Node, key: &str) -> ResourceAmounts {
        let Some(node) = r.map(parent, key) else {
            return ResourceAmounts::default();
        };
        ResourceAmounts {
            cpu_millis: r.quantity(node, "cpu", true),
            memory_bytes: r.quantity(node, "memory", false),
            scalars: read_scalar_resources(r, node),
        }
    }

    pub fn scalar(&self, name: &str) -> i64 {
        self.scalars.get(name).map_or(0, |v| v.value)
    }

    pub fn cpu(&self) -> i64 {
        self.cpu_millis.as_ref().map_or(0, |v| v.value)
    }

    pub fn memory(&self) -> i64 {
        self.memory_bytes.as_ref().map_or(0, |v| v.value)
    }
}

/// Plain totals in millicores and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Amounts {
    pub cpu_millis: i64,
    pub memory_bytes: i64,
}

impl Amounts {
    pub fn saturating_add(self, other: Amounts) -> Amounts {
        Amounts {
            cpu_millis: self.cpu_millis.saturating_add(other.cpu_millis),
            memory_bytes: self.memory_bytes.saturating_add(other.memory_bytes),
        }
    }

    pub fn max(self, other: Amounts) -> Amounts {
        Amounts {
            cpu_millis: self.cpu_millis.max(other.cpu_millis),
            memory_bytes: self.memory_bytes.max(other.memory_bytes),
        }
    }

    pub fn saturating_mul(self, n: i64) -> Amounts {
        Amounts {
            cpu_millis: self.cpu_millis.saturating_mul(n),
            memory_bytes: self.memory_bytes.saturating_mul(n),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Container {
    pub name: String,
    /// `image` as written (RemoveDuplicates tells pods of one owner apart by their images).
    pub image: String,
    pub requests: ResourceAmounts,
    pub limits: ResourceAmounts,
    /// Init containers with `restartPolicy: Always` (sidecars) run alongside the app containers.
    pub sidecar: bool,
    /// `readinessProbe.initialDelaySeconds`: the pod is not ready before this.
    pub readiness_delay_seconds: Option<i64>,
    #[serde(skip)]
    pub span: Span,
}

impl Container {
    fn read(r: &mut Reader, node: &Node) -> Container {
        let name = r.text(node, "name").map(|n| n.value).unwrap_or_default();
        let image = r.text(node, "image").map(|n| n.value).unwrap_or_default();
        let (requests, limits) = match r.map(node, "resources") {
            Some(res) => (
                ResourceAmounts::read(r, res, "requests"),
                ResourceAmounts::read(r, res, "limits"),
            ),
            None => Default::default(),
        };
        // Kubernetes defaults a missing request to the limit.
        let mut scalars = limits.scalars.clone();
        scalars.extend(requests.scalars);
        let requests = ResourceAmounts {
            cpu_millis: requests.cpu_millis.or_else(|| limits.cpu_millis.clone()),
            memory_bytes: requests.memory_bytes.or_else(|| limits.memory_bytes.clone()),
            scalars,
        };
        let sidecar = r.string(node, "restartPolicy").is_some_and(|p| p.value == "Always");
        let readiness_delay_seconds = r
            .map(node, "readinessProbe")
            .map(|p| r.int(p, "initialDelaySeconds").map_or(0, |d| d.value));
        Container {
            name,
            image,
            requests,
            limits,
            sidecar,
            readiness_delay_seconds,
            span: node.span,
        }
    }

    fn request(&self) -> Amounts {
        Amounts {
            cpu_millis: self.requests.cpu(),
            memory_bytes: self.requests.memory(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum WhenUnsatisfiable {
    DoNotSchedule,
    ScheduleAnyway,
}

/// `nodeAffinityPolicy` / `nodeTaintsPolicy` of a spread constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum InclusionPolicy {
    Honor,
    Ignore,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TopologySpreadConstraint {
    pub max_skew: Spanned<i32>,
    pub topology_key: Spanned<String>,
    pub when_unsatisfiable: Spanned<WhenUnsatisfiable>,
    /// A missing selector matches no pod.
    pub label_selector: Option<LabelSelector>,
    pub min_domains: Option<Spanned<i32>>,
    /// Default `Honor`.
    pub node_affinity_policy: InclusionPolicy,
    /// Default `Ignore`.
    pub node_taints_policy: InclusionPolicy,
    pub match_label_keys: Vec<String>,
    #[serde(skip)]
    pub span: Span,
}

impl TopologySpreadConstraint {
    fn read(r: &mut Reader, node: &Node) -> Option<TopologySpreadConstraint> {
        let max_skew = r.int32(node, "maxSkew");
        let topology_key = r.text(node, "topologyKey");
        let when = r.one_of(node, "whenUnsatisfiable", &["DoNotSchedule", "ScheduleAnyway"]);
        let (Some(max_skew), Some(topology_key), Some(when)) = (max_skew, topology_key, when) else {
            r.error(
                node.span,
                "a topology spread constraint needs `maxSkew`, `topologyKey` and `whenUnsatisfiable`",
            );
            return None;
        };
        if max_skew.value < 1 {
            r.error(max_skew.span, "`maxSkew` must be at least 1");
            return None;
        }
        if topology_key.value.is_empty() {
            r.error(topology_key.span, "`topologyKey` must not be empty");
            return None;
        }
        let when_unsatisfiable = when.map(|w| {
            if w == "DoNotSchedule" {
                WhenUnsatisfiable::DoNotSchedule
            } else {
                WhenUnsatisfiable::ScheduleAnyway
            }
        });
        let min_domains = r.int32(node, "minDomains");
        if let Some(m) = &min_domains {
            if m.value < 1 {
                r.error(m.span, "`minDomains` must be at least 1");
            } else if when_unsatisfiable.value != WhenUnsatisfiable::DoNotSchedule {
                r.error(
                    m.span,
                    "`minDomains` can only be set with `whenUnsatisfiable: DoNotSchedule`",
                );
            }
        }
        let mut policy = |key: &str, default: InclusionPolicy| match r.one_of(node, key, &["Honor", "Ignore"]) {
            Some(p) if p.value == "Honor" => InclusionPolicy::Honor,
            Some(_) => InclusionPolicy::Ignore,
            None => default,
        };
        let node_affinity_policy = policy("nodeAffinityPolicy", InclusionPolicy::Honor);
        let node_taints_policy = policy("nodeTaintsPolicy", InclusionPolicy::Ignore);
        Some(TopologySpreadConstraint {
            max_skew,
            topology_key,
            when_unsatisfiable,
            label_selector: LabelSelector::read(r, node, "labelSelector"),
            min_domains,
            node_affinity_policy,
            node_taints_policy,
            match_label_keys: r.string_list(node, "matchLabelKeys"),
            span: node.span,
        })
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PodSpec {
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    pub overhead: ResourceAmounts,
    pub node_selector: Labels,
    pub node_name: Option<Spanned<String>>,
    pub affinity: Affinity,
    pub tolerations: Vec<Toleration>,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    pub priority_class_name: Option<Spanned<String>>,
    pub scheduler_name: Option<Spanned<String>>,
    pub volumes: Volumes,
    /// `restartPolicy: Never` or `OnFailure`: the pod runs to completion (a Job's pods, test
    /// and migration pods), it is not a long-running replica.
    pub run_to_completion: bool,
    #[serde(skip)]
    pub span: Span,
}

/// What the descheduler's DefaultEvictor asks of a pod's volumes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Volumes {
    /// A `hostPath` or `emptyDir` volume (IsPodWithLocalStorage): not evicted unless
    /// `evictLocalStoragePods`.
    pub local_storage: bool,
    /// A `persistentVolumeClaim` volume: not evicted under `ignorePvcPods`.
    pub persistent_claim: bool,
    /// The `claimName`s of its `persistentVolumeClaim` volumes.
    pub claims: Vec<String>,
}

impl PodSpec {
    /// The field that keeps the pod off nodes: nodeName, required node affinity, the first
    /// toleration; else the pod spec.
    pub fn node_requirement_span(&self) -> Span {
        self.node_name
            .as_ref()
            .map(|n| n.span)
            .or_else(|| self.affinity.node.required.as_ref().map(|r| r.span))
            .or_else(|| self.tolerations.first().map(|t| t.span))
            .unwrap_or(self.span)
    }

    /// The requests that do not fit: the first container's cpu request, else its memory or
    /// another resource's; else the pod spec.
    pub fn request_span(&self) -> Span {
        let requests = || self.containers.iter().chain(&self.init_containers).map(|c| &c.requests);
        requests()
            .find_map(|r| r.cpu_millis.as_ref().map(|q| q.span))
            .or_else(|| requests().find_map(|r| r.memory_bytes.as_ref().map(|q| q.span)))
            .or_else(|| requests().find_map(|r| r.scalars.values().next().map(|q| q.span)))
            .unwrap_or(self.span)
    }

    pub fn read(r: &mut Reader, node: &Node) -> PodSpec {
        let containers: Vec<Container> = r
            .maps(node, "containers")
            .into_iter()
            .map(|c| Container::read(r, c))
            .collect();
        let init_containers = r
            .maps(node, "initContainers")
            .into_iter()
            .map(|c| Container::read(r, c))
            .collect();
        let affinity = match r.map(node, "affinity") {
            None => Affinity::default(),
            Some(a) => Affinity {
                node: read_node_affinity(r, a),
                pod: PodAffinity::read(r, a, "podAffinity"),
                pod_anti: PodAffinity::read(r, a, "podAntiAffinity"),
            },
        };
        let volumes = r.maps(node, "volumes");
        PodSpec {
            containers,
            init_containers,
            overhead: ResourceAmounts::read(r, node, "overhead"),
            node_selector: r.string_map(node, "nodeSelector"),
            node_name: r.text(node, "nodeName").filter(|n| !n.value.is_empty()),
            run_to_completion: node
                .get("restartPolicy")
                .and_then(|p| p.as_str())
                .is_some_and(|p| p == "Never" || p == "OnFailure"),
            affinity,
            tolerations: r
                .maps(node, "tolerations")
                .into_iter()
                .filter_map(|t| Toleration::read(r, t))
                .collect(),
            topology_spread_constraints: r
                .maps(node, "topologySpreadConstraints")
                .into_iter()
                .filter_map(|t| TopologySpreadConstraint::read(r, t))
                .collect(),
            priority_class_name: r.text(node, "priorityClassName"),
            scheduler_name: r.text(node, "schedulerName"),
            volumes: Volumes {
                local_storage: volumes
                    .iter()
                    .any(|v| v.get("hostPath").is_some() || v.get("emptyDir").is_some()),
                persistent_claim: volumes.iter().any(|v| v.get("persistentVolumeClaim").is_some()),
                claims: volumes
                    .iter()
                    .filter_map(|v| v.at(&["persistentVolumeClaim", "claimName"])?.as_str())
                    .map(String::from)
                    .collect(),
            },
            span: node.span,
        }
    }

    /// The pod's effective request as the scheduler computes it
    /// (k8s.io/component-helpers/resource: PodRequests): app containers and sidecars summed,
    /// against each regular init container plus the sidecars started before it; plus overhead.
    pub fn effective_request(&self) -> Amounts {
        self.request_with(Container::request)
    }

    /// The request NodeResourcesFit scores with (pkg/scheduler/util GetNonzeroRequests through
    /// PodRequests' NonMissingContainerRequests): a container that sets no cpu request counts
    /// 100m, none for memory 200 MiB; an explicit 0 stays 0.
    pub fn scoring_request(&self) -> Amounts {
        self.request_with(|c| Amounts {
            cpu_millis: c.requests.cpu_millis.as_ref().map_or(100, |v| v.value),
            memory_bytes: c.requests.memory_bytes.as_ref().map_or(200 * 1024 * 1024, |v| v.value),
        })
    }

    /// The pod's request of a scalar resource, summed as PodRequests sums cpu and memory.
    pub fn scalar_request(&self, name: &str) -> i64 {
        let mut sidecars = 0i64;
        let mut init_peak = 0i64;
        for c in &self.init_containers {
            if c.sidecar {
                sidecars = sidecars.saturating_add(c.requests.scalar(name));
                init_peak = init_peak.max(sidecars);
            } else {
                init_peak = init_peak.max(sidecars.saturating_add(c.requests.scalar(name)));
            }
        }
        let running = self
            .containers
            .iter()
            .fold(sidecars, |acc, c| acc.saturating_add(c.requests.scalar(name)));
        running.max(init_peak).saturating_add(self.overhead.scalar(name))
    }

    /// The scalar resources any container, init container or the overhead names.
    pub fn scalar_names(&self) -> impl Iterator<Item = &str> {
        self.containers
            .iter()
            .chain(&self.init_containers)
            .flat_map(|c| c.requests.scalars.keys())
            .chain(self.overhead.scalars.keys())
            .map(String::as_str)
    }

    fn request_with(&self, request: impl Fn(&Container) -> Amounts) -> Amounts {
        let mut sidecars = Amounts::default();
        let mut init_peak = Amounts::default();
        for c in &self.init_containers {
            if c.sidecar {
                sidecars = sidecars.saturating_add(request(c));
                init_peak = init_peak.max(sidecars);
            } else {
                init_peak = init_peak.max(sidecars.saturating_add(request(c)));
            }
        }
        let running = self
            .containers
            .iter()
            .fold(sidecars, |acc, c| acc.saturating_add(request(c)));
        let overhead = Amounts {
            cpu_millis: self.overhead.cpu(),
            memory_bytes: self.overhead.memory(),
        };
        running.max(init_peak).saturating_add(overhead)
    }
}

/// A pod template: the labels its pods carry and their spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PodTemplate {
    pub labels: Labels,
    pub annotations: BTreeMap<String, String>,
    /// `metadata.ownerReferences` of a bare Pod (a template has none): the DefaultEvictor never
    /// evicts a pod without owners, and RemoveDuplicates groups pods by owner.
    pub owners: Vec<OwnerReference>,
    /// A Pod with `metadata.deletionTimestamp` (from a cluster snapshot) is being deleted: it
    /// starts terminating on its node.
    pub deleting: bool,
    pub spec: PodSpec,
    #[serde(skip)]
    pub span: Span,
}

/// One entry of `metadata.ownerReferences`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OwnerReference {
    pub kind: String,
    pub name: String,
}

impl PodTemplate {
    /// Read `metadata` and `spec` of a pod or pod template node.
    pub fn read(r: &mut Reader, node: &Node) -> PodTemplate {
        let (labels, annotations, owners, deleting) = match r.map(node, "metadata") {
            Some(m) => (
                r.string_map(m, "labels"),
                r.string_map(m, "annotations"),
                r.maps(m, "ownerReferences")
                    .into_iter()
                    .map(|o| OwnerReference {
                        kind: r.text(o, "kind").map(|k| k.value).unwrap_or_default(),
                        name: r.text(o, "name").map(|k| k.value).unwrap_or_default(),
                    })
                    .collect(),
                m.get("deletionTimestamp").is_some_and(|d| !d.is_null()),
            ),
            None => Default::default(),
        };
        let spec = match r.map(node, "spec") {
            Some(s) => PodSpec::read(r, s),
            None => PodSpec {
                span: node.span,
                ..PodSpec::default()
            },
        };
        PodTemplate {
            labels,
            annotations,
            owners,
            deleting,
            spec,
            span: node.span,
        }
    }
}

//! The trace protocol between a generated model and the decoder. A step the counterexample
//! must tell prints `KIVI:<event>:<values>` (`printf("KIVI:%d:...", EVENT_..., ...)`): the
//! event's `#define` comes from this table (rendered into main.pml as `TABLES` is for inputs),
//! and `findings::decode` matches on the same enum, so the two sides cannot drift apart. The
//! values after the event are listed where each is printed. This table holds the events of
//! the controllers, which every model runs; an environment event declares the events it
//! prints in its folder (`events::Printed`), and a check the one its monitor prints when it
//! fails (`checks::MonitorEvent`), each with its decoder.
//!
//! The conformance probes (`templates/probes/`, codes 88 to 99) have a protocol of their own,
//! read by `tests/conformance`.

macro_rules! events {
    ($($(#[doc = $doc:literal])* $name:ident = $code:literal, $define:literal;)*) => {
        /// A trace event of the verification model.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Event {
            $($(#[doc = $doc])* $name = $code,)*
        }

        impl Event {
            /// Every event, in code order.
            pub const ALL: &'static [Event] = &[$(Event::$name),*];

            /// The event of a trace line's first number.
            pub fn from_code(code: i64) -> Option<Event> {
                match code {
                    $($code => Some(Event::$name),)*
                    _ => None,
                }
            }

            /// The macro the templates print it with.
            pub fn define(self) -> &'static str {
                match self {
                    $(Event::$name => $define,)*
                }
            }

            pub fn code(self) -> i64 {
                self as i64
            }
        }
    };
}

events! {
    /// A controller creates a pod: slot.
    PodCreated = 1, "EVENT_POD_CREATED";
    /// The scheduler binds a pod: slot, node.
    PodBound = 2, "EVENT_POD_BOUND";
    /// The scheduler finds no node: slot and the filters' counts.
    PodUnschedulable = 3, "EVENT_POD_UNSCHEDULABLE";
    /// The kubelet starts a pod: slot, node.
    PodStarted = 4, "EVENT_POD_STARTED";
    /// The kubelet removes a terminated pod: slot, node.
    PodRemoved = 5, "EVENT_POD_REMOVED";
    /// The HPA rescales: workload, current, desired, the usage it saw.
    HpaScaled = 6, "EVENT_HPA_SCALED";
    /// A controller deletes a pod: slot.
    PodDeleted = 7, "EVENT_POD_DELETED";
    /// Taint eviction of a pod that does not tolerate a NoExecute taint: slot, node.
    TaintEvicted = 12, "EVENT_TAINT_EVICTED";
    /// A pod goes with its node during maintenance: slot, node.
    PodLostWithNode = 15, "EVENT_POD_LOST_WITH_NODE";
    /// The descheduler evicts a pod: slot, node, the strategy.
    DeschedulerEvicted = 16, "EVENT_DESCHEDULER_EVICTED";
    /// A new revision is applied: workload.
    RolloutApplied = 25, "EVENT_ROLLOUT_APPLIED";
    /// A rollout is complete: workload.
    RolloutDone = 27, "EVENT_ROLLOUT_DONE";
    /// A descheduler plugin wanted a pod evicted and the evictor declined: slot, node,
    /// plugin, why (1: nodeFit, no other node fits it now; 2: its PodDisruptionBudget).
    DeschedulerDeclined = 50, "EVENT_DESCHEDULER_DECLINED";
    /// An Immediate claim's volume is provisioned before any pod: claim (a slot), zone (1-based
    /// in the IR's volume zones).
    VolumeProvisioned = 51, "EVENT_VOLUME_PROVISIONED";
    /// A WaitForFirstConsumer claim's volume is provisioned where its first pod was bound:
    /// claim (a slot), zone.
    VolumeProvisionedWithPod = 52, "EVENT_VOLUME_PROVISIONED_WITH_POD";
    /// The cluster autoscaler adds a node: node, pool.
    NodeAdded = 40, "EVENT_NODE_ADDED";
    /// The cluster autoscaler starts draining a node to remove it: node.
    ScaleDownStarted = 41, "EVENT_SCALE_DOWN_STARTED";
    /// It evicts a pod: slot, node.
    AutoscalerEvicted = 42, "EVENT_AUTOSCALER_EVICTED";
    /// A PodDisruptionBudget refuses its eviction: slot, node.
    AutoscalerRefused = 43, "EVENT_AUTOSCALER_REFUSED";
    /// It removes the node: node.
    NodeRemoved = 44, "EVENT_NODE_REMOVED";
    /// It wants a node for a pending pod: slot, pool.
    ScaleUpWanted = 45, "EVENT_SCALE_UP_WANTED";
    /// An informer delivers a late deletion (`stale-reads`): slot, node.
    InformerCaughtUp = 46, "EVENT_INFORMER_CAUGHT_UP";
    /// A deletion the informers have not delivered yet: slot, node.
    StaleDeletion = 47, "EVENT_STALE_DELETION";
    /// The symmetry reduction swaps two pod slots.
    PodsSwapped = 48, "EVENT_PODS_SWAPPED";
    /// The symmetry reduction swaps two nodes.
    NodesSwapped = 49, "EVENT_NODES_SWAPPED";
    /// `kivi-lint simulate`: the run ends, the cluster settled after the environment acted.
    SimulationEnded = 53, "EVENT_SIMULATION_ENDED";
}

/// Who acts in a step of a counterexample: a controller, an environment event, or the check.
/// Its name (kebab-case, as in reports) is stable: SARIF `kinds`, JSON `actor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// kube-scheduler.
    Scheduler,
    /// A node's kubelet.
    Kubelet,
    /// The Deployment controller (and the ReplicaSets it owns).
    DeploymentController,
    /// The ReplicaSet controller, for a ReplicaSet of its own.
    ReplicasetController,
    /// The ReplicationController manager.
    ReplicationController,
    /// The Job controller (a CronJob's runs too).
    JobController,
    /// The PersistentVolume controller and the storage provisioner.
    VolumeProvisioner,
    /// The StatefulSet controller.
    StatefulsetController,
    /// The DaemonSet controller.
    DaemonsetController,
    /// Whoever applied a bare Pod's manifest: nothing controls it.
    KubectlApply,
    /// The HorizontalPodAutoscaler controller.
    HorizontalPodAutoscaler,
    /// The cluster autoscaler.
    ClusterAutoscaler,
    /// The descheduler.
    Descheduler,
    /// The taint eviction controller (NoExecute taints).
    TaintEvictionController,
    /// A controller's informer delivering a late event (`stale-reads`).
    Informer,
    /// An environment event of the registry (`src/events/`), by its config `type`.
    Event(&'static str),
    /// Time passing (a stabilisation window).
    Time,
    /// A node coming back or changing state.
    Node,
    /// The model itself (a step it could not name).
    Model,
    /// The start of a cycle that repeats forever (liveness checks).
    Cycle,
    /// The check that observes the violation.
    Check,
}

impl Actor {
    /// The name reports show.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Scheduler => "scheduler",
            Actor::Kubelet => "kubelet",
            Actor::DeploymentController => "deployment-controller",
            Actor::ReplicasetController => "replicaset-controller",
            Actor::ReplicationController => "replication-controller",
            Actor::JobController => "job-controller",
            Actor::VolumeProvisioner => "volume-provisioner",
            Actor::StatefulsetController => "statefulset-controller",
            Actor::DaemonsetController => "daemonset-controller",
            Actor::KubectlApply => "kubectl-apply",
            Actor::HorizontalPodAutoscaler => "horizontal-pod-autoscaler",
            Actor::ClusterAutoscaler => "cluster-autoscaler",
            Actor::Descheduler => "descheduler",
            Actor::TaintEvictionController => "taint-eviction-controller",
            Actor::Informer => "informer",
            Actor::Event(name) => name,
            Actor::Time => "time",
            Actor::Node => "node",
            Actor::Model => "model",
            Actor::Cycle => "cycle",
            Actor::Check => "check",
        }
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reports serialise the name they print.
impl serde::Serialize for Actor {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// What a step changes in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// A controller created the pod; it waits for the scheduler.
    PodCreated,
    PodBound,
    /// The scheduler found no feasible node: the pod stays Pending.
    PodUnschedulable,
    PodStarted,
    /// Deleted, evicted or lost with its node.
    PodRemoved,
    NodeDown,
    NodeUp,
    NodeCordoned,
    NodeUncordoned,
}

impl Event {
    /// What the event changes in the cluster, and which of its values name it.
    pub fn changed(self) -> Option<Changed> {
        use Changed::{Node, Pod, PodOn};
        Some(match self {
            Event::PodCreated => Pod(Change::PodCreated),
            Event::PodBound => PodOn(Change::PodBound),
            Event::PodUnschedulable => Pod(Change::PodUnschedulable),
            Event::PodStarted => PodOn(Change::PodStarted),
            Event::PodRemoved
            | Event::TaintEvicted
            | Event::PodLostWithNode
            | Event::DeschedulerEvicted
            | Event::AutoscalerEvicted => PodOn(Change::PodRemoved),
            Event::PodDeleted => Pod(Change::PodRemoved),
            Event::ScaleDownStarted => Node(Change::NodeCordoned),
            Event::NodeAdded => Node(Change::NodeUp),
            Event::NodeRemoved => Node(Change::NodeDown),
            _ => return None,
        })
    }
}

/// Which of an event's values name what it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changed {
    /// The pod in the slot of the first value.
    Pod(Change),
    /// The pod of the first value, on the node of the second.
    PodOn(Change),
    /// The node of the first value.
    Node(Change),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes and macro names are unique and round-trip.
    #[test]
    fn events_are_distinct_and_round_trip() {
        let mut codes = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for &e in Event::ALL {
            assert!(codes.insert(e.code()) && names.insert(e.define()), "{e:?}");
            assert_eq!(Event::from_code(e.code()), Some(e));
        }
    }

    /// Reports print `as_str` and serialise with serde: both say the same name.
    #[test]
    fn actor_names_are_the_same_in_every_report() {
        for actor in [Actor::Scheduler, Actor::Event("node-drain"), Actor::Check] {
            assert_eq!(serde_json::to_value(actor).unwrap(), actor.as_str(), "{actor:?}");
        }
    }
}

//! The trace protocol between a generated model and the decoder. A step the counterexample
//! must tell prints `KIVI:<event>:<values>` (`printf("KIVI:%d:...", EVENT_..., ...)`): the
//! event's `#define` comes from this table (rendered into main.pml as `TABLES` is for inputs),
//! and `findings::decode` matches on the same enum, so the two sides cannot drift apart. The
//! values after the event are listed where each is printed. The event a check's monitor
//! prints when it fails is declared in the check's file (`checks::MonitorEvent`), with its decoder.
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
    /// `load-change`: workload, level.
    LoadChanged = 8, "EVENT_LOAD_CHANGED";
    /// `node-maintenance` takes a node down: node.
    MaintenanceStarted = 10, "EVENT_MAINTENANCE_STARTED";
    /// `node-maintenance` brings it back: node.
    MaintenanceEnded = 11, "EVENT_MAINTENANCE_ENDED";
    /// Taint eviction of a pod that does not tolerate a NoExecute taint: slot, node.
    TaintEvicted = 12, "EVENT_TAINT_EVICTED";
    /// A pod goes with its node during maintenance: slot, node.
    PodLostWithNode = 15, "EVENT_POD_LOST_WITH_NODE";
    /// The descheduler evicts a pod: slot, node, the strategy.
    DeschedulerEvicted = 16, "EVENT_DESCHEDULER_EVICTED";
    /// `node-overload` crashes a node: node, load, cpu.
    NodeOverloaded = 17, "EVENT_NODE_OVERLOADED";
    /// The overloaded node is back: node.
    NodeRestarted = 19, "EVENT_NODE_RESTARTED";
    /// `gitops-sync` resets replicas: workload, live, manifest.
    GitopsReset = 20, "EVENT_GITOPS_RESET";
    /// Pods leave their startup phase: the pod.
    StartupEnded = 21, "EVENT_STARTUP_ENDED";
    /// A new revision is applied: workload.
    RolloutApplied = 25, "EVENT_ROLLOUT_APPLIED";
    /// A rollout is complete: workload.
    RolloutDone = 27, "EVENT_ROLLOUT_DONE";
    /// `node-failure` takes a node: node.
    NodeFailed = 28, "EVENT_NODE_FAILED";
    /// The tolerations of a failed node's pod run out: slot, node.
    FailureEvicted = 29, "EVENT_FAILURE_EVICTED";
    /// A failed node comes back: node.
    NodeRecovered = 30, "EVENT_NODE_RECOVERED";
    /// `node-drain` cordons a node: node.
    DrainStarted = 31, "EVENT_DRAIN_STARTED";
    /// The drain evicts a pod: slot, node.
    DrainEvicted = 32, "EVENT_DRAIN_EVICTED";
    /// The drained node is uncordoned: node.
    DrainEnded = 33, "EVENT_DRAIN_ENDED";
    /// A descheduler plugin wanted a pod evicted and the evictor declined: slot, node,
    /// plugin, why (1: nodeFit, no other node fits it now; 2: its PodDisruptionBudget).
    DeschedulerDeclined = 50, "EVENT_DESCHEDULER_DECLINED";
    /// An Immediate claim's volume is provisioned before any pod: claim (a slot), zone (1-based
    /// in the IR's volume zones).
    VolumeProvisioned = 51, "EVENT_VOLUME_PROVISIONED";
    /// A WaitForFirstConsumer claim's volume is provisioned where its first pod was bound:
    /// claim (a slot), zone.
    VolumeProvisionedWithPod = 52, "EVENT_VOLUME_PROVISIONED_WITH_POD";
    /// `apply` sets replicas: workload, before, after.
    ApplyReplicas = 34, "EVENT_APPLY_REPLICAS";
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
}

//! Findings: verdicts per unit and check, with counterexamples told in Kubernetes terms and
//! pointing at the manifest fields that drive each step.

use serde::Serialize;

use crate::checks::CheckId;
use crate::engine::{Inconclusive, TraceEvent};
use crate::manifest::autoscaling::Metric;
use crate::manifest::{Body, Object};
use crate::model::{Ir, Names};
use crate::source::Span;

mod conclude;
mod decode;
pub mod facts;
pub mod fixes;
mod namer;
mod policy;

pub use conclude::{UnitResult, conclude, mark_timed_out, verify, verify_plans, verify_plans_or_fewer};
pub use decode::decode;
pub use policy::{Judgement, Policy, Suppressed, SuppressedBy};

/// Who acts in a step of a counterexample: a controller, an environment event, or the check.
/// Its name (kebab-case, as in reports) is stable: SARIF `kinds`, JSON `actor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
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
    /// The `load-change` event.
    LoadChange,
    /// The `node-failure` event.
    NodeFailure,
    /// The `node-drain` event.
    NodeDrain,
    /// The `node-maintenance` event.
    NodeMaintenance,
    /// The `node-overload` event.
    NodeOverload,
    /// The `gitops-sync` event.
    GitopsSync,
    /// The `apply` event (the next revision from Git).
    Apply,
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
            Actor::LoadChange => "load-change",
            Actor::NodeFailure => "node-failure",
            Actor::NodeDrain => "node-drain",
            Actor::NodeMaintenance => "node-maintenance",
            Actor::NodeOverload => "node-overload",
            Actor::GitopsSync => "gitops-sync",
            Actor::Apply => "apply",
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

/// One step of a counterexample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// The controller or event that acted.
    pub actor: Actor,
    pub message: String,
    /// The manifest field that drives the step, when there is one.
    #[serde(skip)]
    pub location: Option<Span>,
    /// What the step changes in the cluster.
    pub effect: Option<Effect>,
}

/// A step's change to the cluster state: which pod or node, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Effect {
    pub change: Change,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Violated {
        steps: Vec<Step>,
        location: Option<Span>,
    },
    Verified,
    Inconclusive(Inconclusive),
    /// The check applies but is not modelled yet.
    NotChecked,
}

/// A verified change that makes the violated check hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// One line, in manifest terms.
    pub summary: String,
    /// The field to change.
    pub location: Span,
    /// The cluster it was verified on (the counterexample's nodes).
    pub verified_on: String,
    /// The new text of `location` when the fix is one scalar's new value (`ScheduleAnyway`,
    /// a `maxSkew`, a cpu request): what an editor can apply.
    pub replacement: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    pub check: CheckId,
    pub verdict: Verdict,
    /// Where the verdict was reached: the topology of the violation or of the inconclusive
    /// run, or the largest one a verified check was verified on.
    pub topology: Option<crate::model::Topology>,
    /// Inconclusive after some runs: the last topology the check was verified on before the
    /// run that could not finish (it held on every topology of the search up to there).
    pub held_up_to: Option<crate::model::Topology>,
    /// How many topologies the check held on, up to `held_up_to`.
    pub held_topologies: usize,
    /// PR mode, violations only: whether the base revision has the same violation.
    pub baseline: Option<bool>,
    /// Violations only: a change the model checker verified to make the check hold.
    pub fix: Option<Fix>,
}

#[cfg(test)]
mod tests {
    use super::Actor;

    /// Reports print `as_str` and serialise with serde: both say the same name.
    #[test]
    fn actor_names_are_the_same_in_every_report() {
        for actor in [
            Actor::Scheduler,
            Actor::Kubelet,
            Actor::DeploymentController,
            Actor::ReplicasetController,
            Actor::ReplicationController,
            Actor::JobController,
            Actor::VolumeProvisioner,
            Actor::StatefulsetController,
            Actor::DaemonsetController,
            Actor::KubectlApply,
            Actor::HorizontalPodAutoscaler,
            Actor::ClusterAutoscaler,
            Actor::Descheduler,
            Actor::TaintEvictionController,
            Actor::Informer,
            Actor::LoadChange,
            Actor::NodeFailure,
            Actor::NodeDrain,
            Actor::NodeMaintenance,
            Actor::NodeOverload,
            Actor::GitopsSync,
            Actor::Apply,
            Actor::Time,
            Actor::Node,
            Actor::Model,
            Actor::Cycle,
            Actor::Check,
        ] {
            assert_eq!(serde_json::to_value(actor).unwrap(), actor.as_str(), "{actor:?}");
        }
    }
}

//! The one place where a peer case may be skipped, each with its reason. A skipped case is
//! counted in the summary; a case not listed here must pass.

const EXTENDED: &str = "extended resources, hugepages and ephemeral-storage are not modelled: kivi-lint checks cpu, memory and pod slots (README, Model semantics)";
const GATE: &str = "kivi-lint models the TaintTolerationComparisonOperators gate enabled (Gt and Lt tolerations match); the case runs upstream with it off";
const SERVICE: &str = "not yet: default spread constraints select through the Services, ReplicaSets and StatefulSets that select the pod; kivi-lint takes the selector of the pod's own workload, and a bare Pod has none (to fix)";
const HOSTW: &str = "not yet: the soft spread weight of a hostname constraint uses all nodes rather than the candidates (upstream: ln(candidates - ignored + 2)); to fix in controllers/scheduler.pml";

const OTHER_METRICS: &str = "kivi-lint models cpu Resource metrics (utilization or averageValue) only: an HPA whose metrics are Pods, Object or External values has no load the model could vary, so the model keeps its replicas and has no arithmetic for those metric types (README, Model fidelity)";
const NO_CLOCK_EVENTS: &str = "the model has no clock: each autoscaler decision starts its own policy period, without the scale events of the last periodSeconds; after recent events upstream allows a smaller step than the model, which over-approximates the scaling rate (README, Model fidelity)";
const STABILIZATION: &str = "the model has no clock and no recommendation log: a recommendation in a stabilised direction is applied once the autoscaler has seen it twice, with anything free to happen in between, rather than the max or min over a timed window (README, Model fidelity)";
const EVENT_LOG: &str = "scale-event bookkeeping (storeScaleEvent, getReplicasChangePerPeriod) is timed; the model keeps no event log (see the policy period abstraction, README, Model fidelity)";
const DEPLOYMENT_STATUS: &str = "Deployment status sums and conditions (status.replicas, Complete, Progressing with its deadline) are not modelled: the model reads pod states directly, and rollout-completes asks that every replica be new and available with no old pod left";

/// (file, case name, or `*` for every case of the file, reason)
pub const SKIPS: &[(&str, &str, &str)] = &[
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/extended resource fits",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/extended resource allocatable enforced for multiple containers",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/extended resource allocatable enforced for multiple init containers",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/extended resource allocatable enforced for unknown resource",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/kubernetes.io resource capacity enforced",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/kubernetes.io resource capacity enforced for init container",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/hugepages resource capacity enforced",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/hugepages resource capacity enforced for init container",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/hugepages resource allocatable enforced for multiple containers",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/skip checking ignored extended resource",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/skip checking ignored extended resource via resource groups",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/skip checking extended resource request with quantity zero via resource groups",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestEnoughRequests/skip checking resource request with quantity zero",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestStorageRequests/ephemeral local storage is sufficient",
        EXTENDED,
    ),
    (
        "scheduler_filter_noderesourcesfit.yaml",
        "TestStorageRequests/pod fits",
        EXTENDED,
    ),
    (
        "scheduler_score_noderesourcesfit.yaml",
        "TestLeastAllocatedScoringStrategy/if the node doesn't have a resource",
        EXTENDED,
    ),
    (
        "scheduler_filter_nodeaffinity.yaml",
        "TestNodeAffinity/Pod with an invalid value in Affinity term won't be scheduled onto the node",
        "not yet: a term with an invalid value (a Gt/Lt value that is not an integer) must match no node; kivi-lint's node affinity ignores the requirement instead (to fix)",
    ),
    (
        "scheduler_filter_nodeaffinity.yaml",
        "TestNodeAffinity/Doesn't match added affinity",
        "not yet: the scheduler profile's NodeAffinityArgs.addedAffinity is not read from the KubeSchedulerConfiguration (to add)",
    ),
    (
        "scheduler_filter_tainttoleration.yaml",
        "TestTaintTolerationFilterWithFeatureGate/Pod with Gt toleration cannot be scheduled when feature gate is disabled",
        GATE,
    ),
    (
        "scheduler_filter_tainttoleration.yaml",
        "TestTaintTolerationFilterWithFeatureGate/Pod with Lt toleration cannot be scheduled when feature gate is disabled",
        GATE,
    ),
    (
        "scheduler_prefilter_topologyspread.yaml",
        "TestPreFilterState/default constraints and a service, but pod has constraints",
        SERVICE,
    ),
    (
        "scheduler_prefilter_topologyspread.yaml",
        "TestPreFilterState/default soft constraints and a service",
        SERVICE,
    ),
    (
        "scheduler_score_topologyspread.yaml",
        "TestPodTopologySpreadScore/system defaulting, nodes don't have zone, pods match service",
        SERVICE,
    ),
    (
        "scheduler_score_noderesourcesfit.yaml",
        "TestFitScore/test case for ScoringStrategy RequestedToCapacityRatio case1",
        "not yet: the RequestedToCapacityRatio scoring strategy is not modelled (LeastAllocated and MostAllocated are)",
    ),
    (
        "scheduler_score_noderesourcesfit.yaml",
        "TestFitScore/test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
        "not yet: the RequestedToCapacityRatio scoring strategy is not modelled (LeastAllocated and MostAllocated are)",
    ),
    (
        "scheduler_score_noderesourcesfit.yaml",
        "TestLeastAllocatedScoringStrategy/requested resources exceed node capacity",
        "upstream scores nodes the pod does not fit (Score called without Filter); in a scheduling cycle, as in the model, only nodes that pass every filter are scored",
    ),
    (
        "scheduler_score_topologyspread.yaml",
        "TestPodTopologySpreadScore/one constraint on node, 3 out of 4 nodes are candidates",
        HOSTW,
    ),
    (
        "scheduler_score_topologyspread.yaml",
        "TestPodTopologySpreadScore/one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        HOSTW,
    ),
    (
        "scheduler_score_topologyspread.yaml",
        "TestPodTopologySpreadScore/terminating Pods should be excluded",
        "the harness cannot start a scenario with a terminating pod (manifests have no deletionTimestamp); the model leaves TERMINATING pods out of spread counts (COUNTED in controllers/scheduler.pml)",
    ),
    (
        "scheduler_score_topologyspread.yaml",
        "TestPodTopologySpreadScore/minDomains has no effect when ScheduleAnyway",
        "the API server rejects this pod (minDomains requires whenUnsatisfiable: DoNotSchedule); kivi-lint reports the same located error, as the test shows",
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicas/empty log",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicas/stabilize",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/empty recommendations for scaling down",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/no scale up stabilization",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/no scale down stabilization, reuse recommendation element",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/no scale up stabilization, reuse recommendation element",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/scale down stabilization, reuse one of obsolete recommendation element",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/scale up and down stabilization, do not scale up when prenormalized rec goes down",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestNormalizeDesiredReplicasWithBehavior/scale up and down stabilization, do not scale down when prenormalized rec goes up",
        STABILIZATION,
    ),
    (
        "hpa_normalization.yaml",
        "TestScalingWithRules/scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events",
        NO_CLOCK_EVENTS,
    ),
    (
        "hpa_normalization.yaml",
        "TestScalingWithRules/scaleUp with pod policy and previous scale up events",
        NO_CLOCK_EVENTS,
    ),
    (
        "hpa_normalization.yaml",
        "TestScalingWithRules/scaleUp with percent policy and previous scale up and down events",
        NO_CLOCK_EVENTS,
    ),
    (
        "hpa_normalization.yaml",
        "TestScalingWithRules/scaleDown with percent policy and previous scale up and down events",
        NO_CLOCK_EVENTS,
    ),
    (
        "hpa_normalization.yaml",
        "TestScalingWithRules/scaleDown with previous events preventing further scale down",
        NO_CLOCK_EVENTS,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/empty entries with default behavior",
        EVENT_LOG,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/empty entries with two-policy-behavior",
        EVENT_LOG,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/one outdated entry to be kept untouched without behavior",
        EVENT_LOG,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/one outdated entry to be replaced with behavior",
        EVENT_LOG,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/two entries, one of them to be replaced",
        EVENT_LOG,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/replace one entry, use policies with different periods",
        EVENT_LOG,
    ),
    (
        "hpa_normalization.yaml",
        "TestStoreScaleEvents/two entries, both actual",
        EVENT_LOG,
    ),
    ("hpa_replicas.yaml", "TestReplicaCalcScaleUpCM", OTHER_METRICS),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown",
        OTHER_METRICS,
    ),
    ("hpa_replicas.yaml", "TestReplicaCalcScaleUpCMObject", OTHER_METRICS),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcScaleUpCMPerPodObject",
        OTHER_METRICS,
    ),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods",
        OTHER_METRICS,
    ),
    ("hpa_replicas.yaml", "TestReplicaCalcScaleUpCMExternal", OTHER_METRICS),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcScaleUpCMExternalNoLabels",
        OTHER_METRICS,
    ),
    ("hpa_replicas.yaml", "TestReplicaCalcScaleDownCM", OTHER_METRICS),
    ("hpa_replicas.yaml", "TestReplicaCalcScaleDownCMObject", OTHER_METRICS),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcScaleDownPerPodCMExternal",
        OTHER_METRICS,
    ),
    ("hpa_replicas.yaml", "TestReplicaCalcToleranceCM", OTHER_METRICS),
    ("hpa_replicas.yaml", "TestReplicaCalcToleranceCMObject", OTHER_METRICS),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcTolerancePerPodCMObject",
        OTHER_METRICS,
    ),
    (
        "hpa_replicas.yaml",
        "TestReplicaCalcTolerancePerPodCMExternal",
        OTHER_METRICS,
    ),
    (
        "deployment_rollout.yaml",
        "TestGetReplicaCountForReplicaSets/scaling up rs3",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestGetReplicaCountForReplicaSets/invalid/unknown terminating status for rs4",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestGetReplicaCountForReplicaSets/invalid/unknown terminating status for rs4 with rs1, rs2 and rs3",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentComplete/not complete: min but not all pods become available",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentComplete/complete",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentComplete/not complete: all pods are available but not updated",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentProgressing/progressing: updated pods",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentProgressing/progressing: old pods removed",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentProgressing/not progressing: less new pods",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentProgressing/progressing: more ready pods",
        DEPLOYMENT_STATUS,
    ),
    (
        "deployment_rollout.yaml",
        "TestDeploymentProgressing/progressing: more available pods",
        DEPLOYMENT_STATUS,
    ),
];

pub fn reason(file: &str, case: &str) -> Option<&'static str> {
    SKIPS
        .iter()
        .find(|(f, c, _)| *f == file && (*c == "*" || *c == case))
        .map(|(_, _, why)| *why)
}

//! HorizontalPodAutoscalers: metrics, load levels and the per-decision scaling limits.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrAutoscaler {
    pub min: i64,
    pub max: i64,
    /// Target CPU utilisation, percent of the request; 100 when it has no cpu metric (the
    /// load level is then a percent of its custom metrics' targets).
    pub target: i64,
    /// The metrics it scales on, by how upstream turns them into replicas.
    pub metrics: IrMetrics,
    /// `spec.behavior` is set: upstream normalises with normalizeDesiredReplicasWithBehaviors
    /// (the scaling policies bound a decision in its direction only).
    pub behavior: bool,
    /// The scale-up rules, defaults applied.
    pub scale_up: IrScalingRules,
    /// The scale-down rules, defaults applied.
    pub scale_down: IrScalingRules,
}

/// An autoscaler's metrics by kind of arithmetic (replica_calculator.go): the model's load
/// level moves them all by the same ratio to their targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IrMetrics {
    /// A cpu Resource metric (GetResourceReplicas).
    pub cpu: bool,
    /// A Pods metric: a per-pod average (GetMetricReplicas).
    pub pods: bool,
    /// An Object or External metric with a `Value` target (GetObjectMetricReplicas,
    /// GetExternalMetricReplicas).
    pub value: bool,
    /// An Object or External metric with an `AverageValue` target (the per-pod variants).
    pub average_value: bool,
    /// A memory (any non-cpu) Resource or ContainerResource metric with a `Utilization`
    /// target: that target, percent of the request (0: none). GetResourceReplicas, without
    /// the cpu-only readiness rules.
    pub memory: i64,
}

impl IrMetrics {
    /// The bits of the model's `hpa_metrics` table (src/controllers/autoscaler/autoscaler.pml).
    pub fn bits(self) -> i64 {
        i64::from(self.cpu)
            | i64::from(self.pods) << 1
            | i64::from(self.value) << 2
            | i64::from(self.average_value) << 3
            | i64::from(self.memory > 0) << 4
    }
}

/// Usage levels, percent of the request: the steady usage first, then the values a load change
/// may reach. Around an HPA target the levels straddle the tolerance band, since those are the
/// points where the autoscaler's decision changes.
///
/// Only the workload's HPA and the node-overload event read its usage: without either, a load
/// change alters nothing the controllers see, and its levels would only multiply the states.
pub(super) fn load_levels(config: &Config, workload: &str, autoscaler: &Option<IrAutoscaler>, steady: i64) -> Vec<i64> {
    let overload = config.has_event(|e| matches!(e, EnvironmentEvent::NodeOverload { .. }));
    if autoscaler.is_none() && !overload && config.scaling.symmetry {
        return vec![steady];
    }
    let max = config.events.iter().find_map(|e| match &e.value {
        EnvironmentEvent::LoadChange { workloads, max_percent }
            if workloads.iter().any(|w| w == "*" || w == workload) =>
        {
            Some(i64::from(*max_percent))
        }
        _ => None,
    });
    let Some(max) = max else {
        return vec![steady];
    };
    let mut levels = vec![0, max];
    if let Some(a) = autoscaler {
        levels.push(a.target * 8 / 10);
        levels.push((a.target * 12 + 9) / 10);
    }
    levels.retain(|l| *l != steady && *l <= max);
    levels.sort_unstable();
    levels.dedup();
    std::iter::once(steady).chain(levels).collect()
}

/// One direction of an autoscaler's rules, with the Kubernetes defaults applied
/// (pkg/apis/autoscaling/v2/defaults.go). Without `spec.behavior` upstream uses the legacy
/// rules instead: no policies (horizontal.go calculateScaleUpLimit, max(2 × current, 4), and no
/// bound down) and the controller's downscale window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrScalingRules {
    pub select: SelectPolicy,
    pub policies: Vec<IrScalingPolicy>,
    /// The stabilisation window, seconds (0: none).
    pub window: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct IrScalingPolicy {
    /// A Percent policy; else Pods.
    pub percent: bool,
    pub value: i64,
    pub period: i64,
}

pub use crate::manifest::autoscaling::SelectPolicy;

/// The HPA controller's resync period (`--horizontal-pod-autoscaler-sync-period`, 15 s): two
/// decisions on one autoscaler are at least this far apart.
pub const HPA_SYNC_SECONDS: i64 = 15;

/// The controller's `--horizontal-pod-autoscaler-downscale-stabilization` (5 minutes), the
/// window of an autoscaler without `spec.behavior`.
pub const LEGACY_DOWNSCALE_WINDOW: i64 = 300;

/// Largest policy value the model takes: a Percent step beyond it reaches any maxReplicas the
/// model holds, and start × (100 + value) stays within 32 bits.
const MAX_POLICY_VALUE: i64 = 100_000;

/// Both directions' rules of `h`, defaults applied.
pub fn scaling_rules(h: &crate::manifest::HorizontalPodAutoscaler) -> (IrScalingRules, IrScalingRules) {
    use crate::manifest::autoscaling::ScalingPolicyType;
    if !h.behavior {
        let none = |window| IrScalingRules {
            select: SelectPolicy::Max,
            policies: Vec::new(),
            window,
        };
        return (none(0), none(LEGACY_DOWNSCALE_WINDOW));
    }
    let policy = |percent, value, period| IrScalingPolicy {
        percent,
        value: i64::min(value, MAX_POLICY_VALUE),
        period,
    };
    let rules = |r: Option<&crate::manifest::autoscaling::ScalingRules>, default: Vec<IrScalingPolicy>, window| {
        let policies = match r {
            Some(r) if !r.policies.is_empty() => r
                .policies
                .iter()
                .map(|p| {
                    policy(
                        p.policy_type == ScalingPolicyType::Percent,
                        i64::from(p.value),
                        i64::from(p.period_seconds),
                    )
                })
                .collect(),
            _ => default,
        };
        IrScalingRules {
            select: r.and_then(|r| r.select_policy).unwrap_or(SelectPolicy::Max),
            policies,
            window: r.and_then(|r| r.stabilization_window_seconds).map_or(window, i64::from),
        }
    };
    (
        // GenerateHPAScaleUpRules: 4 pods or 100 % per 15 s, the larger, no window.
        rules(
            h.scale_up.as_ref(),
            vec![policy(false, 4, 15), policy(true, 100, 15)],
            0,
        ),
        // GenerateHPAScaleDownRules: 100 % per 15 s, a 300 s window.
        rules(h.scale_down.as_ref(), vec![policy(true, 100, 15)], 300),
    )
}

impl IrAutoscaler {
    /// The durations its logs are compared with, ascending: every policy period and window.
    pub fn thresholds(&self) -> Vec<i64> {
        let mut t: Vec<i64> = [&self.scale_up, &self.scale_down]
            .iter()
            .flat_map(|r| r.policies.iter().map(|p| p.period).chain([r.window]))
            .filter(|d| *d > 0)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// The age class of `seconds`: how many thresholds it has reached. A log entry of age `a`
    /// counts within a duration `d` exactly when `class(a) < class(d)` (for `a != d`).
    pub fn class(&self, seconds: i64) -> i64 {
        self.thresholds().iter().filter(|t| **t <= seconds).count() as i64
    }

    /// The class from which a recommendation is in no window.
    pub fn recommendation_expiry(&self) -> i64 {
        self.class(self.scale_up.window.max(self.scale_down.window))
    }

    /// The class from which a scale event counts in no period (events are logged only with a
    /// behavior).
    pub fn event_expiry(&self) -> i64 {
        if !self.behavior {
            return 0;
        }
        let longest = [&self.scale_up, &self.scale_down]
            .iter()
            .flat_map(|r| r.policies.iter().map(|p| p.period))
            .max()
            .unwrap_or(0);
        self.class(longest)
    }

    /// Whether the model must keep a log: an entry can still count at the next decision, one
    /// sync period later.
    pub fn keeps_logs(&self) -> bool {
        self.recommendation_expiry() > self.class(HPA_SYNC_SECONDS) || self.keeps_events()
    }

    /// Whether a scale event can still count at the next decision (a policy period longer
    /// than the sync period): only then does the model store, age and forget events.
    pub fn keeps_events(&self) -> bool {
        self.event_expiry() > self.class(HPA_SYNC_SECONDS)
    }
}

/// The model of HPA `h` of a workload whose pods request `request` millicores: its metrics,
/// bounds (`maxReplicas` lowered to `replica_cap`) and scaling rules; `None` when it scales
/// on nothing the model has.
pub(super) fn ir_autoscaler(
    h: &crate::manifest::HorizontalPodAutoscaler,
    request: i64,
    replica_cap: Option<i64>,
) -> Option<IrAutoscaler> {
    let mut metrics = IrMetrics::default();
    // Of several utilisation targets of one resource, the lowest proposes the most
    // replicas at any usage, and the autoscaler takes the largest proposal.
    let lowest = |slot: &mut i64, target: i64| *slot = if *slot > 0 { (*slot).min(target) } else { target };
    let mut cpu_target = 0;
    for m in &h.metrics {
        match m {
            Metric::Resource {
                resource,
                target: MetricTarget::Utilization(u),
                ..
            } if resource == "cpu" => lowest(&mut cpu_target, i64::from(*u)),
            // A cpu average value is a utilisation of the request.
            Metric::Resource {
                resource,
                target: MetricTarget::AverageValue(v),
                ..
            } if resource == "cpu" && request > 0 => lowest(&mut cpu_target, (v * 100 + request - 1) / request),
            Metric::Resource {
                target: MetricTarget::Utilization(u),
                ..
            } => lowest(&mut metrics.memory, i64::from(*u)),
            // GetRawResourceReplicas: an average value is a plain per-pod metric.
            Metric::Resource {
                target: MetricTarget::AverageValue(_),
                ..
            } => metrics.pods = true,
            Metric::Custom {
                source: MetricSource::Pods,
                ..
            } => metrics.pods = true,
            Metric::Custom { average: true, .. } => metrics.average_value = true,
            Metric::Custom { average: false, .. } => metrics.value = true,
        }
    }
    metrics.cpu = cpu_target > 0;
    if metrics == IrMetrics::default() {
        return None;
    }
    let cpu_target = (cpu_target > 0).then_some(cpu_target);
    let target = cpu_target.unwrap_or(100);
    // The model's replica tables are 16-bit: maxReplicas: 100000 would overflow them.
    let cap = replica_cap
        .unwrap_or(MAX_AUTOSCALER_REPLICAS)
        .min(MAX_AUTOSCALER_REPLICAS);
    let min = i64::from(h.min_replicas.value.max(1)).min(cap);
    let max = i64::from(h.max_replicas.value.max(1)).min(cap);
    let (scale_up, scale_down) = scaling_rules(h);
    Some(IrAutoscaler {
        min,
        max,
        target,
        metrics,
        behavior: h.behavior,
        scale_up,
        scale_down,
    })
}

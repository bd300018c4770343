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
    /// A scale-down needs the lower recommendation to hold over a window (300 s unless
    /// `behavior.scaleDown.stabilizationWindowSeconds` is 0).
    pub stabilize_down: bool,
    /// A scale-up needs the higher recommendation to hold (`behavior.scaleUp` window > 0).
    pub stabilize_up: bool,
    /// `spec.behavior` is set: the scaling policies bound a decision in its direction only
    /// (convertDesiredReplicasWithBehaviorRate).
    pub behavior: bool,
    /// Most replicas one decision may reach from `current` replicas (index `current`,
    /// 0..=max): `max(2 × current, 4)` without a behavior, else the scale-up policies.
    pub up_limit: Vec<i64>,
    /// Fewest replicas one decision may reach from `current`: 0 without a behavior, else the
    /// scale-down policies.
    pub down_limit: Vec<i64>,
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
    /// The bits of the model's `hpa_metrics` table (templates/controllers/autoscaler.pml).
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

/// Per current replica count (0..=max), the most and the fewest replicas one autoscaler
/// decision may reach (horizontal.go convertDesiredReplicasWithRules, or with a behavior
/// calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors). Without a
/// clock each decision starts its own period: the period's start is the current count.
pub fn scaling_limits(h: &crate::manifest::HorizontalPodAutoscaler, max: i64) -> (Vec<i64>, Vec<i64>) {
    use crate::manifest::autoscaling::{ScalingPolicyType, SelectPolicy};
    let behavior = h.scale_up.is_some() || h.scale_down.is_some();
    let currents = 0..=max.max(0);
    if !behavior {
        return (
            currents.clone().map(|c| (2 * c).max(4)).collect(),
            currents.map(|_| 0).collect(),
        );
    }
    // pkg/apis/autoscaling/v2 defaults.
    let default_up = [(ScalingPolicyType::Pods, 4), (ScalingPolicyType::Percent, 100)];
    let default_down = [(ScalingPolicyType::Percent, 100)];
    let rules = |r: Option<&crate::manifest::autoscaling::ScalingRules>, default: &[(ScalingPolicyType, i32)]| {
        let select = r.and_then(|r| r.select_policy).unwrap_or(SelectPolicy::Max);
        let policies: Vec<(ScalingPolicyType, i64)> = match r {
            Some(r) if !r.policies.is_empty() => {
                r.policies.iter().map(|p| (p.policy_type, i64::from(p.value))).collect()
            }
            _ => default.iter().map(|(t, v)| (*t, i64::from(*v))).collect(),
        };
        (select, policies)
    };
    let (up_select, up) = rules(h.scale_up.as_ref(), &default_up);
    let (down_select, down) = rules(h.scale_down.as_ref(), &default_down);
    let up_limit = currents
        .clone()
        .map(|c| {
            let limits = up.iter().map(|(t, v)| match t {
                ScalingPolicyType::Pods => c + v,
                ScalingPolicyType::Percent => (c * (100 + v) + 99) / 100,
            });
            match up_select {
                SelectPolicy::Max => limits.max().unwrap_or(c),
                SelectPolicy::Min => limits.min().unwrap_or(c),
                SelectPolicy::Disabled => c,
            }
            .max(c)
            // A percent policy may ask for any multiple; 16 bits hold more than maxReplicas.
            .min(i64::from(i16::MAX))
        })
        .collect();
    let down_limit = currents
        .map(|c| {
            let limits = down.iter().map(|(t, v)| match t {
                ScalingPolicyType::Pods => c - v,
                ScalingPolicyType::Percent => c * (100 - v) / 100,
            });
            match down_select {
                SelectPolicy::Max => limits.min().unwrap_or(c),
                SelectPolicy::Min => limits.max().unwrap_or(c),
                SelectPolicy::Disabled => c,
            }
            .min(c)
            .max(0)
        })
        .collect();
    (up_limit, down_limit)
}

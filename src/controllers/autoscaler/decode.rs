//! The HorizontalPodAutoscaler controller's steps (autoscaler.pml beside this file): its
//! scalings, located at `maxReplicas`, with why it chose the count.

use super::*;
use crate::manifest::autoscaling::scales_on_cpu;

/// `KIVI:6:workload:current:desired:usage[:recommended:unlogged]`, located at `maxReplicas`.
pub(super) fn tell(_: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = s.namer.workload(at(1));
    let hpa = workload.and_then(|w| s.namer.autoscaler_of(w));
    let usage = if hpa.is_none_or(scales_on_cpu) {
        format!("cpu usage {}% of the request per running pod", at(4))
    } else {
        format!("its metrics at {}% of their targets", at(4))
    };
    let why = hpa_why(at(2), at(3), v.get(5).copied(), v.get(6).copied());
    DecodedStep::new(
        Actor::HorizontalPodAutoscaler,
        format!(
            "{} scales {} from {} to {} replicas ({usage}{why})",
            hpa.map_or_else(|| "the HPA".to_string(), |h| h.id.to_string()),
            workload.map_or_else(String::new, |w| w.id.to_string()),
            at(2),
            at(3),
        ),
        hpa.and_then(|h| match &h.body {
            Body::HorizontalPodAutoscaler(a) => Some(a.max_replicas.span),
            _ => None,
        }),
    )
}

/// Why the autoscaler chose `desired`, after the usage it saw: `recommended` is the metrics'
/// recommendation within [minReplicas, maxReplicas] (-2: the current count was outside them),
/// `unlogged` the decision its recent recommendations and scale events aside, that is the
/// scaling policies' limit (horizontal.go: stabilizeRecommendation and the rate rules). Old
/// traces without them say nothing more.
fn hpa_why(current: i64, desired: i64, recommended: Option<i64>, unlogged: Option<i64>) -> String {
    let (Some(recommended), Some(unlogged)) = (recommended, unlogged) else {
        return String::new();
    };
    if recommended == -2 {
        let (side, bound) = if desired > current {
            ("below minReplicas", desired)
        } else {
            ("above maxReplicas", desired)
        };
        return format!(": {current} is {side} {bound}");
    }
    if desired == recommended {
        return format!(": the metrics ask for {recommended} within [minReplicas, maxReplicas]");
    }
    if desired == unlogged {
        let direction = if desired > current { "scale-up" } else { "scale-down" };
        return format!(
            ": the metrics ask for {recommended} within [minReplicas, maxReplicas]; the {direction} limit allows {desired} now"
        );
    }
    if desired > recommended {
        format!(
            ": the metrics ask for {recommended} within [minReplicas, maxReplicas]; a higher recommendation still inside the scale-down stabilization window (300 s unless `behavior` sets it) holds it at {desired}"
        )
    } else {
        format!(
            ": the metrics ask for {recommended} within [minReplicas, maxReplicas]; a lower recommendation inside the scale-up stabilization window, or scalings inside the policies' period, hold it at {desired}"
        )
    }
}

#[cfg(test)]
mod hpa_why_tests {
    use super::hpa_why;

    #[test]
    fn each_reason_for_a_scaling_is_told() {
        assert_eq!(hpa_why(3, 4, None, None), "");
        assert_eq!(hpa_why(12, 10, Some(-2), Some(10)), ": 12 is above maxReplicas 10");
        assert_eq!(hpa_why(1, 3, Some(-2), Some(3)), ": 1 is below minReplicas 3");
        assert!(hpa_why(2, 3, Some(3), Some(3)).ends_with("ask for 3 within [minReplicas, maxReplicas]"));
        assert!(hpa_why(2, 4, Some(8), Some(4)).contains("the scale-up limit allows 4 now"));
        assert!(hpa_why(6, 5, Some(2), Some(2)).contains("scale-down stabilization window"));
        assert!(hpa_why(6, 7, Some(9), Some(9)).contains("scale-up stabilization window"));
    }
}

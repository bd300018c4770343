//! PodDisruptionBudget (policy/v1 and v1beta1).

use serde::Serialize;

use crate::manifest::quantity::IntOrPercent;
use crate::manifest::read::Reader;
use crate::manifest::selector::LabelSelector;
use crate::source::{Span, Spanned};
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UnhealthyPodEvictionPolicy {
    IfHealthyBudget,
    AlwaysAllow,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PodDisruptionBudget {
    pub min_available: Option<Spanned<IntOrPercent>>,
    pub max_unavailable: Option<Spanned<IntOrPercent>>,
    /// policy/v1: a null selector selects no pod, an empty one every pod of the namespace.
    pub selector: Option<LabelSelector>,
    pub unhealthy_pod_eviction_policy: UnhealthyPodEvictionPolicy,
}

impl PodDisruptionBudget {
    pub fn read(r: &mut Reader, node: &Node, object_span: Span) -> Option<PodDisruptionBudget> {
        let Some(spec) = r.map(node, "spec") else {
            r.error(object_span, "PodDisruptionBudget has no `spec`");
            return None;
        };
        let min_available = r.int_or_percent(spec, "minAvailable");
        let max_unavailable = r.int_or_percent(spec, "maxUnavailable");
        if let (Some(_), Some(m)) = (&min_available, &max_unavailable) {
            r.error(m.span, "set only one of `minAvailable` and `maxUnavailable`");
        }
        let unhealthy_pod_eviction_policy =
            match r.one_of(spec, "unhealthyPodEvictionPolicy", &["IfHealthyBudget", "AlwaysAllow"]) {
                Some(p) if p.value == "AlwaysAllow" => UnhealthyPodEvictionPolicy::AlwaysAllow,
                _ => UnhealthyPodEvictionPolicy::IfHealthyBudget,
            };
        Some(PodDisruptionBudget {
            // Neither field: the API server defaults minAvailable to 1.
            min_available: if min_available.is_none() && max_unavailable.is_none() {
                Some(Spanned::new(IntOrPercent::Int(1), spec.span))
            } else {
                min_available
            },
            max_unavailable,
            selector: LabelSelector::read(r, spec, "selector"),
            unhealthy_pod_eviction_policy,
        })
    }
}

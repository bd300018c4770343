//! HorizontalPodAutoscaler, autoscaling/v2 and v1 (v1 is read as its v2 equivalent).

use serde::Serialize;

use crate::manifest::read::Reader;
use crate::source::{Span, Spanned};
use crate::yaml::Node;

/// The largest HPA minReplicas and maxReplicas the model takes (its tables are 16-bit, and
/// the scale-up limit may double the count); larger values are bounded to it.
pub const MAX_AUTOSCALER_REPLICAS: i64 = 10_000;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScaleTargetRef {
    pub kind: String,
    pub name: String,
    pub api_version: String,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum MetricTarget {
    /// Percent of the request.
    Utilization(i32),
    /// Per-pod average in millicores (cpu) or bytes (memory).
    AverageValue(i64),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Metric {
    /// A Resource metric, or a ContainerResource one (`container` set): the usage of the
    /// pods', or of one container's, requests.
    Resource {
        /// `cpu` or `memory` (other resources are kept as written).
        resource: String,
        target: MetricTarget,
        container: Option<String>,
        #[serde(skip)]
        span: Span,
    },
    /// A Pods, Object or External metric: modelled relative to its target (docs/conformance.md, Model
    /// fidelity), so its own quantity does not matter, only how upstream turns it into replicas.
    Custom {
        source: MetricSource,
        /// An `AverageValue` target (per pod), not a `Value` one.
        average: bool,
        #[serde(skip)]
        span: Span,
    },
}

/// Where a custom metric comes from (`spec.metrics[].type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MetricSource {
    Pods,
    Object,
    External,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ScalingPolicyType {
    Pods,
    Percent,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScalingPolicy {
    pub policy_type: ScalingPolicyType,
    pub value: i32,
    pub period_seconds: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SelectPolicy {
    Max,
    Min,
    Disabled,
}

/// One direction of `spec.behavior`; absent fields take the Kubernetes defaults later.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScalingRules {
    pub stabilization_window_seconds: Option<i32>,
    pub select_policy: Option<SelectPolicy>,
    pub policies: Vec<ScalingPolicy>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HorizontalPodAutoscaler {
    pub scale_target_ref: ScaleTargetRef,
    pub min_replicas: Spanned<i32>,
    pub max_replicas: Spanned<i32>,
    pub metrics: Vec<Metric>,
    /// `spec.behavior` is set, even as `{}`: upstream then normalises with the behavior
    /// rules (defaults for an absent direction) instead of the legacy rules.
    pub behavior: bool,
    pub scale_up: Option<ScalingRules>,
    pub scale_down: Option<ScalingRules>,
}

impl HorizontalPodAutoscaler {
    /// Whether it scales on a metric kivi-lint models: every valid metric is, so only an HPA
    /// whose metrics were all input errors has none.
    pub fn has_modelled_metric(&self) -> bool {
        !self.metrics.is_empty()
    }

    pub fn read(r: &mut Reader, node: &Node, api_version: &str, object_span: Span) -> Option<HorizontalPodAutoscaler> {
        let Some(spec) = r.map(node, "spec") else {
            r.error(object_span, "HorizontalPodAutoscaler has no `spec`");
            return None;
        };
        let Some(target) = r.map(spec, "scaleTargetRef") else {
            r.error(spec.span, "HorizontalPodAutoscaler needs `scaleTargetRef`");
            return None;
        };
        let (Some(kind), Some(name)) = (r.text(target, "kind"), r.text(target, "name")) else {
            r.error(target.span, "`scaleTargetRef` needs `kind` and `name`");
            return None;
        };
        let scale_target_ref = ScaleTargetRef {
            kind: kind.value,
            name: name.value,
            api_version: r.text(target, "apiVersion").map(|v| v.value).unwrap_or_default(),
            span: target.span,
        };
        let min_replicas = r.int32(spec, "minReplicas").unwrap_or(Spanned::new(1, spec.span));
        let Some(max_replicas) = r.int32(spec, "maxReplicas") else {
            r.error(spec.span, "HorizontalPodAutoscaler needs `maxReplicas`");
            return None;
        };
        if min_replicas.value < 1 {
            r.error(
                min_replicas.span,
                "`minReplicas` must be at least 1 (0 needs the HPAScaleToZero feature gate)",
            );
        }
        if max_replicas.value < min_replicas.value.max(1) {
            r.error(max_replicas.span, "`maxReplicas` must be at least `minReplicas`");
        }
        let metrics = if api_version == "autoscaling/v1" {
            // v1 has one knob; no knob means the v2 default of 80% CPU.
            let utilization = r.int32(spec, "targetCPUUtilizationPercentage");
            vec![Metric::Resource {
                resource: "cpu".into(),
                target: MetricTarget::Utilization(utilization.as_ref().map_or(80, |u| u.value)),
                container: None,
                span: utilization.map_or(spec.span, |u| u.span),
            }]
        } else {
            let entries = r.maps(spec, "metrics");
            let written = entries.len();
            let listed: Vec<Metric> = entries.into_iter().filter_map(|m| read_metric(r, m)).collect();
            // The API's defaulting gives no metrics, or an empty list, the 80% cpu target.
            if written == 0 {
                vec![Metric::Resource {
                    resource: "cpu".into(),
                    target: MetricTarget::Utilization(80),
                    container: None,
                    span: spec.span,
                }]
            } else {
                listed
            }
        };
        let behavior_node = r.map(spec, "behavior");
        let behavior = behavior_node.is_some();
        let (scale_up, scale_down) = match behavior_node {
            Some(b) => (read_rules(r, b, "scaleUp"), read_rules(r, b, "scaleDown")),
            None => (None, None),
        };
        Some(HorizontalPodAutoscaler {
            scale_target_ref,
            min_replicas,
            max_replicas,
            metrics,
            behavior,
            scale_up,
            scale_down,
        })
    }
}

fn read_metric(r: &mut Reader, node: &Node) -> Option<Metric> {
    let Some(ty) = r.text(node, "type") else {
        r.error(node.span, "a metric needs a `type`");
        return None;
    };
    let source = match ty.value.as_str() {
        "Pods" => Some(MetricSource::Pods),
        "Object" => Some(MetricSource::Object),
        "External" => Some(MetricSource::External),
        _ => None,
    };
    if let Some(source) = source {
        return read_custom_metric(r, node, source);
    }
    let key = match ty.value.as_str() {
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        _ => {
            // The API server rejects any other type (ValidateMetricSpec).
            r.error(
                ty.span,
                format!(
                    "`{}` is not a metric type (Resource, ContainerResource, Pods, Object or External)",
                    super::read::truncate(&ty.value)
                ),
            );
            return None;
        }
    };
    let Some(resource) = r.map(node, key) else {
        r.error(node.span, format!("a `{}` metric needs `{key}`", ty.value));
        return None;
    };
    let Some(name) = r.text(resource, "name") else {
        r.error(resource.span, format!("a `{}` metric needs `{key}.name`", ty.value));
        return None;
    };
    let container = if key == "containerResource" {
        let Some(c) = r.text(resource, "container") else {
            r.error(
                resource.span,
                "a `ContainerResource` metric needs `containerResource.container`",
            );
            return None;
        };
        Some(c.value)
    } else {
        None
    };
    let milli = name.value == "cpu";
    // autoscaling/v2beta1 wrote the target inline: `targetAverageUtilization` or
    // `targetAverageValue` (converted to v2 by the API server's conversion).
    if r.field(resource, "target").is_none() {
        if let Some(u) = r.int32(resource, "targetAverageUtilization") {
            if u.value <= 0 {
                r.error(u.span, "`targetAverageUtilization` must be positive");
                return None;
            }
            return Some(Metric::Resource {
                resource: name.value,
                target: MetricTarget::Utilization(u.value),
                container,
                span: node.span,
            });
        }
        if let Some(v) = r.quantity(resource, "targetAverageValue", milli) {
            return Some(Metric::Resource {
                resource: name.value,
                target: MetricTarget::AverageValue(v.value),
                container,
                span: node.span,
            });
        }
    }
    let Some(target) = r.map(resource, "target") else {
        r.error(
            resource.span,
            format!(
                "a `{}` metric needs `{key}.target` (or, in autoscaling/v2beta1, `targetAverageUtilization` or `targetAverageValue`)",
                ty.value
            ),
        );
        return None;
    };
    let target_type = r.one_of(target, "type", &["Utilization", "AverageValue", "Value"])?;
    let value = match target_type.value.as_str() {
        "Utilization" => {
            let Some(u) = r.int32(target, "averageUtilization").filter(|u| u.value > 0) else {
                r.error(
                    target.span,
                    "a `Utilization` target needs a positive `averageUtilization`",
                );
                return None;
            };
            MetricTarget::Utilization(u.value)
        }
        "AverageValue" => {
            let Some(v) = r.quantity(target, "averageValue", milli) else {
                r.error(target.span, "an `AverageValue` target needs `averageValue`");
                return None;
            };
            MetricTarget::AverageValue(v.value)
        }
        _ => {
            r.error(
                target_type.span,
                format!(
                    "a `{}` metric cannot use a `Value` target (use `AverageValue`)",
                    ty.value
                ),
            );
            return None;
        }
    };
    Some(Metric::Resource {
        resource: name.value,
        target: value,
        container,
        span: node.span,
    })
}

/// A Pods, Object or External metric: its target type. autoscaling/v2beta1 wrote the target
/// inline (`targetAverageValue`, `targetValue`).
fn read_custom_metric(r: &mut Reader, node: &Node, source: MetricSource) -> Option<Metric> {
    let key = match source {
        MetricSource::Pods => "pods",
        MetricSource::Object => "object",
        MetricSource::External => "external",
    };
    let Some(body) = r.map(node, key) else {
        r.error(
            node.span,
            format!("a metric of type `{}` needs `{key}`", ty_name(source)),
        );
        return None;
    };
    let average = match r.map(body, "target") {
        Some(target) => {
            let allowed: &[&str] = match source {
                MetricSource::Pods => &["AverageValue"],
                _ => &["Value", "AverageValue"],
            };
            let Some(ty) = r.one_of(target, "type", allowed) else {
                if r.field(target, "type").is_none() {
                    r.error(target.span, "a metric target needs a `type`");
                }
                return None;
            };
            ty.value == "AverageValue"
        }
        None if source == MetricSource::Pods => true,
        None if r.field(body, "targetValue").is_some() => false,
        None if r.field(body, "targetAverageValue").is_some() || r.field(body, "averageValue").is_some() => true,
        None => {
            r.error(
                body.span,
                format!("a metric of type `{}` needs `{key}.target`", ty_name(source)),
            );
            return None;
        }
    };
    Some(Metric::Custom {
        source,
        average,
        span: node.span,
    })
}

fn ty_name(source: MetricSource) -> &'static str {
    match source {
        MetricSource::Pods => "Pods",
        MetricSource::Object => "Object",
        MetricSource::External => "External",
    }
}

fn read_rules(r: &mut Reader, behavior: &Node, key: &str) -> Option<ScalingRules> {
    let node = r.map(behavior, key)?;
    let stabilization_window_seconds = r.int32(node, "stabilizationWindowSeconds").map(|v| v.value);
    if let Some(w) = stabilization_window_seconds
        && !(0..=3600).contains(&w)
    {
        r.error(node.span, "`stabilizationWindowSeconds` must be from 0 to 3600");
    }
    let select_policy = r
        .one_of(node, "selectPolicy", &["Max", "Min", "Disabled"])
        .map(|p| match p.value.as_str() {
            "Max" => SelectPolicy::Max,
            "Min" => SelectPolicy::Min,
            _ => SelectPolicy::Disabled,
        });
    let mut policies = Vec::new();
    for p in r.maps(node, "policies") {
        let ty = r.one_of(p, "type", &["Pods", "Percent"]);
        let value = r.int32(p, "value");
        let period = r.int32(p, "periodSeconds");
        match (ty, value, period) {
            (Some(ty), Some(value), Some(period)) if value.value > 0 && (1..=1800).contains(&period.value) => {
                policies.push(ScalingPolicy {
                    policy_type: if ty.value == "Pods" { ScalingPolicyType::Pods } else { ScalingPolicyType::Percent },
                    value: value.value,
                    period_seconds: period.value,
                })
            }
            _ => r.error(p.span, "a scaling policy needs `type` (Pods or Percent), a positive `value` and `periodSeconds` from 1 to 1800"),
        }
    }
    Some(ScalingRules {
        stabilization_window_seconds,
        select_policy,
        policies,
        span: node.span,
    })
}

/// Whether an HPA object scales on cpu; the model's load level is then a percent of the cpu
/// request, else of its custom metrics' targets (src/controllers/autoscaler/autoscaler.pml).
pub fn scales_on_cpu(hpa: &crate::manifest::Object) -> bool {
    matches!(&hpa.body, crate::manifest::Body::HorizontalPodAutoscaler(a)
        if a.metrics.iter().any(|m| matches!(m, Metric::Resource { resource, .. } if resource == "cpu")))
}

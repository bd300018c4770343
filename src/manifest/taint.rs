//! Taints (on nodes) and tolerations (on pods), with `v1.Toleration.ToleratesTaint` semantics.

use serde::Serialize;

use crate::manifest::read::Reader;
use crate::source::{Span, Spanned};
use crate::yaml::Node;

/// The taint a cordoned node carries (`spec.unschedulable`).
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";
/// The taints the node lifecycle controller puts on a node that stops reporting.
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub fn parse(s: &str) -> Option<TaintEffect> {
        match s {
            "NoSchedule" => Some(TaintEffect::NoSchedule),
            "PreferNoSchedule" => Some(TaintEffect::PreferNoSchedule),
            "NoExecute" => Some(TaintEffect::NoExecute),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: TaintEffect,
}

impl Taint {
    pub fn read(r: &mut Reader, node: &Node) -> Option<Taint> {
        let Some(key) = r.text(node, "key") else {
            r.error(node.span, "a taint needs a `key`");
            return None;
        };
        let value = r.text(node, "value").map(|v| v.value).unwrap_or_default();
        let Some(effect) = r.one_of(node, "effect", &["NoSchedule", "PreferNoSchedule", "NoExecute"]) else {
            if r.field(node, "effect").is_none() {
                r.error(node.span, "a taint needs an `effect`");
            }
            return None;
        };
        Some(Taint {
            key: key.value,
            value,
            effect: TaintEffect::parse(&effect.value).expect("checked by one_of"),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TolerationOperator {
    Equal,
    Exists,
    /// Numeric comparisons of the taint's value (alpha: TaintTolerationComparisonOperators).
    Gt,
    Lt,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Toleration {
    /// Empty with `Exists` tolerates every taint.
    pub key: String,
    pub operator: TolerationOperator,
    pub value: String,
    /// `None` tolerates every effect.
    pub effect: Option<TaintEffect>,
    pub toleration_seconds: Option<Spanned<i64>>,
    #[serde(skip)]
    pub span: Span,
}

impl Toleration {
    pub fn read(r: &mut Reader, node: &Node) -> Option<Toleration> {
        let key = r.text(node, "key").map(|v| v.value).unwrap_or_default();
        let operator = match r.one_of(node, "operator", &["Equal", "Exists", "Gt", "Lt"]) {
            Some(op) => match op.value.as_str() {
                "Exists" => TolerationOperator::Exists,
                "Gt" => TolerationOperator::Gt,
                "Lt" => TolerationOperator::Lt,
                _ => TolerationOperator::Equal,
            },
            None if r.field(node, "operator").is_some() => return None,
            None => TolerationOperator::Equal,
        };
        let value = r.text(node, "value").map(|v| v.value).unwrap_or_default();
        if operator == TolerationOperator::Exists && !value.is_empty() {
            r.error(node.span, "a toleration with operator `Exists` must not have a `value`");
        }
        if key.is_empty() && operator != TolerationOperator::Exists {
            r.error(node.span, "a toleration without `key` needs operator `Exists`");
            return None;
        }
        if matches!(operator, TolerationOperator::Gt | TolerationOperator::Lt) && value.parse::<i64>().is_err() {
            r.error(
                node.span,
                "a toleration with operator `Gt` or `Lt` needs an integer `value`",
            );
            return None;
        }
        let effect = match r
            .field(node, "effect")
            .and_then(|n| n.as_str())
            .filter(|s| !s.is_empty())
        {
            None => None,
            Some(_) => Some(TaintEffect::parse(
                &r.one_of(node, "effect", &["NoSchedule", "PreferNoSchedule", "NoExecute"])?
                    .value,
            )?),
        };
        let toleration_seconds = r.int(node, "tolerationSeconds");
        Some(Toleration {
            key,
            operator,
            value,
            effect,
            toleration_seconds,
            span: node.span,
        })
    }

    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if self.key.is_empty() {
            return self.operator == TolerationOperator::Exists;
        }
        if self.key != taint.key {
            return false;
        }
        let numbers = || Some((taint.value.parse::<i64>().ok()?, self.value.parse::<i64>().ok()?));
        match self.operator {
            TolerationOperator::Exists => true,
            TolerationOperator::Equal => self.value == taint.value,
            TolerationOperator::Gt => numbers().is_some_and(|(t, v)| t > v),
            TolerationOperator::Lt => numbers().is_some_and(|(t, v)| t < v),
        }
    }
}

/// With the TaintTolerationComparisonOperators gate off, a `Gt` or `Lt` toleration tolerates
/// nothing (the scheduler's toleration helper refuses the operators): drop them. Returns the
/// dropped ones' spans.
pub fn drop_comparison_operators(tolerations: &mut Vec<Toleration>) -> Vec<Span> {
    let dropped = tolerations
        .iter()
        .filter(|t| matches!(t.operator, TolerationOperator::Gt | TolerationOperator::Lt))
        .map(|t| t.span)
        .collect();
    tolerations.retain(|t| !matches!(t.operator, TolerationOperator::Gt | TolerationOperator::Lt));
    dropped
}

/// Whether the tolerations admit a pod onto a node with these taints for scheduling
/// (NoSchedule and NoExecute block; PreferNoSchedule only scores).
pub fn tolerates_for_scheduling(tolerations: &[Toleration], taints: &[Taint]) -> bool {
    taints
        .iter()
        .filter(|t| t.effect != TaintEffect::PreferNoSchedule)
        .all(|t| tolerations.iter().any(|tol| tol.tolerates(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tol(key: &str, operator: TolerationOperator, value: &str, effect: Option<TaintEffect>) -> Toleration {
        Toleration {
            key: key.into(),
            operator,
            value: value.into(),
            effect,
            toleration_seconds: None,
            span: Span::default(),
        }
    }

    fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
        }
    }

    #[test]
    fn toleration_matching() {
        let t = taint("dedicated", "db", TaintEffect::NoSchedule);
        assert!(tol("dedicated", TolerationOperator::Equal, "db", None).tolerates(&t));
        assert!(!tol("dedicated", TolerationOperator::Equal, "web", None).tolerates(&t));
        assert!(
            tol(
                "dedicated",
                TolerationOperator::Exists,
                "",
                Some(TaintEffect::NoSchedule)
            )
            .tolerates(&t)
        );
        assert!(
            !tol(
                "dedicated",
                TolerationOperator::Exists,
                "",
                Some(TaintEffect::NoExecute)
            )
            .tolerates(&t)
        );
        assert!(tol("", TolerationOperator::Exists, "", None).tolerates(&t));
        assert!(tolerates_for_scheduling(
            &[],
            &[taint("x", "", TaintEffect::PreferNoSchedule)]
        ));
        let sla = taint("sla", "950", TaintEffect::NoSchedule);
        assert!(tol("sla", TolerationOperator::Gt, "900", None).tolerates(&sla));
        assert!(!tol("sla", TolerationOperator::Lt, "900", None).tolerates(&sla));
        assert!(!tol("sla", TolerationOperator::Gt, "900", None).tolerates(&taint(
            "sla",
            "high",
            TaintEffect::NoSchedule
        )));
        assert!(!tolerates_for_scheduling(&[], &[t]));
    }
}

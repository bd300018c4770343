//! Label selectors and node selector terms, with Kubernetes matching semantics.
//!
//! - `matchLabels` and `matchExpressions` are ANDed; an empty selector selects everything.
//! - A missing (null) selector is represented by `Option::None` at the use site; what it means
//!   depends on the field (a PDB's null selector selects nothing).
//! - `NotIn` and `DoesNotExist` match when the key is absent.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::read::Reader;
use crate::source::Span;
use crate::yaml::Node;

pub type Labels = BTreeMap<String, String>;

/// Whether a map selector (`matchLabels`, a Service's `selector`, a `nodeSelector`) selects
/// `labels`: every pair of it is among them.
pub fn selects(selector: &Labels, labels: &Labels) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    /// Node selector only.
    Gt,
    /// Node selector only.
    Lt,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    pub fn matches(&self, labels: &Labels) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt | Operator::Lt => {
                let (Some(v), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.operator == Operator::Gt {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabelSelector {
    pub match_labels: Labels,
    pub match_expressions: Vec<Requirement>,
    #[serde(skip)]
    pub span: Span,
}

impl LabelSelector {
    pub fn matches(&self, labels: &Labels) -> bool {
        selects(&self.match_labels, labels) && self.match_expressions.iter().all(|r| r.matches(labels))
    }

    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Read a `metav1.LabelSelector` at `parent[key]`; `None` when absent or null.
    pub fn read(r: &mut Reader, parent: &Node, key: &str) -> Option<LabelSelector> {
        let node = r.map(parent, key)?;
        Some(LabelSelector {
            match_labels: r.string_map(node, "matchLabels"),
            match_expressions: read_requirements(r, node, "matchExpressions", false),
            span: node.span,
        })
    }

    /// A selector given as a plain map (ReplicationController, Service).
    pub fn from_map(labels: Labels, span: Span) -> LabelSelector {
        LabelSelector {
            match_labels: labels,
            match_expressions: Vec::new(),
            span,
        }
    }
}

/// Read a list of requirements; `node_selector` allows `Gt` and `Lt`.
pub fn read_requirements(r: &mut Reader, parent: &Node, key: &str, node_selector: bool) -> Vec<Requirement> {
    let mut out = Vec::new();
    for item in r.maps(parent, key) {
        let Some(k) = r.text(item, "key") else {
            r.error(item.span, format!("`{key}[]` needs a `key`"));
            continue;
        };
        let allowed: &[&str] = if node_selector {
            &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
        } else {
            &["In", "NotIn", "Exists", "DoesNotExist"]
        };
        let Some(op) = r.one_of(item, "operator", allowed) else {
            if r.field(item, "operator").is_none() {
                r.error(item.span, format!("`{key}[]` needs an `operator`"));
            }
            continue;
        };
        let operator = match op.value.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            _ => Operator::Lt,
        };
        let values = r.string_list(item, "values");
        let needs_values = matches!(operator, Operator::In | Operator::NotIn | Operator::Gt | Operator::Lt);
        if needs_values && values.is_empty() {
            r.error(op.span, format!("operator `{}` needs `values`", op.value));
            continue;
        }
        if !needs_values && !values.is_empty() {
            r.error(op.span, format!("operator `{}` must not have `values`", op.value));
            continue;
        }
        out.push(Requirement {
            key: k.value,
            operator,
            values,
        });
    }
    out
}

/// One term of a required node affinity: expressions on labels and fields, ANDed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeSelectorTerm {
    pub match_expressions: Vec<Requirement>,
    /// Only `metadata.name` is a valid field.
    pub match_fields: Vec<Requirement>,
    #[serde(skip)]
    pub span: Span,
}

impl NodeSelectorTerm {
    pub fn read(r: &mut Reader, node: &Node) -> NodeSelectorTerm {
        let match_fields = read_requirements(r, node, "matchFields", true);
        for f in &match_fields {
            if f.key != "metadata.name" {
                r.error(
                    node.span,
                    format!("`matchFields` supports only `metadata.name`, found `{}`", f.key),
                );
            }
        }
        NodeSelectorTerm {
            match_expressions: read_requirements(r, node, "matchExpressions", true),
            match_fields,
            span: node.span,
        }
    }

    /// A term with no requirements matches no node (Kubernetes: "an empty term matches nothing").
    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        if self.match_expressions.is_empty() && self.match_fields.is_empty() {
            return false;
        }
        // A term the scheduler cannot parse (nodeaffinity: an invalid label value, a Gt or Lt
        // value that is not one integer) matches no node.
        if !self.match_expressions.iter().all(Requirement::parses) {
            return false;
        }
        let fields: Labels = [("metadata.name".to_string(), node_name.to_string())].into();
        self.match_expressions.iter().all(|r| r.matches(labels)) && self.match_fields.iter().all(|r| r.matches(&fields))
    }
}

impl Requirement {
    /// Whether labels.NewRequirement accepts it as a node selector requirement.
    fn parses(&self) -> bool {
        match self.operator {
            Operator::Gt | Operator::Lt => self.values.len() == 1 && self.values[0].parse::<i64>().is_ok(),
            _ => self.values.iter().all(|v| valid_label_value(v)),
        }
    }
}

/// A label value: at most 63 characters, alphanumerics with `-`, `_` and `.` inside.
fn valid_label_value(v: &str) -> bool {
    v.len() <= 63
        && (v.is_empty()
            || (v.starts_with(|c: char| c.is_ascii_alphanumeric())
                && v.ends_with(|c: char| c.is_ascii_alphanumeric())
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn req(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator,
            values: values.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn selector_semantics() {
        let sel = LabelSelector {
            match_labels: labels(&[("app", "web")]),
            match_expressions: vec![
                req("tier", Operator::In, &["edge", "frontend"]),
                req("canary", Operator::DoesNotExist, &[]),
                req("env", Operator::NotIn, &["dev"]),
            ],
            span: Span::default(),
        };
        assert!(sel.matches(&labels(&[("app", "web"), ("tier", "edge")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "edge"), ("canary", "1")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "edge"), ("env", "dev")])));
        assert!(!sel.matches(&labels(&[("app", "api"), ("tier", "edge")])));
        let empty = LabelSelector::from_map(Labels::new(), Span::default());
        assert!(empty.matches(&Labels::new()));
    }

    #[test]
    fn unparsable_terms_match_no_node() {
        let term = |r| NodeSelectorTerm {
            match_expressions: vec![r],
            match_fields: Vec::new(),
            span: Span::default(),
        };
        let node = labels(&[("foo", "bar"), ("gpu", "4")]);
        assert!(term(req("foo", Operator::NotIn, &["baz"])).matches("n", &node));
        assert!(!term(req("foo", Operator::NotIn, &["invalid value: ___@#$%^"])).matches("n", &node));
        assert!(!term(req("gpu", Operator::Gt, &["two"])).matches("n", &node));
    }

    #[test]
    fn gt_lt() {
        assert!(req("gpu", Operator::Gt, &["2"]).matches(&labels(&[("gpu", "4")])));
        assert!(!req("gpu", Operator::Lt, &["2"]).matches(&labels(&[("gpu", "4")])));
        assert!(!req("gpu", Operator::Gt, &["2"]).matches(&labels(&[])));
    }

    #[test]
    fn node_selector_term() {
        let term = NodeSelectorTerm {
            match_expressions: vec![req("zone", Operator::In, &["a"])],
            match_fields: vec![req("metadata.name", Operator::In, &["n1"])],
            span: Span::default(),
        };
        assert!(term.matches("n1", &labels(&[("zone", "a")])));
        assert!(!term.matches("n2", &labels(&[("zone", "a")])));
        let empty = NodeSelectorTerm {
            match_expressions: vec![],
            match_fields: vec![],
            span: Span::default(),
        };
        assert!(!empty.matches("n1", &labels(&[])));
        let _ = FileId(0);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn small_labels() -> impl Strategy<Value = Labels> {
            proptest::collection::btree_map("[a-c]", "[x-z]", 0..3)
        }

        fn requirement() -> impl Strategy<Value = Requirement> {
            (
                "[a-c]",
                prop_oneof![
                    Just(Operator::In),
                    Just(Operator::NotIn),
                    Just(Operator::Exists),
                    Just(Operator::DoesNotExist)
                ],
                proptest::collection::vec("[x-z]", 0..3),
            )
                .prop_map(|(key, operator, values)| Requirement { key, operator, values })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            /// Set-based requirements (k8s.io/apimachinery labels.Requirement.Matches): NotIn is
            /// the negation of In and DoesNotExist of Exists; In and Exists need the key.
            #[test]
            fn requirements_follow_their_definitions(r in requirement(), labels in small_labels()) {
                let value = labels.get(&r.key);
                let negated = Requirement {
                    operator: match r.operator {
                        Operator::In => Operator::NotIn,
                        Operator::NotIn => Operator::In,
                        Operator::Exists => Operator::DoesNotExist,
                        _ => Operator::Exists,
                    },
                    ..r.clone()
                };
                prop_assert_eq!(r.matches(&labels), !negated.matches(&labels));
                if matches!(r.operator, Operator::In | Operator::Exists) && r.matches(&labels) {
                    prop_assert!(value.is_some());
                }
            }

            /// A selector is the AND of its parts: it matches iff every matchLabels pair and
            /// every requirement does; adding labels the selector does not mention keeps a match
            /// that needs no absent key; the empty selector matches everything.
            #[test]
            fn selectors_are_conjunctions(
                match_labels in small_labels(),
                expressions in proptest::collection::vec(requirement(), 0..3),
                labels in small_labels(),
            ) {
                let selector = LabelSelector {
                    match_labels: match_labels.clone(),
                    match_expressions: expressions.clone(),
                    span: Span::default(),
                };
                let expected = match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
                    && expressions.iter().all(|r| r.matches(&labels));
                prop_assert_eq!(selector.matches(&labels), expected);
                let mut more = labels.clone();
                more.insert("unmentioned".into(), "x".into());
                prop_assert_eq!(selector.matches(&more), expected);
                prop_assert!(LabelSelector::from_map(Labels::new(), Span::default()).matches(&labels));
                // A selector built from a pod's own labels selects that pod.
                prop_assert!(LabelSelector::from_map(labels.clone(), Span::default()).matches(&labels));
            }
        }
    }
}

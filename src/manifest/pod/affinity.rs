//! Node affinity and pod (anti-)affinity of a pod spec: the terms the scheduler filters and
//! scores nodes by.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PreferredSchedulingTerm {
    pub weight: i32,
    pub preference: NodeSelectorTerm,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeAffinity {
    /// `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms` (ORed).
    pub required: Option<Spanned<Vec<NodeSelectorTerm>>>,
    pub preferred: Vec<PreferredSchedulingTerm>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PodAffinityTerm {
    pub label_selector: Option<LabelSelector>,
    /// Empty with no namespace selector: the pod's own namespace.
    pub namespaces: Vec<String>,
    pub namespace_selector: Option<LabelSelector>,
    pub topology_key: Spanned<String>,
    pub match_label_keys: Vec<String>,
    pub mismatch_label_keys: Vec<String>,
    #[serde(skip)]
    pub span: Span,
}

impl PodAffinityTerm {
    pub(super) fn read(r: &mut Reader, node: &Node) -> Option<PodAffinityTerm> {
        let Some(topology_key) = r.text(node, "topologyKey").filter(|k| !k.value.is_empty()) else {
            r.error(node.span, "a pod affinity term needs a non-empty `topologyKey`");
            return None;
        };
        Some(PodAffinityTerm {
            label_selector: LabelSelector::read(r, node, "labelSelector"),
            namespaces: r.string_list(node, "namespaces"),
            namespace_selector: LabelSelector::read(r, node, "namespaceSelector"),
            topology_key,
            match_label_keys: r.string_list(node, "matchLabelKeys"),
            mismatch_label_keys: r.string_list(node, "mismatchLabelKeys"),
            span: node.span,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WeightedPodAffinityTerm {
    pub weight: i32,
    pub term: PodAffinityTerm,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PodAffinity {
    pub required: Vec<PodAffinityTerm>,
    pub preferred: Vec<WeightedPodAffinityTerm>,
}

impl PodAffinity {
    pub(super) fn read(r: &mut Reader, parent: &Node, key: &str) -> PodAffinity {
        let Some(node) = r.map(parent, key) else {
            return PodAffinity::default();
        };
        let required = r
            .maps(node, "requiredDuringSchedulingIgnoredDuringExecution")
            .into_iter()
            .filter_map(|t| PodAffinityTerm::read(r, t))
            .collect();
        let mut preferred = Vec::new();
        for w in r.maps(node, "preferredDuringSchedulingIgnoredDuringExecution") {
            let weight = read_weight(r, w);
            let Some(term_node) = r.map(w, "podAffinityTerm") else {
                r.error(w.span, "a preferred pod affinity term needs `podAffinityTerm`");
                continue;
            };
            if let (Some(weight), Some(term)) = (weight, PodAffinityTerm::read(r, term_node)) {
                preferred.push(WeightedPodAffinityTerm { weight, term });
            }
        }
        PodAffinity { required, preferred }
    }

    pub fn terms(&self) -> impl Iterator<Item = &PodAffinityTerm> {
        self.required.iter().chain(self.preferred.iter().map(|w| &w.term))
    }

    pub fn is_empty(&self) -> bool {
        self.required.is_empty() && self.preferred.is_empty()
    }
}

pub(super) fn read_weight(r: &mut Reader, node: &Node) -> Option<i32> {
    let Some(weight) = r.int32(node, "weight") else {
        r.error(node.span, "a preferred term needs a `weight` from 1 to 100");
        return None;
    };
    if !(1..=100).contains(&weight.value) {
        r.error(weight.span, "`weight` must be from 1 to 100");
        return None;
    }
    Some(weight.value)
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Affinity {
    pub node: NodeAffinity,
    pub pod: PodAffinity,
    pub pod_anti: PodAffinity,
}

pub(super) fn read_node_affinity(r: &mut Reader, affinity: &Node) -> NodeAffinity {
    r.map(affinity, "nodeAffinity")
        .map(|node| NodeAffinity::read(r, node))
        .unwrap_or_default()
}

impl NodeAffinity {
    /// A `nodeAffinity` body: a pod's, or a scheduler profile's `addedAffinity`.
    pub fn read(r: &mut Reader, node: &Node) -> NodeAffinity {
        let required = r
            .map(node, "requiredDuringSchedulingIgnoredDuringExecution")
            .map(|req| {
                let terms: Vec<NodeSelectorTerm> = r
                    .maps(req, "nodeSelectorTerms")
                    .into_iter()
                    .map(|t| NodeSelectorTerm::read(r, t))
                    .collect();
                if terms.is_empty() {
                    r.error(req.span, "`nodeSelectorTerms` must have at least one term");
                }
                Spanned::new(terms, req.span)
            });
        let mut preferred = Vec::new();
        for p in r.maps(node, "preferredDuringSchedulingIgnoredDuringExecution") {
            let weight = read_weight(r, p);
            let Some(pref) = r.map(p, "preference") else {
                r.error(p.span, "a preferred node affinity term needs `preference`");
                continue;
            };
            let preference = NodeSelectorTerm::read(r, pref);
            if let Some(weight) = weight {
                preferred.push(PreferredSchedulingTerm { weight, preference });
            }
        }
        NodeAffinity { required, preferred }
    }

    /// Whether a node passes the required terms (none: every node).
    pub fn required_matches(&self, name: &str, labels: &Labels) -> bool {
        self.required
            .as_ref()
            .is_none_or(|t| t.value.iter().any(|term| term.matches(name, labels)))
    }

    /// The sum of the weights of the preferred terms a node matches.
    pub fn preferred_weight(&self, name: &str, labels: &Labels) -> i64 {
        self.preferred
            .iter()
            .filter(|p| p.preference.matches(name, labels))
            .map(|p| i64::from(p.weight))
            .sum()
    }
}

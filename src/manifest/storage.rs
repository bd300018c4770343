//! Volumes and where they live: StorageClasses, PersistentVolumeClaims, PersistentVolumes and
//! a StatefulSet's `volumeClaimTemplates`, as far as they restrict the zone a pod can run in.
//!
//! A zonal volume (a cloud disk) can only be attached in its zone, so once a claim is bound the
//! pod goes nowhere else (the scheduler's VolumeBinding filter: "node(s) had volume node
//! affinity conflict"). When the volume is made depends on the class's `volumeBindingMode`:
//! `Immediate` provisions it as soon as the claim exists, in a zone the provisioner picks
//! without knowing the pod; `WaitForFirstConsumer` waits for the scheduler to pick a node, and
//! provisions in that node's zone (pkg/scheduler/framework/plugins/volumebinding,
//! pkg/controller/volume/persistentvolume).

use serde::Serialize;

use crate::manifest::read::Reader;
use crate::source::{Span, Spanned};
use crate::yaml::Node;

/// Label keys that name a node's zone: the well-known ones, and a CSI driver's topology key
/// (`topology.ebs.csi.aws.com/zone`, `topology.gke.io/zone`, ...).
pub fn is_zone_key(key: &str) -> bool {
    key == "topology.kubernetes.io/zone" || key == "failure-domain.beta.kubernetes.io/zone" || key.ends_with("/zone")
}

/// The zones a list of node selector terms (`allowedTopologies`' `matchLabelExpressions`, a
/// PersistentVolume's `nodeAffinity`) allows, when one of its terms names zones; `None` when
/// they say nothing about zones. Terms are ORed, so the zones of every term count.
fn zones_of_terms(r: &mut Reader, terms: &[&Node], expressions_key: &str) -> Option<Vec<String>> {
    let mut zones: Option<Vec<String>> = None;
    for term in terms {
        for expression in r.maps(term, expressions_key) {
            let key = expression.get("key").and_then(Node::as_str).unwrap_or_default();
            let operator = expression.get("operator").and_then(Node::as_str).unwrap_or("In");
            if is_zone_key(key) && operator == "In" {
                let values = r.string_list(expression, "values");
                let all = zones.get_or_insert_with(Vec::new);
                all.extend(values);
            }
        }
    }
    if let Some(z) = &mut zones {
        z.sort();
        z.dedup();
    }
    zones
}

/// storage.k8s.io/v1 StorageClass.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StorageClass {
    /// `volumeBindingMode: Immediate` (the default): provisioned when the claim is created.
    pub immediate: bool,
    /// `volumeBindingMode`, or the class's `metadata` when the field is left to its default.
    #[serde(skip)]
    pub binding_mode_span: Span,
    /// The zones `allowedTopologies` allows; `None` for any.
    pub allowed_zones: Option<Spanned<Vec<String>>>,
    /// `storageclass.kubernetes.io/is-default-class: "true"`: claims without a class get it.
    pub default_class: bool,
    /// Its volumes are replicated across zones (GKE `replication-type: regional-pd`): they
    /// attach in any zone it allows.
    pub regional: bool,
}

impl StorageClass {
    pub fn read(r: &mut Reader, node: &Node, object_span: Span) -> StorageClass {
        let mode = r.one_of(node, "volumeBindingMode", &["Immediate", "WaitForFirstConsumer"]);
        let immediate = mode.as_ref().is_none_or(|m| m.value == "Immediate");
        let binding_mode_span = mode.as_ref().map_or(object_span, |m| m.span);
        let allowed_zones = node.get("allowedTopologies").and_then(|a| {
            let terms = r.maps(node, "allowedTopologies");
            zones_of_terms(r, &terms, "matchLabelExpressions").map(|z| Spanned::new(z, a.span))
        });
        let default_class = node
            .at(&["metadata", "annotations", "storageclass.kubernetes.io/is-default-class"])
            .and_then(Node::scalar_text)
            .is_some_and(|v| v == "true");
        let regional = node
            .at(&["parameters", "replication-type"])
            .and_then(Node::scalar_text)
            .is_some_and(|v| v.starts_with("regional"));
        StorageClass {
            immediate,
            binding_mode_span,
            allowed_zones,
            default_class,
            regional,
        }
    }
}

/// v1 PersistentVolumeClaim: its class, or the volume it is bound to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PersistentVolumeClaim {
    /// `storageClassName`; `None` when absent (the default class), `Some("")` for none.
    pub storage_class: Option<String>,
    /// `volumeName`: bound to this PersistentVolume.
    pub volume_name: Option<String>,
}

impl PersistentVolumeClaim {
    /// `spec` of the claim (of a claim template too).
    pub fn read_spec(r: &mut Reader, spec: &Node) -> PersistentVolumeClaim {
        PersistentVolumeClaim {
            storage_class: r.string(spec, "storageClassName").map(|s| s.value),
            volume_name: r.string(spec, "volumeName").map(|s| s.value).filter(|v| !v.is_empty()),
        }
    }
}

/// v1 PersistentVolume: the zones its node affinity allows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PersistentVolume {
    pub zones: Option<Spanned<Vec<String>>>,
}

impl PersistentVolume {
    pub fn read(r: &mut Reader, node: &Node) -> PersistentVolume {
        let zones = node.at(&["spec", "nodeAffinity", "required"]).and_then(|required| {
            let terms = r.maps(required, "nodeSelectorTerms");
            zones_of_terms(r, &terms, "matchExpressions").map(|z| Spanned::new(z, required.span))
        });
        PersistentVolume { zones }
    }
}

/// One of a StatefulSet's `volumeClaimTemplates`: each pod gets its own claim from it, kept
/// when the pod goes (a replacement with the same ordinal gets the same volume).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimTemplate {
    pub name: String,
    pub claim: PersistentVolumeClaim,
    #[serde(skip)]
    pub span: Span,
}

impl ClaimTemplate {
    pub fn read_all(r: &mut Reader, spec: &Node) -> Vec<ClaimTemplate> {
        r.maps(spec, "volumeClaimTemplates")
            .into_iter()
            .map(|t| ClaimTemplate {
                name: t
                    .at(&["metadata", "name"])
                    .and_then(Node::as_str)
                    .unwrap_or_default()
                    .to_string(),
                claim: t
                    .get("spec")
                    .map(|s| PersistentVolumeClaim::read_spec(r, s))
                    .unwrap_or(PersistentVolumeClaim {
                        storage_class: None,
                        volume_name: None,
                    }),
                span: t.span,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_keys_are_the_well_known_ones_and_csi_topology_keys() {
        assert!(is_zone_key("topology.kubernetes.io/zone"));
        assert!(is_zone_key("failure-domain.beta.kubernetes.io/zone"));
        assert!(is_zone_key("topology.ebs.csi.aws.com/zone"));
        assert!(!is_zone_key("kubernetes.io/hostname"));
        assert!(!is_zone_key("topology.kubernetes.io/region"));
    }
}

//! The volumes that tie a workload's pods to zones: its claims (a StatefulSet's claim
//! templates, the claims its pods name), their StorageClass or bound PersistentVolume, looked
//! up among the objects of the workload's scope.

use crate::manifest::storage::PersistentVolumeClaim;
use crate::manifest::{Body, Object};
use crate::source::Span;

/// Where a workload's volumes let its pods run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodVolumes {
    /// The StorageClasses, claims and volumes involved (indices into the objects).
    pub objects: Vec<usize>,
    /// The zone restriction, when a claim's class or volume is known.
    pub zones: Option<VolumeZones>,
    /// Classes of claims that are not among the objects (`None`: the cluster's default class):
    /// where those volumes go is not modelled.
    pub unknown_classes: Vec<Option<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VolumeZones {
    /// Each pod has its own claim (a StatefulSet's claim templates), else the pods share one.
    pub per_pod: bool,
    /// `volumeBindingMode: Immediate`: provisioned when the claim is created, in a zone the
    /// provisioner picks among `zones`.
    pub immediate: bool,
    /// The zones allowed (`allowedTopologies`, a bound volume's node affinity); empty for any.
    pub zones: Vec<String>,
    /// Bound to a PersistentVolume already: `zones` are where it is.
    pub bound: bool,
    /// The field that decides it: an Immediate class's `volumeBindingMode`, a volume's node
    /// affinity, a class's `allowedTopologies`, else the claim (template).
    pub span: Span,
}

/// The volumes of workload `w`.
pub fn pod_volumes(objects: &[Object], w: usize) -> PodVolumes {
    let mut out = PodVolumes::default();
    let Some(workload) = objects[w].workload() else {
        return out;
    };
    let scope = objects[w].scope;
    let namespace = objects[w].namespace();
    // The first object of the workload's scope that `pick` takes.
    let find = |pick: &dyn Fn(&Object) -> bool| {
        objects
            .iter()
            .enumerate()
            .find(|(_, o)| o.scope == scope && !o.shadowed && !o.invalid && pick(o))
            .map(|(i, o)| (i, &o.body))
    };
    // (claim, per pod, the claim's span)
    let mut claims: Vec<(PersistentVolumeClaim, bool, Span)> = workload
        .claim_templates
        .iter()
        .map(|t| (t.claim.clone(), true, t.span))
        .collect();
    for name in &workload.template.spec.volumes.claims {
        let found = find(&|o| {
            matches!(o.body, Body::PersistentVolumeClaim(_)) && o.id.name == *name && o.namespace() == namespace
        });
        if let Some((i, Body::PersistentVolumeClaim(c))) = found {
            out.objects.push(i);
            claims.push((c.as_ref().clone(), false, objects[i].span));
        }
    }
    for (claim, per_pod, claim_span) in claims {
        // Bound to a volume among the objects: where it is.
        if let Some(volume) = &claim.volume_name {
            let pv = find(&|o| matches!(o.body, Body::PersistentVolume(_)) && o.id.name == *volume);
            if let Some((i, Body::PersistentVolume(v))) = pv {
                out.objects.push(i);
                if let Some(zones) = &v.zones {
                    out.zones.get_or_insert(VolumeZones {
                        per_pod,
                        immediate: false,
                        zones: zones.value.clone(),
                        bound: true,
                        span: zones.span,
                    });
                }
            }
            continue;
        }
        let class = match claim.storage_class.as_deref() {
            // No class: only volumes made by hand bind it.
            Some("") => continue,
            Some(name) => find(&|o| matches!(o.body, Body::StorageClass(_)) && o.id.name == name),
            None => find(&|o| matches!(&o.body, Body::StorageClass(c) if c.default_class)),
        };
        let Some((i, Body::StorageClass(class))) = class else {
            out.unknown_classes.push(claim.storage_class.clone());
            continue;
        };
        out.objects.push(i);
        let zones = class.allowed_zones.as_ref();
        let span = if class.immediate {
            class.binding_mode_span
        } else {
            zones.map_or(claim_span, |z| z.span)
        };
        // A regional volume attaches in every zone its class allows, from the start.
        let restriction = VolumeZones {
            per_pod,
            immediate: class.immediate && !class.regional,
            zones: zones.map(|z| z.value.clone()).unwrap_or_default(),
            bound: class.regional,
            span,
        };
        // An Immediate claim is the tighter one: it is placed before any pod.
        match &out.zones {
            Some(z) if z.bound || (z.immediate && !restriction.immediate) => {}
            _ => out.zones = Some(restriction),
        }
    }
    out.objects.sort_unstable();
    out.objects.dedup();
    out.unknown_classes.sort();
    out.unknown_classes.dedup();
    out
}

//! The cluster autoscaler's steps (cluster_autoscaler.pml beside this file): nodes added
//! for Pending pods, scale-downs and their evictions, scale-ups it will not make.

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let pool = |i: i64| usize::try_from(i - 1).ok().and_then(|i| s.names.scaling_pools.get(i));
    let ca = Actor::ClusterAutoscaler;
    match event {
        Event::NodeAdded => {
            let zone = usize::try_from(at(1) - 1)
                .ok()
                .and_then(|i| s.names.node_zones.get(i).cloned().flatten());
            let pool = pool(at(2));
            DecodedStep::new(
                ca,
                format!(
                    "adds {} to pool {} for the Pending pods{}",
                    s.namer.node(at(1)),
                    pool.map_or("?", |p| p.0.as_str()),
                    match zone {
                        Some(z) => format!("; the cloud starts it in {z}"),
                        None => String::new(),
                    }
                ),
                pool.map(|p| p.1),
            )
        }
        Event::ScaleDownStarted => DecodedStep::new(
            ca,
            format!(
                "{} is unneeded (its pods request under the scale-down threshold and fit elsewhere): taints it and drains it",
                s.namer.node(at(1))
            ),
            None,
        ),
        Event::AutoscalerEvicted => DecodedStep::new(
            ca,
            format!("evicts {} from {}", s.namer.pod(at(1)), s.namer.node(at(2))),
            s.namer.budgets_of_slot(at(1)).first().map(|b| b.budget_field()),
        ),
        Event::AutoscalerRefused => DecodedStep::new(
            ca,
            format!(
                "cannot evict {}: its PodDisruptionBudget has no disruption left; {} stays",
                s.namer.pod(at(1)),
                s.namer.node(at(2))
            ),
            s.namer.budgets_of_slot(at(1)).first().map(|b| b.budget_field()),
        ),
        Event::ScaleUpWanted => {
            let pool = pool(at(2));
            let message = match pool {
                Some((name, _)) => format!(
                    "no scale-up for {}: it would not fit a new node of pool {name} either (the autoscaler simulates one in the pool's first zone)",
                    s.namer.pod(at(1))
                ),
                None => format!(
                    "no scale-up for {}: every pool it scales is at its max",
                    s.namer.pod(at(1))
                ),
            };
            DecodedStep::new(ca, message, pool.map(|p| p.1))
        }
        _ => DecodedStep::new(ca, format!("deletes the drained {}", s.namer.node(at(1))), None),
    }
}

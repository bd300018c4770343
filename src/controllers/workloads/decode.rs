//! The workload controllers' steps (deployment.pml and rolling_update.pml beside this file):
//! pods created and deleted, rollouts started and finished.

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    match event {
        Event::PodCreated => DecodedStep::new(
            s.namer.controller(at(1)),
            format!("creates pod {}", s.namer.pod(at(1))),
            s.namer.owner_object(at(1)).map(Object::replicas_field),
        ),
        Event::PodDeleted => DecodedStep::new(
            s.namer.controller(at(1)),
            format!("deletes pod {}", s.namer.pod(at(1))),
            None,
        ),
        Event::RolloutApplied => {
            let workload = s.namer.workload(at(1));
            DecodedStep::new(
                Actor::Event("apply"),
                format!(
                    "a new revision of {}'s pod template is applied: a rollout starts",
                    workload.map_or_else(String::new, |w| w.id.to_string())
                ),
                workload.map(|w| w.workload().map_or(w.span, |wl| wl.template.span)),
            )
        }
        _ => DecodedStep::new(
            Actor::DeploymentController,
            format!(
                "the rollout of {} is complete",
                s.namer.workload(at(1)).map_or_else(String::new, |w| w.id.to_string())
            ),
            None,
        ),
    }
}

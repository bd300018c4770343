//! A new revision of one workload's pod template, applied at a settled moment, where the unit
//! checks `rollout-completes` (`event.pml`). It prints the Deployment controller's
//! `EVENT_ROLLOUT_APPLIED` (`crate::trace`), which `apply` prints too.

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "rollout",
    summary: "a new revision of one workload's pod template is applied and rolled out",
    configured: Configured::ByModel,
    templates: &[("events/rollout.pml", include_str!("event.pml"))],
    included: Some("rollouts"),
    proctype: "Rollout",
    runs_autoscalers: false,
    busy: None,
    prints: &[],
};

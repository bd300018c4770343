//! The event `node-maintenance` (Kivi's maintenance): one node at a time goes down with its
//! pods and comes back (`event.pml`, with the shared `node_down.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "node-maintenance",
    summary: "each node in turn goes down with its pods and comes back",
    configured: Configured::ByReader,
    templates: &[NODE_DOWN, ("events/node_maintenance.pml", include_str!("event.pml"))],
    included: Some("ir.node_maintenance"),
    proctype: "NodeMaintenance",
    runs_autoscalers: false,
    busy: Some("in_maintenance > 0"),
    prints: &[
        Printed {
            code: 10,
            define: "EVENT_MAINTENANCE_STARTED",
            actor: Actor::Event("node-maintenance"),
            tell: |v, trail| told(format!("{} goes down for maintenance", trail.node(at(v, 1)))),
            changed: Some(Changed::Node(Change::NodeDown)),
        },
        Printed {
            code: 11,
            define: "EVENT_MAINTENANCE_ENDED",
            actor: Actor::Event("node-maintenance"),
            tell: |v, trail| told(format!("{} is back", trail.node(at(v, 1)))),
            changed: Some(Changed::Node(Change::NodeUp)),
        },
    ],
};

//! The event `node-overload` (Kivi's kernel panic): a node whose pods use more than the
//! threshold of its cpu crashes with its pods and restarts (`event.pml`, with the shared
//! `node_down.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "node-overload",
    summary: "a node whose pods use more than the threshold of its cpu crashes with its pods and restarts",
    configured: Configured::ByReader,
    templates: &[NODE_DOWN, ("events/node_overload.pml", include_str!("event.pml"))],
    included: Some("ir.overload_threshold"),
    proctype: "NodeOverload",
    runs_autoscalers: true,
    busy: Some("restarting > 0"),
    prints: &[
        Printed {
            code: 17,
            define: "EVENT_NODE_OVERLOADED",
            actor: Actor::Event("node-overload"),
            tell: |v, trail| {
                told(format!(
                    "{} is overloaded (its pods use {}m of {}m cpu) and crashes",
                    trail.node(at(v, 1)),
                    at(v, 2),
                    at(v, 3)
                ))
            },
            changed: Some(Changed::Node(Change::NodeDown)),
        },
        Printed {
            code: 19,
            define: "EVENT_NODE_RESTARTED",
            actor: Actor::Event("node-overload"),
            tell: |v, trail| told(format!("{} has restarted", trail.node(at(v, 1)))),
            changed: Some(Changed::Node(Change::NodeUp)),
        },
    ],
};

//! The event `node-failure`: nodes stop reporting, the taint eviction controller deletes their
//! pods when their tolerations run out, and the nodes may come back (`event.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "node-failure",
    summary: "nodes stop reporting; their pods are deleted when their tolerations of `unreachable` run out",
    configured: Configured::ByReader,
    templates: &[("events/node_failure.pml", include_str!("event.pml"))],
    included: Some("ir.node_failure"),
    proctype: "NodeFailure",
    runs_autoscalers: false,
    busy: Some("nodes_down > 0 || lost_work > 0"),
    prints: &[
        Printed {
            code: 28,
            define: "EVENT_NODE_FAILED",
            actor: Actor::Event("node-failure"),
            tell: |v, trail| {
                told(format!(
                    "{} stops reporting: its pods are no longer ready",
                    trail.node(at(v, 1))
                ))
            },
            changed: Some(Changed::Node(Change::NodeDown)),
        },
        Printed {
            code: 29,
            define: "EVENT_FAILURE_EVICTED",
            actor: Actor::TaintEvictionController,
            tell: |v, trail| {
                told(format!(
                    "deletes {} from the unreachable {}: its toleration has run out",
                    trail.pod(at(v, 1)),
                    trail.node(at(v, 2))
                ))
            },
            changed: Some(Changed::PodOn(Change::PodRemoved)),
        },
        Printed {
            code: 30,
            define: "EVENT_NODE_RECOVERED",
            actor: Actor::Event("node-failure"),
            tell: |v, trail| told(format!("{} reports again", trail.node(at(v, 1)))),
            changed: Some(Changed::Node(Change::NodeUp)),
        },
    ],
};

//! The event `node-drain` (`kubectl drain`): a node is cordoned and its pods evicted through
//! the Eviction API, which honours PodDisruptionBudgets (`event.pml`).

use super::*;

pub const EVENT: EventKind = EventKind {
    name: "node-drain",
    summary: "a node is cordoned and its pods evicted through the Eviction API, then it is uncordoned",
    configured: Configured::ByReader,
    templates: &[("events/node_drain.pml", include_str!("event.pml"))],
    included: Some("ir.node_drain"),
    proctype: "NodeDrain",
    runs_autoscalers: false,
    busy: Some("draining > 0"),
    prints: &[
        Printed {
            code: 31,
            define: "EVENT_DRAIN_STARTED",
            actor: Actor::Event("node-drain"),
            tell: |v, trail| told(format!("cordons {} and starts draining it", trail.node(at(v, 1)))),
            changed: Some(Changed::Node(Change::NodeCordoned)),
        },
        Printed {
            code: 32,
            define: "EVENT_DRAIN_EVICTED",
            actor: Actor::Event("node-drain"),
            tell: drain_evicted,
            changed: Some(Changed::PodOn(Change::PodRemoved)),
        },
        Printed {
            code: 33,
            define: "EVENT_DRAIN_ENDED",
            actor: Actor::Event("node-drain"),
            tell: |v, trail| told(format!("{} is drained and uncordoned", trail.node(at(v, 1)))),
            changed: Some(Changed::Node(Change::NodeUncordoned)),
        },
    ],
};

/// `KIVI:32:slot:node`: located at the budget that let the eviction through.
fn drain_evicted(v: &[i64], trail: &dyn Counterexample) -> Told {
    let budgets = trail.budgets_of_pod(at(v, 1));
    let why = if budgets.is_empty() {
        "no PodDisruptionBudget selects it".to_string()
    } else {
        let names: Vec<String> = budgets.iter().map(|b| b.id.to_string()).collect();
        format!("{} allows it", names.join(", "))
    };
    Told {
        message: format!("evicts {} from {}: {why}", trail.pod(at(v, 1)), trail.node(at(v, 2))),
        location: budgets.first().map(|b| b.budget_field()),
    }
}

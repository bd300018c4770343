//! The descheduler's steps (descheduler.pml beside this file): an eviction by one of its
//! plugins, located at where the policy enables the plugin, or the evictor declining one.

use super::*;

pub(super) fn tell(event: Event, v: &[i64], s: &Scene) -> DecodedStep {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    if event == Event::DeschedulerDeclined {
        let plugin = plugin_name(at(3));
        let budgets = s.namer.budgets_of_slot(at(1));
        let by_budget = at(4) == 2;
        let why = if by_budget {
            let names: Vec<String> = budgets.iter().map(|b| b.id.to_string()).collect();
            format!("{} allows no disruption now", names.join(", "))
        } else {
            "no other node fits it now (the DefaultEvictor's nodeFit)".to_string()
        };
        return DecodedStep::new(
            Actor::Descheduler,
            format!(
                "{plugin} would evict {} from {}, but the evictor declines: {why}",
                s.namer.pod(at(1)),
                s.namer.node(at(2))
            ),
            budgets.first().filter(|_| by_budget).map(|b| b.budget_field()),
        );
    }
    let plugin = match at(3) {
        1 => "RemoveDuplicates: another pod of its workload shares the node",
        2 => "RemovePodsViolatingTopologySpreadConstraint: its spread domains are unbalanced",
        3 => "RemovePodsViolatingNodeTaints: it does not tolerate the node's taints",
        4 => "RemovePodsViolatingNodeAffinity: another node suits its node affinity better",
        5 => "LowNodeUtilization: the node is above the target thresholds",
        _ => "a descheduler plugin",
    };
    DecodedStep::new(
        Actor::Descheduler,
        format!("evicts {} from {} ({plugin})", s.namer.pod(at(1)), s.namer.node(at(2))),
        usize::try_from(at(3))
            .ok()
            .and_then(|i| s.names.descheduler_plugins.get(i).copied().flatten()),
    )
}

/// A descheduler plugin's name, from its number in descheduler.pml.
fn plugin_name(plugin: i64) -> &'static str {
    match plugin {
        1 => "RemoveDuplicates",
        2 => "RemovePodsViolatingTopologySpreadConstraint",
        3 => "RemovePodsViolatingNodeTaints",
        4 => "RemovePodsViolatingNodeAffinity",
        5 => "LowNodeUtilization",
        _ => "a descheduler plugin",
    }
}

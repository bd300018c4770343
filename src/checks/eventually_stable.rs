//! The check `eventually-stable`: what it claims, its defaults and its monitor: the
//! proctype `CheckEventuallyStable` of `templates/checks/eventually_stable.pml`, whose violation ends the trace
//! with `NotStable`.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::EventuallyStable,
    aliases: &[],
    summary: "once the environment stops changing, the unit reaches its desired state and stays",
    definition: "Anvil's eventually stable reconciliation, as a check on configurations: once \
                 the environment stops changing (no more load changes, failures, drains or \
                 rollouts), the controllers bring the unit to its desired state (every \
                 desired pod running, no pod Pending, no rollout open) and then stop acting. \
                 A violation is a lasso: the steps that lead to a cycle, and the cycle the \
                 controllers repeat forever, or the settled state that is not the desired \
                 one. Checked as SPIN's non-progress cycle search.",
    level: Level::Warning,
    applies: Applies::WithFeedback,
    params: &[],
    tags: &["reliability", "liveness", "convergence", "controllers"],
    example: "A GitOps tool re-applies `spec.replicas: 2` from Git while an HPA scales the \
              same Deployment to 3: each undoes the other, forever, with no change of load.",
    default_enabled: false,
    fixes: &[
        "Leave `spec.replicas` out of the manifest of an autoscaled workload (the HPA owns it), or make the GitOps tool ignore the field.",
        "Give every pod a place to run at the workload's desired size (requests, spread, affinity), so the cluster can settle.",
        "Align the descheduler's and the scheduler's constraints, so one does not undo the other.",
    ],
    liveness: true,
    template: "checks/eventually_stable.pml",
    proctype: "CheckEventuallyStable",
    violation: Event::NotStable,
};

//! The check `eventually-stable`: what it claims, its defaults and its monitor: the
//! proctype `CheckEventuallyStable` of `monitor.pml` beside it, whose violation ends the trace
//! with `EVENT_NOT_STABLE`, told by [`tell`].

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
    remedies: &[Remedy::HardenSoftSpread],
    liveness: true,
    template: "checks/eventually_stable.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckEventuallyStable",
    violation: MonitorEvent {
        code: 37,
        define: "EVENT_NOT_STABLE",
        tell,
        blame: Blame::Scheduling,
        subject: Subject::Unit,
    },
    bookkeeping: None,
    told_by_scheduler: false,
};

/// `KIVI:37:workload:running:desired:pending:rolling`, at the start of the cycle (workload 0:
/// only Pending pods).
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    let pending = at(4);
    let mut parts = Vec::new();
    if let Some(w) = workload {
        if at(2) != at(3) {
            parts.push(format!("{} has {} of {} replicas running", w.id, at(2), at(3)));
        }
        if at(5) != 0 {
            parts.push(format!("the rollout of {} is not done", w.id));
        }
    }
    if pending > 0 {
        parts.push(format!("{pending} pod(s) are Pending"));
    }
    Told {
        message: format!(
            "the cluster has settled short of its desired state and stays there: {}",
            parts.join(", ")
        ),
        location: workload.map(Object::replicas_field),
    }
}

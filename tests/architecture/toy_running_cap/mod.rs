//! A toy check, built only by `tests/architecture.rs` to show that a check is its folder and a
//! registry line: no workload ever runs more than `max` pods. Copy a real check's folder
//! (`src/checks/<module>/`) to start a new one; this one is the smallest that works.

use super::*;

pub const CHECK: Check = Check {
    id: CheckId::ToyRunningCap,
    aliases: &[],
    summary: "no workload runs more than `max` pods",
    definition: "No workload ever has more than the `max` param of its pods running.",
    level: Level::Error,
    applies: Applies::Always,
    params: &[Param {
        name: "max",
        description: "the most running pods a workload may have",
        default: Some(100),
        minimum: 0,
        define: None,
        bounds_availability: false,
    }],
    tags: &["capacity"],
    example: "A Deployment of 3 replicas under a `max` of 2.",
    default_enabled: true,
    fixes: &["Lower spec.replicas."],
    remedies: &[],
    liveness: false,
    template: "checks/toy_running_cap.pml",
    monitor: include_str!("monitor.pml"),
    proctype: "CheckToyRunningCap",
    violation: MonitorEvent {
        code: 90,
        define: "EVENT_TOY_OVER_CAP",
        tell,
        blame: Blame::CheckField,
        subject: Subject::Unit,
    },
    bookkeeping: None,
    told_by_scheduler: false,
};

/// `KIVI:90:workload:running:max`.
fn tell(v: &[i64], trail: &dyn Counterexample) -> Told {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let workload = trail.workload(at(1));
    Told {
        message: format!("{} runs {} pods, more than {}", named(workload), at(2), at(3)),
        location: workload.map(Object::replicas_field),
    }
}

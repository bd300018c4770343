//! A search that nothing decided on its smallest topology (the model's bounds, or a limit),
//! again with fewer replicas: what holds there is a partial verdict that says with how many.

use super::*;

/// The checks of a search that nothing decided on its smallest topology: the model's bounds
/// (pod slots) or a limit (memory, time, depth) stopped it there, so no topology held them.
pub fn undecided_at_smallest(searched: &Searched) -> Vec<CheckId> {
    if matches!(searched.failure, Some(engine::Inconclusive::ModelBound(_))) {
        return searched.checks.clone();
    }
    let Some(first) = searched.runs.first() else {
        return Vec::new();
    };
    first
        .verdicts
        .iter()
        .filter(|(_, v)| {
            matches!(v, PointVerdict::Inconclusive(why)
                if why.is_limit() && !matches!(why, engine::Inconclusive::RunTimeout(_)))
        })
        .map(|(c, _)| *c)
        .collect()
}

/// A search again, for the checks nothing decided on its smallest topology
/// ([`undecided_at_smallest`]), on that cluster with fewer replicas: each workload of a fixed
/// count above 1, 2, 4, … capped there, up to below its manifest's count (an autoscaled one
/// keeps its starting count, a DaemonSet its nodes). What holds there is a partial verdict
/// that says so ("holds … web at 8 of its 14 replicas"); it is never a verdict on the
/// manifests' count. `None` when the unit has no such workload, or even one replica each is
/// beyond the model.
pub fn plan_fewer_replicas(
    subject: Subject<'_>,
    generator: &Generator,
    options: &Options,
    searched: &Searched,
) -> Option<UnitPlan> {
    let undecided = undecided_at_smallest(searched);
    if undecided.is_empty() || options.scale != Scale::Search || options.verdicts_only {
        return None;
    }
    let unit = &subject.units[searched.unit];
    let config = unit.config(subject.config);
    let mut search = faults::searches(unit, &config)
        .into_iter()
        .find(|s| s.part == searched.part)?;
    search.checks.retain(|c| undecided.contains(c));
    let plan = plan_unit(subject, generator, options, searched.unit, Some(&search), true);
    (!plan.points.is_empty()).then_some(plan)
}

/// `base` with each workload of a fixed count above `r` held at `r`, for r = 1, 2, 4, … below
/// the largest such count ([`plan_fewer_replicas`]).
pub(super) fn fewer_replicas(unit: &Unit, objects: &[Object], base: &Topology) -> Vec<Topology> {
    let fixed: Vec<Option<u32>> = unit
        .workloads()
        .enumerate()
        .map(|(wi, w)| {
            if base.replicas.get(wi).copied().flatten().is_some() {
                return None;
            }
            let workload = objects[w].workload()?;
            (workload.kind != crate::manifest::WorkloadKind::DaemonSet)
                .then(|| workload.desired_replicas().max(0) as u32)
        })
        .collect();
    let Some(&most) = fixed.iter().flatten().max() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut r = 1;
    while r < most {
        out.push(Topology {
            nodes_per_pool: base.nodes_per_pool.clone(),
            replicas: fixed
                .iter()
                .enumerate()
                .map(|(wi, f)| match f {
                    Some(d) if *d > r => Some(r),
                    _ => base.replicas.get(wi).copied().flatten(),
                })
                .collect(),
        });
        r *= 2;
    }
    out
}

/// `t` of [`plan_fewer_replicas`] with each workload it held lower at its manifest's count
/// again, named: where the search could not decide.
pub fn at_manifest_counts(subject: Subject<'_>, unit: usize, t: &Topology) -> Topology {
    let unit = &subject.units[unit];
    Topology {
        nodes_per_pool: t.nodes_per_pool.clone(),
        replicas: unit
            .workloads()
            .zip(&t.replicas)
            .map(|(w, r)| match subject.objects[w].workload() {
                Some(wl) if r.is_some() && unit.autoscaler_of(subject.objects, w).is_none() => {
                    Some(wl.desired_replicas().max(0) as u32)
                }
                _ => *r,
            })
            .collect(),
    }
}

//! Planning a unit's searches: its model rendered for each search of its fault model, and
//! the topologies it is run on, smallest first.

use super::*;

/// Plan the given units of the subject (indices into its units): render their models and
/// list their topologies, one plan per search of each unit's fault model ([`faults`]),
/// consecutive.
pub fn plan(subject: Subject<'_>, units: &[usize], generator: &Generator, options: &Options) -> Vec<UnitPlan> {
    units
        .iter()
        .flat_map(|&i| {
            let unit = &subject.units[i];
            let config = unit.config(subject.config);
            let searches = faults::searches(unit, &config);
            if searches.is_empty() {
                // A unit with no check to monitor still has a (empty) plan: it is told.
                return vec![plan_unit(subject, generator, options, i, None, false)];
            }
            searches
                .iter()
                .map(|search| plan_unit(subject, generator, options, i, Some(search), false))
                .collect()
        })
        .collect()
}

/// The plan of one search of unit `i` (`None`: the unit has no check to monitor); with
/// `fewer`, on its smallest topology with fewer replicas ([`plan_fewer_replicas`]).
pub(super) fn plan_unit(
    subject: Subject<'_>,
    generator: &Generator,
    options: &Options,
    i: usize,
    search: Option<&faults::Search>,
    fewer: bool,
) -> UnitPlan {
    let unit = &subject.units[i];
    let started = Instant::now();
    let part = search.map_or(faults::Part::Combined, |s| s.part);
    let checks: Vec<CheckId> = search
        .map(|s| s.checks.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| options.monitor.as_ref().is_none_or(|m| m.contains(c)))
        .collect();
    let mut plan = UnitPlan {
        unit: i,
        part,
        autoscalers_held: search.is_some_and(|s| !s.autoscalers)
            && unit.members.iter().any(|m| m.role == crate::units::Role::Autoscaler),
        name: unit.name.clone(),
        checks,
        points: Vec::new(),
        models: Vec::new(),
        shape: Shape::default(),
        bound: String::new(),
        failure: None,
        bounded: None,
        generate: Duration::ZERO,
    };
    let Some(search) = search.filter(|_| !plan.checks.is_empty()) else {
        return plan;
    };
    let config = faults::config_for(unit, search, subject.config, subject.objects);
    let model_unit = faults::unit_for(unit, search);
    // The topologies are the unit's own: an autoscaled workload starts at every count of its
    // range, where its autoscaler is held too.
    let mut topologies = topologies::plan(unit, subject.objects, &config, options.scale);
    if part == faults::Part::ImplicitDrain && options.scale == Scale::Current {
        // A fix keeps the implicit drain verified where the search verified it: on the
        // smallest cluster (each pool at its `min`), not on the counterexample's.
        for (n, pool) in topologies.topologies[0]
            .nodes_per_pool
            .iter_mut()
            .zip(&config.cluster.pools)
        {
            *n = pool.min.min(*n);
        }
    } else if part == faults::Part::ImplicitDrain {
        // A drain is hardest where the fewest nodes take the evicted pods' replacements and
        // the fewest replicas leave a budget the least room, while larger clusters multiply
        // the states of every settled placement (demo-shop's production unit: 38 million more
        // states at 5 nodes, over the memory limit). So the drain is explored on the smallest
        // cluster of the search, at every replica count, and the report says so.
        let fewest = topologies.topologies.iter().map(Topology::nodes).min().unwrap_or(0);
        topologies.topologies.retain(|t| t.nodes() == fewest);
    }
    plan.bound = topologies.bound;
    if topologies.topologies.is_empty() {
        plan.failure = Some("no topology to verify: no node pool can have a node".into());
        return plan;
    }
    if fewer {
        topologies.topologies = fewer::fewer_replicas(unit, subject.objects, &topologies.topologies[0]);
    }
    let mut built = Vec::new();
    for topology in topologies.topologies {
        match model::ir::build(&model_unit, subject.objects, &config, subject.environment, &topology) {
            Ok((ir, names)) => built.push((topology, ir, names)),
            // A larger topology than the model holds ends the search there.
            Err(e) if !built.is_empty() => {
                plan.bound = format!("{} ({e})", plan.bound);
                break;
            }
            Err(e) if e.is_bound() => {
                plan.bounded = Some(e.to_string());
                break;
            }
            Err(e) => {
                plan.failure = Some(e.to_string());
                break;
            }
        }
    }
    // Topologies where the HPAs had to be held below their maxReplicas to fit the model.
    let capped: Vec<i64> = built.iter().filter_map(|(_, _, names)| names.replica_cap).collect();
    if let (Some(low), Some(high)) = (capped.iter().min(), capped.iter().max()) {
        if !plan.bound.is_empty() {
            plan.bound.push_str(", ");
        }
        let range = if low == high {
            low.to_string()
        } else {
            format!("{low}-{high}")
        };
        plan.bound.push_str(&format!(
            "maxReplicas held at {range} on {} of the topologies (more pods than the {} one model holds)",
            capped.len(),
            model::ir::MAX_PODS
        ));
    }
    plan.shape = Shape::of(built.iter().map(|(_, ir, _)| ir));
    if let Some(floor) = &options.shape_floor {
        plan.shape = plan.shape.join(floor);
    }
    // The autoscaler's logs hold one earlier entry each (docs/conformance.md, "Time in the autoscaler").
    if plan.shape.hpa_log > 1 {
        if !plan.bound.is_empty() {
            plan.bound.push_str(", ");
        }
        plan.bound.push_str("one earlier entry per autoscaler log");
    }
    for (topology, ir, names) in built {
        let rendered = match generator.render(&ir, &plan.shape) {
            Ok(text) => text,
            Err(e) => {
                plan.failure = Some(e.to_string());
                break;
            }
        };
        // Topologies whose models render alike share one model (and one compiled pan).
        let model = match plan.models.iter().position(|m| *m == rendered) {
            Some(k) => k,
            None => {
                plan.models.push(rendered);
                plan.models.len() - 1
            }
        };
        plan.points.push(Point {
            topology,
            ir,
            names,
            model,
        });
    }
    plan.generate = started.elapsed();
    plan
}

pub(super) fn emit(dir: &std::path::Path, subject: Subject<'_>, plans: &[UnitPlan]) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for plan in plans {
            let unit_id = &subject.units[plan.unit].id;
            let id = match plan.part.slug() {
                Some(slug) => format!("{unit_id}.{slug}"),
                None => unit_id.clone(),
            };
            for (k, model) in plan.models.iter().enumerate() {
                let name = if k == 0 {
                    format!("{id}.pml")
                } else {
                    format!("{id}.{k}.pml")
                };
                crate::source::write_replacing(&dir.join(name), model.as_bytes())?;
            }
            for (t, point) in plan.points.iter().enumerate() {
                crate::source::write_replacing(
                    &dir.join(format!("{id}.{}.input", t + 1)),
                    model::input(&point.ir, &plan.shape, &plan.checks).as_bytes(),
                )?;
            }
        }
        Ok(())
    };
    if let Err(e) = write() {
        tracing::warn!("cannot write the models to {}: {e}", dir.display());
    }
}

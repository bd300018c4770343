//! `kivi-lint simulate`: one seeded run of a unit's model, with every event of its config
//! interleaved (the combined fault model) on the cluster as the config describes it.

use super::*;

/// One simulated run of a unit, as the model printed it.
pub struct SimulatedRun {
    /// The trail's events, the last one the run's end (or the check that failed first).
    pub trace: Vec<TraceEvent>,
    pub ir: Ir,
    pub names: Names,
    pub topology: Topology,
    /// The checks the run monitored.
    pub checks: Vec<CheckId>,
    /// The environment events it could take its steps with (config `type`s), each once.
    pub events: Vec<&'static str>,
}

/// What to simulate: the seed, the environment's steps before the run may end, and a
/// scenario (event types whose first steps come in this order, and only those).
#[derive(Clone, Copy, Debug)]
pub struct Simulate<'a> {
    pub seed: u32,
    pub steps: u32,
    pub scenario: &'a [String],
}

/// The run `seed` draws of unit `unit`: at most until the cluster has settled after the
/// environment acted `steps` times (or the scenario is done). `Err` says, in one line, why
/// there is none.
pub fn simulate(
    subject: Subject<'_>,
    unit: usize,
    generator: &Generator,
    engine: &Engine,
    run: Simulate<'_>,
    cancel: &AtomicBool,
) -> Result<SimulatedRun, String> {
    let config = Config {
        combine_events: true,
        ..subject.config.clone()
    };
    let subject = Subject {
        config: &config,
        ..subject
    };
    let options = Options {
        scale: Scale::Current,
        ..Options::default()
    };
    let plan = plan(subject, &[unit], generator, &options)
        .into_iter()
        .next()
        .ok_or("the unit has nothing to simulate")?;
    if let Some(why) = plan.failure.as_ref().or(plan.bounded.as_ref()) {
        return Err(why.clone());
    }
    let point = plan.points.first().ok_or("no topology to simulate on")?;
    // The safety checks only: a liveness check needs a cycle search, not one run.
    let checks: Vec<CheckId> = plan.checks.iter().copied().filter(|c| !c.check().liveness).collect();
    let model = generator
        .render_simulation(&point.ir, &plan.shape, run.steps, run.scenario)
        .map_err(|e| e.to_string())?;
    let input = model::input(&point.ir, &plan.shape, &checks);
    let trace = engine
        .simulate(&model, &input, run.seed, cancel)
        .map_err(|e| e.to_string())?
        .map_err(|why| why.to_string())?;
    let mut events: Vec<&'static str> = Vec::new();
    for e in &subject.units[unit].config(&config).events {
        let name = e.value.type_name();
        // The cluster autoscaler is a controller the config turns on, not an event.
        if crate::events::find(name).is_some() && !events.contains(&name) {
            events.push(name);
        }
    }
    Ok(SimulatedRun {
        events,
        trace,
        ir: point.ir.clone(),
        names: point.names.clone(),
        topology: point.topology.clone(),
        checks,
    })
}

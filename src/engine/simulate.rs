//! One seeded run of a simulation model (`kivi-lint simulate`): pan's randomised search (the
//! transition order `seed` draws, a bitstate table of a fixed size) until the model's
//! `Simulation` process or a check's monitor ends it, then the trail replayed.

use super::*;

impl Engine {
    /// The trail of the run `seed` draws through `model` on `input`: it ends where the model
    /// ends a simulation (or a check fails first). `Err` says why no run ended.
    pub fn simulate(
        &self,
        model: &str,
        input: &str,
        seed: u32,
        cancel: &AtomicBool,
    ) -> Result<Result<Vec<TraceEvent>, Inconclusive>, EngineError> {
        let dir = crate::process::temporary_dir("simulate")?;
        let input_path = dir.path().join(INPUT_FILE);
        std::fs::write(&input_path, input)?;
        let mut timings = Timings::default();
        let build = Build {
            optimised: true,
            reach: false,
            random: true,
            ..self.first_build(model)
        };
        let pan = match self.pan(model, build, &mut timings) {
            Ok(pan) => pan,
            Err(reason) => return Ok(Err(reason)),
        };
        let run = Run {
            pan: &pan,
            dir: dir.path(),
            input: &input_path,
            options: &self.options,
            cancel,
        };
        let output = match run.random(seed) {
            Ok(out) => out,
            Err(reason) => return Ok(Err(reason)),
        };
        Ok(match pan_output::parse(&output).0 {
            pan_output::PanResult::Violated(_) => run.replay(),
            pan_output::PanResult::Limited(Limit::Depth) => Err(Inconclusive::DepthLimit(self.options.max_depth)),
            _ => Err(Inconclusive::EngineError(
                "the run never settled: the cluster keeps changing (or the simulation's table filled)".into(),
            )),
        })
    }
}

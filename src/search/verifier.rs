//! The one object that verifies: the model generator, the engine, the search options, Ctrl-C
//! and the progress hook, handed to the scan, to PR mode's base revision and to the fix search
//! alike. What it verifies (a [`Subject`]) is passed to each call.

use super::*;
use crate::model::Generator;

#[derive(Clone, Copy)]
pub struct Verifier<'a> {
    pub generator: &'a Generator,
    pub engine: &'a Engine,
    pub options: &'a Options,
    /// Ctrl-C: stops every run.
    pub cancel: &'a AtomicBool,
    /// Hears of every finished run.
    pub progress: &'a (dyn Fn(&Progress) + Sync),
}

impl<'a> Verifier<'a> {
    /// The same verifier with other search options (a fix candidate's one topology).
    pub fn with_options<'b>(&self, options: &'b Options) -> Verifier<'b>
    where
        'a: 'b,
    {
        Verifier { options, ..*self }
    }

    /// The same verifier telling its progress elsewhere.
    pub fn with_progress<'b>(&self, progress: &'b (dyn Fn(&Progress) + Sync)) -> Verifier<'b>
    where
        'a: 'b,
    {
        Verifier { progress, ..*self }
    }

    /// Plan the given units of `subject` ([`plan`]).
    pub fn plan(&self, subject: Subject<'_>, units: &[usize]) -> Vec<UnitPlan> {
        plan(subject, units, self.generator, self.options)
    }

    /// Search planned units ([`search_plans`]).
    pub fn search(&self, subject: Subject<'_>, plans: Vec<UnitPlan>) -> Vec<Searched> {
        search_plans(subject, plans, self.engine, self.options, self.cancel, self.progress)
    }

    /// The search of `searched` again with fewer replicas ([`plan_fewer_replicas`]).
    pub fn plan_fewer_replicas(&self, subject: Subject<'_>, searched: &Searched) -> Option<UnitPlan> {
        plan_fewer_replicas(subject, self.generator, self.options, searched)
    }

    /// Whether Ctrl-C (or the scan's --timeout) stopped it.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

//! What a check outcome says in one line, the same in every format.

use super::document::{CheckOutcome, StepOut};

impl CheckOutcome {
    /// The step that says best what went wrong: the check's own conclusion, or for an
    /// unschedulable pod, the scheduler's reasons.
    pub fn decisive_step(&self) -> Option<&StepOut> {
        let scheduler = crate::findings::Actor::Scheduler.as_str();
        if crate::checks::find(&self.check).is_some_and(|c| c.told_by_scheduler) {
            // The pod the finding is located at: a waiting batch pod's step is not it.
            let waits = |s: &&StepOut| s.actor == scheduler && s.message.starts_with("no feasible node");
            let located = |s: &&StepOut| s.file.is_some() && (&s.file, s.line) == (&self.file, self.line);
            let mut waiting = self.steps.iter().rev().filter(waits);
            if let Some(s) = waiting.clone().find(located).or_else(|| waiting.next()) {
                return Some(s);
            }
        }
        self.steps
            .iter()
            .rev()
            .find(|s| s.actor == crate::findings::Actor::Check.as_str())
    }

    /// An inconclusive check in one line, the same in every format: why, where the run that
    /// could not finish was, and up to where the check held before it. A partial verdict says
    /// first what it holds on: "holds up to 5 nodes (…) (all 14 topologies up to there); not
    /// decided at 6 nodes (…): memory limit of 1024 MiB reached".
    pub fn inconclusive_text(&self) -> String {
        if let (true, Some(held)) = (self.partial, &self.held_up_to) {
            let n = self.held_topologies;
            let mut text = format!(
                "holds up to {} ({} topolog{} up to there)",
                held.description,
                if n == 1 {
                    "the one".to_string()
                } else {
                    format!("all {n}")
                },
                if n == 1 { "y" } else { "ies" }
            );
            let why = self.reason.as_deref().unwrap_or("a limit was reached");
            match &self.topology {
                Some(t) => text.push_str(&format!("; not decided at {}: {why}", t.description)),
                None => text.push_str(&format!("; not decided beyond: {why}")),
            }
            return text;
        }
        let mut text = self.reason.clone().unwrap_or_else(|| "no verdict".into());
        if let Some(t) = &self.topology {
            text.push_str(&format!(" (at {})", t.description));
        }
        if let Some(t) = &self.held_up_to {
            text.push_str(&format!("; it held up to {}", t.description));
        }
        text
    }
}

//! One cause, one finding: which violations of a unit follow from another's cause.

use super::document::{CheckOutcome, VerdictKind};

/// One cause, one finding. A violation follows from another of the unit when
/// - both are caused at the same field, or
/// - its counterexample goes through the other's decisive step (the same actor at the same
///   field: a rollout stalled by the pod the scheduler cannot place), or
/// - the fix verified for one is the fix verified for the other.
///
/// Passing through a field is not enough: a step that scales by an HPA's `maxReplicas` does
/// not make an unschedulable pod the consequence of the oscillation check located there. The
/// root is an error before a warning, then the first in check order; the others name it in
/// `caused_by` and it lists them in `also_breaks`.
pub(super) fn link_root_causes(results: &mut [CheckOutcome]) {
    let at = |c: &CheckOutcome| match (&c.file, c.line) {
        (Some(f), Some(l)) if c.verdict == VerdictKind::Violated => Some((f.clone(), l)),
        _ => None,
    };
    // b's counterexample has a's decisive step: the same actor at a's causing field.
    let goes_through = |b: &CheckOutcome, a: &CheckOutcome| {
        let (Some(place), Some(decisive)) = (at(a), a.decisive_step()) else {
            return false;
        };
        at(b) != Some(place.clone())
            && b.steps
                .iter()
                .any(|s| s.actor == decisive.actor && s.file.as_ref() == Some(&place.0) && s.line == Some(place.1))
    };
    let same_fix = |a: &CheckOutcome, b: &CheckOutcome| match (&a.fix, &b.fix) {
        (Some(f), Some(g)) => (&f.summary, &f.file, f.line) == (&g.summary, &g.file, g.line),
        _ => false,
    };
    // Roots are looked for among errors first, then in check order. Of two violations with
    // the same field or fix, the first is the root; a causal link goes either way.
    let mut order: Vec<usize> = (0..results.len()).collect();
    order.sort_by_key(|&i| results[i].level != crate::checks::Level::Error);
    for (nb, &b) in order.iter().enumerate() {
        if results[b].verdict != VerdictKind::Violated || results[b].caused_by.is_some() {
            continue;
        }
        for (na, &a) in order.iter().enumerate() {
            if a == b || results[a].verdict != VerdictKind::Violated || results[a].caused_by.is_some() {
                continue;
            }
            let (x, y) = (&results[b], &results[a]);
            let same = (at(y).is_some() && at(y) == at(x)) || same_fix(y, x);
            let follows = (same && na < nb) || (goes_through(x, y) && !goes_through(y, x));
            if !follows {
                continue;
            }
            // b becomes a consequence; whatever followed from b follows from a.
            let root = results[a].check.clone();
            results[b].caused_by = Some(root.clone());
            let check = results[b].check.clone();
            let moved = std::mem::take(&mut results[b].also_breaks);
            for c in results.iter_mut().filter(|c| moved.contains(&c.check)) {
                c.caused_by = Some(root.clone());
            }
            results[a].also_breaks.push(check);
            results[a].also_breaks.extend(moved);
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violated(check: &str, level: &str, at: u32, steps: serde_json::Value, fix: Option<u32>) -> CheckOutcome {
        let mut v = serde_json::json!({
            "check": check, "verdict": "violated", "level": level,
            "file": "app.yaml", "line": at, "column": 3, "steps": steps,
        });
        if let Some(line) = fix {
            v["fix"] = serde_json::json!({"summary": "set x", "verifiedOn": "3 nodes", "file": "app.yaml", "line": line, "column": 3});
        }
        serde_json::from_value(v).unwrap()
    }

    fn step(actor: &str, message: &str, line: u32) -> serde_json::Value {
        serde_json::json!({"actor": actor, "message": message, "file": "app.yaml", "line": line, "column": 3})
    }

    /// An unschedulable pod is not the consequence of the oscillation check located at the
    /// `maxReplicas` its scale-up step passed: only the other's decisive step links.
    #[test]
    fn a_step_at_a_field_is_not_a_cause_but_the_decisive_step_is() {
        let mut results = vec![
            violated(
                "pods-schedulable",
                "error",
                36,
                serde_json::json!([
                    step("horizontal-pod-autoscaler", "scales from 3 to 9", 11),
                    step("scheduler", "no feasible node for web-9: spread", 36),
                    step("check", "the cluster has settled with a pod that no node can take", 0),
                ]),
                None,
            ),
            violated(
                "no-replica-oscillation",
                "warning",
                11,
                serde_json::json!([step("check", "rose to 9 and fell back", 11)]),
                None,
            ),
            violated(
                "rollout-completes",
                "error",
                16,
                serde_json::json!([
                    step("scheduler", "no feasible node for web-4: spread", 36),
                    step("check", "the rollout is stuck", 16),
                ]),
                None,
            ),
        ];
        link_root_causes(&mut results);
        assert_eq!(results[0].caused_by, None);
        assert_eq!(results[1].caused_by, None, "a warning of its own");
        assert_eq!(results[2].caused_by.as_deref(), Some("pods-schedulable"));
        assert_eq!(results[0].also_breaks, ["rollout-completes"]);
    }

    /// Two violations at one field, or with one verified fix, are one problem: the error, else
    /// the first, is its root.
    #[test]
    fn one_field_or_one_fix_is_one_problem() {
        let mut results = vec![
            violated("no-replica-oscillation", "warning", 9, serde_json::json!([]), Some(17)),
            violated("min-replicas-available", "error", 6, serde_json::json!([]), Some(17)),
            violated("no-node-overload", "error", 17, serde_json::json!([]), Some(17)),
            violated("no-eviction-loop", "error", 6, serde_json::json!([]), None),
        ];
        link_root_causes(&mut results);
        assert_eq!(results[1].caused_by, None);
        for i in [0, 2, 3] {
            assert_eq!(results[i].caused_by.as_deref(), Some("min-replicas-available"), "{i}");
        }
        assert_eq!(
            results[1].also_breaks,
            ["no-node-overload", "no-eviction-loop", "no-replica-oscillation"]
        );
    }
}

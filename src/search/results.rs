//! The result cache: a unit's verdicts kept under a hash of everything they depend on (its
//! models and inputs, the engine and its options), so an unchanged unit is not searched again.

use super::*;

/// A unit's accepted results as the result cache keeps them (checks by name).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct CachedPoint {
    group: Vec<String>,
    verdicts: Vec<(String, PointVerdict)>,
    states: u64,
}

/// Bumped when what the result cache stores changes meaning (2: violations of runs that
/// reached a held `maxReplicas` are inconclusive).
pub(super) const RESULT_FORMAT: u32 = 2;

/// The result cache key of a unit: everything its verdicts depend on (the models, which hold
/// the templates and what the IR fixes; every topology's input; the checks; the search and
/// engine options; the kivi-lint version).
pub(super) fn result_key(plan: &UnitPlan, options: &Options, engine: &Engine) -> String {
    let mut h = blake3::Hasher::new();
    h.update(
        format!(
            "{RESULT_FORMAT}\n{}\n{}\n{:?}\n{:?}\n{}\n{:?}\n{}\n",
            env!("CARGO_PKG_VERSION"),
            engine.salt(),
            engine.options(),
            plan.checks,
            options.all,
            options.spared,
            options.verdicts_only
        )
        .as_bytes(),
    );
    for model in &plan.models {
        h.update(model.as_bytes());
        h.update(b"\0");
    }
    for point in &plan.points {
        h.update(format!("{}:{:?}\n", point.model, point.topology).as_bytes());
        h.update(model::input(&point.ir, &plan.shape, &plan.checks).as_bytes());
        h.update(b"\0");
    }
    h.update(format!("{:?}{:?}{:?}", plan.failure, plan.bounded, plan.bound).as_bytes());
    h.finalize().to_hex()[..32].to_string()
}

/// Check names from the cache back to the registry's.
pub(super) fn known_check(name: &str) -> Option<CheckId> {
    crate::checks::CHECKS.iter().map(|c| c.id).find(|c| c.as_str() == name)
}

pub(super) fn load_results(dir: &std::path::Path, key: &str, points: usize) -> Option<Vec<Option<PointResult>>> {
    let path = dir.join(format!("{key}.json"));
    let text = std::fs::read_to_string(&path).ok()?;
    crate::cache::touch(&path);
    let cached: Vec<Option<CachedPoint>> = serde_json::from_str(&text).ok()?;
    if cached.len() != points {
        return None;
    }
    cached
        .into_iter()
        .map(|p| match p {
            None => Some(None),
            Some(p) => Some(Some(PointResult {
                group: p.group.iter().map(|c| known_check(c)).collect::<Option<Vec<_>>>()?,
                verdicts: p
                    .verdicts
                    .into_iter()
                    .map(|(c, v)| known_check(&c).map(|c| (c, v)))
                    .collect::<Option<Vec<_>>>()?,
                timings: engine::Timings::default(),
                states: p.states,
            })),
        })
        .collect()
}

/// Keep a unit's results, unless a run was cancelled or failed, or the search did not finish.
pub(super) fn store_results(
    dir: &std::path::Path,
    key: &str,
    plan: &UnitPlan,
    results: &[Option<PointResult>],
    all: bool,
) {
    let w = walk(plan, results, all);
    let finished = w.next >= plan.points.len() || w.open.is_empty();
    // A memory or depth limit reached is what the same run reaches again (the limits are in
    // the key); anything else a later run retries (`Inconclusive::is_transient`).
    let transient = results.iter().flatten().any(|r| {
        r.verdicts
            .iter()
            .any(|(_, v)| matches!(v, PointVerdict::Inconclusive(why) if why.is_transient()))
    });
    if !finished || transient || plan.failure.is_some() {
        return;
    }
    let cached: Vec<Option<CachedPoint>> = results
        .iter()
        .enumerate()
        .map(|(t, r)| {
            r.as_ref().filter(|_| t < w.next).map(|r| CachedPoint {
                group: r.group.iter().map(|c| c.to_string()).collect(),
                verdicts: r.verdicts.iter().map(|(c, v)| (c.to_string(), v.clone())).collect(),
                states: r.states,
            })
        })
        .collect();
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let tmp = tempfile::NamedTempFile::new_in(dir)?;
        serde_json::to_writer(&tmp, &cached).map_err(std::io::Error::other)?;
        tmp.persist(dir.join(format!("{key}.json"))).map_err(|e| e.error)?;
        Ok(())
    };
    if let Err(e) = write() {
        tracing::warn!("cannot write the result cache in {}: {e}", dir.display());
    }
}

//! PR mode (`--changed-since <git-ref>`): the same scan of the base revision, which units
//! changed since, and which violations are new.
//!
//! A unit is unchanged when the base revision has a unit in the same scope with the same
//! fingerprint: the same models and topology inputs, so the same verdicts. That covers every
//! way a unit can change: its own objects, an object that joins it through a selector, a node
//! pool or any config it reads. A violation is existing when the base revision's version of the
//! unit violates the same check at the same object.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::analysis::{self, Analysis, Request};
use crate::discover::revision::{self, Checkout};
use crate::engine::Engine;
use crate::findings::UnitResult;
use crate::findings::Verdict;
use crate::search;

/// The id of the base revision's first file: apart from the working tree's, so that a model
/// of base objects with some of the pull request's versions in it locates each step in the
/// right file.
const BASE_FILE_IDS: u32 = 1 << 30;

/// The base revision, scanned like the working tree.
pub struct Base {
    pub revision: String,
    pub analysis: Analysis,
    checkout: Checkout,
}

/// Check out `git_ref` of the repository holding the scanned paths and analyse the same paths
/// there. Its diagnostics are not reported: only the working tree's are.
pub fn analyze_base(request: &Request, git_ref: &str) -> Result<Base, String> {
    if request.paths.iter().any(|p| p.as_os_str() == "-") {
        return Err("PR mode cannot compare manifests read from stdin".into());
    }
    let first = request.paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let dir = if first.is_dir() {
        first.clone()
    } else {
        first.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let checkout = revision::checkout_repository(&dir, git_ref)?;
    let outside = |p: &Path| format!("{} is outside the git repository of {}", p.display(), dir.display());
    let paths = request
        .paths
        .iter()
        .map(|p| checkout.map(p).ok_or_else(|| outside(p)))
        .collect::<Result<Vec<_>, _>>()?;
    // The working tree's config file, at the revision when it is in the repository (a config
    // outside the repository is the same for both).
    let config = request
        .config
        .clone()
        .or_else(|| crate::config::Config::discover(&first))
        .map(|c| checkout.map(&c).unwrap_or(c));
    tracing::info!("scanning {git_ref} checked out in {}", checkout.root.display());
    let analysis = analysis::analyze(&Request {
        paths,
        config,
        stdin_filename: None,
        render: request.render,
        jobs: request.jobs,
        allow_outside_repository: request.allow_outside_repository,
        // The base may have had nothing yet.
        allow_empty: true,
        // The checkout has no `.git`: its top is the repository.
        repository: Some(checkout.root.clone()),
        file_ids_from: BASE_FILE_IDS,
        strict: request.strict,
        network: request.network.clone(),
        // The same running cluster: the base's changes land on it too.
        cluster_state: request.cluster_state.clone(),
    });
    let errors = analysis.diagnostics.count(crate::diagnostics::Severity::Error);
    if errors > 0 {
        tracing::info!("{git_ref} has {errors} input errors; its units may differ for that reason alone");
    }
    Ok(Base {
        revision: git_ref.to_string(),
        analysis,
        checkout,
    })
}

/// A path of the working tree or of the base checkout, relative to the repository's top.
fn repository_path(path: &Path, top: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let canonical = absolute.canonicalize().unwrap_or(absolute);
    canonical
        .strip_prefix(top)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// Each unit's scope as a path inside the repository, the same on both revisions.
fn scope_keys(analysis: &Analysis, top: &Path) -> Vec<String> {
    analysis
        .units
        .iter()
        .map(|u| {
            analysis
                .scopes
                .get(u.scope)
                .map_or_else(|| "<config>".to_string(), |s| repository_path(&s.path, top))
        })
        .collect()
}

/// Each unit as the same on both revisions: its scope, its members, and what its verdicts
/// depend on. The members matter too: two units can have the same models.
fn unit_keys(
    analysis: &Analysis,
    top: &Path,
    plans: &[search::UnitPlan],
    engine: &Engine,
    options: &search::Options,
) -> Vec<String> {
    // A unit's plans (its own, and its drain-alone one) in order, their fingerprints joined.
    let mut fingerprints = vec![String::new(); analysis.units.len()];
    for p in plans {
        let joined = &mut fingerprints[p.unit()];
        if !joined.is_empty() {
            joined.push('+');
        }
        joined.push_str(&p.fingerprint(options, engine));
    }
    scope_keys(analysis, top)
        .into_iter()
        .zip(fingerprints)
        .zip(&analysis.units)
        .map(|((scope, fingerprint), unit)| {
            let mut members: Vec<String> = unit
                .members
                .iter()
                .map(|m| analysis.objects[m.object].id.to_string())
                .collect();
            members.sort();
            format!("{scope}\n{}\n{fingerprint}", members.join("\n"))
        })
        .collect()
}

/// Units of the working tree the base revision has too: same scope, members and fingerprint.
/// `current_plans` and `base_plans` plan every unit of their analysis, in order.
pub fn unchanged_units(
    current: &Analysis,
    current_plans: &[search::UnitPlan],
    base: &Base,
    base_plans: &[search::UnitPlan],
    engine: &Engine,
    options: &search::Options,
) -> BTreeSet<usize> {
    let before: BTreeSet<String> = unit_keys(&base.analysis, &base.checkout.root, base_plans, engine, options)
        .into_iter()
        .collect();
    unit_keys(current, &base.checkout.toplevel, current_plans, engine, options)
        .iter()
        .enumerate()
        .filter(|(_, key)| before.contains(*key))
        .map(|(i, _)| i)
        .collect()
}

/// What identifies a violation across revisions: the scope, the check, and the member object
/// the counterexample points at (else the unit's workloads).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ViolationKey {
    scope: String,
    check: crate::checks::CheckId,
    what: String,
}

/// A violation of `results`: which result and check, and the object it points at.
#[derive(Clone, Copy)]
struct Found {
    result: usize,
    check: usize,
    object: Option<usize>,
}

fn violations(
    objects: &[crate::manifest::Object],
    units: &[crate::units::Unit],
    scopes: &[String],
    results: &[UnitResult],
) -> BTreeMap<ViolationKey, Found> {
    let mut out = BTreeMap::new();
    for (r, result) in results.iter().enumerate() {
        let unit = &units[result.unit];
        for (c, check) in result.results.iter().enumerate() {
            let Verdict::Violated { location, .. } = &check.verdict else {
                continue;
            };
            let located = location.and_then(|at| {
                unit.members.iter().map(|m| m.object).find(|&o| {
                    let span = objects[o].span;
                    span.file == at.file && span.start <= at.start && at.start <= span.end
                })
            });
            let what = match located {
                Some(o) => objects[o].id.to_string(),
                None => {
                    let mut workloads: Vec<String> = unit.workloads().map(|w| objects[w].id.to_string()).collect();
                    workloads.sort();
                    workloads.join(",")
                }
            };
            let key = ViolationKey {
                scope: scopes[result.unit].clone(),
                check: check.check,
                what,
            };
            out.insert(
                key,
                Found {
                    result: r,
                    check: c,
                    object: located,
                },
            );
        }
    }
    out
}

/// An object as the pull request compares it: everything kivi-lint reads of it, without the
/// lines it is on.
fn contents(object: &crate::manifest::Object) -> String {
    serde_json::to_string(object).unwrap_or_default()
}

/// How many times a base violation at an object the pull request edited is searched past.
/// Each round takes the pull request's version of at least one more object.
const MAX_ROUNDS: usize = 4;

/// Mark each violation of `results` as new or existing: verify the base revision's units that
/// share an object with a violating unit (usually from the result cache), and compare.
///
/// A model checker reports the first violation of a check, so a base revision with two (two
/// budgets that each block a drain) shows one. When the pull request fixes that one, the other
/// is not new. So when the base violates the same check at an object the pull request edited,
/// the base unit is verified again with the pull request's version of that object, until the
/// violation is found there, or the base holds, or nothing more is edited. Units keep their
/// members and cluster: the pull request's version only changes what the object says.
pub fn mark_existing(
    current: &Analysis,
    results: &mut [UnitResult],
    base: &Base,
    base_plans: Vec<search::UnitPlan>,
    verifier: &search::Verifier<'_>,
) {
    let scopes = scope_keys(current, &base.checkout.toplevel);
    let found = violations(&current.objects, &current.units, &scopes, results);
    if found.is_empty() {
        return;
    }
    // Objects of violating units, by scope.
    let violating: BTreeSet<(String, String)> = found
        .values()
        .flat_map(|f| {
            let unit = &current.units[results[f.result].unit];
            let scope = scopes[results[f.result].unit].clone();
            unit.members
                .iter()
                .map(move |m| (scope.clone(), current.objects[m.object].id.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    let base_scopes = scope_keys(&base.analysis, &base.checkout.root);
    let related: Vec<usize> = base
        .analysis
        .units
        .iter()
        .enumerate()
        .filter(|(i, u)| {
            u.members
                .iter()
                .any(|m| violating.contains(&(base_scopes[*i].clone(), base.analysis.objects[m.object].id.to_string())))
        })
        .map(|(i, _)| i)
        .collect();
    tracing::info!(
        "verifying {} units of {} to tell new violations from existing ones",
        related.len(),
        base.revision
    );
    let plans = base_plans.into_iter().filter(|p| related.contains(&p.unit())).collect();
    let subject = search::Subject::of(&base.analysis);
    let mut before = crate::findings::verify_plans(verifier, subject, plans);
    let mut existing = violations(&base.analysis.objects, &base.analysis.units, &base_scopes, &before);

    // The working tree's objects by scope and id, to find the ones the pull request edited.
    let mut edited_versions: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, o) in current.objects.iter().enumerate() {
        if !o.shadowed {
            let scope = current.scopes.get(o.scope).map_or_else(
                || "<config>".to_string(),
                |s| repository_path(&s.path, &base.checkout.toplevel),
            );
            edited_versions.insert((scope, o.id.to_string()), i);
        }
    }
    let mut objects = base.analysis.objects.clone();
    let mut taken: BTreeSet<usize> = BTreeSet::new();
    let mut last = existing.clone();
    for _ in 0..MAX_ROUNDS {
        let pending: Vec<&ViolationKey> = found.keys().filter(|k| !existing.contains_key(*k)).collect();
        let mut again: BTreeSet<usize> = BTreeSet::new();
        for (key, f) in &last {
            let Some(object) = f.object else { continue };
            if taken.contains(&object) || !pending.iter().any(|p| p.scope == key.scope && p.check == key.check) {
                continue;
            }
            let scope = &base_scopes[before[f.result].unit];
            let Some(&i) = edited_versions.get(&(scope.clone(), objects[object].id.to_string())) else {
                continue;
            };
            if contents(&current.objects[i]) == contents(&objects[object]) {
                continue;
            }
            let scope_index = objects[object].scope;
            objects[object] = current.objects[i].clone();
            objects[object].scope = scope_index;
            taken.insert(object);
            again.insert(before[f.result].unit);
        }
        if again.is_empty() || verifier.cancelled() {
            break;
        }
        tracing::info!(
            "verifying {} units of {} again with the pull request's version of {} objects",
            again.len(),
            base.revision,
            taken.len()
        );
        let subject = search::Subject {
            objects: &objects,
            ..search::Subject::of(&base.analysis)
        };
        let units: Vec<usize> = again.into_iter().collect();
        before = crate::findings::verify(verifier, subject, &units);
        last = violations(&objects, &base.analysis.units, &base_scopes, &before);
        existing.extend(last.iter().map(|(k, f)| (k.clone(), *f)));
    }
    for (key, f) in found {
        results[f.result].results[f.check].baseline = Some(existing.contains_key(&key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_paths_are_relative_to_the_top() {
        let top = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(repository_path(Path::new("src"), &top), "src");
        assert_eq!(repository_path(Path::new("/elsewhere/x"), &top), "/elsewhere/x");
    }
}

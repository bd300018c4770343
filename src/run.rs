//! The scan after the arguments: cancellation and the `--timeout` watchdog, analysis, the
//! selection of units (PR mode, sharding), verification, the marking of violations the base
//! revision has, and fixes. The command line turns flags into a [`Scan`] and writes what
//! comes back; nothing here parses flags or prints reports.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::analysis::{self, Analysis};
use crate::checks::Level;
use crate::findings::UnitResult;
use crate::report::document::{Context, NotVerified, Shard};
use crate::search;

/// What to verify and how, with every flag already resolved.
#[derive(Clone, Debug)]
pub struct Scan {
    pub request: analysis::Request,
    pub engine: crate::engine::Options,
    /// Compiled models and verdicts between runs (`None`: no cache).
    pub cache_dir: Option<PathBuf>,
    pub emit_models: Option<PathBuf>,
    pub scale: search::Scale,
    pub all: bool,
    /// PR mode: verify only the units that changed since this revision.
    pub changed_since: Option<String>,
    pub all_findings: bool,
    pub no_inline_suppressions: bool,
    pub shard: Option<Shard>,
    /// The lowest level fixes are searched for (`None`: no fixes).
    pub fixes_for: Option<Level>,
}

/// Why a scan ended without results to report.
#[derive(Debug)]
pub enum Stopped {
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// A problem with the run itself (no spin, a base revision that cannot be read), said in
    /// one line.
    Error(String),
}

/// What a verified scan reports.
pub struct Verified {
    pub results: Vec<UnitResult>,
    pub context: Context,
    /// The `--timeout` that stopped the run, if it did.
    pub timed_out: Option<Duration>,
    /// Why nothing could be verified (spin or a C compiler missing), if so.
    pub unverifiable: Option<String>,
}

/// One scan's cancellation: Ctrl-C, SIGTERM or SIGHUP stop every child and start none; the
/// `--timeout` watchdog does the same at the deadline, but what was decided is still reported.
pub struct Session {
    cancel: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
    timeout: Option<Duration>,
    /// Dropped when the scan is done, which stops the watchdog.
    _finished: mpsc::Sender<()>,
}

impl Session {
    /// Install the signal handler and, with a `timeout` counted from `started`, the watchdog.
    pub fn start(started: Instant, timeout: Option<Duration>) -> Session {
        let stale = crate::process::remove_stale_temporary_dirs();
        if stale > 0 {
            tracing::info!("removed {stale} temporary directories that killed runs left");
        }
        let cancel = Arc::new(AtomicBool::new(false));
        {
            let cancel = Arc::clone(&cancel);
            // Return through the normal path, so that temporary and build directories are
            // removed.
            let _ = ctrlc::set_handler(move || {
                cancel.store(true, Ordering::Relaxed);
                crate::process::cancel_all("the run was interrupted");
            });
        }
        let timed_out = Arc::new(AtomicBool::new(false));
        let (finished, watchdog) = mpsc::channel::<()>();
        if let Some(limit) = timeout {
            let left = limit.saturating_sub(started.elapsed());
            let cancel = Arc::clone(&cancel);
            let timed_out = Arc::clone(&timed_out);
            std::thread::spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = watchdog.recv_timeout(left) {
                    timed_out.store(true, Ordering::Relaxed);
                    cancel.store(true, Ordering::Relaxed);
                    crate::process::cancel_all(&format!("the scan's --timeout of {} s was reached", limit.as_secs()));
                }
            });
        }
        Session {
            cancel,
            timed_out,
            timeout,
            _finished: finished,
        }
    }

    /// Interrupted, as opposed to stopped by the watchdog (whose results are still reported).
    fn interrupted(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) && !self.timed_out.load(Ordering::Relaxed)
    }

    /// Discover, read and group everything the request names.
    pub fn analyze(&self, request: &analysis::Request) -> Result<Analysis, Stopped> {
        let analysis = analysis::analyze(request);
        if self.interrupted() {
            return Err(Stopped::Interrupted);
        }
        Ok(analysis)
    }

    /// Verify the units `scan` selects, then mark what the base revision already has and look
    /// for fixes. `progress` hears of every finished run and of each later phase.
    pub fn verify(
        &self,
        analysis: &Analysis,
        scan: &Scan,
        progress: &crate::progress::Reporter,
    ) -> Result<Verified, Stopped> {
        if let Some(why) = &analysis.cluster_unread {
            return Ok(unverifiable(analysis, scan, why));
        }
        let tools = match crate::engine::Tools::find() {
            Ok(tools) => tools,
            // Without spin or a C compiler nothing can be verified: every check says why (an
            // engine error, exit 2) in every report asked for, rather than no report at all.
            Err(e) => return Ok(unverifiable(analysis, scan, &e.to_string())),
        };
        let parts = Parts::new(tools, scan)?;
        let base = match &scan.changed_since {
            None => None,
            Some(git_ref) => Some(
                crate::changes::analyze_base(&scan.request, git_ref)
                    .map_err(|e| Stopped::Error(format!("--changed-since {git_ref}: {e}")))?,
            ),
        };
        let mut context = Context {
            shard: scan.shard,
            changed_since: scan.changed_since.clone(),
            ..Default::default()
        };
        let selection = select(analysis, scan, base.as_ref(), &parts, &mut context);
        let on_progress = |p: &search::Progress| progress.update(p);
        let verifier = search::Verifier {
            generator: &parts.generator,
            engine: &parts.engine,
            options: &parts.options,
            cancel: &self.cancel,
            progress: &on_progress,
        };
        let subject = search::Subject::of(analysis);
        let mut results = crate::findings::verify_plans_or_fewer(&verifier, subject, selection.plans);
        if let Some(base) = &base {
            crate::changes::mark_existing(analysis, &mut results, base, selection.base_plans, &verifier);
        }
        if let Some(level) = scan.fixes_for {
            crate::findings::fixes::suggest(analysis, &mut results, level, &verifier, &|what: &str| {
                progress.phase(what)
            });
        }
        let timed_out = self
            .timed_out
            .load(Ordering::Relaxed)
            .then(|| self.timeout.unwrap_or_default());
        if let Some(limit) = timed_out {
            crate::findings::mark_timed_out(&mut results, limit);
        } else if self.interrupted() {
            return Err(Stopped::Interrupted);
        }
        context.judgements = judge(analysis, scan, &results);
        Ok(Verified {
            results,
            context,
            timed_out,
            unverifiable: None,
        })
    }
}

/// What the verifier is made of: the model generator, the engine with its cache, and the
/// search's options.
struct Parts {
    generator: crate::model::Generator,
    engine: crate::engine::Engine,
    options: search::Options,
}

impl Parts {
    fn new(tools: crate::engine::Tools, scan: &Scan) -> Result<Parts, Stopped> {
        let cache_dir = scan
            .cache_dir
            .as_ref()
            .filter(|dir| match crate::cache::committed(dir) {
                Some(why) => {
                    tracing::warn!("{why}; running without a cache");
                    false
                }
                None => true,
            });
        if let Some(dir) = cache_dir {
            let removed = crate::cache::prune(dir, crate::cache::UNUSED_FOR);
            if removed > 0 {
                tracing::info!("removed {removed} cache entries unused for 30 days");
            }
        }
        let generator = crate::model::Generator::new().map_err(|e| Stopped::Error(format!("{e:#}")))?;
        let options = search::Options {
            emit_models: scan.emit_models.clone(),
            result_cache: cache_dir.map(|d| d.join("results")),
            jobs: scan.request.jobs,
            scale: scan.scale,
            all: scan.all,
            spared: Vec::new(),
            verdicts_only: false,
            shape_floor: None,
            monitor: None,
        };
        let engine = match crate::engine::Engine::new(tools, scan.engine.clone(), cache_dir.map(PathBuf::as_path)) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("cache directory unusable ({e}); running without a cache");
                let tools = crate::engine::Tools::find().map_err(|e| Stopped::Error(e.to_string()))?;
                crate::engine::Engine::new(tools, scan.engine.clone(), None)
                    .map_err(|e| Stopped::Error(e.to_string()))?
            }
        };
        Ok(Parts {
            generator,
            engine,
            options,
        })
    }
}

/// The searches of the units a scan verifies, and in PR mode the base revision's.
struct Selection {
    plans: Vec<search::UnitPlan>,
    base_plans: Vec<search::UnitPlan>,
}

/// The units to verify: in PR mode those that changed since the base revision, in a shard its
/// share; `context` hears of the others and why.
fn select(
    analysis: &Analysis,
    scan: &Scan,
    base: Option<&crate::changes::Base>,
    parts: &Parts,
    context: &mut Context,
) -> Selection {
    let mut selected: Vec<usize> = (0..analysis.units.len()).collect();
    // PR mode plans every unit of both revisions once: for the fingerprints that tell the
    // changed units, then for the searches.
    let mut plans = None;
    let mut base_plans = Vec::new();
    if let Some(base) = base {
        let current = search::plan(
            search::Subject::of(analysis),
            &selected,
            &parts.generator,
            &parts.options,
        );
        let before: Vec<usize> = (0..base.analysis.units.len()).collect();
        base_plans = search::plan(
            search::Subject::of(&base.analysis),
            &before,
            &parts.generator,
            &parts.options,
        );
        let unchanged =
            crate::changes::unchanged_units(analysis, &current, base, &base_plans, &parts.engine, &parts.options);
        plans = Some(current);
        tracing::info!(
            "{} of {} units unchanged since {}",
            unchanged.len(),
            selected.len(),
            base.revision
        );
        selected.retain(|u| !unchanged.contains(u));
        context
            .not_verified
            .extend(unchanged.into_iter().map(|u| (u, NotVerified::Unchanged)));
    }
    selected = in_shard(selected, scan.shard, context);
    let plans = match plans {
        // A unit has a plan per search of its fault model, consecutive, in unit order.
        Some(all) => all.into_iter().filter(|p| selected.contains(&p.unit())).collect(),
        None => search::plan(
            search::Subject::of(analysis),
            &selected,
            &parts.generator,
            &parts.options,
        ),
    };
    Selection { plans, base_plans }
}

/// The units of `selected` in `shard` (all without one); `context` hears of the others.
fn in_shard(selected: Vec<usize>, shard: Option<Shard>, context: &mut Context) -> Vec<usize> {
    let Some(shard) = shard else {
        return selected;
    };
    let mine = shard_units(&selected, shard);
    context.not_verified.extend(
        selected
            .iter()
            .filter(|u| !mine.contains(u))
            .map(|&u| (u, NotVerified::OtherShard)),
    );
    mine
}

/// What the report shows of each result: its level, suppression and PR-mode hiding.
fn judge(
    analysis: &Analysis,
    scan: &Scan,
    results: &[UnitResult],
) -> std::collections::BTreeMap<(usize, usize), crate::findings::Judgement> {
    let policy = crate::findings::Policy {
        today: Some(crate::config::Date::today()),
        inline_suppressions: !scan.no_inline_suppressions,
        all_findings: scan.all_findings,
    };
    results
        .iter()
        .flat_map(|r| {
            let policy = &policy;
            r.results
                .iter()
                .enumerate()
                .map(move |(i, c)| ((r.unit, i), policy.judge(analysis, r.unit, c)))
        })
        .collect()
}

/// What a scan that cannot run the model checker reports: each check of each unit it would
/// have verified is inconclusive with the engine's error.
fn unverifiable(analysis: &Analysis, scan: &Scan, why: &str) -> Verified {
    let mut context = Context {
        shard: scan.shard,
        changed_since: scan.changed_since.clone(),
        ..Default::default()
    };
    let selected = in_shard((0..analysis.units.len()).collect(), scan.shard, &mut context);
    let results: Vec<UnitResult> = selected
        .iter()
        .map(|&u| UnitResult {
            unit: u,
            results: analysis.units[u]
                .checks
                .iter()
                .map(|&check| crate::findings::CheckResult {
                    check,
                    verdict: crate::findings::Verdict::Inconclusive(crate::engine::Inconclusive::EngineError(
                        why.to_string(),
                    )),
                    topology: None,
                    held_up_to: None,
                    held_topologies: 0,
                    baseline: None,
                    fix: None,
                    workload: None,
                })
                .collect(),
            search: search::SearchSummary {
                planned: 0,
                explored: 0,
                verified_up_to: None,
                bound: String::new(),
                fault_model: String::new(),
            },
            effort: Default::default(),
            shape: Default::default(),
            topologies: Vec::new(),
            unmodelled_events: crate::search::unmodelled_events(&analysis.config, &analysis.environment),
            more: Vec::new(),
        })
        .collect();
    context.judgements = judge(analysis, scan, &results);
    Verified {
        results,
        context,
        timed_out: None,
        unverifiable: Some(why.to_string()),
    }
}

/// The units of shard `shard` among `units`: every n-th, so shards get as many units as
/// possible alike, and the slice depends only on the units.
pub fn shard_units(units: &[usize], shard: Shard) -> Vec<usize> {
    units
        .iter()
        .copied()
        .skip(shard.index - 1)
        .step_by(shard.count)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_units_evenly() {
        let units: Vec<usize> = (0..11).collect();
        for count in 1..=12 {
            let mut seen = Vec::new();
            for index in 1..=count {
                let mine = shard_units(&units, Shard { index, count });
                assert!(mine.len() <= units.len().div_ceil(count));
                assert!(mine.len() >= units.len() / count);
                seen.extend(mine);
            }
            seen.sort();
            assert_eq!(seen, units, "{count} shards");
        }
    }
}

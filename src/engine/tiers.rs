//! Which build a model gets: the quick one (tcc, or cc -O0) first, the optimised one (cc -O2)
//! once the time its runs take pays for the compile.

use super::*;

impl Engine {
    /// The build a verification starts with.
    pub(super) fn first_build(&self, model: &str) -> Build {
        // Most models are small: compile fast (tcc, or -O0: a tenth of -O2's time) and run
        // briefly; only a model that needs longer gets the optimised build and the full time
        // limit.
        self.tier(
            model,
            Build {
                optimised: self.always_optimised(),
                ..self.first_quick_build()
            },
        )
    }

    /// Whether every build is optimised: a run limit no longer than the quick run's leaves no
    /// time for a quick build to prove itself.
    pub(super) fn always_optimised(&self) -> bool {
        self.options.time_limit <= QUICK_RUN
    }

    /// The key of `build`'s optimised twin, which `tier` weighs against the quick build.
    pub(super) fn optimised_key(&self, model: &str, build: Build) -> String {
        self.key(
            model,
            Build {
                optimised: true,
                ..build
            },
        )
    }

    /// `build`, or its optimised twin when that is the better buy: built already (this run or
    /// the cache), or worth its compile. With the runs ahead of the model known (`expect_runs`),
    /// it is worth it when those runs at the quick runs' average so far would take longer
    /// than `OPTIMISED_PAYS_AFTER` (judged after `QUICK_SAMPLE` of quick runs): a unit of 40
    /// small topologies never compiles it, one of 200 does after its first second. Without,
    /// once the quick build has run for `QUICK_BUDGET` in all. The thread that finds it worth
    /// it compiles it; the others keep the quick build until it is there, so no core waits for
    /// the compiler (two that find it at once: one waits for the other).
    pub(super) fn tier(&self, model: &str, build: Build) -> Build {
        if build.optimised {
            return build;
        }
        let optimised = Build {
            optimised: true,
            ..build
        };
        if self.is_built(model, optimised) {
            return optimised;
        }
        let key = self.optimised_key(model, build);
        let (spent, runs) = self
            .quick_spent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied()
            .unwrap_or_default();
        let expected = self
            .expected_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        let worth_it = match expected {
            Some(expected) if runs > 0 => {
                let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
                let ahead = (spent / count(runs)).saturating_mul(count(expected.saturating_sub(runs)));
                spent >= QUICK_SAMPLE && ahead >= OPTIMISED_PAYS_AFTER
            }
            _ => spent >= QUICK_BUDGET,
        };
        if !worth_it {
            return build;
        }
        // Being built by another thread: keep the quick build until it is there.
        let building = self
            .builds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .is_some_and(|cell| cell.get().is_none());
        if building { build } else { optimised }
    }

    /// The caller will verify `model` about `runs` times more (its topologies): `tier`
    /// weighs the -O2 compile against them. Said to the liveness twin too.
    pub fn expect_runs(&self, model: &str, runs: usize) {
        let key = self.optimised_key(model, self.first_quick_build());
        *self
            .expected_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default() += runs;
        if let Some(liveness) = &self.liveness {
            liveness.expect_runs(model, runs);
        }
    }

    /// The quick build a verification would start with (before `tier`).
    pub(super) fn first_quick_build(&self) -> Build {
        Build {
            vector: self.options.vector_bytes,
            optimised: false,
            reach: false,
            random: false,
        }
    }

    /// Count `took` against the quick build `build` of `model` (see `tier`).
    pub(super) fn spend(&self, model: &str, build: Build, took: Duration) {
        if build.optimised {
            return;
        }
        let key = self.optimised_key(model, build);
        let mut spent = self.quick_spent.lock().unwrap_or_else(|e| e.into_inner());
        let entry = spent.entry(key).or_default();
        entry.0 += took;
        entry.1 += 1;
    }
}

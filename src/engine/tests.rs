use super::*;
use pan::hash_bits;

fn tools() -> Tools {
    Tools::find().expect("spin and a C compiler are installed (scripts/setup)")
}

fn fast() -> Options {
    Options {
        time_limit: Duration::from_secs(30),
        memory_mb: 256,
        ..Options::default()
    }
}

/// Three counters, `a` and `b` wrapping: depth-first search in the written order explores
/// every (a, b) before it raises `c` once, so `c` reaches 200 only after some 13 million
/// states, far past the memory and depth bounds. A random order raises `c` on every third
/// step.
fn counters(violation: bool) -> String {
    format!(
        "byte a, b, c;\nactive proctype P() {{\n  do\n  :: a = a + 1\n  :: b = b + 1\n  :: c < 200 -> c++; printf(\"KIVI:7:%d\\n\", c)\n  :: c == 200 -> {}\n  od\n}}\n",
        if violation { "assert(false)" } else { "skip" }
    )
}

#[test]
fn random_runs_find_what_the_bounded_search_cannot_reach() {
    let options = Options {
        memory_mb: 64,
        random_runs: 2,
        ..fast()
    };
    let out = verify(&counters(true), &tools(), &options).unwrap();
    let Verdict::Violated { trace, .. } = out.verdict else {
        panic!("{:?}", out.verdict)
    };
    // The replayed trace is the random run's: c counted up to 200.
    assert_eq!(trace.last().map(|e| e.values.clone()), Some(vec![7, 200]));
    // Without random runs the same search is only inconclusive.
    let exhaustive = verify(
        &counters(true),
        &tools(),
        &Options {
            random_runs: 0,
            ..options.clone()
        },
    )
    .unwrap();
    assert!(
        matches!(
            exhaustive.verdict,
            Verdict::Inconclusive(Inconclusive::MemoryLimit(_) | Inconclusive::DepthLimit(_))
        ),
        "{:?}",
        exhaustive.verdict
    );
    // Nothing to find: still inconclusive, never verified, and the reason says both.
    let out = verify(&counters(false), &tools(), &options).unwrap();
    let Verdict::Inconclusive(why @ Inconclusive::Sampled { runs: 2, .. }) = out.verdict else {
        panic!("{:?}", out.verdict)
    };
    assert!(
        why.to_string()
            .ends_with("; no violation in 2 seeded random runs (not a proof)"),
        "{why}"
    );
    assert!(
        !why.is_transient() || matches!(&why, Inconclusive::Sampled { exhaustive, .. } if exhaustive.is_transient())
    );
}

#[test]
fn violation_with_replayed_trace() {
    let model = "byte x;\nactive proctype P() {\n  do\n  :: x < 5 -> x++; printf(\"KIVI:1:%d\\n\", x)\n  :: x >= 5 -> break\n  od;\n  assert(x != 5)\n}\n";
    let out = verify(model, &tools(), &fast()).unwrap();
    let Verdict::Violated { violation, trace } = out.verdict else {
        panic!("{:?}", out.verdict)
    };
    assert_eq!(violation, PanError::Assertion("(x!=5)".into()));
    assert_eq!(
        trace.iter().map(|e| e.values.clone()).collect::<Vec<_>>(),
        (1..=5).map(|i| vec![1, i]).collect::<Vec<_>>()
    );
    assert!(out.statistics.states_stored > 0);
}

#[test]
fn shortest_trace_is_kept() {
    // Two ways to 3: the direct one is one step.
    let model = "byte x;\nactive proctype P() {\n  if\n  :: x = 1; printf(\"KIVI:1\\n\"); x = 2; printf(\"KIVI:2\\n\"); x = 3\n  :: x = 3; printf(\"KIVI:3\\n\")\n  fi;\n  assert(x != 3)\n}\n";
    let out = verify(model, &tools(), &fast()).unwrap();
    let Verdict::Violated { trace, .. } = out.verdict else {
        panic!("{:?}", out.verdict)
    };
    assert_eq!(trace, vec![TraceEvent { values: vec![3] }]);
}

#[test]
fn exhaustive_pass_and_deadlock() {
    let ok = "byte x;\nactive proctype P() { do :: x < 200 -> x++ :: x >= 200 -> break od; assert(x == 200) }\n";
    assert_eq!(verify(ok, &tools(), &fast()).unwrap().verdict, Verdict::Verified);
    let stuck = "chan c = [0] of { byte };\nactive proctype P() { c?_ }\n";
    assert!(matches!(
        verify(stuck, &tools(), &fast()).unwrap().verdict,
        Verdict::Violated {
            violation: PanError::InvalidEndState,
            ..
        }
    ));
}

#[test]
fn limits_are_inconclusive_never_passes() {
    let deep = "int x;\nactive proctype P() { do :: x < 5000 -> x++ :: x >= 5000 -> break od }\n";
    let shallow = Options {
        search: Search::Safety { shortest: false },
        max_depth: 100,
        ..fast()
    };
    assert_eq!(
        verify(deep, &tools(), &shallow).unwrap().verdict,
        Verdict::Inconclusive(Inconclusive::DepthLimit(100))
    );

    let wide = "int x; int y;\nactive proctype P() { do :: x < 3000 -> x++ :: break od }\nactive proctype Q() { do :: y < 3000 -> y++ :: break od }\n";
    let small = Options {
        search: Search::Safety { shortest: false },
        memory_mb: 8,
        ..fast()
    };
    assert_eq!(
        verify(wide, &tools(), &small).unwrap().verdict,
        Verdict::Inconclusive(Inconclusive::MemoryLimit(8))
    );

    let slow = Options {
        search: Search::Safety { shortest: false },
        time_limit: Duration::from_millis(300),
        memory_mb: 4096,
        max_depth: 10_000_000,
        ..fast()
    };
    // Three wrapping counters: 16.7 million states, far more than 300 ms of search.
    let huge = "byte a, b, c;\nactive proctype P() { do :: a = a + 1 :: b = b + 1 :: c = c + 1 od }\n";
    assert!(matches!(
        verify(huge, &tools(), &slow).unwrap().verdict,
        Verdict::Inconclusive(Inconclusive::TimeLimit(_))
    ));
}

#[test]
fn engine_errors_are_inconclusive() {
    let out = verify("active proctype P() { x = }\n", &tools(), &fast()).unwrap();
    let Verdict::Inconclusive(Inconclusive::EngineError(why)) = out.verdict else {
        panic!("{:?}", out.verdict)
    };
    assert!(why.starts_with("spin -a failed"), "{why}");
    // A division by zero kills pan with SIGFPE (Kivi reported that as "no failure").
    let fpe = "int x; int y;\nactive proctype P() { y = 5 / x }\n";
    let out = verify(fpe, &tools(), &fast()).unwrap();
    assert!(
        matches!(out.verdict, Verdict::Inconclusive(_) | Verdict::Violated { .. }),
        "{:?}",
        out.verdict
    );
    assert_ne!(out.verdict, Verdict::Verified);
    let missing = Tools {
        spin: PathBuf::from("/no/such/spin"),
        cc: tools().cc,
        quick_cc: None,
        versions: String::new(),
    };
    assert!(matches!(
        verify("init {}\n", &missing, &fast()).unwrap().verdict,
        Verdict::Inconclusive(Inconclusive::EngineError(_))
    ));
}

/// Another SPIN or compiler version never reuses a build or a result: the versions are in
/// the salt of every key.
#[test]
fn tool_versions_are_in_the_cache_keys() {
    let tools = tools();
    assert!(tools.versions.contains("Spin Version"), "{}", tools.versions);
    let upgraded = Tools {
        versions: format!("{} (upgraded)", tools.versions),
        ..tools.clone()
    };
    assert_ne!(build_salt(&tools, &fast()), build_salt(&upgraded, &fast()));
    // so is the C kivi-lint inserts into pan.c
    assert!(build_salt(&tools, &fast()).contains(packing::PACKER_DIGEST.as_str()));
}

#[test]
fn non_progress_cycles() {
    let spinning = "byte x;\nactive proctype P() { do :: x = 1 - x od }\n";
    let options = Options {
        search: Search::NonProgress,
        ..fast()
    };
    assert!(matches!(
        verify(spinning, &tools(), &options).unwrap().verdict,
        Verdict::Violated {
            violation: PanError::NonProgressCycle,
            ..
        }
    ));
    let progressing = "byte x;\nactive proctype P() { do :: x = 1 - x; progress: skip od }\n";
    assert_eq!(
        verify(progressing, &tools(), &options).unwrap().verdict,
        Verdict::Verified
    );
}

#[test]
fn hash_table_starts_small_and_fits_the_memory_bound() {
    assert_eq!(hash_bits(8), 17);
    assert_eq!(hash_bits(1024), 20);
    assert_eq!(hash_bits(1 << 20), 20);
}

/// The quick build's compiler changes neither the verdict nor the counterexample: pan's
/// search order is its own. A quick compiler that fails leaves the build to `cc -O0`.
#[test]
fn the_quick_compiler_decides_nothing() {
    let tools = tools();
    let model = "byte x;\nactive proctype P() {\n  do\n  :: x < 9 -> x++; printf(\"KIVI:7:%d\\n\", x)\n  :: x == 9 -> assert(false)\n  od\n}\n";
    let with = |quick_cc: Option<PathBuf>| {
        let tools = Tools {
            quick_cc,
            ..tools.clone()
        };
        verify(model, &tools, &fast()).unwrap().verdict
    };
    let plain = with(None);
    assert!(matches!(plain, Verdict::Violated { .. }), "{plain:?}");
    if let Ok(tcc) = which::which("tcc") {
        assert_eq!(with(Some(tcc)), plain);
    }
    assert_eq!(with(Some(PathBuf::from("false"))), plain);
    // A quick compiler whose pan crashes, or exits without its report: `cc` builds it again.
    let dir = tempfile::tempdir().unwrap();
    for (name, pan) in [("crashes", "kill -SEGV $$"), ("says-nothing", "exit 0")] {
        let fake = dir.path().join(name);
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; shift; done\nprintf '#!/bin/sh\\n{pan}\\n' > \"$out\"; chmod +x \"$out\"\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert_eq!(with(Some(fake)), plain, "{name}");
    }
}

/// A model whose quick builds have run for `QUICK_BUDGET` in all (or, its runs ahead known,
/// whose runs ahead would cost more than the compile) is compiled with -O2 and runs that
/// build from then on; before that it keeps the quick one. Either gives the same
/// verdict and counterexample.
#[test]
fn a_model_that_keeps_running_gets_the_optimised_build() {
    let engine = Engine::new(tools(), fast(), None).unwrap();
    let model = "byte x;\nactive proctype P() {\n  do\n  :: x < 9 -> x++; printf(\"KIVI:7:%d\\n\", x)\n  :: x == 9 -> assert(false)\n  od\n}\n";
    let cancel = AtomicBool::new(false);
    let quick = engine.first_build(model);
    assert!(!quick.optimised);
    let optimised = Build {
        optimised: true,
        ..quick
    };
    let first = engine.verify(model, "", &cancel).unwrap();
    assert!(matches!(first.verdict, Verdict::Violated { .. }), "{:?}", first.verdict);
    assert!(!engine.is_built(model, optimised));
    engine.spend(model, quick, QUICK_BUDGET / 2);
    assert_eq!(engine.first_build(model), quick);
    engine.spend(model, quick, QUICK_BUDGET / 2);
    assert_eq!(engine.first_build(model), optimised);
    let second = engine.verify(model, "", &cancel).unwrap();
    assert!(engine.is_built(model, optimised));
    assert_eq!(second.verdict, first.verdict);

    // With the runs ahead known, what they would cost decides: 2 more runs of 1 s each do not
    // pay for the compile, 100 more do.
    let engine = Engine::new(tools(), fast(), None).unwrap();
    engine.expect_runs(model, 3);
    engine.spend(model, quick, QUICK_SAMPLE);
    assert_eq!(engine.first_build(model), quick);
    engine.expect_runs(model, 100);
    assert_eq!(engine.first_build(model), optimised);
}

/// Stored states are packed (packing.rs): a vector of a kilobyte that barely changes is stored
/// in a few dozen bytes, and no state is lost.
#[test]
fn stored_states_are_packed_without_losing_one() {
    let model = "byte table[1000];\nbyte a, b;\nactive proctype P() {\n  do\n  :: table[a] == 0 && a < 200 -> a++\n  :: b < 200 -> b++\n  :: a == 200 && b == 200 -> break\n  od\n}\n";
    let out = verify(model, &tools(), &fast()).unwrap();
    assert_eq!(out.verdict, Verdict::Verified);
    // every (a, b) and the steps between (SPIN 6.5.2 stores 120,803 states, packed or not)
    assert!(out.statistics.states_stored > 201 * 201, "{:?}", out.statistics);
    // unpacked, pan needs 133 MiB: every state whole, 1,012 bytes and its overhead
    assert!(out.statistics.memory_kib < 48 * 1024, "{:?}", out.statistics);
}

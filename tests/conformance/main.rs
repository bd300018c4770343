//! Conformance of kivi-lint's controller models with upstream Kubernetes and descheduler unit
//! tests (`tests/conformance/cases/`, transcribed from the upstream Go tests, each case with its
//! source; another directory with `KIVI_PEER_TESTS`): every case is built
//! into a small scenario from the verifier's own templates, run through SPIN, and compared
//! with the case's `expect`.
//!
//! `cargo test --test conformance` prints one line per file and
//! `conformance: N passed, N failed, N skipped`, and fails on any failure. Skips are listed
//! with their reasons in `skips.rs`.

mod arithmetic;
mod cases;
mod descheduler;
mod queue;
mod scheduler;
mod skips;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use kivi_lint::engine::{Engine, Options, Search, Tools};
use kivi_lint::model::Generator;

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
}

fn peer_tests() -> PathBuf {
    match std::env::var_os("KIVI_PEER_TESTS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/cases"),
    }
}

/// KIVI_CONFORMANCE_SKIPS=1 lists each skipped case with its reason.
fn list_skip(name: &str, why: &str) {
    if std::env::var_os("KIVI_CONFORMANCE_SKIPS").is_some() {
        println!("  skip {name}: {why}");
    }
}

fn main() {
    let started = Instant::now();
    let dir = peer_tests();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect(),
        Err(e) => {
            eprintln!(
                "conformance: cannot read {} ({e}); set KIVI_PEER_TESTS to the peer test directory",
                dir.display()
            );
            std::process::exit(1);
        }
    };
    files.sort();
    // Cases written here from upstream tests the shared suite does not carry, each with its
    // source; same format and file names.
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/local");
    let mut local_files: Vec<PathBuf> = std::fs::read_dir(&local)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
                .collect()
        })
        .unwrap_or_default();
    local_files.sort();
    files.extend(local_files);
    let tools = Tools::find().unwrap_or_else(|e| {
        eprintln!("conformance: {e}: run `scripts/setup`");
        std::process::exit(1);
    });
    let spin = tools.spin.clone();
    let options = Options {
        search: Search::Safety { shortest: false },
        ..Options::default()
    };
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance-cache");
    let engine = Engine::new(tools, options, Some(&cache)).expect("an engine");
    let generator = Generator::new().expect("the templates");

    let mut total = Tally::default();
    let mut failures = Vec::new();
    for path in &files {
        let file = match cases::load(path) {
            Ok(f) => f,
            Err(e) => {
                println!("{e}");
                total.failed += 1;
                continue;
            }
        };
        let tally = Mutex::new(Tally::default());
        let failed = Mutex::new(Vec::new());
        let next = Mutex::new(0usize);
        // KIVI_CONFORMANCE_FILTER=text runs only the cases whose name has it.
        let filter = std::env::var("KIVI_CONFORMANCE_FILTER").ok();
        let selected = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
        if file.name.starts_with("hpa_") || file.name.starts_with("deployment_") {
            // Deterministic arithmetic: the whole file in one simulation.
            let mut run = Vec::new();
            for (i, case) in file.cases.iter().enumerate() {
                if !selected(&case.name) {
                    continue;
                }
                if let Some(why) = skips::reason(&file.name, &case.name, &case.body) {
                    list_skip(&case.name, why);
                    tally.lock().unwrap().skipped += 1;
                } else {
                    run.push((i, case));
                }
            }
            for (i, result) in arithmetic::run_file(&file.name, &run, &spin, &generator) {
                match result {
                    Ok(()) => tally.lock().unwrap().passed += 1,
                    Err(why) => {
                        tally.lock().unwrap().failed += 1;
                        failed
                            .lock()
                            .unwrap()
                            .push((i, format!("  FAIL {}: {why}", file.cases[i].name)));
                    }
                }
            }
        } else {
            let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
            std::thread::scope(|s| {
                for _ in 0..workers {
                    s.spawn(|| {
                        loop {
                            let i = {
                                let mut n = next.lock().unwrap();
                                *n += 1;
                                *n - 1
                            };
                            let Some(case) = file.cases.get(i) else { break };
                            if !selected(&case.name) {
                                continue;
                            }
                            if let Some(why) = skips::reason(&file.name, &case.name, &case.body) {
                                list_skip(&case.name, why);
                                tally.lock().unwrap().skipped += 1;
                                continue;
                            }
                            let result = if file.name.starts_with("scheduler_") {
                                scheduler::run(&file.name, &case.body, &engine, &generator)
                            } else if file.name.starts_with("descheduler") {
                                descheduler::run(&case.body, &engine, &generator)
                            } else if file.name.starts_with("scheduling_queue") {
                                queue::run(&case.body)
                            } else {
                                Err("no harness for this file".to_string())
                            };
                            match result {
                                Ok(()) => tally.lock().unwrap().passed += 1,
                                Err(why) => {
                                    tally.lock().unwrap().failed += 1;
                                    failed.lock().unwrap().push((i, format!("  FAIL {}: {why}", case.name)));
                                }
                            }
                        }
                    });
                }
            });
        }
        let tally = tally.into_inner().unwrap();
        let label = if path.starts_with(&local) {
            format!("local/{}", file.name)
        } else {
            file.name.clone()
        };
        println!(
            "{label}: {} passed, {} failed, {} skipped",
            tally.passed, tally.failed, tally.skipped
        );
        let mut failed = failed.into_inner().unwrap();
        failed.sort();
        failures.extend(failed.into_iter().map(|(_, f)| format!("{label}{f}")));
        total.passed += tally.passed;
        total.failed += tally.failed;
        total.skipped += tally.skipped;
    }
    for f in &failures {
        println!("{f}");
    }
    println!(
        "conformance: {} passed, {} failed, {} skipped ({:.1} s)",
        total.passed,
        total.failed,
        total.skipped,
        started.elapsed().as_secs_f64()
    );
    if total.failed > 0 {
        std::process::exit(1);
    }
}

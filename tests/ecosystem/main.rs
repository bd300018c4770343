//! The ecosystem check, after ruff's: kivi-lint over every real repository of
//! `../shared/corpus/real`, `../shared/corpus/ecosystem` and `../shared/corpus/ecosystem2` (or
//! the directories in `KIVI_ECOSYSTEM_CORPUS`, separated by `:`), as a new user runs it: the
//! default config, a cold cache, and `helm` on PATH (`scripts/setup` installs it; without it
//! the check fails, since what a repository's charts deploy would go unverified). Every finding is compared with `tests/ecosystem/triage.yaml`, where each one is
//! marked `real` (a maintainer would accept it) or `noise` (with the assumption or defect that
//! causes it).
//!
//! Prints the new, vanished and changed findings as a diff and a table per repository, then
//! `ecosystem: N passed, N failed`. Fails on a crash, an untriaged error-level finding, an
//! error-level precision (real / triaged) below the triage file's `minErrorPrecision`, a
//! check left undecided without a partial verdict (it held nowhere before a limit), or a
//! peak RSS over 2 GiB. `scripts/ecosystem` runs it; `KIVI_ECOSYSTEM_ONLY=name` runs the
//! repositories whose name contains `name`; `KIVI_ECOSYSTEM_TABLE=FILE` writes the table as
//! Markdown.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use kivi_lint::source::FileId;
use kivi_lint::yaml::{self, Node};
use serde_json::Value;

/// Peak resident memory a repository may take (kivi-lint and its model checker runs).
const MAX_RSS_KIB: u64 = 2 * 1024 * 1024;

/// What identifies a finding across runs: the repository, the check, the unit (its scope and
/// name); the location may change ("changed").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    repo: String,
    check: String,
    scope: String,
    unit: String,
}

#[derive(Clone, Debug)]
struct Finding {
    key: Key,
    level: String,
    location: String,
}

#[derive(Clone, Debug)]
struct Triaged {
    key: Key,
    location: String,
    verdict: String,
}

#[derive(Default)]
struct Row {
    files: u64,
    units: u64,
    findings: usize,
    real: usize,
    noise: usize,
    untriaged: usize,
    /// Checks that could not be decided (a limit, a bound) and held nowhere before it: never a
    /// pass, never a finding. The ecosystem check fails on one.
    inconclusive: usize,
    /// Partial verdicts: undecided, but held up to a size (or with fewer replicas) first.
    partial: usize,
    seconds: f64,
    rss_kib: Option<u64>,
    exit: i32,
}

fn corpus_dirs() -> Vec<PathBuf> {
    match std::env::var("KIVI_ECOSYSTEM_CORPUS") {
        Ok(dirs) if !dirs.is_empty() => dirs.split(':').map(PathBuf::from).collect(),
        _ => {
            let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
            vec![shared.join("real"), shared.join("ecosystem"), shared.join("ecosystem2")]
        }
    }
}

fn repositories() -> Vec<(String, PathBuf)> {
    let only = std::env::var("KIVI_ECOSYSTEM_ONLY").unwrap_or_default();
    let mut repos = Vec::new();
    let dirs = corpus_dirs();
    // Other people's repositories live beside the clone, not in it: a fresh clone alone skips
    // the check, saying so; CI (`KIVI_REQUIRE_CORPUS`, set by .ci/run) requires them.
    if std::env::var_os("KIVI_ECOSYSTEM_CORPUS").is_none()
        && std::env::var_os("KIVI_REQUIRE_CORPUS").is_none()
        && !dirs.iter().any(|d| d.is_dir())
    {
        println!(
            "ecosystem: skipped: the shared corpus ({}) is not beside the clone; CI requires it",
            dirs[0].parent().unwrap_or(&dirs[0]).display()
        );
        std::process::exit(0);
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("ecosystem: cannot read {}", dir.display());
            std::process::exit(1);
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if e.path().is_dir() && name.contains("__") && name.contains(only.as_str()) {
                // Reports name files by the path as scanned: scan the canonical one, so that
                // locations relative to the repository are the same wherever the corpus is.
                let path = std::fs::canonicalize(e.path()).unwrap_or_else(|_| e.path());
                repos.push((name, path));
            }
        }
    }
    repos.sort();
    repos
}

fn text<'a>(node: &'a Node, key: &str) -> &'a str {
    node.get(key).and_then(Node::as_str).unwrap_or_default()
}

/// The triage file: its entries and the precision floor.
fn triage() -> (Vec<Triaged>, f64) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ecosystem/triage.yaml");
    let source = std::fs::read_to_string(&path).expect("tests/ecosystem/triage.yaml");
    let stream = yaml::parse(&source, FileId(0), &yaml::Limits::default());
    assert!(stream.errors.is_empty(), "triage.yaml: {:?}", stream.errors);
    let root = &stream.documents[0].root;
    let floor = match root.get("minErrorPrecision").map(|n| &n.value) {
        Some(yaml::Value::Float(f)) => *f,
        Some(yaml::Value::Int(i)) => *i as f64,
        _ => 0.0,
    };
    let mut out = Vec::new();
    for entry in root.get("findings").and_then(Node::as_seq).unwrap_or_default() {
        let verdict = text(entry, "verdict");
        assert!(
            verdict == "real" || verdict == "noise",
            "triage.yaml: `verdict` must be real or noise, at line {}",
            entry.span.start.line
        );
        assert!(
            !text(entry, "why").is_empty(),
            "triage.yaml: every entry says why, at line {}",
            entry.span.start.line
        );
        out.push(Triaged {
            key: Key {
                repo: text(entry, "repo").into(),
                check: text(entry, "check").into(),
                scope: text(entry, "scope").into(),
                unit: text(entry, "unit").into(),
            },
            location: text(entry, "location").into(),
            verdict: verdict.into(),
        });
    }
    (out, floor)
}

/// `path` relative to the repository, as triage.yaml writes it.
fn relative(path: &str, repo: &Path) -> String {
    let repo = repo.to_string_lossy();
    path.strip_prefix(repo.as_ref())
        .map(|p| p.trim_start_matches('/'))
        .unwrap_or(path)
        .to_string()
}

/// Run kivi-lint over one repository with a cold cache; its findings and measurements.
fn run(name: &str, repo: &Path, cache: &Path) -> (Vec<Finding>, Row) {
    let bin = env!("CARGO_BIN_EXE_kivi-lint");
    let time = Path::new("/usr/bin/time");
    let rss_file = cache.join(format!("{name}.rss"));
    let mut command = if time.is_file() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    command
        .arg(repo)
        .args(["--format", "json", "--no-fixes", "-q", "--color", "never"])
        .arg("--cache-dir")
        .arg(cache.join(name))
        .env_remove("KIVI_LINT_CACHE_DIR")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("KIVI_LINT_LOG");
    let started = Instant::now();
    let out = command.output().expect("run kivi-lint");
    let mut row = Row {
        seconds: started.elapsed().as_secs_f64(),
        exit: out.status.code().unwrap_or(-1),
        rss_kib: std::fs::read_to_string(&rss_file)
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok())),
        ..Row::default()
    };
    let report: Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => {
            println!(
                "{name}: no JSON report ({e}), exit {}: {}",
                row.exit,
                String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default()
            );
            row.exit = -1;
            return (Vec::new(), row);
        }
    };
    row.files = report["summary"]["files"].as_u64().unwrap_or(0);
    row.units = report["summary"]["units"].as_u64().unwrap_or(0);
    let mut findings = Vec::new();
    for unit in report["units"].as_array().into_iter().flatten() {
        for result in unit["verification"]["results"].as_array().into_iter().flatten() {
            if result["verdict"] == "inconclusive" {
                if result["partial"] == true {
                    row.partial += 1;
                } else {
                    row.inconclusive += 1;
                }
            }
            if result["verdict"] != "violated" {
                continue;
            }
            let file = relative(result["file"].as_str().unwrap_or_default(), repo);
            findings.push(Finding {
                key: Key {
                    repo: name.to_string(),
                    check: result["check"].as_str().unwrap_or_default().to_string(),
                    scope: relative(unit["scope"].as_str().unwrap_or_default(), repo),
                    unit: unit["name"].as_str().unwrap_or_default().to_string(),
                },
                level: result["level"].as_str().unwrap_or_default().to_string(),
                location: format!("{file}:{}", result["line"].as_u64().unwrap_or(0)),
            });
        }
    }
    row.findings = findings.len();
    (findings, row)
}

fn main() {
    let helm = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .any(|d| Path::new(d).join("helm").is_file());
    if !helm {
        println!("ecosystem: `helm` is not on PATH (scripts/setup installs it): charts would go unverified");
        std::process::exit(1);
    }
    let (triaged, floor) = triage();
    let cache = tempfile::tempdir().expect("a temporary directory");
    let mut rows: Vec<(String, Row)> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let (mut real_errors, mut noise_errors) = (0usize, 0usize);
    let mut seen: Vec<bool> = vec![false; triaged.len()];
    let repos = repositories();
    let ran: Vec<&str> = repos.iter().map(|(n, _)| n.as_str()).collect();
    for (name, path) in &repos {
        let (findings, mut row) = run(name, path, cache.path());
        if !(0..=3).contains(&row.exit) {
            failures.push(format!("{name}: kivi-lint crashed (exit {})", row.exit));
        }
        if row.rss_kib.is_some_and(|k| k > MAX_RSS_KIB) {
            failures.push(format!(
                "{name}: peak RSS {} MiB, over 2 GiB",
                row.rss_kib.unwrap_or(0) / 1024
            ));
        }
        for f in &findings {
            // The first unseen triage entry with the same key (overlays may repeat one).
            let exact =
                (0..triaged.len()).find(|&i| !seen[i] && triaged[i].key == f.key && triaged[i].location == f.location);
            let same_key = exact.or_else(|| (0..triaged.len()).find(|&i| !seen[i] && triaged[i].key == f.key));
            match same_key {
                Some(i) => {
                    seen[i] = true;
                    if triaged[i].location != f.location {
                        println!(
                            "~ {} {} {} [{}]: at {} (triaged at {})",
                            f.key.repo, f.level, f.key.check, f.key.unit, f.location, triaged[i].location
                        );
                    }
                    let real = triaged[i].verdict == "real";
                    if real {
                        row.real += 1;
                    } else {
                        row.noise += 1;
                    }
                    if f.level == "error" {
                        if real {
                            real_errors += 1;
                        } else {
                            noise_errors += 1;
                        }
                    }
                }
                None => {
                    row.untriaged += 1;
                    println!(
                        "+ {} {} {} [{}] scope {} at {}",
                        f.key.repo, f.level, f.key.check, f.key.unit, f.key.scope, f.location
                    );
                    if f.level == "error" {
                        failures.push(format!(
                            "{}: untriaged error-level finding {} of {} at {}",
                            f.key.repo, f.key.check, f.key.unit, f.location
                        ));
                    }
                }
            }
        }
        if row.inconclusive > 0 {
            failures.push(format!(
                "{name}: {} checks undecided without a partial verdict (held nowhere before a limit)",
                row.inconclusive
            ));
        }
        rows.push((name.clone(), row));
    }
    for (i, t) in triaged.iter().enumerate() {
        if !seen[i] && ran.contains(&t.key.repo.as_str()) {
            println!(
                "- {} {} [{}] at {} ({}): vanished",
                t.key.repo, t.key.check, t.key.unit, t.location, t.verdict
            );
        }
    }
    let table = table(&rows, real_errors, noise_errors);
    print!("{table}");
    if let Ok(file) = std::env::var("KIVI_ECOSYSTEM_TABLE") {
        std::fs::write(&file, &table).expect("write the table");
    }
    let judged = real_errors + noise_errors;
    let precision = if judged == 0 {
        1.0
    } else {
        real_errors as f64 / judged as f64
    };
    if precision + 1e-9 < floor {
        failures.push(format!(
            "error-level precision {:.0} % is below the floor of {:.0} % in triage.yaml",
            precision * 100.0,
            floor * 100.0
        ));
    }
    for f in &failures {
        println!("FAILED: {f}");
    }
    println!(
        "ecosystem: {} passed, {} failed",
        rows.len().saturating_sub(failures.len()),
        failures.len()
    );
    if !failures.is_empty() {
        std::process::exit(1);
    }
}

fn table(rows: &[(String, Row)], real_errors: usize, noise_errors: usize) -> String {
    let mut out = String::from(
        "| repository | files | units | findings | real | noise | untriaged | partial | inconclusive | cold time | peak RSS | exit |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut total = Row::default();
    for (name, r) in rows {
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} s | {} | {} |\n",
            r.files,
            r.units,
            r.findings,
            r.real,
            r.noise,
            r.untriaged,
            r.partial,
            r.inconclusive,
            r.seconds,
            r.rss_kib.map_or("-".into(), |k| format!("{} MiB", k.div_ceil(1024))),
            r.exit
        ));
        total.files += r.files;
        total.units += r.units;
        total.findings += r.findings;
        total.real += r.real;
        total.noise += r.noise;
        total.untriaged += r.untriaged;
        total.inconclusive += r.inconclusive;
        total.partial += r.partial;
        total.seconds += r.seconds;
        total.rss_kib = total.rss_kib.max(r.rss_kib);
    }
    out.push_str(&format!(
        "| **all** | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} s | {} | |\n",
        total.files,
        total.units,
        total.findings,
        total.real,
        total.noise,
        total.untriaged,
        total.partial,
        total.inconclusive,
        total.seconds,
        total
            .rss_kib
            .map_or("-".into(), |k| format!("{} MiB", k.div_ceil(1024)))
    ));
    let judged = real_errors + noise_errors;
    out.push_str(&format!(
        "\nerror-level findings: {real_errors} real, {noise_errors} noise{}\n",
        if judged == 0 {
            String::new()
        } else {
            format!(", precision {:.0} %", 100.0 * real_errors as f64 / judged as f64)
        }
    ));
    out
}

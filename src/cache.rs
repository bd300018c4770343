//! The cache directory's upkeep. Compiled verifiers (`pan/`) and verdicts (`results/`) are
//! content-addressed, so a changed model or config only adds entries: a CI cache restored
//! and saved on every run (the Action's `actions/cache`, GitLab's `cache:`) would grow without
//! end. Each entry's modification time is its last use; entries unused for
//! [`UNUSED_FOR`] are removed when a scan starts.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How long an entry may go unused before it is removed.
pub const UNUSED_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// Mark `path` (a file or a directory) used now. Best effort: a cache that cannot be
/// touched still works, it is only pruned earlier.
pub fn touch(path: &Path) {
    let _ = std::fs::File::open(path).and_then(|f| f.set_modified(SystemTime::now()));
}

/// Remove the entries of `cache_dir`'s `pan/` and `results/` last used more than `unused_for`
/// ago; returns how many. Hidden entries (builds in progress) are left to the engine.
pub fn prune(cache_dir: &Path, unused_for: Duration) -> usize {
    let mut removed = 0;
    for part in ["pan", "results"] {
        let Ok(entries) = std::fs::read_dir(cache_dir.join(part)) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let unused = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > unused_for));
            if !unused {
                continue;
            }
            let path = entry.path();
            let gone = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed += usize::from(gone.is_ok());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_unused_for_long_are_removed_and_used_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let pan = dir.path().join("pan");
        let results = dir.path().join("results");
        for d in [&pan, &results] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir(pan.join("old")).unwrap();
        std::fs::create_dir(pan.join("recent")).unwrap();
        std::fs::create_dir(pan.join(".build-x")).unwrap();
        std::fs::write(results.join("old.json"), "[]").unwrap();
        std::fs::write(results.join("used.json"), "[]").unwrap();
        let long_ago = SystemTime::now() - UNUSED_FOR - Duration::from_secs(3600);
        for p in [
            pan.join("old"),
            pan.join(".build-x"),
            results.join("old.json"),
            results.join("used.json"),
        ] {
            std::fs::File::open(&p).unwrap().set_modified(long_ago).unwrap();
        }
        // Read from the cache today: kept.
        touch(&results.join("used.json"));
        assert_eq!(prune(dir.path(), UNUSED_FOR), 2);
        assert!(!pan.join("old").exists() && !results.join("old.json").exists());
        assert!(pan.join("recent").exists() && results.join("used.json").exists());
        assert!(pan.join(".build-x").exists(), "builds in progress are the engine's");
    }
}

//! The cache directory's upkeep. Compiled verifiers (`pan/`) and verdicts (`results/`) are
//! content-addressed, so a changed model or config only adds entries: a CI cache restored
//! and saved on every run (the Action's `actions/cache`, GitLab's `cache:`) would grow without
//! end. Each entry's modification time is its last use; entries unused for
//! [`UNUSED_FOR`] are removed when a scan starts.

use std::path::{Component, Path, PathBuf};
use std::process::Command;
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

/// Why `cache_dir` must not be used, if it must not: it lies in a git work tree that commits
/// it, its content, or a directory on its way as a file or symlink. A pull request could then
/// forge verdicts (a results entry that says verified) or point the directory elsewhere, so
/// that kivi-lint writes outside the repository. GitLab's template keeps the cache in the
/// project directory, where a merge request can commit anything. Where it cannot be told (a
/// `.git` on the way but git fails: not installed, "dubious ownership", a broken repository),
/// the cache is refused too: the guard fails closed.
pub fn committed(cache_dir: &Path) -> Option<String> {
    let Ok(absolute) = std::path::absolute(cache_dir) else {
        return Some(format!(
            "the cache directory {} has no absolute path",
            cache_dir.display()
        ));
    };
    // git runs in the nearest directory that exists and is not a symlink.
    let existing = absolute
        .ancestors()
        .skip(1)
        .find(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir()))?;
    // Not under any work tree (no `.git` on the way up): nothing can commit it.
    if !existing.ancestors().any(|d| d.join(".git").symlink_metadata().is_ok()) {
        return None;
    }
    let undecided = |why: String| {
        Some(format!(
            "the cache directory {} is inside a git work tree, and whether it commits the cache cannot be told ({why}): a change could forge its verdicts",
            cache_dir.display()
        ))
    };
    let git = |args: &[&std::ffi::OsStr], dir: &Path| -> Result<String, String> {
        let mut c = Command::new("git");
        c.arg("-C").arg(dir).args(args);
        match crate::process::run(c, GIT_TIMEOUT) {
            Ok(f) if f.success => Ok(f.stdout),
            Ok(f) => Err(format!("git: {}", f.stderr.lines().next().unwrap_or("failed").trim())),
            Err(e) => Err(e.to_string()),
        }
    };
    let toplevel = match git(&["rev-parse".as_ref(), "--show-toplevel".as_ref()], existing) {
        Ok(out) => PathBuf::from(out.trim_end()),
        Err(e) => return undecided(crate::diagnostics::printable(&e).into_owned()),
    };
    let canonical_top = std::fs::canonicalize(&toplevel).unwrap_or_else(|_| toplevel.clone());
    let canonical_existing = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    // The cache's path below the work tree, through the existing directory's real path.
    let rest = absolute.strip_prefix(existing).unwrap_or(Path::new(""));
    let Ok(below) = canonical_existing.strip_prefix(&canonical_top) else {
        return undecided("the work tree does not hold the directory".into());
    };
    let relative = below.join(rest);
    if relative.components().any(|c| !matches!(c, Component::Normal(_))) {
        return undecided("the path climbs with `..`".into());
    }
    // The directory and every directory on its way from the root of the work tree.
    let prefixes: Vec<PathBuf> = relative
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    let mut args: Vec<&std::ffi::OsStr> = ["ls-files", "-z", "--full-name", "--"]
        .iter()
        .map(|a| a.as_ref())
        .collect();
    args.extend(prefixes.iter().map(|p| p.as_os_str()));
    let listed = match git(&args, &toplevel) {
        Ok(out) => out,
        Err(e) => return undecided(crate::diagnostics::printable(&e).into_owned()),
    };
    let tracked = listed.split('\0').find(|entry| {
        !entry.is_empty() && (prefixes.iter().any(|p| Path::new(entry) == p) || Path::new(entry).starts_with(&relative))
    })?;
    Some(format!(
        "the cache directory {} is in a git repository that commits `{tracked}`: a change could forge \
         its verdicts or redirect its writes",
        cache_dir.display()
    ))
}

/// How long a git query about the cache directory may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_in_a_work_tree_git_cannot_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".kivi-lint-cache/results")).unwrap();
        // Outside any work tree: usable.
        assert_eq!(committed(&dir.path().join("elsewhere/cache")), None);
        // A `.git` git cannot read (as with another owner's checkout): refused, not trusted.
        std::fs::write(repo.join(".git"), "gitdir: /nonexistent\n").unwrap();
        let why = committed(&repo.join(".kivi-lint-cache")).expect("refused");
        assert!(why.contains("cannot be told"), "{why}");
    }

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

//! The previous revision of the manifests, for the `apply` event: a directory, or a git ref
//! checked out with `git archive` into a temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process;

const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the previous revision's files are. The temporary directory, if any, lives as long as
/// this value.
pub struct Revision {
    /// The directory that corresponds to the config's directory in the previous revision.
    pub root: PathBuf,
    _checkout: Option<tempfile::TempDir>,
}

/// Resolve `from` against `base_dir` (the config's directory): an existing directory is the
/// previous revision itself; anything else is a git ref of the repository holding `base_dir`.
pub fn resolve(base_dir: &Path, from: &str) -> Result<Revision, String> {
    let dir = base_dir.join(from);
    if dir.is_dir() {
        return Ok(Revision {
            root: dir,
            _checkout: None,
        });
    }
    if from.starts_with('-') {
        return Err(format!("`{from}` is not a directory or a git ref"));
    }
    let base = if base_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base_dir
    };
    let prefix = git(base, &["rev-parse", "--show-prefix"])
        .map_err(|e| format!("`{from}` is not a directory, and git cannot read a ref here: {e}"))?;
    verify_ref(base, from)?;
    let (checkout, tree) = archive(base, from, if prefix.is_empty() { "." } else { prefix.as_str() })?;
    Ok(Revision {
        root: tree.join(prefix),
        _checkout: Some(checkout),
    })
}

/// A whole repository at a git ref, for PR mode: `root` holds what `toplevel` held at that
/// revision.
pub struct Checkout {
    /// The working tree's top directory (canonical).
    pub toplevel: PathBuf,
    /// The revision's files, laid out as under `toplevel`.
    pub root: PathBuf,
    _dir: tempfile::TempDir,
}

impl Checkout {
    /// Where `path` (of the working tree) is in the revision, if it is inside the repository.
    pub fn map(&self, path: &Path) -> Option<PathBuf> {
        let absolute = std::path::absolute(path).ok()?;
        let canonical = absolute.canonicalize().unwrap_or(absolute);
        canonical
            .strip_prefix(&self.toplevel)
            .ok()
            .map(|rel| self.root.join(rel))
    }
}

/// Check out the repository holding `dir` at `git_ref` into a temporary directory.
pub fn checkout_repository(dir: &Path, git_ref: &str) -> Result<Checkout, String> {
    if git_ref.starts_with('-') {
        return Err(format!("`{git_ref}` is not a git ref"));
    }
    let toplevel = git(dir, &["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("{} is not in a git repository: {e}", dir.display()))?;
    let toplevel = PathBuf::from(toplevel);
    let toplevel = toplevel.canonicalize().unwrap_or(toplevel);
    verify_ref(&toplevel, git_ref)?;
    let (dir, root) = archive(&toplevel, git_ref, ".")?;
    Ok(Checkout {
        toplevel,
        root,
        _dir: dir,
    })
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(args);
    let finished = process::run(c, GIT_TIMEOUT).map_err(String::from)?;
    if finished.success {
        Ok(finished.stdout.trim_end().to_string())
    } else {
        Err(finished.stderr.lines().next().unwrap_or("git failed").to_string())
    }
}

fn verify_ref(dir: &Path, git_ref: &str) -> Result<(), String> {
    git(
        dir,
        &["rev-parse", "--verify", "--quiet", &format!("{git_ref}^{{tree}}")],
    )
    .map(drop)
    .map_err(|_| format!("`{git_ref}` is not a directory or a git ref of this repository"))
}

/// `git archive` the `pathspec` of `git_ref` and unpack it: the temporary directory and the
/// tree's root in it.
fn archive(dir: &Path, git_ref: &str, pathspec: &str) -> Result<(tempfile::TempDir, PathBuf), String> {
    let checkout =
        crate::process::temporary_dir("revision").map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let archive = checkout.path().join("revision.tar");
    git(
        dir,
        &[
            "archive",
            "--format=tar",
            "-o",
            &archive.to_string_lossy(),
            git_ref,
            "--",
            pathspec,
        ],
    )
    .map_err(|e| format!("git archive {git_ref}: {e}"))?;
    let tree = checkout.path().join("tree");
    std::fs::create_dir(&tree).map_err(|e| format!("cannot create {}: {e}", tree.display()))?;
    let mut tar = Command::new("tar");
    tar.arg("-xf").arg(&archive).arg("-C").arg(&tree);
    let finished = process::run(tar, GIT_TIMEOUT).map_err(String::from)?;
    if !finished.success {
        return Err(format!(
            "cannot unpack the revision {git_ref}: {}",
            finished.stderr.trim()
        ));
    }
    std::fs::remove_file(&archive).map_err(|e| format!("cannot remove {}: {e}", archive.display()))?;
    Ok((checkout, tree))
}

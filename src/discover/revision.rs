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
    let git = |args: &[&str]| -> Result<String, String> {
        let mut c = Command::new("git");
        c.arg("-C").arg(base).args(args);
        let finished = process::run(c, GIT_TIMEOUT).map_err(String::from)?;
        if finished.success {
            Ok(finished.stdout.trim_end().to_string())
        } else {
            Err(finished.stderr.lines().next().unwrap_or("git failed").to_string())
        }
    };
    let prefix = git(&["rev-parse", "--show-prefix"])
        .map_err(|e| format!("`{from}` is not a directory, and git cannot read a ref here: {e}"))?;
    git(&["rev-parse", "--verify", "--quiet", &format!("{from}^{{tree}}")])
        .map_err(|_| format!("`{from}` is not a directory or a git ref of this repository"))?;
    let checkout = tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let archive = checkout.path().join("revision.tar");
    git(&[
        "archive",
        "--format=tar",
        "-o",
        &archive.to_string_lossy(),
        from,
        "--",
        if prefix.is_empty() { "." } else { prefix.as_str() },
    ])
    .map_err(|e| format!("git archive {from}: {e}"))?;
    let tree = checkout.path().join("tree");
    std::fs::create_dir(&tree).map_err(|e| format!("cannot create {}: {e}", tree.display()))?;
    let mut tar = Command::new("tar");
    tar.arg("-xf").arg(&archive).arg("-C").arg(&tree);
    let finished = process::run(tar, GIT_TIMEOUT).map_err(String::from)?;
    if !finished.success {
        return Err(format!("cannot unpack the revision {from}: {}", finished.stderr.trim()));
    }
    Ok(Revision {
        root: tree.join(prefix),
        _checkout: Some(checkout),
    })
}

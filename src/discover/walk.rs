//! The walk of a directory tree: the files `include` and `exclude` select, `testdata/`
//! skipped, unreadable paths and hidden manifests reported.

use super::*;

/// `include`/`exclude` globs, matched against paths relative to the config's directory.
pub(super) struct Filter {
    pub(super) base: PathBuf,
    pub(super) include: GlobSet,
    pub(super) exclude: GlobSet,
    /// Read files under `testdata/` directories: an `include` glob names them.
    pub(super) testdata: bool,
}

impl Filter {
    pub(super) fn new(config: &Config) -> Filter {
        let build = |globs: &[String]| {
            let mut b = GlobSetBuilder::new();
            for g in globs {
                if let Ok(glob) = Glob::new(g) {
                    b.add(glob);
                }
            }
            b.build().unwrap_or_else(|_| GlobSet::empty())
        };
        Filter {
            base: std::fs::canonicalize(&config.base_dir).unwrap_or_else(|_| config.base_dir.clone()),
            include: build(&config.include),
            exclude: build(&config.exclude),
            testdata: config.include.iter().any(|g| g.contains(TESTDATA)),
        }
    }

    pub(super) fn admits(&self, path: &Path) -> bool {
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let rel = absolute.strip_prefix(&self.base).unwrap_or(&absolute);
        self.include.is_match(rel) && !self.exclude.is_match(rel)
    }
}

#[derive(Default)]
pub(super) struct Walked {
    pub(super) files: Vec<PathBuf>,
    /// Symbolic links not followed: to a file outside the walked directory, or to nothing.
    pub(super) links: Vec<PathBuf>,
    /// Symbolic links to directories, not walked (a link may loop, or lead out of the tree).
    pub(super) linked_dirs: Vec<PathBuf>,
    pub(super) kustomize_dirs: Vec<PathBuf>,
    pub(super) chart_dirs: Vec<PathBuf>,
    /// Manifest files left out because they lie under a `testdata/` directory.
    pub(super) testdata: Vec<PathBuf>,
}

/// Go's convention for test inputs: files a repository keeps to feed its tests, not to deploy.
pub(super) const TESTDATA: &str = "testdata";

/// Walk `dir`; with `skip_testdata`, files under a `testdata` directory below `dir` are set
/// aside (a path named on the command line inside one is still walked).
pub(super) fn walk(dir: &Path, skip_testdata: bool) -> (Walked, Vec<String>) {
    let mut out = Walked::default();
    let mut errors = Vec::new();
    // Links to files inside the directory, with their targets.
    let mut linked: Vec<(PathBuf, PathBuf)> = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                errors.push(e.to_string());
                continue;
            }
        };
        let path = if entry.path_is_symlink() {
            // A link to a file inside the walked directory is read as that file would be;
            // one that leads out of it (or nowhere) is reported, never followed.
            let Ok(target) = std::fs::canonicalize(entry.path()) else {
                out.links.push(entry.into_path());
                continue;
            };
            if target.is_dir() {
                out.linked_dirs.push(entry.into_path());
                continue;
            }
            if !target.is_file() || !std::fs::canonicalize(dir).is_ok_and(|d| target.starts_with(d)) {
                out.links.push(entry.into_path());
                continue;
            }
            linked.push((entry.path().to_path_buf(), target));
            entry.into_path()
        } else if entry.file_type().is_some_and(|t| t.is_file()) {
            entry.into_path()
        } else {
            continue;
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let manifest = EXTENSIONS.contains(&ext) || name == "Kustomization";
        if skip_testdata
            && path
                .strip_prefix(dir)
                .is_ok_and(|rel| rel.components().any(|c| c.as_os_str() == TESTDATA))
        {
            if manifest {
                out.testdata.push(path);
            }
            continue;
        }
        let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if kustomize::FILE_NAMES.contains(&name) {
            out.kustomize_dirs.push(parent.clone());
        }
        if name == "Chart.yaml" {
            out.chart_dirs.push(parent);
        }
        if manifest {
            out.files.push(path);
        }
    }
    // A link to a manifest that is read anyway (`latest.yaml -> v2.yaml`) adds nothing but a
    // second copy of its objects: the file is read once, under its own name.
    if !linked.is_empty() {
        let links: BTreeSet<&PathBuf> = linked.iter().map(|(l, _)| l).collect();
        let mut read: BTreeSet<PathBuf> = out
            .files
            .iter()
            .filter(|f| !links.contains(f))
            .filter_map(|f| std::fs::canonicalize(f).ok())
            .collect();
        // Of several links to one file, the first (in path order) stands for it.
        let redundant: BTreeSet<&PathBuf> = linked
            .iter()
            .filter(|(l, t)| out.files.contains(l) && !read.insert(t.clone()))
            .map(|(l, _)| l)
            .collect();
        out.files.retain(|f| !redundant.contains(f));
    }
    (out, errors)
}

/// Why a path named on the command line cannot be scanned, if it cannot: it does not exist,
/// is a link that leads nowhere, or is neither a regular file nor a directory (a FIFO or a
/// device would block or never end).
pub(super) fn unreadable_path(path: &Path) -> Option<String> {
    let Ok(own) = std::fs::symlink_metadata(path) else {
        return Some("does not exist".into());
    };
    let target = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if own.file_type().is_symlink() => {
            return Some(format!(
                "is a symbolic link that cannot be followed (a loop, or a missing target): {e}"
            ));
        }
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    if !target.is_file() && !target.is_dir() {
        return Some("is neither a regular file nor a directory (a FIFO, a device or a socket); not read".into());
    }
    None
}

/// Manifest files under `dir` that only the ignore files (`.gitignore`, `.ignore`) hide.
pub(super) fn hidden_manifests(dir: &Path) -> usize {
    ignore::WalkBuilder::new(dir)
        .hidden(true)
        .ignore(false)
        .git_ignore(false)
        .git_exclude(false)
        .git_global(false)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_str().unwrap_or_default();
            let ext = e.path().extension().and_then(|x| x.to_str()).unwrap_or_default();
            EXTENSIONS.contains(&ext) || name == "Kustomization"
        })
        .take(10_000)
        .count()
}

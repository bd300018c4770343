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
    pub(super) fn new(config: &Config, history: &[String]) -> Filter {
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
            exclude: build(&[config.exclude.as_slice(), history].concat()),
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

/// What git says is committed under a walked directory.
enum Tracked {
    /// Not in a git work tree (no `.git` on the way up): the ignore files decide.
    NotInGit,
    /// Committed files, absolute: read whatever the ignore files say, as `kubectl apply -R`
    /// would apply them.
    Files(BTreeSet<PathBuf>),
    /// In a work tree, but git did not answer: no ignore file is trusted to hide anything.
    Unknown(String),
}

fn tracked_files(dir: &Path) -> Tracked {
    let Ok(absolute) = std::fs::canonicalize(dir) else {
        return Tracked::NotInGit;
    };
    if !absolute.ancestors().any(|d| d.join(".git").symlink_metadata().is_ok()) {
        return Tracked::NotInGit;
    }
    let mut git = std::process::Command::new("git");
    git.arg("-C").arg(&absolute).args(["ls-files", "-z", "--cached", "--"]);
    match crate::process::run(git, std::time::Duration::from_secs(30)) {
        Ok(f) if f.success => Tracked::Files(
            f.stdout
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(|p| absolute.join(p))
                .collect(),
        ),
        Ok(f) => Tracked::Unknown(f.stderr.lines().next().unwrap_or("git failed").trim().to_string()),
        Err(e) => Tracked::Unknown(e.to_string()),
    }
}

/// Walk `dir`; with `skip_testdata`, files under a `testdata` directory below `dir` are set
/// aside (a path named on the command line inside one is still walked). In a git work tree
/// a committed file is read whatever `.gitignore` or `.ignore` say; outside one they decide,
/// and `-v` lists each manifest they hide.
pub(super) fn walk(dir: &Path, skip_testdata: bool) -> (Walked, Vec<String>) {
    let mut out = Walked::default();
    let mut errors = Vec::new();
    let tracked = tracked_files(dir);
    let honour_ignore_files = match &tracked {
        Tracked::Unknown(why) => {
            tracing::warn!(
                "{}: git cannot list the committed files ({}); ignore files hide nothing here",
                crate::diagnostics::printable(&dir.display().to_string()),
                crate::diagnostics::printable(why)
            );
            false
        }
        _ => true,
    };
    // Links to files inside the directory, with their targets.
    let mut linked: Vec<(PathBuf, PathBuf)> = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(true)
        .ignore(honour_ignore_files)
        .git_ignore(honour_ignore_files)
        .git_exclude(honour_ignore_files)
        .git_global(false)
        .require_git(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    // (path, is a symbolic link, is a regular file)
    let mut entries: Vec<(PathBuf, bool, bool)> = Vec::new();
    for entry in walker {
        match entry {
            Ok(e) => {
                let link = e.path_is_symlink();
                let file = e.file_type().is_some_and(|t| t.is_file());
                entries.push((e.into_path(), link, file));
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    if let Tracked::Files(committed) = &tracked {
        add_committed(dir, committed, &mut entries);
    }
    if honour_ignore_files && tracing::enabled!(tracing::Level::INFO) {
        let committed = match &tracked {
            Tracked::Files(files) => files.clone(),
            _ => BTreeSet::new(),
        };
        let not_committed = |p: &PathBuf| std::fs::canonicalize(p).is_ok_and(|c| !committed.contains(&c));
        for hidden in ignored_manifests(dir).into_iter().filter(not_committed) {
            tracing::info!(
                "not read: {} (an ignore file names it)",
                crate::diagnostics::printable(&hidden.display().to_string())
            );
        }
    }
    for (path, is_link, is_file) in entries {
        let path = if is_link {
            // A link to a file inside the walked directory is read as that file would be;
            // one that leads out of it (or nowhere) is reported, never followed.
            let Ok(target) = std::fs::canonicalize(&path) else {
                out.links.push(path);
                continue;
            };
            if target.is_dir() {
                out.linked_dirs.push(path);
                continue;
            }
            if !target.is_file() || !std::fs::canonicalize(dir).is_ok_and(|d| target.starts_with(d)) {
                out.links.push(path);
                continue;
            }
            linked.push((path.clone(), target));
            path
        } else if is_file {
            path
        } else {
            continue;
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let manifest = manifest_name(&path);
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
    drop_redundant_links(&mut out, &linked);
    (out, errors)
}

/// Committed files the walk left out because ignore files name them: added to `entries`
/// (hidden paths stay skipped), in path order.
fn add_committed(dir: &Path, committed: &BTreeSet<PathBuf>, entries: &mut Vec<(PathBuf, bool, bool)>) {
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let seen: BTreeSet<PathBuf> = entries
        .iter()
        .map(|(p, _, _)| {
            std::path::absolute(p)
                .map(|p| crate::source::normalize(&p))
                .unwrap_or_else(|_| p.clone())
        })
        .collect();
    let mut extra: Vec<(PathBuf, bool, bool)> = committed
        .iter()
        .filter_map(|c| Some((c, c.strip_prefix(&root).ok()?)))
        // Hidden files and directories stay skipped, as in the walk.
        .filter(|(_, rel)| {
            !rel.components()
                .any(|part| part.as_os_str().to_string_lossy().starts_with('.'))
        })
        .map(|(c, rel)| (c, dir.join(rel)))
        .filter(|(c, _)| !seen.contains(*c))
        .filter_map(|(_, shown)| {
            let meta = shown.symlink_metadata().ok()?;
            Some((shown, meta.file_type().is_symlink(), meta.is_file()))
        })
        .collect();
    if !extra.is_empty() {
        tracing::info!(
            "{} committed files under {} that ignore files name are read",
            extra.len(),
            crate::diagnostics::printable(&dir.display().to_string())
        );
        entries.append(&mut extra);
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
}

/// A link to a manifest that is read anyway (`latest.yaml -> v2.yaml`) adds nothing but a
/// second copy of its objects: the file is read once, under its own name.
fn drop_redundant_links(out: &mut Walked, linked: &[(PathBuf, PathBuf)]) {
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
    ignored_manifests(dir).len()
}

/// Whether a file's name makes it one discovery reads: a YAML or JSON extension, or kustomize's
/// `Kustomization`.
fn manifest_name(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
    EXTENSIONS.contains(&ext) || path.file_name().is_some_and(|n| n == "Kustomization")
}

/// The manifest files under `dir` that the ignore files hide from the walk (at most 10,000).
fn ignored_manifests(dir: &Path) -> Vec<PathBuf> {
    let manifest = |e: &ignore::DirEntry| e.file_type().is_some_and(|t| t.is_file()) && manifest_name(e.path());
    let walk = |honour: bool| {
        ignore::WalkBuilder::new(dir)
            .hidden(true)
            .ignore(honour)
            .git_ignore(honour)
            .git_exclude(honour)
            .git_global(false)
            .require_git(false)
            .build()
            .flatten()
            .filter(manifest)
            .map(ignore::DirEntry::into_path)
            .take(10_000)
    };
    let read: BTreeSet<PathBuf> = walk(true).collect();
    let mut hidden: Vec<PathBuf> = walk(false).filter(|p| !read.contains(p)).collect();
    hidden.sort();
    hidden
}

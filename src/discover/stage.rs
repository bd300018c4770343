//! Kustomizations that build on remote bases or files, built from a staged copy once those are
//! fetched (with the network allowed, or from the cache).
//!
//! kustomize would fetch a remote base itself, past the host policy, so it never does: the
//! repository's files are copied to a temporary directory, each remote entry of the
//! kustomizations the render builds on is fetched by kivi-lint (`fetch`: a Git base through
//! `Fetcher::git`, a file through the same policy), and the copied kustomization names the
//! fetched copy instead. A fetched base that builds on anything remote itself, a plugin, or a
//! path outside its checkout is not built. Objects of fetched content are located at the
//! entry that names it; the others at their files in the repository.

use super::*;

/// Files copied at most: a repository larger than this is not staged.
const MAX_STAGED_BYTES: u64 = 256 << 20;

/// A staged copy, alive until its render is done.
pub(super) struct Staged {
    _dir: tempfile::TempDir,
    /// The copy of `repository`.
    pub(super) root: PathBuf,
    pub(super) repository: PathBuf,
    /// Each fetched base or file (its directory or file), and the entry that named it.
    remotes: Vec<(PathBuf, Span)>,
}

impl Staged {
    /// Where a path of the repository is in the copy.
    pub(super) fn copy_of(&self, path: &Path) -> PathBuf {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| crate::source::normalize(&absolute(path)));
        self.root.join(path.strip_prefix(&self.repository).unwrap_or(&path))
    }

    /// Where a file the render read is: its path in the repository, or (fetched content) the
    /// entry that named it.
    pub(super) fn original(&self, path: &Path) -> Result<PathBuf, Span> {
        if let Some((_, span)) = self.remotes.iter().find(|(r, _)| path.starts_with(r)) {
            return Err(*span);
        }
        Ok(self.repository.join(path.strip_prefix(&self.root).unwrap_or(path)))
    }
}

/// Why a render cannot be staged.
enum NotStaged {
    /// A rendering limit: the entry, the limit and why.
    Limit(Span, coverage::Limit, String),
    /// An error at the entry.
    Error(Span, String),
}

/// A remote entry as kustomize reads it.
#[derive(Debug, PartialEq)]
enum Remote {
    /// A Git repository (`url`), at `reference`, and the directory in it.
    Git {
        url: String,
        reference: String,
        path: String,
    },
    /// A file over https.
    File(String),
}

fn remote(entry: &str) -> Option<Remote> {
    let entry = entry.trim().trim_start_matches("git::");
    let (address, query) = entry.split_once('?').unwrap_or((entry, ""));
    let reference = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("ref=").or_else(|| kv.strip_prefix("version=")))
        .unwrap_or_default()
        .to_string();
    let address = fetch::https_url(address);
    let address = if address.contains("://") {
        address
    } else {
        format!("https://{address}")
    };
    let url = url::Url::parse(&address).ok()?;
    let host = url.host_str()?.to_string();
    let path = url.path().trim_start_matches('/');
    let base = format!("{}://{}", url.scheme(), url.authority());
    let git = |repo: &str, sub: &str| Remote::Git {
        url: format!("{base}/{}", repo.trim_end_matches('/')),
        reference: reference.clone(),
        path: sub.trim_matches('/').to_string(),
    };
    if let Some((repo, sub)) = path.split_once("//") {
        return Some(git(repo, sub));
    }
    if let Some(i) = path
        .find(".git/")
        .map(|i| i + 4)
        .or(path.ends_with(".git").then_some(path.len()))
    {
        return Some(git(&path[..i], &path[i..]));
    }
    if ["github.com", "gitlab.com", "bitbucket.org"].contains(&host.as_str()) {
        let mut segments = path.splitn(3, '/');
        let (org, repo) = (segments.next()?, segments.next()?);
        return Some(git(&format!("{org}/{repo}"), segments.next().unwrap_or_default()));
    }
    let file = [".yaml", ".yml", ".json"].iter().any(|e| path.ends_with(e));
    (file && reference.is_empty()).then_some(Remote::File(address))
}

/// What becomes of a render whose kustomizations name remote entries.
pub(super) enum Staging {
    /// Build this copy.
    Staged(Staged),
    /// It cannot be built: an error at this span.
    Error(Span, String),
    /// It is not built: a rendering limit the caller records (a note, or an error with
    /// `--strict`), with its help.
    Left(Span, coverage::NotRendered, &'static str),
    /// Nothing remote to stage, or the network is off and the cache lacks it: the render's
    /// limits are noted as for any other.
    NotStaged,
}

/// Stage the render of `k` when every limit of `closure` (what it builds on) is a remote entry.
pub(super) fn remote_closure(
    closure: &[&kustomize::Kustomization],
    k: &kustomize::Kustomization,
    repositories: &[PathBuf],
    fetcher: &fetch::Fetcher,
    sources: &mut SourceMap,
) -> Staging {
    let mut limits = closure.iter().flat_map(|k| &k.limits).peekable();
    if limits.peek().is_none() || !limits.all(|h| h.remote.is_some()) {
        return Staging::NotStaged;
    }
    let repository = std::fs::canonicalize(&k.dir)
        .ok()
        .and_then(|c| repositories.iter().find(|r| c.starts_with(r)).cloned());
    let Some(repository) = repository else {
        return Staging::NotStaged;
    };
    match stage(closure, &repository, fetcher, sources) {
        Ok(staged) => Staging::Staged(staged),
        Err(NotStaged::Error(span, message)) => Staging::Error(span, message),
        Err(NotStaged::Limit(_, coverage::Limit::NetworkOff, _)) => Staging::NotStaged,
        Err(NotStaged::Limit(span, limit, detail)) => Staging::Left(
            span,
            coverage::NotRendered {
                limit,
                source: format!("kustomization {}", display_path(&k.dir).display()),
                detail,
            },
            "vendor the base into the repository, or exclude this kustomization",
        ),
    }
}

/// Stage a render: fetch each remote entry of `closure` (the kustomizations the render builds
/// on, all of `repository`), then copy the repository and point the copied entries at what was
/// fetched.
fn stage(
    closure: &[&kustomize::Kustomization],
    repository: &Path,
    fetcher: &fetch::Fetcher,
    sources: &mut SourceMap,
) -> Result<Staged, NotStaged> {
    let hits: Vec<(&kustomize::Kustomization, &kustomize::LimitHit)> = closure
        .iter()
        .flat_map(|k| k.limits.iter().map(move |h| (*k, h)))
        .collect();
    let Some((_, first)) = hits.first() else {
        return Err(NotStaged::Error(
            Span::point(FileId(0), Location::START),
            "nothing to stage".into(),
        ));
    };
    if let Some((_, hit)) = hits.iter().find(|(_, h)| h.remote.is_none()) {
        return Err(NotStaged::Limit(hit.span, hit.limit, hit.detail.clone()));
    }
    // Everything is fetched before anything is copied: with the network off and nothing in
    // the cache, nothing is copied.
    enum Got {
        Base { tree: PathBuf, base: PathBuf },
        File { url: String, bytes: Vec<u8> },
    }
    let mut got = Vec::new();
    for (k, hit) in &hits {
        let entry = hit.remote.as_deref().unwrap_or_default();
        let fetched = match remote(entry) {
            Some(Remote::Git { url, reference, path }) => {
                let tree = fetcher.git(&url, &reference).map_err(|e| failure(hit, e))?;
                let base = crate::source::normalize(&tree.join(&path));
                if !base.starts_with(&tree) || !base.is_dir() {
                    return Err(NotStaged::Error(
                        hit.span,
                        format!(
                            "`{}` is not a directory of {}",
                            crate::diagnostics::printable(&path),
                            crate::diagnostics::printable(&url)
                        ),
                    ));
                }
                built_alone(&base, &tree, sources)
                    .map_err(|why| NotStaged::Limit(hit.span, coverage::Limit::NotFetched, why))?;
                Got::Base { tree, base }
            }
            Some(Remote::File(url)) => {
                let bytes = fetcher.file(&url).map_err(|e| failure(hit, e))?;
                Got::File { url, bytes }
            }
            None => {
                return Err(NotStaged::Limit(
                    hit.span,
                    coverage::Limit::NotFetched,
                    format!(
                        "the remote resource `{}` is neither a Git base nor a file kivi-lint fetches",
                        crate::diagnostics::printable(entry)
                    ),
                ));
            }
        };
        got.push((*k, *hit, fetched));
    }
    let at = first.span;
    let dir = crate::process::temporary_dir("stage").map_err(|e| NotStaged::Error(at, format!("cannot stage: {e}")))?;
    let copy = dir.path().join("repository");
    copy_tree(repository, &copy).map_err(|why| NotStaged::Error(at, why))?;
    let mut staged = Staged {
        _dir: dir,
        root: copy,
        repository: repository.to_path_buf(),
        remotes: Vec::new(),
    };
    let mut edits: BTreeMap<PathBuf, Vec<(Span, String)>> = BTreeMap::new();
    for (k, hit, fetched) in got {
        let written_in = staged.copy_of(&k.dir);
        let target = match fetched {
            Got::Base { tree, base } => {
                staged.remotes.push((tree, hit.span));
                base
            }
            Got::File { url, bytes } => {
                let file = written_in.join(format!("kivi-lint-remote-{}.yaml", fetch_hash(&url)));
                std::fs::write(&file, bytes).map_err(|e| NotStaged::Error(hit.span, e.to_string()))?;
                staged.remotes.push((file.clone(), hit.span));
                file
            }
        };
        let relative = kustomize::relative_path(&written_in, &target);
        edits.entry(staged.copy_of(&k.file)).or_default().push((
            hit.span,
            serde_json::to_string(&relative.to_string_lossy()).unwrap_or_default(),
        ));
    }
    for (file, mut list) in edits {
        rewrite(&file, &mut list).map_err(|why| NotStaged::Error(at, why))?;
    }
    Ok(staged)
}

fn fetch_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

fn failure(hit: &kustomize::LimitHit, error: fetch::FetchError) -> NotStaged {
    match error {
        fetch::FetchError::NetworkOff => NotStaged::Limit(hit.span, hit.limit, hit.detail.clone()),
        fetch::FetchError::Refused(why) | fetch::FetchError::Failed(why) => NotStaged::Error(
            hit.span,
            format!(
                "the remote resource `{}` cannot be fetched: {}",
                crate::diagnostics::printable(hit.remote.as_deref().unwrap_or_default()),
                crate::diagnostics::printable(&why)
            ),
        ),
    }
}

/// A fetched base is built as it is: nothing remote in it, no plugin, nothing outside its
/// checkout.
fn built_alone(base: &Path, tree: &Path, sources: &mut SourceMap) -> Result<(), String> {
    let mut queue = vec![base.to_path_buf()];
    let mut seen = BTreeSet::new();
    let trees = [tree.to_path_buf()];
    while let Some(dir) = queue.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let Some(file) = kustomize::kustomization_file(&dir) else {
            continue;
        };
        let mut k = kustomize::read(&dir, &file, sources);
        kustomize::confine(&mut k, &trees);
        if let Some(problem) = k.problems.first() {
            return Err(format!("the fetched base cannot be built: {}", problem.message));
        }
        if let Some(hit) = k.limits.first() {
            return Err(format!(
                "the fetched base builds on what kivi-lint does not fetch: {}",
                hit.detail
            ));
        }
        queue.extend(k.dirs.iter().cloned());
    }
    Ok(())
}

/// Replace each entry (a one-line scalar at its span) of a copied kustomization file.
fn rewrite(file: &Path, edits: &mut [(Span, String)]) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    // From the last: an edit does not move the ones before it.
    edits.sort_by_key(|(span, _)| std::cmp::Reverse((span.start.line, span.start.column)));
    for (span, replacement) in edits.iter() {
        if span.start.line != span.end.line {
            return Err("a remote entry spans lines".into());
        }
        let line = lines
            .get_mut(span.start.line.saturating_sub(1) as usize)
            .ok_or("a remote entry past the end of its file")?;
        let byte = |column: u32| {
            line.char_indices()
                .nth(column.saturating_sub(1) as usize)
                .map_or(line.len(), |(i, _)| i)
        };
        let (start, end) = (byte(span.start.column), byte(span.end.column));
        line.replace_range(start..end, replacement);
    }
    std::fs::write(file, lines.join("\n")).map_err(|e| format!("{}: {e}", file.display()))
}

/// Copy the regular files of `from` (no `.git`, no links) to `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let mut total = 0u64;
    let mut pending = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = pending.pop() {
        std::fs::create_dir_all(&dst).map_err(|e| format!("{}: {e}", dst.display()))?;
        let listing = std::fs::read_dir(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        for entry in listing.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            if kind.is_dir() {
                pending.push((entry.path(), dst.join(&name)));
            } else if kind.is_file() {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                if size > MAX_FILE_BYTES {
                    continue;
                }
                total += size;
                if total > MAX_STAGED_BYTES {
                    return Err(format!(
                        "the repository is larger than {} MiB: it is not copied to build remote bases",
                        MAX_STAGED_BYTES >> 20
                    ));
                }
                std::fs::copy(entry.path(), dst.join(&name)).map_err(|e| format!("{}: {e}", entry.path().display()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_entries_read_as_kustomize_reads_them() {
        let git = |url: &str, reference: &str, path: &str| {
            Some(Remote::Git {
                url: url.into(),
                reference: reference.into(),
                path: path.into(),
            })
        };
        assert_eq!(
            remote("https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1"),
            git(
                "https://github.com/kubernetes-sigs/kustomize",
                "v3.3.1",
                "examples/helloWorld"
            )
        );
        assert_eq!(
            remote("github.com/org/repo/deploy/base?ref=main"),
            git("https://github.com/org/repo", "main", "deploy/base")
        );
        assert_eq!(
            remote("git@github.com:org/repo.git/base?ref=v1"),
            git("https://github.com/org/repo.git", "v1", "base")
        );
        assert_eq!(
            remote("https://example.com/team/platform.git//base"),
            git("https://example.com/team/platform.git", "", "base")
        );
        assert_eq!(
            remote("https://raw.example.com/x/crds.yaml"),
            Some(Remote::File("https://raw.example.com/x/crds.yaml".into()))
        );
        assert_eq!(remote("https://example.com/something"), None);
    }
}

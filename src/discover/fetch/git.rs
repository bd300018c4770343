//! Git repositories other than this one (a Flux GitRepository, an Argo CD `repoURL`), fetched
//! only with the network allowed, through the same host policy as charts.
//!
//! `git` runs with the addresses the policy checked pinned (`http.curloptResolve`: no second
//! lookup), redirects off, only the `https` transport (and `http` for a host named with
//! `--allow-host`), no proxy, no credentials, no system or user configuration, no hooks, and
//! symbolic links checked out as plain files, so nothing in the repository reaches outside its
//! checkout. The checkout (without `.git`) is kept in the cache under the URL and reference: a
//! run with the network off uses it, a run with it on fetches the reference again (a branch
//! moves).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{FetchError, Fetched, Fetcher, hex};

const GIT_TIMEOUT: Duration = Duration::from_secs(180);

/// `git@host:path` (scp-like SSH) as the same repository over https; other URLs as written.
pub(crate) fn https_url(url: &str) -> String {
    match url.strip_prefix("git@").and_then(|rest| rest.split_once(':')) {
        Some((host, path)) if !path.starts_with('/') => format!("https://{host}/{path}"),
        _ => url
            .strip_prefix("ssh://git@")
            .map_or_else(|| url.to_string(), |rest| format!("https://{rest}")),
    }
}

/// A reference git may be given on its command line: a branch, a tag or a commit.
fn valid_reference(reference: &str) -> bool {
    !reference.starts_with('-')
        && !reference.contains("..")
        && reference.len() <= 200
        && reference
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+".contains(c))
}

impl Fetcher {
    /// The files of `url` at `reference` (a branch, a tag or a commit; empty is the remote's
    /// default branch), in a directory of the cache (or of this run).
    pub fn git(&self, url: &str, reference: &str) -> Result<PathBuf, FetchError> {
        let url = https_url(url);
        let parsed = url::Url::parse(&url).map_err(|e| FetchError::Refused(format!("`{url}` is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "https" | "http") || !parsed.username().is_empty() || parsed.password().is_some()
        {
            return Err(FetchError::Refused(format!(
                "`{url}` is not fetched: only https Git repositories without credentials"
            )));
        }
        if !reference.is_empty() && !valid_reference(reference) {
            return Err(FetchError::Refused(format!("`{reference}` is not a Git reference")));
        }
        let key = format!("{url}\n{reference}");
        let done = |tree: &PathBuf| {
            self.checkouts
                .lock()
                .expect("no panics while holding the lock")
                .push((key.clone(), tree.clone()));
        };
        if let Some((_, tree)) = self
            .checkouts
            .lock()
            .expect("no panics while holding the lock")
            .iter()
            .find(|(k, _)| *k == key)
        {
            return Ok(tree.clone());
        }
        let name = hex(&blake3::hash(key.as_bytes()).as_bytes()[..16]);
        let base = match (&self.network.cache, &self.scratch) {
            (Some(cache), _) => cache.join("git"),
            (None, Some(scratch)) => scratch.path().join("git"),
            (None, None) => return Err(FetchError::NetworkOff),
        };
        let tree = base.join(&name);
        let commit_file = base.join(format!("{name}.commit"));
        if !self.network.allowed {
            let commit = std::fs::read_to_string(&commit_file).map_err(|_| FetchError::NetworkOff)?;
            if !tree.is_dir() {
                return Err(FetchError::NetworkOff);
            }
            self.record(&url, reference, commit.trim(), true);
            done(&tree);
            return Ok(tree);
        }
        let addresses = self.addresses(&parsed)?;
        let host = parsed
            .host_str()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = parsed.port_or_known_default().unwrap_or(443);
        let pinned: Vec<String> = addresses
            .iter()
            .map(|a| match a.ip() {
                std::net::IpAddr::V6(v6) => format!("[{v6}]"),
                v4 => v4.to_string(),
            })
            .collect();
        std::fs::create_dir_all(&base).map_err(|e| FetchError::Failed(format!("{}: {e}", base.display())))?;
        let work = tempfile::Builder::new()
            .prefix(&format!("{name}.fetching-"))
            .tempdir_in(&base)
            .map_err(|e| FetchError::Failed(format!("{}: {e}", base.display())))?;
        let settings = Settings {
            resolve: format!("{host}:{port}:{}", pinned.join(",")),
            plain_http: parsed.scheme() == "http",
            home: work.path().to_path_buf(),
        };
        let checkout = work.path().join("tree");
        let run = |args: &[&str]| settings.run(&checkout, args);
        std::fs::create_dir_all(&checkout).map_err(|e| FetchError::Failed(e.to_string()))?;
        run(&["init", "--quiet", "--template="])?;
        let wanted = if reference.is_empty() { "HEAD" } else { reference };
        // A shallow fetch where the server can; the dumb http protocol cannot.
        if run(&["fetch", "--quiet", "--no-tags", "--depth", "1", "--", &url, wanted]).is_err() {
            run(&["fetch", "--quiet", "--no-tags", "--", &url, wanted])?;
        }
        run(&["checkout", "--quiet", "--detach", "FETCH_HEAD"])?;
        let commit = run(&["rev-parse", "FETCH_HEAD"])?;
        std::fs::remove_dir_all(checkout.join(".git")).map_err(|e| FetchError::Failed(e.to_string()))?;
        // Replace the kept checkout whole: a reader never sees half of one.
        let _ = std::fs::remove_dir_all(&tree);
        std::fs::rename(&checkout, &tree).map_err(|e| FetchError::Failed(format!("{}: {e}", tree.display())))?;
        crate::source::write_replacing(&commit_file, commit.trim().as_bytes())
            .map_err(|e| FetchError::Failed(format!("{}: {e}", commit_file.display())))?;
        self.record(&url, reference, commit.trim(), false);
        done(&tree);
        Ok(tree)
    }

    fn record(&self, url: &str, reference: &str, commit: &str, cached: bool) {
        self.fetched
            .lock()
            .expect("no panics while holding the lock")
            .push(Fetched {
                url: url.to_string(),
                name: String::new(),
                version: reference.to_string(),
                digest: commit.to_string(),
                cached,
            });
    }
}

/// How `git` runs for a fetch.
struct Settings {
    /// `host:port:address[,address]`: the addresses the policy checked.
    resolve: String,
    plain_http: bool,
    /// An empty home: no user configuration, no credentials.
    home: PathBuf,
}

impl Settings {
    fn run(&self, dir: &Path, args: &[&str]) -> Result<String, FetchError> {
        let mut command = Command::new("git");
        command.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        command
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "true")
            .env("LC_ALL", "C")
            .current_dir(dir);
        let allow_http = if self.plain_http { "always" } else { "never" };
        for (key, value) in [
            ("protocol.allow", "never"),
            ("protocol.https.allow", "always"),
            ("protocol.http.allow", allow_http),
            ("http.followRedirects", "false"),
            ("http.curloptResolve", self.resolve.as_str()),
            ("http.proxy", ""),
            ("credential.helper", ""),
            ("core.symlinks", "false"),
            ("core.hooksPath", "/dev/null"),
            ("core.fsmonitor", "false"),
            ("submodule.recurse", "false"),
        ] {
            command.arg("-c").arg(format!("{key}={value}"));
        }
        command.args(args);
        let finished = crate::process::run(command, GIT_TIMEOUT).map_err(|e| FetchError::Failed(e.to_string()))?;
        if !finished.success {
            let why = finished.stderr.lines().last().unwrap_or_default().trim().to_string();
            return Err(FetchError::Failed(format!(
                "git {}: {why}",
                args.first().unwrap_or(&"")
            )));
        }
        Ok(finished.stdout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_references_are_taken_as_git_takes_them_or_refused() {
        assert_eq!(
            https_url("git@github.com:org/repo.git"),
            "https://github.com/org/repo.git"
        );
        assert_eq!(
            https_url("ssh://git@github.com/org/repo"),
            "https://github.com/org/repo"
        );
        assert_eq!(https_url("https://example.com/r.git"), "https://example.com/r.git");
        assert!(valid_reference("v1.2.3") && valid_reference("main") && valid_reference("feature/x"));
        assert!(!valid_reference("--upload-pack=touch /tmp/x") && !valid_reference("a b") && !valid_reference("a..b"));
        let on = super::super::Network {
            allowed: true,
            ..Default::default()
        };
        let fetcher = Fetcher::new(on);
        for url in [
            "file:///etc",
            "ext::sh -c touch% /tmp/x",
            "https://user:pw@example.com/r",
            "https://127.0.0.1/r",
        ] {
            assert!(matches!(fetcher.git(url, "main"), Err(FetchError::Refused(_))), "{url}");
        }
    }
}

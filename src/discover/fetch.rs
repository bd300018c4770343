//! Remote Helm charts, of Helm chart repositories and of OCI registries (`oci`), fetched only
//! when the user allowed the network, through a host policy, into the cache.
//!
//! The network is off unless `--allow-network` (or `render.network` in the config) turns it
//! on. Even then a request goes only to an `https` host whose every address is public: never
//! loopback, link-local (cloud metadata), private, shared or unspecified ranges, and never
//! `file://`. An allow-list narrows this further (`render.allowHosts`); only a host named
//! with `--allow-host` on the command line may be on loopback or a private range, or be
//! reached over plain `http`, so a pull request cannot open the runner's network by editing
//! the config. Each connection goes to the addresses that were checked (no second lookup),
//! redirects are followed by hand and checked hop by hop, and proxies from the environment are
//! not used.
//!
//! What is fetched is kept in the cache: a repository's `index.yaml` and each chart archive,
//! keyed by repository, name, version and digest (checked against the index's sha256). A run
//! with the network off renders from the cache, so a CI cache makes the next run offline.

use std::io::Read as _;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::yaml::{self, Node};

mod git;
mod oci;

pub(crate) use git::https_url;

/// What the user allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Network {
    /// Requests may be made at all.
    pub allowed: bool,
    /// `--no-network`: the config may not turn the network on.
    pub forbidden: bool,
    /// `--allow-host`: hosts that may be anywhere, loopback and private ranges included, and
    /// over `http`.
    pub trusted_hosts: Vec<String>,
    /// `render.allowHosts` of the config: only these public hosts, when not empty.
    pub allowed_hosts: Vec<String>,
    /// Where fetched indexes and charts are kept; `None` keeps nothing (`--no-cache`).
    pub cache: Option<PathBuf>,
}

/// One chart archive or Git checkout a render used, fetched now or earlier: recorded in the
/// report. A Git checkout has no `name`; its `version` is the reference and `digest` the
/// commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fetched {
    pub url: String,
    pub name: String,
    pub version: String,
    /// The sha256 of the archive, as the repository's index gives it (checked), else computed.
    pub digest: String,
    /// Read from the cache, not the network.
    pub cached: bool,
}

/// An HTTP response: its status, its body (empty for an error status), and the challenge of
/// a 401.
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) body: Vec<u8>,
    pub(super) authenticate: Option<String>,
}

/// Why a chart could not be had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchError {
    /// The network is off, and the cache does not have it: a rendering limit.
    NetworkOff,
    /// The policy refuses the URL: an input error, the repository asks for what it may not.
    Refused(String),
    /// The request or the repository failed.
    Failed(String),
}

const MAX_INDEX_BYTES: u64 = 32 << 20;
const MAX_CHART_BYTES: u64 = 32 << 20;
const MAX_REDIRECTS: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(60);

pub struct Fetcher {
    network: Network,
    fetched: Mutex<Vec<Fetched>>,
    /// Where charts go for this run only, without a cache.
    scratch: Option<tempfile::TempDir>,
    /// Git checkouts made by this run, by URL and reference: each is fetched once.
    checkouts: Mutex<Vec<(String, PathBuf)>>,
}

impl Fetcher {
    pub fn new(network: Network) -> Fetcher {
        let scratch = if network.cache.is_none() && network.allowed {
            tempfile::Builder::new().prefix("kivi-lint-charts-").tempdir().ok()
        } else {
            None
        };
        Fetcher {
            network,
            fetched: Mutex::new(Vec::new()),
            scratch,
            checkouts: Mutex::new(Vec::new()),
        }
    }

    /// Every chart used, in the order of first use, each once.
    pub fn fetched(&self) -> Vec<Fetched> {
        let mut all = self.fetched.lock().expect("no panics while holding the lock").clone();
        // Fetched once, then read from the cache by the next render: one chart.
        all.sort_by(|a, b| (&a.url, &a.version, &a.digest, a.cached).cmp(&(&b.url, &b.version, &b.digest, b.cached)));
        all.dedup_by(|b, a| (&a.url, &a.version, &a.digest) == (&b.url, &b.version, &b.digest));
        all
    }

    /// The archive of chart `name` at the highest version of `repository` (a Helm chart
    /// repository's URL) that `constraint` (Helm's syntax; empty is any) admits.
    /// An `oci://` repository is a path of an OCI registry (see `oci`).
    pub fn chart(&self, repository: &str, name: &str, constraint: &str) -> Result<PathBuf, FetchError> {
        if repository.starts_with("oci://") {
            return self.oci_chart(repository, name, constraint);
        }
        let base = url::Url::parse(repository.trim_end_matches('/'))
            .map_err(|e| FetchError::Refused(format!("`{repository}` is not a URL: {e}")))?;
        if !matches!(base.scheme(), "https" | "http") {
            return Err(FetchError::Refused(format!(
                "`{}` repositories are not fetched (only Helm chart repositories over https)",
                base.scheme()
            )));
        }
        let index_url = format!("{}/index.yaml", base.as_str().trim_end_matches('/'));
        let index_file = self.cached("index", &index_url, "yaml");
        let index = if self.network.allowed {
            let bytes = self.get(&index_url, MAX_INDEX_BYTES)?;
            if let Some(f) = &index_file {
                store(f, &bytes);
            }
            bytes
        } else {
            match index_file.as_ref().and_then(|f| std::fs::read(f).ok()) {
                Some(bytes) => bytes,
                None => return Err(FetchError::NetworkOff),
            }
        };
        let entry = choose(&index, name, constraint).map_err(FetchError::Failed)?;
        let url = base
            .join(&entry.url)
            .or_else(|_| url::Url::parse(&format!("{}/{}", base.as_str().trim_end_matches('/'), entry.url)))
            .map_err(|e| FetchError::Failed(format!("the index's URL `{}` for {name}: {e}", entry.url)))?;
        let key = format!("{repository}\n{name}\n{}\n{}", entry.version, entry.digest);
        let name_of = |key: &str| format!("{}.tgz", hex(&blake3::hash(key.as_bytes()).as_bytes()[..16]));
        let Some(file) = self
            .cached("charts", &key, "tgz")
            .or_else(|| self.scratch.as_ref().map(|d| d.path().join(name_of(&key))))
        else {
            return Err(FetchError::NetworkOff);
        };
        let on_disk = digest_of(&file);
        let cached =
            on_disk.is_some() && (entry.digest.is_empty() || on_disk.as_deref() == Some(entry.digest.as_str()));
        let digest = if cached {
            on_disk.unwrap_or_default()
        } else {
            if !self.network.allowed {
                return Err(FetchError::NetworkOff);
            }
            let bytes = self.get(url.as_str(), MAX_CHART_BYTES)?;
            let digest = hex(&sha2::Sha256::digest(&bytes));
            if !entry.digest.is_empty() && digest != entry.digest {
                return Err(FetchError::Failed(format!(
                    "{url} has sha256 {digest}, not the index's {}",
                    entry.digest
                )));
            }
            store(&file, &bytes);
            digest
        };
        self.fetched
            .lock()
            .expect("no panics while holding the lock")
            .push(Fetched {
                url: url.to_string(),
                name: name.to_string(),
                version: entry.version.clone(),
                digest,
                cached,
            });
        Ok(file)
    }

    /// A remote file a kustomization names (`https://…/x.yaml`): fetched with the network
    /// allowed and kept in the cache, or read from it.
    pub fn file(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let kept = self.cached("files", url, "yaml");
        if !self.network.allowed {
            return kept.and_then(|f| std::fs::read(f).ok()).ok_or(FetchError::NetworkOff);
        }
        let bytes = self.get(url, crate::source::MAX_FILE_BYTES)?;
        if let Some(f) = &kept {
            store(f, &bytes);
        }
        Ok(bytes)
    }

    /// `<cache>/helm/<what>/<hash of key>.<ext>`, if there is a cache.
    pub(super) fn cached(&self, what: &str, key: &str, ext: &str) -> Option<PathBuf> {
        let dir = self.network.cache.as_ref()?.join("helm").join(what);
        std::fs::create_dir_all(&dir).ok()?;
        Some(dir.join(format!("{}.{ext}", hex(&blake3::hash(key.as_bytes()).as_bytes()[..16]))))
    }

    /// GET `url` through the policy, following redirects by hand: its body, or why not.
    pub(super) fn get(&self, url: &str, limit: u64) -> Result<Vec<u8>, FetchError> {
        let response = self.request(url, &[], limit)?;
        match response.status {
            200..=299 => Ok(response.body),
            code => Err(FetchError::Failed(format!("{url}: HTTP {code}"))),
        }
    }

    /// GET `url` through the policy with `headers`, following redirects by hand (an
    /// `Authorization` header is not sent on to another host). Any HTTP status is a response.
    pub(super) fn request(&self, url: &str, headers: &[(&str, &str)], limit: u64) -> Result<Response, FetchError> {
        let mut url = url::Url::parse(url).map_err(|e| FetchError::Refused(format!("`{url}`: {e}")))?;
        let first_host = url.host_str().map(str::to_string);
        for _ in 0..=MAX_REDIRECTS {
            let addresses = self.addresses(&url)?;
            let agent = ureq::AgentBuilder::new()
                .redirects(0)
                .timeout(TIMEOUT)
                .resolver(move |_: &str| Ok(addresses.clone()))
                .build();
            let mut request = agent.get(url.as_str());
            for (name, value) in headers {
                if name.eq_ignore_ascii_case("authorization") && url.host_str().map(str::to_string) != first_host {
                    continue;
                }
                request = request.set(name, value);
            }
            let response = match request.call() {
                Ok(r) => r,
                Err(ureq::Error::Status(code, r)) => {
                    return Ok(Response {
                        status: code,
                        body: Vec::new(),
                        authenticate: r.header("www-authenticate").map(str::to_string),
                    });
                }
                Err(e) => return Err(FetchError::Failed(format!("{url}: {e}"))),
            };
            if (300..400).contains(&response.status()) {
                let Some(next) = response.header("location") else {
                    return Err(FetchError::Failed(format!("{url}: a redirect without a location")));
                };
                url = url
                    .join(next)
                    .map_err(|e| FetchError::Failed(format!("{url}: redirect to `{next}`: {e}")))?;
                continue;
            }
            let status = response.status();
            let mut body = Vec::new();
            response
                .into_reader()
                .take(limit + 1)
                .read_to_end(&mut body)
                .map_err(|e| FetchError::Failed(format!("{url}: {e}")))?;
            if body.len() as u64 > limit {
                return Err(FetchError::Failed(format!("{url} is larger than {} MiB", limit >> 20)));
            }
            return Ok(Response {
                status,
                body,
                authenticate: None,
            });
        }
        Err(FetchError::Failed(format!(
            "{url}: more than {MAX_REDIRECTS} redirects"
        )))
    }

    /// The addresses a request to `url` may go to, or why it may not be made.
    fn addresses(&self, url: &url::Url) -> Result<Vec<SocketAddr>, FetchError> {
        let host = url
            .host_str()
            .ok_or_else(|| FetchError::Refused(format!("`{url}` has no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let trusted = self.network.trusted_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host));
        let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && trusted);
        if !scheme_ok {
            return Err(FetchError::Refused(format!(
                "`{url}` is not fetched: only https, unless its host is named with --allow-host"
            )));
        }
        if !trusted
            && !self.network.allowed_hosts.is_empty()
            && !self.network.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host))
        {
            return Err(FetchError::Refused(format!("`{host}` is not in `render.allowHosts`")));
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| FetchError::Failed(format!("`{host}`: {e}")))?
            .collect();
        if addresses.is_empty() {
            return Err(FetchError::Failed(format!("`{host}` has no address")));
        }
        if !trusted && let Some(a) = addresses.iter().find(|a| !is_public(a.ip())) {
            return Err(FetchError::Refused(format!(
                "`{host}` is at {}, which is not a public address: only a host named with --allow-host may be",
                a.ip()
            )));
        }
        Ok(addresses)
    }
}

/// Whether an address is on the public internet: not loopback, link-local, private, shared
/// (carrier-grade NAT), unspecified, broadcast, documentation, multicast or unique-local.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8))
        }
    }
}

/// One version of a chart in a repository's index.
#[derive(Debug, PartialEq)]
struct Entry {
    version: String,
    url: String,
    digest: String,
}

/// The entry of `name` with the highest version `constraint` admits.
fn choose(index: &[u8], name: &str, constraint: &str) -> Result<Entry, String> {
    let text = String::from_utf8_lossy(index);
    let stream = yaml::parse(&text, crate::source::FileId(u32::MAX), &yaml::Limits::default());
    let root = stream.documents.first().map(|d| &d.root).ok_or("the index is empty")?;
    let versions = root
        .at(&["entries", name])
        .and_then(Node::as_seq)
        .ok_or_else(|| format!("the repository's index has no chart `{name}`"))?;
    let admits = constraint_admits(constraint);
    versions
        .iter()
        .filter_map(|v| {
            let version = v.get("version")?.scalar_text()?;
            let parsed = semver::Version::parse(version.trim_start_matches('v')).ok()?;
            let url = v.get("urls")?.as_seq()?.first()?.as_str()?.to_string();
            let digest = v.get("digest").and_then(Node::as_str).unwrap_or_default().to_string();
            admits(&parsed, &version).then_some((parsed, Entry { version, url, digest }))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, e)| e)
        .ok_or_else(|| format!("no version of `{name}` satisfies `{constraint}`"))
}

/// Helm's version constraints (Masterminds semver): `||` between alternatives, comparators
/// separated by spaces or commas, `x`/`*` wildcards, `~`, `^`; empty or `*` admits any release.
fn constraint_admits(constraint: &str) -> impl Fn(&semver::Version, &str) -> bool {
    let constraint = constraint.trim().to_string();
    let alternatives: Vec<Option<semver::VersionReq>> = constraint
        .split("||")
        .map(|group| {
            let mut comparators: Vec<String> = Vec::new();
            for token in group.split([' ', ',']).filter(|t| !t.is_empty()) {
                let token = token.replace(".x", ".*").replace(".X", ".*");
                // `>= 1.2` is one comparator written with a space.
                match comparators.last_mut() {
                    Some(last) if last.chars().all(|c| "<>=~^!".contains(c)) => last.push_str(&token),
                    _ => comparators.push(token),
                }
            }
            let text = comparators
                .iter()
                .map(|c| {
                    let c = c.trim_start_matches('v').replace(">=v", ">=").replace("=v", "=");
                    // A bare version is that version (Cargo's reading would be `^`).
                    if c.starts_with(|ch: char| ch.is_ascii_digit()) && !c.contains('*') {
                        format!("={c}")
                    } else {
                        c
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            if text.is_empty() || text == "*" {
                return None;
            }
            semver::VersionReq::parse(&text).ok()
        })
        .collect();
    move |version: &semver::Version, raw: &str| {
        if constraint.is_empty() || constraint == "*" {
            return version.pre.is_empty();
        }
        if alternatives.iter().all(Option::is_none) {
            return raw == constraint;
        }
        alternatives.iter().flatten().any(|r| r.matches(version))
    }
}

fn digest_of(file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).ok()?;
    Some(hex(&sha2::Sha256::digest(&bytes)))
}

fn store(file: &Path, bytes: &[u8]) {
    if let Err(e) = crate::source::write_replacing(file, bytes) {
        tracing::warn!("cannot keep {} in the cache: {e}", file.display());
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.0.0.1",
            "169.254.169.254",
            "192.168.1.1",
            "172.16.0.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["140.82.112.3", "2606:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn the_highest_admitted_version_is_chosen() {
        let index = b"apiVersion: v1\nentries:\n  podinfo:\n    - version: 6.9.0\n      urls: [podinfo-6.9.0.tgz]\n      digest: abc\n    - version: 6.10.1\n      urls: [https://x/podinfo-6.10.1.tgz]\n    - version: 7.0.0-rc.1\n      urls: [podinfo-7.0.0-rc.1.tgz]\n";
        assert_eq!(choose(index, "podinfo", "").unwrap().version, "6.10.1");
        assert_eq!(choose(index, "podinfo", ">=1.0.0-alpha").unwrap().version, "6.10.1");
        assert_eq!(choose(index, "podinfo", "6.9.x").unwrap().version, "6.9.0");
        assert_eq!(choose(index, "podinfo", ">= 6.0.0, < 6.10.0").unwrap().version, "6.9.0");
        assert_eq!(choose(index, "podinfo", "6.9.0 || 5.x").unwrap().digest, "abc");
        assert!(choose(index, "podinfo", "8.x").is_err());
        assert!(choose(index, "nginx", "").is_err());
    }

    fn fetcher(network: Network) -> Fetcher {
        Fetcher::new(network)
    }

    #[test]
    fn the_policy_refuses_what_it_must() {
        let on = Network {
            allowed: true,
            ..Network::default()
        };
        for url in [
            "http://127.0.0.1:9/index.yaml",
            "https://169.254.169.254/",
            "https://10.0.0.1/",
            "https://localhost/",
        ] {
            let u = url::Url::parse(url).unwrap();
            assert!(
                matches!(fetcher(on.clone()).addresses(&u), Err(FetchError::Refused(_))),
                "{url}"
            );
        }
        assert!(matches!(
            fetcher(on.clone()).chart("file:///etc", "x", ""),
            Err(FetchError::Refused(_))
        ));
        let trusted = Network {
            trusted_hosts: vec!["127.0.0.1".into()],
            ..on.clone()
        };
        let u = url::Url::parse("http://127.0.0.1:9/index.yaml").unwrap();
        assert!(fetcher(trusted).addresses(&u).is_ok());
        // The config's list only narrows: a private host in it is still refused.
        let listed = Network {
            allowed_hosts: vec!["127.0.0.1".into()],
            ..on
        };
        let u = url::Url::parse("https://127.0.0.1/").unwrap();
        assert!(matches!(fetcher(listed).addresses(&u), Err(FetchError::Refused(_))));
    }
}

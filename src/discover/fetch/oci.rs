//! Helm charts in OCI registries (`oci://host/path/name`), as `helm pull` has them: the tag is
//! the chart version (`+` written `_`); its manifest names the chart layer
//! (`application/vnd.cncf.helm.chart.content.v1.tar+gzip`), fetched as a blob and checked
//! against its sha256 digest. A registry that answers 401 with a `Bearer` challenge gets an
//! anonymous token from its realm (through the same policy). What a version constraint chose
//! is kept in the cache with the archive, so a run with the network off renders it.

use std::path::PathBuf;

use sha2::Digest as _;

use super::{FetchError, Fetched, Fetcher, MAX_CHART_BYTES, MAX_INDEX_BYTES, constraint_admits, digest_of, hex, store};

const MANIFEST_TYPES: &str =
    "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";
const CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

/// A chart's place in a registry: `host[:port]` and the repository path, name included.
#[derive(Debug, PartialEq)]
struct Reference {
    host: String,
    repository: String,
}

fn reference(registry: &str, name: &str) -> Result<Reference, String> {
    let rest = registry.trim_start_matches("oci://").trim_end_matches('/');
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let repository = [path, name]
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/".contains(c);
    if host.is_empty() || repository.is_empty() || !repository.chars().all(valid) || repository.contains("..") {
        return Err(format!("`{registry}/{name}` is not an OCI chart reference"));
    }
    if !host.chars().all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c)) {
        return Err(format!("`{host}` is not a registry host"));
    }
    Ok(Reference {
        host: host.to_ascii_lowercase(),
        repository,
    })
}

/// A `Bearer` challenge's parameters (`realm`, `service`, `scope`).
fn challenge(header: &str) -> Option<Vec<(String, String)>> {
    let rest = header
        .trim()
        .strip_prefix("Bearer ")
        .or_else(|| header.trim().strip_prefix("bearer "))?;
    let mut out = Vec::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let after = after.trim_start();
        let (value, tail) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"')?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => after.split_once(',').map_or((after, ""), |(v, t)| (v, t)),
        };
        out.push((key.trim().to_string(), value.to_string()));
        rest = tail.trim_start_matches([',', ' ']);
    }
    Some(out)
}

/// The tag a constraint means exactly: a bare version, a `sha256:` digest, or a tag that is no
/// constraint at all (`latest`, `main`).
fn exact_tag(constraint: &str) -> Option<String> {
    let c = constraint.trim();
    if c.starts_with("sha256:") || semver::Version::parse(c.trim_start_matches('v')).is_ok() {
        return Some(c.replace('+', "_"));
    }
    let wildcard = c.split('.').any(|part| matches!(part, "x" | "X" | "*"));
    let operators = c.is_empty() || c.contains(['<', '>', '=', '~', '^', '*', '|', ',', ' ']);
    (!wildcard && !operators).then(|| c.to_string())
}

/// The OCI distribution grammar of a tag (`[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`), or a sha256
/// digest: nothing else reaches a request path.
fn valid_tag(tag: &str) -> bool {
    if let Some(hex) = tag.strip_prefix("sha256:") {
        return hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    let mut chars = tag.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && tag.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

impl Fetcher {
    /// The archive of chart `name` of the OCI registry path `registry` (`oci://host/path`) at
    /// the highest tag `constraint` admits (a bare version or a digest is that one).
    pub(super) fn oci_chart(&self, registry: &str, name: &str, constraint: &str) -> Result<PathBuf, FetchError> {
        let at = reference(registry, name).map_err(FetchError::Refused)?;
        let shown = format!("oci://{}/{}", at.host, at.repository);
        let resolution_file = self.cached("oci", &format!("{shown}\n{constraint}"), "json");
        let mut session = Session {
            fetcher: self,
            at: &at,
            token: None,
            scheme: None,
        };
        let resolved: Option<(String, String)> = if self.network.allowed {
            let tag = match exact_tag(constraint) {
                Some(tag) => tag,
                None => session.highest_tag(constraint)?,
            };
            if !valid_tag(&tag) {
                return Err(FetchError::Refused(format!(
                    "`{}` is neither an OCI tag nor a sha256 digest",
                    crate::diagnostics::printable(&tag)
                )));
            }
            let digest = session.chart_layer(&tag)?;
            if let Some(f) = &resolution_file {
                store(
                    f,
                    serde_json::json!({"tag": tag, "digest": digest}).to_string().as_bytes(),
                );
            }
            Some((tag, digest))
        } else {
            resolution_file
                .as_ref()
                .and_then(|f| std::fs::read(f).ok())
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| Some((v["tag"].as_str()?.to_string(), v["digest"].as_str()?.to_string())))
        };
        let Some((tag, digest)) = resolved else {
            return Err(FetchError::NetworkOff);
        };
        let expected = digest.trim_start_matches("sha256:").to_string();
        let key = format!("{shown}\n{tag}\n{expected}");
        let Some(file) = self.cached("charts", &key, "tgz").or_else(|| {
            self.scratch.as_ref().map(|d| {
                d.path()
                    .join(format!("{}.tgz", hex(&blake3::hash(key.as_bytes()).as_bytes()[..16])))
            })
        }) else {
            return Err(FetchError::NetworkOff);
        };
        let cached = digest_of(&file).as_deref() == Some(expected.as_str());
        if !cached {
            if !self.network.allowed {
                return Err(FetchError::NetworkOff);
            }
            let bytes = session.get(&format!("blobs/{digest}"), "*/*", MAX_CHART_BYTES)?;
            let actual = hex(&sha2::Sha256::digest(&bytes));
            if actual != expected {
                return Err(FetchError::Failed(format!(
                    "{shown}:{tag} has sha256 {actual}, not its manifest's {expected}"
                )));
            }
            store(&file, &bytes);
        }
        self.fetched
            .lock()
            .expect("no panics while holding the lock")
            .push(Fetched {
                url: shown,
                name: name.to_string(),
                version: tag.replace('_', "+"),
                digest: expected,
                cached,
            });
        Ok(file)
    }
}

/// Requests to one repository of a registry, with the token it asked for.
struct Session<'f> {
    fetcher: &'f Fetcher,
    at: &'f Reference,
    token: Option<String>,
    /// The scheme the registry answered on.
    scheme: Option<&'static str>,
}

impl Session<'_> {
    /// GET `/v2/<repository>/<path>`: over https, or http for a host named with
    /// `--allow-host` that does not speak https; with a token once the registry asked for one.
    fn get(&mut self, path: &str, accept: &str, limit: u64) -> Result<Vec<u8>, FetchError> {
        let trusted = self
            .fetcher
            .network
            .trusted_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(&self.at.host) || self.at.host.split(':').next() == Some(h.as_str()));
        let schemes: Vec<&'static str> = match self.scheme {
            Some(known) => vec![known],
            None if trusted => vec!["https", "http"],
            None => vec!["https"],
        };
        let mut last = None;
        for scheme in schemes {
            let url = format!("{scheme}://{}/v2/{}/{path}", self.at.host, self.at.repository);
            match self.get_url(&url, accept, limit) {
                Err(FetchError::Failed(why)) if scheme == "https" && trusted && self.scheme.is_none() => {
                    last = Some(why)
                }
                other => {
                    if other.is_ok() {
                        self.scheme = Some(scheme);
                    }
                    return other;
                }
            }
        }
        Err(FetchError::Failed(last.unwrap_or_default()))
    }

    fn get_url(&mut self, url: &str, accept: &str, limit: u64) -> Result<Vec<u8>, FetchError> {
        for attempt in 0..2 {
            let bearer = self.token.as_ref().map(|t| format!("Bearer {t}"));
            let mut headers = vec![("Accept", accept)];
            if let Some(b) = &bearer {
                headers.push(("Authorization", b.as_str()));
            }
            let response = self.fetcher.request(url, &headers, limit)?;
            match response.status {
                200..=299 => return Ok(response.body),
                401 if attempt == 0 => {
                    let Some(params) = response.authenticate.as_deref().and_then(challenge) else {
                        return Err(FetchError::Failed(format!(
                            "{url}: HTTP 401 without a Bearer challenge"
                        )));
                    };
                    self.token = Some(self.anonymous_token(&params)?);
                }
                code => return Err(FetchError::Failed(format!("{url}: HTTP {code}"))),
            }
        }
        Err(FetchError::Failed(format!("{url}: HTTP 401 with an anonymous token")))
    }

    /// An anonymous pull token from the challenge's realm.
    fn anonymous_token(&self, params: &[(String, String)]) -> Result<String, FetchError> {
        let param = |k: &str| params.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let realm = param("realm").ok_or_else(|| FetchError::Failed("a Bearer challenge without a realm".into()))?;
        let mut url = url::Url::parse(realm).map_err(|e| FetchError::Failed(format!("the realm `{realm}`: {e}")))?;
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = param("service") {
                query.append_pair("service", service);
            }
            query.append_pair(
                "scope",
                param("scope").unwrap_or(&format!("repository:{}:pull", self.at.repository)),
            );
        }
        let body = self.fetcher.get(url.as_str(), MAX_INDEX_BYTES)?;
        let json: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| FetchError::Failed(format!("{realm}: {e}")))?;
        json["token"]
            .as_str()
            .or(json["access_token"].as_str())
            .map(str::to_string)
            .ok_or_else(|| FetchError::Failed(format!("{realm} gave no token")))
    }

    /// The highest tag that is a version `constraint` admits.
    fn highest_tag(&mut self, constraint: &str) -> Result<String, FetchError> {
        let body = self.get("tags/list", "application/json", MAX_INDEX_BYTES)?;
        let json: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| FetchError::Failed(format!("the tag list: {e}")))?;
        let admits = constraint_admits(constraint);
        json["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str())
            .filter_map(|t| {
                let version = t.replace('_', "+");
                let parsed = semver::Version::parse(version.trim_start_matches('v')).ok()?;
                admits(&parsed, &version).then(|| (parsed, t.to_string()))
            })
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, t)| t)
            .ok_or_else(|| {
                FetchError::Failed(format!(
                    "no tag of oci://{}/{} satisfies `{constraint}`",
                    self.at.host, self.at.repository
                ))
            })
    }

    /// The digest of the chart layer of `tag`'s manifest.
    fn chart_layer(&mut self, tag: &str) -> Result<String, FetchError> {
        let body = self.get(&format!("manifests/{tag}"), MANIFEST_TYPES, MAX_INDEX_BYTES)?;
        let json: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| FetchError::Failed(format!("the manifest of {tag}: {e}")))?;
        let digest = json["layers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|l| l["mediaType"] == CHART_LAYER)
            .and_then(|l| l["digest"].as_str())
            .ok_or_else(|| FetchError::Failed(format!("the manifest of {tag} has no Helm chart layer")))?;
        let hex_part = digest.strip_prefix("sha256:").unwrap_or_default();
        if hex_part.len() != 64 || !hex_part.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(FetchError::Failed(format!(
                "the manifest of {tag} names `{digest}`, not a sha256 digest"
            )));
        }
        Ok(digest.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_challenges_read_as_registries_write_them() {
        assert_eq!(
            reference("oci://ghcr.io/stefanprodan/charts", "podinfo").unwrap(),
            Reference {
                host: "ghcr.io".into(),
                repository: "stefanprodan/charts/podinfo".into()
            }
        );
        assert!(reference("oci://ghcr.io/x", "../../etc").is_err());
        assert!(reference("oci://a b/x", "c").is_err());
        let params =
            challenge(r#"Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull""#).unwrap();
        assert_eq!(params[0], ("realm".into(), "https://ghcr.io/token".into()));
        assert_eq!(params[2], ("scope".into(), "repository:a/b:pull".into()));
        assert_eq!(exact_tag("1.2.3+build"), Some("1.2.3_build".into()));
        assert_eq!(exact_tag(">=1.0.0"), None);
        assert_eq!(exact_tag("6.x"), None);
        assert_eq!(exact_tag(""), None);
        assert_eq!(exact_tag("latest"), Some("latest".into()));
        assert!(valid_tag("1.2.3_build") && valid_tag("latest"));
        assert!(!valid_tag("../../v2/other/blobs/x") && !valid_tag("sha256:zz") && !valid_tag(""));
    }
}

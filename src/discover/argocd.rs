//! Argo CD Applications (`argoproj.io`): the Helm charts they deploy, with the release name,
//! namespace and values Argo CD gives them.
//!
//! A source with `chart` is a chart of the Helm chart repository at `repoURL`, or of the OCI
//! registry path it names (without a scheme, or `oci://`), fetched with the network allowed,
//! or from the cache; a source whose `path` holds a `Chart.yaml` of this
//! repository is that chart (its `repoURL` is taken to be this repository). As Argo CD's
//! repo-server renders it: the release name is `helm.releaseName`, else the Application's
//! name; the namespace is `destination.namespace`; values come from `valueFiles` (relative to
//! the chart, or `$ref/...` of another source of the Application), then `values` or
//! `valuesObject`, then `parameters` (`--set`, typed unless `forceString`). Kustomize and
//! directory sources are scopes of plain files (`scopes`).

use std::path::PathBuf;

use super::release::{Chart, Release, in_repository, invalid_release, merge, text, to_json};
use crate::yaml::{Node, Value};

pub(super) fn is_application(root: &Node) -> bool {
    root.get("apiVersion")
        .and_then(Node::as_str)
        .is_some_and(|a| a.starts_with("argoproj.io/"))
        && root.get("kind").and_then(Node::as_str) == Some("Application")
}

/// The Helm sources of an Application: one release each.
pub(super) fn releases(root: &Node, roots: &[PathBuf]) -> Vec<Release> {
    let name = text(root, &["metadata", "name"]).unwrap_or_default();
    let id = format!("Application {name}");
    let sources: Vec<&Node> = match (
        root.at(&["spec", "source"]),
        root.at(&["spec", "sources"]).and_then(Node::as_seq),
    ) {
        (Some(one), _) => vec![one],
        (None, Some(many)) => many.iter().collect(),
        (None, None) => Vec::new(),
    };
    let namespace = text(root, &["spec", "destination", "namespace"]).unwrap_or("default");
    let repository = roots.first();
    // `ref` sources name where `$ref/...` value files are: this repository, at its root.
    let refs: Vec<&str> = sources.iter().filter_map(|s| text(s, &["ref"])).collect();
    let mut out = Vec::new();
    for source in &sources {
        let helm = source.get("helm");
        let chart_span = source
            .get("chart")
            .or(source.get("path"))
            .map_or(source.span, |n| n.span);
        let release_name = helm.and_then(|h| text(h, &["releaseName"])).unwrap_or(name).to_string();
        let Some(mut chart) = source_chart(source, roots) else {
            continue;
        };
        if let Some(invalid) = invalid_release(&id, chart_span, &release_name, namespace) {
            out.push(invalid);
            continue;
        }
        let mut value_files = Vec::new();
        let ignore_missing = helm
            .and_then(|h| h.get("ignoreMissingValueFiles"))
            .is_some_and(|b| b.value == Value::Bool(true));
        let mut invalid = None;
        for file in helm
            .and_then(|h| h.get("valueFiles"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let Some(written) = file.as_str() else { continue };
            let path = match (written.strip_prefix('$'), &mut chart) {
                (Some(rest), _) => {
                    let (reference, relative) = rest.split_once('/').unwrap_or((rest, ""));
                    if !refs.contains(&reference) {
                        invalid = Some(Release::Invalid {
                            span: file.span,
                            message: format!(
                                "{id}: `${}` names no source of the Application (`ref`)",
                                crate::diagnostics::printable(reference)
                            ),
                        });
                        break;
                    }
                    repository.map(|r| crate::source::normalize(&r.join(relative)))
                }
                (None, Chart::Path(dir)) => Some(crate::source::normalize(&dir.join(written))),
                // A remote chart's own values files are in its archive; Argo CD reads them
                // from there, which `helm template` does not: left out.
                (None, Chart::Repository { .. }) => None,
                // Another repository's chart: its values files are read from its checkout.
                (None, Chart::Git { value_files, .. }) => {
                    value_files.push(written.to_string());
                    None
                }
            };
            let Some(path) = path else { continue };
            let inside = in_repository(&path, roots);
            let referenced = written.starts_with('$');
            match (inside && path.is_file(), ignore_missing) {
                (true, _) => value_files.push(path),
                (false, true) => {}
                // A `ref` source's repoURL is taken to be this repository; a file it does not
                // have here is another repository's, or another revision's.
                (false, false) if referenced => {
                    invalid = Some(Release::Remote {
                        id: id.clone(),
                        span: file.span,
                        detail: format!(
                            "its values file `{}` is not in this repository: the `ref` source's repository {}",
                            crate::diagnostics::printable(written),
                            super::coverage::NETWORK_OFF
                        ),
                    });
                    break;
                }
                (false, false) => {
                    invalid = Some(Release::Invalid {
                        span: file.span,
                        message: format!(
                            "{id}: the values file `{}` is not in this repository (`ignoreMissingValueFiles` is not set, so Argo CD fails to render it)",
                            crate::diagnostics::printable(written)
                        ),
                    });
                    break;
                }
            }
        }
        if let Some(invalid) = invalid {
            out.push(invalid);
            continue;
        }
        let values = source_values(source, helm);
        out.push(Release::Local {
            id: id.clone(),
            chart,
            span: chart_span,
            release_name,
            namespace: namespace.to_string(),
            value_files,
            values: to_json(&values).to_string(),
        });
    }
    out
}

/// The chart a source of an Application installs: from a chart repository, or a path with a
/// Chart.yaml here or in another repository; `None` for a source that is no chart.
fn source_chart(source: &Node, roots: &[PathBuf]) -> Option<Chart> {
    Some(if let Some(chart) = text(source, &["chart"]) {
        let url = text(source, &["repoURL"]).unwrap_or_default();
        // A repoURL without a scheme is an OCI registry path, as Argo CD reads it.
        let url = if url.contains("://") {
            url.to_string()
        } else {
            format!("oci://{url}")
        };
        Chart::Repository {
            name: chart.to_string(),
            version: text(source, &["targetRevision"]).unwrap_or_default().to_string(),
            detail: format!(
                "its chart `{}` comes from {}: fetching it {}",
                crate::diagnostics::printable(chart),
                crate::diagnostics::printable(&url),
                super::coverage::NETWORK_OFF
            ),
            url,
        }
    } else if let Some(path) = text(source, &["path"]) {
        let dir = super::placeholders::resolve(roots, path);
        let inside = in_repository(&dir, roots);
        let url = text(source, &["repoURL"]).filter(|u| u.contains("://") || u.starts_with("git@"));
        if !dir.exists()
            && let Some(url) = url
        {
            // Another repository's path: a chart there is rendered once fetched (anything
            // else there is the deployer's, `remote`).
            let revision = text(source, &["targetRevision"])
                .filter(|r| *r != "HEAD")
                .unwrap_or_default();
            Chart::Git {
                url: url.to_string(),
                reference: revision.to_string(),
                path: path.to_string(),
                value_files: Vec::new(),
                reported_elsewhere: true,
                detail: format!(
                    "its path `{}` is not in this repository: it comes from the repository `{}`, another repository, and fetching it {}",
                    crate::diagnostics::printable(path),
                    crate::diagnostics::printable(url),
                    super::coverage::NETWORK_OFF
                ),
            }
        } else if !inside || path.split('/').any(|c| c == "..") || !dir.join("Chart.yaml").is_file() {
            // A kustomization or a directory of manifests: scopes of plain files.
            return None;
        } else {
            Chart::Path(dir)
        }
    } else {
        return None;
    })
}

/// The values a source gives its chart: `valuesObject`, else `values` (a YAML string, or a
/// map in older Applications), then each of its `parameters`.
fn source_values(source: &Node, helm: Option<&Node>) -> Node {
    let mut values = Node {
        span: source.span,
        value: Value::Map(Vec::new()),
    };
    if let Some(object) = helm.and_then(|h| h.get("valuesObject")) {
        merge(&mut values, object.clone());
    } else if let Some(inline) = helm.and_then(|h| h.get("values")) {
        match &inline.value {
            Value::Str(yaml) => {
                if let Some(doc) = crate::yaml::parse(yaml, inline.span.file, &crate::yaml::Limits::default())
                    .documents
                    .into_iter()
                    .next()
                {
                    merge(&mut values, doc.root);
                }
            }
            // Older Applications write `values` as a map.
            _ => merge(&mut values, inline.clone()),
        }
    }
    for parameter in helm
        .and_then(|h| h.get("parameters"))
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let (Some(key), Some(value)) = (
            text(parameter, &["name"]),
            parameter.get("value").and_then(Node::scalar_text),
        ) else {
            continue;
        };
        let force_string = parameter
            .get("forceString")
            .is_some_and(|b| b.value == Value::Bool(true));
        merge(&mut values, set(key, &value, force_string, parameter.span));
    }
    values
}

/// Helm's `--set a.b=value` as values: typed as YAML reads it, unless `--set-string`.
fn set(key: &str, value: &str, force_string: bool, span: crate::source::Span) -> Node {
    let mut node = Node {
        span,
        value: if force_string {
            Value::Str(value.to_string())
        } else {
            crate::yaml::resolve_plain(value)
        },
    };
    for part in key.rsplit('.') {
        node = Node {
            span,
            value: Value::Map(vec![(
                Node {
                    span,
                    value: Value::Str(part.to_string()),
                },
                node,
            )]),
        };
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    #[test]
    fn a_helm_source_gives_release_namespace_and_values_in_argo_cds_order() {
        let dir = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(repo.join("charts/web")).unwrap();
        std::fs::write(
            repo.join("charts/web/Chart.yaml"),
            "apiVersion: v2\nname: web\nversion: 1.0.0\n",
        )
        .unwrap();
        std::fs::write(repo.join("charts/web/values-prod.yaml"), "replicaCount: 4\n").unwrap();
        let doc = crate::yaml::parse(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web-prod, namespace: argocd}\nspec:\n  destination: {namespace: prod}\n  source:\n    repoURL: https://example.com/repo.git\n    path: charts/web\n    helm:\n      releaseName: web\n      valueFiles: [values-prod.yaml]\n      values: |\n        image: {tag: '2'}\n      parameters:\n        - {name: replicaCount, value: '5'}\n        - {name: image.tag, value: '3', forceString: true}\n",
            FileId(0),
            &crate::yaml::Limits::default(),
        )
        .documents
        .remove(0);
        match &releases(&doc.root, std::slice::from_ref(&repo))[..] {
            [
                Release::Local {
                    release_name,
                    namespace,
                    value_files,
                    values,
                    chart: Chart::Path(chart),
                    ..
                },
            ] => {
                assert_eq!((release_name.as_str(), namespace.as_str()), ("web", "prod"));
                assert_eq!(chart, &repo.join("charts/web"));
                assert_eq!(value_files, &vec![repo.join("charts/web/values-prod.yaml")]);
                assert_eq!(values, r#"{"image":{"tag":"3"},"replicaCount":5}"#);
            }
            other => panic!("{other:?}"),
        }
    }
}

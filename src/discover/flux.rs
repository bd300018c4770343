//! Flux HelmReleases (helm-controller, `helm.toolkit.fluxcd.io`): what chart each deploys,
//! with which release name, namespace and values.
//!
//! A HelmRelease whose chart is a path of a `GitRepository` (taken to be this repository) is
//! rendered as helm-controller installs it: `spec.releaseName`, else `[targetNamespace-]name`;
//! the namespace `targetNamespace`, else the HelmRelease's own; `valuesFrom` ConfigMaps and
//! Secrets of the repository merged in order, then `spec.values` over them. A chart from a
//! HelmRepository, an OCIRepository or a `chartRef` needs the network: a note says so, never
//! a silent skip.

use std::path::PathBuf;

use super::release::{Chart, Release, invalid_release, merge, text, to_json};
use crate::yaml::{Document, Node, Value};

pub(super) fn is_helm_release(root: &Node) -> bool {
    root.get("apiVersion")
        .and_then(Node::as_str)
        .is_some_and(|a| a.starts_with("helm.toolkit.fluxcd.io/"))
        && root.get("kind").and_then(Node::as_str) == Some("HelmRelease")
}

pub(super) fn release(root: &Node, documents: &[&Document], roots: &[PathBuf]) -> Release {
    let name = text(root, &["metadata", "name"]).unwrap_or_default();
    let namespace = text(root, &["metadata", "namespace"]).unwrap_or("default");
    let id = format!("HelmRelease {namespace}/{name}");
    let spec_span = root.get("spec").map_or(root.span, |s| s.span);
    if let Some(chart_ref) = root.at(&["spec", "chartRef"]) {
        let kind = text(chart_ref, &["kind"]).unwrap_or("?");
        let source = text(chart_ref, &["name"]).unwrap_or("?");
        return Release::Remote {
            id,
            span: chart_ref.span,
            detail: format!(
                "its chart comes from the {} `{}` (`chartRef`): fetching it {}",
                crate::diagnostics::printable(kind),
                crate::diagnostics::printable(source),
                super::coverage::NETWORK_OFF
            ),
        };
    }
    let Some(chart_spec) = root.at(&["spec", "chart", "spec"]) else {
        return Release::Invalid {
            span: spec_span,
            message: format!("{id} has neither `spec.chart.spec` nor `spec.chartRef`: Flux cannot install it"),
        };
    };
    let chart = text(chart_spec, &["chart"]).unwrap_or_default();
    let chart_span = chart_spec.get("chart").map_or(chart_spec.span, |c| c.span);
    let source_kind = text(chart_spec, &["sourceRef", "kind"]).unwrap_or_default();
    let source_name = text(chart_spec, &["sourceRef", "name"]).unwrap_or_default();
    let source = if source_kind != "GitRepository" && source_kind != "Bucket" {
        let repository = documents.iter().find(|d| {
            d.root.get("kind").and_then(Node::as_str) == Some(source_kind)
                && text(&d.root, &["metadata", "name"]) == Some(source_name)
        });
        let url = repository
            .and_then(|d| text(&d.root, &["spec", "url"]))
            .unwrap_or_default();
        let oci = repository.and_then(|d| text(&d.root, &["spec", "type"])) == Some("oci");
        let shown = if url.is_empty() {
            String::new()
        } else {
            format!(" ({})", crate::diagnostics::printable(url))
        };
        let detail = format!(
            "its chart `{}` comes from the {} `{}`{shown}: fetching it {}",
            crate::diagnostics::printable(chart),
            crate::diagnostics::printable(source_kind),
            crate::diagnostics::printable(source_name),
            super::coverage::NETWORK_OFF,
        );
        if source_kind != "HelmRepository" || oci || url.is_empty() {
            return Release::Remote {
                id,
                span: chart_span,
                detail,
            };
        }
        Chart::Repository {
            url: url.to_string(),
            name: chart.to_string(),
            version: text(chart_spec, &["version"]).unwrap_or_default().to_string(),
            detail,
        }
    } else {
        // A chart path of a Git source: this repository's (a path that is no chart here is
        // another repository's, which needs the network).
        let dir = super::placeholders::resolve(roots, chart);
        let in_repository = std::fs::canonicalize(&dir).is_ok_and(|c| roots.first().is_some_and(|r| c.starts_with(r)));
        if chart.split('/').any(|c| c == "..") || !in_repository || !dir.join("Chart.yaml").is_file() {
            return Release::Remote {
                id,
                span: chart_span,
                detail: format!(
                    "its chart `{}` is not a chart of this repository (the {source_kind} `{}` is taken to be it): another repository {}",
                    crate::diagnostics::printable(chart),
                    crate::diagnostics::printable(source_name),
                    super::coverage::NETWORK_OFF,
                ),
            };
        }
        Chart::Path(dir)
    };
    let target = text(root, &["spec", "targetNamespace"]);
    let release_name = text(root, &["spec", "releaseName"])
        .map(String::from)
        .unwrap_or_else(|| match target {
            Some(t) => format!("{t}-{name}"),
            None => name.to_string(),
        });
    let release_namespace = target.unwrap_or(namespace).to_string();
    if let Some(invalid) = invalid_release(&id, spec_span, &release_name, &release_namespace) {
        return invalid;
    }
    let mut values = Node {
        span: spec_span,
        value: Value::Map(Vec::new()),
    };
    for from in root
        .at(&["spec", "valuesFrom"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        if let Some(v) = values_from(from, namespace, documents) {
            merge(&mut values, v);
        }
    }
    if let Some(inline) = root.at(&["spec", "values"]) {
        merge(&mut values, inline.clone());
    }
    Release::Local {
        id,
        chart: source,
        span: chart_span,
        release_name,
        namespace: release_namespace,
        value_files: Vec::new(),
        values: to_json(&values).to_string(),
    }
}

/// One `valuesFrom` entry: the values under `valuesKey` (default `values.yaml`) of a
/// ConfigMap or Secret in the HelmRelease's namespace, placed at `targetPath` when given.
fn values_from(from: &Node, namespace: &str, documents: &[&Document]) -> Option<Node> {
    let kind = text(from, &["kind"])?;
    let name = text(from, &["name"])?;
    let key = text(from, &["valuesKey"]).unwrap_or("values.yaml");
    let doc = super::placeholders::find_object(documents.iter().copied(), kind, namespace, name)?;
    let data = match kind {
        // A Secret's `data` is base64; its `stringData` is written as it is.
        "Secret" => match doc.root.at(&["stringData", key]) {
            Some(plain) => plain.clone(),
            None => {
                let encoded = doc.root.at(&["data", key])?;
                Node {
                    span: encoded.span,
                    value: Value::Str(super::placeholders::base64_decode(encoded.as_str()?)?),
                }
            }
        },
        _ => doc.root.at(&["data", key])?.clone(),
    };
    let data = &data;
    match text(from, &["targetPath"]) {
        // A single value at a dotted path.
        Some(path) => {
            let mut node = data.clone();
            for part in path.rsplit('.') {
                node = Node {
                    span: data.span,
                    value: Value::Map(vec![(
                        Node {
                            span: data.span,
                            value: Value::Str(part.to_string()),
                        },
                        node,
                    )]),
                };
            }
            Some(node)
        }
        None => {
            let text = data.as_str()?;
            crate::yaml::parse(text, data.span.file, &crate::yaml::Limits::default())
                .documents
                .into_iter()
                .next()
                .map(|d| d.root)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn docs(text: &str) -> Vec<Document> {
        crate::yaml::parse(text, FileId(0), &crate::yaml::Limits::default()).documents
    }

    #[test]
    fn a_chart_from_a_helm_repository_is_fetched_from_its_url() {
        let all = docs(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  chart:\n    spec:\n      chart: podinfo\n      sourceRef:\n        kind: HelmRepository\n        name: podinfo\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\nspec:\n  url: https://stefanprodan.github.io/podinfo\n",
        );
        let refs: Vec<&Document> = all.iter().collect();
        match &[release(&all[0].root, &refs, &[PathBuf::from("/nowhere")])][..] {
            [
                Release::Local {
                    id,
                    span,
                    chart: Chart::Repository { url, name, detail, .. },
                    ..
                },
            ] => {
                assert_eq!(id, "HelmRelease podinfo/podinfo");
                assert_eq!(span.start.line, 9);
                assert_eq!(
                    (url.as_str(), name.as_str()),
                    ("https://stefanprodan.github.io/podinfo", "podinfo")
                );
                assert!(detail.contains("(https://stefanprodan.github.io/podinfo)"), "{detail}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_merge_from_config_maps_then_inline() {
        let all = docs(
            "kind: ConfigMap\nmetadata:\n  name: v\n  namespace: apps\ndata:\n  values.yaml: |\n    replicaCount: 2\n    a: {b: 1, c: 2}\n  tag: \"1.2\"\n",
        );
        let refs: Vec<&Document> = all.iter().collect();
        let from = docs("kind: ConfigMap\nname: v\n").remove(0).root;
        let mut values = values_from(&from, "apps", &refs).unwrap();
        let targeted = docs("kind: ConfigMap\nname: v\nvaluesKey: tag\ntargetPath: image.tag\n")
            .remove(0)
            .root;
        merge(&mut values, values_from(&targeted, "apps", &refs).unwrap());
        merge(&mut values, docs("a: {c: 3}\n").remove(0).root);
        assert_eq!(
            to_json(&values).to_string(),
            r#"{"a":{"b":1,"c":3},"image":{"tag":"1.2"},"replicaCount":2}"#
        );
    }

    #[test]
    fn a_secret_gives_its_decoded_data() {
        // base64 of "replicaCount: 4\n"
        let all = docs("kind: Secret\nmetadata:\n  name: s\ndata:\n  values.yaml: cmVwbGljYUNvdW50OiA0Cg==\n");
        let refs: Vec<&Document> = all.iter().collect();
        let from = docs("kind: Secret\nname: s\n").remove(0).root;
        let values = values_from(&from, "apps", &refs).unwrap();
        assert_eq!(to_json(&values).to_string(), r#"{"replicaCount":4}"#);
    }
}

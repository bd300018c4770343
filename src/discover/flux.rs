//! Flux HelmReleases (helm-controller, `helm.toolkit.fluxcd.io`): what chart each deploys,
//! with which release name, namespace and values.
//!
//! A HelmRelease whose chart is a path of a `GitRepository` (taken to be this repository) is
//! rendered as helm-controller installs it: `spec.releaseName`, else `[targetNamespace-]name`;
//! the namespace `targetNamespace`, else the HelmRelease's own; `valuesFrom` ConfigMaps and
//! Secrets of the repository merged in order, then `spec.values` over them. A chart from a
//! HelmRepository (a chart repository or an OCI registry) or an OCIRepository (`chartRef`)
//! is fetched with the network allowed, or read from the cache; else a note says so, never a
//! silent skip.

use std::path::PathBuf;

use crate::source::Span;

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
    let source = match root.at(&["spec", "chartRef"]) {
        Some(chart_ref) => chart_of_reference(chart_ref, namespace, documents, roots),
        None => match root.at(&["spec", "chart", "spec"]) {
            Some(chart_spec) => chart_of_template(chart_spec, namespace, documents, roots),
            None => {
                return Release::Invalid {
                    span: spec_span,
                    message: format!("{id} has neither `spec.chart.spec` nor `spec.chartRef`: Flux cannot install it"),
                };
            }
        },
    };
    let (source, chart_span) = match source {
        Ok(chart) => chart,
        Err((span, detail)) => return Release::Remote { id, span, detail },
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

/// The chart of `spec.chart.spec` (a HelmChart template): a path of a GitRepository (taken to be
/// this repository), or a chart of a HelmRepository (a Helm chart repository, or an OCI
/// registry with `type: oci`); located at its `chart`. Else why it cannot be had.
fn chart_of_template(
    chart_spec: &Node,
    namespace: &str,
    documents: &[&Document],
    roots: &[PathBuf],
) -> Result<(Chart, Span), (Span, String)> {
    let chart = text(chart_spec, &["chart"]).unwrap_or_default();
    let chart_span = chart_spec.get("chart").map_or(chart_spec.span, |c| c.span);
    let source_kind = text(chart_spec, &["sourceRef", "kind"]).unwrap_or_default();
    let source_name = text(chart_spec, &["sourceRef", "name"]).unwrap_or_default();
    if source_kind == "GitRepository" || source_kind == "Bucket" {
        // A chart path of a Git source: this repository's (a path that is no chart here is
        // another repository's, which needs the network).
        let dir = super::placeholders::resolve(roots, chart);
        let in_repository = super::release::in_repository(&dir, roots);
        let namespace = text(chart_spec, &["sourceRef", "namespace"]).unwrap_or(namespace);
        let git = (source_kind == "GitRepository")
            .then(|| super::placeholders::git_repository(documents.iter().copied(), namespace, source_name))
            .flatten();
        if !dir.exists()
            && let Some((url, reference)) = git
        {
            // Another repository's chart: fetched with the network allowed.
            return Ok((
                Chart::Git {
                    detail: format!(
                        "its chart `{}` is of the GitRepository `{}` ({}), another repository: fetching it {}",
                        crate::diagnostics::printable(chart),
                        crate::diagnostics::printable(source_name),
                        crate::diagnostics::printable(&url),
                        super::coverage::NETWORK_OFF,
                    ),
                    url,
                    reference,
                    path: chart.to_string(),
                    value_files: Vec::new(),
                    reported_elsewhere: false,
                },
                chart_span,
            ));
        }
        if chart.split('/').any(|c| c == "..") || !in_repository || !dir.join("Chart.yaml").is_file() {
            return Err((
                chart_span,
                format!(
                    "its chart `{}` is not a chart of this repository (the {source_kind} `{}` is taken to be it): another repository {}",
                    crate::diagnostics::printable(chart),
                    crate::diagnostics::printable(source_name),
                    super::coverage::NETWORK_OFF,
                ),
            ));
        }
        return Ok((Chart::Path(dir), chart_span));
    }
    let repository = object(documents, source_kind, source_name);
    let url = repository
        .and_then(|d| text(&d.root, &["spec", "url"]))
        .unwrap_or_default();
    let oci = repository.and_then(|d| text(&d.root, &["spec", "type"])) == Some("oci") || url.starts_with("oci://");
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
    if source_kind != "HelmRepository" || url.is_empty() || (oci && !url.starts_with("oci://")) {
        return Err((chart_span, detail));
    }
    Ok((
        Chart::Repository {
            url: url.to_string(),
            name: chart.to_string(),
            version: text(chart_spec, &["version"]).unwrap_or_default().to_string(),
            detail,
        },
        chart_span,
    ))
}

/// The chart of `spec.chartRef`: the chart artifact of an OCIRepository (`spec.url` is the
/// chart's reference; `ref.digest`, else `ref.semver`, else `ref.tag`, else `latest`), or a
/// HelmChart object; located at the reference.
fn chart_of_reference(
    chart_ref: &Node,
    namespace: &str,
    documents: &[&Document],
    roots: &[PathBuf],
) -> Result<(Chart, Span), (Span, String)> {
    let kind = text(chart_ref, &["kind"]).unwrap_or("?");
    let name = text(chart_ref, &["name"]).unwrap_or("?");
    let namespace = text(chart_ref, &["namespace"]).unwrap_or(namespace);
    let found = documents
        .iter()
        .copied()
        .filter(|d| text(&d.root, &["metadata", "namespace"]).is_none_or(|n| n == namespace))
        .find(|d| text(&d.root, &["kind"]) == Some(kind) && text(&d.root, &["metadata", "name"]) == Some(name));
    let missing = || {
        (
            chart_ref.span,
            format!(
                "its chart comes from the {} `{}` (`chartRef`), which is not in this repository",
                crate::diagnostics::printable(kind),
                crate::diagnostics::printable(name)
            ),
        )
    };
    let Some(found) = found else { return Err(missing()) };
    match kind {
        "HelmChart" => {
            let spec = found.root.get("spec").ok_or_else(missing)?;
            chart_of_template(spec, namespace, documents, roots).map(|(chart, _)| (chart, chart_ref.span))
        }
        "OCIRepository" => {
            let url = text(&found.root, &["spec", "url"]).unwrap_or_default();
            let reference = |k: &str| text(&found.root, &["spec", "ref", k]);
            let version = reference("digest")
                .or(reference("semver"))
                .or(reference("tag"))
                .unwrap_or("latest");
            let Some((registry, chart)) = url.rsplit_once('/').filter(|_| url.starts_with("oci://")) else {
                return Err((
                    chart_ref.span,
                    format!(
                        "its OCIRepository `{}` has no `oci://` URL",
                        crate::diagnostics::printable(name)
                    ),
                ));
            };
            Ok((
                Chart::Repository {
                    url: registry.to_string(),
                    name: chart.to_string(),
                    version: version.to_string(),
                    detail: format!(
                        "its chart comes from the OCIRepository `{}` ({}): fetching it {}",
                        crate::diagnostics::printable(name),
                        crate::diagnostics::printable(url),
                        super::coverage::NETWORK_OFF
                    ),
                },
                chart_ref.span,
            ))
        }
        _ => Err(missing()),
    }
}

/// The object `kind` `name` among `documents`.
fn object<'d>(documents: &[&'d Document], kind: &str, name: &str) -> Option<&'d Document> {
    documents
        .iter()
        .copied()
        .find(|d| text(&d.root, &["kind"]) == Some(kind) && text(&d.root, &["metadata", "name"]) == Some(name))
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

/// Kinds without a namespace, which `targetNamespace` leaves alone.
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "IngressClass",
    "RuntimeClass",
    "CSIDriver",
    "APIService",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
];

/// What a Flux Kustomization does to its build output before it applies it (kustomize-
/// controller wraps the path in a kustomization of its own): `patches` (strategic merge or
/// JSON 6902, by `target`), then `targetNamespace`; an Argo CD Application does the same with
/// its `kustomize.patches`, and gives objects without a namespace its destination's. The
/// patched and set fields are located where the deployer writes them.
pub(super) fn post_build(doc: &mut Document, deployer: &super::placeholders::Deployer) {
    let kind = text(&doc.root, &["kind"]).unwrap_or_default().to_string();
    let name = text(&doc.root, &["metadata", "name"]).unwrap_or_default().to_string();
    for (patch, target_kind, target_name) in &deployer.patches {
        let targeted = target_kind.is_some() || target_name.is_some();
        let selected = if targeted {
            target_kind.as_deref().is_none_or(|k| k == kind) && target_name.as_deref().is_none_or(|n| n == name)
        } else {
            text(patch, &["kind"]) == Some(kind.as_str()) && text(patch, &["metadata", "name"]) == Some(name.as_str())
        };
        if !selected {
            continue;
        }
        match &patch.value {
            Value::Seq(ops) => ops.iter().for_each(|op| json_op(&mut doc.root, op)),
            _ => strategic_merge(&mut doc.root, patch),
        }
    }
    let unset = text(&doc.root, &["metadata", "namespace"]).is_none();
    let namespace = deployer
        .target_namespace
        .as_ref()
        .or(deployer.default_namespace.as_ref().filter(|_| unset));
    if let Some(namespace) = namespace
        && namespace.as_str().is_some_and(|n| !n.is_empty())
        && !CLUSTER_SCOPED.contains(&kind.as_str())
        && let Value::Map(entries) = &mut doc.root.value
    {
        let key = |s: &str| Node {
            span: namespace.span,
            value: Value::Str(s.to_string()),
        };
        let metadata = match entries.iter_mut().position(|(k, _)| k.as_str() == Some("metadata")) {
            Some(i) => &mut entries[i].1,
            None => {
                entries.push((
                    key("metadata"),
                    Node {
                        span: namespace.span,
                        value: Value::Map(Vec::new()),
                    },
                ));
                &mut entries.last_mut().expect("just pushed").1
            }
        };
        if let Value::Map(fields) = &mut metadata.value {
            fields.retain(|(k, _)| k.as_str() != Some("namespace"));
            fields.push((key("namespace"), namespace.clone()));
        }
    }
}

/// A strategic merge patch, as far as values go: maps merge key by key, lists of named items
/// (containers, volumes, env) by name, other lists and scalars are replaced.
fn strategic_merge(base: &mut Node, patch: &Node) {
    match (&mut base.value, &patch.value) {
        (Value::Map(entries), Value::Map(patch_entries)) => {
            for (k, v) in patch_entries {
                match entries.iter_mut().find(|(bk, _)| bk.value == k.value) {
                    Some((_, existing)) => strategic_merge(existing, v),
                    None => entries.push((k.clone(), v.clone())),
                }
            }
        }
        (Value::Seq(items), Value::Seq(patch_items))
            if patch_items.iter().all(|i| i.get("name").is_some()) && !patch_items.is_empty() =>
        {
            for pi in patch_items {
                let name = pi.get("name").and_then(Node::scalar_text);
                match items
                    .iter_mut()
                    .find(|i| i.get("name").and_then(Node::scalar_text) == name)
                {
                    Some(existing) => strategic_merge(existing, pi),
                    None => items.push(pi.clone()),
                }
            }
        }
        _ => *base = patch.clone(),
    }
}

/// One JSON 6902 operation (`add`, `replace`, `remove`) on `root`.
fn json_op(root: &mut Node, op: &Node) {
    let (Some(kind), Some(path)) = (text(op, &["op"]), text(op, &["path"])) else {
        return;
    };
    let segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut node = root;
    for segment in parents {
        let next = match &mut node.value {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|(k, _)| k.as_str() == Some(segment.as_str()))
                .map(|(_, v)| v),
            Value::Seq(items) => segment.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        let Some(next) = next else { return };
        node = next;
    }
    let value = op.get("value").cloned();
    match (&mut node.value, kind, value) {
        (Value::Map(entries), "add" | "replace", Some(v)) => {
            match entries.iter_mut().find(|(k, _)| k.as_str() == Some(last.as_str())) {
                Some((_, existing)) => *existing = v,
                None => entries.push((
                    Node {
                        span: v.span,
                        value: Value::Str(last.clone()),
                    },
                    v,
                )),
            }
        }
        (Value::Map(entries), "remove", _) => entries.retain(|(k, _)| k.as_str() != Some(last.as_str())),
        (Value::Seq(items), "add", Some(v)) if last == "-" => items.push(v),
        (Value::Seq(items), op, v) => {
            let Ok(i) = last.parse::<usize>() else { return };
            match (op, v) {
                ("add", Some(v)) if i <= items.len() => items.insert(i, v),
                ("replace", Some(v)) if i < items.len() => items[i] = v,
                ("remove", _) if i < items.len() => {
                    items.remove(i);
                }
                _ => {}
            }
        }
        _ => {}
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
    fn post_build_patches_then_sets_the_target_namespace() {
        let flux = docs(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  targetNamespace: shop\n  patches:\n    - patch: |\n        apiVersion: apps/v1\n        kind: Deployment\n        metadata: {name: web}\n        spec:\n          replicas: 4\n          template:\n            spec:\n              containers: [{name: web, resources: {requests: {cpu: 500m}}}]\n    - target: {kind: PodDisruptionBudget}\n      patch: |\n        - op: replace\n          path: /spec/minAvailable\n          value: 3\n",
        );
        let d = super::super::placeholders::deployers(flux.iter(), &|_| vec![PathBuf::from("/repo")]);
        let mut web = docs(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: web, image: web:1}]\n",
        )
        .remove(0);
        post_build(&mut web, &d[0]);
        assert_eq!(
            to_json(&web.root).to_string(),
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"replicas":4,"template":{"spec":{"containers":[{"image":"web:1","name":"web","resources":{"requests":{"cpu":"500m"}}}]}}}}"#
        );
        assert_eq!(
            web.root.at(&["spec", "replicas"]).unwrap().span.start.line,
            9,
            "at the patch"
        );
        let mut pdb = docs("kind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 1}\n").remove(0);
        post_build(&mut pdb, &d[0]);
        assert_eq!(pdb.root.at(&["spec", "minAvailable"]).unwrap().value, Value::Int(3));
        let mut class = docs("kind: StorageClass\nmetadata: {name: fast}\n").remove(0);
        post_build(&mut class, &d[0]);
        assert!(class.root.at(&["metadata", "namespace"]).is_none());
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

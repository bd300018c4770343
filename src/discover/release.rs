//! What a GitOps deployer (a Flux HelmRelease, an Argo CD Application) asks Helm to install:
//! the chart, the release name, the namespace and the values, shared by `flux` and `argocd`.

use std::path::PathBuf;

use crate::source::Span;
use crate::yaml::{Node, Value};

/// Where a deployed release's chart is.
#[derive(Debug)]
pub(super) enum Chart {
    /// A chart directory of this repository.
    Path(PathBuf),
    /// A chart of a Helm chart repository (`HelmRepository` over http(s)): fetched with the
    /// network allowed, or from the cache. `detail` says why it is not rendered otherwise.
    Repository {
        url: String,
        name: String,
        version: String,
        detail: String,
    },
    /// A chart at `path` of another Git repository: fetched with the network allowed, or from
    /// the cache. `value_files` are relative to the chart, read from the checkout.
    Git {
        url: String,
        reference: String,
        path: String,
        value_files: Vec<String>,
        detail: String,
        /// What keeps it from being fetched is reported by the Application's own path (an
        /// Argo CD source is a chart only once fetched), not again here.
        reported_elsewhere: bool,
    },
}

/// A HelmRelease or an Argo CD Application's Helm source, as far as rendering it goes.
#[derive(Debug)]
pub(super) enum Release {
    /// A chart it can render: in this repository, or from a Helm chart repository.
    Local {
        /// `namespace/name`, for reports.
        id: String,
        chart: Chart,
        /// Where the chart is named (`spec.chart.spec.chart`, `spec.source.path`).
        span: Span,
        release_name: String,
        namespace: String,
        /// Values files of the repository, in order, before `values`.
        value_files: Vec<PathBuf>,
        /// The merged inline values, as JSON (which Helm reads as YAML), last.
        values: String,
    },
    /// A chart it cannot have with the network off.
    Remote { id: String, span: Span, detail: String },
    /// Written wrong: a located error.
    Invalid { span: Span, message: String },
}

pub(super) fn text<'n>(node: &'n Node, path: &[&str]) -> Option<&'n str> {
    node.at(path).and_then(Node::as_str)
}

/// Whether `path` lies in the repository, the first of `roots`, once links are followed:
/// what a deployer names is read only from there.
pub(super) fn in_repository(path: &std::path::Path, roots: &[PathBuf]) -> bool {
    std::fs::canonicalize(path).is_ok_and(|c| roots.first().is_some_and(|r| c.starts_with(r)))
}

/// A located error when a release name or namespace is not one Helm accepts (so neither
/// can reach helm's command line as anything else).
pub(super) fn invalid_release(id: &str, span: Span, release_name: &str, namespace: &str) -> Option<Release> {
    for (value, what) in [(release_name, "release name"), (namespace, "namespace")] {
        let valid = match what {
            "release name" => is_release_name(value),
            _ => crate::manifest::read::is_dns_label(value),
        };
        if !valid {
            return Some(Release::Invalid {
                span,
                message: format!("{id}: `{}` is not a valid {what}", crate::diagnostics::printable(value)),
            });
        }
    }
    None
}

/// Helm's release names: DNS-1123 subdomains of at most 53 characters.
fn is_release_name(s: &str) -> bool {
    s.len() <= 53 && crate::manifest::read::is_dns_subdomain(s)
}

/// Helm's merge of values: maps key by key, anything else replaced.
pub(super) fn merge(base: &mut Node, over: Node) {
    match (&mut base.value, over.value) {
        (Value::Map(entries), Value::Map(over_entries)) => {
            for (k, v) in over_entries {
                match entries.iter_mut().find(|(bk, _)| bk.value == k.value) {
                    Some((_, existing)) => merge(existing, v),
                    None => entries.push((k, v)),
                }
            }
        }
        (_, value) => {
            base.value = value;
            base.span = over.span;
        }
    }
}

pub(super) fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Str(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.scalar_text().unwrap_or_default(), to_json(v)))
                .collect(),
        ),
    }
}

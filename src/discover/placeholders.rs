//! `${VAR}` placeholders: manifests written for envsubst or for Flux's post-build variable
//! substitution (kustomize-controller, `spec.postBuild.substitute` and `substituteFrom`).
//!
//! Flux substitutes a Kustomization's build output: `${var}`, `${var:-default}` and
//! `${var:=default}` (an unset variable without a default becomes empty), `$${var}` is a
//! literal `${var}`. A document a Flux Kustomization of the repository deploys (its
//! `spec.path` holds the document's file) is substituted from that Kustomization, and a value
//! that fills a whole field is located at the `substitute` entry that gives it, where a fix
//! changes it. A document nothing deploys is filled from its `:-` defaults where every
//! placeholder has one; else it is left out with a note naming the variable: its values are
//! decided at deploy time, and `${NAMESPACE}` is not a configuration mistake.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::source::{SourceMap, Span};
use crate::yaml::{Document, Node, Value};

mod deployers;
pub(super) use deployers::*;

/// One `${...}` in a scalar.
#[derive(Clone, Debug, PartialEq)]
struct Placeholder {
    name: String,
    default: Option<String>,
    /// Byte range in the scalar, `${` to `}`.
    start: usize,
    end: usize,
}

/// The placeholders of `text`, in order; `$${` escapes.
fn placeholders(text: &str) -> Vec<Placeholder> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'$' && bytes[i + 1] == b'$' {
            i += 2;
            continue;
        }
        if bytes[i] == b'$'
            && bytes[i + 1] == b'{'
            && let Some(close) = text[i + 2..].find('}')
        {
            let inner = &text[i + 2..i + 2 + close];
            let name_len = inner
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            let (name, rest) = inner.split_at(name_len);
            let default = ["_:-", "_:=", "_-", "_="]
                .iter()
                .find_map(|op| rest.strip_prefix(&op[1..]))
                .map(String::from);
            if !name.is_empty() && !name.as_bytes()[0].is_ascii_digit() && (rest.is_empty() || default.is_some()) {
                out.push(Placeholder {
                    name: name.to_string(),
                    default,
                    start: i,
                    end: i + 3 + close,
                });
            }
            i += 3 + close;
            continue;
        }
        i += 1;
    }
    out
}

/// The variables a Flux Kustomization of the repository gives what it deploys.
#[derive(Clone, Debug)]
pub(super) struct Deployer {
    /// What it is, as reports name it: `Kustomization flux-system/apps`, `Application web`.
    pub(super) id: String,
    /// `spec.path`, absolute: the documents under it are its build output.
    pub(super) root: PathBuf,
    /// Where that path is written, and as written.
    pub(super) at: Span,
    pub(super) path: String,
    /// The source it deploys from, as a note names it: the GitRepository `flux-system`, the
    /// repository `https://…`. Taken to be this repository.
    pub(super) source: String,
    /// Its subdirectories' files are deployed too (Flux; Argo CD with `directory.recurse`).
    pub(super) recurse: bool,
    /// Argo CD's `directory.include`/`exclude`: the files of a plain directory it deploys.
    pub(super) files: Option<crate::manifest::DeployedPath>,
    /// The Git repository and reference its path is of, when it names one (a Flux
    /// GitRepository's `url` and `ref`, an Argo CD source's `repoURL` and `targetRevision`):
    /// fetched when the path is not in this repository and the network is allowed.
    pub(super) git: Option<(String, String)>,
    /// What it adds to the kustomization it builds (components, name prefix, labels, images).
    pub(super) build: super::kustomize::BuildOptions,
    /// Build entries it names that kivi-lint does not use, located, with why.
    pub(super) problems: Vec<(Span, String)>,
    /// It has `postBuild`: its build output is substituted (unset variables become empty).
    pub(super) substitutes: bool,
    /// Each variable's value and where it is written.
    pub(super) vars: BTreeMap<String, (String, Span)>,
    /// `spec.targetNamespace`: the namespace of every namespaced object it applies.
    pub(super) target_namespace: Option<Node>,
    /// An Argo CD Application's `destination.namespace`: the namespace of the objects that
    /// have none.
    pub(super) default_namespace: Option<Node>,
    /// `spec.patches`: each patch (a partial object, or a list of JSON 6902 operations) and
    /// its target's kind and name.
    pub(super) patches: Vec<(Node, Option<String>, Option<String>)>,
}

/// What became of one document.
#[derive(Debug, PartialEq)]
pub(super) enum Outcome {
    /// No placeholder, or every one filled in.
    Kept,
    /// Left out: the first variable nothing gives a value, and where it is.
    Unfilled { name: String, span: Span },
}

/// Fill in the placeholders of `doc`: from `deployer` where one deploys it (an unset variable
/// becomes empty, as Flux does), else from their defaults. `quoted` tells whether a scalar
/// at a span was written in quotes (a whole-field value written plain takes its YAML type:
/// `replicas: ${REPLICAS}` is a number once filled).
pub(super) fn fill(doc: &mut Document, deployer: Option<&Deployer>, quoted: &dyn Fn(Span) -> bool) -> Outcome {
    if deployer.is_none() {
        let kind = doc.root.get("kind").and_then(Node::as_str).unwrap_or_default();
        let mut unfilled = None;
        find_unfilled(&doc.root, kind, &mut Vec::new(), &mut unfilled);
        if let Some((name, span)) = unfilled {
            return Outcome::Unfilled { name, span };
        }
    }
    substitute(&mut doc.root, deployer, quoted);
    Outcome::Kept
}

/// The kinds kivi-lint reads beyond their name and namespace.
const MODELLED_KINDS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "Job",
    "CronJob",
    "HorizontalPodAutoscaler",
    "PodDisruptionBudget",
    "Service",
    "Node",
    "PriorityClass",
    "StorageClass",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "DeschedulerPolicy",
    "KubeSchedulerConfiguration",
];

/// Fields no check reads: a placeholder there stays as written (Kubernetes takes it as a
/// string), and the document is still verified.
const UNREAD_FIELDS: &[&str] = &[
    "annotations",
    "image",
    "imagePullPolicy",
    "imagePullSecrets",
    "env",
    "envFrom",
    "args",
    "command",
    "workingDir",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "securityContext",
    "serviceAccountName",
    "volumeMounts",
    "ports",
];

/// The first placeholder without a default in a field kivi-lint reads: the object's
/// namespace, or anything of a modelled kind outside [`UNREAD_FIELDS`].
fn find_unfilled<'n>(node: &'n Node, kind: &str, path: &mut Vec<&'n str>, out: &mut Option<(String, Span)>) {
    if out.is_some() {
        return;
    }
    match &node.value {
        Value::Str(s) => {
            // Every object's namespace is checked as Kubernetes checks it, and the name of the
            // kinds whose names must be DNS subdomains; the rest only matters to the kinds
            // kivi-lint models.
            let identity = match path.as_slice() {
                ["metadata", "namespace"] => true,
                ["metadata", "name"] => crate::manifest::name_is_dns_subdomain(kind),
                _ => false,
            };
            let read = MODELLED_KINDS.contains(&kind) && !path.iter().any(|p| UNREAD_FIELDS.contains(p));
            if (identity || read)
                && let Some(p) = placeholders(s).into_iter().find(|p| p.default.is_none())
            {
                *out = Some((p.name, node.span));
            }
        }
        Value::Seq(items) => items.iter().for_each(|n| find_unfilled(n, kind, path, out)),
        Value::Map(entries) => {
            for (k, v) in entries {
                path.push(k.as_str().unwrap_or_default());
                find_unfilled(v, kind, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn substitute(node: &mut Node, deployer: Option<&Deployer>, quoted: &dyn Fn(Span) -> bool) {
    match &mut node.value {
        Value::Str(s) => {
            let found = placeholders(s);
            if found.is_empty() {
                return;
            }
            let whole = found.len() == 1 && found[0].start == 0 && found[0].end == s.len();
            let mut text = String::new();
            let mut last = 0;
            let mut from = None;
            for p in &found {
                text.push_str(&s[last..p.start]);
                let given = deployer.and_then(|d| d.vars.get(&p.name));
                match (given, &p.default) {
                    (Some((value, span)), _) => {
                        text.push_str(value);
                        from = Some(*span);
                    }
                    (None, Some(default)) => text.push_str(default),
                    // Flux makes an unset variable empty; elsewhere it stays as written
                    // (only in a field nothing reads, see `find_unfilled`).
                    (None, None) if deployer.is_some() => {}
                    (None, None) => text.push_str(&s[p.start..p.end]),
                }
                last = p.end;
            }
            text.push_str(&s[last..]);
            let text = text.replace("$${", "${");
            let plain = whole && !quoted(node.span);
            if whole && let Some(span) = from {
                // The value comes from the Kustomization: that is where it is changed.
                node.span = span;
            }
            node.value = if plain {
                crate::yaml::resolve_plain(&text)
            } else {
                Value::Str(text)
            };
        }
        Value::Seq(items) => items.iter_mut().for_each(|n| substitute(n, deployer, quoted)),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| substitute(v, deployer, quoted)),
        _ => {}
    }
}

/// Whether the scalar at `span` is written in quotes in its source.
pub(super) fn quoted_in(sources: &SourceMap, span: Span) -> bool {
    sources
        .line_text(span.file, span.start.line)
        .and_then(|line| line.chars().nth(span.start.column.saturating_sub(1) as usize))
        .is_some_and(|c| c == '"' || c == '\'')
}

/// The deployer of a file (or of a render, by its root): the one with the deepest path
/// holding it, directly unless it deploys subdirectories too.
pub(super) fn deployer_of<'d>(deployers: &'d [Deployer], file: &Path) -> Option<&'d Deployer> {
    deployers
        .iter()
        .filter(|d| {
            let inside =
                file == d.root || file.parent() == Some(d.root.as_path()) || (d.recurse && file.starts_with(&d.root));
            let admitted = file == d.root
                || d.files
                    .as_ref()
                    .is_none_or(|f| f.admits(file.strip_prefix(&d.root).unwrap_or(file)));
            inside && admitted
        })
        .max_by_key(|d| d.root.components().count())
}

#[cfg(test)]
mod tests;

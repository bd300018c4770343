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

/// The Flux Kustomizations among `documents` that substitute, with `substituteFrom`
/// resolved from the ConfigMaps and Secrets of the repository (`named`). `repository` is
/// what `spec.path` is relative to: the GitRepository is taken to be this repository.
pub(super) fn deployers<'d>(
    documents: impl Iterator<Item = &'d Document> + Clone,
    roots_of: &dyn Fn(&Node) -> Vec<PathBuf>,
) -> Vec<Deployer> {
    let mut out = Vec::new();
    for doc in documents.clone() {
        let root = &doc.root;
        let roots = &roots_of(root);
        let api = root.get("apiVersion").and_then(Node::as_str).unwrap_or_default();
        if api.starts_with("argoproj.io/") && root.get("kind").and_then(Node::as_str) == Some("Application") {
            out.extend(application(root, roots));
            continue;
        }
        if !api.starts_with("kustomize.toolkit.fluxcd.io/")
            || root.get("kind").and_then(Node::as_str) != Some("Kustomization")
        {
            continue;
        }
        let post_build = root.at(&["spec", "postBuild"]);
        let Some(path) = root.at(&["spec", "path"]).and_then(Node::as_str) else {
            continue;
        };
        let namespace = root
            .at(&["metadata", "namespace"])
            .and_then(Node::as_str)
            .unwrap_or("default");
        let mut vars = BTreeMap::new();
        // `substituteFrom` first, in order; `substitute` wins over it.
        for from in post_build
            .and_then(|p| p.get("substituteFrom"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let kind = from.get("kind").and_then(Node::as_str).unwrap_or_default();
            let name = from.get("name").and_then(Node::as_str).unwrap_or_default();
            if let Some(data) = config_data(documents.clone(), kind, namespace, name) {
                vars.extend(data);
            }
        }
        if let Some(entries) = post_build.and_then(|p| p.get("substitute")).and_then(Node::as_map) {
            for (k, v) in entries {
                if let (Some(k), Some(text)) = (k.as_str(), v.scalar_text()) {
                    vars.insert(k.to_string(), (text, v.span));
                }
            }
        }
        let patches = patches(root.at(&["spec", "patches"]));
        let name = root
            .at(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or_default();
        // An ExternalArtifact of an ArtifactGenerator is made of paths of this repository.
        let in_artifact = match root.at(&["spec", "sourceRef", "kind"]).and_then(Node::as_str) {
            Some("ExternalArtifact") => {
                let artifact = root
                    .at(&["spec", "sourceRef", "name"])
                    .and_then(Node::as_str)
                    .unwrap_or_default();
                artifact_path(documents.clone(), artifact, path)
            }
            _ => None,
        };
        let built = resolve(roots, in_artifact.as_deref().unwrap_or(path));
        let spec = root.get("spec");
        let mut problems = Vec::new();
        let mut build = super::kustomize::BuildOptions {
            // Flux resolves components from `spec.path`.
            components: components(spec.and_then(|s| s.get("components")), &built, roots, &mut problems),
            name_prefix: spec.and_then(|s| s.get("namePrefix")).and_then(Node::scalar_text),
            name_suffix: spec.and_then(|s| s.get("nameSuffix")).and_then(Node::scalar_text),
            ..Default::default()
        };
        for image in spec
            .and_then(|s| s.get("images"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            build.images.push(super::release::to_json(image));
        }
        out.push(Deployer {
            id: format!("Kustomization {namespace}/{name}"),
            root: built,
            at: root.at(&["spec", "path"]).map_or(root.span, |p| p.span),
            path: path.to_string(),
            source: format!(
                "the {} `{}`",
                root.at(&["spec", "sourceRef", "kind"])
                    .and_then(Node::as_str)
                    .unwrap_or("GitRepository"),
                root.at(&["spec", "sourceRef", "name"])
                    .and_then(Node::as_str)
                    .unwrap_or_default()
            ),
            recurse: true,
            files: None,
            git: flux_git_source(documents.clone(), root, namespace),
            build,
            problems,
            substitutes: post_build.is_some(),
            vars,
            target_namespace: root.at(&["spec", "targetNamespace"]).cloned(),
            default_namespace: None,
            patches,
        });
    }
    out
}

/// The URL and reference of the GitRepository a Flux Kustomization builds from (see
/// `git_repository`); another kind of source is not fetched.
fn flux_git_source<'d>(
    documents: impl Iterator<Item = &'d Document>,
    kustomization: &Node,
    namespace: &str,
) -> Option<(String, String)> {
    let at = |path: &[&str]| kustomization.at(path).and_then(Node::as_str);
    if at(&["spec", "sourceRef", "kind"]) != Some("GitRepository") {
        return None;
    }
    let name = at(&["spec", "sourceRef", "name"])?;
    let namespace = at(&["spec", "sourceRef", "namespace"]).unwrap_or(namespace);
    git_repository(documents, namespace, name)
}

/// The URL and reference of the Flux GitRepository `namespace/name` among `documents`:
/// `ref.commit`, else `ref.tag`, else `ref.branch`, else `ref.name`, else the default branch.
/// A `semver` reference is not resolved here (`None`).
pub(super) fn git_repository<'d>(
    documents: impl Iterator<Item = &'d Document>,
    namespace: &str,
    name: &str,
) -> Option<(String, String)> {
    let repository = &find_object(documents, "GitRepository", namespace, name)?.root;
    let url = repository.at(&["spec", "url"]).and_then(Node::as_str)?;
    let reference = repository.at(&["spec", "ref"]);
    if reference.and_then(|r| r.get("semver")).is_some() {
        return None;
    }
    let reference = ["commit", "tag", "branch", "name"]
        .iter()
        .find_map(|k| reference.and_then(|r| r.get(k)).and_then(Node::scalar_text))
        .unwrap_or_default();
    Some((url.to_string(), reference))
}

/// The repository path that `path` of the ExternalArtifact `artifact` is copied from, by the
/// ArtifactGenerator (source-watcher) that makes it from a GitRepository (taken to be this
/// repository): each `copy` entry `from: "@source/<dir>/**"` to `to: "@artifact/<dest>/"`
/// puts `<dir>` at `<dest>`.
fn artifact_path<'d>(documents: impl Iterator<Item = &'d Document>, artifact: &str, path: &str) -> Option<String> {
    let path = path.trim_start_matches("./").trim_end_matches('/');
    for doc in documents {
        let root = &doc.root;
        if root.get("kind").and_then(Node::as_str) != Some("ArtifactGenerator") {
            continue;
        }
        let git_aliases: Vec<&str> = root
            .at(&["spec", "sources"])
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter(|s| s.get("kind").and_then(Node::as_str) == Some("GitRepository"))
            .filter_map(|s| s.get("alias").and_then(Node::as_str))
            .collect();
        let artifacts = root
            .at(&["spec", "artifacts"])
            .and_then(Node::as_seq)
            .unwrap_or_default();
        let Some(made) = artifacts
            .iter()
            .find(|a| a.get("name").and_then(Node::as_str) == Some(artifact))
        else {
            continue;
        };
        for copy in made.get("copy").and_then(Node::as_seq).unwrap_or_default() {
            let (Some(from), Some(to)) = (
                copy.get("from").and_then(Node::as_str),
                copy.get("to").and_then(Node::as_str),
            ) else {
                continue;
            };
            let Some((alias, source)) = from.trim_start_matches('@').split_once('/') else {
                continue;
            };
            if !git_aliases.contains(&alias) {
                continue;
            }
            let source = source
                .trim_end_matches("/**")
                .trim_end_matches("/*")
                .trim_end_matches('/');
            let dest = to.trim_start_matches("@artifact").trim_matches('/');
            let rest = if dest.is_empty() {
                Some(path)
            } else {
                path.strip_prefix(dest)
                    .filter(|r| r.is_empty() || r.starts_with('/'))
                    .map(|r| r.trim_start_matches('/'))
            };
            if let Some(rest) = rest {
                return Some(
                    [source, rest]
                        .iter()
                        .filter(|p| !p.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    None
}

/// The kustomize and directory sources of an Argo CD Application: their path, the
/// destination namespace for objects without one, and the `kustomize` options as Argo CD's
/// repo-server applies them (`kustomize edit set ...`, then `patches`).
fn application(root: &Node, roots: &[PathBuf]) -> Vec<Deployer> {
    let name = root
        .at(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or_default();
    let single = root.at(&["spec", "source"]).into_iter();
    let many = root
        .at(&["spec", "sources"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter();
    let sources: Vec<&Node> = single.chain(many).collect();
    let several = sources.len() > 1;
    sources
        .into_iter()
        .enumerate()
        .filter(|(_, source)| source.get("chart").is_none())
        .filter_map(|(i, source)| {
            let path = source.get("path").and_then(Node::as_str)?;
            let built = resolve(roots, path);
            let kustomize = source.get("kustomize");
            let option = |key: &str| kustomize.and_then(|k| k.get(key));
            let mut problems = Vec::new();
            let pairs = |key: &str| -> Vec<(String, String)> {
                option(key)
                    .and_then(Node::as_map)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.scalar_text()?)))
                    .collect()
            };
            let build = super::kustomize::BuildOptions {
                components: components(option("components"), &built, roots, &mut problems),
                name_prefix: option("namePrefix").and_then(Node::scalar_text),
                name_suffix: option("nameSuffix").and_then(Node::scalar_text),
                common_labels: pairs("commonLabels"),
                labels_without_selector: option("labelWithoutSelector").is_some_and(|n| n.value == Value::Bool(true)),
                common_annotations: pairs("commonAnnotations"),
                images: option("images")
                    .and_then(Node::as_seq)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(Node::as_str)
                    .map(super::kustomize::image_override)
                    .collect(),
            };
            let mut patches = patches(option("patches"));
            // `replicas`: the count of each workload named, wherever its name got a prefix.
            for entry in option("replicas").and_then(Node::as_seq).unwrap_or_default() {
                let (Some(name), Some(count)) = (entry.get("name").and_then(Node::scalar_text), entry.get("count"))
                else {
                    continue;
                };
                let count = match count.scalar_text().and_then(|t| t.parse::<i64>().ok()) {
                    Some(n) => Node {
                        span: count.span,
                        value: Value::Int(n),
                    },
                    None => count.clone(),
                };
                let named = format!(
                    "{}{name}{}",
                    build.name_prefix.as_deref().unwrap_or_default(),
                    build.name_suffix.as_deref().unwrap_or_default()
                );
                for kind in ["Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"] {
                    let patch = Node {
                        span: count.span,
                        value: Value::Map(vec![(
                            Node {
                                span: count.span,
                                value: Value::Str("spec".into()),
                            },
                            Node {
                                span: count.span,
                                value: Value::Map(vec![(
                                    Node {
                                        span: count.span,
                                        value: Value::Str("replicas".into()),
                                    },
                                    count.clone(),
                                )]),
                            },
                        )]),
                    };
                    patches.push((patch, Some(kind.to_string()), Some(named.clone())));
                }
            }
            Some(Deployer {
                id: if several {
                    format!("Application {name}, source {}", i + 1)
                } else {
                    format!("Application {name}")
                },
                root: built,
                at: source.get("path").map_or(source.span, |p| p.span),
                path: path.to_string(),
                source: format!(
                    "the repository `{}`",
                    source.get("repoURL").and_then(Node::as_str).unwrap_or_default()
                ),
                recurse: source
                    .at(&["directory", "recurse"])
                    .is_some_and(|r| r.value == Value::Bool(true)),
                git: source.get("repoURL").and_then(Node::as_str).map(|url| {
                    let revision = source
                        .get("targetRevision")
                        .and_then(Node::scalar_text)
                        .unwrap_or_default();
                    let revision = if revision == "HEAD" { String::new() } else { revision };
                    (url.to_string(), revision)
                }),
                files: {
                    let pattern = |k: &str| {
                        source
                            .at(&["directory", k])
                            .and_then(Node::as_str)
                            .filter(|p| !p.is_empty())
                            .map(String::from)
                    };
                    let (include, exclude) = (pattern("include"), pattern("exclude"));
                    (include.is_some() || exclude.is_some()).then(|| crate::manifest::DeployedPath {
                        path: path.to_string(),
                        recurse: false,
                        include,
                        exclude,
                    })
                },
                build,
                problems,
                substitutes: false,
                vars: BTreeMap::new(),
                // `kustomize.namespace` sets every namespaced object's namespace.
                target_namespace: option("namespace").cloned(),
                default_namespace: root.at(&["spec", "destination", "namespace"]).cloned(),
                patches,
            })
        })
        .collect()
}

/// Component directories a deployer adds, relative to the path it builds: each must be a
/// directory of this repository (anything else is a located problem, and not used).
fn components(
    list: Option<&Node>,
    built: &Path,
    roots: &[PathBuf],
    problems: &mut Vec<(Span, String)>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in list.and_then(Node::as_seq).unwrap_or_default() {
        let Some(path) = entry.as_str() else { continue };
        let dir = crate::source::normalize(&built.join(path));
        if !super::release::in_repository(&dir, roots) || !dir.is_dir() {
            problems.push((
                entry.span,
                format!(
                    "component `{}` is not a directory of this repository: kivi-lint builds without it",
                    crate::diagnostics::printable(path)
                ),
            ));
            continue;
        }
        out.push(dir);
    }
    out
}

/// `patches` of a Flux Kustomization or an Argo CD kustomize source: each patch (YAML in a
/// string, its fields at the entry) and its target's kind and name.
fn patches(list: Option<&Node>) -> Vec<(Node, Option<String>, Option<String>)> {
    list.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| {
            let text = p.get("patch")?;
            let patch = match text.as_str() {
                Some(yaml) => {
                    let mut node = crate::yaml::parse(yaml, text.span.file, &crate::yaml::Limits::default())
                        .documents
                        .into_iter()
                        .next()?
                        .root;
                    node.for_each_mut(&mut |n| n.span = text.span);
                    node
                }
                None => text.clone(),
            };
            let target = |k: &str| p.at(&["target", k]).and_then(Node::as_str).map(String::from);
            Some((patch, target("kind"), target("name")))
        })
        .collect()
}

/// A path of the GitRepository a Flux object builds from, taken to be this repository: under
/// the first of `roots` (the repository, then the scanned directories) where it exists.
pub(super) fn resolve(roots: &[PathBuf], relative: &str) -> PathBuf {
    let relative = relative.trim_start_matches("./").trim_start_matches('/');
    let candidates = roots.iter().map(|r| crate::source::normalize(&r.join(relative)));
    candidates
        .clone()
        .find(|p| p.exists())
        .or_else(|| candidates.clone().next())
        .unwrap_or_else(|| PathBuf::from(relative))
}

/// The `data` (and `stringData`) of the ConfigMap or Secret `name` in `namespace`.
fn config_data<'d>(
    documents: impl Iterator<Item = &'d Document>,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Option<BTreeMap<String, (String, Span)>> {
    let doc = find_object(documents, kind, namespace, name)?;
    let mut out = BTreeMap::new();
    for field in ["data", "stringData"] {
        let Some(entries) = doc.root.get(field).and_then(Node::as_map) else {
            continue;
        };
        for (k, v) in entries {
            let (Some(k), Some(text)) = (k.as_str(), v.scalar_text()) else {
                continue;
            };
            let value = if kind == "Secret" && field == "data" {
                match base64_decode(&text) {
                    Some(v) => v,
                    None => continue,
                }
            } else {
                text
            };
            out.insert(k.to_string(), (value, v.span));
        }
    }
    Some(out)
}

/// The object `kind` `name` of `namespace` (or written without one) among `documents`: what
/// a Flux object's reference to a ConfigMap or Secret of its namespace finds.
pub(super) fn find_object<'d>(
    documents: impl IntoIterator<Item = &'d Document>,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Option<&'d Document> {
    documents.into_iter().find(|d| {
        d.root.get("kind").and_then(Node::as_str) == Some(kind)
            && d.root.at(&["metadata", "name"]).and_then(Node::as_str) == Some(name)
            && d.root
                .at(&["metadata", "namespace"])
                .and_then(Node::as_str)
                .is_none_or(|n| n == namespace)
    })
}

/// A Secret's `data` value (`stringData` is written as it is).
pub(super) fn base64_decode(text: &str) -> Option<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::new();
    for b in text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=') {
        let v = ALPHABET.iter().position(|a| *a == b)? as u32;
        bits = (bits << 6) | v;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(out).ok()
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
mod tests {
    use super::*;
    use crate::source::FileId;

    #[test]
    fn placeholders_with_and_without_defaults() {
        let found = placeholders("${A}-x-${B:-b}${C:=c} $${D} ${1X} ${E^^}");
        let names: Vec<(&str, Option<&str>)> = found.iter().map(|p| (p.name.as_str(), p.default.as_deref())).collect();
        assert_eq!(names, vec![("A", None), ("B", Some("b")), ("C", Some("c"))]);
    }

    fn parse(text: &str) -> Document {
        crate::yaml::parse(text, FileId(0), &crate::yaml::Limits::default())
            .documents
            .remove(0)
    }

    #[test]
    fn defaults_fill_in_and_a_whole_plain_value_takes_its_type() {
        let mut doc =
            parse("metadata:\n  namespace: ${NS:-shop}\nspec:\n  replicas: ${R:-3}\n  image: app:${TAG:-1.0}\n");
        assert_eq!(fill(&mut doc, None, &|_| false), Outcome::Kept);
        assert_eq!(doc.root.at(&["metadata", "namespace"]).unwrap().as_str(), Some("shop"));
        assert_eq!(doc.root.at(&["spec", "replicas"]).unwrap().value, Value::Int(3));
        assert_eq!(doc.root.at(&["spec", "image"]).unwrap().as_str(), Some("app:1.0"));
    }

    #[test]
    fn a_variable_without_a_value_leaves_the_document_out() {
        let mut doc = parse("metadata:\n  namespace: ${NAMESPACE}\n");
        match fill(&mut doc, None, &|_| false) {
            Outcome::Unfilled { name, span } => {
                assert_eq!(name, "NAMESPACE");
                assert_eq!(span.start.line, 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_deployer_gives_values_located_where_it_writes_them() {
        let flux = parse(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n  postBuild:\n    substitute:\n      REPLICAS: \"2\"\n    substituteFrom:\n      - kind: ConfigMap\n        name: vars\n---\n",
        );
        let vars = parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vars\n  namespace: flux-system\ndata:\n  NS: shop\n",
        );
        let docs = [flux, vars];
        let d = deployers(docs.iter(), &|_| vec![PathBuf::from("/repo")]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].root, PathBuf::from("/repo/apps"));
        assert!(deployer_of(&d, Path::new("/repo/apps/x.yaml")).is_some());
        assert!(deployer_of(&d, Path::new("/repo/other/x.yaml")).is_none());
        let mut doc = parse("metadata:\n  namespace: ${NS}\nspec:\n  replicas: ${REPLICAS}\n  x: ${UNSET}\n");
        assert_eq!(fill(&mut doc, Some(&d[0]), &|_| false), Outcome::Kept);
        let replicas = doc.root.at(&["spec", "replicas"]).unwrap();
        assert_eq!(replicas.value, Value::Int(2));
        assert_eq!(replicas.span.start.line, 10, "located at the substitute entry");
        assert_eq!(doc.root.at(&["metadata", "namespace"]).unwrap().as_str(), Some("shop"));
        assert_eq!(doc.root.at(&["spec", "x"]).unwrap().value, Value::Null);
    }

    #[test]
    fn a_placeholder_in_a_field_nothing_reads_stays() {
        let mut doc = parse(
            "kind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - image: ${IMAGE}\n---\n",
        );
        assert_eq!(fill(&mut doc, None, &|_| false), Outcome::Kept);
        let mut doc = parse("kind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: ${A}\n");
        assert_eq!(fill(&mut doc, None, &|_| false), Outcome::Kept);
        let mut doc = parse("kind: ConfigMap\nmetadata:\n  name: x\n  namespace: ${NS}\n");
        assert!(matches!(fill(&mut doc, None, &|_| false), Outcome::Unfilled { .. }));
    }

    #[test]
    fn an_external_artifact_path_is_the_repository_path_it_is_copied_from() {
        // fluxcd/flux2-kustomize-helm-example's ArtifactGenerator.
        let generator = parse(
            "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: g}\nspec:\n  sources: [{alias: monorepo, kind: GitRepository, name: flux-system}]\n  artifacts:\n    - name: infrastructure\n      copy: [{from: '@monorepo/infrastructure/**', to: '@artifact/'}]\n    - name: apps\n      copy:\n        - {from: '@monorepo/apps/base/**', to: '@artifact/base/'}\n        - {from: '@monorepo/apps/production/**', to: '@artifact/production/'}\n",
        );
        let docs = [generator];
        let path = |artifact: &str, path: &str| artifact_path(docs.iter(), artifact, path);
        assert_eq!(
            path("infrastructure", "./controllers").as_deref(),
            Some("infrastructure/controllers")
        );
        assert_eq!(path("apps", "./production").as_deref(), Some("apps/production"));
        assert_eq!(path("apps", "./productions"), None);
        assert_eq!(path("other", "./production"), None);
    }

    #[test]
    fn secrets_are_decoded() {
        assert_eq!(base64_decode("c2hvcA==").as_deref(), Some("shop"));
    }
}

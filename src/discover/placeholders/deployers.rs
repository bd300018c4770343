//! The deployers that substitute: Flux Kustomizations (`spec.postBuild.substitute`,
//! `substituteFrom` from the ConfigMaps and Secrets of the repository) and Argo CD
//! Applications, with the paths they deploy.

use super::*;

/// The Flux Kustomizations among `documents` that substitute, with `substituteFrom`
/// resolved from the ConfigMaps and Secrets of the repository (`named`). `repository` is
/// what `spec.path` is relative to: the GitRepository is taken to be this repository.
pub(in crate::discover) fn deployers<'d>(
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
        let mut build = crate::discover::kustomize::BuildOptions {
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
            build.images.push(crate::discover::release::to_json(image));
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
pub(in crate::discover) fn git_repository<'d>(
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
pub(in crate::discover) fn artifact_path<'d>(
    documents: impl Iterator<Item = &'d Document>,
    artifact: &str,
    path: &str,
) -> Option<String> {
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
            let build = crate::discover::kustomize::BuildOptions {
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
                    .map(crate::discover::kustomize::image_override)
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
        if !crate::discover::release::in_repository(&dir, roots) || !dir.is_dir() {
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
pub(in crate::discover) fn resolve(roots: &[PathBuf], relative: &str) -> PathBuf {
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
pub(in crate::discover) fn find_object<'d>(
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
pub(in crate::discover) fn base64_decode(text: &str) -> Option<String> {
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

//! Reading objects from parsed documents: each kind's reader, names checked as the API server
//! would, and the manifests a ConfigMap embeds.

use super::*;

/// Read the objects of parsed documents. `default_namespace` is the namespace of objects that
/// name none (Helm's release namespace, else `default`).
pub fn load(
    documents: &[yaml::Document],
    default_namespace: &str,
    sources: &SourceMap,
    diags: &mut Diagnostics,
) -> Loaded {
    let mut out = Loaded::default();
    for doc in documents {
        load_node(&doc.root, default_namespace, sources, diags, &mut out, 0);
    }
    out
}

fn load_node(
    node: &Node,
    default_namespace: &str,
    sources: &SourceMap,
    diags: &mut Diagnostics,
    out: &mut Loaded,
    depth: usize,
) {
    if node.as_map().is_none() {
        out.skipped.push(Skipped {
            span: node.span,
            reason: format!("document is {}, not a mapping", node.type_name()),
        });
        return;
    }
    let api_version = node.get("apiVersion").filter(|n| !n.is_null());
    let kind = node.get("kind").filter(|n| !n.is_null());
    let (Some(api_version), Some(kind)) = (api_version, kind) else {
        out.skipped.push(Skipped {
            span: node.span,
            reason: "document has no `apiVersion` and `kind`".into(),
        });
        return;
    };
    let mut r = Reader { diags };
    let (Some(api_version), Some(kind_text)) = (api_version.as_str(), kind.as_str()) else {
        r.error(
            if api_version.as_str().is_none() {
                api_version.span
            } else {
                kind.span
            },
            "`apiVersion` and `kind` must be strings",
        );
        return;
    };
    if kind_text.ends_with("List")
        && let Some(items) = node.get("items")
    {
        if depth > 2 {
            r.error(node.span, "lists nested more than two deep");
            return;
        }
        match items.as_seq() {
            Some(items) => {
                for item in items {
                    load_node(item, default_namespace, sources, diags, out, depth + 1);
                }
            }
            None if items.is_null() => {}
            None => r.error(items.span, "`items` must be a list"),
        }
        return;
    }
    if let Some(object) = read_object(&mut r, node, api_version, kind_text, default_namespace) {
        if object.id.kind == "ConfigMap" {
            load_embedded(node, &object, sources, diags, out);
        }
        out.objects.push(object);
    }
}

/// Whether the API server takes names of `kind` only as DNS-1123 subdomains (see
/// [`check_name`]).
pub fn name_is_dns_subdomain(kind: &str) -> bool {
    matches!(
        kind,
        "Deployment"
            | "StatefulSet"
            | "DaemonSet"
            | "ReplicaSet"
            | "ReplicationController"
            | "Pod"
            | "Job"
            | "CronJob"
            | "Service"
            | "HorizontalPodAutoscaler"
            | "PodDisruptionBudget"
            | "Namespace"
            | "ConfigMap"
            | "Node"
    )
}

/// A name as the API server validates it: the objects kivi-lint models (workloads, Services,
/// HPAs, PDBs, Namespaces, Nodes) need a DNS-1123 subdomain; any other kind at least a path segment
/// without control characters. A name Kubernetes rejects is an input error, and its text is
/// shown escaped (it may hold terminal escapes).
fn check_name(r: &mut Reader, name: &crate::source::Spanned<String>, kind: &str) {
    let strict = name_is_dns_subdomain(kind);
    let value = &name.value;
    let ok = if strict {
        read::is_dns_subdomain(value)
    } else {
        value.len() <= 253
            && !value.chars().any(|c| c.is_control() || c == '/' || c == '%')
            && value != "."
            && value != ".."
    };
    if !ok {
        r.error(
            name.span,
            if strict {
                format!(
                    "`metadata.name` `{}` is not a valid {kind} name: lower-case letters, digits, `-` and `.`, at most 253 (a DNS-1123 subdomain)",
                    shown(value)
                )
            } else {
                format!("`metadata.name` `{}` is not a valid name: no `/`, `%` or control characters", shown(value))
            },
        );
    }
}

/// Manifest text in a message: control characters escaped, long text cut.
fn shown(s: &str) -> String {
    let escaped: String = s.chars().flat_map(char::escape_default).collect();
    read::truncate(&escaped)
}

fn read_object(r: &mut Reader, node: &Node, api_version: &str, kind: &str, default_namespace: &str) -> Option<Object> {
    let span = node.span;
    let metadata = r.map(node, "metadata");
    let name = match metadata {
        Some(m) => match r.text(m, "name") {
            Some(n) => {
                check_name(r, &n, kind);
                n.value
            }
            // The API server appends a random suffix to a generateName.
            None => r.text(m, "generateName").map_or_else(String::new, |g| {
                check_name(r, &crate::source::Spanned::new(format!("{}x", g.value), g.span), kind);
                g.value
            }),
        },
        None => String::new(),
    };
    let labels = metadata.map(|m| r.string_map(m, "labels")).unwrap_or_default();
    let namespace = metadata
        .and_then(|m| r.text(m, "namespace"))
        .map(|n| {
            if !n.value.is_empty() && !read::is_dns_label(&n.value) {
                r.error(
                    n.span,
                    format!(
                        "`metadata.namespace` `{}` is not a valid namespace: lower-case letters, digits and `-`, at most 63 (a DNS-1123 label)",
                        shown(&n.value)
                    ),
                );
            }
            n.value
        })
        .filter(|n| !n.is_empty());
    let namespace = if is_cluster_scoped(kind) {
        None
    } else {
        Some(namespace.unwrap_or_else(|| default_namespace.to_string()))
    };
    let group = api_group(api_version);
    let body =
        if let Some(wk) = WorkloadKind::from_kind(kind, group) {
            Some(Body::Workload(Box::new(Workload::read(r, wk, node, span))))
        } else {
            match (group, kind) {
                ("autoscaling", "HorizontalPodAutoscaler") => HorizontalPodAutoscaler::read(r, node, api_version, span)
                    .map(|h| Body::HorizontalPodAutoscaler(Box::new(h))),
                ("policy", "PodDisruptionBudget") => {
                    PodDisruptionBudget::read(r, node, span).map(|p| Body::PodDisruptionBudget(Box::new(p)))
                }
                ("descheduler", "DeschedulerPolicy") => Some(Body::DeschedulerPolicy(Box::new(
                    DeschedulerPolicy::read(r, node, api_version),
                ))),
                ("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration") => Some(Body::SchedulerConfiguration(
                    Box::new(SchedulerConfiguration::read(r, node)),
                )),
                ("", "Node") => Some(Body::Node(Box::new(NodeObject::read(r, node, labels.clone())))),
                ("", "Namespace") => Some(Body::Namespace),
                ("", "Service") => Some(Body::Service {
                    selector: r
                        .map(node, "spec")
                        .map(|spec| r.string_map(spec, "selector"))
                        .unwrap_or_default(),
                }),
                ("argoproj.io", "Application") => Some(deploy_source(node.get("spec"))),
                // Flux builds a path without a kustomization from every manifest under it.
                ("kustomize.toolkit.fluxcd.io", "Kustomization") => Some(Body::DeploySource {
                    paths: node
                        .at(&["spec", "path"])
                        .and_then(Node::as_str)
                        .map(|path| DeployedPath {
                            path: path.to_string(),
                            recurse: true,
                            include: None,
                            exclude: None,
                        })
                        .into_iter()
                        .collect(),
                }),
                ("storage.k8s.io", "StorageClass") => {
                    Some(Body::StorageClass(Box::new(storage::StorageClass::read(r, node, span))))
                }
                ("", "PersistentVolumeClaim") => Some(Body::PersistentVolumeClaim(Box::new(
                    node.get("spec")
                        .map(|s| storage::PersistentVolumeClaim::read_spec(r, s))
                        .unwrap_or(storage::PersistentVolumeClaim {
                            storage_class: None,
                            volume_name: None,
                        }),
                ))),
                ("", "PersistentVolume") => Some(Body::PersistentVolume(Box::new(storage::PersistentVolume::read(
                    r, node,
                )))),
                ("scheduling.k8s.io", "PriorityClass") => Some(Body::PriorityClass {
                    value: r.int32(node, "value").map_or(0, |v| v.value),
                    global_default: r.bool(node, "globalDefault").is_some_and(|b| b.value),
                }),
                _ => Some(Body::Other),
            }
        };
    let modelled = !matches!(
        body,
        Some(Body::Other)
            | Some(Body::DeschedulerPolicy(_))
            | Some(Body::SchedulerConfiguration(_))
            | Some(Body::DeploySource { .. })
    );
    if name.is_empty() && modelled {
        r.error(span, format!("{kind} has no `metadata.name`"));
    }
    let mut ignores = Vec::new();
    read_ignores(metadata, &mut ignores);
    if matches!(body, Some(Body::Workload(_))) {
        let template = node
            .get("spec")
            .and_then(|s| s.get("template"))
            .and_then(|t| t.get("metadata"));
        read_ignores(template, &mut ignores);
    }
    Some(Object {
        id: ObjectId {
            kind: kind.to_string(),
            namespace,
            name,
        },
        api_version: api_version.to_string(),
        labels,
        span,
        embedded: false,
        scope: 0,
        shadowed: false,
        invalid: false,
        body: body.unwrap_or(Body::Other),
        ignores,
    })
}

/// Policies kept as YAML strings in ConfigMap keys (the descheduler's and kube-scheduler's
/// usual deployment). Their nodes are mapped back to the lines of the ConfigMap's block scalar.
fn load_embedded(node: &Node, config_map: &Object, sources: &SourceMap, diags: &mut Diagnostics, out: &mut Loaded) {
    let Some(data) = node.get("data").and_then(Node::as_map) else {
        return;
    };
    for (key, value) in data {
        let Some(text) = value.as_str() else { continue };
        if !(text.contains("DeschedulerPolicy") || text.contains("KubeSchedulerConfiguration")) {
            continue;
        }
        let stream = yaml::parse(text, value.span.file, &yaml::Limits::default());
        let shift = embedded_shift(sources, value.span, text);
        let key_name = key.scalar_text().unwrap_or_default();
        let remap = |span: Span| -> Span {
            match shift {
                Some((line0, indent)) => Span {
                    file: span.file,
                    start: Location {
                        line: span.start.line + line0,
                        column: span.start.column + indent,
                    },
                    end: Location {
                        line: span.end.line + line0,
                        column: span.end.column + indent,
                    },
                },
                None => value.span,
            }
        };
        for e in stream.errors {
            let mut d = crate::diagnostics::Diagnostic::error(
                remap(e.span),
                format!("in ConfigMap key `{key_name}`: {}", e.message),
            );
            if !e.fatal {
                d.severity = crate::diagnostics::Severity::Error;
            }
            diags.push(d);
        }
        for doc in stream.documents {
            let mut root = doc.root;
            root.for_each_mut(&mut |n| n.span = remap(n.span));
            let api_version = root
                .get("apiVersion")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string();
            let kind = root.get("kind").and_then(Node::as_str).unwrap_or_default().to_string();
            if kind != "DeschedulerPolicy" && kind != "KubeSchedulerConfiguration" {
                continue;
            }
            let mut r = Reader { diags };
            if let Some(mut object) = read_object(&mut r, &root, &api_version, &kind, "") {
                object.id.name = format!("{}[{}]", config_map.id.name, key_name);
                object.id.namespace = config_map.id.namespace.clone();
                object.embedded = true;
                out.objects.push(object);
            }
        }
    }
}

/// For a literal block scalar (`key: |`), the line offset and indentation of its content:
/// the parser's span starts at the content, and each content line is a source line.
fn embedded_shift(sources: &SourceMap, span: Span, text: &str) -> Option<(u32, u32)> {
    let indent = span.start.column.checked_sub(1)?;
    let verbatim = text.lines().take(3).enumerate().all(|(i, content)| {
        let source = sources
            .line_text(span.file, span.start.line + i as u32)
            .unwrap_or_default();
        content.is_empty() || source.get(indent as usize..) == Some(content)
    });
    verbatim.then_some((span.start.line - 1, indent))
}

//! Locations of what an overlay changes.
//!
//! A rendered object's fields are first placed on the lines of its source document (the base).
//! A field an overlay adds or changes, through a strategic-merge patch, a JSON 6902 patch or
//! `replicas:`, then points at the overlay's own line: that is where a user would fix it, and
//! the base's line shows another value.

use std::path::PathBuf;

use crate::source::Span;
use crate::yaml::{Node, Value};

/// What one kustomization of a render's tree changes, and where it says so.
#[derive(Clone, Debug)]
pub enum Change {
    /// A strategic-merge patch: a partial object, its fields at their lines (an inline patch's
    /// fields all at the patch's entry).
    Merge { patch: Node, target: Target },
    /// JSON 6902 operations: the path of each `add`/`replace` and the span of its value.
    Json {
        ops: Vec<(Vec<String>, Span)>,
        target: Target,
    },
    /// `replicas: [{name, count}]`: the object's `spec.replicas` at `count`.
    Replicas { name: String, count: Span },
    /// `images: [{name, newName, newTag, digest}]`: every container whose image (as rendered,
    /// so by `newName` if given) it names, at the entry's field that changes it.
    Images { image: String, span: Span },
}

/// Which objects a patch applies to (`target`, or the patch's own kind and name).
#[derive(Clone, Debug, Default)]
pub struct Target {
    pub kind: Option<String>,
    pub name: Option<String>,
}

impl Target {
    fn selects(&self, kind: &str, name: &str) -> bool {
        self.kind.as_deref().is_none_or(|k| k == kind) && self.name.as_deref().is_none_or(|n| n == name)
    }
}

/// A patch file of a kustomization, to be read with its spans.
#[derive(Clone, Debug)]
pub struct PatchFile {
    pub path: PathBuf,
    pub target: Target,
    /// Listed under `patchesJson6902`, or a `patches` file that holds a list of operations.
    pub json: bool,
}

/// Point the fields `changes` set on `rendered` (whose source has `kind` and `name`) at the
/// overlay's lines. `changes` come innermost kustomization first, so the outermost wins.
pub fn apply(rendered: &mut Node, kind: &str, name: &str, changes: &[Change]) {
    for change in changes {
        match change {
            Change::Merge { patch, target } => {
                let patch_kind = patch.get("kind").and_then(Node::as_str);
                let patch_name = patch.at(&["metadata", "name"]).and_then(Node::as_str);
                let selected = if target.kind.is_some() || target.name.is_some() {
                    target.selects(kind, name)
                } else {
                    patch_kind == Some(kind) && patch_name == Some(name)
                };
                if selected {
                    merge(rendered, patch, &["apiVersion", "kind", "metadata"]);
                }
            }
            Change::Json { ops, target } if target.selects(kind, name) => {
                for (path, span) in ops {
                    if let Some(node) = at_path(rendered, path) {
                        node.for_each_mut(&mut |n| n.span = *span);
                    }
                }
            }
            Change::Replicas { name: n, count } if n == name => {
                if let Some(r) = at_path(rendered, &["spec".to_string(), "replicas".to_string()]) {
                    r.span = *count;
                }
            }
            Change::Images { image, span } => images(rendered, image, *span),
            _ => {}
        }
    }
}

/// Point the `image` of every container (and init container) anywhere in `node` whose image
/// is `name`, with a tag or digest or none, at `span`.
fn images(node: &mut Node, name: &str, span: Span) {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                if matches!(k.as_str(), Some("containers" | "initContainers"))
                    && let Value::Seq(items) = &mut v.value
                {
                    for c in items.iter_mut() {
                        if let Value::Map(fields) = &mut c.value
                            && let Some((_, image)) = fields.iter_mut().find(|(k, _)| k.as_str() == Some("image"))
                            && image.as_str().is_some_and(|i| image_name(i) == name)
                        {
                            image.span = span;
                        }
                    }
                } else {
                    images(v, name, span);
                }
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| images(i, name, span)),
        _ => {}
    }
}

/// An image reference without its tag or digest (a registry port's colon stays).
fn image_name(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    }
}

/// Give every field of `rendered` that `patch` sets the patch's span (but for the top-level
/// keys in `skip`, which only say what is patched).
fn merge(rendered: &mut Node, patch: &Node, skip: &[&str]) {
    match (&mut rendered.value, &patch.value) {
        (Value::Map(entries), Value::Map(patch_entries)) => {
            for (pk, pv) in patch_entries {
                let Some(key) = pk.as_str() else { continue };
                if skip.contains(&key) {
                    continue;
                }
                if let Some((k, v)) = entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
                    k.span = pk.span;
                    merge(v, pv, &[]);
                }
            }
        }
        (Value::Seq(items), Value::Seq(patch_items)) => {
            for (i, pi) in patch_items.iter().enumerate() {
                // Lists of named items merge by name; others by position.
                let name = pi.get("name").and_then(Node::scalar_text);
                let target = match &name {
                    Some(n) => items
                        .iter_mut()
                        .find(|it| it.get("name").and_then(Node::scalar_text).as_ref() == Some(n)),
                    None => items.get_mut(i),
                };
                if let Some(t) = target {
                    merge(t, pi, &[]);
                }
            }
        }
        _ => {
            let span = patch.span;
            rendered.for_each_mut(&mut |n| n.span = span);
        }
    }
}

/// The node at a JSON pointer's segments (`~1` is `/`, `~0` is `~`), indices into lists.
fn at_path<'n>(node: &'n mut Node, path: &[String]) -> Option<&'n mut Node> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    let key = first.replace("~1", "/").replace("~0", "~");
    let next = match &mut node.value {
        Value::Map(entries) => entries
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(key.as_str()))
            .map(|(_, v)| v),
        Value::Seq(items) => {
            let len = items.len();
            let i = if key == "-" {
                len.checked_sub(1)?
            } else {
                key.parse().ok()?
            };
            items.get_mut(i)
        }
        _ => None,
    }?;
    at_path(next, rest)
}

/// The JSON 6902 operations of a document: `add`/`replace` paths with their values' spans.
pub fn json_ops(doc: &Node) -> Vec<(Vec<String>, Span)> {
    doc.as_seq()
        .unwrap_or_default()
        .iter()
        .filter(|op| matches!(op.get("op").and_then(Node::as_str), Some("add" | "replace")))
        .filter_map(|op| {
            let path = op.get("path").and_then(Node::as_str)?;
            let value = op.get("value")?;
            let segments = path.trim_start_matches('/').split('/').map(String::from).collect();
            Some((segments, value.span))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, parse};

    fn doc(text: &str, file: u32) -> Node {
        parse(text, FileId(file), &Limits::default()).documents.remove(0).root
    }

    #[test]
    fn overlay_fields_point_at_the_overlay() {
        let mut rendered = doc(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: prod-api}\nspec:\n  replicas: 5\n  template:\n    spec:\n      containers:\n      - name: api\n        resources: {requests: {cpu: 500m}}\n      topologySpreadConstraints:\n      - {maxSkew: 2, topologyKey: zone}\n",
            1,
        );
        let smp = doc(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      containers:\n      - name: api\n        resources:\n          requests:\n            cpu: 500m\n",
            2,
        );
        let json = doc(
            "- op: replace\n  path: /spec/template/spec/topologySpreadConstraints/0/maxSkew\n  value: 2\n",
            3,
        );
        let count = Span::point(FileId(4), crate::source::Location { line: 7, column: 12 });
        let changes = vec![
            Change::Merge {
                patch: smp,
                target: Target::default(),
            },
            Change::Json {
                ops: json_ops(&json),
                target: Target {
                    kind: Some("Deployment".into()),
                    name: Some("api".into()),
                },
            },
            Change::Replicas {
                name: "api".into(),
                count,
            },
        ];
        apply(&mut rendered, "Deployment", "api", &changes);
        let cpu = rendered
            .at(&["spec", "template", "spec", "containers"])
            .and_then(|c| c.as_seq())
            .map(|c| c[0].at(&["resources", "requests", "cpu"]).unwrap().span)
            .unwrap();
        assert_eq!((cpu.file, cpu.start.line), (FileId(2), 12));
        let skew = rendered
            .at(&["spec", "template", "spec", "topologySpreadConstraints"])
            .unwrap();
        let skew = skew.as_seq().unwrap()[0].get("maxSkew").unwrap().span;
        assert_eq!((skew.file, skew.start.line), (FileId(3), 3));
        assert_eq!(rendered.at(&["spec", "replicas"]).unwrap().span, count);
    }

    #[test]
    fn image_changes_point_at_the_images_entry() {
        let mut rendered = doc(
            "kind: Deployment\nspec:\n  template:\n    spec:\n      initContainers:\n      - {name: init, image: 'registry:5000/tools:1'}\n      containers:\n      - {name: api, image: 'ghcr.io/shop/api:2.1@sha256:abc'}\n      - {name: side, image: envoy:1}\n",
            1,
        );
        let tag = Span::point(FileId(2), crate::source::Location { line: 4, column: 13 });
        let changes = vec![
            Change::Images {
                image: "ghcr.io/shop/api".into(),
                span: tag,
            },
            Change::Images {
                image: "registry:5000/tools".into(),
                span: tag,
            },
        ];
        apply(&mut rendered, "Deployment", "api", &changes);
        let containers = rendered
            .at(&["spec", "template", "spec", "containers"])
            .unwrap()
            .as_seq()
            .unwrap();
        assert_eq!(containers[0].get("image").unwrap().span, tag);
        assert_ne!(containers[1].get("image").unwrap().span, tag);
        let init = rendered
            .at(&["spec", "template", "spec", "initContainers"])
            .unwrap()
            .as_seq()
            .unwrap();
        assert_eq!(init[0].get("image").unwrap().span, tag);
        assert_eq!(image_name("envoy"), "envoy");
    }
}

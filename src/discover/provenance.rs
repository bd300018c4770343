//! Mapping rendered objects back to the lines that produced them.
//!
//! Kustomize output is matched field by field against the source document named by its origin
//! annotation; Helm output is matched against the template text by key (templates are not
//! YAML, so this is a best effort that never leaves the template file).

use crate::source::{Location, Span};
use crate::yaml::{Node, Value};

/// Give every node of `rendered` the span of the same path in `source`; nodes with no
/// counterpart (added by a transformer or patch) take their nearest mapped ancestor's span.
pub fn remap_to_source(rendered: &mut Node, source: &Node) {
    let fallback = source.span;
    rendered.span = fallback;
    let mismatched = match (&mut rendered.value, &source.value) {
        (Value::Map(entries), Value::Map(src_entries)) => {
            for (k, v) in entries.iter_mut() {
                match src_entries.iter().find(|(sk, _)| sk.value == k.value) {
                    Some((sk, sv)) => {
                        k.span = sk.span;
                        remap_to_source(v, sv);
                    }
                    None => {
                        remap_all(k, fallback);
                        remap_all(v, fallback);
                    }
                }
            }
            false
        }
        (Value::Seq(items), Value::Seq(src_items)) => {
            for (i, item) in items.iter_mut().enumerate() {
                // Lists of named items (containers, ports) may be reordered by patches.
                let name = item.get("name").and_then(|n| n.scalar_text());
                let by_name = name.and_then(|name| {
                    src_items
                        .iter()
                        .find(|s| s.get("name").and_then(|n| n.scalar_text()).as_deref() == Some(name.as_str()))
                });
                match by_name.or_else(|| src_items.get(i)) {
                    Some(s) => remap_to_source(item, s),
                    None => remap_all(item, fallback),
                }
            }
            false
        }
        (Value::Map(_) | Value::Seq(_), _) => true,
        _ => false,
    };
    if mismatched {
        remap_all(rendered, fallback);
    }
}

/// Point every node at `span`.
pub fn remap_all(node: &mut Node, span: Span) {
    node.for_each_mut(&mut |n| n.span = span);
}

/// Map a Helm-rendered document onto its template text: each mapping key is found on the
/// first template line at or after the previous match that starts with `key:` (or `- key:`).
pub fn remap_to_template(rendered: &mut Node, template: &str, file: crate::source::FileId) {
    let lines: Vec<&str> = template.lines().collect();
    let kind_line = lines
        .iter()
        .position(|l| l.trim_start().starts_with("kind:"))
        .unwrap_or(0);
    let start = Span::point(
        file,
        Location {
            line: kind_line as u32 + 1,
            column: 1,
        },
    );
    let mut cursor = kind_line.saturating_sub(2);
    walk_template(rendered, &lines, &mut cursor, start, file);
}

fn walk_template(node: &mut Node, lines: &[&str], cursor: &mut usize, parent: Span, file: crate::source::FileId) {
    node.span = parent;
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                let key = k.scalar_text().unwrap_or_default();
                let found = lines.iter().enumerate().skip(*cursor).find_map(|(i, l)| {
                    let t = l.trim_start();
                    let t = t.strip_prefix("- ").unwrap_or(t).trim_start();
                    let t = t.trim_start_matches(['"', '\'']);
                    (t.starts_with(&key) && t[key.len()..].trim_start_matches(['"', '\'']).starts_with(':')).then(
                        || {
                            let column = l.len() - l.trim_start().len() + 1;
                            (i, column)
                        },
                    )
                });
                let span = match found {
                    Some((i, column)) => {
                        *cursor = i + 1;
                        Span::point(
                            file,
                            Location {
                                line: i as u32 + 1,
                                column: column as u32,
                            },
                        )
                    }
                    None => parent,
                };
                k.span = span;
                walk_template(v, lines, cursor, span, file);
            }
        }
        Value::Seq(items) => {
            for item in items.iter_mut() {
                walk_template(item, lines, cursor, parent, file);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{Limits, parse};

    #[test]
    fn kustomize_fields_map_to_source_lines() {
        let src = parse(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n",
            FileId(1),
            &Limits::default(),
        );
        let mut out = parse(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels: {env: dev}\n  name: dev-web\nspec:\n  replicas: 2\n",
            FileId(2),
            &Limits::default(),
        );
        let root = &mut out.documents[0].root;
        remap_to_source(root, &src.documents[0].root);
        let replicas = root.at(&["spec", "replicas"]).unwrap();
        assert_eq!((replicas.span.file, replicas.span.start.line), (FileId(1), 6));
        let env = root.at(&["metadata", "labels", "env"]).unwrap();
        // Added by a transformer: the span of its parent mapping in the source.
        assert_eq!((env.span.file, env.span.start.line), (FileId(1), 4));
    }

    #[test]
    fn helm_keys_map_to_template_lines() {
        let template = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  {{- if .Values.x }}\n  replicas: {{ .Values.replicas }}\n  {{- end }}\n";
        let mut out = parse(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: r\nspec:\n  replicas: 3\n",
            FileId(2),
            &Limits::default(),
        );
        let root = &mut out.documents[0].root;
        remap_to_template(root, template, FileId(7));
        let replicas = root.at(&["spec", "replicas"]).unwrap();
        assert_eq!((replicas.span.file, replicas.span.start.line), (FileId(7), 7));
    }
}

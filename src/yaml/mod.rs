//! YAML with a span on every node, read the way Kubernetes reads it.
//!
//! Kubernetes decodes manifests with go-yaml v2 (YAML 1.1 scalars: `on` is true, `0644` is 420),
//! so plain scalars are resolved here rather than by the parser. The tree is built from
//! saphyr-parser's event stream so that hostile input is bounded: nesting depth, the number of
//! nodes produced by alias expansion (billion laughs) and the total node count per document.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

use crate::source::{FileId, Location, Span};

mod builder;
mod recover;
mod scalar;
pub use scalar::resolve_plain;

use builder::parse_once;
use recover::{indent_quoted_continuation, inside_flow_collection, json_values};
use scalar::resolve_scalar;

/// Limits for hostile input. Documented in docs/security.md ("Bounded").
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Deepest nesting of collections.
    pub max_depth: usize,
    /// Nodes one document may hold, aliases expanded.
    pub max_nodes: usize,
    /// Nodes that alias expansion may add to one document.
    pub max_alias_nodes: usize,
    /// Scalar bytes that alias expansion may add to one document: a few aliases of a large
    /// scalar cost as much memory as many of a small tree.
    pub max_alias_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_nodes: 2_000_000,
            max_alias_nodes: 100_000,
            max_alias_bytes: 16 << 20,
        }
    }
}

/// A YAML node with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// A hash of the node's content: scalars and structure, map keys in sorted order, no
    /// positions. Two revisions of a pod template with the same hash are the same template.
    pub fn content_hash(&self) -> u64 {
        let mut hasher = blake3::Hasher::new();
        self.feed(&mut hasher);
        let bytes = hasher.finalize();
        u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("8 bytes"))
    }

    fn feed(&self, h: &mut blake3::Hasher) {
        match &self.value {
            Value::Null => {
                h.update(b"n");
            }
            Value::Bool(b) => {
                h.update(if *b { b"t" } else { b"f" });
            }
            Value::Int(i) => {
                h.update(b"i");
                h.update(&i.to_le_bytes());
            }
            Value::Float(f) => {
                h.update(b"d");
                h.update(&f.to_bits().to_le_bytes());
            }
            Value::Str(s) => {
                h.update(b"s");
                h.update(&(s.len() as u64).to_le_bytes());
                h.update(s.as_bytes());
            }
            Value::Seq(items) => {
                h.update(b"[");
                for item in items {
                    item.feed(h);
                }
                h.update(b"]");
            }
            Value::Map(entries) => {
                let mut sorted: Vec<&(Node, Node)> = entries.iter().collect();
                sorted.sort_by_key(|(k, _)| k.as_str().unwrap_or_default().to_string());
                h.update(b"{");
                for (k, v) in sorted {
                    k.feed(h);
                    v.feed(h);
                }
                h.update(b"}");
            }
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The value under a string key of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// Key and value under a string key of a mapping.
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.scalar_text().as_deref() == Some(key))
            .map(|(k, v)| (k, v))
    }

    /// Follow a path of string keys.
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The text of a scalar as a string (how a key or a label value reads).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(format_float(*f)),
            Value::Bool(b) => Some(b.to_string()),
            Value::Null => Some(String::new()),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// A short name of the node's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Apply `f` to this node and every node below it.
    pub fn for_each_mut(&mut self, f: &mut impl FnMut(&mut Node)) {
        f(self);
        match &mut self.value {
            Value::Seq(items) => items.iter_mut().for_each(|n| n.for_each_mut(f)),
            Value::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
                k.for_each_mut(f);
                v.for_each_mut(f);
            }),
            _ => {}
        }
    }

    /// The bytes of the scalars of this node and every node below it.
    fn text_bytes(&self) -> usize {
        match &self.value {
            Value::Str(s) => s.len(),
            Value::Seq(items) => items.iter().map(Node::text_bytes).sum(),
            Value::Map(entries) => entries.iter().map(|(k, v)| k.text_bytes() + v.text_bytes()).sum(),
            _ => 8,
        }
    }

    fn count(&self) -> usize {
        1 + match &self.value {
            Value::Seq(items) => items.iter().map(Node::count).sum(),
            Value::Map(entries) => entries.iter().map(|(k, v)| k.count() + v.count()).sum(),
            _ => 0,
        }
    }
}

pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf".into() } else { "-.inf".into() }
    } else {
        f.to_string()
    }
}

/// A problem found while reading YAML.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    pub span: Span,
    pub message: String,
    /// Whether the rest of the file could still be read (duplicate keys) or not (syntax errors).
    pub fatal: bool,
}

/// One document of a stream.
#[derive(Clone, Debug)]
pub struct Document {
    pub root: Node,
}

/// The result of reading one file: every document that could be read, and the problems met.
/// A syntax error stops the file at that point; documents before it are kept.
#[derive(Debug, Default)]
pub struct Stream {
    pub documents: Vec<Document>,
    pub errors: Vec<YamlError>,
}

/// The text with what follows a document end marker (`...`) blanked out up to the next
/// `---`, lines kept; `None` when nothing follows one. kubectl and kustomize split a stream
/// on `---` lines and decode the first document of each part: YAML would read a document
/// after `...` as the next one, they drop it, and kivi-lint reads what they apply.
fn after_document_end(text: &str) -> Option<String> {
    let marker = |line: &str, m: &str| {
        line.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']) || rest.starts_with('#'))
    };
    let mut dropping = false;
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if marker(line, "---") {
            dropping = false;
        }
        if dropping {
            changed |= !line.trim().is_empty();
            if line.ends_with('\r') {
                out.push('\r');
            }
            continue;
        }
        if marker(line, "...") {
            dropping = true;
        }
        out.push_str(line);
    }
    changed.then_some(out)
}

/// Parse a multi-document YAML (or JSON) text.
pub fn parse(text: &str, file: FileId, limits: &Limits) -> Stream {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let dropped = after_document_end(text);
    let text = dropped.as_deref().unwrap_or(text);
    let stream = parse_once(text, file, limits);
    // go-yaml (and so kubectl) accepts flow collections whose lines sit at or left of the
    // enclosing block's indentation; saphyr does not. Inside an open `[`/`{` indentation carries
    // no meaning, so indenting the offending line changes nothing else. Bounded retries.
    // go-yaml also accepts a double-quoted scalar continued on lines less indented than its
    // key, as `kubectl get -o yaml` writes long messages; continuation lines are folded with
    // their leading spaces dropped, so indenting them changes no value.
    let mut fixed: Option<String> = None;
    let mut stream = stream;
    for _ in 0..256 {
        let Some(e) = stream.errors.last().filter(|e| {
            e.fatal
                && (e.message == "invalid YAML: invalid indentation"
                    || e.message == "invalid YAML: invalid indentation in quoted scalar")
        }) else {
            break;
        };
        let current = fixed.as_deref().unwrap_or(text);
        let line = e.span.start.line as usize;
        if e.message == "invalid YAML: invalid indentation" && !inside_flow_collection(current, line) {
            break;
        }
        let next = if e.message == "invalid YAML: invalid indentation in quoted scalar" {
            match indent_quoted_continuation(current, line, e.span.start.column as usize) {
                Some(next) => next,
                None => break,
            }
        } else {
            let mut lines: Vec<&str> = current.split('\n').collect();
            let Some(target) = lines.get(line - 1) else { break };
            let indented = format!("  {target}");
            lines[line - 1] = &indented;
            lines.join("\n")
        };
        let retry = parse_once(&next, file, limits);
        fixed = Some(next);
        stream = retry;
    }
    if fixed.is_some() && stream.errors.iter().any(|e| e.fatal) {
        // The shim did not help: report the original problem.
        return parse_once(text, file, limits);
    }
    // Several JSON objects one after another (`kubectl get -o json` output appended, JSON
    // lines): kubectl decodes each as a document, YAML sees one document with trailing text.
    if stream.errors.iter().any(|e| e.fatal)
        && let Some(values) = json_values(text).filter(|v| v.len() > 1)
    {
        let mut joined = Stream::default();
        for (start, end) in values {
            // The other values blanked out, line breaks kept: spans stay those of the file.
            let masked: String = text
                .char_indices()
                .map(|(i, c)| {
                    if (start..end).contains(&i) || c == '\n' || c == '\r' {
                        c
                    } else {
                        ' '
                    }
                })
                .collect();
            let part = parse_once(&masked, file, limits);
            joined.documents.extend(part.documents);
            joined.errors.extend(part.errors);
        }
        return joined;
    }
    stream
}

#[cfg(test)]
mod tests;

//! Typed reads of manifest fields with located errors.
//!
//! Kubernetes ignores unknown fields, so nothing here rejects them; a field of the wrong type
//! is an error at that field, and the object is kept with the field left unset.

use std::collections::BTreeMap;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::manifest::quantity::{self, IntOrPercent};
use crate::source::{Span, Spanned};
use crate::yaml::{Node, Value};

/// Reads fields of one object, collecting diagnostics.
pub struct Reader<'d> {
    pub diags: &'d mut Diagnostics,
}

impl Reader<'_> {
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, message));
    }

    pub fn warning(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::warning(span, message));
    }

    fn wrong_type(&mut self, node: &Node, key: &str, expected: &str) {
        let found = match &node.value {
            Value::Str(s) => format!("the string `{}`", truncate(s)),
            _ => node.type_name().to_string(),
        };
        self.error(node.span, format!("`{key}` must be {expected}, found {found}"));
    }

    /// A field's node, treating an explicit null like an absent field (as Kubernetes does).
    pub fn field<'n>(&self, parent: &'n Node, key: &str) -> Option<&'n Node> {
        parent.get(key).filter(|n| !n.is_null())
    }

    pub fn map<'n>(&mut self, parent: &'n Node, key: &str) -> Option<&'n Node> {
        let node = self.field(parent, key)?;
        if node.as_map().is_some() {
            Some(node)
        } else {
            self.wrong_type(node, key, "a mapping");
            None
        }
    }

    pub fn seq<'n>(&mut self, parent: &'n Node, key: &str) -> &'n [Node] {
        match self.field(parent, key) {
            None => &[],
            Some(node) => match node.as_seq() {
                Some(items) => items,
                None => {
                    self.wrong_type(node, key, "a list");
                    &[]
                }
            },
        }
    }

    /// Items of a list that are mappings; other items are errors.
    pub fn maps<'n>(&mut self, parent: &'n Node, key: &str) -> Vec<&'n Node> {
        let items = self.seq(parent, key);
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            if item.as_map().is_some() {
                out.push(item);
            } else {
                self.wrong_type(item, &format!("{key}[]"), "a mapping");
            }
        }
        out
    }

    pub fn string(&mut self, parent: &Node, key: &str) -> Option<Spanned<String>> {
        let node = self.field(parent, key)?;
        match &node.value {
            Value::Str(s) => Some(Spanned::new(s.clone(), node.span)),
            _ => {
                self.wrong_type(node, key, "a string");
                None
            }
        }
    }

    /// A string field that Kubernetes would also accept as a bare scalar (label values, names).
    pub fn text(&mut self, parent: &Node, key: &str) -> Option<Spanned<String>> {
        let node = self.field(parent, key)?;
        match node.scalar_text() {
            Some(s) => Some(Spanned::new(s, node.span)),
            None => {
                self.wrong_type(node, key, "a string");
                None
            }
        }
    }

    pub fn int(&mut self, parent: &Node, key: &str) -> Option<Spanned<i64>> {
        let node = self.field(parent, key)?;
        match node.value {
            Value::Int(i) => Some(Spanned::new(i, node.span)),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(Spanned::new(f as i64, node.span)),
            _ => {
                self.wrong_type(node, key, "an integer");
                None
            }
        }
    }

    /// An int32 field (replicas, maxSkew, weights).
    pub fn int32(&mut self, parent: &Node, key: &str) -> Option<Spanned<i32>> {
        let value = self.int(parent, key)?;
        match i32::try_from(value.value) {
            Ok(v) => Some(Spanned::new(v, value.span)),
            Err(_) => {
                self.error(value.span, format!("`{key}` is out of range for a 32-bit integer"));
                None
            }
        }
    }

    /// A non-negative int32 field.
    pub fn count(&mut self, parent: &Node, key: &str) -> Option<Spanned<i32>> {
        let value = self.int32(parent, key)?;
        if value.value < 0 {
            self.error(value.span, format!("`{key}` must not be negative"));
            return None;
        }
        Some(value)
    }

    pub fn bool(&mut self, parent: &Node, key: &str) -> Option<Spanned<bool>> {
        let node = self.field(parent, key)?;
        match node.value {
            Value::Bool(b) => Some(Spanned::new(b, node.span)),
            _ => {
                self.wrong_type(node, key, "a boolean");
                None
            }
        }
    }

    /// A map of strings (labels, nodeSelector, annotations).
    pub fn string_map(&mut self, parent: &Node, key: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(node) = self.map(parent, key) else {
            return out;
        };
        for (k, v) in node.as_map().unwrap_or_default() {
            let (Some(k), Some(v)) = (k.scalar_text(), v.scalar_text()) else {
                self.wrong_type(v, key, "a map of strings");
                continue;
            };
            out.insert(k, v);
        }
        out
    }

    pub fn string_list(&mut self, parent: &Node, key: &str) -> Vec<String> {
        let mut out = Vec::new();
        for item in self.seq(parent, key) {
            match item.scalar_text() {
                Some(s) => out.push(s),
                None => self.wrong_type(item, &format!("{key}[]"), "a string"),
            }
        }
        out
    }

    /// A Kubernetes quantity in milli-units (cpu) when `milli`, else in whole units (bytes, pods).
    pub fn quantity(&mut self, parent: &Node, key: &str, milli: bool) -> Option<Spanned<i64>> {
        let node = self.field(parent, key)?;
        let text = match &node.value {
            Value::Str(s) => s.clone(),
            Value::Int(_) | Value::Float(_) => node.scalar_text().unwrap_or_default(),
            _ => {
                self.wrong_type(node, key, "a quantity");
                return None;
            }
        };
        let parsed = quantity::Quantity::parse(&text).and_then(|q| if milli { q.milli_value() } else { q.value() });
        match parsed {
            Ok(v) if v < 0 => {
                self.error(
                    node.span,
                    format!("`{key}` must not be negative, found `{}`", truncate(&text)),
                );
                None
            }
            Ok(v) => Some(Spanned::new(v, node.span)),
            Err(e) => {
                self.error(node.span, format!("`{key}`: {e}"));
                None
            }
        }
    }

    pub fn int_or_percent(&mut self, parent: &Node, key: &str) -> Option<Spanned<IntOrPercent>> {
        let node = self.field(parent, key)?;
        let parsed = match &node.value {
            Value::Int(i) => i32::try_from(*i).ok().filter(|i| *i >= 0).map(IntOrPercent::Int),
            Value::Str(s) => IntOrPercent::parse_percent(s),
            _ => None,
        };
        if parsed.is_none() {
            self.wrong_type(node, key, "a non-negative integer or a percentage such as `25%`");
        }
        parsed.map(|v| Spanned::new(v, node.span))
    }

    /// A string field restricted to a set of values.
    pub fn one_of(&mut self, parent: &Node, key: &str, allowed: &[&str]) -> Option<Spanned<String>> {
        let value = self.string(parent, key)?;
        if allowed.contains(&value.value.as_str()) {
            Some(value)
        } else {
            self.error(
                value.span,
                format!(
                    "`{key}` must be one of {}, found `{}`",
                    allowed.join(", "),
                    truncate(&value.value)
                ),
            );
            None
        }
    }
}

/// A DNS-1123 label: lower-case letters, digits and `-`, not at either end, at most 63.
pub fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && is_label_text(s)
}

/// A DNS-1123 subdomain: labels joined by `.`, at most 253 in all.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label_text)
}

fn is_label_text(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

pub fn truncate(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out.replace('\n', "\\n")
}

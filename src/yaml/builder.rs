//! The tree built from saphyr-parser's events, within the limits (depth, alias expansion,
//! nodes per document).

use super::*;

pub(super) fn parse_once(text: &str, file: FileId, limits: &Limits) -> Stream {
    let mut builder = Builder {
        file,
        limits,
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        alias_bytes: 0,
        nodes: 0,
        root: None,
        stream: Stream::default(),
    };
    let mut parser = Parser::new_from_str(text).keep_tags(true);
    loop {
        match parser.next_event() {
            None => break,
            Some(Err(e)) => {
                let m = e.marker();
                builder.stream.errors.push(YamlError {
                    span: Span::point(file, location(m)),
                    message: format!("invalid YAML: {}", e.info()),
                    fatal: true,
                });
                break;
            }
            Some(Ok((event, span))) => {
                if let Err(e) = builder.on_event(event, span) {
                    builder.stream.errors.push(e);
                    break;
                }
            }
        }
    }
    builder.stream
}

pub(super) fn location(m: &saphyr_parser::Marker) -> Location {
    Location {
        line: m.line() as u32,
        column: m.col() as u32 + 1,
    }
}

pub(super) enum Frame {
    Seq {
        start: Location,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: Location,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
    },
}

pub(super) struct Builder<'a> {
    file: FileId,
    limits: &'a Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    alias_nodes: usize,
    alias_bytes: usize,
    nodes: usize,
    root: Option<Node>,
    stream: Stream,
}

impl Builder<'_> {
    fn span(&self, s: saphyr_parser::Span) -> Span {
        Span {
            file: self.file,
            start: location(&s.start),
            end: location(&s.end),
        }
    }

    fn error(&self, span: Span, message: impl Into<String>) -> YamlError {
        YamlError {
            span,
            message: message.into(),
            fatal: true,
        }
    }

    fn on_event(&mut self, event: Event<'_>, raw_span: saphyr_parser::Span) -> Result<(), YamlError> {
        let span = self.span(raw_span);
        match event {
            Event::DocumentStart(_) => {
                self.anchors.clear();
                self.alias_nodes = 0;
                self.alias_bytes = 0;
                self.nodes = 0;
                self.root = None;
            }
            Event::DocumentEnd => {
                if let Some(root) = self.root.take()
                    && !root.is_null()
                {
                    self.stream.documents.push(Document { root });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                // Keys stay text: Kubernetes objects are JSON, whose keys are strings.
                let is_key = matches!(self.stack.last(), Some(Frame::Map { key: None, .. }));
                let value = if is_key
                    && !(style == ScalarStyle::Plain && matches!(&*text, "" | "~" | "null" | "Null" | "NULL"))
                {
                    Value::Str(text.to_string())
                } else {
                    resolve_scalar(&text, style, tag.as_deref())
                };
                self.count(1, span)?;
                self.finish(Node { span, value }, anchor)?;
            }
            Event::Alias(id) => {
                let Some(node) = self.anchors.get(&id) else {
                    return Err(self.error(span, "alias refers to an anchor that is not defined before it"));
                };
                // Measured before the copy: the copy is what a bomb would make us allocate.
                let size = node.count();
                let bytes = node.text_bytes();
                self.alias_bytes = self.alias_bytes.saturating_add(bytes);
                if self.alias_bytes > self.limits.max_alias_bytes {
                    return Err(self.error(
                        span,
                        format!(
                            "alias expansion exceeds {} MiB of text in one document (possible billion-laughs input)",
                            self.limits.max_alias_bytes >> 20
                        ),
                    ));
                }
                let mut node = node.clone();
                self.alias_nodes += size;
                if self.alias_nodes > self.limits.max_alias_nodes {
                    return Err(self.error(
                        span,
                        format!(
                            "alias expansion exceeds {} nodes in one document (possible billion-laughs input)",
                            self.limits.max_alias_nodes
                        ),
                    ));
                }
                self.count(size, span)?;
                // Point the reused subtree's root at the alias so that messages name this place.
                node.span = span;
                self.finish(node, 0)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() >= self.limits.max_depth {
                    return Err(self.error(span, format!("nesting deeper than {} levels", self.limits.max_depth)));
                }
                self.count(1, span)?;
                let start = span.start;
                self.stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq {
                        start,
                        anchor,
                        items: Vec::new(),
                    }
                } else {
                    Frame::Map {
                        start,
                        anchor,
                        entries: Vec::new(),
                        key: None,
                    }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let frame = self.stack.pop().expect("parser balances collections");
                let (node, anchor) = match frame {
                    Frame::Seq { start, anchor, items } => (
                        Node {
                            span: Span {
                                file: self.file,
                                start,
                                end: span.end,
                            },
                            value: Value::Seq(items),
                        },
                        anchor,
                    ),
                    Frame::Map {
                        start, anchor, entries, ..
                    } => {
                        let entries = self.close_mapping(entries)?;
                        (
                            Node {
                                span: Span {
                                    file: self.file,
                                    start,
                                    end: span.end,
                                },
                                value: Value::Map(entries),
                            },
                            anchor,
                        )
                    }
                };
                self.finish(node, anchor)?;
            }
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
        }
        Ok(())
    }

    fn count(&mut self, n: usize, span: Span) -> Result<(), YamlError> {
        self.nodes += n;
        if self.nodes > self.limits.max_nodes {
            return Err(self.error(span, format!("document has more than {} nodes", self.limits.max_nodes)));
        }
        Ok(())
    }

    fn finish(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => {
                    if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
                        return Err(self.error(node.span, "a mapping key must be a scalar"));
                    }
                    *key = Some(node);
                }
                Some(k) => entries.push((k, node)),
            },
        }
        Ok(())
    }

    /// Expand `<<` merge keys (go-yaml v2 does) and reject duplicate keys (Kubernetes does).
    fn close_mapping(&mut self, entries: Vec<(Node, Node)>) -> Result<Vec<(Node, Node)>, YamlError> {
        let mut out: Vec<(Node, Node)> = Vec::with_capacity(entries.len());
        let mut merged: Vec<(Node, Node)> = Vec::new();
        for (k, v) in entries {
            if k.as_str() == Some("<<") {
                let sources: Vec<&Node> = match &v.value {
                    Value::Map(_) => vec![&v],
                    Value::Seq(items) => items.iter().collect(),
                    _ => return Err(self.error(v.span, "a merge key `<<` needs a mapping or a list of mappings")),
                };
                for source in sources {
                    let Some(m) = source.as_map() else {
                        return Err(self.error(source.span, "a merge key `<<` needs a mapping or a list of mappings"));
                    };
                    for (mk, mv) in m {
                        if !merged.iter().any(|(x, _)| x.value == mk.value) {
                            merged.push((mk.clone(), mv.clone()));
                        }
                    }
                }
                continue;
            }
            if let Some(prev) = out.iter_mut().find(|(x, _)| x.value == k.value) {
                self.stream.errors.push(YamlError {
                    span: k.span,
                    message: format!(
                        "duplicate key `{}` (first defined at line {})",
                        k.scalar_text().unwrap_or_default(),
                        prev.0.span.start.line
                    ),
                    fatal: false,
                });
                *prev = (k, v);
                continue;
            }
            out.push((k, v));
        }
        for (mk, mv) in merged {
            if !out.iter().any(|(x, _)| x.value == mk.value) {
                out.push((mk, mv));
            }
        }
        Ok(out)
    }
}

use super::*;

#[test]
fn a_document_after_an_end_marker_is_read_only_after_a_separator() {
    let text = "a: 1\n...\nb: 2\n---\nc: 3\n";
    let stream = parse(text, FileId(0), &Limits::default());
    let keys: Vec<String> = stream
        .documents
        .iter()
        .filter_map(|d| {
            d.root
                .as_map()
                .and_then(|m| m.first())
                .and_then(|(k, _)| k.scalar_text())
        })
        .collect();
    assert_eq!(keys, ["a", "c"]);
    assert_eq!(stream.documents[1].root.span.start.line, 5, "lines are kept");
    assert!(after_document_end("a: 1\n...\n---\nb: 2\n").is_none());
}

/// `kubectl get -o yaml` folds long messages onto lines less indented than their key.
#[test]
fn quoted_scalar_continued_on_less_indented_lines() {
    let text = "status:\n  conditions:\n  - message: \"0/3 nodes are available: didn't match\n      pod affinity rules. Preemption is\n    not helpful.\"\n    type: PodScheduled\nkind: Pod\n";
    let root = one(text);
    let c = &root.get("status").unwrap().get("conditions").unwrap().as_seq().unwrap()[0];
    assert_eq!(
        c.get("message").and_then(Node::as_str),
        Some("0/3 nodes are available: didn't match pod affinity rules. Preemption is not helpful.")
    );
    assert_eq!(c.get("type").and_then(Node::as_str), Some("PodScheduled"));
    assert_eq!(root.get("kind").unwrap().span.start.line, 7);
}

/// Several JSON objects one after another: one document each, at their own lines.
#[test]
fn concatenated_json_objects_are_documents() {
    let text = "{\"kind\": \"A\", \"s\": \"}{\"}\n{\"kind\": \"B\"}\n\n[1, 2]\n";
    let s = parse(text, FileId(0), &Limits::default());
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.documents.len(), 3);
    assert_eq!(s.documents[1].root.get("kind").and_then(Node::as_str), Some("B"));
    assert_eq!(s.documents[1].root.span.start.line, 2);
    assert!(json_values("{\"a\": 1} trailing").is_none());
}

fn one(text: &str) -> Node {
    let s = parse(text, FileId(0), &Limits::default());
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    s.documents.into_iter().next().unwrap().root
}

#[test]
fn resolves_scalars_like_go_yaml_v2() {
    let n = one(
        "a: on\nb: 0644\nc: '0644'\nd: 1.5\ne: 0x1F\nf: ~\ng: 1e3\nh: 12345678901234567890\ni: yes\nj: 1_000\nk: \"true\"\nl: =\n",
    );
    assert_eq!(n.get("a").unwrap().value, Value::Bool(true));
    assert_eq!(n.get("b").unwrap().value, Value::Int(420));
    assert_eq!(n.get("c").unwrap().value, Value::Str("0644".into()));
    assert_eq!(n.get("d").unwrap().value, Value::Float(1.5));
    assert_eq!(n.get("e").unwrap().value, Value::Int(31));
    assert_eq!(n.get("f").unwrap().value, Value::Null);
    assert_eq!(n.get("g").unwrap().value, Value::Float(1000.0));
    assert!(matches!(n.get("h").unwrap().value, Value::Float(_)));
    assert_eq!(n.get("i").unwrap().value, Value::Bool(true));
    assert_eq!(n.get("j").unwrap().value, Value::Int(1000));
    assert_eq!(n.get("k").unwrap().value, Value::Str("true".into()));
    assert_eq!(n.get("l").unwrap().value, Value::Str("=".into()));
}

#[test]
fn spans_are_one_based() {
    let n = one("apiVersion: v1\nspec:\n  replicas: 3\n");
    let (k, v) = n.get("spec").unwrap().entry("replicas").unwrap();
    assert_eq!(k.span.start, Location { line: 3, column: 3 });
    assert_eq!(v.span.start, Location { line: 3, column: 13 });
}

#[test]
fn multi_document_and_empty_documents() {
    let s = parse("---\na: 1\n---\n---\nb: 2\n---\n", FileId(0), &Limits::default());
    assert_eq!(s.documents.len(), 2);
    assert_eq!(s.documents[1].root.get("b").unwrap().span.start.line, 5);
}

#[test]
fn merge_keys_and_aliases() {
    let n = one("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n");
    let d = n.get("d").unwrap();
    assert_eq!(d.get("x").unwrap().value, Value::Int(1));
    assert_eq!(d.get("y").unwrap().value, Value::Int(3));
    assert!(d.get("<<").is_none());
}

#[test]
fn duplicate_keys_are_located_errors_and_the_last_wins() {
    let s = parse("a: 1\nb: 2\na: 3\n", FileId(0), &Limits::default());
    assert_eq!(s.errors.len(), 1);
    assert!(!s.errors[0].fatal);
    assert_eq!(s.errors[0].span.start.line, 3);
    assert_eq!(s.documents[0].root.get("a").unwrap().value, Value::Int(3));
}

#[test]
fn syntax_error_keeps_earlier_documents() {
    let s = parse("a: 1\n---\nb: [1, 2\n", FileId(0), &Limits::default());
    assert_eq!(s.documents.len(), 1);
    assert_eq!(s.errors.len(), 1);
    assert!(s.errors[0].fatal);
}

#[test]
fn billion_laughs_is_bounded() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
    }
    let s = parse(&text, FileId(0), &Limits::default());
    assert!(s.errors.iter().any(|e| e.message.contains("billion-laughs")));
}

#[test]
fn deep_nesting_is_bounded() {
    let text = "[".repeat(10_000);
    let s = parse(&text, FileId(0), &Limits::default());
    assert!(
        s.errors.iter().any(|e| e.message.contains("recursion limit")),
        "{:?}",
        s.errors
    );
    let text = format!(
        "a:\n{}",
        (1..200).map(|i| format!("{}b:\n", "  ".repeat(i))).collect::<String>()
    );
    let s = parse(&text, FileId(0), &Limits::default());
    assert!(
        s.errors.iter().any(|e| e.message.contains("nesting deeper than 128")),
        "{:?}",
        s.errors
    );
}

#[test]
fn kyaml_flow_style_with_trailing_commas() {
    let n = one("{\n  kind: \"Pod\",\n  metadata: {\n    labels: {\n      foo: \"bar\",\n    },\n  },\n}\n");
    assert_eq!(n.at(&["metadata", "labels", "foo"]).unwrap().as_str(), Some("bar"));
}

#[test]
fn flow_collection_closed_at_the_parent_indentation_is_accepted() {
    // As in istio's spire-quickstart.yaml, which kubectl applies.
    let n = one("spec:\n  args: [\n      \"-a\", \"b\",\n  ]\n  env: []\n");
    assert_eq!(n.at(&["spec", "args"]).unwrap().as_seq().unwrap().len(), 2);
    assert_eq!(n.at(&["spec", "env"]).unwrap().span.start.line, 5);
    // Block content is never re-indented: this stays an error.
    let s = parse("a:\n  b: 1\n c: 2\n", FileId(0), &Limits::default());
    assert!(!s.errors.is_empty());
}

#[test]
fn json_parses() {
    let n = one("{\"kind\": \"List\", \"items\": [{\"a\": 1}]}");
    assert_eq!(n.get("items").unwrap().as_seq().unwrap().len(), 1);
}

mod round_trip {
    use super::*;
    use proptest::prelude::*;

    /// A manifest-like tree: maps with unique keys, lists, and scalars that YAML would
    /// otherwise resolve (quoted here, so they stay strings).
    #[derive(Clone, Debug)]
    enum Tree {
        Str(String),
        Int(i64),
        Bool(bool),
        Null,
        Seq(Vec<Tree>),
        Map(Vec<(String, Tree)>),
    }

    fn tree() -> impl Strategy<Value = Tree> {
        let leaf = prop_oneof![
            "(\\PC|[\"'#:{}\\[\\],&*!|>%@`\\\\ \n\t-]){0,12}".prop_map(Tree::Str),
            prop_oneof![Just("yes"), Just("0644"), Just("1e3"), Just("~"), Just("*/ #define X")]
                .prop_map(|s| Tree::Str(s.to_string())),
            any::<i64>().prop_map(Tree::Int),
            any::<bool>().prop_map(Tree::Bool),
            Just(Tree::Null),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Tree::Seq),
                proptest::collection::btree_map("[a-z][a-z0-9.-/]{0,8}", inner, 0..5)
                    .prop_map(|m| Tree::Map(m.into_iter().collect())),
            ]
        })
    }

    fn quoted(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    /// Block style, as manifests are written: keys and strings double-quoted.
    fn block(t: &Tree, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match t {
            Tree::Seq(items) if !items.is_empty() => {
                for item in items {
                    out.push_str(&format!("{pad}-"));
                    inline_or_nested(item, indent + 2, out);
                }
            }
            Tree::Map(entries) if !entries.is_empty() => {
                for (k, v) in entries {
                    out.push_str(&format!("{pad}{}:", quoted(k)));
                    inline_or_nested(v, indent + 2, out);
                }
            }
            scalar => out.push_str(&format!("{pad}{}\n", flow(scalar))),
        }
    }

    fn inline_or_nested(t: &Tree, indent: usize, out: &mut String) {
        match t {
            Tree::Seq(items) if !items.is_empty() => {
                out.push('\n');
                block(t, indent, out);
            }
            Tree::Map(entries) if !entries.is_empty() => {
                out.push('\n');
                block(t, indent, out);
            }
            other => out.push_str(&format!(" {}\n", flow(other))),
        }
    }

    /// Flow style (JSON, which is YAML).
    fn flow(t: &Tree) -> String {
        match t {
            Tree::Str(s) => quoted(s),
            Tree::Int(i) => i.to_string(),
            Tree::Bool(b) => b.to_string(),
            Tree::Null => "null".into(),
            Tree::Seq(items) => format!("[{}]", items.iter().map(flow).collect::<Vec<_>>().join(", ")),
            Tree::Map(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", quoted(k), flow(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The node is the tree, and each string scalar's span starts at its opening quote.
    fn same(node: &Node, t: &Tree, lines: &[&str]) -> Result<(), TestCaseError> {
        match (&node.value, t) {
            (Value::Str(a), Tree::Str(b)) => {
                prop_assert_eq!(a, b);
                let line = lines[node.span.start.line as usize - 1];
                let at: String = line.chars().skip(node.span.start.column as usize - 1).take(1).collect();
                prop_assert_eq!(at, "\"");
            }
            (Value::Int(a), Tree::Int(b)) => prop_assert_eq!(a, b),
            (Value::Bool(a), Tree::Bool(b)) => prop_assert_eq!(a, b),
            (Value::Null, Tree::Null) => {}
            (Value::Seq(a), Tree::Seq(b)) => {
                prop_assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(b) {
                    same(x, y, lines)?;
                }
            }
            (Value::Map(a), Tree::Map(b)) => {
                prop_assert_eq!(a.len(), b.len());
                for ((k, v), (bk, bv)) in a.iter().zip(b) {
                    prop_assert_eq!(&k.value, &Value::Str(bk.clone()));
                    same(v, bv, lines)?;
                }
            }
            (a, b) => prop_assert!(false, "{a:?} is not {b:?}"),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Written in block or flow style, several documents to a stream, the tree reads
        /// back unchanged, with locations that point at the scalars.
        #[test]
        fn trees_read_back_unchanged(
            trees in proptest::collection::vec(
                proptest::collection::btree_map("[a-z]{1,6}", tree(), 1..5)
                    .prop_map(|m| Tree::Map(m.into_iter().collect())),
                1..3,
            ),
        ) {
            for style in ["block", "flow"] {
                let mut text = String::new();
                for t in &trees {
                    text.push_str("---\n");
                    if style == "block" {
                        block(t, 0, &mut text);
                    } else {
                        text.push_str(&flow(t));
                        text.push('\n');
                    }
                }
                let stream = parse(&text, FileId(0), &Limits::default());
                prop_assert!(stream.errors.is_empty(), "{:?}\n{}", stream.errors, text);
                prop_assert_eq!(stream.documents.len(), trees.len());
                let lines: Vec<&str> = text.lines().collect();
                for (d, t) in stream.documents.iter().zip(&trees) {
                    same(&d.root, t, &lines)?;
                }
            }
        }
    }
}

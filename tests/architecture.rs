//! The layering of `src/`: no import cycle between its modules (`cli`, `report`, `config`,
//! `discover`, …, each a top-level file or directory). A cycle makes two modules one in all
//! but name: neither can be read, tested or changed without the other. A new one fails here,
//! naming the files whose `crate::` paths make it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Module → module it names (`crate::name`) → the files that do.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let first = relative.split('/').next().unwrap();
        let module = first.strip_suffix(".rs").unwrap_or(first).to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let edges = graph.entry(module.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            let name: String = text[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                edges.entry(name).or_default().insert(relative.clone());
            }
        }
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// A module a reader can hold: no source file over 900 lines (split by concern, as
/// `model/ir/` and `templates/controllers/` are).
#[test]
fn no_source_file_is_over_900_lines() {
    let mut files = Vec::new();
    sources(&common::root().join("src"), &mut files);
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > 900)
        .map(|(f, n)| format!("{} ({n} lines)", f.display()))
        .collect();
    assert!(files.len() > 50, "{files:?}");
    assert!(long.is_empty(), "split these by concern: {long:?}");
}

/// A function's inputs are a few plain values or one object that carries them (a `Verifier`,
/// a `Subject`): no function silences clippy's argument count.
#[test]
fn no_function_takes_too_many_arguments() {
    let mut files = Vec::new();
    sources(&common::root().join("src"), &mut files);
    let allowed: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains(concat!("clippy::", "too_many_arguments"))
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(allowed.is_empty(), "bundle these arguments: {allowed:?}");
}

#[test]
fn no_import_cycle_between_modules() {
    let graph = module_graph(&common::root().join("src"));
    assert!(graph.len() > 10, "the modules of src/: {:?}", graph.keys());
    let found = cycles(&graph);
    let mut explained = String::new();
    for component in &found {
        explained.push_str(&format!("cycle: {}\n", component.join(", ")));
        for a in component {
            for (b, files) in &graph[a] {
                if component.contains(b) {
                    explained.push_str(&format!(
                        "  {a} -> {b}: {}\n",
                        files.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "import cycles between modules of src/:\n{explained}");
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let dir = assert_fs::TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::thing;\n").unwrap();
    std::fs::write(dir.path().join("b/mod.rs"), "pub fn thing() { crate::c::other() }\n").unwrap();
    std::fs::write(dir.path().join("c.rs"), "pub fn other() { let _ = crate::a::X; }\n").unwrap();
    std::fs::write(dir.path().join("d.rs"), "use crate::a;\n").unwrap();
    let found = cycles(&module_graph(dir.path()));
    assert_eq!(found, vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}

/// Every check of the registry (`checks::CHECKS`) is whole: its template, its section of
/// docs/rules.md, an `explain` text with an example and fixes, and a violating fixture whose
/// `-safe` twin verifies it, as their `expected.txt` say (tests/cli.rs checks them end to end).
#[test]
fn every_check_has_a_template_docs_an_explanation_and_a_fixture_pair() {
    let root = common::root();
    let rules = std::fs::read_to_string(root.join("docs/rules.md")).unwrap();
    // What each fixture's `expected.txt` says kivi-lint concludes on it.
    let verdicts: BTreeMap<String, BTreeMap<String, String>> = common::expected_verdicts()
        .into_iter()
        .map(|e| (e.fixture, e.verdicts.into_iter().collect()))
        .collect();
    assert!(verdicts.len() > 20, "fixtures/*/expected.txt: {verdicts:?}");
    for check in kivi_lint::checks::CHECKS {
        let id = check.id.as_str();
        let monitor = check.monitor;
        assert!(
            monitor.contains(&format!("proctype {}()", check.proctype)) && monitor.contains(check.violation.define),
            "{id}: its monitor.pml defines {} and prints {}",
            check.proctype,
            check.violation.define
        );
        assert!(
            check.template == format!("checks/{}.pml", id.replace('-', "_")),
            "{id}: included as checks/<module>.pml"
        );
        assert!(
            rules.contains(&format!("\n## {id}\n")),
            "{id}: a section of docs/rules.md"
        );
        let explained = kivi_lint::report::explain(check);
        assert!(
            explained.contains(check.definition) && explained.contains(check.example) && !check.fixes.is_empty(),
            "{id}: explain"
        );
        let pair = verdicts.iter().find(|(fixture, checks)| {
            checks.get(id).is_some_and(|v| v == "violated")
                && verdicts
                    .get(&format!("{fixture}-safe"))
                    .and_then(|safe| safe.get(id))
                    .is_some_and(|v| v == "verified")
        });
        assert!(
            pair.is_some(),
            "{id}: a violating fixture with a -safe twin that verifies it"
        );
    }
}

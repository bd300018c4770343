//! The layering of `src/`: no import cycle between its modules (`cli`, `report`, `config`,
//! `discover`, …, each a top-level file or directory). A cycle makes two modules one in all
//! but name: neither can be read, tested or changed without the other. A new one fails here,
//! naming the files whose `crate::` paths make it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with_extension(dir, "rs", out);
}

/// Every file under `dir` whose extension is `ext`, in directory order.
fn files_with_extension(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_with_extension(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Module → module it names (`crate::name`) → the files that do.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    sources(src, &mut files);
    let top_module = |file: &Path| {
        let relative = file.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let first = relative.split('/').next().unwrap();
        first.strip_suffix(".rs").unwrap_or(first).to_string()
    };
    // A file another module mounts with `#[path]` (a controller's IR part and decoder, in
    // src/controllers/) belongs to the module that mounts it.
    let mut mounted = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines() {
            if let Some(rest) = line.trim().strip_prefix("#[path = \"") {
                let target = file.parent().unwrap().join(rest.split('"').next().unwrap());
                mounted.insert(std::fs::canonicalize(target).unwrap(), top_module(file));
            }
        }
    }
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let module = mounted
            .get(&std::fs::canonicalize(&file).unwrap())
            .cloned()
            .unwrap_or_else(|| top_module(&file));
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

/// A module a reader can hold: no source file over 600 lines (split by concern, as
/// `model/ir/` and `src/controllers/` are).
#[test]
fn no_source_file_is_over_600_lines() {
    let mut files = Vec::new();
    sources(&common::root().join("src"), &mut files);
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > 600)
        .map(|(f, n)| format!("{} ({n} lines)", f.display()))
        .collect();
    assert!(files.len() > 50, "{files:?}");
    assert!(long.is_empty(), "split these by concern: {long:?}");
}

/// The functions of `text` over `limit` lines, as `name (n lines)`: a `fn` item's lines from
/// its signature to the `}` at its indentation (rustfmt's layout, which CI enforces).
fn long_functions(text: &str, limit: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = trimmed
            .strip_prefix("pub ")
            .or_else(|| trimmed.strip_prefix("pub(crate) "))
            .or_else(|| trimmed.strip_prefix("pub(super) "))
            .or_else(|| trimmed.strip_prefix("pub(in crate::discover) "))
            .unwrap_or(trimmed);
        let Some(rest) = signature
            .strip_prefix("fn ")
            .or_else(|| signature.strip_prefix("const fn "))
        else {
            continue;
        };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // A declaration without a body (a trait's) ends in `;` before any `{`.
        let Some(open) =
            (i..lines.len()).find(|&j| lines[j].trim_end().ends_with('{') || lines[j].trim_end().ends_with(';'))
        else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (open + 1..lines.len()).find(|&j| lines[j] == close) {
            let n = end - i + 1;
            if n > limit {
                long.push(format!("{name} ({n} lines)"));
            }
        }
    }
    long
}

/// A function a reader can hold: none over 150 lines (split it into the stages it goes
/// through, as `model::ir::build` is).
#[test]
fn no_function_is_over_150_lines() {
    let mut files = Vec::new();
    sources(&common::root().join("src"), &mut files);
    let long: Vec<String> = files
        .iter()
        .flat_map(|f| {
            long_functions(&std::fs::read_to_string(f).unwrap(), 150)
                .into_iter()
                .map(move |l| format!("{}: {l}", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these into their stages: {long:?}");
}

#[test]
fn the_length_check_sees_a_long_function() {
    let body = "    let x = 1;\n".repeat(160);
    let text =
        format!("impl A {{\n    pub(super) fn long(&self) {{\n{body}    }}\n\n    fn short() {{}}\n}}\nfn f();\n");
    assert_eq!(long_functions(&text, 150), vec!["long (162 lines)".to_string()]);
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

/// The ids of the registered checks, from their folders (`pods_schedulable/` is
/// `pods-schedulable`).
fn check_ids(root: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(root.join("src/checks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().replace('_', "-"))
        .collect();
    ids.sort();
    ids
}

/// A source file's code, without its tests (`#[cfg(test)]` to the end, as rustfmt and this
/// repository lay them out).
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

#[test]
fn nothing_outside_a_checks_folder_names_a_check() {
    let root = common::root();
    let ids = check_ids(&root);
    assert!(ids.len() >= 9, "{ids:?}");
    let mut named = Vec::new();
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    for f in files.iter().filter(|f| !f.starts_with(root.join("src/checks"))) {
        let name = f.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let code = without_tests(&text);
        for (i, line) in code.lines().enumerate() {
            let code_part = line.split("//").next().unwrap();
            let variant = code_part
                .match_indices("CheckId::")
                .any(|(at, m)| code_part[at + m.len()..].starts_with(|c: char| c.is_ascii_uppercase()));
            let quoted = ids.iter().any(|id| code_part.contains(&format!("\"{id}\"")));
            if variant || quoted {
                named.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    let mut templates = Vec::new();
    files_with_extension(&root.join("templates"), "pml", &mut templates);
    files_with_extension(&root.join("src/events"), "pml", &mut templates);
    files_with_extension(&root.join("src/controllers"), "pml", &mut templates);
    for f in &templates {
        for (i, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            if ids.iter().any(|id| line.contains(&format!("\"{id}\""))) {
                named.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "ask the registry what the unit's checks need (crate::checks::any, a Check field) instead of naming a check:\n{}",
        named.join("\n")
    );
}

/// A controller is its folder (src/controllers/<controller>/): its templates, which the model
/// embeds (`model::tests::every_template_file_is_embedded`), and its part of the IR and its
/// decoder, which `model::ir` and `findings::decode` mount with `#[path]`. A file there that
/// nothing mounts would never be compiled.
#[test]
fn every_controller_file_is_mounted() {
    let root = common::root();
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let mut mounted = BTreeSet::new();
    for file in &files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            if let Some(rest) = line.trim().strip_prefix("#[path = \"") {
                let target = file.parent().unwrap().join(rest.split('"').next().unwrap());
                mounted.insert(std::fs::canonicalize(target).unwrap());
            }
        }
    }
    let mut controllers = Vec::new();
    sources(&root.join("src/controllers"), &mut controllers);
    assert!(controllers.len() >= 8, "{controllers:?}");
    let loose: Vec<String> = controllers
        .iter()
        .filter(|f| !mounted.contains(&std::fs::canonicalize(f).unwrap()))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        loose.is_empty(),
        "mount these with #[path] in model::ir or findings::decode: {loose:?}"
    );
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

/// Copies `from` to `to`, writing only files whose bytes differ (so a rebuild of the copy is
/// incremental).
fn mirror(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            mirror(&path, &target);
        } else {
            write_if_changed(&target, &std::fs::read(&path).unwrap());
        }
    }
}

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap();
    }
}

/// `text` with `line` added as the first entry of its `registry! {` list.
fn with_registry_line(text: &str, line: &str) -> String {
    assert_eq!(text.matches("registry! {\n").count(), 1, "one registry list");
    text.replacen("registry! {\n", &format!("registry! {{\n    {line}\n"), 1)
}

/// Adding a check is its folder and a line in `checks::registry!`; adding an environment event
/// is its folder and a line in `events::registry!`. This builds kivi-lint with a toy of each
/// (`tests/architecture/toy_running_cap/`, `toy_pod_kill/`) and nothing else changed, and runs
/// it: the toy check reaches its verdict, with its param from the config, at the field its
/// decoder names; the toy event, configured with its param, is explored and told as a step.
#[test]
fn a_check_and_an_event_are_each_a_folder_and_a_registry_line() {
    let root = common::root();
    let toys = root.join("tests/architecture");
    // A fixed place (not a temporary one), so that the copy's build is incremental.
    let work = root.join("target/architecture-toys");
    let copy = work.join("kivi-lint");
    for dir in ["src", "templates"] {
        mirror(&root.join(dir), &copy.join(dir));
    }
    // The copy is built as a binary only: the manifest without the test targets it does not carry.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let manifest = manifest.split("\n[[test]]").next().unwrap();
    write_if_changed(&copy.join("Cargo.toml"), manifest.as_bytes());
    write_if_changed(
        &copy.join("Cargo.lock"),
        &std::fs::read(root.join("Cargo.lock")).unwrap(),
    );
    // The two folders and the two lines.
    mirror(&toys.join("toy_running_cap"), &copy.join("src/checks/toy_running_cap"));
    mirror(&toys.join("toy_pod_kill"), &copy.join("src/events/toy_pod_kill"));
    let checks = std::fs::read_to_string(root.join("src/checks/mod.rs")).unwrap();
    let checks = with_registry_line(&checks, r#"toy_running_cap => ToyRunningCap = "toy-running-cap","#);
    write_if_changed(&copy.join("src/checks/mod.rs"), checks.as_bytes());
    let events = std::fs::read_to_string(root.join("src/events/mod.rs")).unwrap();
    let events = with_registry_line(&events, "toy_pod_kill,");
    write_if_changed(&copy.join("src/events/mod.rs"), events.as_bytes());

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = std::process::Command::new(cargo)
        .args(["build", "--locked", "--quiet", "--bin", "kivi-lint"])
        .current_dir(&copy)
        .env("CARGO_TARGET_DIR", work.join("target"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "kivi-lint with the toys does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );

    let repository = assert_fs::TempDir::new().unwrap();
    std::fs::write(
        repository.path().join("web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n\
         spec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    \
         metadata: {labels: {app: web}}\n    spec:\n      containers:\n        - name: web\n          \
         image: nginx\n          resources: {requests: {cpu: 100m, memory: 64Mi}}\n",
    )
    .unwrap();
    std::fs::write(
        repository.path().join(".kivi-lint.yaml"),
        "apiVersion: kivi-lint/v1alpha1\nkind: Config\n\
         cluster:\n  nodePools:\n    - {name: pool, count: 2, allocatable: {cpu: \"4\", memory: 16Gi, pods: 110}}\n\
         events: [{type: toy-pod-kill, times: 1}]\n\
         checks: {params: {toy-running-cap: {max: 2}}}\n",
    )
    .unwrap();
    let ran = std::process::Command::new(work.join("target/debug/kivi-lint"))
        .args(["--no-fixes", "--no-cache", "-f", "json", "."])
        .current_dir(repository.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&ran.stdout),
            String::from_utf8_lossy(&ran.stderr)
        )
    });
    assert_eq!(ran.status.code(), Some(1), "{report:#}");
    let results: Vec<&serde_json::Value> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["verification"]["results"].as_array().unwrap())
        .collect();
    let toy = results
        .iter()
        .find(|r| r["check"] == "toy-running-cap")
        .unwrap_or_else(|| panic!("no toy-running-cap result: {report:#}"));
    assert_eq!(toy["verdict"], "violated", "{toy:#}");
    let text = toy.to_string();
    assert!(
        text.contains("Deployment/default/web runs 3 pods, more than 2"),
        "{toy:#}"
    );
    assert_eq!(
        (&toy["file"], &toy["line"]),
        (&"web.yaml".into(), &5.into()),
        "at spec.replicas: {toy:#}"
    );
    // The pod the toy event deletes is missed: some trace tells the deletion as its step.
    let told = results
        .iter()
        .flat_map(|r| r["steps"].as_array().into_iter().flatten())
        .any(|s| {
            s["actor"] == "toy-pod-kill"
                && s["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("someone deletes web-"))
        });
    assert!(told, "no step of toy-pod-kill: {report:#}");
}

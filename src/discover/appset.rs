//! Argo CD ApplicationSets (applicationset-controller): the Applications their generators
//! make from this repository, so each is checked as the Application it becomes.
//!
//! Generators read here, with their Git repository taken to be this one:
//! - `list`: each element is one parameter set;
//! - `git.directories`: each directory matching a `path` glob (Go's `path.Match`: `*` stays in
//!   one directory) that no `exclude: true` entry matches;
//! - `git.files`: each file matching a `path` glob, parsed as YAML or JSON (a list is one set
//!   per element), its keys flattened with dots;
//! - `matrix` (the product of its two generators) and `merge` (later generators override the
//!   sets whose `mergeKeys` values agree).
//!
//! Parameters fill `spec.template` as Argo CD does: `{{name}}` (fasttemplate), or `{{.name}}`
//! with `goTemplate: true`, where the path parameters are `.path.path`, `.path.basename`,
//! `.path.filename` and their `Normalized` forms. What reads Argo CD's own state (`clusters`,
//! `clusterDecisionResource`), another service (`scmProvider`, `pullRequest`, `plugin`) or Go
//! template functions cannot be expanded here: a reason says so, and nothing is guessed.

use std::collections::BTreeMap;
use std::path::Path;

use crate::source::Span;
use crate::yaml::{Node, Value};

/// Directories listed at most while matching a glob: a generator over a huge tree stops.
const MAX_DIRECTORIES: usize = 20_000;

/// One generated Application's parameters, by fasttemplate name (`path.basename`).
type Params = BTreeMap<String, String>;

pub(super) fn is_application_set(root: &Node) -> bool {
    root.get("apiVersion")
        .and_then(Node::as_str)
        .is_some_and(|a| a.starts_with("argoproj.io/"))
        && root.get("kind").and_then(Node::as_str) == Some("ApplicationSet")
}

/// What an ApplicationSet expands to.
#[derive(Debug, Default)]
pub(super) struct Expanded {
    /// Application objects, located at the template fields they come from.
    pub(super) applications: Vec<Node>,
    /// Why some of its Applications cannot be made here (a generator or template kivi-lint
    /// does not expand), located.
    pub(super) left_out: Vec<(Span, String)>,
}

/// The Applications of the ApplicationSet `root`, with `repository` the root of the Git
/// repository its generators read.
pub(super) fn expand(root: &Node, repository: &Path) -> Expanded {
    let mut out = Expanded::default();
    let Some(template) = root.at(&["spec", "template"]) else {
        return out;
    };
    let go = root
        .at(&["spec", "goTemplate"])
        .is_some_and(|g| g.value == Value::Bool(true));
    if let Some(patch) = root.at(&["spec", "templatePatch"]) {
        out.left_out.push((
            patch.span,
            "its `templatePatch` is a Go template kivi-lint does not evaluate".into(),
        ));
        return out;
    }
    let mut sets = Vec::new();
    for generator in root
        .at(&["spec", "generators"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        match generate(generator, repository, 0) {
            Ok(more) => sets.extend(more),
            Err(why) => out.left_out.push(why),
        }
    }
    for params in &sets {
        let mut application = template.clone();
        let mut unfilled = None;
        fill(&mut application, params, go, &mut unfilled);
        if let Some((span, text)) = unfilled {
            out.left_out.push((
                span,
                format!(
                    "its template `{}` is not a parameter its generators give (Go template functions are not evaluated)",
                    crate::diagnostics::printable(&text)
                ),
            ));
            continue;
        }
        out.applications.push(as_application(application, root.span));
    }
    out.left_out.dedup();
    out
}

/// The template's `metadata` and `spec` as an Application object.
fn as_application(template: Node, at: Span) -> Node {
    let node = |value: Value| Node { span: at, value };
    let mut entries = vec![
        (
            node(Value::Str("apiVersion".into())),
            node(Value::Str("argoproj.io/v1alpha1".into())),
        ),
        (node(Value::Str("kind".into())), node(Value::Str("Application".into()))),
    ];
    if let Value::Map(fields) = template.value {
        entries.extend(
            fields
                .into_iter()
                .filter(|(k, _)| matches!(k.as_str(), Some("metadata" | "spec"))),
        );
    }
    node(Value::Map(entries))
}

/// The parameter sets of one generator.
fn generate(generator: &Node, repository: &Path, depth: usize) -> Result<Vec<Params>, (Span, String)> {
    if let Some(list) = generator.get("list") {
        let elements = list.get("elements").and_then(Node::as_seq).unwrap_or_default();
        return Ok(elements
            .iter()
            .map(|e| {
                let mut params = Params::new();
                flatten(e, "", &mut params);
                params
            })
            .collect());
    }
    if let Some(git) = generator.get("git") {
        if let Some(directories) = git.get("directories").and_then(Node::as_seq) {
            return Ok(git_directories(directories, repository));
        }
        if let Some(files) = git.get("files").and_then(Node::as_seq) {
            return git_files(files, repository);
        }
        return Ok(Vec::new());
    }
    for combinator in ["matrix", "merge"] {
        let Some(combined) = generator.get(combinator) else {
            continue;
        };
        if depth >= 3 {
            return Err((combined.span, format!("its `{combinator}` generators nest too deep")));
        }
        let children = combined.get("generators").and_then(Node::as_seq).unwrap_or_default();
        let mut each = Vec::new();
        for child in children {
            each.push(generate(child, repository, depth + 1)?);
        }
        return Ok(if combinator == "matrix" {
            each.into_iter().fold(vec![Params::new()], |acc, sets| {
                acc.iter()
                    .flat_map(|a| {
                        sets.iter()
                            .map(move |s| a.iter().chain(s).map(|(k, v)| (k.clone(), v.clone())).collect())
                    })
                    .collect()
            })
        } else {
            let keys: Vec<String> = combined
                .get("mergeKeys")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Node::scalar_text)
                .collect();
            let mut each = each.into_iter();
            let mut base = each.next().unwrap_or_default();
            for later in each {
                for set in &mut base {
                    let key = |p: &Params| keys.iter().map(|k| p.get(k).cloned()).collect::<Vec<_>>();
                    if let Some(over) = later.iter().find(|l| key(l) == key(set)) {
                        set.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                }
            }
            base
        });
    }
    let kind = generator
        .as_map()
        .and_then(|m| m.first())
        .and_then(|(k, _)| k.as_str())
        .unwrap_or("?");
    Err((
        generator.span,
        format!(
            "its `{}` generator reads what is not in this repository (Argo CD's clusters or another service)",
            crate::diagnostics::printable(kind)
        ),
    ))
}

/// A generator's `path` glob as Go's `path.Match` reads it: `*` does not cross `/`.
fn glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern.trim_start_matches("./").trim_end_matches('/'))
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

fn git_directories(entries: &[Node], repository: &Path) -> Vec<Params> {
    let wanted: Vec<globset::GlobMatcher> = entries
        .iter()
        .filter(|e| e.get("exclude").is_none_or(|x| x.value != Value::Bool(true)))
        .filter_map(|e| e.get("path").and_then(Node::as_str).and_then(glob))
        .collect();
    let excluded: Vec<globset::GlobMatcher> = entries
        .iter()
        .filter(|e| e.get("exclude").is_some_and(|x| x.value == Value::Bool(true)))
        .filter_map(|e| e.get("path").and_then(Node::as_str).and_then(glob))
        .collect();
    let mut out = Vec::new();
    for dir in directories(repository) {
        if wanted.iter().any(|g| g.is_match(&dir)) && !excluded.iter().any(|g| g.is_match(&dir)) {
            out.push(path_params(&dir, None));
        }
    }
    out
}

fn git_files(entries: &[Node], repository: &Path) -> Result<Vec<Params>, (Span, String)> {
    let mut out = Vec::new();
    for entry in entries {
        let Some(matcher) = entry.get("path").and_then(Node::as_str).and_then(glob) else {
            continue;
        };
        let excluded = entry.get("exclude").is_some_and(|x| x.value == Value::Bool(true));
        if excluded {
            continue;
        }
        for dir in directories(repository) {
            let Ok(listing) = std::fs::read_dir(repository.join(&dir)) else {
                continue;
            };
            let mut files: Vec<String> = listing
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .collect();
            files.sort();
            for name in files {
                let relative = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                if !matcher.is_match(&relative) {
                    continue;
                }
                let text = crate::source::read_text(&repository.join(&relative)).map_err(|e| {
                    (
                        entry.span,
                        format!(
                            "its file `{}` cannot be read: {}",
                            crate::diagnostics::printable(&relative),
                            crate::diagnostics::printable(&e)
                        ),
                    )
                })?;
                let parsed = crate::yaml::parse(&text, entry.span.file, &crate::yaml::Limits::default());
                if !parsed.errors.is_empty() {
                    return Err((
                        entry.span,
                        format!(
                            "its file `{}` is not valid YAML or JSON",
                            crate::diagnostics::printable(&relative)
                        ),
                    ));
                }
                for doc in parsed.documents {
                    let items: Vec<&Node> = match doc.root.as_seq() {
                        Some(items) => items.iter().collect(),
                        None => vec![&doc.root],
                    };
                    for item in items {
                        let mut params = path_params(&dir, Some(&name));
                        flatten(item, "", &mut params);
                        out.push(params);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Every directory of the repository, relative, `/`-separated, sorted; the root is `""`.
/// Hidden directories (`.git`) are left out.
fn directories(repository: &Path) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut next = 0;
    while next < out.len() && out.len() < MAX_DIRECTORIES {
        let dir = out[next].clone();
        next += 1;
        let Ok(listing) = std::fs::read_dir(repository.join(&dir)) else {
            continue;
        };
        let mut children: Vec<String> = listing
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(String::from))
            .filter(|n| !n.starts_with('.'))
            .map(|n| if dir.is_empty() { n } else { format!("{dir}/{n}") })
            .collect();
        children.sort();
        out.extend(children);
    }
    out.sort();
    out
}

/// The path parameters of a directory (and a file in it, for the files generator).
fn path_params(dir: &str, file: Option<&str>) -> Params {
    let basename = dir.rsplit('/').next().unwrap_or_default();
    let mut params = Params::new();
    params.insert("path".into(), dir.to_string());
    params.insert("path.basename".into(), basename.to_string());
    params.insert("path.basenameNormalized".into(), normalized(basename));
    for (i, segment) in dir.split('/').enumerate() {
        params.insert(format!("path[{i}]"), segment.to_string());
    }
    if let Some(file) = file {
        params.insert("path.filename".into(), file.to_string());
        params.insert("path.filenameNormalized".into(), normalized(file));
    }
    params
}

/// Argo CD's normalized form: a DNS-1123 subdomain (lower case, other characters `-`).
fn normalized(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// A generator element's keys, flattened with dots (`a.b.c`), scalar values as text.
fn flatten(node: &Node, prefix: &str, out: &mut Params) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                let Some(k) = k.scalar_text() else { continue };
                let key = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
                flatten(v, &key, out);
            }
        }
        Value::Seq(_) => {}
        _ => {
            if let Some(text) = node.scalar_text() {
                out.insert(prefix.to_string(), text);
            }
        }
    }
}

/// Fill every `{{...}}` of the strings under `node`; the first that no parameter fills is
/// `unfilled`.
fn fill(node: &mut Node, params: &Params, go: bool, unfilled: &mut Option<(Span, String)>) {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                fill(k, params, go, unfilled);
                fill(v, params, go, unfilled);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| fill(i, params, go, unfilled)),
        Value::Str(text) if text.contains("{{") => {
            let mut filled = String::new();
            let mut rest = text.as_str();
            while let Some(open) = rest.find("{{") {
                filled.push_str(&rest[..open]);
                let Some(close) = rest[open..].find("}}") else {
                    break;
                };
                let inner = rest[open + 2..open + close].trim();
                match parameter(inner, params, go) {
                    Some(value) => filled.push_str(value),
                    None => {
                        if unfilled.is_none() {
                            *unfilled = Some((node.span, format!("{{{{{inner}}}}}")));
                        }
                        return;
                    }
                }
                rest = &rest[open + close + 2..];
            }
            filled.push_str(rest);
            *text = filled;
        }
        _ => {}
    }
}

/// The value of one template expression: a parameter name, nothing else.
fn parameter<'p>(expression: &str, params: &'p Params, go: bool) -> Option<&'p String> {
    if go {
        let name = expression.strip_prefix('.')?;
        let name = match name {
            "path.path" => "path",
            other => other,
        };
        params.get(name)
    } else {
        params.get(expression)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn root(text: &str) -> Node {
        crate::yaml::parse(text, FileId(0), &crate::yaml::Limits::default())
            .documents
            .remove(0)
            .root
    }

    fn paths(expanded: &Expanded) -> Vec<String> {
        expanded
            .applications
            .iter()
            .map(|a| {
                let name = a
                    .at(&["metadata", "name"])
                    .and_then(Node::scalar_text)
                    .unwrap_or_default();
                let path = a
                    .at(&["spec", "source", "path"])
                    .and_then(Node::scalar_text)
                    .unwrap_or_default();
                format!("{name}:{path}")
            })
            .collect()
    }

    #[test]
    fn list_matrix_and_git_files_fill_the_template() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("envs/prod")).unwrap();
        std::fs::create_dir_all(repo.path().join("envs/dev")).unwrap();
        std::fs::write(
            repo.path().join("envs/prod/config.json"),
            r#"{"cluster": {"name": "eu"}}"#,
        )
        .unwrap();
        std::fs::write(
            repo.path().join("envs/dev/config.json"),
            r#"[{"cluster": {"name": "a"}}, {"cluster": {"name": "b"}}]"#,
        )
        .unwrap();
        let set = root(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nspec:\n  generators:\n    - matrix:\n        generators:\n          - list:\n              elements: [{app: web}, {app: api}]\n          - git:\n              files: [{path: 'envs/*/config.json'}]\n  template:\n    metadata: {name: '{{app}}-{{cluster.name}}'}\n    spec:\n      source: {path: 'apps/{{app}}/{{path.basename}}'}\n",
        );
        let expanded = expand(&set, repo.path());
        assert!(expanded.left_out.is_empty(), "{:?}", expanded.left_out);
        assert_eq!(
            paths(&expanded),
            [
                "web-a:apps/web/dev",
                "web-b:apps/web/dev",
                "web-eu:apps/web/prod",
                "api-a:apps/api/dev",
                "api-b:apps/api/dev",
                "api-eu:apps/api/prod"
            ]
        );
    }

    #[test]
    fn git_directories_with_go_templates_and_what_cannot_be_expanded() {
        let repo = tempfile::tempdir().unwrap();
        for d in ["apps/web", "apps/legacy", "apps/web/worker"] {
            std::fs::create_dir_all(repo.path().join(d)).unwrap();
        }
        let set = root(
            "kind: ApplicationSet\napiVersion: argoproj.io/v1alpha1\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        directories: [{path: 'apps/*'}, {path: apps/legacy, exclude: true}]\n    - clusters: {}\n  template:\n    metadata: {name: '{{.path.basename}}'}\n    spec:\n      source: {path: '{{.path.path}}'}\n",
        );
        let expanded = expand(&set, repo.path());
        assert_eq!(paths(&expanded), ["web:apps/web"]);
        assert_eq!(expanded.left_out.len(), 1);
        assert!(
            expanded.left_out[0].1.contains("`clusters` generator"),
            "{:?}",
            expanded.left_out
        );
        let functions = root(
            "kind: ApplicationSet\napiVersion: argoproj.io/v1alpha1\nspec:\n  goTemplate: true\n  generators:\n    - git:\n        directories: [{path: 'apps/*'}]\n  template:\n    metadata: {name: '{{ .path.basename | lower }}'}\n    spec: {}\n",
        );
        let expanded = expand(&functions, repo.path());
        assert!(expanded.applications.is_empty());
        assert!(
            expanded.left_out[0].1.contains("`{{.path.basename | lower}}`"),
            "{:?}",
            expanded.left_out
        );
    }
}

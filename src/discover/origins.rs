//! Rendered output tied back to the source lines it came from: kustomize's origin
//! annotations (through a staged copy, when there is one), Helm's `# Source:` comments.

use super::*;

/// Parse a source file once per run (several overlays share a base).
pub(super) fn source_documents<'c>(
    path: &Path,
    sources: &mut SourceMap,
    cache: &'c mut HashMap<PathBuf, Option<(FileId, Vec<Document>)>>,
) -> Option<&'c (FileId, Vec<Document>)> {
    cache
        .entry(path.to_path_buf())
        .or_insert_with(|| {
            let text = read_text(path).ok()?;
            let shown = display_path(path);
            let id = sources
                .find(&shown)
                .unwrap_or_else(|| sources.add(shown, text.as_str()));
            let stream = yaml::parse(&text, id, &yaml::Limits::default());
            Some((id, stream.documents))
        })
        .as_ref()
}

/// A finished kustomize render: its root, its kustomization, the wrapper it was built
/// through, and what its overlays change.
pub(super) struct KustomizeOutput<'a> {
    pub(super) root: &'a Path,
    pub(super) kustomization: FileId,
    pub(super) wrapper: &'a Path,
    pub(super) changes: &'a [overlay::Change],
    /// The staged copy it was built from, if any: its paths map back to the repository.
    pub(super) staged: Option<&'a stage::Staged>,
}

pub(super) fn attach_kustomize_origins(
    text: &str,
    render: KustomizeOutput,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    cache: &mut HashMap<PathBuf, Option<(FileId, Vec<Document>)>>,
) -> Vec<Document> {
    let KustomizeOutput {
        root,
        kustomization,
        wrapper,
        changes,
        staged,
    } = render;
    let rendered_name = format!("{} (kustomize build)", display_path(root).display());
    let rendered_file = sources.add(rendered_name, text);
    let stream = yaml::parse(text, rendered_file, &yaml::Limits::default());
    for e in stream.errors {
        diags.error(e.span, format!("in kustomize output: {}", e.message));
    }
    let fallback = Span::point(kustomization, Location::START);
    let mut documents = stream.documents;
    for doc in &mut documents {
        let origin = match (kustomize::take_origin(&mut doc.root, wrapper), staged) {
            (Some(kustomize::Origin::File(path)), Some(staged)) => match staged.original(&path) {
                Ok(path) => Some(kustomize::Origin::File(path)),
                // Fetched: located at the entry that names it.
                Err(entry) => {
                    provenance::remap_all(&mut doc.root, entry);
                    continue;
                }
            },
            (Some(kustomize::Origin::Generated(path)), Some(staged)) => {
                Some(kustomize::Origin::Generated(staged.original(&path).unwrap_or(path)))
            }
            (origin, _) => origin,
        };
        match origin {
            Some(kustomize::Origin::File(path)) => match source_documents(&path, sources, cache) {
                Some((_, docs)) => match matching_document(&doc.root, docs) {
                    Some(source) => {
                        provenance::remap_to_source(&mut doc.root, source);
                        // What the overlays change points at the overlays.
                        let kind = source.get("kind").and_then(Node::as_str).unwrap_or_default();
                        let name = source
                            .at(&["metadata", "name"])
                            .and_then(Node::as_str)
                            .unwrap_or_default();
                        overlay::apply(&mut doc.root, kind, name, changes);
                    }
                    None => provenance::remap_all(&mut doc.root, fallback),
                },
                None => provenance::remap_all(&mut doc.root, fallback),
            },
            Some(kustomize::Origin::Generated(path)) => {
                let shown = display_path(&path);
                let id = sources.find(&shown).unwrap_or(kustomization);
                provenance::remap_all(&mut doc.root, Span::point(id, Location::START));
            }
            None => provenance::remap_all(&mut doc.root, fallback),
        }
    }
    documents
}

/// The source document a rendered object came from: same kind, and a name the rendered one
/// contains (kustomize adds prefixes and suffixes).
pub(super) fn matching_document<'d>(rendered: &Node, docs: &'d [Document]) -> Option<&'d Node> {
    let kind = rendered.get("kind").and_then(Node::scalar_text);
    let name = rendered
        .at(&["metadata", "name"])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let same_kind: Vec<&Node> = docs
        .iter()
        .map(|d| &d.root)
        .filter(|d| d.get("kind").and_then(Node::scalar_text) == kind)
        .collect();
    let source_name = |d: &Node| {
        d.at(&["metadata", "name"])
            .and_then(Node::scalar_text)
            .unwrap_or_default()
    };
    same_kind
        .iter()
        .find(|d| source_name(d) == name)
        .or_else(|| {
            same_kind
                .iter()
                .filter(|d| !source_name(d).is_empty() && name.contains(&source_name(d)))
                .max_by_key(|d| source_name(d).len())
        })
        .or(same_kind.first())
        .copied()
        .or_else(|| (docs.len() == 1).then(|| &docs[0].root))
}

pub(super) fn attach_helm_sources(
    text: &str,
    chart: &Path,
    local: &[helm::Subchart],
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Vec<Document> {
    let rendered_name = format!("{} (helm template)", display_path(chart).display());
    let rendered_file = sources.add(rendered_name, text);
    let stream = yaml::parse(text, rendered_file, &yaml::Limits::default());
    for e in stream.errors {
        diags.error(e.span, format!("in helm output: {}", e.message));
    }
    let comments = helm::source_comments(text);
    let mut templates: HashMap<PathBuf, FileId> = HashMap::new();
    let mut documents = stream.documents;
    for doc in &mut documents {
        let line = doc.root.span.start.line;
        let Some((_, source)) = comments.iter().rev().find(|(l, _)| *l < line) else {
            continue;
        };
        let path = match helm::template_path(chart, source, local) {
            Some(helm::TemplateAt::File(path)) => path,
            Some(helm::TemplateAt::Dependency(at)) => {
                provenance::remap_all(&mut doc.root, at);
                continue;
            }
            None => continue,
        };
        let file = *templates.entry(path.clone()).or_insert_with(|| {
            let shown = display_path(&path);
            sources
                .find(&shown)
                .unwrap_or_else(|| sources.add(shown, read_text(&path).unwrap_or_default()))
        });
        let template = sources.file(file).text.clone();
        provenance::remap_to_template(&mut doc.root, &template, file);
    }
    documents
}

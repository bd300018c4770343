//! Documents read without a renderer (plain files, stdin) and the `${VAR}` placeholders
//! filled in across the batches.

use super::*;

/// Fill in `${VAR}` placeholders (see `placeholders`); a document whose variables nothing
/// gives a value is left out, with one note per file.
pub(super) fn fill_placeholders(
    options: &Options,
    sources: &SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    let roots = source_roots(options);
    let deployers = placeholders::deployers(discovery.batches.iter().flat_map(|b| &b.documents), &|d| {
        roots_near(&roots, sources, d)
    });
    let quoted = |span: Span| placeholders::quoted_in(sources, span);
    let mut left_out = Vec::new();
    for batch in &mut discovery.batches {
        // What a Flux Kustomization's path builds is its kustomization's output, wherever the
        // files it reads are (a base elsewhere): a render is found by its root.
        let scope = &discovery.scopes[batch.scope];
        let built = match scope.kind {
            ScopeKind::Kustomize => scope.path.as_path(),
            _ => sources.path(batch.file),
        };
        let built = std::fs::canonicalize(built).unwrap_or_else(|_| crate::source::normalize(&absolute(built)));
        let deployer = match &batch.deployer {
            Some(id) => deployers.iter().find(|d| &d.id == id),
            None => placeholders::deployer_of(&deployers, &built),
        };
        let mut unfilled: Option<(String, Span)> = None;
        let mut count = 0;
        batch.documents.retain_mut(|doc| {
            // What the Flux Kustomization does to its build output, then its substitution.
            if let Some(d) = deployer {
                flux::post_build(doc, d);
            }
            match placeholders::fill(doc, deployer.filter(|d| d.substitutes), &quoted) {
                placeholders::Outcome::Kept => true,
                placeholders::Outcome::Unfilled { name, span } => {
                    count += 1;
                    unfilled.get_or_insert((name, span));
                    false
                }
            }
        });
        if let Some((name, span)) = unfilled {
            left_out.push((batch.file, name, span, count));
        }
    }
    for (file, name, span, count) in left_out {
        let documents = if count == 1 {
            "the document that uses it is left out".to_string()
        } else {
            format!("the {count} documents that use it are left out")
        };
        discovery.leave_out(
            options,
            diags,
            span,
            coverage::NotRendered {
                limit: coverage::Limit::Placeholder,
                source: format!("{}", sources.path(file).display()),
                detail: format!(
                    "`${{{}}}` is filled in at deploy time and nothing here gives it a value, so {documents}",
                    crate::diagnostics::printable(&name)
                ),
            },
            "give it a `:-` default, or deploy the directory with a Flux Kustomization whose `postBuild.substitute` sets it",
        );
    }
}

pub(super) fn read_stdin(
    options: &Options,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    let name = options.stdin_filename.unwrap_or("<stdin>");
    let scope = discovery.scopes.len();
    discovery.scopes.push(Scope {
        kind: ScopeKind::Stdin,
        path: PathBuf::from(name),
    });
    let mut bytes = Vec::new();
    let result = std::io::stdin().lock().take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes);
    let text = match (result, String::from_utf8(bytes)) {
        (Err(e), _) => Err((format!("cannot read stdin: {e}"), Location::START)),
        (Ok(n), _) if n as u64 > MAX_FILE_BYTES => {
            Err(("stdin is larger than 16 MiB; not read".to_string(), Location::START))
        }
        (Ok(_), Err(e)) => Err((
            "stdin is not valid UTF-8".to_string(),
            location_of_offset(e.as_bytes(), e.utf8_error().valid_up_to()),
        )),
        (Ok(_), Ok(t)) => Ok(t),
    };
    match text {
        Ok(text) => {
            let file = sources.add(name, text.as_str());
            parse_into(&text, file, scope, "default", diags, discovery);
        }
        Err((message, location)) => {
            let file = sources.add(name, "");
            diags.error(Span::point(file, location), message);
        }
    }
}

pub(super) fn read_plain(
    path: &Path,
    scope: usize,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    discovery.files += 1;
    match read_source(path) {
        Ok(text) => {
            let file = sources.add(display_path(path), text.as_str());
            parse_into(&text, file, scope, "default", diags, discovery);
        }
        Err(e) => {
            let file = sources.add(display_path(path), "");
            diags.error(Span::point(file, e.location), e.message);
        }
    }
}

pub(super) fn parse_into(
    text: &str,
    file: FileId,
    scope: usize,
    namespace: &str,
    diags: &mut Diagnostics,
    discovery: &mut Discovery,
) {
    let stream = yaml::parse(text, file, &yaml::Limits::default());
    let template = text.contains("{{");
    // A duplicate key in a document that is no Kubernetes object (a site generator's config, a
    // CI file) is not the cluster's concern: the document is skipped, and a note says why.
    let in_other_document = |e: &yaml::YamlError| {
        !e.fatal
            && stream.documents.iter().any(|d| {
                let span = d.root.span;
                span.start <= e.span.start
                    && e.span.start <= span.end
                    && (d.root.get("apiVersion").is_none() || d.root.get("kind").is_none())
            })
    };
    for e in &stream.errors {
        if in_other_document(e) {
            diags.push(Diagnostic::note(
                e.span,
                format!(
                    "{}, in a document that is not a Kubernetes object: it is not read",
                    e.message
                ),
            ));
            continue;
        }
        let mut d = Diagnostic::error(e.span, e.message.clone());
        if template && e.fatal {
            d = d.with_help("this file looks like a template, not YAML: render it (Helm chart) or add it to `exclude`");
        }
        diags.push(d);
    }
    if stream.documents.is_empty() && !diags.iter().any(|d| d.span.file == file) {
        discovery.empty_files.push(file);
    }
    discovery.batches.push(Batch {
        scope,
        deployer: None,
        generated: false,
        file,
        documents: stream.documents,
        default_namespace: namespace.to_string(),
    });
}

use super::*;
use crate::source::FileId;

#[test]
fn placeholders_with_and_without_defaults() {
    let found = placeholders("${A}-x-${B:-b}${C:=c} $${D} ${1X} ${E^^}");
    let names: Vec<(&str, Option<&str>)> = found.iter().map(|p| (p.name.as_str(), p.default.as_deref())).collect();
    assert_eq!(names, vec![("A", None), ("B", Some("b")), ("C", Some("c"))]);
}

fn parse(text: &str) -> Document {
    crate::yaml::parse(text, FileId(0), &crate::yaml::Limits::default())
        .documents
        .remove(0)
}

#[test]
fn defaults_fill_in_and_a_whole_plain_value_takes_its_type() {
    let mut doc = parse("metadata:\n  namespace: ${NS:-shop}\nspec:\n  replicas: ${R:-3}\n  image: app:${TAG:-1.0}\n");
    assert_eq!(fill(&mut doc, None, &|_| false), Outcome::Kept);
    assert_eq!(doc.root.at(&["metadata", "namespace"]).unwrap().as_str(), Some("shop"));
    assert_eq!(doc.root.at(&["spec", "replicas"]).unwrap().value, Value::Int(3));
    assert_eq!(doc.root.at(&["spec", "image"]).unwrap().as_str(), Some("app:1.0"));
}

#[test]
fn a_variable_without_a_value_leaves_the_document_out() {
    let mut doc = parse("metadata:\n  namespace: ${NAMESPACE}\n");
    match fill(&mut doc, None, &|_| false) {
        Outcome::Unfilled { name, span } => {
            assert_eq!(name, "NAMESPACE");
            assert_eq!(span.start.line, 2);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_deployer_gives_values_located_where_it_writes_them() {
    let flux = parse(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n  postBuild:\n    substitute:\n      REPLICAS: \"2\"\n    substituteFrom:\n      - kind: ConfigMap\n        name: vars\n---\n",
    );
    let vars = parse(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vars\n  namespace: flux-system\ndata:\n  NS: shop\n",
    );
    let docs = [flux, vars];
    let d = deployers(docs.iter(), &|_| vec![PathBuf::from("/repo")]);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].root, PathBuf::from("/repo/apps"));
    assert!(deployer_of(&d, Path::new("/repo/apps/x.yaml")).is_some());
    assert!(deployer_of(&d, Path::new("/repo/other/x.yaml")).is_none());
    let mut doc = parse("metadata:\n  namespace: ${NS}\nspec:\n  replicas: ${REPLICAS}\n  x: ${UNSET}\n");
    assert_eq!(fill(&mut doc, Some(&d[0]), &|_| false), Outcome::Kept);
    let replicas = doc.root.at(&["spec", "replicas"]).unwrap();
    assert_eq!(replicas.value, Value::Int(2));
    assert_eq!(replicas.span.start.line, 10, "located at the substitute entry");
    assert_eq!(doc.root.at(&["metadata", "namespace"]).unwrap().as_str(), Some("shop"));
    assert_eq!(doc.root.at(&["spec", "x"]).unwrap().value, Value::Null);
}

#[test]
fn a_placeholder_in_a_field_nothing_reads_stays() {
    let mut doc = parse(
        "kind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - image: ${IMAGE}\n---\n",
    );
    assert_eq!(fill(&mut doc, None, &|_| false), Outcome::Kept);
    let mut doc = parse("kind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: ${A}\n");
    assert_eq!(fill(&mut doc, None, &|_| false), Outcome::Kept);
    let mut doc = parse("kind: ConfigMap\nmetadata:\n  name: x\n  namespace: ${NS}\n");
    assert!(matches!(fill(&mut doc, None, &|_| false), Outcome::Unfilled { .. }));
}

#[test]
fn an_external_artifact_path_is_the_repository_path_it_is_copied_from() {
    // fluxcd/flux2-kustomize-helm-example's ArtifactGenerator.
    let generator = parse(
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: g}\nspec:\n  sources: [{alias: monorepo, kind: GitRepository, name: flux-system}]\n  artifacts:\n    - name: infrastructure\n      copy: [{from: '@monorepo/infrastructure/**', to: '@artifact/'}]\n    - name: apps\n      copy:\n        - {from: '@monorepo/apps/base/**', to: '@artifact/base/'}\n        - {from: '@monorepo/apps/production/**', to: '@artifact/production/'}\n",
    );
    let docs = [generator];
    let path = |artifact: &str, path: &str| artifact_path(docs.iter(), artifact, path);
    assert_eq!(
        path("infrastructure", "./controllers").as_deref(),
        Some("infrastructure/controllers")
    );
    assert_eq!(path("apps", "./production").as_deref(), Some("apps/production"));
    assert_eq!(path("apps", "./productions"), None);
    assert_eq!(path("other", "./production"), None);
}

#[test]
fn secrets_are_decoded() {
    assert_eq!(base64_decode("c2hvcA==").as_deref(), Some("shop"));
}

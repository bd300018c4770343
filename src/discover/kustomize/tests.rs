use super::*;

#[test]
fn relative_paths() {
    assert_eq!(
        relative_path(Path::new("/tmp/w"), Path::new("/work/repo/a")),
        PathBuf::from("../../work/repo/a")
    );
    assert_eq!(
        normalize(Path::new("/tmp/w/../../work/repo/a.yaml")),
        PathBuf::from("/work/repo/a.yaml")
    );
}

#[test]
fn fields_are_read_as_kustomize_reads_them() {
    let text = "Resources: [a.yaml]\nRESOURCES: [https://example.com/x.yaml]\nreſources: [b.yaml]\nKIND: Component\npatches:\n- {PATH: p.yaml, Target: {KIND: Deployment}}\nconfigMapGenerator:\n- {name: c, Files: [file:///etc/passwd]}\n";
    let mut root = yaml::parse(text, FileId(0), &yaml::Limits::default())
        .documents
        .remove(0)
        .root;
    canonical_fields(&mut root);
    // The last spelling wins, as in Go.
    assert_eq!(
        root.at(&["resources"]).and_then(Node::as_seq).map(<[Node]>::len),
        Some(1)
    );
    assert_eq!(seq(&root, "resources")[0].as_str(), Some("b.yaml"));
    assert_eq!(root.get("kind").and_then(Node::as_str), Some("Component"));
    let patch = &seq(&root, "patches")[0];
    assert_eq!(patch.get("path").and_then(Node::as_str), Some("p.yaml"));
    assert_eq!(patch.at(&["target", "kind"]).and_then(Node::as_str), Some("Deployment"));
    let generator = &seq(&root, "configMapGenerator")[0];
    assert_eq!(seq(generator, "files")[0].as_str(), Some("file:///etc/passwd"));
}

#[test]
fn argo_cd_image_overrides_become_kustomize_images() {
    let entry = |t: &str| image_override(t).to_string();
    assert_eq!(entry("web:2"), r#"{"name":"web","newTag":"2"}"#);
    assert_eq!(
        entry("web=registry.example.com:5000/team/web:2"),
        r#"{"name":"web","newName":"registry.example.com:5000/team/web","newTag":"2"}"#
    );
    assert_eq!(
        entry("registry.example.com:5000/web@sha256:ab"),
        r#"{"digest":"sha256:ab","name":"registry.example.com:5000/web"}"#
    );
}

#[test]
fn remote_detection() {
    assert!(looks_remote("https://github.com/org/repo//base?ref=v1"));
    assert!(looks_remote("github.com/org/repo/base?ref=main"));
    assert!(looks_remote("git@github.com:org/repo.git"));
    assert!(!looks_remote("../base"));
}

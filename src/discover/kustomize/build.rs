//! `kustomize build` (or `kubectl kustomize`) of a directory through a wrapper kustomization that
//! asks for origin annotations, and the origins read back from the rendered objects.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::yaml::Node;

use super::*;

/// The renderer found on this machine.
#[derive(Clone, Debug)]
pub enum Renderer {
    Kustomize(PathBuf),
    Kubectl(PathBuf),
}

impl Renderer {
    pub fn find() -> Option<Renderer> {
        which::which("kustomize")
            .map(Renderer::Kustomize)
            .or_else(|_| which::which("kubectl").map(Renderer::Kubectl))
            .ok()
    }
}

/// What a deployer adds to a kustomization's build: a Flux Kustomization's `components`,
/// `namePrefix`, `nameSuffix` and `images`, or an Argo CD kustomize source's options. Flux and
/// Argo CD write them into the kustomization they build; kivi-lint writes them into the
/// wrapper around it, so they apply after the kustomization's own transformers (the same
/// objects, unless both set a prefix or a suffix: then both apply).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Component directories, absolute and inside the repository.
    pub components: Vec<PathBuf>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    /// Labels added to objects, and to selectors unless `labels_without_selector`.
    pub common_labels: Vec<(String, String)>,
    pub labels_without_selector: bool,
    pub common_annotations: Vec<(String, String)>,
    /// Image overrides, as kustomize's `images` entries.
    pub images: Vec<serde_json::Value>,
}

impl BuildOptions {
    pub fn is_empty(&self) -> bool {
        *self == BuildOptions::default()
    }

    /// The wrapper's fields besides `resources`, as JSON (a YAML kustomization file reads it;
    /// every string from the repository is quoted by the serializer).
    fn fields(&self, wrapper: &Path) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value as J;
        let mut out = serde_json::Map::new();
        if !self.components.is_empty() {
            let paths = self
                .components
                .iter()
                .map(|c| J::from(relative_path(wrapper, c).to_string_lossy().to_string()));
            out.insert("components".into(), J::Array(paths.collect()));
        }
        if let Some(p) = &self.name_prefix {
            out.insert("namePrefix".into(), J::from(p.as_str()));
        }
        if let Some(s) = &self.name_suffix {
            out.insert("nameSuffix".into(), J::from(s.as_str()));
        }
        let pairs =
            |list: &[(String, String)]| J::Object(list.iter().map(|(k, v)| (k.clone(), J::from(v.as_str()))).collect());
        if !self.common_labels.is_empty() {
            out.insert(
                "labels".into(),
                serde_json::json!([{
                    "pairs": pairs(&self.common_labels),
                    "includeSelectors": !self.labels_without_selector,
                    "includeTemplates": true,
                }]),
            );
        }
        if !self.common_annotations.is_empty() {
            out.insert("commonAnnotations".into(), pairs(&self.common_annotations));
        }
        if !self.images.is_empty() {
            out.insert("images".into(), J::Array(self.images.clone()));
        }
        out
    }
}

/// An image override written as Argo CD writes it (`[old=]new[:tag][@digest]`), as a
/// kustomize `images` entry.
pub fn image_override(text: &str) -> serde_json::Value {
    let (old, new) = match text.split_once('=') {
        Some((old, new)) => (Some(old), new),
        None => (None, text),
    };
    let (rest, digest) = match new.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (new, None),
    };
    // A tag follows the last `:` after the last `/` (a registry port is not a tag).
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (image, tag) = match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], Some(&rest[slash + i + 1..])),
        None => (rest, None),
    };
    let mut entry = serde_json::Map::new();
    entry.insert("name".into(), old.unwrap_or(image).into());
    if old.is_some_and(|o| o != image) {
        entry.insert("newName".into(), image.into());
    }
    if let Some(tag) = tag {
        entry.insert("newTag".into(), tag.into());
    }
    if let Some(digest) = digest {
        entry.insert("digest".into(), digest.into());
    }
    serde_json::Value::Object(entry)
}

/// Build `dir` with origin annotations and what its deployer adds (`build`). Returns the
/// rendered YAML and the wrapper directory the annotations' paths are relative to (kept alive
/// by the returned guard).
pub fn render(dir: &Path, renderer: &Renderer, build: &BuildOptions) -> Result<(String, tempfile::TempDir), String> {
    let wrapper =
        crate::process::temporary_dir("kustomize").map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let target = std::fs::canonicalize(dir).map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    let relative = relative_path(wrapper.path(), &target);
    // Kustomize does not accept an absolute path here; a relative path does not need
    // `--load-restrictor LoadRestrictionsNone`, so the target's own restrictions still hold.
    let mut fields = serde_json::Map::new();
    fields.insert("apiVersion".into(), "kustomize.config.k8s.io/v1beta1".into());
    fields.insert("kind".into(), "Kustomization".into());
    fields.insert("resources".into(), serde_json::json!([relative.to_string_lossy()]));
    fields.extend(build.fields(wrapper.path()));
    fields.insert("buildMetadata".into(), serde_json::json!(["originAnnotations"]));
    let content = serde_json::Value::Object(fields).to_string();
    std::fs::write(wrapper.path().join("kustomization.yaml"), content)
        .map_err(|e| format!("cannot write the wrapper kustomization: {e}"))?;
    let mut command = match renderer {
        Renderer::Kustomize(bin) => {
            let mut c = Command::new(bin);
            c.arg("build");
            c
        }
        Renderer::Kubectl(bin) => {
            let mut c = Command::new(bin);
            c.arg("kustomize");
            c
        }
    };
    command.arg(wrapper.path());
    let finished = crate::process::run(crate::process::offline(command), RENDER_TIMEOUT)?;
    if !finished.success {
        return Err(clean_error(&finished.stderr, wrapper.path(), &target));
    }
    Ok((finished.stdout, wrapper))
}

/// Make kustomize's error readable: drop the wrapper's part of paths and the log prefix.
fn clean_error(stderr: &str, wrapper: &Path, target: &Path) -> String {
    if let Some(why) = crate::process::out_of_memory(stderr) {
        return format!("kustomize build failed: {why}");
    }
    let text = stderr.trim();
    let text = text.find("err=").map_or(text, |i| text[i + 4..].trim_matches('"'));
    let rel = relative_path(wrapper, target);
    let text = text.replace(&rel.to_string_lossy().to_string(), &target.display().to_string());
    let text = text.replace(&wrapper.display().to_string(), "<wrapper>");
    let text: String = text.lines().take(5).collect::<Vec<_>>().join(" ");
    format!("kustomize build failed: {}", truncate_long(&text))
}

fn truncate_long(s: &str) -> String {
    if s.chars().count() > 400 {
        format!("{}…", s.chars().take(400).collect::<String>())
    } else {
        s.to_string()
    }
}

/// `to` relative to `from` (both absolute).
pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    out
}

/// The source file named by a rendered object's `config.kubernetes.io/origin` annotation.
pub enum Origin {
    /// Read from this file.
    File(PathBuf),
    /// Made by a generator configured in this kustomization file.
    Generated(PathBuf),
}

/// Read and remove the origin annotation of a rendered object.
pub fn take_origin(root: &mut Node, wrapper: &Path) -> Option<Origin> {
    let annotations = match &mut root.value {
        yaml::Value::Map(entries) => entries
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some("metadata"))
            .map(|(_, v)| v)?,
        _ => return None,
    };
    let yaml::Value::Map(meta) = &mut annotations.value else {
        return None;
    };
    let index = meta.iter().position(|(k, _)| k.as_str() == Some("annotations"))?;
    let yaml::Value::Map(ann) = &mut meta[index].1.value else {
        return None;
    };
    let pos = ann
        .iter()
        .position(|(k, _)| k.as_str() == Some("config.kubernetes.io/origin"))?;
    let (_, value) = ann.remove(pos);
    if ann.is_empty() {
        meta.remove(index);
    }
    let text = value.as_str()?;
    let parsed = yaml::parse(text, FileId(0), &yaml::Limits::default());
    let origin = &parsed.documents.first()?.root;
    let resolve = |p: &str| normalize(&wrapper.join(p));
    if let Some(p) = origin.get("path").and_then(Node::as_str) {
        return Some(Origin::File(resolve(p)));
    }
    origin
        .get("configuredIn")
        .and_then(Node::as_str)
        .map(|p| Origin::Generated(resolve(p)))
}

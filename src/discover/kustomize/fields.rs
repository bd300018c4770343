//! The spelling of a kustomization's fields, as kustomize reads them (case-insensitively).

use super::*;

/// The fields of a kustomization, as kustomize spells them.
const KUSTOMIZATION_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "buildMetadata",
];

/// The fields of the entries kivi-lint reads inside those lists (patches, generators,
/// replicas, images) and of their `target` and `openapi`.
const ENTRY_FIELDS: &[&str] = &[
    "path",
    "patch",
    "target",
    "options",
    "kind",
    "name",
    "namespace",
    "group",
    "version",
    "labelSelector",
    "annotationSelector",
    "files",
    "envs",
    "env",
    "literals",
    "behavior",
    "type",
    "count",
    "newName",
    "newTag",
    "digest",
    "source",
    "targets",
];

/// Rename the fields kustomize would read under another spelling to its own. Kustomize
/// decodes its file with Go's `encoding/json`, which matches field names without regard to
/// case: `RESOURCES:` and `Resources:` are `resources`, and where several spellings appear
/// the last wins. Reading only the exact spelling once let a remote base past the check.
pub(super) fn canonical_fields(root: &mut Node) {
    rename_fields(root, KUSTOMIZATION_FIELDS);
    let yaml::Value::Map(entries) = &mut root.value else {
        return;
    };
    for (key, value) in entries.iter_mut() {
        let lists = [
            "patches",
            "patchesJson6902",
            "replacements",
            "configMapGenerator",
            "secretGenerator",
            "replicas",
            "images",
        ];
        match &mut value.value {
            yaml::Value::Seq(items) if key.as_str().is_some_and(|k| lists.contains(&k)) => {
                for item in items {
                    rename_fields(item, ENTRY_FIELDS);
                    if let yaml::Value::Map(fields) = &mut item.value {
                        for (k, v) in fields.iter_mut() {
                            if k.as_str() == Some("target") {
                                rename_fields(v, ENTRY_FIELDS);
                            }
                        }
                    }
                }
            }
            yaml::Value::Map(_) if key.as_str() == Some("openapi") => rename_fields(value, ENTRY_FIELDS),
            _ => {}
        }
    }
}

/// [`canonical_fields`] on one mapping: keys that fold to one of `fields` take its spelling;
/// of several that fold alike, only the last is kept.
fn rename_fields(node: &mut Node, fields: &[&str]) {
    let yaml::Value::Map(entries) = &mut node.value else {
        return;
    };
    for (key, _) in entries.iter_mut() {
        let Some(text) = key.as_str() else {
            continue;
        };
        if let Some(canonical) = fields.iter().find(|f| go_fold(f) == go_fold(text))
            && *canonical != text
        {
            key.value = yaml::Value::Str((*canonical).to_string());
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut keep = vec![true; entries.len()];
    for (i, (key, _)) in entries.iter().enumerate().rev() {
        if let Some(text) = key.as_str()
            && fields.contains(&text)
            && !seen.insert(text.to_string())
        {
            keep[i] = false;
        }
    }
    let mut flags = keep.into_iter();
    entries.retain(|_| flags.next().unwrap_or(true));
}

/// A field name as Go's case-insensitive match compares it: ASCII letters in upper case, and
/// the two non-ASCII letters that fold to ASCII ones (`ſ` to S, the Kelvin sign to K).
fn go_fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '\u{17F}' => 'S',
            '\u{212A}' => 'K',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

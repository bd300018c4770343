//! The README is a front page and `docs/` the reference: every relative link of either
//! resolves to a file and, with `#anchor`, to a heading of it (as GitHub names headings), every
//! page is in the site's navigation (`mkdocs.yml`; `scripts/docs` builds it strictly in CI),
//! the README stays under 300 lines, and no table appears twice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor of a heading: lower case, inline code marks dropped, punctuation but `-`
/// and `_` dropped, spaces as `-`; a repeated one gets `-1`, `-2`, ….
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for line in prose(text) {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else {
            continue;
        };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_default();
        out.push(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// The targets of the Markdown links of `text` (`[text](target)`), outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        // Inline code may hold `](`: leave it out.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !file.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if let Some(anchor) = anchor
                && !anchors(&std::fs::read_to_string(&file).unwrap())
                    .iter()
                    .any(|a| a == anchor)
            {
                broken.push(format!("{}: {target}: no such heading", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_is_in_the_sites_navigation() {
    let nav = std::fs::read_to_string(root().join("mkdocs.yml")).unwrap();
    for page in pages().iter().skip(1) {
        let name = page.file_name().unwrap().to_string_lossy();
        assert!(nav.contains(&format!(" {name}")), "mkdocs.yml's nav lacks {name}");
    }
}

#[test]
fn the_readme_is_a_front_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move the reference into docs/"
    );
    assert!(
        Path::new(&root().join("docs/images/demo-shop-report.png")).is_file(),
        "the README's picture (scripts/report-picture)"
    );
}

/// A table has one home: the same rows (header and separator aside) never appear in two
/// places, nor twice in one.
#[test]
fn no_table_appears_twice() {
    let mut homes: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut twice = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut table: Vec<String> = Vec::new();
        let mut flush = |table: &mut Vec<String>| {
            if table.len() > 2 {
                let rows = table[2..].to_vec();
                if let Some(home) = homes.insert(rows, page.display().to_string()) {
                    twice.push(format!("{} and {home}: {}", page.display(), table[0]));
                }
            }
            table.clear();
        };
        for line in prose(&text) {
            if line.starts_with('|') {
                table.push(line.trim().to_string());
            } else {
                flush(&mut table);
            }
        }
        flush(&mut table);
    }
    assert!(twice.is_empty(), "tables that appear twice:\n{}", twice.join("\n"));
}

#[test]
fn anchors_are_named_as_github_names_them() {
    assert_eq!(
        anchors(
            "# JSON output (`--format json`), schema version 2\n## Input errors\n## Input errors\n```\n# not\n```\n"
        ),
        [
            "json-output---format-json-schema-version-2",
            "input-errors",
            "input-errors-1"
        ]
    );
    assert_eq!(links("see [a](b.md#c) and `[x](y)` [d](e)"), ["b.md#c", "e"]);
}

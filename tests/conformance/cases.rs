//! Reading the peer test files: YAML (through kivi-lint's own reader) into JSON values, one
//! per case.

use std::path::Path;

use kivi_lint::source::FileId;
use kivi_lint::yaml::{self, Node, Value};
use serde_json::{Map, Value as Json};

pub struct Case {
    pub name: String,
    pub body: Json,
}

pub struct File {
    pub name: String,
    pub cases: Vec<Case>,
}

fn json(node: &Node) -> Json {
    match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Str(s) => Json::String(s.clone()),
        Value::Seq(items) => Json::Array(items.iter().map(json).collect()),
        Value::Map(entries) => {
            let mut m = Map::new();
            for (k, v) in entries {
                let key = match &k.value {
                    Value::Str(s) => s.clone(),
                    _ => k.scalar_text().unwrap_or_default(),
                };
                m.insert(key, json(v));
            }
            Json::Object(m)
        }
    }
}

pub fn load(path: &Path) -> Result<File, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stream = yaml::parse(&text, FileId(0), &yaml::Limits::default());
    if let Some(e) = stream.errors.first() {
        return Err(format!("{}: {}", path.display(), e.message));
    }
    let root = stream
        .documents
        .first()
        .map(|d| json(&d.root))
        .ok_or_else(|| format!("{}: empty", path.display()))?;
    let cases = root["cases"]
        .as_array()
        .ok_or_else(|| format!("{}: no `cases`", path.display()))?
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap_or("?").to_string(),
            body: c.clone(),
        })
        .collect();
    Ok(File {
        name: path.file_name().unwrap().to_string_lossy().into_owned(),
        cases,
    })
}

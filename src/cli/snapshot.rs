//! `kivi-lint snapshot`: the running cluster saved for `--cluster-state`, with `kubectl`. The
//! file goes into a repository or a CI artifact, so what may hold a secret is dropped: Secrets
//! and ConfigMaps, environment values, the last-applied configuration (a whole manifest,
//! values included) and managed fields.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use crate::report::exit;

/// The kinds `--cluster-state` reads, as `kubectl get` names them.
pub const KINDS: &str = "nodes,pods,deployments,replicasets,statefulsets,daemonsets,hpa,pdb";

/// How long `kubectl get` may take.
const KUBECTL_TIME: Duration = Duration::from_secs(120);

pub(super) struct Request {
    pub output: Option<PathBuf>,
    pub context: Option<String>,
}

pub(super) fn snapshot_command(request: &Request) -> Result<u8> {
    let mut kubectl = std::process::Command::new("kubectl");
    kubectl.args(["get", KINDS, "--all-namespaces", "--output", "json"]);
    if let Some(context) = &request.context {
        // One argument: a context name is never read as a flag.
        kubectl.arg(format!("--context={context}"));
    }
    let finished = match crate::process::run(kubectl, KUBECTL_TIME) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    if !finished.success {
        let why = crate::diagnostics::terminal_safe(finished.stderr.trim());
        eprintln!("error: `kubectl get {KINDS}` failed: {why}");
        return Ok(exit::INPUT_ERROR);
    }
    let mut list: Value = match serde_json::from_str(&finished.stdout) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: `kubectl get` printed no JSON list: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let dropped = redact(&mut list);
    let text = format!(
        "# kubectl get {KINDS} --all-namespaces -o json, by kivi-lint snapshot\n# (Secrets, ConfigMaps, environment values and last-applied configurations dropped)\n{}\n",
        serde_json::to_string_pretty(&list)?
    );
    match &request.output {
        Some(path) => {
            std::fs::write(path, text)?;
            eprintln!(
                "wrote the cluster state to {} ({} objects; {dropped} values that may be secret dropped)",
                crate::diagnostics::terminal_safe(&path.display().to_string()),
                list["items"].as_array().map_or(0, Vec::len)
            );
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(exit::OK)
}

/// Drop from a `kubectl get -o json` List what may hold a secret; the number of values dropped.
pub(super) fn redact(list: &mut Value) -> usize {
    let mut dropped = 0;
    if let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) {
        let before = items.len();
        items.retain(|item| !matches!(item["kind"].as_str(), Some("Secret" | "ConfigMap")));
        dropped += before - items.len();
        for item in items.iter_mut() {
            dropped += redact_object(item);
        }
    }
    dropped
}

fn redact_object(v: &mut Value) -> usize {
    let mut dropped = 0;
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
                dropped += usize::from(metadata.remove("managedFields").is_some());
                if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
                    dropped += usize::from(
                        annotations
                            .remove("kubectl.kubernetes.io/last-applied-configuration")
                            .is_some(),
                    );
                }
            }
            // A container's `env[].value` (a literal, often a password); `valueFrom` only
            // names where a value comes from.
            if let Some(Value::Array(env)) = map.get_mut("env") {
                for var in env.iter_mut().filter_map(Value::as_object_mut) {
                    dropped += usize::from(var.remove("value").is_some());
                }
            }
            for (_, child) in map.iter_mut() {
                dropped += redact_object(child);
            }
        }
        Value::Array(items) => {
            for child in items {
                dropped += redact_object(child);
            }
        }
        _ => {}
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_may_hold_a_secret_is_dropped() {
        let mut list = serde_json::json!({"kind": "List", "items": [
            {"kind": "Secret", "metadata": {"name": "db"}, "data": {"password": "aHVudGVyMg=="}},
            {"kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"DB_URL": "postgres://u:p@db"}},
            {"kind": "Pod", "metadata": {"name": "api-1", "managedFields": [{}],
              "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"password\":\"x\"}", "team": "shop"}},
             "spec": {"nodeName": "worker-1", "containers": [{"name": "api",
               "env": [{"name": "PASSWORD", "value": "hunter2"}, {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "t", "key": "k"}}}]}]}},
        ]});
        assert_eq!(redact(&mut list), 5);
        let text = list.to_string();
        for secret in ["hunter2", "aHVudGVyMg", "postgres://", "last-applied", "managedFields"] {
            assert!(!text.contains(secret), "{secret} is still in {text}");
        }
        assert!(text.contains("\"nodeName\":\"worker-1\""), "{text}");
        assert!(
            text.contains("secretKeyRef") && text.contains("\"team\":\"shop\""),
            "{text}"
        );
    }
}

//! `kivi-lint merge`: the JSON reports of the shards of one run (`--shard i/n`) joined into the
//! report one unsharded run would have written.

use super::document::{NotVerified, Report, SCHEMA_VERSION, Shard};

/// Why shard reports cannot be joined; `file` is an index into the inputs.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// One report does not fit with the others.
    #[error("{message}")]
    Invalid { file: usize, message: String },
    #[error("{0}")]
    Incomplete(String),
    #[error("no shard verified unit {unit} ({name}); is a shard report missing?")]
    Unverified { unit: String, name: String },
}

/// Parse one report; on failure the message and the 1-based line and column of the problem.
pub fn parse(text: &str) -> Result<Report, (String, usize, usize)> {
    let version: serde_json::Value =
        serde_json::from_str(text).map_err(|e| (format!("not JSON: {e}"), e.line().max(1), e.column().max(1)))?;
    match version.get("schemaVersion").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err((
                format!(
                    "schemaVersion {v} is not the {SCHEMA_VERSION} this kivi-lint reads; merge with the kivi-lint that wrote it"
                ),
                1,
                1,
            ));
        }
        None => return Err(("not a kivi-lint JSON report (no `schemaVersion`)".into(), 1, 1)),
    }
    serde_json::from_str(text).map_err(|e| {
        (
            format!("not a kivi-lint JSON report: {e}"),
            e.line().max(1),
            e.column().max(1),
        )
    })
}

/// Join shard reports. Every report must come from the same revision and the same run
/// options: the same units in the same order, one shard of each index.
pub fn merge(reports: Vec<Report>) -> Result<Report, MergeError> {
    let invalid = |file: usize, message: String| MergeError::Invalid { file, message };
    let Some(first) = reports.first() else {
        return Err(MergeError::Incomplete("no reports to merge".into()));
    };
    let count = first.shard.map_or(1, |s| s.count);
    let mut seen = vec![false; count];
    for (i, r) in reports.iter().enumerate() {
        let shard = r.shard.unwrap_or(Shard { index: 1, count: 1 });
        if shard.count != count {
            return Err(invalid(
                i,
                format!(
                    "shard {}/{} does not belong with shards of {count}",
                    shard.index, shard.count
                ),
            ));
        }
        if shard.index == 0 || shard.index > count || std::mem::replace(&mut seen[shard.index - 1], true) {
            return Err(invalid(
                i,
                format!("shard {}/{count} given twice or out of range", shard.index),
            ));
        }
        if r.tool != first.tool {
            return Err(invalid(
                i,
                format!(
                    "written by {} {}, the first report by {} {}",
                    r.tool.name, r.tool.version, first.tool.name, first.tool.version
                ),
            ));
        }
        let same_units =
            r.units.len() == first.units.len() && r.units.iter().zip(&first.units).all(|(a, b)| a.id == b.id);
        if !same_units || r.config != first.config || r.cluster != first.cluster {
            return Err(invalid(
                i,
                "a different set of units or a different config than the first report: shards must scan the same revision with the same options".into(),
            ));
        }
        if r.changed_since.as_ref().map(|c| &c.revision) != first.changed_since.as_ref().map(|c| &c.revision) {
            return Err(invalid(i, "a different --changed-since than the first report".into()));
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(MergeError::Incomplete(format!(
            "shard {}/{count} is missing",
            missing + 1
        )));
    }
    let mut merged = first.clone();
    merged.shard = None;
    if let Some(c) = &mut merged.changed_since {
        c.existing_findings_hidden = reports
            .iter()
            .filter_map(|r| r.changed_since.as_ref())
            .map(|c| c.existing_findings_hidden)
            .sum();
    }
    for (k, unit) in merged.units.iter_mut().enumerate() {
        let copies = || reports.iter().map(|r| &r.units[k]);
        // Shards partition the units: each unit is verified by one shard, or unchanged in all
        // (PR mode decides that before sharding, on the same base revision).
        let verified: Vec<usize> = copies()
            .enumerate()
            .filter(|(_, u)| u.verification.is_some())
            .map(|(i, _)| i)
            .collect();
        if let Some(&second) = verified.get(1) {
            return Err(invalid(
                second,
                format!(
                    "unit {} ({}) is verified by two shards: shards must partition the units",
                    unit.id, unit.name
                ),
            ));
        }
        let unchanged: Vec<usize> = copies()
            .enumerate()
            .filter(|(_, u)| u.not_verified == Some(NotVerified::Unchanged))
            .map(|(i, _)| i)
            .collect();
        if let Some(&marked) = unchanged.first()
            && (first.changed_since.is_none() || unchanged.len() != reports.len())
        {
            return Err(invalid(
                marked,
                format!(
                    "unit {} ({}) is marked unchanged here but not in every shard, or without --changed-since",
                    unit.id, unit.name
                ),
            ));
        }
        if let Some(done) = copies().find(|u| u.verification.is_some()) {
            unit.verification = done.verification.clone();
            unit.not_verified = None;
        } else if !unchanged.is_empty() {
            unit.not_verified = Some(NotVerified::Unchanged);
        } else {
            return Err(MergeError::Unverified {
                unit: unit.id.clone(),
                name: unit.name.clone(),
            });
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_schema_versions_and_non_reports_are_refused_with_a_location() {
        let (message, line, column) = parse("{\"schemaVersion\": 1}").unwrap_err();
        assert!(message.contains("schemaVersion 1"), "{message}");
        assert_eq!((line, column), (1, 1));
        let (message, _, _) = parse("[]").unwrap_err();
        assert!(message.contains("no `schemaVersion`"), "{message}");
        let (message, line, _) = parse("{\n\"schemaVersion\": 2,\n\"tool\": 3}").unwrap_err();
        assert!(message.starts_with("not a kivi-lint JSON report"), "{message}");
        assert_eq!(line, 3);
        assert!(matches!(merge(Vec::new()), Err(MergeError::Incomplete(_))));
    }
}

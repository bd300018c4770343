//! The `checks` and `suppressions` sections: which checks run, at what level, with which
//! params, and the findings a team has accepted.

use super::*;

impl ConfigReader<'_, '_> {
    pub(super) fn check_name(&mut self, node: &Node) -> Option<CheckId> {
        let text = node.scalar_text().unwrap_or_default();
        match checks::find(&text) {
            Some(c) => Some(c.id),
            None => {
                self.r.diags.push(
                    Diagnostic::error(node.span, format!("unknown check `{}`", truncate(&text)))
                        .with_help(format!("known checks: {}", checks::known_names())),
                );
                None
            }
        }
    }

    pub(super) fn checks(&mut self, root: &Node) -> ChecksConfig {
        let mut out = ChecksConfig::default();
        let Some(node) = self.r.map(root, "checks") else {
            return out;
        };
        check_fields(self.r, node, &["enable", "disable", "severity", "params"], "checks");
        for item in self.r.seq(node, "enable") {
            out.enable.extend(self.check_name(item));
        }
        for item in self.r.seq(node, "disable") {
            out.disable.extend(self.check_name(item));
        }
        if let Some(sev) = self.r.map(node, "severity") {
            for (k, v) in sev.as_map().unwrap_or_default() {
                let Some(id) = self.check_name(k) else { continue };
                match v.as_str().and_then(Level::parse) {
                    Some(level) => {
                        out.severity.insert(id, level);
                    }
                    None => self.r.error(v.span, "severity must be `error`, `warning` or `note`"),
                }
            }
        }
        if let Some(params) = self.r.map(node, "params") {
            for (k, v) in params.as_map().unwrap_or_default() {
                let Some(id) = self.check_name(k) else { continue };
                let check = id.check();
                let names: Vec<&str> = check.params.iter().map(|p| p.name).collect();
                if names.is_empty() {
                    self.r.error(k.span, format!("check `{id}` has no params"));
                    continue;
                }
                check_fields(self.r, v, &names, &format!("checks.params.{id}"));
                let values = self.int_params(v, check.params);
                out.params.insert(id, values);
            }
        }
        out
    }

    /// The integer params of a check or an event that `node` sets, each at least its minimum.
    pub(super) fn int_params(&mut self, node: &Node, params: &'static [Param]) -> BTreeMap<&'static str, i64> {
        let mut values = BTreeMap::new();
        for p in params {
            if let Some(value) = self.r.int(node, p.name) {
                if value.value < p.minimum {
                    let bound = match p.minimum {
                        0 => "must not be negative".to_string(),
                        m => format!("must be at least {m}"),
                    };
                    self.r.error(value.span, format!("`{}` {bound}", p.name));
                } else {
                    values.insert(p.name, value.value);
                }
            }
        }
        values
    }

    pub(super) fn suppressions(&mut self, root: &Node) -> Vec<Suppression> {
        let mut out = Vec::new();
        for item in self.r.maps(root, "suppressions") {
            check_fields(
                self.r,
                item,
                &["check", "object", "reason", "expires"],
                "suppressions[]",
            );
            let check = self.r.field(item, "check").and_then(|c| self.check_name(c));
            let object = self.object_id(item, "object");
            let reason = self.r.text(item, "reason").filter(|r| !r.value.trim().is_empty());
            if reason.is_none() {
                self.r.error(item.span, "a suppression needs a `reason`");
            }
            let expires = match self.r.text(item, "expires") {
                None => None,
                Some(e) => match Date::parse(&e.value) {
                    Some(d) => Some(d),
                    None => {
                        self.r.error(e.span, "`expires` must be a date `YYYY-MM-DD`");
                        continue;
                    }
                },
            };
            if let (Some(check), Some(object), Some(reason)) = (check, object, reason) {
                out.push(Suppression {
                    check,
                    object,
                    reason: reason.value,
                    expires,
                    span: item.span,
                });
            } else if self.r.field(item, "check").is_none() || self.r.field(item, "object").is_none() {
                self.r.error(item.span, "a suppression needs `check` and `object`");
            }
        }
        out
    }
}

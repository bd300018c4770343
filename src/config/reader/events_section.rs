//! The `events` and `faults` sections: the environment events the model explores, read by
//! rules of their own or from the event registry's params.

use super::*;

impl ConfigReader<'_, '_> {
    /// `events`: a list of events, or `{combine: bool, list: [...]}` to explore them
    /// interleaved in one model rather than each kind alone.
    pub(super) fn events_section(&mut self, root: &Node) -> (Vec<Spanned<EnvironmentEvent>>, bool) {
        match self.r.field(root, "events") {
            Some(node) if node.as_map().is_some() => {
                check_fields(self.r, node, &["combine", "list"], "events");
                let combine = self.r.bool(node, "combine").is_some_and(|b| b.value);
                (self.events(node, "list"), combine)
            }
            _ => (self.events(root, "events"), false),
        }
    }

    pub(super) fn events(&mut self, root: &Node, key: &str) -> Vec<Spanned<EnvironmentEvent>> {
        let mut out = Vec::new();
        for item in self.r.maps(root, key) {
            // The registry's configurable events, and the cluster autoscaler (a controller
            // the config turns on as an event).
            let types: Vec<&str> = crate::events::EVENTS
                .iter()
                .filter(|e| !matches!(e.configured, Configured::ByModel))
                .map(|e| e.name)
                .chain(["cluster-autoscaler"])
                .collect();
            let Some(ty) = self.r.one_of(item, "type", &types) else {
                if self.r.field(item, "type").is_none() {
                    self.r.error(
                        item.span,
                        format!("an event needs a `type`: one of {}", types.join(", ")),
                    );
                }
                continue;
            };
            let event = match ty.value.as_str() {
                "load-change" => {
                    check_fields(self.r, item, &["type", "workloads", "max"], "events[] (load-change)");
                    let workloads = if self.r.field(item, "workloads").is_some() {
                        self.r.string_list(item, "workloads")
                    } else {
                        vec!["*".into()]
                    };
                    EnvironmentEvent::LoadChange {
                        workloads,
                        max_percent: self.percent(item, "max", 200, 1000),
                    }
                }
                "node-failure" => {
                    check_fields(self.r, item, &["type", "count", "recover"], "events[] (node-failure)");
                    EnvironmentEvent::NodeFailure {
                        count: self.bounded(item, "count", 1, 16).unwrap_or(1),
                        recover: self.r.bool(item, "recover").is_none_or(|b| b.value),
                    }
                }
                "node-maintenance" => {
                    check_fields(self.r, item, &["type"], "events[] (node-maintenance)");
                    EnvironmentEvent::NodeMaintenance
                }
                "node-drain" => {
                    check_fields(self.r, item, &["type"], "events[] (node-drain)");
                    EnvironmentEvent::NodeDrain
                }
                "node-overload" => {
                    check_fields(self.r, item, &["type", "threshold"], "events[] (node-overload)");
                    EnvironmentEvent::NodeOverload {
                        threshold_percent: self.percent(item, "threshold", 100, 100),
                    }
                }
                "apply" => {
                    check_fields(self.r, item, &["type", "from"], "events[] (apply)");
                    match self.r.string(item, "from").filter(|f| !f.value.is_empty()) {
                        // A directory must be in the repository; anything else is a git ref
                        // of it.
                        Some(from)
                            if self.base_dir.join(&from.value).exists()
                                && !self.confined(from.span, "from", Path::new(&from.value)) =>
                        {
                            continue;
                        }
                        Some(from) => EnvironmentEvent::Apply { from: from.value },
                        None => {
                            self.r
                                .error(item.span, "an `apply` event needs `from`: a git ref or a directory");
                            continue;
                        }
                    }
                }
                "cluster-autoscaler" => {
                    check_fields(
                        self.r,
                        item,
                        &["type", "pools", "scaleDownUtilization"],
                        "events[] (cluster-autoscaler)",
                    );
                    let pools = if self.r.field(item, "pools").is_some() {
                        self.r.string_list(item, "pools")
                    } else {
                        vec!["*".into()]
                    };
                    EnvironmentEvent::ClusterAutoscaler {
                        pools,
                        scale_down_utilization: self.percent(item, "scaleDownUtilization", 50, 100),
                    }
                }
                "gitops-sync" => {
                    check_fields(self.r, item, &["type"], "events[] (gitops-sync)");
                    EnvironmentEvent::GitopsSync
                }
                other => match crate::events::find(other) {
                    Some(EventKind {
                        name,
                        configured: Configured::WithParams(params),
                        ..
                    }) => {
                        let fields: Vec<&str> = std::iter::once("type").chain(params.iter().map(|p| p.name)).collect();
                        check_fields(self.r, item, &fields, &format!("events[] ({name})"));
                        let mut values = self.int_params(item, params);
                        for p in params.iter() {
                            if let Some(default) = p.default {
                                values.entry(p.name).or_insert(default);
                            }
                        }
                        EnvironmentEvent::Registered { name, params: values }
                    }
                    // A `ByReader` event without a rule above: a bug of this reader, said as one.
                    _ => {
                        self.r.error(
                            ty.span,
                            format!(
                                "this kivi-lint cannot read `{other}` events (a bug of kivi-lint: please report it)"
                            ),
                        );
                        continue;
                    }
                },
            };
            out.push(Spanned::new(event, item.span));
        }
        out
    }

    /// `faults`: `stale-reads`, or `{type: stale-reads, lag: N}`; `controller-lag`.
    pub(super) fn faults(&mut self, root: &Node) -> Faults {
        let mut faults = Faults::default();
        for item in self.r.seq(root, "faults") {
            let (name, lag) = match &item.value {
                yaml::Value::Map(_) => {
                    check_fields(self.r, item, &["type", "lag"], "faults[]");
                    let name = self.r.text(item, "type").map(|t| t.value).unwrap_or_default();
                    (name, self.bounded(item, "lag", 1, 4).unwrap_or(1))
                }
                _ => (item.scalar_text().unwrap_or_default(), 1),
            };
            match name.as_str() {
                "stale-reads" => faults.stale_reads = Some(Spanned::new(lag, item.span)),
                "controller-lag" => faults.controller_lag = Some(item.span),
                _ => self.r.error(
                    item.span,
                    format!(
                        "unknown fault `{}`: the ones kivi-lint models are `stale-reads` and `controller-lag`",
                        truncate(&name)
                    ),
                ),
            }
        }
        faults
    }
}

//! Reading `.kivi-lint.yaml` into a `Config`: each field checked and located, unknown ones
//! named with a suggestion, paths kept inside the repository unless allowed.

use super::*;
use crate::checks::Param;
use crate::events::{Configured, EventKind};

mod checks_section;
mod events_section;

pub(super) struct ConfigReader<'a, 'd> {
    pub(super) r: &'a mut Reader<'d>,
    pub(super) base_dir: &'a Path,
    /// The directory the config's paths must stay in, if confined.
    pub(super) confine: Option<&'a Path>,
    pub(super) sources: &'a mut SourceMap,
}

/// The git work tree holding `dir` (the nearest ancestor with `.git`), else `dir`; canonical.
pub(crate) fn repository_root(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    })
    .unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&dir)
        .to_path_buf()
}

/// Whether `path` (relative to `base_dir`) stays inside `root` once links and `..` are
/// followed. A path that does not exist is judged by its existing ancestor.
pub(crate) fn inside(root: &Path, base_dir: &Path, path: &Path) -> bool {
    let full = base_dir.join(path);
    let mut probe = full.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(if probe.as_os_str().is_empty() {
            Path::new(".")
        } else {
            probe
        }) {
            let mut resolved = canonical;
            for part in rest.iter().rev() {
                resolved.push(part);
            }
            // `..` left in the part that does not exist yet could still climb out.
            return resolved.starts_with(root) && !resolved.components().any(|c| c == std::path::Component::ParentDir);
        }
        match (probe.parent(), probe.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                probe = parent;
            }
            _ => return false,
        }
    }
}

impl ConfigReader<'_, '_> {
    /// An error at `span` when `path` leaves the repository; `true` when it may be read.
    pub(super) fn confined(&mut self, span: Span, key: &str, path: &Path) -> bool {
        let Some(root) = self.confine else {
            return true;
        };
        if inside(root, self.base_dir, path) {
            return true;
        }
        self.r.error(
            span,
            format!(
                "`{key}` names a path outside the repository ({}); it is not read (pass --allow-outside-repository to allow it)",
                crate::diagnostics::printable(&root.display().to_string())
            ),
        );
        false
    }
}

/// Report fields not in `allowed` as located errors, with a suggestion when one is close.
pub(super) fn check_fields(r: &mut Reader, node: &Node, allowed: &[&str], context: &str) {
    let Some(entries) = node.as_map() else {
        r.error(
            node.span,
            format!("`{context}` must be a mapping, found {}", node.type_name()),
        );
        return;
    };
    for (k, _) in entries {
        let key = k.scalar_text().unwrap_or_default();
        if allowed.contains(&key.as_str()) {
            continue;
        }
        let mut d = Diagnostic::error(k.span, format!("unknown field `{}` in `{context}`", truncate(&key)));
        d = match allowed.iter().min_by_key(|a| edit_distance(a, &key)) {
            Some(best) if edit_distance(best, &key) <= 2 => d.with_help(format!("did you mean `{best}`?")),
            _ => d.with_help(format!("expected one of: {}", allowed.join(", "))),
        };
        r.diags.push(d);
    }
}

pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl ConfigReader<'_, '_> {
    pub(super) fn read(&mut self, root: &Node) -> Config {
        check_fields(
            self.r,
            root,
            &[
                "apiVersion",
                "kind",
                "kubernetesVersion",
                "include",
                "exclude",
                "helm",
                "render",
                "cluster",
                "scheduler",
                "descheduler",
                "workloads",
                "events",
                "checks",
                "scaling",
                "suppressions",
                "faults",
                "featureGates",
            ],
            "config",
        );
        if let Some(v) = self.r.string(root, "apiVersion")
            && v.value != "kivi-lint/v1alpha1"
        {
            self.r.error(
                v.span,
                format!(
                    "unsupported config `apiVersion: {}` (expected kivi-lint/v1alpha1)",
                    truncate(&v.value)
                ),
            );
        }
        if let Some(k) = self.r.string(root, "kind")
            && k.value != "Config"
        {
            self.r.error(k.span, "config `kind` must be `Config`");
        }
        let kubernetes_version = match self.r.text(root, "kubernetesVersion") {
            Some(v) if is_minor_version(&v.value) => v.value,
            Some(v) => {
                self.r.error(
                    v.span,
                    format!(
                        "`kubernetesVersion` must look like \"1.30\", found `{}`",
                        truncate(&v.value)
                    ),
                );
                "1.30".into()
            }
            None => "1.30".into(),
        };
        let include = if self.r.field(root, "include").is_some() {
            self.globs(root, "include")
        } else {
            vec!["**".into()]
        };
        let exclude = self.globs(root, "exclude");
        let helm = self.helm(root);
        let render = self.render(root);
        let mut scaling = self.scaling(root);
        let (cluster, initial_pods) = self.cluster(root, &scaling);
        // The smallest cluster the pools allow must fit under `maxNodes`: unset, it grows to
        // that size (up to its limit, 64); set too small, that is an error at it.
        let smallest: u32 = cluster.pools.iter().map(|p| p.min).sum();
        let max_nodes_field = root.get("scaling").and_then(|n| n.get("maxNodes")).map(|n| n.span);
        match max_nodes_field {
            None => scaling.max_nodes = scaling.max_nodes.max(smallest.min(64)),
            Some(span) if smallest > scaling.max_nodes => {
                self.r.diags.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`maxNodes` is {}, but the node pools' `min` add up to {smallest} nodes: no topology fits",
                            scaling.max_nodes
                        ),
                    )
                    .with_help("raise `scaling.maxNodes`, or lower the `min` (or `count`) of `cluster.nodePools`"),
                );
            }
            Some(_) => {}
        }
        let (events, combine_events) = self.events_section(root);
        for event in &events {
            if let EnvironmentEvent::ClusterAutoscaler { pools, .. } = &event.value {
                for name in pools {
                    if name != "*" && !cluster.pools.iter().any(|p| &p.name == name) {
                        self.r.error(
                            event.span,
                            format!("cluster-autoscaler: no node pool is named `{}`", truncate(name)),
                        );
                    }
                }
            }
        }
        let faults = self.faults(root);
        Config {
            path: None,
            base_dir: self.base_dir.to_path_buf(),
            kubernetes_version,
            include,
            exclude,
            helm,
            render,
            cluster,
            initial_pods,
            scheduler: self.scheduler(root),
            descheduler: self.descheduler(root),
            workloads: self.workloads(root),
            events,
            combine_events,
            checks: self.checks(root),
            scaling,
            suppressions: self.suppressions(root),
            stale_reads: faults.stale_reads,
            controller_lag: faults.controller_lag,
            comparison_operators: self.feature_gates(root),
        }
    }

    /// `featureGates: {TaintTolerationComparisonOperators: bool}`, the one gate the model
    /// follows: whether Gt and Lt tolerations compare.
    fn feature_gates(&mut self, root: &Node) -> bool {
        let Some(gates) = self.r.map(root, "featureGates") else {
            return true;
        };
        check_fields(self.r, gates, &["TaintTolerationComparisonOperators"], "featureGates");
        self.r
            .bool(gates, "TaintTolerationComparisonOperators")
            .is_none_or(|b| b.value)
    }

    fn globs(&mut self, root: &Node, key: &str) -> Vec<String> {
        let mut out = Vec::new();
        for item in self.r.seq(root, key) {
            let Some(text) = item.as_str() else {
                self.r.error(item.span, format!("`{key}[]` must be a glob string"));
                continue;
            };
            match globset::Glob::new(text) {
                Ok(_) => out.push(text.to_string()),
                Err(e) => self
                    .r
                    .error(item.span, format!("invalid glob `{}`: {}", truncate(text), e.kind())),
            }
        }
        out
    }

    fn path(&mut self, node: &Node, key: &str) -> Option<Spanned<PathBuf>> {
        let value = self.r.string(node, key)?;
        if value.value.is_empty() {
            self.r.error(value.span, format!("`{key}` must not be empty"));
            return None;
        }
        if !self.confined(value.span, key, Path::new(&value.value)) {
            return None;
        }
        Some(value.map(|p| self.base_dir.join(p)))
    }

    fn helm(&mut self, root: &Node) -> HelmOptions {
        let mut helm = HelmOptions {
            values: Vec::new(),
            release_name: "release".into(),
            namespace: "default".into(),
            confine: self.confine.map(Path::to_path_buf),
        };
        if let Some(node) = self.r.map(root, "helm") {
            check_fields(self.r, node, &["values", "releaseName", "namespace"], "helm");
            for v in self.r.seq(node, "values") {
                match v.as_str() {
                    Some("") => self.r.error(v.span, "`helm.values[]` must not be empty"),
                    // Resolved per chart: beside the chart first, then beside this file; both
                    // inside the repository (the chart's side is judged per chart).
                    Some(p) => {
                        if self.confined(v.span, "helm.values[]", Path::new(p)) {
                            helm.values.push(PathBuf::from(p));
                        }
                    }
                    None => self.r.error(v.span, "`helm.values[]` must be a path"),
                }
            }
            // Helm's own rules (a release name is a DNS-1123 subdomain of at most 53
            // characters; a namespace a label): anything else, `--post-renderer=…` included,
            // is an error here and never reaches helm's command line.
            let release = |s: &str| crate::manifest::read::is_dns_subdomain(s) && s.len() <= 53;
            if let Some(n) = self.helm_name(node, "releaseName", release, "a Helm release name: lower-case letters, digits, `-` and `.`, starting and ending with a letter or digit, at most 53") {
                helm.release_name = n;
            }
            if let Some(n) = self.helm_name(node, "namespace", crate::manifest::read::is_dns_label, "a namespace: lower-case letters, digits and `-`, starting and ending with a letter or digit, at most 63") {
                helm.namespace = n;
            }
        }
        helm
    }

    /// `render`: whether renders may fetch remote charts, and from which hosts.
    fn render(&mut self, root: &Node) -> RenderOptions {
        let mut render = RenderOptions::default();
        let Some(node) = self.r.map(root, "render") else {
            return render;
        };
        check_fields(self.r, node, &["network", "allowHosts"], "render");
        if let Some(b) = self.r.bool(node, "network") {
            render.network = b.value;
        }
        for h in self.r.seq(node, "allowHosts") {
            match h.as_str() {
                Some(host)
                    if !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c)) =>
                {
                    render.allow_hosts.push(host.to_ascii_lowercase());
                }
                _ => self
                    .r
                    .error(h.span, "`render.allowHosts[]` must be a host name or an address"),
            }
        }
        render
    }

    /// `helm.<key>`, if it is what `valid` accepts; else an error at it saying it is not `what`.
    fn helm_name(&mut self, node: &Node, key: &str, valid: impl Fn(&str) -> bool, what: &str) -> Option<String> {
        let n = self.r.string(node, key)?;
        if valid(&n.value) {
            return Some(n.value);
        }
        self.r.error(
            n.span,
            format!(
                "`helm.{key}` `{}` is not {what}",
                crate::diagnostics::printable(&truncate(&n.value))
            ),
        );
        None
    }

    fn scaling(&mut self, root: &Node) -> Scaling {
        let mut scaling = Scaling {
            max_nodes: 6,
            pods_per_node: 6,
            max_topologies: 100,
            symmetry: true,
        };
        if let Some(node) = self.r.map(root, "scaling") {
            check_fields(
                self.r,
                node,
                &["maxNodes", "podsPerNode", "maxTopologies", "symmetry"],
                "scaling",
            );
            if let Some(b) = self.r.bool(node, "symmetry") {
                scaling.symmetry = b.value;
            }
            if let Some(v) = self.bounded(node, "maxTopologies", 1, 10_000) {
                scaling.max_topologies = v;
            }
            if let Some(v) = self.bounded(node, "maxNodes", 1, 64) {
                scaling.max_nodes = v;
            }
            if let Some(v) = self.bounded(node, "podsPerNode", 1, 64) {
                scaling.pods_per_node = v;
            }
        }
        scaling
    }

    fn bounded(&mut self, node: &Node, key: &str, min: i64, max: i64) -> Option<u32> {
        let v = self.r.int(node, key)?;
        if !(min..=max).contains(&v.value) {
            self.r.error(v.span, format!("`{key}` must be from {min} to {max}"));
            return None;
        }
        Some(v.value as u32)
    }

    fn cluster(&mut self, root: &Node, scaling: &Scaling) -> (Cluster, Vec<InitialPods>) {
        let Some(node) = self.r.map(root, "cluster") else {
            let mut scratch = SourceMap::default();
            let mut cluster = Config::default_for(self.base_dir, &mut scratch).cluster;
            cluster.assumed = true;
            return (cluster, Vec::new());
        };
        check_fields(self.r, node, &["nodePools", "fromNodes", "initialPods"], "cluster");
        if let Some(from) = self.r.string(node, "fromNodes")
            && !self.confined(from.span, "fromNodes", Path::new(&from.value))
        {
            let nothing = Cluster {
                pools: Vec::new(),
                assumed: false,
            };
            return (nothing, Vec::new());
        }
        let cluster = cluster::read(self.r, node, self.base_dir, scaling, self.sources);
        let mut initial = Vec::new();
        for item in self.r.maps(node, "initialPods") {
            check_fields(self.r, item, &["workload", "node", "count"], "cluster.initialPods[]");
            let workload = self.object_id(item, "workload");
            let node_name = self.r.text(item, "node");
            let count = self.r.int(item, "count");
            let (Some(workload), Some(node_name)) = (workload, node_name) else {
                self.r
                    .error(item.span, "an initial pod entry needs `workload` and `node`");
                continue;
            };
            if !cluster.has_node(&node_name.value) {
                self.r.error(
                    node_name.span,
                    format!(
                        "node `{}` is not in the cluster (nodes are named <pool>-1, <pool>-2, ...)",
                        truncate(&node_name.value)
                    ),
                );
                continue;
            }
            let count = match count {
                None => 1,
                Some(c) if (1..=1000).contains(&c.value) => c.value as u32,
                Some(c) => {
                    self.r.error(c.span, "`count` must be from 1 to 1000");
                    continue;
                }
            };
            initial.push(InitialPods {
                workload,
                node: node_name.value,
                count,
                span: item.span,
            });
        }
        (cluster, initial)
    }

    fn object_id(&mut self, node: &Node, key: &str) -> Option<ObjectId> {
        let v = self.r.text(node, key)?;
        let id = ObjectId::parse(&v.value);
        if id.is_none() {
            self.r.error(
                v.span,
                format!("`{key}` must be `Kind/namespace/name`, found `{}`", truncate(&v.value)),
            );
        }
        id
    }

    fn scheduler(&mut self, root: &Node) -> SchedulerOptions {
        let Some(node) = self.r.map(root, "scheduler") else {
            return SchedulerOptions::default();
        };
        check_fields(self.r, node, &["scoringStrategy", "config"], "scheduler");
        SchedulerOptions {
            scoring_strategy: self
                .r
                // RequestedToCapacityRatio needs its shape: from the KubeSchedulerConfiguration.
                .one_of(node, "scoringStrategy", &["LeastAllocated", "MostAllocated"])
                .map(|s| s.map(|s| ScoringStrategy::parse(&s).expect("checked by one_of"))),
            config: self.path(node, "config"),
        }
    }

    fn descheduler(&mut self, root: &Node) -> DeschedulerOptions {
        let mut options = DeschedulerOptions {
            policy: None,
            interval_seconds: 300,
        };
        if let Some(node) = self.r.map(root, "descheduler") {
            check_fields(self.r, node, &["policy", "intervalSeconds"], "descheduler");
            options.policy = self.path(node, "policy");
            if let Some(v) = self.bounded(node, "intervalSeconds", 1, 86_400) {
                options.interval_seconds = v;
            }
        }
        options
    }

    fn amounts(&mut self, node: &Node, context: &str, extra: &[&str]) -> (Option<i64>, Option<i64>) {
        let mut allowed = vec!["cpu", "memory"];
        allowed.extend_from_slice(extra);
        check_fields(self.r, node, &allowed, context);
        (
            self.r.quantity(node, "cpu", true).map(|v| v.value),
            self.r.quantity(node, "memory", false).map(|v| v.value),
        )
    }

    fn workloads(&mut self, root: &Node) -> BTreeMap<ObjectId, WorkloadAssumptions> {
        let mut out = BTreeMap::new();
        let Some(node) = self.r.map(root, "workloads") else {
            return out;
        };
        for (k, v) in node.as_map().unwrap_or_default() {
            let key = k.scalar_text().unwrap_or_default();
            let Some(id) = ObjectId::parse(&key) else {
                self.r.error(
                    k.span,
                    format!(
                        "workload keys must be `Kind/namespace/name`, found `{}`",
                        truncate(&key)
                    ),
                );
                continue;
            };
            if v.as_map().is_none() {
                self.r.error(v.span, "a workload entry must be a mapping");
                continue;
            }
            check_fields(self.r, v, &["usage", "startup"], &format!("workloads.{key}"));
            let usage = self.r.map(v, "usage").map(|u| {
                let (cpu, memory) = self.amounts(u, "usage", &[]);
                Amounts {
                    cpu_millis: cpu.unwrap_or(0),
                    memory_bytes: memory.unwrap_or(0),
                }
            });
            let startup = self.r.map(v, "startup").map(|s| {
                let (cpu_millis, memory_bytes) = self.amounts(s, "startup", &["seconds"]);
                let seconds = self.bounded(s, "seconds", 1, 86_400).unwrap_or(300);
                Startup {
                    cpu_millis,
                    memory_bytes,
                    seconds,
                }
            });
            out.insert(
                id,
                WorkloadAssumptions {
                    usage,
                    startup,
                    span: k.span,
                },
            );
        }
        out
    }

    fn percent(&mut self, node: &Node, key: &str, default: u32, max: u32) -> u32 {
        let Some(field) = self.r.field(node, key) else {
            return default;
        };
        let parsed = match &field.value {
            yaml::Value::Str(s) => IntOrPercent::parse_percent(s),
            _ => None,
        };
        match parsed {
            Some(IntOrPercent::Percent(p)) if p as u32 <= max && p > 0 => p as u32,
            _ => {
                self.r.error(
                    field.span,
                    format!("`{key}` must be a percentage from 1% to {max}%, such as `200%`"),
                );
                default
            }
        }
    }
}

pub(super) fn is_minor_version(v: &str) -> bool {
    let v = v.strip_prefix('v').unwrap_or(v);
    let parts: Vec<&str> = v.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The `faults` the config turns on.
#[derive(Default)]
struct Faults {
    stale_reads: Option<Spanned<u32>>,
    controller_lag: Option<Span>,
}

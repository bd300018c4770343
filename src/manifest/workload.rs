//! Workloads: the objects that own pods.

use serde::Serialize;

use crate::manifest::pod::PodTemplate;
use crate::manifest::quantity::IntOrPercent;
use crate::manifest::read::Reader;
use crate::manifest::selector::{LabelSelector, Labels};
use crate::source::{Span, Spanned};
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum WorkloadKind {
    Deployment,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    DaemonSet,
    Pod,
    /// batch/v1 Job: `parallelism` pods that run to completion.
    Job,
    /// batch/v1 CronJob: a Job from `jobTemplate` on a schedule, so its pods may be running
    /// at any time.
    CronJob,
}

impl WorkloadKind {
    pub fn from_kind(kind: &str, group: &str) -> Option<WorkloadKind> {
        let core_or_apps = matches!(group, "" | "apps" | "extensions");
        match kind {
            "Deployment" if core_or_apps => Some(WorkloadKind::Deployment),
            "ReplicaSet" if core_or_apps => Some(WorkloadKind::ReplicaSet),
            "StatefulSet" if core_or_apps => Some(WorkloadKind::StatefulSet),
            "DaemonSet" if core_or_apps => Some(WorkloadKind::DaemonSet),
            "ReplicationController" if group.is_empty() => Some(WorkloadKind::ReplicationController),
            "Pod" if group.is_empty() => Some(WorkloadKind::Pod),
            "Job" if group == "batch" => Some(WorkloadKind::Job),
            "CronJob" if group == "batch" => Some(WorkloadKind::CronJob),
            _ => None,
        }
    }
}

/// How a workload replaces its pods when the template changes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum UpdateStrategy {
    /// Deployment RollingUpdate (defaults 25%/25%), DaemonSet RollingUpdate (maxUnavailable 1,
    /// maxSurge 0) and StatefulSet RollingUpdate (partition 0, maxUnavailable 1).
    RollingUpdate {
        max_surge: Spanned<IntOrPercent>,
        max_unavailable: Spanned<IntOrPercent>,
        partition: Option<Spanned<i32>>,
    },
    Recreate {
        #[serde(skip)]
        span: Span,
    },
    OnDelete {
        #[serde(skip)]
        span: Span,
    },
    /// Bare pods are never replaced.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PodManagementPolicy {
    OrderedReady,
    Parallel,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// `spec.replicas`; `None` where the field is absent (default 1) or does not exist (DaemonSet, Pod).
    pub replicas: Option<Spanned<i32>>,
    /// The `spec:` key: where a finding about a field the manifest leaves out (`replicas`)
    /// points.
    #[serde(skip)]
    pub spec_key: Span,
    pub selector: Option<LabelSelector>,
    pub strategy: UpdateStrategy,
    pub min_ready_seconds: i32,
    pub pod_management_policy: Option<PodManagementPolicy>,
    pub template: PodTemplate,
    /// [`Node::content_hash`] of `spec.template` (as `pod-template-hash` tells revisions apart).
    #[serde(skip)]
    pub template_hash: u64,
    /// The object itself (not its pod template) is a hook of a release: a Helm or Argo CD
    /// hook Job.
    pub release_hook: bool,
    /// A StatefulSet's `volumeClaimTemplates`: a claim per pod.
    pub claim_templates: Vec<crate::manifest::storage::ClaimTemplate>,
}

/// What the scheduler's default spread constraints count for a pod without constraints of
/// its own (podtopologyspread `buildDefaultConstraints`, helper.DefaultSelector).
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultSpreadSelector {
    pub selector: LabelSelector,
    /// A ReplicaSet's selector carries its `pod-template-hash`: only the pods of the same
    /// revision count.
    pub same_revision: bool,
}

/// Annotations that make a Pod a hook of a deployment tool: created around a release or a
/// sync and deleted after it, never a long-running replica.
const HOOK_ANNOTATIONS: &[&str] = &["helm.sh/hook", "argocd.argoproj.io/hook"];

impl Workload {
    /// Whether availability checks judge it: every controller's pods, and bare Pods that are
    /// neither hooks (Helm, Argo CD) nor run to completion (`restartPolicy` other than
    /// `Always`). Kubernetes recreates no bare Pod, so nothing keeps one available anyway.
    pub fn long_running(&self) -> bool {
        !self.batch() && !self.hook()
    }

    /// Pods that run to completion: a Job's or CronJob's, or a bare Pod with `restartPolicy`
    /// `Never` or `OnFailure`. Nothing judges their availability, but while they run they take
    /// room on their node that long-running pods then lack.
    pub fn batch(&self) -> bool {
        matches!(self.kind, WorkloadKind::Job | WorkloadKind::CronJob)
            || (self.kind == WorkloadKind::Pod && self.template.spec.run_to_completion)
    }

    /// A hook of a deployment tool (Helm, Argo CD): run around a release and deleted after it,
    /// never beside the workloads for long.
    pub fn hook(&self) -> bool {
        self.release_hook
            || HOOK_ANNOTATIONS
                .iter()
                .any(|a| self.template.annotations.contains_key(*a))
    }

    /// The default constraints' selector: the selectors of the Services that select the pods
    /// (`services`: each Service's selector, already known to select them), merged, ANDed
    /// with the selector of the controller that owns the pods (ReplicaSet, StatefulSet,
    /// ReplicationController). A DaemonSet or a bare Pod has only the Services'. `None` when
    /// nothing selects: the scheduler then applies no default constraint.
    pub fn default_spread_selector<'a>(
        &self,
        services: impl IntoIterator<Item = &'a Labels>,
    ) -> Option<DefaultSpreadSelector> {
        let mut selector = LabelSelector::default();
        for service in services {
            selector
                .match_labels
                .extend(service.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let owner = match self.kind {
            WorkloadKind::Deployment
            | WorkloadKind::ReplicaSet
            | WorkloadKind::StatefulSet
            | WorkloadKind::ReplicationController => self.selector.as_ref(),
            WorkloadKind::DaemonSet | WorkloadKind::Pod | WorkloadKind::Job | WorkloadKind::CronJob => None,
        };
        if let Some(owner) = owner {
            selector
                .match_labels
                .extend(owner.match_labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            selector
                .match_expressions
                .extend(owner.match_expressions.iter().cloned());
        }
        let same_revision = self.kind == WorkloadKind::Deployment;
        (!selector.is_empty() || same_revision).then_some(DefaultSpreadSelector {
            selector,
            same_revision,
        })
    }

    /// The replica count the controller aims for without an autoscaler.
    pub fn desired_replicas(&self) -> i32 {
        match self.kind {
            WorkloadKind::Pod => 1,
            WorkloadKind::DaemonSet => 0,
            _ => self.replicas.as_ref().map_or(1, |r| r.value),
        }
    }

    /// A workload with nothing but a pod template (bare pods, or a spec that could not be read).
    fn bare(kind: WorkloadKind, template: PodTemplate) -> Workload {
        Workload {
            kind,
            replicas: None,
            spec_key: Span::default(),
            selector: None,
            strategy: UpdateStrategy::None,
            min_ready_seconds: 0,
            pod_management_policy: None,
            template,
            template_hash: 0,
            release_hook: false,
            claim_templates: Vec::new(),
        }
    }

    /// A Job, or a CronJob's `jobTemplate`: its pods, as many at once as `parallelism`
    /// (default one) and `completions` allow (job_controller.go: active pods never exceed
    /// either). A suspended one runs none.
    fn read_job(r: &mut Reader, kind: WorkloadKind, node: &Node, spec: &Node) -> Workload {
        let cron_suspended = kind == WorkloadKind::CronJob && r.bool(spec, "suspend").is_some_and(|b| b.value);
        let job = if kind == WorkloadKind::CronJob {
            match r.map(spec, "jobTemplate").and_then(|t| r.map(t, "spec")) {
                Some(job) => job,
                None => {
                    r.error(spec.span, "CronJob has no `jobTemplate.spec`");
                    return Workload::bare(kind, PodTemplate::default());
                }
            }
        } else {
            spec
        };
        let parallelism = r.count(job, "parallelism");
        let completions = r.count(job, "completions");
        let suspended = cron_suspended || r.bool(job, "suspend").is_some_and(|b| b.value);
        let at_once = match (&parallelism, &completions) {
            _ if suspended => Spanned::new(0, job.span),
            (Some(p), Some(c)) if c.value < p.value => c.clone(),
            (Some(p), _) => p.clone(),
            (None, Some(c)) if c.value < 1 => c.clone(),
            (None, _) => Spanned::new(1, job.span),
        };
        let template_hash = r.map(job, "template").map_or(0, |t| t.content_hash());
        let template = match r.map(job, "template") {
            Some(t) => PodTemplate::read(r, t),
            None => {
                r.error(job.span, format!("{kind:?} has no pod `template`"));
                PodTemplate::default()
            }
        };
        Workload {
            kind,
            replicas: Some(at_once),
            spec_key: node.entry("spec").map_or(spec.span, |(key, _)| key.span),
            selector: None,
            strategy: UpdateStrategy::None,
            min_ready_seconds: 0,
            pod_management_policy: None,
            template,
            template_hash,
            release_hook: false,
            claim_templates: Vec::new(),
        }
    }

    /// Read a workload; `node` is the whole object.
    pub fn read(r: &mut Reader, kind: WorkloadKind, node: &Node, object_span: Span) -> Workload {
        let release_hook = node
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .is_some_and(|a| HOOK_ANNOTATIONS.iter().any(|k| a.get(k).is_some()));
        Workload {
            release_hook,
            ..Workload::read_spec(r, kind, node, object_span)
        }
    }

    fn read_spec(r: &mut Reader, kind: WorkloadKind, node: &Node, object_span: Span) -> Workload {
        if kind == WorkloadKind::Pod {
            return Workload::bare(kind, PodTemplate::read(r, node));
        }
        let Some(spec) = r.map(node, "spec") else {
            r.error(object_span, format!("{kind:?} has no `spec`"));
            return Workload::bare(kind, PodTemplate::default());
        };
        if matches!(kind, WorkloadKind::Job | WorkloadKind::CronJob) {
            return Workload::read_job(r, kind, node, spec);
        }
        let replicas = if kind == WorkloadKind::DaemonSet {
            None
        } else {
            r.count(spec, "replicas")
        };
        let selector = if kind == WorkloadKind::ReplicationController {
            r.map(spec, "selector")
                .map(|s| LabelSelector::from_map(r.string_map(spec, "selector"), s.span))
        } else {
            LabelSelector::read(r, spec, "selector")
        };
        let template_hash = r.map(spec, "template").map_or(0, |t| t.content_hash());
        let template = match r.map(spec, "template") {
            Some(t) => PodTemplate::read(r, t),
            None => {
                r.error(spec.span, format!("{kind:?} has no pod `template`"));
                PodTemplate::default()
            }
        };
        // A ReplicationController without a selector selects its template's labels.
        let selector = selector.or_else(|| {
            (kind == WorkloadKind::ReplicationController)
                .then(|| LabelSelector::from_map(template.labels.clone(), template.span))
        });
        if let Some(sel) = &selector
            && !template.labels.is_empty()
            && !sel.matches(&template.labels)
        {
            r.error(sel.span, "`selector` does not match the pod template's labels");
        }
        let strategy = read_strategy(r, kind, spec);
        let pod_management_policy = (kind == WorkloadKind::StatefulSet).then(|| {
            match r.one_of(spec, "podManagementPolicy", &["OrderedReady", "Parallel"]) {
                Some(p) if p.value == "Parallel" => PodManagementPolicy::Parallel,
                _ => PodManagementPolicy::OrderedReady,
            }
        });
        Workload {
            kind,
            replicas,
            spec_key: node.entry("spec").map_or(spec.span, |(key, _)| key.span),
            selector,
            strategy,
            min_ready_seconds: r.count(spec, "minReadySeconds").map_or(0, |v| v.value),
            pod_management_policy,
            template,
            template_hash,
            release_hook: false,
            claim_templates: if kind == WorkloadKind::StatefulSet {
                crate::manifest::storage::ClaimTemplate::read_all(r, spec)
            } else {
                Vec::new()
            },
        }
    }
}

fn read_strategy(r: &mut Reader, kind: WorkloadKind, spec: &Node) -> UpdateStrategy {
    let (key, types, default_type): (&str, &[&str], &str) = match kind {
        WorkloadKind::Deployment => ("strategy", &["RollingUpdate", "Recreate"], "RollingUpdate"),
        WorkloadKind::StatefulSet | WorkloadKind::DaemonSet => {
            ("updateStrategy", &["RollingUpdate", "OnDelete"], "RollingUpdate")
        }
        _ => return UpdateStrategy::None,
    };
    let node = r.map(spec, key);
    let span = node.map_or(spec.span, |n| n.span);
    let ty = node
        .and_then(|n| r.one_of(n, "type", types))
        .map_or(default_type.to_string(), |t| t.value);
    match ty.as_str() {
        "Recreate" => UpdateStrategy::Recreate { span },
        "OnDelete" => UpdateStrategy::OnDelete { span },
        _ => {
            let rolling = node.and_then(|n| r.map(n, "rollingUpdate"));
            let (surge_default, unavailable_default) = match kind {
                WorkloadKind::Deployment => (IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
                _ => (IntOrPercent::Int(0), IntOrPercent::Int(1)),
            };
            let max_surge = rolling
                .and_then(|n| r.int_or_percent(n, "maxSurge"))
                .unwrap_or(Spanned::new(surge_default, span));
            let max_unavailable = rolling
                .and_then(|n| r.int_or_percent(n, "maxUnavailable"))
                .unwrap_or(Spanned::new(unavailable_default, span));
            if kind == WorkloadKind::Deployment
                && max_surge.value.scaled(100, true) == 0
                && max_unavailable.value.scaled(100, false) == 0
            {
                r.error(max_unavailable.span, "`maxSurge` and `maxUnavailable` cannot both be 0");
            }
            let partition = rolling.and_then(|n| r.count(n, "partition"));
            UpdateStrategy::RollingUpdate {
                max_surge,
                max_unavailable,
                partition,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::Diagnostics;
    use crate::manifest::Labels;
    use crate::source::SourceMap;

    fn workload(text: &str) -> super::Workload {
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let (_, loaded) = crate::manifest::load_text(&mut sources, "w.yaml", text, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        loaded.objects[0].workload().expect("a workload").clone()
    }

    #[test]
    fn default_spread_selector_follows_default_selector() {
        let template = "  template:\n    metadata: {labels: {app: db, tier: data}}\n    spec: {containers: [{name: c, image: x}]}\n";
        let service: Labels = [("tier".to_string(), "data".to_string())].into();
        // StatefulSet: its selector ANDed with the Services'.
        let set = workload(&format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db}}\nspec:\n  selector: {{matchLabels: {{app: db}}}}\n{template}"
        ));
        let d = set.default_spread_selector([&service]).unwrap();
        assert!(!d.same_revision);
        assert_eq!(d.selector.match_labels.len(), 2);
        // Deployment: its ReplicaSet's selector, one revision.
        let deployment = workload(&format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: db}}\nspec:\n  selector: {{matchLabels: {{app: db}}}}\n{template}"
        ));
        assert!(deployment.default_spread_selector([]).unwrap().same_revision);
        // DaemonSet: nothing selects its pods but a Service.
        let daemon = workload(&format!(
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: db}}\nspec:\n  selector: {{matchLabels: {{app: db}}}}\n{template}"
        ));
        assert_eq!(daemon.default_spread_selector([]), None);
        let d = daemon.default_spread_selector([&service]).unwrap();
        assert_eq!(d.selector.match_labels, service);
    }
}

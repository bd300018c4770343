//! What a unit's report would otherwise leave unsaid: what the model does not see of it, and
//! the pods its descheduler never considers.

use super::{Role, Unit, storage};
use crate::config::Config;
use crate::manifest::{Body, Object, WorkloadKind};

impl Unit {
    /// What the report would otherwise leave unsaid, one sentence each: what the model does
    /// not see of this unit, rather than let a verdict stand for it, and the pods its
    /// descheduler never considers.
    pub fn notes(&self, objects: &[Object], config: &Config) -> Vec<String> {
        let mut notes = Vec::new();
        notes.extend(self.never_evicted(objects));
        for w in self.workloads() {
            let Some(workload) = objects[w].workload().filter(|wl| wl.batch()) else {
                continue;
            };
            let what = match workload.kind {
                WorkloadKind::CronJob => "their completion and the schedule are",
                _ => "their completion is",
            };
            notes.push(format!(
                "{} runs to completion: its pods take room for the whole trace ({what} not modelled) and no check judges them",
                objects[w].id
            ));
        }
        for w in self.workloads() {
            for class in storage::pod_volumes(objects, w).unknown_classes {
                let class = class.map_or_else(
                    || "the default StorageClass".to_string(),
                    |c| format!("StorageClass {c}"),
                );
                notes.push(format!(
                    "{class} of {}'s claims is not among the scanned objects: the zones its volumes tie pods to are not modelled",
                    objects[w].id
                ));
            }
        }
        // Requests are what the scheduler and the kubelet reserve: without any, capacity
        // never stops a pod, and the cluster's real contention is at run time.
        let requests_nothing = self.workloads().all(|w| {
            objects[w].workload().is_none_or(|wl| {
                let r = wl.template.spec.effective_request();
                r.cpu_millis == 0 && r.memory_bytes == 0
            })
        });
        if requests_nothing && !self.cluster(config).assumed {
            notes.push(
                "no pod of the unit requests cpu or memory: the scheduler places them wherever pod slots allow, so capacity had nothing to check".to_string(),
            );
        }
        notes
    }

    /// The workloads whose pods the unit's descheduler policy never evicts, whatever the
    /// plugins find, and why (the DefaultEvictor's static constraints,
    /// pkg/framework/plugins/defaultevictor): no trace step says it, since they are never
    /// candidates.
    fn never_evicted(&self, objects: &[Object]) -> Vec<String> {
        let Some(policy) = self.members.iter().find_map(|m| match &objects[m.object].body {
            Body::DeschedulerPolicy(p) if m.role == Role::DeschedulerPolicy => Some(p),
            _ => None,
        }) else {
            return Vec::new();
        };
        let every = |f: &dyn Fn(&crate::manifest::descheduler::EvictorArgs) -> bool| {
            !policy.profiles.is_empty() && policy.profiles.iter().all(|p| f(&p.evictor))
        };
        let mut notes = Vec::new();
        for w in self.workloads() {
            let Some(workload) = objects[w].workload().filter(|wl| wl.long_running()) else {
                continue;
            };
            let spec = &workload.template.spec;
            let why = if workload.kind == WorkloadKind::DaemonSet {
                None
            } else if workload.kind == WorkloadKind::Pod && workload.template.owners.is_empty() {
                Some("it is a bare Pod (no ownerReferences)".to_string())
            } else if spec.volumes.local_storage && every(&|e| !e.evict_local_storage_pods) {
                Some(
                    "they have local storage (emptyDir or hostPath) and no profile sets evictLocalStoragePods"
                        .to_string(),
                )
            } else if spec.volumes.persistent_claim && every(&|e| e.ignore_pvc_pods) {
                Some("they have a PersistentVolumeClaim and every profile sets ignorePvcPods".to_string())
            } else if spec
                .priority_class_name
                .as_ref()
                .is_some_and(|p| p.value.starts_with("system-"))
                && every(&|e| !e.evict_system_critical_pods)
            {
                Some("they are system-critical and no profile sets evictSystemCriticalPods".to_string())
            } else {
                None
            };
            if let Some(why) = why {
                notes.push(format!("the descheduler never evicts {}'s pods: {why}", objects[w].id));
            }
        }
        notes
    }
}

//! The units of a scope: its workloads grouped by the edges between them, each with what it
//! attaches (autoscalers, budgets, services, the descheduler policy) and the checks that apply.

use super::*;

impl<'a> Graph<'a> {
    pub(super) fn scopes(&self) -> BTreeSet<usize> {
        self.workloads.iter().map(|&w| self.objects[w].scope).collect()
    }

    pub(super) fn units_of_scope(&self, scope: usize, scope_path: &str) -> Vec<Unit> {
        let members: Vec<usize> = self
            .workloads
            .iter()
            .copied()
            .filter(|&w| self.objects[w].scope == scope)
            .collect();
        let mut parent: BTreeMap<usize, usize> = members.iter().map(|&w| (w, w)).collect();
        fn find(parent: &mut BTreeMap<usize, usize>, x: usize) -> usize {
            let p = parent[&x];
            if p == x {
                return x;
            }
            let root = find(parent, p);
            parent.insert(x, root);
            root
        }
        for e in &self.edges {
            if parent.contains_key(&e.from) && parent.contains_key(&e.to) {
                let (a, b) = (find(&mut parent, e.from), find(&mut parent, e.to));
                if a != b {
                    parent.insert(a.max(b), a.min(b));
                }
            }
        }
        let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &w in &members {
            let root = find(&mut parent, w);
            components.entry(root).or_default().push(w);
        }
        // Batch pods take room beside long-running ones; alone, nothing judges them.
        components
            .into_values()
            .filter(|ws| ws.iter().any(|&w| !self.batch(w)))
            .map(|ws| self.unit(scope, scope_path, ws))
            .collect()
    }

    pub(super) fn unit(&self, scope: usize, scope_path: &str, mut workloads: Vec<usize>) -> Unit {
        // Batch workloads first: their pods are created and placed first, as a build of a
        // stream of Jobs may already run wherever a long-running pod comes to be placed (their
        // slots come first, and the scheduler takes pending pods in slot order).
        workloads.sort_by(|&a, &b| (!self.batch(a), &self.objects[a].id).cmp(&(!self.batch(b), &self.objects[b].id)));
        let mut members: Vec<Member> = workloads
            .iter()
            .map(|&w| Member {
                object: w,
                role: Role::Workload,
            })
            .collect();
        let mut attached: BTreeSet<(usize, Role)> = BTreeSet::new();
        for w in &workloads {
            attached.extend(self.attached.get(w).into_iter().flatten().copied());
        }
        let mut attached: Vec<(usize, Role)> = attached.into_iter().collect();
        attached.sort_by(|a, b| (a.1, &self.objects[a.0].id).cmp(&(b.1, &self.objects[b.0].id)));
        members.extend(attached.iter().map(|&(object, role)| Member { object, role }));

        let mut hasher = blake3::Hasher::new();
        hasher.update(scope_path.as_bytes());
        for m in &members {
            hasher.update(b"\n");
            hasher.update(self.objects[m.object].id.to_string().as_bytes());
        }
        let id = hasher.finalize().to_hex()[..12].to_string();

        // Named after its first long-running workload.
        let first = &self.objects[*workloads.iter().find(|&&w| !self.batch(w)).unwrap_or(&workloads[0])].id;
        let name = match workloads.len() {
            1 => format!("{}/{}", first.namespace.as_deref().unwrap_or("-"), first.name),
            n => format!(
                "{}/{} (+{} workloads)",
                first.namespace.as_deref().unwrap_or("-"),
                first.name,
                n - 1
            ),
        };
        let pool_indices: BTreeSet<usize> = workloads.iter().flat_map(|w| self.pools[w].iter().copied()).collect();
        let node_pools = pool_indices
            .iter()
            .map(|&i| self.config.cluster.pools[i].name.clone())
            .collect();
        let edges = self
            .edges
            .iter()
            .filter(|e| workloads.contains(&e.from) && workloads.contains(&e.to))
            .cloned()
            .collect();
        let judged: Vec<usize> = workloads.iter().copied().filter(|&w| !self.batch(w)).collect();
        let checks = self.applicable_checks(&judged, &attached);
        let drain_alone = crate::checks::any(&checks, |c| c.applies == Applies::WithDrainEvents)
            && !self.config.has_event(|e| matches!(e, EnvironmentEvent::NodeDrain));
        Unit {
            id,
            name,
            scope,
            members,
            node_pools,
            checks,
            edges,
            not_checked: Vec::new(),
            cluster: None,
            drain_alone,
        }
    }

    pub(super) fn applicable_checks(&self, workloads: &[usize], attached: &[(usize, Role)]) -> Vec<CheckId> {
        let has = |role: Role| attached.iter().any(|(_, r)| *r == role);
        let config = self.config;
        let evictions = has(Role::DeschedulerPolicy)
            || config.has_event(|e| e.evicts())
            || config
                .cluster
                .pools
                .iter()
                .any(|p| p.taints.iter().any(|t| t.effect == TaintEffect::NoExecute));
        let spread = workloads
            .iter()
            .any(|w| self.max_replicas[w] > 1 || !self.workload_spec(*w).topology_spread_constraints.is_empty());
        checks::CHECKS
            .iter()
            .filter(|c| match c.applies {
                Applies::Always => true,
                // An autoscaler the model can run: one that scales on cpu, Pods, Object or External metrics.
                Applies::WithAutoscaler => attached.iter().any(|(o, r)| {
                    *r == Role::Autoscaler
                        && matches!(&self.objects[*o].body, Body::HorizontalPodAutoscaler(h) if h.has_modelled_metric())
                }),
                Applies::WithEvictions => evictions,
                Applies::WithOverloadEvents => {
                    config.has_event(|e| matches!(e, crate::config::EnvironmentEvent::NodeOverload { .. }))
                }
                Applies::WithSpread => spread,
                Applies::WithFeedback => {
                    has(Role::Autoscaler)
                        || has(Role::DeschedulerPolicy)
                        || evictions
                        || config.has_event(|e| matches!(e, crate::config::EnvironmentEvent::GitopsSync))
                }
                Applies::WithDrainEvents => {
                    has(Role::DisruptionBudget) || config.has_event(|e| matches!(e, EnvironmentEvent::NodeDrain))
                }
                Applies::WithRollout => workloads.iter().any(|w| {
                    self.objects[*w].workload().is_some_and(|wl| {
                        wl.kind == WorkloadKind::Deployment
                            || (wl.kind == WorkloadKind::StatefulSet
                                && matches!(
                                    wl.strategy,
                                    crate::manifest::workload::UpdateStrategy::RollingUpdate { .. }
                                ))
                    })
                }),
            })
            .filter(|c| config.checks.is_enabled(c.id))
            .map(|c| c.id)
            .collect()
    }
}

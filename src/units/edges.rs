//! The edges that join workloads into one unit: pod (anti-)affinity and spread selectors,
//! shared node pools, the descheduler's policy.

use super::*;

impl<'a> Graph<'a> {
    /// A required podAffinity term that selects no pod of the scanned workloads of its scope
    /// (not even its own): the pods it needs come from elsewhere, and the model assumes they
    /// run in every domain. Say so.
    pub(super) fn external_affinity(&self, diags: &mut Diagnostics) {
        for &a in &self.workloads {
            for term in &self.workload_spec(a).affinity.pod.required {
                let selects_scanned = self.same_scope_workloads(a).any(|b| {
                    term.label_selector.as_ref().is_some_and(|s| s.matches(self.labels(b)))
                        && self.term_covers_namespace(a, term, b)
                });
                if !selects_scanned {
                    diags.push(
                        Diagnostic::note(
                            term.topology_key.span,
                            format!(
                                "the required podAffinity of {} selects no pod of the scanned manifests: kivi-lint assumes the pods it needs run in every `{}` domain",
                                self.objects[a].id,
                                truncate(&term.topology_key.value)
                            ),
                        )
                        .with_help("scan the manifests of the pods it needs with it, or make the term preferred if they may be missing"),
                    );
                }
            }
        }
    }

    pub(super) fn selector_edges(&mut self) {
        let mut new_edges = Vec::new();
        for &a in &self.workloads {
            let spec = self.workload_spec(a);
            // Only a selector that reaches other workloads' pods (not one narrowed to a
            // ReplicaSet's own revision) can join them.
            let default_selector = self.default_spread_selector(a).filter(|d| !d.same_revision);
            for &b in &self.workloads {
                if a == b || self.objects[a].scope != self.objects[b].scope {
                    continue;
                }
                let labels_b = self.labels(b);
                let same_ns = self.objects[a].namespace() == self.objects[b].namespace();
                for (k, tsc) in spec.topology_spread_constraints.iter().enumerate() {
                    if same_ns && tsc.label_selector.as_ref().is_some_and(|s| s.matches(labels_b)) {
                        new_edges.push((a, b, format!("its topologySpreadConstraints[{k}] counts their pods")));
                    }
                }
                if same_ns && default_selector.as_ref().is_some_and(|d| d.selector.matches(labels_b)) {
                    new_edges.push((
                        a,
                        b,
                        "its default topology spread constraints count their pods".to_string(),
                    ));
                }
                for (what, affinity) in [
                    ("podAffinity", &spec.affinity.pod),
                    ("podAntiAffinity", &spec.affinity.pod_anti),
                ] {
                    for term in affinity.terms() {
                        if term.label_selector.as_ref().is_some_and(|s| s.matches(labels_b))
                            && self.term_covers_namespace(a, term, b)
                        {
                            new_edges.push((a, b, format!("its {what} selects their pods")));
                        }
                    }
                }
            }
        }
        for (a, b, reason) in new_edges {
            self.edge(a, b, reason);
        }
    }

    /// Pools whose nodes admit the workload's pods: nodeName, nodeSelector, required node
    /// affinity, and NoSchedule/NoExecute taints.
    pub(super) fn node_pools(&mut self, diags: &mut Diagnostics) {
        for &w in &self.workloads {
            let spec = self.workload_spec(w);
            let pools: Vec<usize> = if self.config.cluster.assumed {
                assumed::pools_admitting(&self.config.cluster, self.objects, w)
            } else {
                self.config
                    .cluster
                    .pools
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| pool_admits(p, spec))
                    .map(|(i, _)| i)
                    .collect()
            };
            // An assumed cluster that cannot admit a pod says so in its own note.
            if pools.is_empty() && !self.config.cluster.pools.is_empty() && !self.config.cluster.assumed {
                let span = spec.node_requirement_span();
                diags.push(
                    Diagnostic::warning(
                        span,
                        format!("no node pool of the cluster admits the pods of {}", self.objects[w].id),
                    )
                    .with_help(
                        "check nodeSelector, node affinity, nodeName and tolerations against `cluster.nodePools`",
                    ),
                );
            }
            self.pools.insert(w, pools);
            if !self.max_replicas.contains_key(&w) {
                let desired = i64::from(self.objects[w].workload().expect("a workload").desired_replicas());
                self.max_replicas.insert(w, desired);
            }
        }
    }

    /// The DeschedulerPolicy of each scope: the config's (`descheduler.policy`) for every
    /// scope, else the first policy scanned in the scope itself. A policy in one directory of
    /// examples says nothing about the workloads of another.
    pub(super) fn descheduler(&mut self, diags: &mut Diagnostics) {
        let mut by_scope: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for i in 0..self.objects.len() {
            if matches!(self.objects[i].body, Body::DeschedulerPolicy(_)) && !self.objects[i].shadowed {
                by_scope.entry(self.objects[i].scope).or_default().push(i);
            }
        }
        let scopes: BTreeSet<usize> = self.workloads.iter().map(|&w| self.objects[w].scope).collect();
        for scope in scopes {
            let policy = match self.policy {
                Some(p) => p,
                None => {
                    let Some(policies) = by_scope.get(&scope) else { continue };
                    if policies.len() > 1 {
                        diags.push(
                            Diagnostic::warning(
                                self.objects[policies[1]].span,
                                format!(
                                    "{} DeschedulerPolicy objects found in one scope; kivi-lint uses the first, {}",
                                    policies.len(),
                                    self.objects[policies[0]].id
                                ),
                            )
                            .with_help("set `descheduler.policy` in .kivi-lint.yaml to choose one"),
                        );
                    }
                    policies[0]
                }
            };
            self.attach_policy(policy, scope);
        }
    }

    pub(super) fn attach_policy(&mut self, p: usize, scope: usize) {
        let Body::DeschedulerPolicy(policy) = &self.objects[p].body else {
            return;
        };
        let evictable: Vec<usize> = self
            .workloads
            .iter()
            .copied()
            .filter(|&w| self.objects[w].scope == scope)
            .filter(|&w| {
                let o = &self.objects[w];
                // The descheduler never evicts DaemonSet pods or bare pods.
                let kind = o.workload().expect("a workload").kind;
                !matches!(kind, WorkloadKind::DaemonSet | WorkloadKind::Pod)
                    && policy.may_evict(o.namespace(), self.labels(w))
            })
            .collect();
        for &w in &evictable {
            self.attached.entry(w).or_default().insert((p, Role::DeschedulerPolicy));
        }
        let balancing: Vec<String> = policy
            .plugins()
            .filter(|(_, pl)| pl.balances_across_workloads())
            .map(|(_, pl)| pl.name.value.clone())
            .collect();
        if let Some(plugin) = balancing.first() {
            // Chained per pool: two workloads sharing a pool end up in one component.
            let mut new_edges = Vec::new();
            for pool in 0..self.config.cluster.pools.len() {
                let on_pool: Vec<usize> = evictable
                    .iter()
                    .copied()
                    .filter(|w| self.pools[w].contains(&pool))
                    .collect();
                for pair in on_pool.windows(2) {
                    new_edges.push((
                        pair[0],
                        pair[1],
                        format!("{plugin} of {} may evict both from shared nodes", self.objects[p].id),
                    ));
                }
            }
            for (a, b, reason) in new_edges {
                self.edge(a, b, reason);
            }
        }
    }
}

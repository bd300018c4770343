//! Capacity edges: workloads that share a node pool whose room their requests exceed are
//! verified together.

use std::collections::{BTreeMap, BTreeSet};

use super::Graph;
use crate::config::NodePool;
use crate::manifest::WorkloadKind;
use crate::manifest::pod::Amounts;

impl Graph<'_> {
    /// Demand of one workload on a pool at its largest size.
    fn demand(&self, w: usize, pool: &NodePool) -> (Amounts, i64) {
        let workload = self.objects[w].workload().expect("a workload");
        let request = workload.template.spec.effective_request();
        let pods = if workload.kind == WorkloadKind::DaemonSet {
            i64::from(pool.max)
        } else {
            self.max_replicas[&w]
        };
        (request.saturating_mul(pods), pods)
    }

    pub(super) fn capacity_edges(&mut self) {
        // An assumed cluster has room for every pod of a unit: capacity never joins workloads.
        if self.config.cluster.assumed {
            return;
        }
        let mut new_edges = Vec::new();
        for (pi, pool) in self.config.cluster.pools.iter().enumerate() {
            let by_scope: BTreeMap<usize, Vec<usize>> = self
                .workloads
                .iter()
                .filter(|w| self.pools[w].contains(&pi))
                .fold(BTreeMap::new(), |mut m, &w| {
                    m.entry(self.objects[w].scope).or_insert_with(Vec::new).push(w);
                    m
                });
            let capacity = pool.usable().saturating_mul(i64::from(pool.max));
            let pod_slots = pool.allocatable.pods.saturating_mul(i64::from(pool.max));
            for sharing in by_scope.values() {
                if sharing.len() < 2 {
                    continue;
                }
                let demands: Vec<(usize, Amounts, i64)> = sharing
                    .iter()
                    .map(|&w| {
                        let (d, p) = self.demand(w, pool);
                        (w, d, p)
                    })
                    .collect();
                let (demand, pods) = demands.iter().fold((Amounts::default(), 0i64), |(a, n), (_, d, p)| {
                    (a.saturating_add(*d), n.saturating_add(*p))
                });
                // Pods without requests never fail the resource fit, so they only compete for
                // pod slots.
                // Ephemeral storage, hugepages and extended resources the pool is short of:
                // the workloads requesting one compete.
                let requested: BTreeSet<&str> = sharing
                    .iter()
                    .flat_map(|&w| self.workload_spec(w).scalar_names())
                    .collect();
                let short_scalars: Vec<&str> = requested
                    .into_iter()
                    .filter(|name| {
                        let wanted = demands.iter().fold(0i64, |sum, (w, _, pods)| {
                            sum.saturating_add(self.workload_spec(*w).scalar_request(name).saturating_mul(*pods))
                        });
                        let capacity = pool
                            .scalar_allocatable
                            .get(*name)
                            .copied()
                            .unwrap_or(0)
                            .saturating_mul(i64::from(pool.max));
                        wanted > capacity
                    })
                    .collect();
                // Room in all is not room on one node: the others' pods can leave every node
                // with less than one of a workload's pods needs (one api pod per node, and no
                // node left for a pod that needs a whole one).
                let fragmented = demands.iter().any(|(w, d, _)| {
                    let pod = self.workload_spec(*w).effective_request();
                    let nodes = i64::from(pool.max);
                    let usable = pool.usable();
                    let others_cpu = demand.cpu_millis.saturating_sub(d.cpu_millis);
                    let others_memory = demand.memory_bytes.saturating_sub(d.memory_bytes);
                    (pod.cpu_millis > 0 && others_cpu > nodes.saturating_mul(usable.cpu_millis - pod.cpu_millis))
                        || (pod.memory_bytes > 0
                            && others_memory > nodes.saturating_mul(usable.memory_bytes - pod.memory_bytes))
                });
                let competing: Vec<usize> = if pods > pod_slots {
                    sharing.clone()
                } else if demand.cpu_millis > capacity.cpu_millis
                    || demand.memory_bytes > capacity.memory_bytes
                    || fragmented
                {
                    demands
                        .iter()
                        .filter(|(_, d, _)| d.cpu_millis > 0 || d.memory_bytes > 0)
                        .map(|(w, _, _)| *w)
                        .collect()
                } else {
                    Vec::new()
                };
                let mut competing = competing;
                for name in short_scalars {
                    for &w in sharing {
                        if self.workload_spec(w).scalar_request(name) > 0 && !competing.contains(&w) {
                            competing.push(w);
                        }
                    }
                }
                competing.sort_unstable();
                let exceeded = pods > pod_slots
                    || demand.cpu_millis > capacity.cpu_millis
                    || demand.memory_bytes > capacity.memory_bytes;
                let reason = if exceeded || !fragmented {
                    format!(
                        "their requests together exceed node pool {} at its largest size",
                        pool.name
                    )
                } else {
                    format!(
                        "the others' pods can leave no node of pool {} with the room one pod needs",
                        pool.name
                    )
                };
                if competing.len() > 1 {
                    for pair in competing.windows(2) {
                        new_edges.push((pair[0], pair[1], reason.clone()));
                    }
                }
            }
        }
        for (a, b, reason) in new_edges {
            self.edge(a, b, reason);
        }
    }
}

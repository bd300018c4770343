//! The topologies of a unit's search (Kivi's incremental scaling, with the user's bounds):
//! every node count of each pool in its `[min, max]`, at most `scaling.maxNodes` in all, and
//! every starting replica count of each autoscaled workload in its HPA's
//! `[minReplicas, maxReplicas]`, at most `podsPerNode` per node. Smallest first: by nodes,
//! then by pods. Pools that differ only in names (and in label values nothing selects on) are
//! interchangeable: of topologies that only swap their counts, the first is kept.

use std::collections::{BTreeSet, HashSet};

use crate::config::Config;
use crate::manifest::{Object, WorkloadKind};
use crate::model::Topology;
use crate::units::Unit;

/// Which topologies to verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The incremental search.
    Search,
    /// One topology: the pools' `count` (the cluster today), replicas as the manifests say.
    Current,
    /// One topology: this many nodes in every pool.
    Nodes(u32),
}

/// A unit's topologies, smallest first, and what bounds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub topologies: Vec<Topology>,
    pub bound: String,
}

pub fn plan(unit: &Unit, objects: &[Object], config: &Config, scale: Scale) -> Plan {
    if let Some(fixed) = fixed_plan(unit, objects, config, scale) {
        return fixed;
    }
    let pools = &config.cluster.pools;
    let max_nodes = config.scaling.max_nodes;
    let pods_per_node = config.scaling.pods_per_node;
    // Pools the unit's pods cannot use stay at their smallest size: their size changes
    // nothing the unit's checks look at.
    let ranges: Vec<(u32, u32)> = pools
        .iter()
        .map(|p| {
            let usable = unit.node_pools.contains(&p.name);
            let max = if usable { p.max.min(max_nodes) } else { p.min };
            (p.min.min(max), max)
        })
        .collect();
    let workloads: Vec<usize> = unit.workloads().collect();
    // Per workload: its HPA's bounds, if one scales it.
    let bounds: Vec<Option<(u32, u32)>> = workloads.iter().map(|&w| autoscaler_bounds(unit, objects, w)).collect();
    let classes = interchangeable(config, unit, objects);
    let spec_replicas = |replicas: &[Option<u32>]| -> u32 {
        workloads
            .iter()
            .zip(replicas)
            .map(|(&w, r)| {
                r.unwrap_or_else(|| {
                    objects[w]
                        .workload()
                        .map_or(0, |wl| wl.desired_replicas().max(0) as u32)
                })
            })
            .sum()
    };
    // Smallest first: by nodes, then by pods, then by counts. The candidates are enumerated
    // lazily, one total node count at a time, keeping only the smallest `cap` of each, so a
    // config with many wide pools costs a bounded amount of time and memory.
    let cap = config.scaling.max_topologies as usize;
    let min_total = ranges.iter().map(|r| r.0).sum::<u32>().max(1);
    let max_total = ranges.iter().map(|r| r.1).sum::<u32>().min(max_nodes);
    let mut topologies: Vec<Topology> = Vec::new();
    let mut budget = ENUMERATION_BUDGET;
    let mut more = false;
    for total in min_total..=max_total {
        if topologies.len() >= cap {
            more = true;
            break;
        }
        let keep = cap - topologies.len();
        let mut level: std::collections::BinaryHeap<(u32, Vec<u32>, Vec<Option<u32>>)> =
            std::collections::BinaryHeap::new();
        let mut seen = HashSet::new();
        let pods_cap = pods_per_node.saturating_mul(total);
        let choices: Vec<Vec<Option<u32>>> = bounds
            .iter()
            .map(|b| match b {
                Some((min, max)) => {
                    let high = (*max).min(pods_cap).max(*min);
                    (*min..=high).map(Some).collect()
                }
                None => vec![None],
            })
            .collect();
        let mut counts = vec![0u32; pools.len()];
        let finished = nodes_with_total(&ranges, 0, total, &mut counts, &mut |nodes| {
            // Every vector looked at counts, kept or not: many interchangeable pools have
            // astronomically many orderings of few canonical counts.
            if budget == 0 {
                return false;
            }
            budget -= 1;
            if !seen.insert(canonical(nodes, &classes)) {
                return true;
            }
            for_each_product(&choices, &mut Vec::new(), &mut |r| {
                if budget == 0 {
                    return false;
                }
                budget -= 1;
                level.push((spec_replicas(r), nodes.to_vec(), r.to_vec()));
                if level.len() > keep {
                    level.pop();
                    more = true;
                }
                true
            })
        });
        topologies.extend(
            level
                .into_sorted_vec()
                .into_iter()
                .map(|(_, nodes_per_pool, replicas)| Topology {
                    nodes_per_pool,
                    replicas,
                }),
        );
        if !finished {
            more = true;
            break;
        }
    }
    let mut bound = Vec::new();
    let pool_max: u32 = ranges.iter().map(|r| r.1).sum();
    if pools.iter().any(|p| p.max > max_nodes) || pool_max > max_nodes {
        bound.push(format!("scaling.maxNodes ({max_nodes})"));
    }
    if pools.iter().any(|p| p.max <= max_nodes) {
        bound.push("the pools' `max`".to_string());
    }
    if bounds.iter().any(Option::is_some) {
        bound.push(format!("maxReplicas, at most podsPerNode ({pods_per_node}) per node"));
    }
    if budget == 0 {
        bound.push(format!(
            "the topology enumeration's budget ({ENUMERATION_BUDGET} candidates)"
        ));
    } else if more {
        bound.push(format!("scaling.maxTopologies ({cap})"));
    }
    Plan {
        topologies,
        bound: bound.join(", "),
    }
}

/// The one topology of `--scale current` or `--scale N`; `None` for the search.
fn fixed_plan(unit: &Unit, objects: &[Object], config: &Config, scale: Scale) -> Option<Plan> {
    match scale {
        Scale::Current => {
            // An autoscaled workload starts where its HPA holds the manifests' count, or the
            // count of its pods running now (`initialPods`, `--cluster-state`): the HPA owns
            // `spec.replicas` in the cluster. A search that holds the autoscalers has no HPA
            // of its own to clamp it.
            let replicas = unit
                .workloads()
                .map(|w| {
                    autoscaler_bounds(unit, objects, w).map(|(min, max)| {
                        let running: u32 = (config.initial_pods.iter())
                            .filter(|p| p.workload == objects[w].id)
                            .map(|p| p.count)
                            .sum();
                        let desired = objects[w]
                            .workload()
                            .map_or(1, |wl| wl.desired_replicas().max(0) as u32);
                        if running > 0 { running } else { desired }.clamp(min, max)
                    })
                })
                .collect();
            Some(Plan {
                topologies: vec![Topology {
                    replicas,
                    ..Topology::current(config)
                }],
                bound: "one topology: the pools' `count`".into(),
            })
        }
        Scale::Nodes(n) => Some(Plan {
            topologies: vec![Topology {
                nodes_per_pool: vec![n; config.cluster.pools.len()],
                replicas: Vec::new(),
            }],
            bound: format!("one topology: --scale {n}"),
        }),
        Scale::Search => None,
    }
}

/// Candidate topologies a search looks at, at most: a config of many wide pools and HPAs has
/// astronomically many, of which only the smallest `maxTopologies` are verified anyway.
const ENUMERATION_BUDGET: usize = 1_000_000;

/// Call `f` with every node count per pool within `ranges` that adds up to `total`, in
/// lexicographic order, until it returns `false`; `false` when it did.
fn nodes_with_total(
    ranges: &[(u32, u32)],
    i: usize,
    total: u32,
    counts: &mut Vec<u32>,
    f: &mut dyn FnMut(&[u32]) -> bool,
) -> bool {
    if i == ranges.len() {
        return total != 0 || f(counts);
    }
    // What the pools after this one can take at least and at most.
    let rest_min: u32 = ranges[i + 1..].iter().map(|r| r.0).sum();
    let rest_max: u32 = ranges[i + 1..].iter().map(|r| r.1).sum();
    let (min, max) = ranges[i];
    let low = min.max(total.saturating_sub(rest_max));
    let high = max.min(total.saturating_sub(rest_min));
    for n in low..=high {
        counts[i] = n;
        if !nodes_with_total(ranges, i + 1, total - n, counts, f) {
            return false;
        }
    }
    counts[i] = 0;
    true
}

/// Call `f` with every choice of one value per list, in lexicographic order, until it
/// returns `false`; `false` when it did.
fn for_each_product(
    choices: &[Vec<Option<u32>>],
    prefix: &mut Vec<Option<u32>>,
    f: &mut dyn FnMut(&[Option<u32>]) -> bool,
) -> bool {
    match choices.split_first() {
        None => f(prefix),
        Some((first, rest)) => {
            for c in first {
                prefix.push(*c);
                let go_on = for_each_product(rest, prefix, f);
                prefix.pop();
                if !go_on {
                    return false;
                }
            }
            true
        }
    }
}

/// `[minReplicas, maxReplicas]` of the HPA that scales workload `w`, if it has one.
fn autoscaler_bounds(unit: &Unit, objects: &[Object], w: usize) -> Option<(u32, u32)> {
    let workload = objects[w].workload()?;
    if matches!(workload.kind, WorkloadKind::DaemonSet | WorkloadKind::Pod) {
        return None;
    }
    let (_, h) = unit.autoscaler_of(objects, w)?;
    let min = h.min_replicas.value.max(1) as u32;
    Some((min, (h.max_replicas.value.max(1) as u32).max(min)))
}

/// A class id per pool: pools of one class are interchangeable for this unit.
fn interchangeable(config: &Config, unit: &Unit, objects: &[Object]) -> Vec<usize> {
    let pools = &config.cluster.pools;
    // Label keys the unit's pods select nodes by (nodeSelector, required and preferred node
    // affinity): their values matter.
    let selected_keys: BTreeSet<&str> = unit
        .workloads()
        .filter_map(|w| objects[w].workload())
        .flat_map(|w| {
            let spec = &w.template.spec;
            let node = &spec.affinity.node;
            let terms = node
                .required
                .iter()
                .flat_map(|r| r.value.iter())
                .chain(node.preferred.iter().map(|p| &p.preference));
            spec.node_selector
                .keys()
                .map(String::as_str)
                .chain(terms.flat_map(|t| t.match_expressions.iter().map(|r| r.key.as_str())))
        })
        .collect();
    let selected = |key: &str| selected_keys.contains(key);
    // Nodes the unit's pods name (`nodeName`): the pool that holds one is not like the others.
    let named: BTreeSet<&str> = unit
        .workloads()
        .filter_map(|w| objects[w].workload())
        .filter_map(|w| w.template.spec.node_name.as_ref().map(|n| n.value.as_str()))
        .collect();
    let signatures: Vec<String> = pools
        .iter()
        .map(|p| {
            let labels: Vec<String> = p
                .labels
                .iter()
                .map(|(k, v)| {
                    // A value only this pool has, on a key nothing selects by, is a name.
                    let unique = pools.iter().filter(|o| o.labels.get(k) == Some(v)).count() == 1;
                    if unique && !selected(k) {
                        format!("{k}=<unique>")
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect();
            // A pool's bounds are the model's only where the cluster autoscaler scales it;
            // elsewhere they only bound the search, and two pools of one size are alike.
            let bounds = if config.has_event(|e| e.autoscales(p)) {
                format!("{}..{}", p.min, p.max)
            } else {
                "fixed".to_string()
            };
            format!(
                "{labels:?}|{:?}|{:?}|{bounds}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{}",
                p.zones,
                p.node_names
                    .iter()
                    .filter(|n| named.contains(n.as_str()))
                    .collect::<Vec<_>>(),
                p.allocatable,
                p.scalar_allocatable,
                p.reserved,
                p.taints.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>(),
                p.hostname_labels,
                unit.node_pools.contains(&p.name),
                p.unschedulable
            )
        })
        .collect();
    signatures
        .iter()
        .map(|s| signatures.iter().position(|o| o == s).unwrap_or(0))
        .collect()
}

/// Counts with each class's counts sorted: equal for topologies that only swap
/// interchangeable pools.
fn canonical(counts: &[u32], classes: &[usize]) -> Vec<u32> {
    let mut out = counts.to_vec();
    let mut seen = HashSet::new();
    for &class in classes {
        if !seen.insert(class) {
            continue;
        }
        let members: Vec<usize> = (0..classes.len()).filter(|&i| classes[i] == class).collect();
        let mut values: Vec<u32> = members.iter().map(|&i| counts[i]).collect();
        values.sort_unstable_by(|a, b| b.cmp(a));
        for (i, v) in members.into_iter().zip(values) {
            out[i] = v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_total(ranges: &[(u32, u32)], total: u32) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        nodes_with_total(ranges, 0, total, &mut vec![0; ranges.len()], &mut |c| {
            out.push(c.to_vec());
            true
        });
        out
    }

    #[test]
    fn node_counts_of_one_total_within_bounds() {
        assert_eq!(with_total(&[(0, 2), (1, 1)], 2), vec![vec![1, 1]]);
        assert_eq!(
            with_total(&[(0, 3), (0, 3)], 2),
            vec![vec![0, 2], vec![1, 1], vec![2, 0]]
        );
        assert_eq!(with_total(&[(0, 3), (0, 3)], 7), Vec::<Vec<u32>>::new());
        // Sixteen pools of 0..=4 nodes: the first total's counts, not 5^16 vectors.
        assert_eq!(with_total(&[(0, 4); 16], 1).len(), 16);
    }

    #[test]
    fn swapped_interchangeable_pools_are_one_topology() {
        assert_eq!(canonical(&[1, 2, 5], &[0, 0, 2]), vec![2, 1, 5]);
        assert_eq!(canonical(&[2, 1, 5], &[0, 0, 2]), vec![2, 1, 5]);
        assert_eq!(canonical(&[1, 2, 5], &[0, 1, 2]), vec![1, 2, 5]);
    }

    #[test]
    fn replica_products() {
        let mut out = Vec::new();
        for_each_product(&[vec![Some(1), Some(2)], vec![None]], &mut Vec::new(), &mut |r| {
            out.push(r.to_vec());
            true
        });
        assert_eq!(out, vec![vec![Some(1), None], vec![Some(2), None]]);
    }
}

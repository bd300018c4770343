//! Which nodes of a topology the model may treat as interchangeable (symmetry reduction over
//! nodes, `kivi_canonical` in `templates/main.pml`).
//!
//! Two nodes are interchangeable when every table the model reads gives them the same value:
//! allocatable, pool and zone, every template's static filters and scores, taints, descheduler
//! verdicts. A spread or affinity domain that holds one node only (a hostname key) is the
//! same to the model as any other such domain. Swapping two interchangeable nodes, with their
//! state and their pods, then maps every behaviour to an equally possible one.
//!
//! Whole classes of nodes can be interchangeable too: the two nodes of zone a and the two of
//! zone b, when nothing but the zone tells them apart and every spread or affinity domain is
//! either inside one of them or outside both. Trading all the nodes of two such classes at once
//! (with their state and pods) maps every behaviour to an equally possible one, with the two
//! zones' domains renamed; nodes one by one cannot, because each zone's nodes share a domain.
//!
//! The fields are destructured without `..`: a new field of the IR does not compile until it
//! is either part of the signature or said not to depend on the node.

use std::collections::BTreeMap;

use super::Ir;
use super::ir::{
    IrAffinityTerm, IrClusterAutoscaler, IrConstraint, IrDescheduler, IrLowUtilization, IrNode, IrTemplate, IrWorkload,
};

/// Per node (index 0 unused): a class number shared by the nodes it is interchangeable with,
/// 0 for a node that has no such peer (or when the reduction is off).
pub fn node_classes(ir: &Ir) -> Vec<u32> {
    let count = ir.nodes.len();
    let mut classes = vec![0; count + 1];
    if !ir.symmetry || count < 2 {
        return classes;
    }
    let mut groups: BTreeMap<Vec<i64>, Vec<usize>> = BTreeMap::new();
    for n in 1..=count {
        if let Some(signature) = signature(ir, n, Domains::Named) {
            groups.entry(signature).or_default().push(n);
        }
    }
    for (class, members) in (1..).zip(groups.values().filter(|m| m.len() > 1)) {
        for &n in members {
            classes[n] = class;
        }
    }
    classes
}

/// Per class of `classes` (as `node_classes` numbers them; index 0 unused): a group number
/// shared by the classes whose nodes may all trade places at once, 0 for a class without such
/// a peer. Two classes of as many nodes are in one group when swapping their nodes (the i-th
/// of one with the i-th of the other) keeps every table the same but for the names of
/// domains: each node's signature with its domains unnamed is its partner's, and every spread
/// and affinity key's domains map onto domains.
pub fn class_groups(ir: &Ir, classes: &[u32]) -> Vec<u32> {
    let count = classes.iter().copied().max().unwrap_or(0) as usize;
    let mut groups = vec![0; count + 1];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count + 1];
    for (n, &class) in classes.iter().enumerate().skip(1).filter(|(_, c)| **c > 0) {
        members[class as usize].push(n);
    }
    let unnamed: Vec<Option<Vec<i64>>> = (0..classes.len())
        .map(|n| {
            if n == 0 {
                None
            } else {
                signature(ir, n, Domains::Unnamed)
            }
        })
        .collect();
    let partitions = domain_partitions(ir);
    let mut next = 0;
    for a in 1..=count {
        if groups[a] != 0 {
            continue;
        }
        let mut group = 0;
        for b in a + 1..=count {
            if groups[b] != 0 || members[b].len() != members[a].len() {
                continue;
            }
            let mut swap: Vec<usize> = (0..classes.len()).collect();
            for (&x, &y) in members[a].iter().zip(&members[b]) {
                swap[x] = y;
                swap[y] = x;
            }
            let alike = members[a]
                .iter()
                .all(|&n| unnamed[n].is_some() && unnamed[n] == unnamed[swap[n]]);
            if alike && partitions.iter().all(|d| maps_domains_onto_domains(d, &swap)) {
                if group == 0 {
                    next += 1;
                    group = next;
                    groups[a] = group;
                }
                groups[b] = group;
            }
        }
    }
    groups
}

/// Every spread constraint's and affinity term's domain of each node.
fn domain_partitions(ir: &Ir) -> Vec<&[u32]> {
    let mut partitions: Vec<&[u32]> = Vec::new();
    for t in &ir.templates {
        partitions.extend(t.hard.iter().chain(&t.soft).map(|c| c.domains.as_slice()));
        partitions.extend(t.affinity_terms.iter().map(|term| term.domains.as_slice()));
    }
    partitions
}

/// Whether moving each node n to `swap[n]` maps the domains of `domains` onto domains: nodes
/// that share a domain still do, nodes that do not still do not, and a node without the key
/// goes to one without it.
fn maps_domains_onto_domains(domains: &[u32], swap: &[usize]) -> bool {
    let of = |n: usize| domains.get(n).copied().unwrap_or(0);
    let mut forward: BTreeMap<u32, u32> = BTreeMap::new();
    let mut backward: BTreeMap<u32, u32> = BTreeMap::new();
    (1..swap.len()).all(|n| {
        let (from, to) = (of(n), of(swap[n]));
        (from == 0) == (to == 0)
            && *forward.entry(from).or_insert(to) == to
            && *backward.entry(to).or_insert(from) == from
    })
}

/// How a node's signature shows its spread and affinity domains.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Domains {
    /// As `domain` does: a shared domain by its number.
    Named,
    /// Only whether the node has one, and how many nodes share it (class_groups checks
    /// separately that a swap maps domains onto domains).
    Unnamed,
}

/// Everything the model knows about node `n` (1-based) but its index; `None` when something
/// names the node itself (a pod's `nodeName`).
fn signature(ir: &Ir, n: usize, view: Domains) -> Option<Vec<i64>> {
    let Ir {
        memory_unit: _,
        scalar_resources: _,
        rollout_order: _,
        nodes,
        templates,
        workloads,
        pod_slots: _,
        scoring: _,
        load_change: _,
        node_maintenance: _,
        descheduler,
        gitops_sync: _,
        overload_threshold: _,
        checks: _,
        probe: _,
        min_available: _,
        min_resettable: _,
        disruption_budgets: _,
        node_failure: _,
        node_drain: _,
        apply: _,
        params: _,
        cluster_autoscaler,
        stale_reads: _,
        controller_lag: _,
        symmetry: _,
        volumes,
        // Registered events take integer params; none names a node.
        events: _,
    } = ir;
    let bit = |mask: u32| i64::from((mask >> n) & 1);
    let domain_of = |domains: &[u32]| match view {
        Domains::Named => domain(domains, n, nodes.len()),
        Domains::Unnamed => domain_size(domains, n),
    };
    let mut s = Vec::new();

    let IrNode {
        cpu,
        mem,
        pods,
        pods_allocatable,
        scaling_pool,
        absent,
        zone,
        cordoned: _,
        scalars,
    } = &nodes[n - 1];
    // `cordoned` is state, which the model swaps with the node.
    s.extend([
        *cpu,
        *mem,
        *pods,
        *pods_allocatable,
        i64::from(*scaling_pool),
        i64::from(*absent),
        i64::from(*zone),
    ]);
    s.extend(scalars.iter().copied());
    // A claim's volume is in one zone, which the state names by number: only nodes of the
    // same volume zone, that every claim may use alike, trade places.
    if let Some(v) = volumes {
        s.push(i64::from(v.node_zone[n - 1]));
        s.extend(v.workloads.iter().flatten().map(|w| bit(w.nodes)));
    }

    for t in templates {
        s.extend(template_signature(t, n, &bit, &domain_of)?);
    }

    for w in workloads {
        let IrWorkload { pinned, .. } = w;
        // A DaemonSet pod belongs to its node's slot: the model moves it with its node. A
        // DaemonSet that has no pod for some nodes tells those apart.
        s.push(i64::from(pinned.contains(&(n as u32))));
    }

    if let Some(d) = descheduler {
        s.extend(descheduler_signature(d, &bit));
    }
    if let Some(IrClusterAutoscaler {
        pools: _,
        scale_down_utilization: _,
    }) = cluster_autoscaler
    {
        // Per node only through its pool and zone, above.
    }
    Some(s)
}

/// What template `t` says of node `n`: its filters and domains there; `None` when the
/// template names the node (`nodeName`).
fn template_signature(
    t: &IrTemplate,
    n: usize,
    bit: &dyn Fn(u32) -> i64,
    domain_of: &dyn Fn(&[u32]) -> i64,
) -> Option<Vec<i64>> {
    let mut s = Vec::new();
    let IrTemplate {
        workload: _,
        cpu: _,
        mem: _,
        scalars: _,
        score_cpu: _,
        score_mem: _,
        static_nodes,
        affinity_raw,
        taint_raw,
        no_execute,
        node_name,
        hard,
        soft,
        affinity_terms,
        require_all: _,
        tolerates_cordon: _,
        failure_eviction: _,
        daemon: _,
    } = t;
    if *node_name as usize == n {
        return None;
    }
    s.extend([bit(*static_nodes), bit(*no_execute)]);
    s.push(affinity_raw.get(n).copied().unwrap_or(0));
    s.push(taint_raw.get(n).copied().unwrap_or(0));
    for c in hard.iter().chain(soft) {
        let IrConstraint {
            max_skew: _,
            min_domains: _,
            domains,
            domain_count: _,
            included,
            policy_nodes,
            counts_template: _,
            self_match: _,
            hostname: _,
            same_revision: _,
            honor_taints: _,
        } = c;
        s.extend([domain_of(domains), bit(*included), bit(*policy_nodes)]);
    }
    for term in affinity_terms {
        let IrAffinityTerm {
            anti: _,
            domains,
            domain_count: _,
            counts: _,
            self_match: _,
        } = term;
        s.push(domain_of(domains));
    }
    Some(s)
}

/// What the descheduler's static verdicts say of a node (through `bit`, the node's bit of a mask).
fn descheduler_signature(d: &IrDescheduler, bit: &dyn Fn(u32) -> i64) -> Vec<i64> {
    let mut s = Vec::new();
    let IrDescheduler {
        remove_duplicates: _,
        duplicates_evictable: _,
        spread: _,
        spread_hard: _,
        spread_soft: _,
        spread_evictable: _,
        balance_node_fit: _,
        fit_nodes,
        duplicate_keys: _,
        duplicate_key_count: _,
        duplicate_lists: _,
        eviction_rank: _,
        max_rank: _,
        taints: _,
        taints_evictable: _,
        taint_violations,
        affinity_required: _,
        affinity_preferred: _,
        affinity_evictable: _,
        affinity_violations,
        low_utilization,
        node_fit: _,
    } = d;
    s.extend(fit_nodes.iter().map(|m| bit(*m)));
    s.extend(taint_violations.iter().map(|m| bit(*m)));
    s.extend(affinity_violations.iter().map(|m| bit(*m)));
    if let Some(IrLowUtilization {
        thresholds: _,
        targets: _,
        number_of_nodes: _,
        evictable: _,
    }) = low_utilization
    {
        // Per node only through its allocatable, above.
    }
    s
}

/// A node's spread or affinity domain: 0 for none, -1 for a domain of its own (any two such
/// domains are alike), else the domain, which it shares with other nodes.
fn domain(domains: &[u32], n: usize, nodes: usize) -> i64 {
    let d = domains.get(n).copied().unwrap_or(0);
    if d == 0 {
        return 0;
    }
    let shared = (1..=nodes).any(|m| m != n && domains.get(m).copied() == Some(d));
    if shared { i64::from(d) } else { -1 }
}

/// How many nodes share node `n`'s domain (0: the node lacks the key).
fn domain_size(domains: &[u32], n: usize) -> i64 {
    match domains.get(n).copied().unwrap_or(0) {
        0 => 0,
        d => domains.iter().skip(1).filter(|&&x| x == d).count() as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_domains_are_alike_and_shared_ones_are_not() {
        // nodes 1, 2 in zone 1; node 3 in zone 2; node 4 alone in zone 3
        let zones = [0, 1, 1, 2, 3];
        assert_eq!(domain(&zones, 1, 4), 1);
        assert_eq!(domain(&zones, 2, 4), 1);
        assert_eq!(domain(&zones, 3, 4), -1);
        assert_eq!(domain(&zones, 4, 4), -1);
        assert_eq!(domain(&[0, 0, 5], 1, 2), 0);
    }

    #[test]
    fn a_swap_of_zones_maps_domains_onto_domains() {
        // nodes 1, 2 in zone 1; 3, 4 in zone 2; 5 in zone 3; 6 without the key
        let zones = [0, 1, 1, 2, 2, 3, 0];
        let swap = |pairs: &[(usize, usize)]| {
            let mut s: Vec<usize> = (0..zones.len()).collect();
            for &(a, b) in pairs {
                s[a] = b;
                s[b] = a;
            }
            s
        };
        assert!(maps_domains_onto_domains(&zones, &swap(&[(1, 3), (2, 4)])));
        assert!(maps_domains_onto_domains(&zones, &swap(&[(1, 2)])));
        // half of zone 1 with half of zone 2: the zones would be split
        assert!(!maps_domains_onto_domains(&zones, &swap(&[(1, 3)])));
        // a node without the key with one that has it
        assert!(!maps_domains_onto_domains(&zones, &swap(&[(5, 6)])));
        assert_eq!(domain_size(&zones, 3), 2);
        assert_eq!(domain_size(&zones, 5), 1);
        assert_eq!(domain_size(&zones, 6), 0);
    }
}

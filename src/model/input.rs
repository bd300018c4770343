//! What one compiled model reads at run time: the topology's nodes, pods and tables, as lines
//! of `table index value` (integers only), in the order `init` in `templates/main.pml` reads
//! them. The table numbers come from [`TABLES`], which also renders `init`'s dispatch, so the
//! two cannot drift apart.

use std::fmt::Write as _;

use serde::Serialize;

use super::Ir;
use super::ir::{HPA_SYNC_SECONDS, IrAffinityTerm, IrAutoscaler, IrConstraint, SelectPolicy};

mod tables;
pub use tables::{TABLES, assignments};

/// The sizes one compiled model is built for: the largest over the topologies it serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Shape {
    pub max_nodes: usize,
    pub max_pods: usize,
    /// Largest domain count of a spread constraint or affinity term (at least 1: SPIN rejects
    /// empty constant loops).
    pub max_domain: u32,
    /// Entries of an autoscaler's recommendations log and of each scale events log (1 when no
    /// autoscaler keeps one).
    pub hpa_log: usize,
    /// Most scaling policies of one direction of an autoscaler (at least 1).
    pub hpa_policies: usize,
    /// Some autoscaler keeps scale events (a policy period longer than the sync period): the
    /// model then ages and forgets them.
    pub hpa_events: bool,
    /// Some topology has a NoExecute taint a pod does not tolerate.
    pub taints: bool,
    /// Most zones a pool the cluster autoscaler scales spans (at least 1).
    pub max_zones: u32,
}

impl Shape {
    /// The shape that holds every one of `irs`.
    pub fn of<'a>(irs: impl IntoIterator<Item = &'a Ir>) -> Shape {
        let mut shape = Shape {
            max_domain: 1,
            hpa_log: 1,
            hpa_policies: 1,
            max_zones: 1,
            ..Shape::default()
        };
        for ir in irs {
            let (constraints, terms, _) = flatten(ir);
            shape.max_nodes = shape.max_nodes.max(ir.nodes.len());
            shape.max_pods = shape.max_pods.max(ir.pod_slots);
            shape.max_domain = constraints
                .iter()
                .map(|c| c.domain_count)
                .chain(terms.iter().map(|t| t.domain_count))
                .fold(shape.max_domain, u32::max);
            for a in ir.workloads.iter().filter_map(|w| w.autoscaler.as_ref()) {
                if a.keeps_logs() {
                    shape.hpa_log = shape.hpa_log.max(HPA_MODEL_LOG);
                }
                shape.hpa_events |= a.keeps_events();
                let policies = a.scale_up.policies.len().max(a.scale_down.policies.len());
                shape.hpa_policies = shape.hpa_policies.max(policies);
            }
            shape.taints |= ir.templates.iter().any(|t| t.no_execute != 0);
            if let Some(ca) = &ir.cluster_autoscaler {
                shape.max_zones = ca.pools.iter().map(|p| p.zones).fold(shape.max_zones, u32::max);
            }
        }
        shape.max_nodes = shape.max_nodes.max(1);
        shape.max_pods = shape.max_pods.max(1);
        shape
    }

    /// The smallest shape that holds both.
    pub fn join(&self, other: &Shape) -> Shape {
        Shape {
            max_nodes: self.max_nodes.max(other.max_nodes),
            max_pods: self.max_pods.max(other.max_pods),
            max_domain: self.max_domain.max(other.max_domain),
            hpa_log: self.hpa_log.max(other.hpa_log),
            hpa_policies: self.hpa_policies.max(other.hpa_policies),
            hpa_events: self.hpa_events || other.hpa_events,
            taints: self.taints || other.taints,
            max_zones: self.max_zones.max(other.max_zones),
        }
    }
}

/// Where each template's constraints and terms start in the flattened tables (1-based).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Layout {
    pub hard_first: usize,
    pub soft_first: usize,
    pub term_first: usize,
}

/// Spread constraints and affinity terms of all templates, one after the other, and where each
/// template's begin (entry 0 unused).
pub fn flatten(ir: &Ir) -> (Vec<&IrConstraint>, Vec<&IrAffinityTerm>, Vec<Layout>) {
    let mut constraints = Vec::new();
    let mut terms = Vec::new();
    let mut layout = vec![Layout {
        hard_first: 0,
        soft_first: 0,
        term_first: 0,
    }];
    for t in &ir.templates {
        let hard_first = constraints.len() + 1;
        constraints.extend(t.hard.iter());
        let soft_first = constraints.len() + 1;
        constraints.extend(t.soft.iter());
        let term_first = terms.len() + 1;
        terms.extend(t.affinity_terms.iter());
        layout.push(Layout {
            hard_first,
            soft_first,
            term_first,
        });
    }
    (constraints, terms, layout)
}

/// Bitmask over templates (bit t = template t) that a constraint's selector counts.
pub fn counts_mask(c: &IrConstraint) -> u32 {
    c.counts_template
        .iter()
        .enumerate()
        .fold(0, |m, (t, yes)| if *yes { m | (1 << t) } else { m })
}

/// Entries of each HPA log in a verification model: past them the oldest entry is dropped, as
/// if it had aged out (docs/conformance.md).
const HPA_MODEL_LOG: usize = 2;

/// An autoscaler's rules as the model's tables (src/controllers/autoscaler/autoscaler_normalization.pml)
/// for workload `wi`, with `policies` entries per direction: `(table, index, value)`, durations
/// as age classes.
pub fn autoscaler_rules(a: &IrAutoscaler, wi: usize, policies: usize) -> Vec<(&'static str, usize, i64)> {
    let mut rows = vec![
        ("hpa_behavior", wi, i64::from(a.behavior)),
        ("hpa_sync_age", wi, a.class(HPA_SYNC_SECONDS)),
        ("hpa_rec_expiry", wi, a.recommendation_expiry()),
        ("hpa_event_expiry", wi, a.event_expiry()),
    ];
    for (d, rules) in [&a.scale_up, &a.scale_down].into_iter().enumerate() {
        let dir = wi * 2 + d;
        let select = match rules.select {
            SelectPolicy::Max => 0,
            SelectPolicy::Min => 1,
            SelectPolicy::Disabled => 2,
        };
        rows.push(("hpa_select", dir, select));
        rows.push(("hpa_window", dir, a.class(rules.window)));
        let longest = rules.policies.iter().map(|p| p.period).max().unwrap_or(0);
        rows.push(("hpa_longest", dir, a.class(longest)));
        for (i, p) in rules.policies.iter().enumerate().take(policies) {
            let at = dir * policies + i;
            rows.push(("hpa_policy", at, if p.percent { 2 } else { 1 }));
            rows.push(("hpa_policy_value", at, p.value));
            rows.push(("hpa_policy_period", at, a.class(p.period)));
        }
    }
    rows
}

/// Collects `table index value` lines; tables by name, so a typo fails loudly in tests.
struct Writer {
    out: String,
}

impl Writer {
    fn set(&mut self, table: &str, index: usize, value: i64) {
        let id = TABLES
            .iter()
            .position(|t| t.strip_suffix("[]").unwrap_or(t) == table)
            .unwrap_or_else(|| panic!("input table `{table}` is not in TABLES"));
        let _ = writeln!(self.out, "{} {index} {value}", id + 1);
    }

    /// Tables start zeroed: only non-zero entries are written.
    fn nonzero(&mut self, table: &str, index: usize, value: i64) {
        if value != 0 {
            self.set(table, index, value);
        }
    }
}

/// A workload (1-based model index) a check's monitor leaves out ([`input_sparing`]).
pub type Spared = (crate::checks::CheckId, usize);

const RUNNING: i64 = 3;
const TERMINATING: i64 = 4;

/// The input of one topology's IR for a model of `shape`, monitoring the `enabled` checks of
/// `ir.checks`.
pub fn input(ir: &Ir, shape: &Shape, enabled: &[crate::checks::CheckId]) -> String {
    input_sparing(ir, shape, enabled, &[])
}

/// The same, with each `(check, workload)` of `spared` (the workload's 1-based index) left out
/// of its check's monitor: `--all` looks for the check's next violation, a fix candidate for
/// one violation is verified apart from the others.
pub fn input_sparing(ir: &Ir, shape: &Shape, enabled: &[crate::checks::CheckId], spared: &[Spared]) -> String {
    let mut w = Writer { out: String::new() };
    let node_stride = shape.max_nodes + 1;
    w.set("node_count", 0, ir.nodes.len() as i64);
    w.set("pod_count", 0, ir.pod_slots as i64);
    write_nodes(&mut w, ir, shape);
    let (constraints, terms, layout) = flatten(ir);
    write_templates(&mut w, ir, node_stride, &layout);
    write_budgets_and_spread(&mut w, ir, node_stride, &terms, &constraints);
    let mut taint_work = 0;
    let mut kubelet_work = 0;
    for (i, wl) in ir.workloads.iter().enumerate() {
        let (taint, kubelet) = write_workload(&mut w, ir, shape, i, wl);
        taint_work += taint;
        kubelet_work += kubelet;
    }
    w.set("dc_work", 0, ir.workloads.len() as i64);
    w.nonzero("taint_work", 0, taint_work);
    w.nonzero("kubelet_work", 0, kubelet_work);
    write_controllers(&mut w, ir);
    for (k, check) in ir.checks.iter().enumerate() {
        if enabled.contains(check) {
            w.set("check_on", k + 1, 1);
        }
        for &(_, workload) in spared.iter().filter(|(c, _)| c == check) {
            w.set("check_spared", (k + 1) * (ir.workloads.len() + 1) + workload, 1);
        }
    }
    w.out
}

/// The nodes: capacity, readiness, pools, zones, symmetry classes, and the spread weights per
/// domain size.
fn write_nodes(w: &mut Writer, ir: &Ir, shape: &Shape) {
    let node_stride = shape.max_nodes + 1;
    for (i, n) in ir.nodes.iter().enumerate() {
        let n_i = i + 1;
        w.set("node_cpu", n_i, n.cpu);
        w.set("node_mem", n_i, n.mem);
        w.set("node_pod_cap", n_i, n.pods);
        for (k, allocatable) in n.scalars.iter().enumerate() {
            w.nonzero("node_scalar", k * node_stride + n_i, *allocatable);
        }
        if n.absent {
            w.set("absent", n_i, 1);
        } else {
            w.set("node_ready", n_i, 1);
        }
        w.nonzero("cordoned", n_i, i64::from(n.cordoned));
        w.nonzero("node_pool", n_i, i64::from(n.scaling_pool));
        w.nonzero("node_zone", n_i, i64::from(n.zone));
        if let Some(v) = &ir.volumes {
            w.nonzero("node_volume_zone", n_i, i64::from(v.node_zone[i]));
        }
        if ir.descheduler.as_ref().is_some_and(|d| d.low_utilization.is_some()) {
            w.set("ds_pods_allocatable", n_i, n.pods_allocatable);
        }
    }
    let classes = super::symmetry::node_classes(ir);
    for (n, class) in classes.iter().enumerate().skip(1) {
        w.nonzero("node_class", n, i64::from(*class));
    }
    for (k, group) in super::symmetry::class_groups(ir, &classes).iter().enumerate().skip(1) {
        w.nonzero("class_group", k, i64::from(*group));
    }
    // PodTopologySpread's topologyNormalizingWeight, ln(size + 2) × 1000, per size.
    for size in 0..=shape.max_nodes {
        w.set("ln_weight", size, (((size as f64) + 2.0).ln() * 1000.0).round() as i64);
    }
}

/// The pod templates: requests, filters, and their spread and affinity layout.
fn write_templates(w: &mut Writer, ir: &Ir, node_stride: usize, layout: &[Layout]) {
    for (i, t) in ir.templates.iter().enumerate() {
        let ti = i + 1;
        w.set("template_workload", ti, t.workload as i64);
        w.nonzero("template_cpu", ti, t.cpu);
        w.nonzero("template_mem", ti, t.mem);
        w.nonzero("template_score_cpu", ti, t.score_cpu);
        w.nonzero("template_score_mem", ti, t.score_mem);
        for (k, request) in t.scalars.iter().enumerate() {
            w.nonzero("template_scalar", k * (ir.templates.len() + 1) + ti, *request);
        }
        w.nonzero("template_static_nodes", ti, i64::from(t.static_nodes));
        w.nonzero("template_node_name", ti, i64::from(t.node_name));
        w.nonzero("template_no_execute", ti, i64::from(t.no_execute));
        w.nonzero("template_tolerates_cordon", ti, i64::from(t.tolerates_cordon));
        w.nonzero("template_failure_eviction", ti, i64::from(t.failure_eviction));
        w.nonzero("template_daemon", ti, i64::from(t.daemon));
        w.set("template_hard_first", ti, layout[ti].hard_first as i64);
        w.nonzero("template_hard_count", ti, t.hard.len() as i64);
        w.set("template_soft_first", ti, layout[ti].soft_first as i64);
        w.nonzero("template_soft_count", ti, t.soft.len() as i64);
        w.nonzero("template_require_all", ti, i64::from(t.require_all));
        w.set("template_term_first", ti, layout[ti].term_first as i64);
        w.nonzero("template_term_count", ti, t.affinity_terms.len() as i64);
        for n in 1..=ir.nodes.len() {
            w.nonzero(
                "affinity_raw",
                ti * node_stride + n,
                t.affinity_raw.get(n).copied().unwrap_or(0),
            );
            w.nonzero(
                "taint_raw",
                ti * node_stride + n,
                t.taint_raw.get(n).copied().unwrap_or(0),
            );
        }
    }
}

/// The disruption budgets, the pod (anti-)affinity terms and the spread constraints.
fn write_budgets_and_spread(
    w: &mut Writer,
    ir: &Ir,
    node_stride: usize,
    terms: &[&IrAffinityTerm],
    constraints: &[&IrConstraint],
) {
    for (i, b) in ir.disruption_budgets.iter().enumerate() {
        let bi = i + 1;
        w.set("budget_workloads", bi, i64::from(b.workloads));
        w.nonzero("budget_max_unavailable", bi, i64::from(b.max_unavailable));
        w.nonzero("budget_value", bi, b.value);
        w.nonzero("budget_always_allow", bi, i64::from(b.always_allow));
    }
    for (i, c) in terms.iter().enumerate() {
        let ci = i + 1;
        w.nonzero("term_anti", ci, i64::from(c.anti));
        w.nonzero("term_self", ci, i64::from(c.self_match));
        w.nonzero("term_counts", ci, i64::from(c.counts));
        for n in 1..=ir.nodes.len() {
            w.nonzero("term_domain", ci * node_stride + n, i64::from(c.domains[n]));
        }
    }
    for (i, c) in constraints.iter().enumerate() {
        let ci = i + 1;
        w.set("constraint_skew", ci, c.max_skew);
        w.nonzero("constraint_min_domains", ci, c.min_domains);
        w.nonzero("constraint_domain_count", ci, i64::from(c.domain_count));
        w.nonzero("constraint_included", ci, i64::from(c.included));
        w.nonzero("constraint_policy_nodes", ci, i64::from(c.policy_nodes));
        w.nonzero("constraint_counts", ci, i64::from(counts_mask(c)));
        w.nonzero("constraint_self", ci, i64::from(c.self_match));
        w.nonzero("constraint_same_revision", ci, i64::from(c.same_revision));
        w.nonzero("constraint_honor_taints", ci, i64::from(c.honor_taints));
        w.nonzero("constraint_hostname", ci, i64::from(c.hostname));
        for n in 1..=ir.nodes.len() {
            w.nonzero("constraint_domain", ci * node_stride + n, i64::from(c.domains[n]));
        }
    }
}

/// Workload `i` (0-based): its slots, autoscaler, rollout, bounds and the pods already running;
/// the taint and kubelet work those pods start with.
fn write_workload(w: &mut Writer, ir: &Ir, shape: &Shape, i: usize, wl: &super::ir::IrWorkload) -> (i64, i64) {
    let mut taint_work = 0;
    let mut kubelet_work = 0;
    let wi = i + 1;
    w.set("workload_first_slot", wi, wl.first_slot as i64);
    w.set("workload_slots", wi, wl.slots as i64);
    w.set("workload_template", wi, wl.template as i64);
    w.set("workload_level_count", wi, wl.load_levels.len() as i64);
    w.set("workload_base", wi, wl.load_base);
    w.nonzero("workload_startup", wi, wl.startup_level);
    w.nonzero("workload_startup_unready", wi, i64::from(wl.startup_unready));
    for (l, level) in wl.load_levels.iter().enumerate() {
        w.nonzero("workload_level", wi * 8 + l + 1, *level);
    }
    for s in wl.first_slot..wl.first_slot + wl.slots {
        w.set("slot_template", s, wl.template as i64);
    }
    for (k, node) in wl.pinned.iter().enumerate() {
        w.set("slot_node", wl.first_slot + k, i64::from(*node));
    }
    // A claim per pod (its slot), else one for the workload (its first slot).
    if let Some(v) = ir.volumes.as_ref().and_then(|v| v.workloads[i].as_ref()) {
        for s in wl.first_slot..wl.first_slot + wl.slots {
            let claim = if v.per_pod { s } else { wl.first_slot };
            w.set("claim_of_slot", s, claim as i64);
            if claim == s {
                w.set("claim_nodes", s, i64::from(v.nodes));
                w.nonzero("claim_fixed", s, i64::from(v.fixed));
                w.nonzero("claim_choices", s, i64::from(v.choices));
            }
        }
    }
    if let Some(a) = &wl.autoscaler {
        w.set("workload_autoscaled", wi, 1);
        w.set("hpa_min", wi, a.min);
        w.set("hpa_max", wi, a.max);
        w.set("hpa_target", wi, a.target);
        w.set("hpa_metrics", wi, a.metrics.bits());
        w.nonzero("hpa_memory_target", wi, a.metrics.memory);
        for (table, index, value) in autoscaler_rules(a, wi, shape.hpa_policies) {
            w.nonzero(table, index, value);
        }
        // The autoscaler has been running: its last recommendation, one sync period old,
        // is the starting replicas, within [min, max] as the model keeps every one
        // (src/controllers/autoscaler/autoscaler.pml).
        let sync = a.class(HPA_SYNC_SECONDS);
        if sync < a.recommendation_expiry() {
            w.set("hpa_rec", wi * shape.hpa_log, wl.replicas.max(a.min).min(a.max));
            w.set("hpa_rec_age", wi * shape.hpa_log, sync);
            w.set("hpa_rec_len", wi, 1);
        }
    }
    if let Some(r) = &wl.rollout {
        let kind = match (r.recreate, r.partition) {
            (true, _) => 2,
            (false, Some(_)) => 3,
            (false, None) => 1,
        };
        w.set("rollout_kind", wi, kind);
        w.nonzero("rollout_partition", wi, r.partition.unwrap_or(0));
        w.nonzero("rollout_surge", wi, r.max_surge);
        w.nonzero("rollout_unavailable", wi, r.max_unavailable);
    }
    w.nonzero("workload_stateful", wi, wl.stateful);
    // A bare Pod already being deleted is not wanted any more: nothing recreates it while
    // the kubelet finishes its termination.
    let wanted = if wl.bare && wl.terminating { 0 } else { wl.replicas };
    w.nonzero("spec", wi, wanted);
    w.set("load", wi, wl.steady_level as i64);
    w.set("dc_dirty", wi, 1);
    w.nonzero("min_available", wi, ir.min_available.get(wi).copied().unwrap_or(0));
    w.nonzero("min_resettable", wi, i64::from(ir.min_resettable));
    w.nonzero("workload_bare", wi, i64::from(wl.bare));
    w.nonzero("workload_batch", wi, i64::from(wl.batch));
    w.nonzero(
        "workload_symmetric",
        wi,
        i64::from(ir.symmetry && wl.interchangeable_pods()),
    );
    w.set("workload_manifest_replicas", wi, wl.manifest_replicas);
    if let Some(apply) = &ir.apply {
        w.set("apply_replicas", wi, apply.replicas.get(wi).copied().unwrap_or(-1));
    }
    // Pods already running where the config places them.
    let template = &ir.templates[wl.template - 1];
    let mut slot = wl.first_slot;
    let mut running = 0;
    for &(node, count) in &wl.initial {
        for _ in 0..count {
            if slot >= wl.first_slot + wl.slots {
                break;
            }
            w.set("pod.node", slot, node as i64);
            if wl.terminating {
                // The kubelet has the pod to remove.
                w.set("pod.status", slot, TERMINATING);
                kubelet_work += 1;
                slot += 1;
                continue;
            }
            w.set("pod.status", slot, RUNNING);
            w.set("pod.warm", slot, 1);
            running += 1;
            if (template.no_execute >> node) & 1 == 1 {
                taint_work += 1;
            }
            slot += 1;
        }
    }
    w.nonzero("running", wi, running);
    if !wl.initial.is_empty() && running >= ir.min_available.get(wi).copied().unwrap_or(0) {
        w.set("min_reached", wi, 1);
    }
    (taint_work, kubelet_work)
}

/// The node failures, the descheduler's static verdicts and the cluster autoscaler's pools.
fn write_controllers(w: &mut Writer, ir: &Ir) {
    if let Some(f) = &ir.node_failure {
        w.set("failures_max", 0, i64::from(f.count));
    }
    if let Some(d) = &ir.descheduler {
        for (t, mask) in d.taint_violations.iter().enumerate().skip(1) {
            w.nonzero("ds_taint_bad", t, i64::from(*mask));
        }
        for (t, mask) in d.affinity_violations.iter().enumerate().skip(1) {
            w.nonzero("ds_affinity_bad", t, i64::from(*mask));
        }
        for t in 1..d.fit_nodes.len() {
            w.nonzero("ds_fit_nodes", t, i64::from(d.fit_nodes[t]));
            w.nonzero("ds_dup_keys", t, i64::from(d.duplicate_keys[t]));
            w.nonzero("ds_dup_list", t, i64::from(d.duplicate_lists[t]));
            w.nonzero("ds_rank", t, i64::from(d.eviction_rank[t]));
        }
    }
    if let Some(ca) = &ir.cluster_autoscaler {
        for (i, p) in ca.pools.iter().enumerate() {
            w.set("pool_min", i + 1, i64::from(p.min));
            w.set("pool_max", i + 1, i64::from(p.max));
            w.set("pool_zones", i + 1, i64::from(p.zones));
            w.set("pool_nodes", i + 1, i64::from(p.count));
        }
    }
}

#[cfg(test)]
mod tests;

//! What the scheduler evaluates once per pod template: static filters and scores per node,
//! topology spread constraints and inter-pod affinity terms, taints.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrConstraint {
    pub max_skew: i64,
    pub min_domains: i64,
    /// Domain of each node (1-based, index 0 unused); 0 = the node lacks the key.
    pub domains: Vec<u32>,
    pub domain_count: u32,
    /// Nodes counted under the inclusion policies, as a bitmask (bit n = node n).
    pub included: u32,
    /// The nodes the inclusion policies alone admit (the scheduler also leaves out nodes that
    /// lack another hard constraint's key; the descheduler does not).
    pub policy_nodes: u32,
    /// Which templates' pods the selector counts (index 0 unused).
    pub counts_template: Vec<bool>,
    /// Whether the incoming pod itself matches the selector.
    pub self_match: bool,
    /// The key is `kubernetes.io/hostname`: the soft score's normalising weight counts the
    /// candidate nodes rather than their domains.
    pub hostname: bool,
    /// `matchLabelKeys` has `pod-template-hash`: only pods of the incoming pod's own revision
    /// count (KEP-3243, the fix for spread lost during rolling updates).
    pub same_revision: bool,
    /// `nodeTaintsPolicy: Honor`: nodes that gain a taint the pod does not tolerate while the
    /// model runs (a failed node's unreachable taint, a cordoned node's) stop counting.
    pub honor_taints: bool,
}

/// A required inter-pod (anti-)affinity term as the scheduler's InterPodAffinity filter uses it
/// for one incoming template.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrAffinityTerm {
    /// Anti-affinity (the incoming pod's own, or an existing pod's against it); else affinity.
    pub anti: bool,
    /// Domain of each node under the term's topologyKey (index 0 unused); 0 = lacks the key.
    pub domains: Vec<u32>,
    pub domain_count: u32,
    /// Templates whose pods the term is about (bit t).
    pub counts: u32,
    /// Affinity only: the incoming pod matches its own term (then the first pod may go anywhere).
    pub self_match: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrTemplate {
    pub workload: usize,
    /// Requests in millicores and MiB (rounded up).
    pub cpu: i64,
    pub mem: i64,
    /// Requests of the unit's scalar resources ([`Ir::scalar_resources`]), each in its unit
    /// (rounded up).
    pub scalars: Vec<i64>,
    /// The request NodeResourcesFit scores with (missing requests count 100m and 200 MiB).
    pub score_cpu: i64,
    pub score_mem: i64,
    /// Nodes that pass NodeName, nodeSelector, required node affinity and NoSchedule/NoExecute
    /// taints: the filters that only read static node properties.
    pub static_nodes: u32,
    /// Preferred node affinity raw score per node (index 0 unused).
    pub affinity_raw: Vec<i64>,
    /// Untolerated PreferNoSchedule taints per node (index 0 unused).
    pub taint_raw: Vec<i64>,
    /// Nodes with a NoExecute taint the pod does not tolerate: the taint eviction controller
    /// evicts it from them.
    pub no_execute: u32,
    /// `spec.nodeName`: 1-based node index; 0 when not set; 255 when it names no node of the
    /// topology (the pod then waits forever).
    pub node_name: u32,
    pub hard: Vec<IrConstraint>,
    pub soft: Vec<IrConstraint>,
    /// Required inter-pod affinity and anti-affinity terms that filter nodes for this pod.
    pub affinity_terms: Vec<IrAffinityTerm>,
    /// The pod has spread constraints of its own (not the system defaults): nodes lacking a
    /// soft constraint's key are then ignored by the score.
    pub require_all: bool,
    /// The pod tolerates `node.kubernetes.io/unschedulable:NoSchedule` (DaemonSet pods do), so
    /// NodeUnschedulable lets it onto a cordoned node.
    pub tolerates_cordon: bool,
    /// The taint eviction controller deletes the pod from a failed node (it has no toleration
    /// of `node.kubernetes.io/unreachable:NoExecute` without tolerationSeconds).
    pub failure_eviction: bool,
    /// A DaemonSet's pod: `kubectl drain --ignore-daemonsets` leaves it.
    pub daemon: bool,
}

/// Score weights of the default kube-scheduler profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scoring {
    /// NodeResourcesFit's scoring strategy.
    pub strategy: ScoringStrategy,
    /// RequestedToCapacityRatio's shape, scores scaled to 0..100 (×10, as upstream does).
    pub ratio_shape: Vec<ShapePoint>,
    pub fit: i64,
    pub balanced: i64,
    pub spread: i64,
    pub taint: i64,
    pub affinity: i64,
    /// NodeResourcesFit's resource weights (scoringStrategy.resources).
    pub cpu_weight: i64,
    pub memory_weight: i64,
}

pub(super) fn matches_required_affinity(spec: &PodSpec, name: &str, labels: &Labels) -> bool {
    selects(&spec.node_selector, labels) && spec.affinity.node.required_matches(name, labels)
}

pub(super) fn build_template(
    objects: &[Object],
    workloads: &[usize],
    w: usize,
    nodes: &[(String, Labels, &NodePool)],
    profile: &SchedulerProfile,
    services: &[&Labels],
) -> (IrTemplate, Vec<(usize, Span)>) {
    let default_constraints = profile.default_constraints.as_deref();
    let object = &objects[w];
    let workload = object.workload().expect("a workload");
    let spec = &workload.template.spec;
    // The DaemonSet controller adds tolerations of not-ready, unreachable and unschedulable
    // nodes to its pods (pkg/controller/daemon/util).
    let daemon = workload.kind == WorkloadKind::DaemonSet;
    let request = spec.effective_request();
    let scoring = spec.scoring_request();
    let pass_affinity: Vec<bool> = nodes
        .iter()
        .map(|(name, labels, _)| matches_required_affinity(spec, name, labels))
        .collect();
    let tolerated: Vec<bool> = nodes
        .iter()
        .map(|(_, _, pool)| tolerates_for_scheduling(&spec.tolerations, &pool.taints))
        .collect();
    // The profile's addedAffinity filters and scores like the pod's own node affinity, but
    // spread constraints' nodeAffinityPolicy reads only the pod's (podtopologyspread/common.go).
    let static_nodes = bitmask(nodes.iter().enumerate().map(|(i, (name, labels, _))| {
        spec.node_name.as_ref().is_none_or(|n| &n.value == name)
            && pass_affinity[i]
            && profile.added_affinity.required_matches(name, labels)
            && tolerated[i]
    }));
    let mut affinity_raw = vec![0];
    let mut taint_raw = vec![0];
    // A NoExecute taint evicts the pod unless a toleration tolerates it forever; one with
    // tolerationSeconds only delays the eviction (tainteviction: the scheduler still admits it).
    let no_execute = bitmask(nodes.iter().map(|(_, _, pool)| {
        pool.taints.iter().any(|t| {
            t.effect == TaintEffect::NoExecute
                && !spec
                    .tolerations
                    .iter()
                    .any(|tol| tol.tolerates(t) && tol.toleration_seconds.is_none())
        })
    }));
    let node_name = match &spec.node_name {
        None => 0,
        Some(n) => nodes
            .iter()
            .position(|(name, _, _)| *name == n.value)
            .map_or(255, |i| i as u32 + 1),
    };
    for (name, labels, pool) in nodes {
        affinity_raw.push(
            spec.affinity.node.preferred_weight(name, labels) + profile.added_affinity.preferred_weight(name, labels),
        );
        taint_raw.push(untolerated_prefer_no_schedule(&spec.tolerations, pool));
    }
    let spread = SpreadContext {
        objects,
        workloads,
        w,
        nodes,
        pass_affinity: &pass_affinity,
        tolerated: &tolerated,
    };
    let mut hard = Vec::new();
    let mut soft = Vec::new();
    let mut hard_spans = Vec::new();
    for (k, tsc) in spec.topology_spread_constraints.iter().enumerate() {
        let c = spread.constraint(Spread {
            key: &tsc.topology_key.value,
            max_skew: i64::from(tsc.max_skew.value),
            min_domains: tsc.min_domains.as_ref().map_or(1, |m| i64::from(m.value)),
            selector: tsc.label_selector.as_ref(),
            match_label_keys: &tsc.match_label_keys,
            affinity_policy: tsc.node_affinity_policy,
            taints_policy: tsc.node_taints_policy,
        });
        if tsc.when_unsatisfiable.value == WhenUnsatisfiable::DoNotSchedule {
            hard.push(c);
            hard_spans.push((k, tsc.max_skew.span));
        } else {
            soft.push(c);
        }
    }
    // A node lacking any hard constraint's key is left out of every hard constraint's counts
    // (podtopologyspread/common.go nodeLabelsMatchSpreadConstraints).
    let has_all_keys = bitmask(nodes.iter().map(|(_, labels, _)| {
        spec.topology_spread_constraints
            .iter()
            .filter(|t| t.when_unsatisfiable.value == WhenUnsatisfiable::DoNotSchedule)
            .all(|t| labels.contains_key(&t.topology_key.value))
    }));
    for c in &mut hard {
        c.included &= has_all_keys;
    }
    let require_all = !spec.topology_spread_constraints.is_empty();
    let default_selector = if spec.topology_spread_constraints.is_empty() {
        workload.default_spread_selector(services.iter().copied())
    } else {
        None
    };
    if let Some(default_selector) = &default_selector {
        for (c, when) in default_spread(&spread, default_selector, default_constraints) {
            if when == WhenUnsatisfiable::DoNotSchedule {
                hard.push(c);
                // Not in the manifest: the finding names the scheduler configuration.
                hard_spans.push((usize::MAX, workload.template.span));
            } else {
                soft.push(c);
            }
        }
    }
    (
        IrTemplate {
            workload: workloads.iter().position(|&o| o == w).expect("listed") + 1,
            cpu: request.cpu_millis,
            // In bytes until the unit's memory unit is known (`build`).
            mem: request.memory_bytes,
            // Filled in `build`, once the unit's scalar resources are known.
            scalars: Vec::new(),
            score_cpu: scoring.cpu_millis,
            score_mem: scoring.memory_bytes,
            static_nodes,
            affinity_raw,
            taint_raw,
            no_execute,
            node_name,
            hard,
            soft,
            affinity_terms: Vec::new(),
            require_all,
            tolerates_cordon: daemon
                || tolerates_taint(&spec.tolerations, UNSCHEDULABLE_TAINT, TaintEffect::NoSchedule, false),
            failure_eviction: !daemon
                && !tolerates_taint(&spec.tolerations, UNREACHABLE_TAINT, TaintEffect::NoExecute, true),
            daemon,
        },
        hard_spans,
    )
}

/// The spread constraints of a pod that has none of its own, with their `whenUnsatisfiable`.
fn default_spread(
    spread: &SpreadContext,
    default_selector: &crate::manifest::workload::DefaultSpreadSelector,
    default_constraints: Option<&[crate::manifest::scheduler_config::DefaultSpreadConstraint]>,
) -> Vec<(IrConstraint, WhenUnsatisfiable)> {
    // The cluster's default constraints (the scheduler profile's list, else the system
    // defaults: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway), counting the pods
    // the Services and the owning controller select (DefaultSelector).
    let selector = Some(&default_selector.selector);
    let revision = if default_selector.same_revision {
        vec![POD_TEMPLATE_HASH.to_string()]
    } else {
        Vec::new()
    };
    let system = [
        (HOSTNAME_KEY.to_string(), 3, WhenUnsatisfiable::ScheduleAnyway),
        (ZONE_KEY.to_string(), 5, WhenUnsatisfiable::ScheduleAnyway),
    ];
    let defaults: Vec<(String, i64, WhenUnsatisfiable)> = match default_constraints {
        Some(list) => list
            .iter()
            .map(|c| (c.topology_key.clone(), i64::from(c.max_skew), c.when_unsatisfiable))
            .collect(),
        None => system.to_vec(),
    };
    defaults
        .into_iter()
        .map(|(key, skew, when)| {
            let c = spread.constraint(Spread {
                key: &key,
                max_skew: skew,
                min_domains: 1,
                selector,
                match_label_keys: &revision,
                affinity_policy: InclusionPolicy::Honor,
                taints_policy: InclusionPolicy::Ignore,
            });
            (c, when)
        })
        .collect()
}

/// What the spread constraints of workload `w`'s pods are evaluated against: the unit's
/// workloads and nodes, and which nodes pass the pods' node affinity and taints.
struct SpreadContext<'a> {
    objects: &'a [Object],
    workloads: &'a [usize],
    w: usize,
    nodes: &'a [(String, Labels, &'a NodePool)],
    pass_affinity: &'a [bool],
    tolerated: &'a [bool],
}

/// A topology spread constraint as written (or as the scheduler's defaults give it).
struct Spread<'a> {
    key: &'a str,
    max_skew: i64,
    min_domains: i64,
    selector: Option<&'a LabelSelector>,
    match_label_keys: &'a [String],
    affinity_policy: InclusionPolicy,
    taints_policy: InclusionPolicy,
}

impl SpreadContext<'_> {
    /// The constraint in the model: its domains, the nodes it counts and the templates whose
    /// pods it counts.
    fn constraint(&self, c: Spread) -> IrConstraint {
        let Spread {
            key,
            max_skew,
            min_domains,
            selector,
            match_label_keys,
            affinity_policy,
            taints_policy,
        } = c;
        let (objects, workloads, w, nodes) = (self.objects, self.workloads, self.w, self.nodes);
        let (pass_affinity, tolerated) = (self.pass_affinity, self.tolerated);
        let object = &objects[w];
        let workload = object.workload().expect("a workload");
        let counts = |selector: Option<&LabelSelector>| -> Vec<bool> {
            std::iter::once(false)
                .chain(workloads.iter().map(|&o| {
                    let other = &objects[o];
                    other.namespace() == object.namespace()
                        && selector.is_some_and(|s| s.matches(&other.workload().expect("a workload").template.labels))
                }))
                .collect()
        };
        let (domains, domain_count) = domains_of(key, nodes);
        // matchLabelKeys: the selector also requires the incoming pod's own value of each key
        // it has. pod-template-hash differs per workload and revision.
        let own_labels = &workload.template.labels;
        // Controllers add pod-template-hash; a bare Pod carries the labels its manifest writes.
        let generated_hash = workload.kind != WorkloadKind::Pod;
        let same_revision = generated_hash && match_label_keys.iter().any(|k| k == POD_TEMPLATE_HASH);
        let mut counts_template = counts(selector);
        for (t, &o) in workloads.iter().enumerate() {
            let labels = &objects[o].workload().expect("a workload").template.labels;
            let keys_match = match_label_keys
                .iter()
                .filter(|k| !(generated_hash && *k == POD_TEMPLATE_HASH))
                .all(|k| own_labels.get(k).is_none_or(|v| labels.get(k) == Some(v)));
            if !keys_match || (same_revision && o != w) {
                counts_template[t + 1] = false;
            }
        }
        let included = bitmask((0..nodes.len()).map(|i| {
            (affinity_policy == InclusionPolicy::Ignore || pass_affinity[i])
                && (taints_policy == InclusionPolicy::Ignore || tolerated[i])
        }));
        IrConstraint {
            max_skew,
            min_domains,
            domains,
            domain_count,
            included,
            policy_nodes: included,
            counts_template,
            self_match: selector.is_some_and(|s| s.matches(&workload.template.labels)),
            hostname: key == HOSTNAME_KEY,
            same_revision,
            honor_taints: taints_policy == InclusionPolicy::Honor,
        }
    }
}

/// The required InterPodAffinity terms that filter nodes for workload `w`'s pods
/// (interpodaffinity/filtering.go): its own affinity and anti-affinity, and the anti-affinity
/// of the unit's other pods that select it.
pub(super) fn affinity_terms(
    objects: &[Object],
    workloads: &[usize],
    w: usize,
    nodes: &[(String, Labels, &NodePool)],
) -> (Vec<IrAffinityTerm>, Vec<(String, Span)>) {
    use crate::manifest::pod::PodAffinityTerm;
    let object = &objects[w];
    let spec_of = |o: usize| &objects[o].workload().expect("a workload").template;
    // Whether `term`, written in workload `owner`, covers the pods of workload `other`.
    let covers = |owner: usize, term: &PodAffinityTerm, other: usize| -> bool {
        let ns = objects[other].namespace();
        let namespace_ok = if term.namespace_selector.as_ref().is_some_and(|s| s.is_empty()) {
            true
        } else if term.namespaces.is_empty() {
            objects[owner].namespace() == ns
        } else {
            term.namespaces.iter().any(|n| n == ns)
        };
        namespace_ok
            && term
                .label_selector
                .as_ref()
                .is_some_and(|s| s.matches(&spec_of(other).labels))
    };
    let mask = |owner: usize, term: &PodAffinityTerm| -> u32 {
        workloads.iter().enumerate().fold(
            0,
            |m, (i, &o)| if covers(owner, term, o) { m | (1 << (i + 1)) } else { m },
        )
    };
    let mut terms = Vec::new();
    let mut described = Vec::new();
    let own = spec_of(w);
    for (anti, list, what) in [
        (true, &own.spec.affinity.pod_anti.required, "podAntiAffinity"),
        (false, &own.spec.affinity.pod.required, "podAffinity"),
    ] {
        for (k, term) in list.iter().enumerate() {
            let (domains, domain_count) = domains_of(&term.topology_key.value, nodes);
            let counts = mask(w, term);
            let self_match = covers(w, term, w);
            // A required affinity to pods no scanned manifest defines (a database another
            // repository deploys): kivi-lint cannot know where they run, so it assumes they
            // run in every domain rather than claim the pod stays Pending (units.rs notes it).
            if !anti && counts == 0 && !self_match {
                continue;
            }
            terms.push(IrAffinityTerm {
                anti,
                domains,
                domain_count,
                counts,
                self_match,
            });
            described.push((
                format!(
                    "{what} required term {k} ({}) of {}",
                    term.topology_key.value, object.id
                ),
                term.topology_key.span,
            ));
        }
    }
    // Existing pods' anti-affinity against this pod: pods of `other` block the domains (under
    // other's key) they run in.
    for (i, &other) in workloads.iter().enumerate() {
        if other == w {
            continue;
        }
        for (k, term) in spec_of(other).spec.affinity.pod_anti.required.iter().enumerate() {
            if covers(other, term, w) {
                let (domains, domain_count) = domains_of(&term.topology_key.value, nodes);
                terms.push(IrAffinityTerm {
                    anti: true,
                    domains,
                    domain_count,
                    counts: 1 << (i + 1),
                    self_match: false,
                });
                described.push((
                    format!(
                        "podAntiAffinity required term {k} ({}) of {}",
                        term.topology_key.value, objects[other].id
                    ),
                    term.topology_key.span,
                ));
            }
        }
    }
    (terms, described)
}

/// Whether a toleration tolerates the taint `key` with `effect` (`forever`: without
/// tolerationSeconds).
pub(super) fn tolerates_taint(tolerations: &[Toleration], key: &str, effect: TaintEffect, forever: bool) -> bool {
    let taint = crate::manifest::taint::Taint {
        key: key.to_string(),
        value: String::new(),
        effect,
    };
    tolerations
        .iter()
        .any(|t| t.tolerates(&taint) && (!forever || t.toleration_seconds.is_none()))
}

pub(super) fn untolerated_prefer_no_schedule(tolerations: &[Toleration], pool: &NodePool) -> i64 {
    pool.taints
        .iter()
        .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
        .filter(|t| {
            !tolerations
                .iter()
                .filter(|tol| tol.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule))
                .any(|tol| tol.tolerates(t))
        })
        .count() as i64
}

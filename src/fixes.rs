//! Fixes: for a violation, the most likely one-field change to the manifests. Each candidate
//! is applied to a copy of the unit's objects and the violated check is verified again on the
//! cluster where the counterexample was found (one topology, so a fix costs one pan run, not
//! a search); only a change the model checker verifies there is suggested.
//!
//! Candidates come from the field the finding points at: a hard spread constraint's
//! `maxSkew`, a required anti-affinity term's `topologyKey`, a PodDisruptionBudget's
//! `minAvailable`/`maxUnavailable`, a Deployment's `maxSurge`, the `spec.replicas` of an
//! autoscaled workload, a toleration's `tolerationSeconds`, a descheduler plugin.

use std::sync::atomic::AtomicBool;

use crate::analysis::Analysis;
use crate::engine::Engine;
use crate::findings::Verdict;
use crate::manifest::descheduler::PluginArgs;
use crate::manifest::pod::{PodSpec, WeightedPodAffinityTerm, WhenUnsatisfiable};
use crate::manifest::quantity::IntOrPercent;
use crate::manifest::workload::UpdateStrategy;
use crate::manifest::{Body, Object, WorkloadKind};
use crate::model::Generator;
use crate::scaling::{self, UnitResult};
use crate::source::{Span, Spanned};

/// A verified change that makes the violated check hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// One line, in manifest terms.
    pub summary: String,
    /// The field to change.
    pub location: Span,
    /// The cluster it was verified on (the counterexample's nodes).
    pub verified_on: String,
}

/// A change to one field of one object.
#[derive(Clone, Debug, PartialEq)]
enum Edit {
    ScheduleAnyway {
        object: usize,
        index: usize,
    },
    MaxSkew {
        object: usize,
        index: usize,
        to: i32,
    },
    PreferAntiAffinity {
        object: usize,
        index: usize,
    },
    BudgetAllowsOne {
        object: usize,
    },
    OneAtATime {
        object: usize,
    },
    DropReplicas {
        object: usize,
    },
    TolerateForever {
        object: usize,
        index: usize,
    },
    BalanceHardOnly {
        object: usize,
        profile: usize,
        plugin: usize,
    },
    DisablePlugin {
        object: usize,
        profile: usize,
        plugin: usize,
    },
    HardSpread {
        object: usize,
        index: usize,
    },
    DropNodeName {
        object: usize,
    },
    DelayReadiness {
        object: usize,
        seconds: i64,
    },
}

#[derive(Clone, Debug, PartialEq)]
struct Candidate {
    summary: String,
    location: Span,
    edit: Edit,
}

fn spec_mut(o: &mut Object) -> Option<&mut PodSpec> {
    match &mut o.body {
        Body::Workload(w) => Some(&mut w.template.spec),
        _ => None,
    }
}

/// The changes worth trying for a violation located at `at`, most likely first.
fn candidates(a: &Analysis, unit: usize, at: Span) -> Vec<Candidate> {
    let mut out = Vec::new();
    for member in &a.units[unit].members {
        let o = &a.objects[member.object];
        let object = member.object;
        match &o.body {
            Body::Workload(w) => workload_candidates(a, unit, object, o, w, at, &mut out),
            Body::DeschedulerPolicy(policy) => descheduler_policy_candidates(object, o, policy, at, &mut out),
            // Startup spikes the HPA counts: delay readiness past the startup phase, as the
            // HPA ignores pods that are not ready.
            Body::HorizontalPodAutoscaler(h) if h.max_replicas.span == at => {
                autoscaler_candidates(a, unit, o, h, &mut out)
            }
            Body::PodDisruptionBudget(p) => budget_candidates(object, o, p, at, &mut out),
            _ => {}
        }
    }
    out
}

/// Changes to a workload's spread, affinity, tolerations, node name, replicas or strategy.
fn workload_candidates(
    a: &Analysis,
    unit: usize,
    object: usize,
    o: &Object,
    w: &crate::manifest::Workload,
    at: Span,
    out: &mut Vec<Candidate>,
) {
    let spec = &w.template.spec;
    for (index, c) in spec.topology_spread_constraints.iter().enumerate() {
        if c.max_skew.span != at || c.when_unsatisfiable.value != WhenUnsatisfiable::DoNotSchedule {
            continue;
        }
        let key = &c.topology_key.value;
        out.push(Candidate {
            summary: format!(
                "set `whenUnsatisfiable: ScheduleAnyway` on topologySpreadConstraints[{index}] ({key}) of {}",
                o.id
            ),
            location: c.when_unsatisfiable.span,
            edit: Edit::ScheduleAnyway { object, index },
        });
        let to = c.max_skew.value.saturating_add(1);
        out.push(Candidate {
            summary: format!(
                "raise `maxSkew` of topologySpreadConstraints[{index}] ({key}) of {} to {to}",
                o.id
            ),
            location: c.max_skew.span,
            edit: Edit::MaxSkew { object, index, to },
        });
    }
    for (index, term) in spec.affinity.pod_anti.required.iter().enumerate() {
        if term.topology_key.span == at {
            out.push(Candidate {
                    summary: format!(
                        "make podAntiAffinity term {index} ({}) of {} preferred (`preferredDuringSchedulingIgnoredDuringExecution`) instead of required",
                        term.topology_key.value, o.id
                    ),
                    location: term.topology_key.span,
                    edit: Edit::PreferAntiAffinity { object, index },
                });
        }
    }
    // `spec.replicas` in Git fights the HPA that owns the count.
    let autoscaled = a.units[unit].members.iter().any(|m| {
        matches!(&a.objects[m.object].body, Body::HorizontalPodAutoscaler(h)
                if h.scale_target_ref.name == o.id.name && h.scale_target_ref.kind == o.id.kind)
    });
    if autoscaled && let Some(r) = w.replicas.as_ref().filter(|r| r.span == at) {
        out.push(Candidate {
            summary: format!(
                "leave `spec.replicas` out of the manifest of {}: its HorizontalPodAutoscaler owns the count",
                o.id
            ),
            location: r.span,
            edit: Edit::DropReplicas { object },
        });
    }
    // Pods that double up on a node when another goes: make a soft spread hard.
    if at == spec.span || w.replicas.as_ref().is_some_and(|r| r.span == at) {
        for (index, c) in spec.topology_spread_constraints.iter().enumerate() {
            if c.when_unsatisfiable.value == WhenUnsatisfiable::ScheduleAnyway {
                out.push(Candidate {
                        summary: format!(
                            "set `whenUnsatisfiable: DoNotSchedule` on topologySpreadConstraints[{index}] ({}) of {}, so a replacement waits rather than doubling up",
                            c.topology_key.value, o.id
                        ),
                        location: c.when_unsatisfiable.span,
                        edit: Edit::HardSpread { object, index },
                    });
            }
        }
    }
    if let Some(n) = spec.node_name.as_ref().filter(|n| n.span == at) {
        out.push(Candidate {
                summary: format!(
                    "remove `spec.nodeName: {}` from {}: the scheduler then places the pods on nodes whose taints they tolerate",
                    n.value, o.id
                ),
                location: n.span,
                edit: Edit::DropNodeName { object },
            });
    }
    for (index, t) in spec.tolerations.iter().enumerate() {
        if t.toleration_seconds.as_ref().is_some_and(|s| s.span == at) {
            out.push(Candidate {
                    summary: format!(
                        "remove `tolerationSeconds` from toleration {index} of {}, so its pods stay on the tainted node instead of being evicted and placed there again",
                        o.id
                    ),
                    location: at,
                    edit: Edit::TolerateForever { object, index },
                });
        }
    }
    if w.kind == WorkloadKind::Deployment
        && let UpdateStrategy::RollingUpdate { max_surge, .. } = &w.strategy
        && max_surge.span == at
    {
        out.push(Candidate {
                summary: format!(
                    "set `maxSurge: 0` and `maxUnavailable: 1` in the rolling update strategy of {}, so an old pod makes room first",
                    o.id
                ),
                location: max_surge.span,
                edit: Edit::OneAtATime { object },
            });
    }
}

/// Changes to the descheduler plugin a finding points at.
fn descheduler_policy_candidates(
    object: usize,
    o: &Object,
    policy: &crate::manifest::DeschedulerPolicy,
    at: Span,
    out: &mut Vec<Candidate>,
) {
    // Policies are often unnamed files or ConfigMap keys.
    let policy_name = if o.id.name.is_empty() {
        "the descheduler policy".to_string()
    } else {
        o.id.to_string()
    };
    for (profile, pr) in policy.profiles.iter().enumerate() {
        for (plugin, pl) in pr.plugins.iter().enumerate() {
            if pl.name.span != at {
                continue;
            }
            if let PluginArgs::TopologySpread { constraints, .. } = &pl.args
                && constraints.contains(&WhenUnsatisfiable::ScheduleAnyway)
            {
                out.push(Candidate {
                        summary: format!(
                            "let {} balance only `DoNotSchedule` constraints (`constraints: [DoNotSchedule]`, its default) in {policy_name}: the scheduler may break `ScheduleAnyway` ones again",
                            pl.name.value
                        ),
                        location: at,
                        edit: Edit::BalanceHardOnly { object, profile, plugin },
                    });
            }
            out.push(Candidate {
                    summary: format!(
                        "disable the descheduler plugin {} in {policy_name}, or exclude the workload from it (`namespaces` or `labelSelector`)",
                        pl.name.value
                    ),
                    location: at,
                    edit: Edit::DisablePlugin { object, profile, plugin },
                });
        }
    }
}

/// Changes for an HPA that oscillates: readiness past a configured startup.
fn autoscaler_candidates(
    a: &Analysis,
    unit: usize,
    o: &Object,
    h: &crate::manifest::HorizontalPodAutoscaler,
    out: &mut Vec<Candidate>,
) {
    let target = a.units[unit].members.iter().find(|m| {
        let t = &a.objects[m.object];
        t.id.kind == h.scale_target_ref.kind && t.id.name == h.scale_target_ref.name && t.id.namespace == o.id.namespace
    });
    if let Some(m) = target
        && let Some(startup) = a
            .config
            .workloads
            .get(&a.objects[m.object].id)
            .and_then(|w| w.startup.as_ref())
    {
        let t = &a.objects[m.object];
        out.push(Candidate {
                summary: format!(
                    "delay the readiness of {}'s pods past their {} s startup (`readinessProbe.initialDelaySeconds: {}`): the HPA ignores pods that are not ready, so their startup cpu no longer counts",
                    t.id, startup.seconds, startup.seconds
                ),
                location: t.workload().map_or(t.span, |w| w.template.spec.span),
                edit: Edit::DelayReadiness {
                    object: m.object,
                    seconds: i64::from(startup.seconds),
                },
            });
    }
}

/// A PodDisruptionBudget that allows one disruption.
fn budget_candidates(
    object: usize,
    o: &Object,
    p: &crate::manifest::PodDisruptionBudget,
    at: Span,
    out: &mut Vec<Candidate>,
) {
    let field = p.min_available.as_ref().or(p.max_unavailable.as_ref());
    if let Some(f) = field.filter(|f| f.span == at) {
        let summary = if p.min_available.is_some() {
            format!("replace `minAvailable` with `maxUnavailable: 1` on {}", o.id)
        } else {
            format!("set `maxUnavailable: 1` on {}", o.id)
        };
        out.push(Candidate {
            summary,
            location: f.span,
            edit: Edit::BudgetAllowsOne { object },
        });
    }
}

fn apply(objects: &mut [Object], edit: &Edit) {
    match *edit {
        Edit::ScheduleAnyway { object, index } => {
            if let Some(c) = spec_mut(&mut objects[object]).and_then(|s| s.topology_spread_constraints.get_mut(index)) {
                c.when_unsatisfiable.value = WhenUnsatisfiable::ScheduleAnyway;
            }
        }
        Edit::MaxSkew { object, index, to } => {
            if let Some(c) = spec_mut(&mut objects[object]).and_then(|s| s.topology_spread_constraints.get_mut(index)) {
                c.max_skew.value = to;
            }
        }
        Edit::PreferAntiAffinity { object, index } => {
            if let Some(anti) = spec_mut(&mut objects[object]).map(|s| &mut s.affinity.pod_anti)
                && index < anti.required.len()
            {
                let term = anti.required.remove(index);
                anti.preferred.push(WeightedPodAffinityTerm { weight: 100, term });
            }
        }
        Edit::BudgetAllowsOne { object } => {
            if let Body::PodDisruptionBudget(p) = &mut objects[object].body {
                let span = p
                    .min_available
                    .as_ref()
                    .or(p.max_unavailable.as_ref())
                    .map_or(Span::default(), |f| f.span);
                p.min_available = None;
                p.max_unavailable = Some(Spanned::new(IntOrPercent::Int(1), span));
            }
        }
        Edit::TolerateForever { object, index } => {
            if let Some(t) = spec_mut(&mut objects[object]).and_then(|s| s.tolerations.get_mut(index)) {
                t.toleration_seconds = None;
            }
        }
        Edit::BalanceHardOnly {
            object,
            profile,
            plugin,
        } => {
            if let Body::DeschedulerPolicy(p) = &mut objects[object].body
                && let Some(PluginArgs::TopologySpread { constraints, .. }) = p
                    .profiles
                    .get_mut(profile)
                    .and_then(|pr| pr.plugins.get_mut(plugin))
                    .map(|pl| &mut pl.args)
            {
                *constraints = vec![WhenUnsatisfiable::DoNotSchedule];
            }
        }
        Edit::DisablePlugin {
            object,
            profile,
            plugin,
        } => {
            if let Body::DeschedulerPolicy(p) = &mut objects[object].body
                && let Some(pr) = p.profiles.get_mut(profile)
                && plugin < pr.plugins.len()
            {
                pr.plugins.remove(plugin);
            }
        }
        Edit::HardSpread { object, index } => {
            if let Some(c) = spec_mut(&mut objects[object]).and_then(|s| s.topology_spread_constraints.get_mut(index)) {
                c.when_unsatisfiable.value = WhenUnsatisfiable::DoNotSchedule;
            }
        }
        Edit::DropNodeName { object } => {
            if let Some(s) = spec_mut(&mut objects[object]) {
                s.node_name = None;
            }
        }
        Edit::DelayReadiness { object, seconds } => {
            if let Some(s) = spec_mut(&mut objects[object]) {
                for c in &mut s.containers {
                    c.readiness_delay_seconds = Some(seconds);
                }
            }
        }
        Edit::DropReplicas { object } => {
            if let Body::Workload(w) = &mut objects[object].body {
                w.replicas = None;
            }
        }
        Edit::OneAtATime { object } => {
            if let Body::Workload(w) = &mut objects[object].body
                && let UpdateStrategy::RollingUpdate {
                    max_surge,
                    max_unavailable,
                    ..
                } = &mut w.strategy
            {
                max_surge.value = IntOrPercent::Int(0);
                max_unavailable.value = IntOrPercent::Int(1);
            }
        }
    }
}

/// The analysis with `edit` applied and unit `unit` checking `check` only.
/// The analysis with `edit` applied, unit `unit` checking `check` only, and the pools at the
/// counterexample's node counts (for `Scale::Current`).
fn edited(
    a: &Analysis,
    unit: usize,
    check: &'static str,
    edit: &Edit,
    at: Option<&crate::model::Topology>,
) -> Analysis {
    let mut objects = a.objects.clone();
    apply(&mut objects, edit);
    let mut units = a.units.clone();
    units[unit].checks = vec![check];
    let mut config = a.config.clone();
    if let Some(t) = at {
        for (pool, &n) in config.cluster.pools.iter_mut().zip(&t.nodes_per_pool) {
            pool.count = n;
        }
    }
    Analysis {
        sources: a.sources.clone(),
        config,
        scopes: a.scopes.clone(),
        objects,
        skipped: Vec::new(),
        units,
        diagnostics: Default::default(),
        files: a.files,
        renders: a.renders,
        timings: a.timings,
    }
}

/// Find a verified fix for every located violation of `results`. Each candidate costs one run
/// of its unit on the counterexample's cluster, restricted to the violated check; the first
/// that verifies is kept.
pub fn suggest(
    a: &Analysis,
    results: &mut [UnitResult],
    generator: &Generator,
    engine: &Engine,
    options: &scaling::Options,
    cancel: &AtomicBool,
) {
    let one_topology = scaling::Options {
        emit_models: None,
        result_cache: options.result_cache.clone(),
        jobs: options.jobs,
        scale: scaling::Scale::Current,
        all: false,
    };
    for r in results.iter_mut() {
        for c in r.results.iter_mut() {
            let Verdict::Violated { location: Some(at), .. } = &c.verdict else {
                continue;
            };
            for candidate in candidates(a, r.unit, *at) {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                let fixed = edited(a, r.unit, c.check, &candidate.edit, c.topology.as_ref());
                let again = scaling::verify(&fixed, &[r.unit], generator, engine, &one_topology, cancel, &|_| {});
                let holds = again
                    .first()
                    .and_then(|u| u.results.iter().find(|x| x.check == c.check))
                    .is_some_and(|x| x.verdict == Verdict::Verified);
                tracing::info!(
                    "unit {}: {} with \"{}\": {}",
                    a.units[r.unit].id,
                    c.check,
                    candidate.summary,
                    if holds { "verified" } else { "still fails" }
                );
                if holds {
                    let on = crate::model::Topology::current(&fixed.config);
                    c.fix = Some(Fix {
                        summary: candidate.summary,
                        location: candidate.location,
                        verified_on: scaling::describe(&fixed, r.unit, &on),
                    });
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_edit_allows_one_disruption() {
        let text = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: api, namespace: x}\nspec:\n  minAvailable: 2\n  selector: {matchLabels: {app: api}}\n";
        let mut sources = crate::source::SourceMap::default();
        let mut diags = crate::diagnostics::Diagnostics::default();
        let (_, loaded) = crate::manifest::load_text(&mut sources, "pdb.yaml", text, &mut diags);
        let mut objects = loaded.objects;
        apply(&mut objects, &Edit::BudgetAllowsOne { object: 0 });
        let Body::PodDisruptionBudget(p) = &objects[0].body else {
            panic!("a budget")
        };
        assert_eq!(p.min_available, None);
        assert_eq!(p.max_unavailable.as_ref().unwrap().value, IntOrPercent::Int(1));
    }
}

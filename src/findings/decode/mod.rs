//! A counterexample's trace events (`KIVI:` lines) told as steps in Kubernetes terms, each
//! located at the manifest field that drives it. The controllers' events (`crate::trace`) are
//! told here, each by its controller's decoder (src/controllers/<controller>/decode.rs); an environment event's by its folder (`crate::events`), a
//! check's violation by the check's (`crate::checks`).

use super::namer::Namer;
use super::*;
use crate::checks;
use crate::trace::{Changed, Event};

// Each controller's decoder lives in its folder (src/controllers/<controller>/, beside its
// templates and its part of the IR) and is a module of this one: it tells steps, as this
// stage does, from what this module gives it.
#[path = "../../controllers/autoscaler/decode.rs"]
mod autoscaler;
#[path = "../../controllers/cluster_autoscaler/decode.rs"]
mod cluster_autoscaler;
#[path = "../../controllers/descheduler/decode.rs"]
mod descheduler;
#[path = "../../controllers/informer/decode.rs"]
mod informer;
#[path = "../../controllers/kubelet/decode.rs"]
mod kubelet;
#[path = "../../controllers/scheduler/decode.rs"]
mod scheduler;
#[path = "../../controllers/taint_eviction/decode.rs"]
mod taint_eviction;
#[path = "../../controllers/workloads/decode.rs"]
mod workloads;

/// A decoded step before its effect is attached.
pub(super) struct DecodedStep {
    actor: Actor,
    message: String,
    location: Option<Span>,
    /// Its location is the finding's: a judged pod the scheduler could not place.
    blames: bool,
}

impl DecodedStep {
    fn new(actor: Actor, message: String, location: Option<Span>) -> DecodedStep {
        DecodedStep {
            actor,
            message,
            location,
            blames: false,
        }
    }
}

/// What the controllers' decoders read: the names behind the model's indices.
struct Scene<'a> {
    namer: &'a Namer<'a>,
    ir: &'a Ir,
    names: &'a Names,
    objects: &'a [Object],
}

/// A controller's event, told by the decoder of the controller that prints it.
fn tell_controller(event: Event, v: &[i64], scene: &Scene) -> DecodedStep {
    match event {
        Event::PodCreated | Event::PodDeleted | Event::RolloutApplied | Event::RolloutDone => {
            workloads::tell(event, v, scene)
        }
        Event::PodBound | Event::PodUnschedulable | Event::VolumeProvisioned | Event::VolumeProvisionedWithPod => {
            scheduler::tell(event, v, scene)
        }
        Event::HpaScaled => autoscaler::tell(event, v, scene),
        Event::NodeAdded
        | Event::ScaleDownStarted
        | Event::AutoscalerEvicted
        | Event::AutoscalerRefused
        | Event::NodeRemoved
        | Event::ScaleUpWanted => cluster_autoscaler::tell(event, v, scene),
        Event::DeschedulerDeclined | Event::DeschedulerEvicted => descheduler::tell(event, v, scene),
        Event::TaintEvicted => taint_eviction::tell(event, v, scene),
        Event::InformerCaughtUp | Event::StaleDeletion => informer::tell(event, v, scene),
        Event::SimulationEnded => DecodedStep::new(
            Actor::Model,
            "the cluster has settled: the simulated run ends here".to_string(),
            None,
        ),
        _ => kubelet::tell(event, v, scene),
    }
}

/// The change a step makes: `changed` with the pod and node its values name.
fn effect(changed: Option<Changed>, v: &[i64], namer: &Namer) -> Option<Effect> {
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(match changed? {
        Changed::Pod(change) => Effect {
            change,
            pod: Some(namer.pod(at(1))),
            node: None,
        },
        Changed::PodOn(change) => Effect {
            change,
            pod: Some(namer.pod(at(1))),
            node: Some(namer.node(at(2))),
        },
        Changed::Node(change) => Effect {
            change,
            pod: None,
            node: Some(namer.node(at(1))),
        },
    })
}

/// Decode the `KIVI:` lines of a trail (see the templates' printf calls).
pub fn decode(trace: &[TraceEvent], ir: &Ir, names: &Names, objects: &[Object]) -> (Vec<Step>, Option<Span>) {
    let mut namer = Namer::new(ir, names, objects);
    let mut steps = initial_pods(ir, &namer);
    let mut location = None;
    // The pods the scheduler could not place, by slot, each where its failure is located.
    let mut failures: Vec<(i64, Span)> = Vec::new();
    for event in trace {
        let v = &event.values;
        if namer.follow(v) {
            continue;
        }
        let code = v.first().copied().unwrap_or(0);
        let trail = Trail {
            namer: &namer,
            names,
            events: trace,
            steps: &steps,
            failures: &failures,
        };
        let (step, changed) = if let Some(e) = Event::from_code(code) {
            let scene = Scene {
                namer: &namer,
                ir,
                names,
                objects,
            };
            (tell_controller(e, v, &scene), e.changed())
        } else if let Some(printed) = crate::events::printed(code) {
            let told = (printed.tell)(v, &trail);
            (
                DecodedStep::new(printed.actor, told.message, told.location),
                printed.changed,
            )
        } else if code == crate::engine::CYCLE_START {
            let message = "from here on, the steps below repeat forever while the environment stays the same";
            (DecodedStep::new(Actor::Cycle, message.into(), None), None)
        } else if let Some(check) = checks::of_violation(code) {
            let told = (check.violation.tell)(v, &trail);
            let shown = match check.violation.blame {
                checks::Blame::CheckField => {
                    location = told.location;
                    told.location
                }
                checks::Blame::Scheduling => {
                    location = location.or(told.location);
                    told.location
                }
                checks::Blame::ChosenPod => {
                    location = told.location.or(location);
                    None
                }
            };
            (DecodedStep::new(Actor::Check, told.message, shown), None)
        } else {
            let message = format!("unknown trace event {code}");
            (DecodedStep::new(Actor::Model, message, None), None)
        };
        if step.blames {
            location = step.location;
            if let (Some(at), Some(&slot)) = (step.location, v.get(1)) {
                failures.push((slot, at));
            }
        }
        steps.push(Step {
            actor: step.actor,
            message: step.message,
            location: step.location,
            effect: effect(changed, v, &namer),
        });
    }
    // A livelock: the field of the first repeating step that undoes another's work (an
    // eviction, a scaling, a re-apply), else of any repeating step.
    if location.is_none()
        && let Some(start) = steps.iter().position(|s| s.actor == Actor::Cycle)
    {
        let cycle = &steps[start..];
        let creators = [
            Actor::DeploymentController,
            Actor::StatefulsetController,
            Actor::DaemonsetController,
            Actor::ReplicasetController,
            Actor::ReplicationController,
            Actor::KubectlApply,
            Actor::Kubelet,
        ];
        location = cycle
            .iter()
            .filter(|s| !creators.contains(&s.actor))
            .find_map(|s| s.location)
            .or_else(|| cycle.iter().find_map(|s| s.location));
    }
    // No finding without a location: else the first step that has one (the field that drives
    // it), else the manifest of the unit's first workload.
    let location = location
        .or_else(|| steps.iter().find_map(|s| s.location))
        .or_else(|| names.workloads.first().and_then(|&o| objects.get(o)).map(|o| o.span));
    (steps, location)
}

/// The pods running when the run starts (`cluster.initialPods`, `--cluster-state`), each on
/// its node, as the trail's first steps: what follows starts from there.
fn initial_pods(ir: &Ir, namer: &Namer) -> Vec<Step> {
    let mut steps = Vec::new();
    for w in &ir.workloads {
        let slots = w.first_slot..w.first_slot + w.slots;
        let mut slot = w.first_slot;
        for &(node, count) in &w.initial {
            for _ in 0..count {
                if !slots.contains(&slot) {
                    break;
                }
                let (pod, node) = (namer.pod(slot as i64), namer.node(node as i64));
                let message = if w.terminating {
                    format!("{pod} is being deleted from {node} as the run starts")
                } else {
                    format!("{pod} runs on {node} as the run starts")
                };
                steps.push(Step {
                    actor: Actor::Kubelet,
                    message,
                    location: None,
                    effect: Some(Effect {
                        change: Change::PodStarted,
                        pod: Some(pod),
                        node: Some(node),
                    }),
                });
                slot += 1;
            }
        }
    }
    steps
}

/// What a check's decoder asks of the counterexample (`checks::Counterexample`).
struct Trail<'a> {
    namer: &'a Namer<'a>,
    names: &'a Names,
    events: &'a [TraceEvent],
    /// The steps told so far.
    steps: &'a [Step],
    /// The scheduler's failures so far: the pod's slot and where the failure is located.
    failures: &'a [(i64, Span)],
}

impl checks::Counterexample for Trail<'_> {
    fn workload(&self, index: i64) -> Option<&Object> {
        self.namer.workload(index)
    }

    fn owner(&self, slot: i64) -> Option<&Object> {
        self.namer.owner_object(slot)
    }

    fn pod(&self, slot: i64) -> String {
        self.namer.pod(slot)
    }

    fn node(&self, index: i64) -> String {
        self.namer.node(index)
    }

    fn autoscaler_of(&self, workload: &Object) -> Option<&Object> {
        self.namer.autoscaler_of(workload)
    }

    fn budgets_of_pod(&self, slot: i64) -> Vec<&Object> {
        self.namer.budgets_of_slot(slot)
    }

    fn latest(&self, event: Event, matching: &dyn Fn(&[i64]) -> bool) -> Option<&[i64]> {
        self.events
            .iter()
            .rev()
            .map(|e| e.values.as_slice())
            .find(|v| v.first() == Some(&event.code()) && matching(v))
    }

    fn descheduler_plugin(&self, index: i64) -> Option<Span> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.names.descheduler_plugins.get(i).copied().flatten())
    }

    fn scheduling_failure_of(&self, workload: &dyn Fn(i64) -> bool) -> Option<Span> {
        self.failures
            .iter()
            .rev()
            .find(|(slot, _)| self.namer.owner(*slot).is_some_and(|(w, _)| workload(w as i64 + 1)))
            .map(|(_, at)| *at)
    }

    fn scheduling_failure(&self) -> Option<Span> {
        self.steps
            .iter()
            .rev()
            .find(|s| s.actor == Actor::Scheduler && s.location.is_some())
            .and_then(|s| s.location)
    }
}

//! Names for the model's indices: pods, nodes and workloads as a counterexample tells them.

use super::*;

/// Names of things in the model, for messages.
pub(super) struct Namer<'a> {
    ir: &'a Ir,
    names: &'a Names,
    objects: &'a [Object],
    /// The number in its name of the pod in each slot (`web-3`), for workloads whose pods are
    /// named by creation, not by ordinal.
    pod_numbers: std::collections::HashMap<i64, usize>,
    /// The number the next pod each workload creates gets.
    next_number: Vec<usize>,
    /// The node (1-based, as in `Names::nodes`) at each model node index: the model moves
    /// interchangeable nodes between indices (`KIVI:49:a:b`).
    node_at: Vec<i64>,
    /// The pod whose deletion an informer has not delivered yet, by slot: the slot may hold
    /// its replacement by the time the deletion is delivered (`KIVI:46`).
    pub(super) undelivered: std::collections::HashMap<i64, String>,
}

impl<'a> Namer<'a> {
    /// The pods running at the start are numbered from 1 in their slots' order.
    pub(super) fn new(ir: &'a Ir, names: &'a Names, objects: &'a [Object]) -> Namer<'a> {
        let mut pod_numbers = std::collections::HashMap::new();
        let mut next_number = Vec::new();
        for w in &ir.workloads {
            let initial = w
                .initial
                .iter()
                .map(|&(_, count)| usize::try_from(count).unwrap_or(0))
                .sum::<usize>();
            let initial = initial.min(w.slots);
            for k in 0..initial {
                pod_numbers.insert((w.first_slot + k) as i64, k + 1);
            }
            next_number.push(initial + 1);
        }
        Namer {
            ir,
            names,
            objects,
            pod_numbers,
            next_number,
            node_at: (0..=ir.nodes.len() as i64).collect(),
            undelivered: std::collections::HashMap::new(),
        }
    }

    /// Follow pods through event `v` before it is told: a pod keeps its name for its life and
    /// a new pod gets a new one, although the model reuses a freed slot for it and moves pods
    /// between the slots of their workload (symmetry reduction, `KIVI:48:a:b` swaps two
    /// slots; `KIVI:49:a:b` two nodes: `Event::PodsSwapped`, `Event::NodesSwapped`). True when the event only moved pods or nodes.
    pub(super) fn follow(&mut self, v: &[i64]) -> bool {
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        use crate::trace::Event;
        match Event::from_code(at(0)) {
            Some(Event::PodsSwapped) => {
                let (a, b) = (self.pod_numbers.remove(&at(1)), self.pod_numbers.remove(&at(2)));
                if let Some(n) = a {
                    self.pod_numbers.insert(at(2), n);
                }
                if let Some(n) = b {
                    self.pod_numbers.insert(at(1), n);
                }
                let (a, b) = (self.undelivered.remove(&at(1)), self.undelivered.remove(&at(2)));
                if let Some(n) = a {
                    self.undelivered.insert(at(2), n);
                }
                if let Some(n) = b {
                    self.undelivered.insert(at(1), n);
                }
                true
            }
            Some(Event::StaleDeletion) => {
                self.undelivered.insert(at(1), self.pod(at(1)));
                false
            }
            Some(Event::NodesSwapped) => {
                if let (Ok(a), Ok(b)) = (usize::try_from(at(1)), usize::try_from(at(2)))
                    && a < self.node_at.len()
                    && b < self.node_at.len()
                {
                    self.node_at.swap(a, b);
                }
                true
            }
            Some(Event::PodCreated) => {
                if let Some((w, _)) = self.owner(at(1)) {
                    self.pod_numbers.insert(at(1), self.next_number[w]);
                    self.next_number[w] += 1;
                }
                false
            }
            _ => false,
        }
    }

    pub(super) fn node(&self, n: i64) -> String {
        let n = usize::try_from(n)
            .ok()
            .and_then(|i| self.node_at.get(i))
            .copied()
            .unwrap_or(n);
        usize::try_from(n - 1)
            .ok()
            .and_then(|i| self.names.nodes.get(i))
            .cloned()
            .unwrap_or_else(|| format!("node #{n}"))
    }

    /// `(workload index 0-based, object index)` of a pod slot.
    pub(super) fn owner(&self, slot: i64) -> Option<(usize, usize)> {
        let w = self.ir.slot_owner(slot)?;
        Some((w, self.names.workloads[w]))
    }

    /// The workload object whose pod is in a slot.
    pub(super) fn owner_object(&self, slot: i64) -> Option<&Object> {
        self.owner(slot).map(|(_, o)| &self.objects[o])
    }

    /// Pods are named after their workload and their place in it: `web-3` (from 1), or a
    /// StatefulSet's ordinal: `db-0`.
    pub(super) fn pod(&self, slot: i64) -> String {
        match self.owner(slot) {
            // A bare Pod is its own name.
            Some((_, o))
                if self.objects[o]
                    .workload()
                    .is_some_and(|w| w.kind == crate::manifest::WorkloadKind::Pod) =>
            {
                self.objects[o].id.name.clone()
            }
            // A StatefulSet's pods are named by their ordinal, from 0; others by creation.
            Some((w, o)) => {
                let stateful = self.objects[o]
                    .workload()
                    .is_some_and(|wl| wl.kind == crate::manifest::WorkloadKind::StatefulSet);
                let ordinal = slot as usize - self.ir.workloads[w].first_slot;
                let number = match self.pod_numbers.get(&slot) {
                    Some(&n) if !stateful => n,
                    _ => ordinal + usize::from(!stateful),
                };
                format!("{}-{number}", self.objects[o].id.name)
            }
            None => format!("pod #{slot}"),
        }
    }

    /// The controller that creates and deletes the pods of a slot's workload.
    pub(super) fn controller(&self, slot: i64) -> Actor {
        use crate::manifest::WorkloadKind;
        match self
            .owner(slot)
            .and_then(|(_, o)| self.objects[o].workload())
            .map(|w| w.kind)
        {
            Some(WorkloadKind::StatefulSet) => Actor::StatefulsetController,
            Some(WorkloadKind::DaemonSet) => Actor::DaemonsetController,
            Some(WorkloadKind::ReplicaSet) => Actor::ReplicasetController,
            Some(WorkloadKind::ReplicationController) => Actor::ReplicationController,
            // Nothing controls a bare Pod: it exists because its manifest was applied.
            Some(WorkloadKind::Pod) => Actor::KubectlApply,
            Some(WorkloadKind::Job | WorkloadKind::CronJob) => Actor::JobController,
            _ => Actor::DeploymentController,
        }
    }

    pub(super) fn workload(&self, w: i64) -> Option<&Object> {
        let w = usize::try_from(w - 1).ok()?;
        self.names.workloads.get(w).map(|&o| &self.objects[o])
    }

    /// The PodDisruptionBudgets that select the pods of the pod slot's workload.
    pub(super) fn budgets_of_slot(&self, slot: i64) -> Vec<&Object> {
        let Some((w, _)) = self.owner(slot) else {
            return Vec::new();
        };
        self.ir
            .disruption_budgets
            .iter()
            .zip(&self.names.disruption_budgets)
            .filter(|(b, _)| b.workloads & (1 << (w + 1)) != 0)
            .map(|(_, &o)| &self.objects[o])
            .collect()
    }

    pub(super) fn autoscaler_of(&self, workload: &Object) -> Option<&Object> {
        self.objects.iter().find(|o| {
            matches!(&o.body, Body::HorizontalPodAutoscaler(h)
                if h.scale_target_ref.kind == workload.id.kind && h.scale_target_ref.name == workload.id.name && o.id.namespace == workload.id.namespace)
        })
    }
}

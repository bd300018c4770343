/*
 * Deployment, ReplicaSet and StatefulSet controllers.
 *  - Deployment (pkg/controller/deployment): before a rollout its ReplicaSet follows
 *    spec.replicas. During one, Recreate scales the old ReplicaSet to 0 and the new one up once
 *    no old pod is left; RollingUpdate follows rolling.go: reconcileNewReplicaSet (up to
 *    replicas + maxSurge in all), reconcileOldReplicaSets (cleanupUnhealthyReplicas, then
 *    scale old ReplicaSets down while more than replicas - maxUnavailable are available),
 *    with maxSurge rounded up and maxUnavailable down (deployment_util.go ResolveFenceposts).
 *  - ReplicaSet (pkg/controller/replicaset/replica_set.go manageReplicas): create pods up to
 *    its spec.replicas, delete the surplus ranked as controller_utils.go ActivePods does:
 *    unassigned first, then not running, then crowded nodes, then newer.
 *  - StatefulSet (pkg/controller/statefulset/stateful_set_control.go): pod k lives in the k-th
 *    slot of its workload (its ordinal), so a replacement keeps its identity, and a pod that
 *    is still terminating or on an unreachable node blocks its ordinal. Missing ordinals below
 *    spec.replicas are created lowest first and surplus ones deleted highest first; with
 *    OrderedReady one at a time and only while every other pod runs, with Parallel all at once.
 *    RollingUpdate deletes the highest-ordinal pod of the old revision at or above the
 *    partition once every pod runs; it comes back with the new revision.
 * Terminating pods are not active and not available.
 */
hidden int d_q, d_r, d_active, d_best, d_key, d_victim, d_new_available, d_old_available, d_old_pods;
hidden int d_old_active, d_new_active;
hidden int d_on_node[MAX_NODES + 1];

/* Higher goes first: unassigned, then not running, then crowded nodes, then newer slots. */
#define DELETION_RANK(q) ((pod[q].node == 0 -> 1000000 : 0) + (pod[q].status != RUNNING -> 100000 : 0) + (pod[q].node > 0 -> d_on_node[pod[q].node] * 1000 : 0) + q)
#define ACTIVE(q) (pod[q].status == PENDING || pod[q].status == BOUND || pod[q].status == RUNNING || pod[q].status == UNREACHABLE)
#define RS(w, r) rs_spec[(w) * 2 + (r)]
#define SLOTS_OF(w) workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1

/* The Deployment sets its ReplicaSets' spec.replicas. */
inline reconcile_deployment(w) {
  d_new_available = 0; d_old_available = 0; d_old_pods = 0; d_old_active = 0; d_new_active = 0;
  for (d_q : SLOTS_OF(w)) {
    if
    :: pod[d_q].status == RUNNING && pod[d_q].rev -> d_new_available++
    :: pod[d_q].status == RUNNING && !pod[d_q].rev -> d_old_available++
    :: else -> skip
    fi;
    if
    :: ACTIVE(d_q) && pod[d_q].rev -> d_new_active++
    :: ACTIVE(d_q) && !pod[d_q].rev -> d_old_active++
    :: else -> skip
    fi;
    if
    :: pod[d_q].status != FREE && !pod[d_q].rev -> d_old_pods++
    :: else -> skip
    fi
  }
  if
  :: !rolled[w] -> RS(w, 0) = spec[w]
  :: rolled[w] && rollout_kind[w] == 2 ->
     /* rolloutRecreate: scale the old ReplicaSet to 0; while any old pod is left
        (oldPodsRunning, terminating ones too) stop; then the new one to NewRSNewReplicas */
     RS(w, 0) = 0;
     if
     :: d_old_pods == 0 -> new_rs_new_replicas(1, spec[w], RS(w, 0) + RS(w, 1), RS(w, 1)); RS(w, 1) = ru_new
     :: else -> skip
     fi
  :: rolled[w] && rollout_kind[w] == 1 ->
     max_unavailable(0, rollout_surge[w], rollout_unavailable[w], spec[w]);
     reconcile_new_replica_set(spec[w], RS(w, 0) + RS(w, 1), RS(w, 1));
     RS(w, 1) = ru_new;
     reconcile_old_replica_sets(spec[w], RS(w, 0), d_old_available, RS(w, 1), d_new_available);
     RS(w, 0) = ru_old
  :: else -> skip
  fi;
  /* the rollout is done (DeploymentComplete): every replica new and available, no old pod
     active */
  deployment_complete(spec[w], d_old_active + d_new_active, d_new_active, d_old_available + d_new_available);
  if
  :: rolled[w] && !rollout_done[w] && ru_complete ->
     rollout_done[w] = 1; printf("KIVI:%d:%d\n", EVENT_ROLLOUT_DONE, w)
  :: else -> skip
  fi
}

/* The controller deletes pod v. */
inline delete_pod(v) {
  printf("KIVI:%d:%d\n", EVENT_POD_DELETED, v);
  if
  :: pod[v].status == PENDING ->
     if
     :: pod[v].unschedulable -> unschedulable--
     :: else -> to_schedule--
     fi;
     pod[v].status = FREE; pod[v].unschedulable = 0
  :: pod[v].status == RUNNING -> stop_running(v); pod[v].status = TERMINATING; kubelet_work++
  :: pod[v].status == UNREACHABLE ->
     /* its node is down: the deletion completes when the node is back */
     if
     :: template_failure_eviction[slot_template[v]] -> lost_work--
     :: else -> skip
     fi;
     pod[v].status = GONE
  :: else -> pod[v].status = TERMINATING
  fi
}

#define ORDINAL(w, q) ((q) - workload_first_slot[w])

/* StatefulSet w: ordinals, scaling, rolling update by partition. */
inline manage_stateful(w) {
  /* d_key: every pod that exists runs (OrderedReady acts only then) */
  d_key = 1;
  for (d_q : SLOTS_OF(w)) {
    if
    :: pod[d_q].status != FREE && pod[d_q].status != RUNNING -> d_key = 0
    :: else -> skip
    fi
  }
  /* create missing ordinals, lowest first */
  for (d_q : SLOTS_OF(w)) {
    if
    :: pod[d_q].status == FREE && ORDINAL(w, d_q) < spec[w] && (workload_stateful[w] == 2 || d_key) ->
       pod[d_q].status = PENDING; pod[d_q].node = 0; pod[d_q].unschedulable = 0;
       pod[d_q].rev = (rolled[w] && ORDINAL(w, d_q) >= rollout_partition[w] -> 1 : 0);
       to_schedule++; d_key = 0;
       printf("KIVI:%d:%d\n", EVENT_POD_CREATED, d_q)
    :: else -> skip
    fi
  }
  /* delete surplus ordinals, highest first */
  d_victim = 0;
  for (d_q : SLOTS_OF(w)) {
    if
    :: ACTIVE(d_q) && ORDINAL(w, d_q) >= spec[w] ->
       if
       :: workload_stateful[w] == 2 -> delete_pod(d_q)
       :: else -> d_victim = d_q
       fi
    :: else -> skip
    fi
  }
  if
  :: d_victim > 0 && d_key -> delete_pod(d_victim); d_key = 0
  :: else -> skip
  fi;
  /* rolling update: the highest old pod at or above the partition, once every pod runs */
  if
  :: rolled[w] && rollout_kind[w] == 3 && d_key && d_victim == 0 ->
     for (d_q : SLOTS_OF(w)) {
       if
       :: ACTIVE(d_q) && !pod[d_q].rev && ORDINAL(w, d_q) >= rollout_partition[w] && ORDINAL(w, d_q) < spec[w] -> d_victim = d_q
       :: else -> skip
       fi
     }
     if
     :: d_victim > 0 -> delete_pod(d_victim)
     :: else -> skip
     fi
  :: else -> skip
  fi;
  /* for the rollout's progress and its report: old and new pods */
  d_old_pods = 0; d_new_available = 0;
  for (d_q : SLOTS_OF(w)) {
    if
    :: pod[d_q].status != FREE && !pod[d_q].rev && ORDINAL(w, d_q) >= rollout_partition[w] -> d_old_pods++
    :: pod[d_q].status == RUNNING && pod[d_q].rev -> d_new_available++
    :: else -> skip
    fi
  }
  RS(w, 0) = d_old_pods; RS(w, 1) = d_new_available;
  if
  :: rolled[w] && !rollout_done[w] && d_old_pods == 0 && d_new_available + (rollout_partition[w] < spec[w] -> rollout_partition[w] : spec[w]) == spec[w] ->
     rollout_done[w] = 1; printf("KIVI:%d:%d\n", EVENT_ROLLOUT_DONE, w)
  :: else -> skip
  fi;
  d_victim = 0
}

/* ReplicaSet r of workload w creates or deletes pods to match its spec. */
inline manage_replicas(w, r) {
  d_active = 0;
  for (d_q : SLOTS_OF(w)) {
    if
    :: ACTIVE(d_q) && pod[d_q].rev == r -> d_active++
    :: else -> skip
    fi
  }
  if
  :: d_active < RS(w, r) ->
     for (d_q : SLOTS_OF(w)) {
       if
       :: d_active < RS(w, r) && pod[d_q].status == FREE ->
          pod[d_q].status = PENDING; pod[d_q].node = 0; pod[d_q].unschedulable = 0; pod[d_q].rev = r;
          to_schedule++; d_active++;
          printf("KIVI:%d:%d\n", EVENT_POD_CREATED, d_q)
       :: else -> skip
       fi
     }
  :: d_active > RS(w, r) ->
     do
     :: d_active > RS(w, r) ->
        for (d_q : 1 .. NODES) { d_on_node[d_q] = 0 }
        for (d_q : SLOTS_OF(w)) {
          if
          :: ACTIVE(d_q) && pod[d_q].rev == r && pod[d_q].node > 0 -> d_on_node[pod[d_q].node]++
          :: else -> skip
          fi
        }
        d_best = -1; d_victim = 0;
        for (d_q : SLOTS_OF(w)) {
          if
          :: ACTIVE(d_q) && pod[d_q].rev == r ->
             d_key = DELETION_RANK(d_q);
             if
             :: d_key > d_best -> d_best = d_key; d_victim = d_q
             :: else -> skip
             fi
          :: else -> skip
          fi
        }
        delete_pod(d_victim);
        d_active--
     :: else -> break
     od
  :: else -> skip
  fi
}

proctype DeploymentController() {
  byte w;
end_deployment:
  do
  :: atomic {
       dc_work > 0 ->
       d_step {
         w = 1;
         do
         :: dc_dirty[w] -> break
         :: else -> w++
         od;
         dc_dirty[w] = 0; dc_work--;
         if
         :: workload_stateful[w] > 0 -> manage_stateful(w)
         :: else ->
            reconcile_deployment(w);
            for (d_r : 0 .. 1) { manage_replicas(w, d_r) }
         fi;
         w = 0;
         canonical()
       }
     }
  od
}

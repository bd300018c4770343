/*
 * Deployment rolling-update arithmetic, shared by the Deployment controller
 * (controllers/deployment.pml), the min-replicas-available check and the conformance probe
 * (probes/deployment.pml):
 *  - pkg/controller/deployment/util/deployment_util.go ResolveFenceposts, MaxUnavailable,
 *    NewRSNewReplicas (both strategies: `recreate` 1 for Recreate, 0 for RollingUpdate),
 *    DeploymentComplete;
 *  - pkg/controller/deployment/rolling.go reconcileNewReplicaSet, reconcileOldReplicaSets,
 *    cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate, for one old
 *    ReplicaSet (a unit rolls out one new revision).
 */
/* IntOrString fields: a count, or a percentage stored negated. maxSurge rounds up, maxUnavailable down. */
#define RESOLVE_UP(v, n) ((v) < 0 -> ((-(v)) * (n) + 99) / 100 : (v))
#define RESOLVE_DOWN(v, n) ((v) < 0 -> (-(v)) * (n) / 100 : (v))

hidden int ru_surge, ru_unavailable, ru_new, ru_budget, ru_cleanup, ru_scaled_down, ru_old, ru_complete;

/* DeploymentComplete: ru_complete = 1 when every replica is updated and available and no other
   pod is active. `status_replicas` counts active pods (a terminating one is not: the
   ReplicaSet controller's FilterActivePods); the model's observedGeneration is always current. */
inline deployment_complete(replicas, status_replicas, updated, available) {
  ru_complete = ((updated) == (replicas) && (status_replicas) == (replicas) && (available) == (replicas))
}

/* ResolveFenceposts: ru_surge, ru_unavailable; both 0 would never progress, so unavailable is 1. */
inline resolve_fenceposts(surge, unavailable, desired) {
  ru_surge = RESOLVE_UP(surge, (desired));
  ru_unavailable = RESOLVE_DOWN(unavailable, (desired));
  if
  :: ru_surge == 0 && ru_unavailable == 0 -> ru_unavailable = 1
  :: else -> skip
  fi
}

/* MaxUnavailable: ru_unavailable, at most the replicas; 0 for a Recreate Deployment (upstream
   returns 0 for any strategy but RollingUpdate, and for 0 replicas). */
inline max_unavailable(recreate, surge, unavailable, replicas) {
  resolve_fenceposts(surge, (unavailable), (replicas));
  if
  :: (recreate) || (replicas) == 0 -> ru_unavailable = 0
  :: !(recreate) && (replicas) != 0 && ru_unavailable > (replicas) -> ru_unavailable = (replicas)
  :: else -> skip
  fi
}

/*
 * NewRSNewReplicas: ru_new, the new ReplicaSet's replicas. Recreate: the Deployment's replicas.
 * RollingUpdate, from ru_surge (resolved), the replicas of all ReplicaSets and the new one's:
 * up to replicas + maxSurge in all.
 */
inline new_rs_new_replicas(recreate, replicas, all_replicas, new_replicas) {
  if
  :: (recreate) -> ru_new = (replicas)
  :: !(recreate) && (all_replicas) >= (replicas) + ru_surge -> ru_new = (new_replicas)
  :: else ->
     ru_new = (replicas) + ru_surge - (all_replicas);
     if
     :: ru_new > (replicas) - (new_replicas) -> ru_new = (replicas) - (new_replicas)
     :: else -> skip
     fi;
     ru_new = (new_replicas) + ru_new
  fi
}

/* reconcileNewReplicaSet: ru_new; a new ReplicaSet above the replicas scales down to them. */
inline reconcile_new_replica_set(replicas, all_replicas, new_replicas) {
  if
  :: (new_replicas) >= (replicas) -> ru_new = (replicas)
  :: else -> new_rs_new_replicas(0, replicas, (all_replicas), (new_replicas))
  fi
}

/* cleanupUnhealthyReplicas: ru_cleanup, the old ReplicaSet's unavailable replicas removed within `budget`. */
inline cleanup_unhealthy_replicas(budget, old_replicas, old_available) {
  ru_cleanup = (old_replicas) - (old_available);
  if
  :: ru_cleanup > (budget) -> ru_cleanup = (budget)
  :: else -> skip
  fi;
  if
  :: ru_cleanup < 0 -> ru_cleanup = 0
  :: else -> skip
  fi
}

/*
 * scaleDownOldReplicaSetsForRollingUpdate: ru_scaled_down, the old ReplicaSet's replicas
 * removed while more than replicas - ru_unavailable stay available.
 */
inline scale_down_old_replica_sets(replicas, available, old_replicas) {
  ru_scaled_down = (available) - ((replicas) - ru_unavailable);
  if
  :: ru_scaled_down > (old_replicas) -> ru_scaled_down = (old_replicas)
  :: else -> skip
  fi;
  if
  :: ru_scaled_down < 0 -> ru_scaled_down = 0
  :: else -> skip
  fi
}

/* reconcileOldReplicaSets: ru_old, the old ReplicaSet's replicas, with ru_unavailable (MaxUnavailable). */
inline reconcile_old_replica_sets(replicas, old_replicas, old_available, new_replicas, new_available) {
  ru_old = (old_replicas); ru_cleanup = 0; ru_scaled_down = 0;
  ru_budget = (old_replicas) + (new_replicas) - ((replicas) - ru_unavailable) - ((new_replicas) - (new_available));
  if
  :: (old_replicas) > 0 && ru_budget > 0 ->
     cleanup_unhealthy_replicas(ru_budget, (old_replicas), (old_available));
     ru_old = (old_replicas) - ru_cleanup;
     scale_down_old_replica_sets(replicas, (old_available) + (new_available), ru_old);
     ru_old = ru_old - ru_scaled_down
  :: else -> skip
  fi
}

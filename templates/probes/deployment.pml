/*
 * Conformance probe for the Deployment controller's rolling-update arithmetic
 * (tests/conformance); never in a verification model. Standalone: the inlines the Deployment
 * process runs (controllers/rolling_update.pml); the test appends an `init` that calls them per
 * case and prints:
 *   KIVI:97:case:surge:unavailable        (ResolveFenceposts, MaxUnavailable)
 *   KIVI:98:case:new_replicas             (reconcileNewReplicaSet)
 *   KIVI:99:case:old_replicas:cleanup:scaled_down   (reconcileOldReplicaSets and its parts)
 *   KIVI:88:case:complete                 (DeploymentComplete)
 */
{% include "controllers/rolling_update.pml" %}

inline probe_fenceposts(k) {
  printf("KIVI:97:%d:%d:%d\n", k, ru_surge, ru_unavailable)
}

inline probe_new_replica_set(k) {
  printf("KIVI:98:%d:%d\n", k, ru_new)
}

inline probe_complete(k) {
  printf("KIVI:88:%d:%d\n", k, ru_complete)
}

inline probe_old_replica_sets(k) {
  printf("KIVI:99:%d:%d:%d:%d\n", k, ru_old, ru_cleanup, ru_scaled_down)
}

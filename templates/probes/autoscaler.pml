/*
 * Conformance probe for the HorizontalPodAutoscaler's arithmetic (tests/conformance); never in
 * a verification model. Standalone: the replica calculation and normalisation the Autoscaler
 * process runs (controllers/replica_calculator.pml); the test appends an `init` that sets
 * each case's inputs, calls them and prints:
 *   KIVI:95:case:error:desired:utilisation:raw_average   (GetResourceReplicas)
 *   KIVI:96:case:replicas:condition                      (normalisation)
 */
{% include "controllers/replica_calculator.pml" %}

inline probe_replica_calculation(k) {
  rc_calculate();
  printf("KIVI:95:%d:%d:%d:%d:%d\n", k, rc_error, rc_desired, rc_util, (rc_ready > 0 -> rc_usage / rc_ready : 0))
}

inline probe_normalization(k, current, desired, min, max, behavior, up_limit, down_limit) {
  rc_normalize(current, desired, min, max, behavior, up_limit, down_limit);
  printf("KIVI:96:%d:%d:%d\n", k, rc_normalized, rc_condition)
}

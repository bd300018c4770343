/*
 * Conformance probe for the HorizontalPodAutoscaler's arithmetic (tests/conformance); never in
 * a verification model. Standalone: the replica calculation and normalisation the Autoscaler
 * process runs (controllers/replica_calculator.pml); the test appends an `init` that sets
 * each case's inputs, calls them and prints:
 *   KIVI:95:case:error:desired:utilisation:raw_average   (GetResourceReplicas)
 *   KIVI:96:case:replicas:condition                      (normalisation)
 *   KIVI:97:case:error:desired:usage                     (Pods, Object, External metrics)
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

/* `kind` 1: a Pods metric (pods added first), 2: a Value target, 3: an AverageValue target. */
inline probe_metric_replicas(k, kind, value, ready) {
  if
  :: kind == 1 -> rc_calculate_plain()
  :: kind == 2 -> rc_calculate_value(value, rc_pods, ready)
  :: kind == 3 -> rc_calculate_average_value(value)
  fi;
  printf("KIVI:97:%d:%d:%d:%d\n", k, rc_error, rc_desired, rc_util)
}

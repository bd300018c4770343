/*
 * Conformance probe for the HorizontalPodAutoscaler's arithmetic (tests/conformance); never in
 * a verification model. Standalone: the replica calculation and normalisation the Autoscaler
 * process runs (controllers/replica_calculator.pml, controllers/autoscaler_normalization.pml),
 * for one workload (1) whose rules and logs the test sets; the test appends an `init` that sets
 * each case's inputs, calls them and prints:
 *   KIVI:95:case:error:desired:utilisation:raw_average   (GetResourceReplicas)
 *   KIVI:96:case:replicas:condition                      (normalisation)
 *   KIVI:97:case:error:desired:usage                     (Pods, Object, External metrics)
 *   KIVI:93:case:limit                                   (a direction's policy limit)
 *   KIVI:92:case:replicas:entries:r0:..:r7               (stabilisation; the recommendations after it)
 *   KIVI:91:case:change:entries:c0:o0:..:c7:o7           (events in a period; the log after storing one;
 *                                                          90 for the scale-down direction)
 */
{% include "controllers/replica_calculator.pml" %}

#define WORKLOADS 1
#define HPA_LOG 8
#define HPA_POLICIES 10
short hpa_rec[(WORKLOADS + 1) * HPA_LOG];
byte hpa_rec_age[(WORKLOADS + 1) * HPA_LOG];
byte hpa_rec_len[WORKLOADS + 1];
short hpa_event[(WORKLOADS + 1) * 2 * HPA_LOG];
byte hpa_event_age[(WORKLOADS + 1) * 2 * HPA_LOG];
bit hpa_event_outdated[(WORKLOADS + 1) * 2 * HPA_LOG];
byte hpa_event_len[(WORKLOADS + 1) * 2];
byte hpa_behavior[WORKLOADS + 1];
byte hpa_select[(WORKLOADS + 1) * 2];
byte hpa_window[(WORKLOADS + 1) * 2];
byte hpa_longest[(WORKLOADS + 1) * 2];
byte hpa_policy[(WORKLOADS + 1) * 2 * HPA_POLICIES];
int hpa_policy_value[(WORKLOADS + 1) * 2 * HPA_POLICIES];
byte hpa_policy_period[(WORKLOADS + 1) * 2 * HPA_POLICIES];
byte hpa_sync_age[WORKLOADS + 1];
byte hpa_rec_expiry[WORKLOADS + 1];
byte hpa_event_expiry[WORKLOADS + 1];
{% include "controllers/autoscaler_normalization.pml" %}
hidden byte probe_i;

/* Workload 1's rules and logs back to zero before the next case sets its own. */
inline probe_reset() {
  for (probe_i : 0 .. HPA_LOG - 1) {
    hpa_rec[HPA_REC(1, probe_i)] = 0; hpa_rec_age[HPA_REC(1, probe_i)] = 0;
    hpa_event[HPA_EVENT(1, 0, probe_i)] = 0; hpa_event_age[HPA_EVENT(1, 0, probe_i)] = 0; hpa_event_outdated[HPA_EVENT(1, 0, probe_i)] = 0;
    hpa_event[HPA_EVENT(1, 1, probe_i)] = 0; hpa_event_age[HPA_EVENT(1, 1, probe_i)] = 0; hpa_event_outdated[HPA_EVENT(1, 1, probe_i)] = 0
  }
  for (probe_i : 0 .. HPA_POLICIES - 1) {
    hpa_policy[HPA_POLICY(1, 0, probe_i)] = 0; hpa_policy_value[HPA_POLICY(1, 0, probe_i)] = 0; hpa_policy_period[HPA_POLICY(1, 0, probe_i)] = 0;
    hpa_policy[HPA_POLICY(1, 1, probe_i)] = 0; hpa_policy_value[HPA_POLICY(1, 1, probe_i)] = 0; hpa_policy_period[HPA_POLICY(1, 1, probe_i)] = 0
  }
  hpa_rec_len[1] = 0; hpa_event_len[HPA_DIR(1, 0)] = 0; hpa_event_len[HPA_DIR(1, 1)] = 0;
  hpa_behavior[1] = 0; hpa_sync_age[1] = 0; hpa_rec_expiry[1] = 0; hpa_event_expiry[1] = 0;
  hpa_select[HPA_DIR(1, 0)] = 0; hpa_select[HPA_DIR(1, 1)] = 0;
  hpa_window[HPA_DIR(1, 0)] = 0; hpa_window[HPA_DIR(1, 1)] = 0;
  hpa_longest[HPA_DIR(1, 0)] = 0; hpa_longest[HPA_DIR(1, 1)] = 0;
  h_no_log = 0; h_fresh_age = 0
}

inline probe_add_recommendation(replicas, age) {
  hpa_rec[HPA_REC(1, hpa_rec_len[1])] = replicas; hpa_rec_age[HPA_REC(1, hpa_rec_len[1])] = age;
  hpa_rec_len[1]++
}

inline probe_add_event(d, change, age) {
  hpa_event[HPA_EVENT(1, d, hpa_event_len[HPA_DIR(1, d)])] = change;
  hpa_event_age[HPA_EVENT(1, d, hpa_event_len[HPA_DIR(1, d)])] = age;
  hpa_event_len[HPA_DIR(1, d)]++
}

inline probe_replica_calculation(k) {
  rc_calculate();
  printf("KIVI:95:%d:%d:%d:%d:%d\n", k, rc_error, rc_desired, rc_util, (rc_ready > 0 -> rc_usage / rc_ready : 0))
}

/* normalizeDesiredReplicas(WithBehaviors) with the logs as set (convertDesiredReplicasWith*
   when the recommendations log is empty: the stabilised recommendation is `desired`). */
inline probe_normalization(k, current, desired, min, max) {
  hpa_normalize(1, current, desired, min, max);
  printf("KIVI:96:%d:%d:%d\n", k, rc_normalized, rc_condition)
}

inline probe_policy_limit(k, d, current) {
  hpa_policy_limit(1, d, current);
  printf("KIVI:93:%d:%d\n", k, h_limit)
}

#define REC(i) hpa_rec[HPA_REC(1, i)]
inline probe_stabilize(k, current, desired) {
  hpa_stabilize(1, current, desired);
  printf("KIVI:92:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d\n", k, h_stabilized, hpa_rec_len[1], REC(0), REC(1), REC(2), REC(3), REC(4), REC(5), REC(6), REC(7))
}

/* getReplicasChangePerPeriod over direction d's events, then storeScaleEvent(prev -> new). */
#define EV(i) hpa_event[HPA_EVENT(1, h_d, i)], hpa_event_outdated[HPA_EVENT(1, h_d, i)]
inline probe_store_event(k, d, period, prev, new) {
  hpa_change_in_period(1, d, period);
  hpa_store_event(1, prev, new);
  h_d = d;
  printf("KIVI:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d\n", 91 - d, k, h_sum, hpa_event_len[HPA_DIR(1, d)], EV(0), EV(1), EV(2), EV(3), EV(4), EV(5), EV(6), EV(7))
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

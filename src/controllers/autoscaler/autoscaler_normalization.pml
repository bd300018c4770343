/*
 * HorizontalPodAutoscaler normalisation, pkg/controller/podautoscaler/horizontal.go:
 *  - normalizeDesiredReplicas (no spec.behavior): stabilizeRecommendation, the largest
 *    recommendation of the controller's downscale window (300 s), then
 *    convertDesiredReplicasWithRules: [minReplicas, min(maxReplicas, max(2 x current, 4))];
 *  - normalizeDesiredReplicasWithBehaviors: stabilizeRecommendationWithBehaviors (the current
 *    count brought within the lowest recommendation of the scale-up window and the highest of
 *    the scale-down window), then convertDesiredReplicasWithBehaviorRate with
 *    calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors, whose
 *    policies count the scale events of their period (getReplicasChangePerPeriod);
 *  - storeScaleEvent with markScaleEventsOutdated: a scaling decision is logged, reusing the
 *    last entry older than the direction's longest period.
 *
 * Time is abstract. A log entry carries an age class instead of a timestamp: the number of the
 * autoscaler's windows and periods (the input's thresholds) its age has reached. An entry counts
 * within a window or period while its class is below that duration's class (an age equal to
 * the duration counts as past it; upstream's legacy window still counts it: a tie of
 * measure zero). Upstream's logs and their reuse of old entries are kept as they are here; the
 * verification model ages the entries and forgets the ones no window or period can count
 * again (autoscaler.pml).
 *
 * Tables, per workload w and direction d (0 up, 1 down):
 *   hpa_select[HPA_DIR(w, d)]      0 Max, 1 Min, 2 Disabled
 *   hpa_window[HPA_DIR(w, d)]      the stabilisation window's class (0: no window)
 *   hpa_longest[HPA_DIR(w, d)]     the class of the direction's longest policy period
 *   hpa_policy[HPA_POLICY(w, d, i)], hpa_policy_value[..], hpa_policy_period[..]
 *                                  policy i: 0 none, 1 Pods, 2 Percent; its value; its period's class
 *   hpa_rec[HPA_REC(w, i)], hpa_rec_age[..], hpa_rec_len[w]          the recommendations
 *   hpa_event[HPA_EVENT(w, d, i)], hpa_event_age[..], hpa_event_outdated[..],
 *   hpa_event_len[HPA_DIR(w, d)]                                     the scale events
 */
#define HPA_DIR(w, d) ((w) * 2 + (d))
#define HPA_POLICY(w, d, i) (HPA_DIR(w, d) * HPA_POLICIES + (i))
#define HPA_REC(w, i) ((w) * HPA_LOG + (i))
#define HPA_EVENT(w, d, i) (HPA_DIR(w, d) * HPA_LOG + (i))
#define SELECT_MAX 0
#define SELECT_MIN 1
#define SELECT_DISABLED 2
#define POLICY_PODS 1
#define POLICY_PERCENT 2
/* An entry of age class `age` counts within a duration of class `limit`; never while the
   normalisation runs without its logs (h_no_log). */
#define HPA_COUNTS(age, limit) (!h_no_log && (age) < (limit))

hidden int h_sum, h_limit, h_start, h_proposed, h_up, h_down, h_old, h_change, h_stabilized;
hidden int h_up_limit, h_down_limit;
hidden byte h_i, h_j, h_p, h_d, h_fresh_age, h_no_log;

/* getReplicasChangePerPeriod: h_sum, the replicas direction d's events changed within the
   period of class `period`. */
inline hpa_change_in_period(w, d, period) {
  h_sum = 0;
  h_i = 0;
  do
  :: h_i < hpa_event_len[HPA_DIR(w, d)] ->
     if
     :: HPA_COUNTS(hpa_event_age[HPA_EVENT(w, d, h_i)], period) -> h_sum = h_sum + hpa_event[HPA_EVENT(w, d, h_i)]
     :: else -> skip
     fi;
     h_i++
  :: else -> break
  od
}

/* One policy's proposal from the replicas at the start of its period (h_start): h_proposed. */
inline hpa_propose(w, d, p) {
  if
  :: d == 0 && hpa_policy[HPA_POLICY(w, d, p)] == POLICY_PODS -> h_proposed = h_start + hpa_policy_value[HPA_POLICY(w, d, p)]
  /* math.Ceil(start x (1 + value / 100)) */
  :: d == 0 && hpa_policy[HPA_POLICY(w, d, p)] == POLICY_PERCENT && h_start >= 0 ->
     h_proposed = (h_start * (100 + hpa_policy_value[HPA_POLICY(w, d, p)]) + 99) / 100
  :: d == 0 && hpa_policy[HPA_POLICY(w, d, p)] == POLICY_PERCENT && h_start < 0 ->
     h_proposed = h_start * (100 + hpa_policy_value[HPA_POLICY(w, d, p)]) / 100
  :: d == 1 && hpa_policy[HPA_POLICY(w, d, p)] == POLICY_PODS -> h_proposed = h_start - hpa_policy_value[HPA_POLICY(w, d, p)]
  /* int32(start x (1 - value / 100)): truncated towards zero, as C divides */
  :: d == 1 && hpa_policy[HPA_POLICY(w, d, p)] == POLICY_PERCENT -> h_proposed = h_start * (100 - hpa_policy_value[HPA_POLICY(w, d, p)]) / 100
  fi
}

/*
 * calculateScaleUpLimitWithScalingRules (d 0) and calculateScaleDownLimitWithBehaviors (d 1):
 * h_limit. Each policy starts from the replicas at its period's start, the current count less
 * the period's scale-ups plus its scale-downs; Max picks the largest change, Min the smallest.
 */
inline hpa_policy_limit(w, d, current) {
  if
  :: hpa_select[HPA_DIR(w, d)] == SELECT_DISABLED -> h_limit = current
  :: else ->
     /* the largest change: the highest limit up, the lowest down */
     h_limit = ((hpa_select[HPA_DIR(w, d)] == SELECT_MIN) == (d == 0) -> 2147483647 : -2147483647);
     h_p = 0;
     do
     :: h_p < HPA_POLICIES && hpa_policy[HPA_POLICY(w, d, h_p)] != 0 ->
        hpa_change_in_period(w, 0, hpa_policy_period[HPA_POLICY(w, d, h_p)]);
        h_start = current - h_sum;
        hpa_change_in_period(w, 1, hpa_policy_period[HPA_POLICY(w, d, h_p)]);
        h_start = h_start + h_sum;
        hpa_propose(w, d, h_p);
        if
        :: (hpa_select[HPA_DIR(w, d)] == SELECT_MIN) == (d == 0) && h_proposed < h_limit -> h_limit = h_proposed
        :: (hpa_select[HPA_DIR(w, d)] == SELECT_MIN) != (d == 0) && h_proposed > h_limit -> h_limit = h_proposed
        :: else -> skip
        fi;
        h_p++
     :: else -> break
     od
  fi
}

/* Drop recommendation i of workload w; the entries after it move up, the freed slot is zeroed
   (one state per log content). */
inline hpa_rec_drop(w, i) {
  h_j = i;
  do
  :: h_j + 1 < hpa_rec_len[w] ->
     hpa_rec[HPA_REC(w, h_j)] = hpa_rec[HPA_REC(w, h_j + 1)];
     hpa_rec_age[HPA_REC(w, h_j)] = hpa_rec_age[HPA_REC(w, h_j + 1)];
     h_j++
  :: else -> break
  od;
  hpa_rec_len[w]--;
  hpa_rec[HPA_REC(w, hpa_rec_len[w])] = 0;
  hpa_rec_age[HPA_REC(w, hpa_rec_len[w])] = 0
}

inline hpa_event_drop(w, d, i) {
  h_j = i;
  do
  :: h_j + 1 < hpa_event_len[HPA_DIR(w, d)] ->
     hpa_event[HPA_EVENT(w, d, h_j)] = hpa_event[HPA_EVENT(w, d, h_j + 1)];
     hpa_event_age[HPA_EVENT(w, d, h_j)] = hpa_event_age[HPA_EVENT(w, d, h_j + 1)];
     hpa_event_outdated[HPA_EVENT(w, d, h_j)] = hpa_event_outdated[HPA_EVENT(w, d, h_j + 1)];
     h_j++
  :: else -> break
  od;
  hpa_event_len[HPA_DIR(w, d)]--;
  hpa_event[HPA_EVENT(w, d, hpa_event_len[HPA_DIR(w, d)])] = 0;
  hpa_event_age[HPA_EVENT(w, d, hpa_event_len[HPA_DIR(w, d)])] = 0;
  hpa_event_outdated[HPA_EVENT(w, d, hpa_event_len[HPA_DIR(w, d)])] = 0
}

/*
 * stabilizeRecommendationWithBehaviors, or without a behavior stabilizeRecommendation (its
 * scale-up window is 0, so every entry past the downscale window is old): h_stabilized, and
 * `desired` recorded in the last old entry or appended. A full log drops its oldest entry
 * first (a verification model never stores into a full log: autoscaler.pml bounds it before
 * the decision).
 */
inline hpa_stabilize(w, current, desired) {
  h_up = desired; h_down = desired; h_old = -1;
  h_i = 0;
  do
  :: h_i < hpa_rec_len[w] ->
     if
     :: HPA_COUNTS(hpa_rec_age[HPA_REC(w, h_i)], hpa_window[HPA_DIR(w, 0)]) && hpa_rec[HPA_REC(w, h_i)] < h_up -> h_up = hpa_rec[HPA_REC(w, h_i)]
     :: else -> skip
     fi;
     if
     :: HPA_COUNTS(hpa_rec_age[HPA_REC(w, h_i)], hpa_window[HPA_DIR(w, 1)]) && hpa_rec[HPA_REC(w, h_i)] > h_down -> h_down = hpa_rec[HPA_REC(w, h_i)]
     :: else -> skip
     fi;
     if
     :: hpa_rec_age[HPA_REC(w, h_i)] >= hpa_window[HPA_DIR(w, 0)] && hpa_rec_age[HPA_REC(w, h_i)] >= hpa_window[HPA_DIR(w, 1)] -> h_old = h_i
     :: else -> skip
     fi;
     h_i++
  :: else -> break
  od;
  if
  :: hpa_behavior[w] ->
     h_stabilized = (current < h_up -> h_up : current);
     h_stabilized = (h_stabilized > h_down -> h_down : h_stabilized)
  :: else -> h_stabilized = h_down
  fi;
  if
  :: h_no_log -> skip
  :: !h_no_log && h_old >= 0 -> hpa_rec[HPA_REC(w, h_old)] = desired; hpa_rec_age[HPA_REC(w, h_old)] = h_fresh_age
  :: else ->
     if
     :: hpa_rec_len[w] == HPA_LOG -> hpa_rec_drop(w, 0)
     :: else -> skip
     fi;
     hpa_rec[HPA_REC(w, hpa_rec_len[w])] = desired;
     hpa_rec_age[HPA_REC(w, hpa_rec_len[w])] = h_fresh_age;
     hpa_rec_len[w]++
  fi
}

/* storeScaleEvent (only with a behavior): the change from `prev` to `new` replicas, in the last
   entry of its direction outdated by the direction's longest period, or appended. */
inline hpa_store_event(w, prev, new) {
  if
  :: hpa_behavior[w] ->
     h_d = (new > prev -> 0 : 1);
     h_change = (new > prev -> new - prev : prev - new);
     h_old = -1;
     h_i = 0;
     do
     :: h_i < hpa_event_len[HPA_DIR(w, h_d)] ->
        if
        :: hpa_event_age[HPA_EVENT(w, h_d, h_i)] >= hpa_longest[HPA_DIR(w, h_d)] -> hpa_event_outdated[HPA_EVENT(w, h_d, h_i)] = 1
        :: else -> skip
        fi;
        if
        :: hpa_event_outdated[HPA_EVENT(w, h_d, h_i)] -> h_old = h_i
        :: else -> skip
        fi;
        h_i++
     :: else -> break
     od;
     if
     :: h_old >= 0 -> skip
     :: else ->
        if
        :: hpa_event_len[HPA_DIR(w, h_d)] == HPA_LOG -> hpa_event_drop(w, h_d, 0)
        :: else -> skip
        fi;
        h_old = hpa_event_len[HPA_DIR(w, h_d)];
        hpa_event_len[HPA_DIR(w, h_d)]++
     fi;
     hpa_event[HPA_EVENT(w, h_d, h_old)] = h_change;
     hpa_event_age[HPA_EVENT(w, h_d, h_old)] = h_fresh_age;
     hpa_event_outdated[HPA_EVENT(w, h_d, h_old)] = 0
  :: else -> skip
  fi
}

/* normalizeDesiredReplicas(WithBehaviors): rc_normalized and rc_condition for the
   prenormalised recommendation `desired` (replica_calculator.pml's rc_normalize does the
   bounds). */
inline hpa_normalize(w, current, desired, min, max) {
  hpa_stabilize(w, current, desired);
  if
  :: hpa_behavior[w] ->
     hpa_policy_limit(w, 0, current);
     /* no scale-up until the period's events have aged out */
     h_up_limit = (h_limit < current -> current : h_limit);
     hpa_policy_limit(w, 1, current);
     h_down_limit = (h_limit > current -> current : h_limit)
  :: else ->
     /* calculateScaleUpLimit */
     h_up_limit = (2 * current > 4 -> 2 * current : 4);
     h_down_limit = 0
  fi;
  rc_normalize(current, h_stabilized, min, max, hpa_behavior[w], h_up_limit, h_down_limit)
}

/*
 * HorizontalPodAutoscaler, CPU utilisation (pkg/controller/podautoscaler):
 *  - replica_calculator.go GetResourceReplicas: utilisation = usage / requests over the
 *    running pods; outside the 10% tolerance desired = ceil(ready x utilisation / target);
 *    when scaling up, pods not running yet count with no usage, and a result back inside the
 *    tolerance keeps the current count;
 *  - horizontal.go normalizeDesiredReplicas(WithBehaviors): stabilisation windows over the
 *    recommendations log, then the bounds and the scaling policies over the scale events log
 *    (autoscaler_normalization.pml, upstream's own arithmetic);
 *  - time between decisions: the logs' entries carry age classes. Before each decision every
 *    scale event is at least one sync period older, and any more time may have passed (a
 *    recommendation is refreshed every sync while nothing changes: see hpa_age). When its
 *    logs hold a decision back (a stabilised recommendation, a policy's period not over), the
 *    autoscaler decides again once time has moved some entry past a boundary (the tick below),
 *    so waiting out a window always ends.
 * The load is a total demand, level (percent of one pod's request) x the workload's starting
 * replicas, shared by every Ready pod, as a load balancer shares it: per-pod usage falls as
 * pods are added. A Ready pod still in its startup phase uses the more of its startup usage
 * and its share (the startup usage is what the pod uses right after it starts, serving
 * included); a pod that is not Ready during its startup serves nothing and counts as unready.
 * So the usage GetResourceReplicas sums over the ready pods is
 *   share x warm + max(startup, share) x cold,   share = demand / (warm + cold),
 * in per mille of one pod's request, truncated once on the total (upstream's utilisation is
 * an integer percent). Pods on an unreachable node have no metrics (missing pods), as
 * metrics-server cannot reach their kubelet.
 * Memory (Resource and ContainerResource), Pods, Object and External metrics follow the same
 * level (h_custom_metrics below), and the largest proposal of all metrics wins (horizontal.go
 * computeReplicasForMetrics). A ContainerResource metric is modelled as its Resource metric:
 * the model knows the pod's requests, not one container's.
 * It acts once the other controllers are idle, on the settled state.
 */
hidden int h_demand, h_target, h_current, h_desired, h_request, h_q, h_warm, h_cold, h_free;
{% include "controllers/replica_calculator.pml" %}
{% include "controllers/autoscaler_normalization.pml" %}

hidden int h_best, h_invalid, h_ratio, h_shown, h_ready, h_pod_usage;

/* One metric's proposal (computeReplicasForMetrics): the largest valid one wins. */
inline h_propose() {
  if
  :: rc_error -> h_invalid++
  :: else ->
     if
     :: rc_desired > h_best -> h_best = rc_desired
     :: else -> skip
     fi
  fi
}

/*
 * Pods, Object, External and memory metrics (hpa_metrics bits 2, 4, 8, 16; a memory or cpu
 * average value is a Pods-like plain metric, GetRawResourceReplicas). Their quantities are not in
 * the manifests, so the load level moves each of them by the same ratio to its target as the
 * cpu utilisation moves against its own: h_ratio, in per mille of the target at the workload's
 * starting replicas. A Pods metric is a demand shared by the ready pods, as cpu is; an
 * AverageValue target divides a total demand; a Value target is a level that does not fall as
 * pods are added (a queue, a latency), so upstream multiplies the ready pods by its ratio.
 */
inline h_custom_metrics(w) {
  h_ratio = LEVEL(w, load[w]) * 1000 / h_target;
  /* at most 5000 times the target: the products below stay within 32 bits (x 254 pods) */
  h_ratio = (h_ratio > 5000000 -> 5000000 : h_ratio);
  if
  :: hpa_metrics[w] & 2 ->
     rc_begin(h_current, 1000);
     for (h_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
       if
       :: pod[h_q].status == RUNNING -> rc_add_pod(RC_RUNNING, 1, 0, 1, 0, 0)
       :: pod[h_q].status == PENDING || pod[h_q].status == BOUND -> rc_add_pod(RC_PENDING, 0, 0, 0, 0, 0)
       :: pod[h_q].status == UNREACHABLE -> rc_add_pod(RC_RUNNING, 0, 0, 0, 0, 0)
       :: else -> skip
       fi
     }
     rc_usage = h_ratio * workload_base[w];
     rc_calculate_plain();
     h_propose()
  :: else -> skip
  fi;
  if
  :: hpa_metrics[w] & 4 ->
     rc_begin(h_current, 1000);
     h_ready = 0;
     for (h_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
       if
       :: pod[h_q].status == RUNNING || pod[h_q].status == PENDING || pod[h_q].status == BOUND || pod[h_q].status == UNREACHABLE ->
          rc_pods++;
          /* getReadyPodsCount: Running and Ready */
          if
          :: pod[h_q].status == RUNNING && !(!pod[h_q].warm && workload_startup_unready[w]) -> h_ready++
          :: else -> skip
          fi
       :: else -> skip
       fi
     }
     rc_calculate_value(h_ratio, rc_pods, h_ready);
     h_propose()
  :: else -> skip
  fi;
  if
  :: hpa_metrics[w] & 8 ->
     rc_begin(h_current, 1000);
     rc_calculate_average_value(h_ratio * workload_base[w]);
     h_propose()
  :: else -> skip
  fi;
  /* A memory Resource or ContainerResource metric with a Utilization target:
     GetResourceReplicas on the memory requests, every Running pod ready. Its usage is at the
     same ratio to its target as the other metrics: per pod, h_ratio / 1000 of the target,
     capped at 50 times the request (5000%) so the sums stay within 32 bits. */
  if
  :: hpa_metrics[w] & 16 ->
     rc_begin(h_current, hpa_memory_target[w]);
     rc_not_cpu();
     h_request = (template_mem[workload_template[w]] > 0 -> 1000 : 0);
     for (h_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
       if
       :: pod[h_q].status == RUNNING -> rc_add_pod(RC_RUNNING, 1, 0, 1, h_request, 0)
       :: pod[h_q].status == PENDING || pod[h_q].status == BOUND -> rc_add_pod(RC_PENDING, 0, 0, 0, h_request, 0)
       :: pod[h_q].status == UNREACHABLE -> rc_add_pod(RC_RUNNING, 0, 0, 0, h_request, 0)
       :: else -> skip
       fi
     }
     h_pod_usage = (h_ratio > 5000000 / hpa_memory_target[w] -> 50000 : h_ratio * hpa_memory_target[w] / 100);
     rc_usage = (h_pod_usage > 50000 -> 50000 : h_pod_usage) * workload_base[w];
     rc_calculate();
     h_propose()
  :: else -> skip
  fi
}


/* The aging loops run outside d_step, where pan backtracks through their choices: their
   variables belong to the state (a hidden one would keep the value of another branch), and
   are zero again once the decision is made. */
byte h_ceiling, h_a, h_done, h_w;

/* Time passes: each entry of log AGE (oldest first, `entries` of them) moves up any number of
   classes, never past the older entry before it nor past `expiry` (forgotten). */
#define HPA_AGE_LOG(AGE, entries, expiry) \
  h_ceiling = expiry; \
  h_a = 0; \
  do \
  :: h_a < entries -> \
     do \
     :: AGE(h_a) < h_ceiling -> AGE(h_a)++ \
     :: break \
     od; \
     h_ceiling = AGE(h_a); \
     h_a++ \
  :: else -> break \
  od

/* The next boundary crossing: the oldest entry of some class in log AGE moves up one. */
#define HPA_TICK_LOG(AGE, entries) \
  h_a = 0; h_done = 0; \
  do \
  :: h_a < entries && !h_done && (h_a == 0 || AGE(h_a - 1) > AGE(h_a)) -> AGE(h_a)++; h_done = 1 \
  :: h_a < entries && !h_done -> h_a++ \
  :: else -> break \
  od; \
  if \
  :: !h_done -> AGE(0)++ \
  :: else -> skip \
  fi

/* The age of entry i of workload h_w's logs. */
#define REC_AGE(i) hpa_rec_age[HPA_REC(h_w, i)]
#define UP_AGE(i) hpa_event_age[HPA_EVENT(h_w, 0, i)]
#define DOWN_AGE(i) hpa_event_age[HPA_EVENT(h_w, 1, i)]

/* Forget the entries no window or period can count again: recommendations past both windows
   or redundant (a newer one in every window it is in, at least as high for the scale-down
   window's maximum and at most as high for the scale-up window's minimum), events past every
   period. Events stay oldest first (storeScaleEvent may reuse a slot in the middle). One state
   per content that decides alike. */
inline hpa_forget(w) {
  h_a = 0;
  do
  :: h_a < hpa_rec_len[w] ->
     h_done = (hpa_rec_age[HPA_REC(w, h_a)] >= hpa_window[HPA_DIR(w, 0)] && hpa_rec_age[HPA_REC(w, h_a)] >= hpa_window[HPA_DIR(w, 1)]);
     h_p = h_a + 1;
     do
     :: h_p < hpa_rec_len[w] && !h_done ->
        h_done = ((hpa_rec_age[HPA_REC(w, h_a)] >= hpa_window[HPA_DIR(w, 1)] || hpa_rec[HPA_REC(w, h_p)] >= hpa_rec[HPA_REC(w, h_a)]) &&
                  (hpa_rec_age[HPA_REC(w, h_a)] >= hpa_window[HPA_DIR(w, 0)] || hpa_rec[HPA_REC(w, h_p)] <= hpa_rec[HPA_REC(w, h_a)]));
        h_p++
     :: else -> break
     od;
     if
     :: h_done -> hpa_rec_drop(w, h_a)
     :: else -> h_a++
     fi
  :: else -> break
  od;
{% if shape.hpa_events %}
  for (h_d : 0 .. 1) {
    h_a = 0;
    do
    :: h_a < hpa_event_len[HPA_DIR(w, h_d)] && hpa_event_age[HPA_EVENT(w, h_d, h_a)] >= hpa_event_expiry[w] -> hpa_event_drop(w, h_d, h_a)
    :: h_a < hpa_event_len[HPA_DIR(w, h_d)] && hpa_event_age[HPA_EVENT(w, h_d, h_a)] < hpa_event_expiry[w] -> h_a++
    :: else -> break
    od;
    /* insertion sort, oldest (highest class) first, stable */
    h_a = 1;
    do
    :: h_a < hpa_event_len[HPA_DIR(w, h_d)] ->
       h_p = h_a;
       do
       :: h_p > 0 && hpa_event_age[HPA_EVENT(w, h_d, h_p - 1)] < hpa_event_age[HPA_EVENT(w, h_d, h_p)] ->
          h_sum = hpa_event[HPA_EVENT(w, h_d, h_p)];
          hpa_event[HPA_EVENT(w, h_d, h_p)] = hpa_event[HPA_EVENT(w, h_d, h_p - 1)];
          hpa_event[HPA_EVENT(w, h_d, h_p - 1)] = h_sum;
          h_sum = hpa_event_age[HPA_EVENT(w, h_d, h_p)];
          hpa_event_age[HPA_EVENT(w, h_d, h_p)] = hpa_event_age[HPA_EVENT(w, h_d, h_p - 1)];
          hpa_event_age[HPA_EVENT(w, h_d, h_p - 1)] = h_sum;
          h_sum = hpa_event_outdated[HPA_EVENT(w, h_d, h_p)];
          hpa_event_outdated[HPA_EVENT(w, h_d, h_p)] = hpa_event_outdated[HPA_EVENT(w, h_d, h_p - 1)];
          hpa_event_outdated[HPA_EVENT(w, h_d, h_p - 1)] = h_sum;
          h_p--
       :: else -> break
       od;
       h_a++
    :: else -> break
    od
  }
{% endif %}
  skip
}

/* A full log (HPA_LOG entries) loses its oldest before a decision stores one more: the
   model's bound, that a decision finds at most HPA_LOG - 1 earlier entries of a log that still
   count (docs/conformance.md). */
#define HPA_BOUND_LOG(AGE, entries, expiry) \
  if \
  :: entries >= HPA_LOG -> AGE(0) = expiry \
  :: else -> skip \
  fi

/*
 * Time passes before a decision on h_w (any amount) for the scale events: their age is the time
 * since that scaling. Not for the recommendations: while nothing changes the autoscaler stores
 * the same recommendation every sync period, so at a decision the newest is one sync old and an
 * older one is as old as the change that superseded it; that time passes in the wait (the tick
 * below) when such an entry holds a decision back, and changes nothing when it does not.
 */
inline hpa_age() {
{% if shape.hpa_events %}
  HPA_AGE_LOG(UP_AGE, hpa_event_len[HPA_DIR(h_w, 0)], hpa_event_expiry[h_w]);
  HPA_AGE_LOG(DOWN_AGE, hpa_event_len[HPA_DIR(h_w, 1)], hpa_event_expiry[h_w]);
  HPA_BOUND_LOG(UP_AGE, hpa_event_len[HPA_DIR(h_w, 0)], hpa_event_expiry[h_w]);
  HPA_BOUND_LOG(DOWN_AGE, hpa_event_len[HPA_DIR(h_w, 1)], hpa_event_expiry[h_w]);
{% endif %}
  HPA_BOUND_LOG(REC_AGE, hpa_rec_len[h_w], hpa_rec_expiry[h_w])
}

/* The autoscaler's decision on workload w, on the settled state. */
inline hpa_decide(w) {
  hpa_forget(w);
  h_current = spec[w]; h_target = hpa_target[w];
  h_warm = 0; h_cold = 0;
  rc_begin(h_current, h_target);
  /* every pod with the workload's request (1000: usage is in per mille of it) */
  h_request = (template_cpu[workload_template[w]] > 0 -> 1000 : 0);
  for (h_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
    if
    :: pod[h_q].status == RUNNING && !pod[h_q].warm && workload_startup_unready[w] ->
       rc_add_pod(RC_RUNNING, 0, 0, 1, h_request, 0)
    :: pod[h_q].status == RUNNING && !(!pod[h_q].warm && workload_startup_unready[w]) ->
       rc_add_pod(RC_RUNNING, 1, 0, 1, h_request, 0);
       if
       :: pod[h_q].warm -> h_warm++
       :: else -> h_cold++
       fi
    :: pod[h_q].status == PENDING || pod[h_q].status == BOUND -> rc_add_pod(RC_PENDING, 0, 0, 0, h_request, 0)
    /* a pod on an unreachable node is still Running, but its kubelet reports no
       metrics: a missing pod (groupPods), 0% when scaling up, the fallback when
       scaling down, not a pod that vanished and left its load to the others */
    :: pod[h_q].status == UNREACHABLE -> rc_add_pod(RC_RUNNING, 0, 0, 0, h_request, 0)
    :: else -> skip
    fi
  }
  /* total usage of the ready pods, in per mille of one pod's request */
  h_demand = LEVEL(w, load[w]) * workload_base[w] * 10;
  if
  :: h_warm + h_cold == 0 -> rc_usage = 0
  :: h_warm + h_cold > 0 && workload_startup[w] * 10 * (h_warm + h_cold) > h_demand ->
     rc_usage = h_demand * h_warm / (h_warm + h_cold) + h_cold * workload_startup[w] * 10
  :: else -> rc_usage = h_demand
  fi;
  h_demand = rc_usage;
  h_shown = (rc_ready > 0 -> h_demand / (10 * rc_ready) : 0);
  h_free = h_current;
  if
  :: h_current > hpa_max[w] -> h_desired = hpa_max[w]; h_free = h_desired
  :: h_current < hpa_min[w] -> h_desired = hpa_min[w]; h_free = h_desired
  :: h_current == 0 -> h_desired = h_current
  :: h_current > 0 && hpa_min[w] <= h_current && h_current <= hpa_max[w] ->
     h_best = -1; h_invalid = 0;
     if
     :: hpa_metrics[w] & 1 -> rc_calculate(); h_propose()
     :: else -> skip
     fi;
     if
     :: hpa_metrics[w] > 1 -> h_custom_metrics(w)
     :: else -> skip
     fi;
     if
     /* the autoscaler cannot compute (every metric invalid), or would scale down with
        one of them invalid: it leaves the replicas (computeReplicasForMetrics) */
     :: h_best < 0 || (h_invalid > 0 && h_best < h_current) -> h_desired = h_current
     :: else ->
        /* The recommendation within [minReplicas, maxReplicas]: the bounds apply to whatever
           the windows make of it, so a decision is the same, and the log holds fewer values. */
        h_best = (h_best < hpa_min[w] -> hpa_min[w] : h_best);
        h_best = (h_best > hpa_max[w] -> hpa_max[w] : h_best);
        /* first without the logs (what the decision would be once they have aged out), then
           with them; one copy of the arithmetic */
        h_no_log = 1; h_fresh_age = hpa_sync_age[w];
        do
        :: true ->
           hpa_normalize(w, h_current, h_best, hpa_min[w], hpa_max[w]);
           if
           :: h_no_log -> h_free = rc_normalized; h_no_log = 0
           :: else -> h_desired = rc_normalized; break
           fi
        od
     fi
  fi;
  /* shown: the cpu usage per running pod, or the custom metrics' level against their targets */
  if
  :: !(hpa_metrics[w] & 1) -> h_shown = LEVEL(w, load[w]) * 100 / h_target
  :: else -> skip
  fi;
  if
  :: h_desired != h_current ->
     /* why, for the trace: the metrics' recommendation within the bounds (-2: the current
        count was outside them), and the decision the logs aside (the policies' limit) */
     printf("KIVI:%d:%d:%d:%d:%d:%d:%d\n", EVENT_HPA_SCALED, w, h_current, h_desired, h_shown,
            (h_current > hpa_max[w] || h_current < hpa_min[w] -> -2 : h_best), h_free);
     spec[w] = h_desired;
{% if shape.hpa_events %}
     hpa_store_event(w, h_current, h_desired);
{% endif %}
     if
     :: h_desired == hpa_max[w] && hpa_max[w] != hpa_min[w] -> at_max[w] = MONITORS_OSCILLATION
     :: else -> skip
     fi;
     mark_dc(w)
  :: else -> skip
  fi;
  /* the logs hold the decision back: decide again once time has passed */
  if
  :: h_desired != h_free && !hpa_held[w] -> hpa_held[w] = 1; hpa_held_count++
  :: h_desired == h_free && hpa_held[w] -> hpa_held[w] = 0; hpa_held_count--
  :: else -> skip
  fi;
  hpa_forget(w)
}

proctype Autoscaler() {
  byte w;
end_autoscaler:
  do
  :: atomic {
       (hpa_work > 0 || hpa_held_count > 0) && CONTROLLERS_IDLE ->
       if
       :: hpa_work > 0 ->
          d_step {
            w = 1;
            do
            :: hpa_dirty[w] -> break
            :: else -> w++
            od;
            hpa_dirty[w] = 0; hpa_work--;
            h_w = w
          }
       /* a decision held back by the logs: time passes until some entry crosses a boundary,
          and the autoscaler decides again */
       :: else ->
          d_step {
            w = 1;
            do
            :: hpa_held[w] -> break
            :: else -> w++
            od;
            h_w = w
          }
          if
          /* not the newest recommendation: the decision stores a fresh one of the same value
             (nothing has changed but time), so its aging would change nothing and the wait
             would not advance */
          :: hpa_rec_len[w] > 1 -> HPA_TICK_LOG(REC_AGE, hpa_rec_len[w] - 1)
{% if shape.hpa_events %}
          :: hpa_event_len[HPA_DIR(w, 0)] > 0 -> HPA_TICK_LOG(UP_AGE, hpa_event_len[HPA_DIR(w, 0)])
          :: hpa_event_len[HPA_DIR(w, 1)] > 0 -> HPA_TICK_LOG(DOWN_AGE, hpa_event_len[HPA_DIR(w, 1)])
{% endif %}
          :: else -> skip
          fi
       fi;
       hpa_age();
       d_step {
         hpa_decide(w);
         w = 0; h_w = 0; h_a = 0; h_done = 0; h_ceiling = 0;
         c_code { kivi_profile_move(((P0 *)_this)->_t); }
       }
     }
  od
}

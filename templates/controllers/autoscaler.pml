/*
 * HorizontalPodAutoscaler, CPU utilisation (pkg/controller/podautoscaler):
 *  - replica_calculator.go GetResourceReplicas: utilisation = usage / requests over the
 *    running pods; outside the 10% tolerance desired = ceil(ready x utilisation / target);
 *    when scaling up, pods not running yet count with no usage, and a result back inside the
 *    tolerance keeps the current count;
 *  - horizontal.go normalizeDesiredReplicas: clamp to [minReplicas, min(maxReplicas,
 *    max(2 x current, 4))]; with spec.behavior (normalizeDesiredReplicasWithBehaviors) the
 *    scale-up and scale-down policies bound one decision instead (tables computed before the
 *    model; each decision starts its own period, as there is no clock);
 *  - stabilisation windows (stabilizeRecommendation, 300 s down by default; up only with a
 *    behavior): without a clock, a recommendation in a stabilised direction is applied only
 *    when the autoscaler sees it a second time, with anything else free to happen in between.
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
/* A recommendation in a direction with a stabilisation window. */
#define STABILIZED(w) ((h_desired < h_current && hpa_stabilize_down[w]) || (h_desired > h_current && hpa_stabilize_up[w]))
hidden int h_demand, h_target, h_current, h_desired, h_request, h_q, h_warm, h_cold;
{% include "controllers/replica_calculator.pml" %}

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


proctype Autoscaler() {
  byte w;
end_autoscaler:
  do
  :: atomic {
       hpa_work > 0 && CONTROLLERS_IDLE ->
       d_step {
         w = 1;
         do
         :: hpa_dirty[w] -> break
         :: else -> w++
         od;
         hpa_dirty[w] = 0; hpa_work--;
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
         if
         :: h_current > hpa_max[w] -> h_desired = hpa_max[w]
         :: h_current < hpa_min[w] -> h_desired = hpa_min[w]
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
               rc_normalize(h_current, h_best, hpa_min[w], hpa_max[w], hpa_behavior[w], hpa_up_limit[w * HPA_TABLE + h_current], hpa_down_limit[w * HPA_TABLE + h_current]);
               h_desired = rc_normalized
            fi
         fi;
         /* shown: the cpu usage per running pod, or the custom metrics' level against their targets */
         if
         :: !(hpa_metrics[w] & 1) -> h_shown = LEVEL(w, load[w]) * 100 / h_target
         :: else -> skip
         fi;
         if
         :: STABILIZED(w) && down_seen[w] != h_desired ->
            /* wait out the window: decide again later */
            down_seen[w] = h_desired;
            mark_hpa(w)
         :: h_desired != h_current && !(STABILIZED(w) && down_seen[w] != h_desired) ->
            printf("KIVI:%d:%d:%d:%d:%d\n", EVENT_HPA_SCALED, w, h_current, h_desired, h_shown);
            spec[w] = h_desired; down_seen[w] = 0;
            if
            :: h_desired == hpa_max[w] && hpa_max[w] != hpa_min[w] -> at_max[w] = 1
            :: else -> skip
            fi;
            mark_dc(w)
         :: else -> down_seen[w] = 0
         fi;
         w = 0
       }
     }
  od
}

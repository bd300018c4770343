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
 * The load is a total demand shared by the warm running pods: level (percent of one pod's
 * request) x the workload's starting replicas, so per-pod usage falls as pods are added, as it
 * does behind a load balancer; a pod in its startup phase uses its startup usage instead.
 * It acts once the other controllers are idle, on the settled state.
 */
/* A recommendation in a direction with a stabilisation window. */
#define STABILIZED(w) ((h_desired < h_current && hpa_stabilize_down[w]) || (h_desired > h_current && hpa_stabilize_up[w]))
hidden int h_ready, h_unready, h_demand, h_target, h_current, h_desired, h_limit, h_q, h_total, h_warm, h_cold;

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
         h_ready = 0; h_unready = 0; h_warm = 0; h_cold = 0;
         for (h_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
           if
           :: pod[h_q].status == RUNNING && !pod[h_q].warm && workload_startup_unready[w] -> h_unready++
           :: pod[h_q].status == RUNNING && !(!pod[h_q].warm && workload_startup_unready[w]) ->
              h_ready++;
              if
              :: pod[h_q].warm -> h_warm++
              :: else -> h_cold++
              fi
           :: pod[h_q].status == PENDING || pod[h_q].status == BOUND -> h_unready++
           :: else -> skip
           fi
         }
         /* total usage, in percent of one pod's request */
         h_demand = (h_warm > 0 -> LEVEL(w, load[w]) * workload_base[w] : 0) + h_cold * workload_startup[w];
         if
         :: h_current > hpa_max[w] -> h_desired = hpa_max[w]
         :: h_current < hpa_min[w] -> h_desired = hpa_min[w]
         :: h_current == 0 || h_ready == 0 -> h_desired = h_current
         :: else ->
            if
            :: (h_demand - h_target * h_ready) * 10 <= h_target * h_ready && (h_target * h_ready - h_demand) * 10 <= h_target * h_ready -> h_desired = h_current
            :: h_demand > h_target * h_ready && h_unready > 0 ->
               h_total = h_ready + h_unready;
               if
               :: h_demand <= h_target * h_total || (h_demand - h_target * h_total) * 10 <= h_target * h_total -> h_desired = h_current
               :: else -> h_desired = (h_demand + h_target - 1) / h_target
               fi
            :: else -> h_desired = (h_demand + h_target - 1) / h_target
            fi;
            h_limit = hpa_up_limit[w * HPA_TABLE + h_current];
            if
            :: h_limit > hpa_max[w] -> h_limit = hpa_max[w]
            :: else -> skip
            fi;
            if
            :: h_desired < hpa_min[w] -> h_desired = hpa_min[w]
            :: h_desired > h_limit -> h_desired = h_limit
            :: else -> skip
            fi;
            /* scale-down policies */
            if
            :: h_desired < h_current && h_desired < hpa_down_limit[w * HPA_TABLE + h_current] ->
               h_desired = hpa_down_limit[w * HPA_TABLE + h_current];
               if
               :: h_desired < hpa_min[w] -> h_desired = hpa_min[w]
               :: else -> skip
               fi
            :: else -> skip
            fi
         fi;
         if
         :: STABILIZED(w) && down_seen[w] != h_desired ->
            /* wait out the window: decide again later */
            down_seen[w] = h_desired;
            mark_hpa(w)
         :: h_desired != h_current && !(STABILIZED(w) && down_seen[w] != h_desired) ->
            printf("KIVI:6:%d:%d:%d:%d\n", w, h_current, h_desired, (h_ready > 0 -> h_demand / h_ready : 0));
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

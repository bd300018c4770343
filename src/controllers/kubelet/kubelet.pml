/*
 * kubelet: starts the pods bound to its node and removes terminated ones (pkg/kubelet,
 * simplified: admission passes, a pod is Running in one step, termination completes in one
 * step). A removed pod frees resources, so unschedulable pods are tried again.
 *
 * Time scales: the scheduler and the workload controllers react to a change within
 * milliseconds, while a container takes seconds to start and a deleted pod its grace period
 * (30 s by default) to terminate. So the kubelet acts once the scheduler has no pod to place
 * and the Deployment, ReplicaSet and StatefulSet controllers have no work: every pod phase
 * change is seen by them before the next one. A controller that falls behind several kubelet
 * changes is explored only with the `controller-lag` fault (informers that lag: `stale-reads`).
 * Of its own work the kubelet starts bound pods before it removes terminating ones, for the
 * same reason.
 */

proctype Kubelet() {
  byte q;
end_kubelet:
  do
  :: atomic {
       kubelet_work > 0{% if not ir.controller_lag %} && to_schedule == 0 && dc_work == 0{% endif %} ->
       d_step {
         q = 1;
         do
         :: pod[q].status == BOUND || pod[q].status == TERMINATING -> break
         :: else -> q++
         od;
         kubelet_work--;
         if
         :: pod[q].status == BOUND ->
            pod[q].status = RUNNING;
            pod[q].warm = (workload_startup[WORKLOAD_OF(q)] == 0);
            printf("KIVI:%d:%d:%d\n", EVENT_POD_STARTED, q, pod[q].node);
            running[WORKLOAD_OF(q)]++;
            if
            :: running[WORKLOAD_OF(q)] >= min_available[WORKLOAD_OF(q)] && MONITORS_MIN_REPLICAS -> min_reached[WORKLOAD_OF(q)] = 1
            :: else -> skip
            fi;
            if
            :: BIT(template_no_execute[slot_template[q]], pod[q].node) -> taint_work++
            :: else -> skip
            fi;
            /* no-eviction-loop: a replacement started after an eviction */
            if
            :: evicted[WORKLOAD_OF(q)] && loops[WORKLOAD_OF(q)] < EVICTION_LOOPS -> evicted[WORKLOAD_OF(q)] = 0; loops[WORKLOAD_OF(q)]++
            :: else -> skip
            fi
         :: else ->
            printf("KIVI:%d:%d:%d\n", EVENT_POD_REMOVED, q, pod[q].node);
            pod_gone(q);
            pod[q].status = FREE; pod[q].node = 0; pod[q].warm = 0; pod[q].rev = 0;
            /* the ReplicaSet sees the deletion (and may use the freed slot) */
            mark_dc(WORKLOAD_OF(q));
            retry_unschedulable()
         fi;
         mark_hpa(WORKLOAD_OF(q));
         /* a rollout advances as pods become available or go away; an OrderedReady
            StatefulSet creates its next pod once the previous one runs */
         if
         :: (rolled[WORKLOAD_OF(q)] && !rollout_done[WORKLOAD_OF(q)]) || workload_stateful[WORKLOAD_OF(q)] == 1 -> mark_dc(WORKLOAD_OF(q))
         :: else -> skip
         fi;
         q = 0;
         canonical()
       }
     }
  od
}

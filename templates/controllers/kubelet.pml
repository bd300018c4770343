/*
 * kubelet: starts the pods bound to its node and removes terminated ones (pkg/kubelet,
 * simplified: admission passes, a pod is Running in one step, termination completes in one
 * step). A removed pod frees resources, so unschedulable pods are tried again.
 */
hidden int k_q;

proctype Kubelet() {
  byte q;
end_kubelet:
  do
  :: atomic {
       kubelet_work > 0 ->
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
            printf("KIVI:4:%d:%d\n", q, pod[q].node)
         :: else ->
            printf("KIVI:5:%d:%d\n", q, pod[q].node);
            pod[q].status = FREE; pod[q].node = 0;
            for (k_q : 1 .. PODS) {
              if
              :: pod[k_q].status == PENDING && pod[k_q].unschedulable ->
                 pod[k_q].unschedulable = 0; unschedulable--; to_schedule++
              :: else -> skip
              fi
            }
         fi;
         mark_hpa(template_workload[slot_template[q]]);
         q = 0
       }
     }
  od
}

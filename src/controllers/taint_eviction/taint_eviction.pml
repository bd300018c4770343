/*
 * Taint eviction controller (pkg/controller/tainteviction): a pod running on a node with a
 * NoExecute taint it does not tolerate is deleted (after tolerationSeconds, which the model
 * does not time: it happens at some point). Its controller then creates a replacement, which
 * may land on the same node again.
 */
hidden int t_q;

proctype TaintEviction() {
end_taint_eviction:
  do
  :: atomic {
       taint_work > 0 ->
       d_step {
         t_q = 1;
         do
         :: pod[t_q].status == RUNNING && BIT(template_no_execute[slot_template[t_q]], pod[t_q].node) -> break
         :: else -> t_q++
         od;
         printf("KIVI:%d:%d:%d\n", EVENT_TAINT_EVICTED, t_q, pod[t_q].node);
         terminate_running(t_q);
         evicted[WORKLOAD_OF(t_q)] = MONITORS_EVICTION_LOOP;
         t_q = 0;
         canonical()
       }
     }
  od
}

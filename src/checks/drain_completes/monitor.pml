/*
 * Check `drain-completes`: a drain (events/node_drain.pml, after kubectl's drain package,
 * staging/src/k8s.io/kubectl/pkg/drain) finishes. Once the controllers are idle while a node
 * drains, nothing changes the budgets' counts any more; if no pod left on the node may be
 * evicted then (pkg/registry/core/pod/storage/eviction.go refuses every one), kubectl retries
 * forever and the drain never ends.
 */
hidden int dc_q, dc_left, dc_free, dc_stuck;

proctype CheckDrainCompletes() {
end_check_drain_completes:
  do
  :: atomic {
       QUIESCENT && draining > 0 ->
       d_step {
         dc_left = 0; dc_free = 0; dc_stuck = 0;
         for (dc_q : 1 .. PODS) {
           if
           :: pod[dc_q].node == draining && pod[dc_q].status != FREE && !template_daemon[slot_template[dc_q]] ->
              dc_left++;
              if
              :: pod[dc_q].status == BOUND || pod[dc_q].status == RUNNING ->
                 disruption_allowed(dc_q);
                 if
                 :: b_ok -> dc_free++
                 :: else -> dc_stuck = dc_q
                 fi
              :: else -> dc_free++  /* terminating: on its way out */
              fi
           :: else -> skip
           fi
         }
       }
       if
       :: dc_left > 0 && dc_free == 0 -> printf("KIVI:%d:%d:%d:%d\n", EVENT_DRAIN_STUCK, dc_stuck, draining, dc_left); assert(false)
       :: else -> dc_left = 0; dc_free = 0; dc_stuck = 0
       fi
     }
  od
}

/*
 * Check `pods-balanced`: once the cluster has settled, the running pods of each workload differ
 * by at most {{ ir.params["pods-balanced"].maxSkew }} between any two ready nodes the workload may use (its static
 * filters: node name, selector, required affinity, taints).
 */
hidden int b_w, b_n, b_q, b_min, b_max, b_min_node, b_max_node, b_bad;
hidden int b_on[MAX_NODES + 1];

/* The check, from a settled state: an unbalanced workload is printed and fails the run. */
inline check_pods_balanced() {
       d_step {
         b_bad = 0;
         for (b_w : 1 .. WORKLOADS) {
           if
           :: b_bad == 0 && spec[b_w] > 1 && !workload_batch[b_w] ->
              for (b_n : 1 .. NODES) { b_on[b_n] = 0 }
              for (b_q : workload_first_slot[b_w] .. workload_first_slot[b_w] + workload_slots[b_w] - 1) {
                if
                :: pod[b_q].status == RUNNING -> b_on[pod[b_q].node]++
                :: else -> skip
                fi
              }
              b_min = -1; b_max = -1;
              for (b_n : 1 .. NODES) {
                if
                :: node_ready[b_n] && BIT(template_static_nodes[workload_template[b_w]], b_n) ->
                   if
                   :: b_min < 0 || b_on[b_n] < b_min -> b_min = b_on[b_n]; b_min_node = b_n
                   :: else -> skip
                   fi;
                   if
                   :: b_on[b_n] > b_max -> b_max = b_on[b_n]; b_max_node = b_n
                   :: else -> skip
                   fi
                :: else -> skip
                fi
              }
              if
              :: b_min >= 0 && b_max - b_min > {{ ir.params["pods-balanced"].maxSkew }} -> b_bad = b_w
              :: else -> skip
              fi
           :: else -> skip
           fi
         }
         skip
       }
       if
       :: b_bad > 0 ->
          printf("KIVI:%d:%d:%d:%d:%d:%d:{{ ir.params["pods-balanced"].maxSkew }}\n", EVENT_UNBALANCED, b_bad, b_max_node, b_max, b_min_node, b_min);
          assert(false)
       :: else -> skip
       fi
}

{% if ir.descheduler %}
/* With a descheduler, "settled" includes it: the check is made by the descheduler's process,
   right after a run that evicted nothing (controllers/descheduler.pml), and never before its
   first run. Racing it from a process of its own once reported a Deployment placed 2/1/0 over
   three zones as unbalanced while RemovePodsViolatingTopologySpreadConstraint was about to
   move a pod (issue 41, item 3). */
proctype CheckPodsBalanced() {
  skip
}
{% else %}
proctype CheckPodsBalanced() {
end_check_pods_balanced:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED ->
       check_pods_balanced()
     }
  od
}
{% endif %}

/*
 * Environment event `node-drain` (kubectl drain, staging/src/k8s.io/kubectl/pkg/drain): when
 * the cluster has settled, a node is cordoned (spec.unschedulable, so NodeUnschedulable keeps
 * new pods off it) and its pods are evicted through the Eviction API, which refuses while a
 * PodDisruptionBudget has no disruption left; kubectl retries each refused eviction, at any
 * moment, until it passes. DaemonSet pods are left (--ignore-daemonsets). Once no pod of the
 * node is left, it is uncordoned. Each node once, one at a time.
 */
bit drained[MAX_NODES + 1];
hidden int e_q, e_left, e_victim;

proctype NodeDrain(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_node_drain:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && ({% for n in range(1, shape.max_nodes + 1) %}{% if not loop.first %} || {% endif %}(node_ready[{{ n }}] && !drained[{{ n }}]){% endfor %}) ->
       if
{% for n in range(1, shape.max_nodes + 1) %}
       :: node_ready[{{ n }}] && !drained[{{ n }}] -> draining = {{ n }}; cordoned[{{ n }}] = 1; printf("KIVI:%d:{{ n }}\n", EVENT_DRAIN_STARTED)
{% endfor %}
       fi
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_drain_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  :: atomic {
       draining > 0 ->
       d_step {
         e_left = 0; e_victim = 0;
         for (e_q : 1 .. PODS) {
           if
           :: pod[e_q].node == draining && pod[e_q].status != FREE && !template_daemon[slot_template[e_q]] ->
              e_left++;
              if
              :: e_victim == 0 && (pod[e_q].status == BOUND || pod[e_q].status == RUNNING) ->
                 disruption_allowed(e_q);
                 if
                 :: b_ok -> e_victim = e_q
                 :: else -> skip
                 fi
              :: else -> skip
              fi
           :: else -> skip
           fi
         }
         if
         :: e_victim > 0 ->
            printf("KIVI:%d:%d:%d\n", EVENT_DRAIN_EVICTED, e_victim, draining);
            if
            :: pod[e_victim].status == RUNNING -> stop_running(e_victim); kubelet_work++
            :: else -> skip
            fi;
            pod[e_victim].status = TERMINATING;
            mark_dc(WORKLOAD_OF(e_victim));
            mark_hpa(WORKLOAD_OF(e_victim))
         :: e_victim == 0 && e_left == 0 ->
            printf("KIVI:%d:%d\n", EVENT_DRAIN_ENDED, draining);
            cordoned[draining] = 0; drained[draining] = 1; draining = 0;
            retry_unschedulable()
         :: else -> skip  /* every eviction is refused for now: kubectl retries */
         fi;
         e_victim = 0; e_left = 0;
         canonical()
       }
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_drain_2: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

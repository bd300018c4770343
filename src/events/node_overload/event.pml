/*
 * Environment event `node-overload` (Kivi's kernel panic): when the cluster has settled, a
 * node whose pods use more than the threshold of its cpu crashes: its pods are lost and it
 * restarts, back once the cluster has settled again. Pod usage is the workload's load shared
 * by its running pods (see the autoscaler), in millicores of the request.
 */
#define OVERLOAD_THRESHOLD {{ ir.overload_threshold }}
hidden int o_n, o_q, o_w, o_used, o_over;
hidden int o_load[MAX_NODES + 1];   /* cpu the node's pods use, millicores */

inline crash(n) {
  printf("KIVI:%d:%d:%d:%d\n", EVENT_NODE_OVERLOADED, n, o_load[n], node_cpu[n]);
  restarting = n;
  if
  :: overloads[n] < 2 -> overloads[n]++
  :: else -> skip
  fi;
  take_down(n)
}

proctype NodeOverload(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_node_overload:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED ->
       d_step {
         /* the ready nodes over the threshold: any one of them may crash first */
         o_over = 0;
         for (o_n : 1 .. NODES) {
           o_used = 0;
           for (o_q : 1 .. PODS) {
             if
             :: pod[o_q].status == RUNNING && pod[o_q].node == o_n ->
                o_w = WORKLOAD_OF(o_q);
                o_used = o_used + template_cpu[slot_template[o_q]] * LEVEL(o_w, load[o_w]) * workload_base[o_w] / (running[o_w] * 100)
             :: else -> skip
             fi
           }
           o_load[o_n] = o_used;
           if
           :: node_ready[o_n] && o_used * 100 > node_cpu[o_n] * OVERLOAD_THRESHOLD -> o_over = o_over | (1 << o_n)
           :: else -> skip
           fi
         }
       }
       if
{% for n in range(1, shape.max_nodes + 1) %}
       :: BIT(o_over, {{ n }}) -> d_step { crash({{ n }}) }
{% endfor %}
       :: o_over == 0 -> skip
       fi;
       o_over = 0;
       canonical()
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_overload_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  :: atomic {
       QUIESCENT && restarting > 0 ->
       d_step {
         printf("KIVI:%d:%d\n", EVENT_NODE_RESTARTED, restarting);
         node_ready[restarting] = 1; restarting = 0;
         retry_unschedulable();
         canonical()
       }
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_overload_2: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

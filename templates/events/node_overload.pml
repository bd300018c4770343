/*
 * Environment event `node-overload` (Kivi's kernel panic): when the cluster has settled, a
 * node whose pods use more than the threshold of its cpu crashes: its pods are lost and it
 * restarts, back once the cluster has settled again. Pod usage is the workload's load shared
 * by its running pods (see the autoscaler), in millicores of the request.
 */
#define OVERLOAD_THRESHOLD {{ ir.overload_threshold }}
hidden int o_n, o_q, o_w, o_used, o_over;

proctype NodeOverload() {
end_node_overload:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED ->
       d_step {
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
           if
           :: o_over == 0 && node_ready[o_n] && o_used * 100 > node_cpu[o_n] * OVERLOAD_THRESHOLD ->
              o_over = o_n;
              printf("KIVI:17:%d:%d:%d\n", o_n, o_used, node_cpu[o_n]);
              restarting = o_n;
              if
              :: overloads[o_n] < 2 -> overloads[o_n]++
              :: else -> skip
              fi;
              take_down(o_n)
           :: else -> skip
           fi
         }
         canonical()
       }
     }{% if "eventually-stable" in check_names %};
       progress_overload_1: skip  /* eventually-stable: this is the environment acting */{% endif %}
  :: atomic {
       QUIESCENT && restarting > 0 ->
       d_step {
         printf("KIVI:19:%d\n", restarting);
         node_ready[restarting] = 1; restarting = 0;
         retry_unschedulable();
         canonical()
       }
     }{% if "eventually-stable" in check_names %};
       progress_overload_2: skip  /* eventually-stable: this is the environment acting */{% endif %}
  od
}

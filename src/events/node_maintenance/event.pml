/*
 * Environment event `node-maintenance` (Kivi's maintenance): when the cluster has settled, a
 * node that had no turn yet goes down; its pods are lost and their controllers replace them
 * elsewhere. When the cluster has settled again, the node comes back. One node at a time,
 * each node once; no Eviction API and so no PodDisruptionBudget (that is `node-drain`).
 */
proctype NodeMaintenance(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_node_maintenance:
  do
  :: atomic {
       /* every branch's guard is in the guard here, so the choice never blocks */
       QUIESCENT && in_maintenance == 0 && ({% for n in range(1, shape.max_nodes + 1) %}{% if not loop.first %} || {% endif %}({{ n }} <= NODES && !maintained[{{ n }}] && !absent[{{ n }}]){% endfor %}) ->
       if
{% for n in range(1, shape.max_nodes + 1) %}
       :: {{ n }} <= NODES && !maintained[{{ n }}] && !absent[{{ n }}] -> in_maintenance = {{ n }}; printf("KIVI:%d:{{ n }}\n", EVENT_MAINTENANCE_STARTED); take_down({{ n }})
{% endfor %}
       fi;
       canonical()
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_maintenance_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  :: atomic {
       QUIESCENT && in_maintenance > 0 ->
       d_step {
         printf("KIVI:%d:%d\n", EVENT_MAINTENANCE_ENDED, in_maintenance);
         node_ready[in_maintenance] = 1; maintained[in_maintenance] = 1; in_maintenance = 0;
         retry_unschedulable();
         canonical()
       }
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_maintenance_2: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

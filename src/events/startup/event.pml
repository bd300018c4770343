/*
 * Time passing for pods in their startup phase (config `workloads.<id>.startup`): a running
 * pod that still uses its startup usage settles to the workload's steady usage. Which pod
 * settles first, and when relative to the controllers, is left open.
 */
/* a running pod still in its startup phase (slots past PODS stay FREE) */
#define COLD(s) (pod[s].status == RUNNING && !pod[s].warm && workload_startup[WORKLOAD_OF(s)] > 0)
proctype StartupEnds(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_startup:
  do
  :: atomic {
       CONTROLLERS_IDLE && ({% for s in range(1, shape.max_pods + 1) %}COLD({{ s }}) || {% endfor %}false) ->
       if
{% for s in range(1, shape.max_pods + 1) %}
       :: COLD({{ s }}) -> pod[{{ s }}].warm = 1; printf("KIVI:%d:{{ s }}\n", EVENT_STARTUP_ENDED); mark_hpa(WORKLOAD_OF({{ s }}))
{% endfor %}
       fi;
       canonical()
     }
  od
}

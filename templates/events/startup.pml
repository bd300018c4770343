/*
 * Time passing for pods in their startup phase (config `workloads.<id>.startup`): a running
 * pod that still uses its startup usage settles to the workload's steady usage. Which pod
 * settles first, and when relative to the controllers, is left open.
 */
proctype StartupEnds() {
end_startup:
  do
  :: atomic {
       CONTROLLERS_IDLE && ({% for w in ir.workloads %}{% if w.startup_level %}{% for s in range(w.first_slot, w.first_slot + w.slots) %}(pod[{{ s }}].status == RUNNING && !pod[{{ s }}].warm) || {% endfor %}{% endif %}{% endfor %}false) ->
       if
{% for w in ir.workloads %}{% if w.startup_level %}{% set wi = loop.index %}{% for s in range(w.first_slot, w.first_slot + w.slots) %}
       :: pod[{{ s }}].status == RUNNING && !pod[{{ s }}].warm -> pod[{{ s }}].warm = 1; printf("KIVI:21:{{ s }}\n"); mark_hpa({{ wi }})
{% endfor %}{% endif %}{% endfor %}
       fi
     }
  od
}

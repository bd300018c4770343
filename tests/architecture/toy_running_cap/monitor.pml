/*
 * Check `toy-running-cap` (a test's toy): no workload runs more than
 * {{ ir.params["toy-running-cap"].max }} pods.
 */
proctype CheckToyRunningCap() {
end_check_toy_running_cap:
  do
  :: atomic {
       ({% for w in ir.workloads %}running[{{ loop.index }}] > {{ ir.params["toy-running-cap"].max }} || {% endfor %}false) ->
       if
{% for w in ir.workloads %}
       :: running[{{ loop.index }}] > {{ ir.params["toy-running-cap"].max }} ->
          printf("KIVI:%d:{{ loop.index }}:%d:{{ ir.params["toy-running-cap"].max }}\n", EVENT_TOY_OVER_CAP, running[{{ loop.index }}])
{% endfor %}
       fi;
       assert(false)
     }
  od
}

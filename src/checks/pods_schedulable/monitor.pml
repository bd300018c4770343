/*
 * Check `pods-schedulable`: every pod a controller creates eventually finds a feasible node.
 * Checked whenever the cluster has settled: a pod the scheduler could not place, with no
 * controller left to act, stays Pending for as long as the environment does not change.
 * The violation names the workloads with such a pod (a bit each, 30 to a value), so that the
 * finding points at one of theirs; `--all` spares the workloads already reported (JUDGES).
 */
#define PS_SPARED (0{% for w in ir.workloads %}{% if not w.batch %} + (JUDGES({{ loop.index }}) -> 0 : ({% for k in range(w.slots) %}pod[{{ w.first_slot + k }}].unschedulable + {% endfor %}0)){% endif %}{% endfor %})
proctype CheckPodsSchedulable() {
end_check_pods_schedulable:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && JUDGED_UNSCHEDULABLE - PS_SPARED > 0 ->
       printf("KIVI:%d{% for c in range(0, (ir.workloads|length + 29) // 30) %}:%d{% endfor %}\n", EVENT_PENDING_FOREVER{% for c in range(0, (ir.workloads|length + 29) // 30) %}, 0{% for w in ir.workloads %}{% if not w.batch and loop.index0 // 30 == c %} + ((JUDGES({{ loop.index }}) && {% for k in range(w.slots) %}pod[{{ w.first_slot + k }}].unschedulable + {% endfor %}0 > 0) -> {{ 2 ** (loop.index0 % 30) }} : 0){% endif %}{% endfor %}{% endfor %});
       assert(false)
     }
  od
}

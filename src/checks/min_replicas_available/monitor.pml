/*
 * Check `min-replicas-available`: after first reaching it, a workload's available (running)
 * replicas never drop below its bound: the HPA's minReplicas, else spec.replicas, or the
 * check's `min` param. While a rollout runs the bound is lowered by the maxUnavailable the
 * Deployment allows.
 */
#define MAX_UNAVAILABLE(w) ((RESOLVE_UP(rollout_surge[w], spec[w]) == 0 && RESOLVE_DOWN(rollout_unavailable[w], spec[w]) == 0) -> 1 : RESOLVE_DOWN(rollout_unavailable[w], spec[w]))
#define MIN_BOUND(w) (min_available[w] - ((rolled[w] && !rollout_done[w]) -> MAX_UNAVAILABLE(w) : 0))
proctype CheckMinReplicasAvailable() {
end_check_min_replicas_available:
  do
  :: atomic {
       ({% for w in ir.workloads %}{% if not loop.first %} || {% endif %}(min_reached[{{ loop.index }}] && running[{{ loop.index }}] < MIN_BOUND({{ loop.index }}) && JUDGES({{ loop.index }})){% endfor %}) ->
       if
{% for w in ir.workloads %}
       :: min_reached[{{ loop.index }}] && running[{{ loop.index }}] < MIN_BOUND({{ loop.index }}) && JUDGES({{ loop.index }}) ->
          printf("KIVI:%d:{{ loop.index }}:%d:%d\n", EVENT_BELOW_MINIMUM, running[{{ loop.index }}], MIN_BOUND({{ loop.index }}))
{% endfor %}
       fi;
       assert(false)
     }
  od
}

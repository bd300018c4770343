/*
 * Check `min-replicas-available`: after first reaching it, a workload's available (running)
 * replicas never drop below its bound: the HPA's minReplicas, else spec.replicas, or the
 * check's `min` param.
 */
proctype CheckMinReplicasAvailable() {
end_check_min_replicas_available:
  do
  :: atomic {
       ({% for w in ir.workloads %}{% if not loop.first %} || {% endif %}(min_reached[{{ loop.index }}] && running[{{ loop.index }}] < min_available[{{ loop.index }}]){% endfor %}) ->
       if
{% for w in ir.workloads %}
       :: min_reached[{{ loop.index }}] && running[{{ loop.index }}] < min_available[{{ loop.index }}] ->
          printf("KIVI:13:{{ loop.index }}:%d:%d\n", running[{{ loop.index }}], min_available[{{ loop.index }}])
{% endfor %}
       fi;
       assert(false)
     }
  od
}

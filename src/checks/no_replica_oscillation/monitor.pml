/*
 * Check `no-replica-oscillation`: without a change of load, an autoscaled workload that rose
 * to maxReplicas does not fall back to minReplicas, or by 3 or more (Kivi's intent). A
 * load-change event clears the mark the autoscaler sets on reaching the maximum.
 */
proctype CheckNoReplicaOscillation() {
end_check_no_replica_oscillation:
  do
  :: atomic {
       ({% for w in ir.workloads %}{% if w.autoscaler %}(at_max[{{ loop.index }}] && (spec[{{ loop.index }}] <= hpa_min[{{ loop.index }}] || spec[{{ loop.index }}] + 3 <= hpa_max[{{ loop.index }}]) && JUDGES({{ loop.index }})) || {% endif %}{% endfor %}false) ->
       if
{% for w in ir.workloads %}{% if w.autoscaler %}
       :: at_max[{{ loop.index }}] && (spec[{{ loop.index }}] <= hpa_min[{{ loop.index }}] || spec[{{ loop.index }}] + 3 <= hpa_max[{{ loop.index }}]) && JUDGES({{ loop.index }}) ->
          printf("KIVI:%d:{{ loop.index }}:%d:%d\n", EVENT_OSCILLATION, hpa_max[{{ loop.index }}], spec[{{ loop.index }}])
{% endif %}{% endfor %}
       :: else -> skip
       fi;
       assert(false)
     }
  od
}

/*
 * Check `no-eviction-loop`: no workload goes through `loops` alternations of a controller
 * evicting one of its pods (taint eviction, descheduler) and a replacement starting. The
 * kubelet counts the alternations; the check fires at the limit. Environment events
 * (maintenance, failures) are bounded and do not count.
 */
proctype CheckNoEvictionLoop() {
end_check_no_eviction_loop:
  do
  :: atomic {
       (false{% for w in ir.workloads %}{% if not w.batch %} || (loops[{{ loop.index }}] >= EVICTION_LOOPS && JUDGES({{ loop.index }})){% endif %}{% endfor %}) ->
       if
{% for w in ir.workloads %}{% if not w.batch %}
       :: loops[{{ loop.index }}] >= EVICTION_LOOPS && JUDGES({{ loop.index }}) -> printf("KIVI:%d:{{ loop.index }}:%d\n", EVENT_EVICTION_LOOP, loops[{{ loop.index }}])
{% endif %}{% endfor %}
       fi;
       assert(false)
     }
  od
}

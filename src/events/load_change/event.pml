/*
 * Environment event `load-change`: the usage of a workload's pods moves to another level
 * (percent of the request, from the config's `max`, and around the HPA's target). It happens
 * when the cluster has settled, as often as it likes.
 */
proctype LoadChange(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_load_change:
  do
  :: atomic {
       QUIESCENT ->
       if
{% for w in ir.workloads %}{% set wi = loop.index %}{% if w.load_levels|length > 1 %}{% for l in w.load_levels %}
       :: load[{{ wi }}] != {{ loop.index }} -> load[{{ wi }}] = {{ loop.index }}; at_max[{{ wi }}] = 0; printf("KIVI:%d:{{ wi }}:{{ l }}\n", EVENT_LOAD_CHANGED); mark_hpa({{ wi }})
{% endfor %}{% endif %}{% endfor %}
       fi
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_load_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

/*
 * Environment event `apply`: `kubectl apply` of the new revision over the previous one, which
 * the cluster runs until then (the model starts from it). The three-way merge with the
 * last-applied configuration (staging/src/k8s.io/kubectl/pkg/cmd/apply): a field the new
 * manifest sets is set; a field only the previous manifest set is removed and takes its
 * default (spec.replicas: 1), whatever an autoscaler had made of it; a field neither sets is
 * left to its owner. A changed pod template starts a rollout. Once, at a settled moment.
 */
bit applied;

proctype Apply(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_apply:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && !applied ->
       d_step {
         applied = 1;
{% for w in ir.workloads %}{% set wi = loop.index %}{% if ir.apply.replicas[wi] >= 0 %}
         printf("KIVI:%d:{{ wi }}:%d:%d\n", EVENT_APPLY_REPLICAS, spec[{{ wi }}], apply_replicas[{{ wi }}]);
         spec[{{ wi }}] = apply_replicas[{{ wi }}]; mark_dc({{ wi }}); mark_hpa({{ wi }});
{% endif %}{% if ir.apply.template_changed[wi] %}
         if
         :: !rolled[{{ wi }}] -> rolled[{{ wi }}] = 1; printf("KIVI:%d:{{ wi }}\n", EVENT_ROLLOUT_APPLIED); mark_dc({{ wi }})
         :: else -> skip
         fi;
{% endif %}{% endfor %}
         skip
       }
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_apply_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

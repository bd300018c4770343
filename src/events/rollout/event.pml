/*
 * A new revision of one workload's pod template is applied (an image bump: the new pods need
 * what the old ones did), at a settled moment: one rollout per run, of any Deployment or
 * StatefulSet, as a change usually touches one workload. Its rollout then follows the
 * workload's strategy. Rollouts of several workloads at once are not explored. A workload an
 * `apply` event already rolled out is not rolled out again: with none left, there is no rollout
 * (its choice below would block inside the atomic step, an invalid end state of the model).
 */
bit rollout_applied;

proctype Rollout(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_rollout:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && !rollout_applied && ({% for wi in ir.rollout_order %}!rolled[{{ wi }}] || {% endfor %}false) ->
       rollout_applied = 1;
       if
{% for wi in ir.rollout_order %}
       :: !rolled[{{ wi }}] -> rolled[{{ wi }}] = 1; printf("KIVI:%d:{{ wi }}\n", EVENT_ROLLOUT_APPLIED); mark_dc({{ wi }})
{% endfor %}
       fi
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_rollout_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

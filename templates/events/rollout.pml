/*
 * A new revision of a Deployment's pod template is applied (an image bump: the new pods need
 * what the old ones did). Once per Deployment, at a settled moment; its rollout then follows
 * the Deployment's strategy.
 */
proctype Rollout() {
end_rollout:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && ({% for w in ir.workloads %}{% if w.rollout %}!rolled[{{ loop.index }}] || {% endif %}{% endfor %}false) ->
       if
{% for w in ir.workloads %}{% if w.rollout %}
       :: !rolled[{{ loop.index }}] -> rolled[{{ loop.index }}] = 1; printf("KIVI:25:{{ loop.index }}\n"); mark_dc({{ loop.index }})
{% endif %}{% endfor %}
       fi
     }
  od
}

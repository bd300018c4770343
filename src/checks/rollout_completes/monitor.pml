/*
 * Check `rollout-completes`: once the cluster has settled after a new revision was applied,
 * the rollout is done: every replica runs the new template and no old pod is left. A settled
 * cluster with a rollout still open makes no more progress.
 */
proctype CheckRolloutCompletes() {
end_check_rollout_completes:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && ({% for w in ir.workloads %}{% if w.rollout %}(rolled[{{ loop.index }}] && !rollout_done[{{ loop.index }}] && JUDGES({{ loop.index }})) || {% endif %}{% endfor %}false) ->
       if
{% for w in ir.workloads %}{% if w.rollout %}
       :: rolled[{{ loop.index }}] && !rollout_done[{{ loop.index }}] && JUDGES({{ loop.index }}) -> printf("KIVI:%d:{{ loop.index }}:%d:%d\n", EVENT_ROLLOUT_STUCK, rs_spec[{{ loop.index }} * 2], rs_spec[{{ loop.index }} * 2 + 1])
{% endif %}{% endfor %}
       fi;
       assert(false)
     }
  od
}

/*
 * Check `eventually-stable` (Anvil's eventually stable reconciliation, OSDI '24): once the
 * environment stops changing, the unit reaches its desired state and stays there. Checked as
 * the absence of non-progress cycles (pan -l): every transition of the environment (events,
 * the drain's retries, the periodic descheduler) passes a `progress` label, so a cycle without
 * one is either
 *  - the controllers acting forever among themselves (the scheduler, the ReplicaSet,
 *    StatefulSet and DaemonSet controllers, the kubelet, the HPA, taint eviction, GitOps sync:
 *    a livelock), or
 *  - this monitor's own loop, which runs only in a settled cluster that is not in its desired
 *    state: a workload with fewer running pods than its spec, a pod no node takes, a rollout
 *    left open.
 */
#define STABLE_DESIRED (to_schedule == 0 && JUDGED_UNSCHEDULABLE == 0{% for w in ir.workloads %}{% if not w.batch %} && running[{{ loop.index }}] == spec[{{ loop.index }}] && (!rolled[{{ loop.index }}] || rollout_done[{{ loop.index }}]){% endif %}{% endfor %})

proctype CheckEventuallyStable() {
end_check_eventually_stable:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && !STABLE_DESIRED ->
       if
{% for w in ir.workloads %}{% if not w.batch %}
       :: running[{{ loop.index }}] != spec[{{ loop.index }}] || (rolled[{{ loop.index }}] && !rollout_done[{{ loop.index }}]) ->
          printf("KIVI:%d:{{ loop.index }}:%d:%d:%d:%d\n", EVENT_NOT_STABLE, running[{{ loop.index }}], spec[{{ loop.index }}], to_schedule + unschedulable, rolled[{{ loop.index }}] && !rollout_done[{{ loop.index }}])
{% endif %}{% endfor %}
       :: else -> printf("KIVI:%d:0:0:0:%d:0\n", EVENT_NOT_STABLE, to_schedule + unschedulable)
       fi
     }
  od
}

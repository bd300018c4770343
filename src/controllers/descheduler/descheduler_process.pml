/*
 * The descheduler's process (sigs.k8s.io/descheduler, pkg/descheduler/descheduler.go RunDeschedulerStrategies:
 * one run of the profile each interval; here, at any settled moment). It comes after the
 * monitors' templates because it makes the pods-balanced check itself, after a run that
 * evicted nothing (checks/pods_balanced.pml).
 */
proctype Descheduler(){% if simulation %} provided (!simulation_done){% endif %} {
end_descheduler:
  do
  :: atomic {
       QUIESCENT_VIEW && ENVIRONMENT_SETTLED ->
       d_step { descheduler_run(); canonical() }{% if "MONITORS_PODS_BALANCED" in monitored %};
       /* pods-balanced is checked here, after a run that moved nothing (checks/pods_balanced.pml) */
       if
       :: ds_evictions == 0 && QUIESCENT && MONITORS_PODS_BALANCED -> check_pods_balanced()
       :: else -> skip
       fi{% endif %}
     }{% if liveness %};
       progress_descheduler_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  od
}

/*
 * Check `pods-schedulable`: every pod a controller creates eventually finds a feasible node.
 * Checked whenever the cluster has settled: a pod the scheduler could not place, with no
 * controller left to act, stays Pending for as long as the environment does not change.
 */
proctype CheckPodsSchedulable() {
end_check_pods_schedulable:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && JUDGED_UNSCHEDULABLE > 0 ->
       printf("KIVI:%d\n", EVENT_PENDING_FOREVER);
       assert(false)
     }
  od
}

/*
 * Conformance probe for the descheduler (tests/conformance/descheduler.rs); never in a
 * verification model. The unit tests of the descheduler's Balance plugins
 * (sigs.k8s.io/descheduler pkg/framework/plugins/removeduplicates,
 * .../removepodsviolatingtopologyspreadconstraint) give the pods one run evicts from a cluster
 * whose pods are all running (or terminating). Every workload here is one bare Pod, running
 * from the start, or terminating if it has a deletionTimestamp (the input places it); init runs the descheduler once before any controller acts, prints
 * each eviction, and ends the search so that the trail replays it:
 *   KIVI:93:slot:plugin:calls
 * calls: the eviction calls the run made for the pod (RemoveDuplicates calls once per owner
 * key of the pod).
 */
hidden byte probe_all_running;
hidden int probe_w;

inline probe_descheduler_start() {
  probe_all_running = 1;
  for (probe_w : 1 .. WORKLOADS) {
    ds_x = 0;
    for (ds_q : 1 .. PODS) {
      if
      :: WORKLOAD_OF(ds_q) == probe_w && (pod[ds_q].status == RUNNING || pod[ds_q].status == TERMINATING) -> ds_x = 1
      :: else -> skip
      fi
    }
    if
    :: !ds_x -> probe_all_running = 0
    :: else -> skip
    fi
  }
}

inline probe_descheduler_end() {
  if
  :: probe_all_running -> assert(false)
  :: else -> skip
  fi
}

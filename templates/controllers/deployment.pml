/*
 * Deployment and ReplicaSet controllers, scaling: create pods up to spec.replicas, delete the
 * surplus. Models pkg/controller/replicaset/replica_set.go (manageReplicas) and the deletion
 * ranking of pkg/controller/controller_utils.go (ActivePods): unassigned before assigned, not
 * running before running, more of the workload's pods on the same node first, newer first.
 * Terminating pods are not active.
 */
hidden int d_q, d_active, d_best, d_key, d_victim;
hidden int d_on_node[NODES + 1];

/* Higher goes first: unassigned, then not running, then crowded nodes, then newer slots. */
#define DELETION_RANK(q) ((pod[q].node == 0 -> 1000000 : 0) + (pod[q].status != RUNNING -> 100000 : 0) + (pod[q].node > 0 -> d_on_node[pod[q].node] * 1000 : 0) + q)
#define ACTIVE(q) (pod[q].status == PENDING || pod[q].status == BOUND || pod[q].status == RUNNING)

proctype DeploymentController() {
  byte w;
end_deployment:
  do
  :: atomic {
       dc_work > 0 ->
       d_step {
         w = 1;
         do
         :: dc_dirty[w] -> break
         :: else -> w++
         od;
         dc_dirty[w] = 0; dc_work--;
         d_active = 0;
         for (d_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
           if
           :: ACTIVE(d_q) -> d_active++
           :: else -> skip
           fi
         }
         if
         :: d_active < spec[w] ->
            for (d_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
              if
              :: d_active < spec[w] && pod[d_q].status == FREE ->
                 pod[d_q].status = PENDING; pod[d_q].node = 0; pod[d_q].unschedulable = 0;
                 to_schedule++; d_active++;
                 printf("KIVI:1:%d\n", d_q)
              :: else -> skip
              fi
            }
         :: d_active > spec[w] ->
            do
            :: d_active > spec[w] ->
               for (d_q : 1 .. NODES) { d_on_node[d_q] = 0 }
               for (d_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
                 if
                 :: ACTIVE(d_q) && pod[d_q].node > 0 -> d_on_node[pod[d_q].node]++
                 :: else -> skip
                 fi
               }
               d_best = -1; d_victim = 0;
               for (d_q : workload_first_slot[w] .. workload_first_slot[w] + workload_slots[w] - 1) {
                 if
                 :: ACTIVE(d_q) ->
                    d_key = DELETION_RANK(d_q);
                    if
                    :: d_key > d_best -> d_best = d_key; d_victim = d_q
                    :: else -> skip
                    fi
                 :: else -> skip
                 fi
               }
               printf("KIVI:7:%d\n", d_victim);
               if
               :: pod[d_victim].status == PENDING ->
                  if
                  :: pod[d_victim].unschedulable -> unschedulable--
                  :: else -> to_schedule--
                  fi;
                  pod[d_victim].status = FREE; pod[d_victim].unschedulable = 0
               :: pod[d_victim].status == RUNNING -> stop_running(d_victim); pod[d_victim].status = TERMINATING; kubelet_work++
               :: else -> pod[d_victim].status = TERMINATING
               fi;
               d_active--
            :: else -> break
            od
         :: else -> skip
         fi;
         w = 0
       }
     }
  od
}

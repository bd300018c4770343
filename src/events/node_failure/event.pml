/*
 * Environment event `node-failure`: a node stops reporting. The node lifecycle controller
 * (pkg/controller/nodelifecycle) marks its pods not ready at once and taints it
 * node.kubernetes.io/unreachable:NoExecute; the taint eviction controller
 * (pkg/controller/tainteviction) deletes each pod when its toleration of that taint runs out
 * (tolerationSeconds, 300 s from the DefaultTolerationSeconds admission plugin): the model
 * deletes them together, once the controllers are idle. Pods that tolerate it forever
 * (DaemonSet pods) stay. A deleted pod stays Terminating until its node is
 * back, but its ReplicaSet replaces it at once.
 * Up to `count` nodes (failures_max, at most the topology's) fail, each once, when the cluster has settled.
{% if ir.node_failure.recover %} * A failed node comes back at any later moment: before its pods' tolerations run out or after.
{% else %} * Failed nodes do not come back.
{% endif %} */
#define FAILURES failures_max
bit failed_once[MAX_NODES + 1];
byte failures;
hidden int f_q;

inline fail_node(n) {
  node_ready[n] = 0; failed_once[n] = 1; failures++;
{% if ir.node_failure.recover %}  nodes_down++;
{% endif %}  for (f_q : 1 .. PODS) {
    if
    :: pod[f_q].node == n && (pod[f_q].status == BOUND || pod[f_q].status == RUNNING) ->
       if
       :: pod[f_q].status == RUNNING -> stop_running(f_q); mark_hpa(WORKLOAD_OF(f_q))
       :: else -> kubelet_work--
       fi;
       pod[f_q].status = UNREACHABLE;
       if
       :: template_failure_eviction[slot_template[f_q]] -> lost_work++
       :: else -> skip
       fi;
       reset_min(WORKLOAD_OF(f_q))
    :: pod[f_q].node == n && pod[f_q].status == TERMINATING -> pod[f_q].status = GONE; kubelet_work--
    :: else -> skip
    fi
  }
  skip
}
{% if ir.node_failure.recover %}
/* The node reports again: its pods are ready once the kubelet has confirmed them, and the
   deletions that waited for it complete. */
inline recover_node(n) {
  node_ready[n] = 1; nodes_down--;
  for (f_q : 1 .. PODS) {
    if
    :: pod[f_q].node == n && pod[f_q].status == UNREACHABLE ->
       if
       :: template_failure_eviction[slot_template[f_q]] -> lost_work--
       :: else -> skip
       fi;
       pod[f_q].status = BOUND; kubelet_work++
    :: pod[f_q].node == n && pod[f_q].status == GONE -> pod[f_q].status = TERMINATING; kubelet_work++
    :: else -> skip
    fi
  }
  retry_unschedulable()
}
{% endif %}
proctype NodeFailure(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_node_failure:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && failures < FAILURES && ({% for n in range(1, shape.max_nodes + 1) %}{% if not loop.first %} || {% endif %}(node_ready[{{ n }}] && !failed_once[{{ n }}]){% endfor %}) ->
       if
{% for n in range(1, shape.max_nodes + 1) %}
       :: node_ready[{{ n }}] && !failed_once[{{ n }}] -> printf("KIVI:%d:{{ n }}\n", EVENT_NODE_FAILED); fail_node({{ n }})
{% endfor %}
       fi;
       canonical()
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_failure_1: skip  /* a liveness check: this is the environment acting */{% endif %}
  :: atomic {
       /* the tolerations run out (300 s by default) long after the controllers have reacted */
       lost_work > 0 && CONTROLLERS_IDLE ->
       d_step {
         for (f_q : 1 .. PODS) {
           if
           :: pod[f_q].status == UNREACHABLE && template_failure_eviction[slot_template[f_q]] ->
              printf("KIVI:%d:%d:%d\n", EVENT_FAILURE_EVICTED, f_q, pod[f_q].node);
              pod[f_q].status = GONE; lost_work--;
              mark_dc(WORKLOAD_OF(f_q))
           :: else -> skip
           fi
         }
         f_q = 0;
         canonical()
       }
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_failure_2: skip  /* a liveness check: this is the environment acting */{% endif %}
{% if ir.node_failure.recover %}
  :: atomic {
       CONTROLLERS_IDLE && nodes_down > 0 ->
       if
{% for n in range(1, shape.max_nodes + 1) %}
       :: failed_once[{{ n }}] && !node_ready[{{ n }}] -> printf("KIVI:%d:{{ n }}\n", EVENT_NODE_RECOVERED); recover_node({{ n }})
{% endfor %}
       fi;
       canonical()
     }{% if simulation %}; ENVIRONMENT_ACTED{% endif %}{% if liveness %};
       progress_failure_3: skip  /* a liveness check: this is the environment acting */{% endif %}
{% endif %}
  od
}

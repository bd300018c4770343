/*
 * Conformance probe for the scheduler (tests/conformance.rs); never in a verification model.
 * The unit tests of the upstream scheduler plugins (pkg/scheduler/framework/plugins) give the
 * Filter status and Score of each node for one incoming pod. Here the incoming pod is the
 * last workload's: once the scheduler has run its cycle for it with every other pod bound,
 * print per node what this cycle computed, then end the search so that the trail replays
 * these lines:
 *   KIVI:90:node:static:cpu_short:mem_short:pods_full:feasible:score
 * per node and scalar resource k (ephemeral storage, hugepages, extended), whether it is short:
 *   KIVI:94:node:k:short
 * and per hard spread constraint k of the pod, the PreFilter's count of each node's domain:
 *   KIVI:91:k:node:counted:domain:matching_pods
 * static: passes NodeAffinity, nodeSelector, TaintToleration and NodeName; cpu_short,
 * mem_short, pods_full: NodeResourcesFit's reasons; feasible: passes every filter (after
 * InterPodAffinity and PodTopologySpread); score: the weighted sum of the scores.
 * Upstream's Score tests call Score on nodes the pod may not fit; the cycle is then scored
 * again over every node that passes the static filters, as if each had passed the others:
 *   KIVI:92:node:score
 */
hidden int probe_q, probe_waiting, probe_k, probe_n;

inline probe_scheduling_cycle(p) {
  /* every other workload (a bare Pod each) has its pod bound (or terminating there) */
  probe_waiting = WORKLOADS - 1;
  for (probe_q : 1 .. PODS) {
    if
    :: WORKLOAD_OF(probe_q) != WORKLOADS && pod[probe_q].status >= BOUND -> probe_waiting--
    :: else -> skip
    fi
  }
  if
  :: WORKLOAD_OF(p) == WORKLOADS && probe_waiting == 0 ->
     for (s_n : 1 .. NODES) {
       printf("KIVI:90:%d:%d:%d:%d:%d:%d:%d\n", s_n, BIT(template_static_nodes[s_t], s_n), CPU_SHORT(s_t, s_n), MEM_SHORT(s_t, s_n), s_pods[s_n] + 1 > node_pod_cap[s_n], BIT(s_feasible, s_n), s_score[s_n])
     }
{% if ir.scalar_resources > 0 %}
     for (s_n : 1 .. NODES) {
       for (probe_k : 0 .. SCALARS - 1) {
         printf("KIVI:94:%d:%d:%d\n", s_n, probe_k, SCALAR_SHORT_K(probe_k, s_t, s_n))
       }
     }
{% endif %}
     if
     :: template_hard_count[s_t] > 0 ->
        for (probe_k : 0 .. template_hard_count[s_t] - 1) {
          s_c = template_hard_first[s_t] + probe_k;
          count_domains(s_c, pod[p].rev);
          for (probe_n : 1 .. NODES) {
            printf("KIVI:91:%d:%d:%d:%d:%d\n", probe_k, probe_n, COUNTS_NODE(s_c, probe_n), DOMAIN(s_c, probe_n), s_count[DOMAIN(s_c, probe_n)])
          }
        }
     :: else -> skip
     fi;
     s_feasible = template_static_nodes[s_t];
     score_nodes(p);
     for (s_n : 1 .. NODES) {
       printf("KIVI:92:%d:%d\n", s_n, s_score[s_n])
     }
     assert(false)
  :: else -> skip
  fi
}

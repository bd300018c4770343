/*
 * cluster-autoscaler (kubernetes/autoscaler, cluster-autoscaler/core), one decision per step.
 * Scale-up (core/scaleup): a pod the scheduler found no node for is simulated on each scaled
 *   pool's template node: for a pool that spans zones, a node in its first zone, as the AWS
 *   provider builds it for a multi-zone group ("Found multiple availability zones ... using
 *   <first>"). A pool on whose template node the pod would fit may grow by one node; the
 *   expander picks any of them. The cloud then starts the node in the pool's zone with the
 *   fewest nodes (zone balancing; ties either way): not necessarily the zone the pod needed.
 * Scale-down (core/scaledown): a node of a pool above its minimum whose pods request less than
 *   the utilisation threshold of its cpu and memory, whose pods are all replicated and fit on
 *   other nodes (first fit: static filters and resources), is tainted and drained through the
 *   Eviction API. A refused eviction ends the attempt (the pods already evicted stay evicted,
 *   the node stays); otherwise the node is deleted once its pods are gone, DaemonSet pods with it.
 * No clock: scale-down-unneeded-time and scale-down-delay-after-add are "at some later point".
 * DaemonSet pods are not created on the nodes the autoscaler adds: the pool's `reserved` stands
 * for them.
 */
#define SCALE_DOWN_UTILIZATION {{ ir.cluster_autoscaler.scale_down_utilization }}
#define CA_SHRINKABLE ({% for p in ir.cluster_autoscaler.pools %}pool_nodes[{{ loop.index }}] > pool_min[{{ loop.index }}] || {% endfor %}false)
hidden int ca_n, ca_q, ca_z, ca_k, ca_ok, ca_min, ca_zones;
hidden int ca_zone_nodes[MAX_NODES + 1];

proctype ClusterAutoscaler() {
  byte k, z;
end_cluster_autoscaler:
  do
  :: atomic {
       scale_up_wanted != 0 && to_schedule == 0 ->
       if
{% for p in ir.cluster_autoscaler.pools %}       :: BIT(scale_up_wanted, {{ loop.index }}) -> k = {{ loop.index }}
{% endfor %}       fi;
       d_step {
         for (ca_z : 0 .. MAX_NODES) { ca_zone_nodes[ca_z] = 0 }
         for (ca_n : 1 .. NODES) {
           if
           :: node_pool[ca_n] == k && !absent[ca_n] -> ca_zone_nodes[node_zone[ca_n]]++
           :: else -> skip
           fi
         }
         ca_min = 255;
         for (ca_z : 0 .. pool_zones[k] - 1) {
           if
           :: ca_zone_nodes[ca_z] < ca_min -> ca_min = ca_zone_nodes[ca_z]
           :: else -> skip
           fi
         }
         ca_zones = 0;
         for (ca_z : 0 .. pool_zones[k] - 1) {
           if
           :: ca_zone_nodes[ca_z] == ca_min -> ca_zones = ca_zones | (1 << ca_z)
           :: else -> skip
           fi
         }
       }
       if
{% for zone in range(shape.max_zones) %}       :: BIT(ca_zones, {{ zone }}) -> z = {{ zone }}
{% endfor %}       fi;
       d_step {
         ca_n = 0;
         for (ca_q : 1 .. NODES) {
           if
           :: ca_n == 0 && absent[ca_q] && node_pool[ca_q] == k && node_zone[ca_q] == z -> ca_n = ca_q
           :: else -> skip
           fi
         }
         if
         :: ca_n > 0 ->
            absent[ca_n] = 0; node_ready[ca_n] = 1; pool_nodes[k]++;
            printf("KIVI:%d:%d:%d\n", EVENT_NODE_ADDED, ca_n, k)
         :: else -> skip
         fi;
         retry_unschedulable();
         k = 0; z = 0; ca_n = 0; ca_zones = 0;
         canonical()
       }
     }
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && ca_removing == 0 && CA_SHRINKABLE ->
       if
{% for n in range(1, shape.max_nodes + 1) %}       :: node_pool[{{ n }}] > 0 && !absent[{{ n }}] && node_ready[{{ n }}] && !cordoned[{{ n }}] && pool_nodes[node_pool[{{ n }}]] > pool_min[node_pool[{{ n }}]] -> ca_k = {{ n }}
{% endfor %}       :: else -> ca_k = 0
       fi;
       d_step {
         /* Unneeded: what its pods request (DaemonSet pods too) is under the threshold. */
         node_usage();
         ca_ok = (s_req_cpu[ca_k] * 100 < node_cpu[ca_k] * SCALE_DOWN_UTILIZATION && s_req_mem[ca_k] * 100 < node_mem[ca_k] * SCALE_DOWN_UTILIZATION);
         /* Its pods can go: replicated, running, and each fits another node. */
         for (ca_q : 1 .. PODS) {
           if
           :: ca_ok && pod[ca_q].node == ca_k && pod[ca_q].status != FREE && pod[ca_q].status != PENDING && !template_daemon[slot_template[ca_q]] ->
              if
              :: pod[ca_q].status != RUNNING || workload_bare[WORKLOAD_OF(ca_q)] -> ca_ok = 0
              :: else ->
                 ca_n = 0;
                 for (ca_z : 1 .. NODES) {
                   if
                   :: ca_n == 0 && ca_z != ca_k && node_ready[ca_z] && !cordoned[ca_z] && BIT(template_static_nodes[slot_template[ca_q]], ca_z) && s_pods[ca_z] + 1 <= node_pod_cap[ca_z] && !CPU_SHORT(slot_template[ca_q], ca_z) && !MEM_SHORT(slot_template[ca_q], ca_z) && !SCALAR_SHORT(slot_template[ca_q], ca_z) -> ca_n = ca_z
                   :: else -> skip
                   fi
                 }
                 if
                 :: ca_n > 0 ->
                    s_req_cpu[ca_n] = s_req_cpu[ca_n] + template_cpu[slot_template[ca_q]];
                    s_req_mem[ca_n] = s_req_mem[ca_n] + template_mem[slot_template[ca_q]];
{% if ir.scalar_resources > 0 %}
                    hold_scalars(slot_template[ca_q], ca_n);
{% endif %}
                    s_pods[ca_n]++
                 :: else -> ca_ok = 0
                 fi
              fi
           :: else -> skip
           fi
         }
         /* Drain: taint the node, evict its pods; the first refusal ends the attempt. */
         if
         :: ca_ok ->
            printf("KIVI:%d:%d\n", EVENT_SCALE_DOWN_STARTED, ca_k);
            cordoned[ca_k] = 1;
            for (ca_q : 1 .. PODS) {
              if
              :: ca_ok && pod[ca_q].node == ca_k && pod[ca_q].status == RUNNING && !template_daemon[slot_template[ca_q]] ->
                 disruption_allowed(ca_q);
                 if
                 :: b_ok ->
                    printf("KIVI:%d:%d:%d\n", EVENT_AUTOSCALER_EVICTED, ca_q, ca_k);
                    terminate_running(ca_q);
                    mark_hpa(WORKLOAD_OF(ca_q))
                 :: else ->
                    printf("KIVI:%d:%d:%d\n", EVENT_AUTOSCALER_REFUSED, ca_q, ca_k);
                    ca_ok = 0
                 fi
              :: else -> skip
              fi
            }
            if
            :: ca_ok -> ca_removing = ca_k
            :: else -> cordoned[ca_k] = 0
            fi
         :: else -> skip
         fi;
         ca_k = 0; ca_ok = 0; ca_n = 0;
         canonical()
       }
     }
  :: atomic {
       ca_removing > 0 && kubelet_work == 0 ->
       d_step {
         for (ca_q : 1 .. PODS) {
           if
           :: pod[ca_q].node == ca_removing && pod[ca_q].status != FREE && pod[ca_q].status != PENDING ->
              if
              :: pod[ca_q].status == RUNNING -> stop_running(ca_q)
              :: else -> skip
              fi;
              /* a DaemonSet pod goes with its node: the DaemonSet wants one fewer */
              if
              :: template_daemon[slot_template[ca_q]] -> spec[WORKLOAD_OF(ca_q)]--
              :: else -> mark_dc(WORKLOAD_OF(ca_q))
              fi;
              pod_gone(ca_q);
              pod[ca_q].status = FREE; pod[ca_q].node = 0; pod[ca_q].warm = 0; pod[ca_q].rev = 0
           :: else -> skip
           fi
         }
         printf("KIVI:%d:%d\n", EVENT_NODE_REMOVED, ca_removing);
         absent[ca_removing] = 1; node_ready[ca_removing] = 0; cordoned[ca_removing] = 0;
         pool_nodes[node_pool[ca_removing]]--;
         ca_removing = 0;
         retry_unschedulable();
         canonical()
       }
     }
  od
}

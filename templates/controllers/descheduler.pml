/*
 * Descheduler (sigs.k8s.io/descheduler), one run each time the cluster has settled (its
 * interval is not timed: a run may come at any settled moment).
 *  - RemoveDuplicates (pkg/framework/plugins/removeduplicates): on a node, the pods of one
 *    workload after the first are duplicates. With o such pods over t nodes they could run on
 *    (t >= 2), a node holding more than ceil(o / t) of them loses the ones past that.
 *  - RemovePodsViolatingTopologySpreadConstraint (.../removepodsviolatingtopologyspreadconstraint,
 *    balanceDomains): when a constraint's domains differ by more than maxSkew, the largest give
 *    pods to the smallest: at most ceil((skew - maxSkew) / 2), never past the average; pods go
 *    from the end of a domain's list, and only if another node could take them.
 * DefaultEvictor: never bare pods, DaemonSet pods or system-critical pods (decided per
 * template before the model); with nodeFit, only pods that fit another node now.
 */
hidden byte ds_mark[PODS + 1];
hidden int ds_q, ds_n, ds_t, ds_k, ds_c, ds_d, ds_i, ds_j, ds_x, ds_y, ds_sum, ds_domains, ds_move;
hidden int ds_skew, ds_above, ds_below, ds_upper, ds_targets, ds_occ, ds_skip, ds_took, ds_min, ds_max;
hidden int ds_order[MAX_DOMAIN + 1];
hidden int ds_size[MAX_DOMAIN + 1];
hidden int ds_taken[MAX_DOMAIN + 1];
hidden int ds_on_node[NODES + 1];

#define DUPLICATES_EVICTABLE {{ ir.descheduler.duplicates_evictable }}
#define SPREAD_EVICTABLE {{ ir.descheduler.spread_evictable }}
#define IN_DOMAIN(q, c, d) (COUNTED(q) && COUNTS_NODE(c, pod[q].node) && BIT(constraint_counts[c], slot_template[q]) && DOMAIN(c, pod[q].node) == (d))
/* another ready node passes the pod's static filters (validatePodFitsOnOtherNodes) */
#define OTHER_NODE_STATIC(q, n) ((n) != pod[q].node && node_ready[n] && BIT(template_static_nodes[slot_template[q]], n))

/* ds_y = 1 when pod q fits another ready node now: filters, a free slot and room (nodeFit). */
inline fits_elsewhere(q) {
  ds_y = 0;
  for (ds_n : 1 .. NODES) {
    if
    :: OTHER_NODE_STATIC(q, ds_n) && s_pods[ds_n] + 1 <= node_pod_cap[ds_n] && !CPU_SHORT(slot_template[q], ds_n) && !MEM_SHORT(slot_template[q], ds_n) -> ds_y = 1
    :: else -> skip
    fi
  }
}

inline remove_duplicates() {
  for (ds_t : 1 .. TEMPLATES) {
    if
    :: BIT(DUPLICATES_EVICTABLE, ds_t) ->
       ds_occ = 0; ds_targets = 0;
       for (ds_q : 1 .. PODS) {
         if
         :: pod[ds_q].status == RUNNING && slot_template[ds_q] == ds_t -> ds_occ++
         :: else -> skip
         fi
       }
       for (ds_n : 1 .. NODES) {
         if
         :: node_ready[ds_n] && BIT(template_static_nodes[ds_t], ds_n) -> ds_targets++
         :: else -> skip
         fi
       }
       if
       :: ds_targets >= 2 && ds_occ > 0 ->
          ds_upper = (ds_occ + ds_targets - 1) / ds_targets;
          for (ds_n : 1 .. NODES) { ds_on_node[ds_n] = 0 }
          for (ds_q : 1 .. PODS) {
            if
            :: pod[ds_q].status == RUNNING && slot_template[ds_q] == ds_t ->
               ds_on_node[pod[ds_q].node]++;
               if
               :: ds_on_node[pod[ds_q].node] > ds_upper -> ds_mark[ds_q] = 1
               :: else -> skip
               fi
            :: else -> skip
            fi
          }
       :: else -> skip
       fi
    :: else -> skip
    fi
  }
}

/* Mark ds_move pods of the domain at sorted position ds_j, from the end of its list. */
inline take_from_domain(c) {
  ds_skip = 0; ds_took = 0; ds_q = PODS;
  do
  :: ds_q >= 1 && ds_took < ds_move ->
     if
     :: IN_DOMAIN(ds_q, c, ds_order[ds_j]) && BIT(SPREAD_EVICTABLE, slot_template[ds_q]) ->
        if
        :: ds_skip < ds_taken[ds_j] -> ds_skip++
        :: else ->
           ds_took++;
           ds_x = 0;
           for (ds_n : 1 .. NODES) {
             if
             :: OTHER_NODE_STATIC(ds_q, ds_n) -> ds_x = 1
             :: else -> skip
             fi
           }
           if
           :: ds_x -> ds_mark[ds_q] = 1
           :: else -> skip
           fi
        fi
     :: else -> skip
     fi;
     ds_q--
  :: else -> break
  od;
  ds_taken[ds_j] = ds_taken[ds_j] + ds_move
}

inline balance_constraint(c) {
  count_domains(c, 2);
  ds_domains = 0; ds_sum = 0; ds_min = -1; ds_max = -1;
  for (ds_d : 1 .. MAX_DOMAIN) {
    if
    :: s_present[ds_d] ->
       ds_order[ds_domains] = ds_d; ds_domains++; ds_sum = ds_sum + s_count[ds_d];
       if
       :: ds_min < 0 || s_count[ds_d] < ds_min -> ds_min = s_count[ds_d]
       :: else -> skip
       fi;
       if
       :: s_count[ds_d] > ds_max -> ds_max = s_count[ds_d]
       :: else -> skip
       fi
    :: else -> skip
    fi
  }
  if
  :: ds_domains >= 2 && ds_max - ds_min > constraint_skew[c] ->
     /* sort the domains by size, ascending (stable insertion sort) */
     for (ds_i : 1 .. ds_domains - 1) {
       ds_j = ds_i;
       do
       :: ds_j > 0 && s_count[ds_order[ds_j - 1]] > s_count[ds_order[ds_j]] ->
          ds_x = ds_order[ds_j]; ds_order[ds_j] = ds_order[ds_j - 1]; ds_order[ds_j - 1] = ds_x; ds_j--
       :: else -> break
       od
     }
     for (ds_i : 0 .. ds_domains - 1) { ds_size[ds_i] = s_count[ds_order[ds_i]]; ds_taken[ds_i] = 0 }
     ds_i = 0; ds_j = ds_domains - 1;
     do
     :: ds_i < ds_j ->
        /* the largest has nothing to give without falling below the average */
        if
        :: ds_size[ds_j] * ds_domains <= ds_sum -> ds_j--
        :: else -> skip
        fi;
        ds_skew = ds_size[ds_j] - ds_size[ds_i];
        if
        :: ds_skew <= constraint_skew[c] -> ds_i++
        :: else ->
           ds_x = ds_size[ds_j] * ds_domains - ds_sum;
           ds_above = (ds_x <= 0 -> 0 : (ds_x + ds_domains - 1) / ds_domains);
           ds_x = ds_sum - ds_size[ds_i] * ds_domains;
           ds_below = (ds_x <= 0 -> 0 : (ds_x + ds_domains - 1) / ds_domains);
           ds_move = (ds_skew - constraint_skew[c] + 1) / 2;
           if
           :: ds_above < ds_move -> ds_move = ds_above
           :: else -> skip
           fi;
           if
           :: ds_below < ds_move -> ds_move = ds_below
           :: else -> skip
           fi;
           if
           :: ds_move <= 0 -> ds_i++
           :: else ->
              take_from_domain(c);
              ds_size[ds_j] = ds_size[ds_j] - ds_move;
              ds_size[ds_i] = ds_size[ds_i] + ds_move
           fi
        fi
     :: else -> break
     od
  :: else -> skip
  fi
}

inline balance_spread() {
  for (ds_t : 1 .. TEMPLATES) {
    if
    :: template_hard_count[ds_t] > 0 ->
       for (ds_k : 0 .. template_hard_count[ds_t] - 1) { balance_constraint(template_hard_first[ds_t] + ds_k) }
    :: else -> skip
    fi;
{% if ir.descheduler.spread_soft %}
    if
    :: template_soft_count[ds_t] > 0 && template_require_all[ds_t] ->
       for (ds_k : 0 .. template_soft_count[ds_t] - 1) { balance_constraint(template_soft_first[ds_t] + ds_k) }
    :: else -> skip
    fi;
{% endif %}
    skip
  }
}

proctype Descheduler() {
end_descheduler:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED ->
       d_step {
         for (ds_q : 1 .. PODS) { ds_mark[ds_q] = 0 }
{% if ir.descheduler.remove_duplicates %}
         remove_duplicates();
{% endif %}
{% if ir.descheduler.spread %}
         balance_spread();
{% endif %}
         node_usage();
         for (ds_q : 1 .. PODS) {
           if
           :: ds_mark[ds_q] && pod[ds_q].status == RUNNING ->
{% if ir.descheduler.node_fit %}
              fits_elsewhere(ds_q);
{% else %}
              ds_y = 1;
{% endif %}
              if
              :: ds_y ->
                 printf("KIVI:16:%d:%d\n", ds_q, pod[ds_q].node);
                 stop_running(ds_q);
                 pod[ds_q].status = TERMINATING; kubelet_work++;
                 evicted[WORKLOAD_OF(ds_q)] = 1;
                 mark_dc(WORKLOAD_OF(ds_q))
              :: else -> skip
              fi
           :: else -> skip
           fi;
           ds_mark[ds_q] = 0
         }
         skip
       }
     }
  od
}

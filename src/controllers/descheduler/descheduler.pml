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
 *  - RemovePodsViolatingNodeTaints (.../removepodsviolatingnodetaints): pods on a node with a
 *    NoSchedule taint (PreferNoSchedule if included; less excludedTaints) they do not tolerate.
 *  - RemovePodsViolatingNodeAffinity (.../removepodsviolatingnodeaffinity): required: pods on a
 *    node that fails their nodeSelector or required affinity, when another node fits them;
 *    preferred: pods on a node whose preferred-terms weight is below that of another node they
 *    fit.
 *  - LowNodeUtilization (.../nodeutilization/lownodeutilization.go): when more than
 *    numberOfNodes schedulable nodes are below every threshold (requests, percent of
 *    allocatable) and some node is above a target threshold, pods leave the nodes above target
 *    until they are back under it or the room below target on the underutilized nodes is used.
 * DefaultEvictor: never bare pods, DaemonSet pods, system-critical pods or pods at or above the
 * priority threshold (decided per template before the model); with nodeFit, only pods that fit
 * another node now. Every eviction goes through the Eviction API: PodDisruptionBudgets apply.
 */
hidden byte ds_mark[MAX_PODS + 1];   /* the plugin that wants the pod evicted, 0 for none */
hidden byte ds_evictions;            /* pods the current run evicted */
hidden byte ds_calls[MAX_PODS + 1];  /* eviction calls for the pod in this run (RemoveDuplicates calls once per owner key) */
hidden byte ds_listed[MAX_PODS + 1]; /* RemoveDuplicates lists the pod (Filter and PreEvictionFilter pass) */
hidden byte ds_dup[MAX_PODS + 1];    /* ... and it duplicates an earlier listed pod on its node */
#define PLUGIN_DUPLICATES 1
#define PLUGIN_SPREAD 2
#define PLUGIN_TAINTS 3
#define PLUGIN_AFFINITY 4
#define PLUGIN_LOW_UTILIZATION 5
hidden int ds_q, ds_n, ds_t, ds_k, ds_c, ds_d, ds_i, ds_j, ds_x, ds_y, ds_sum, ds_domains, ds_move, ds_r, ds_u;
hidden int ds_has, ds_skew, ds_above, ds_below, ds_upper, ds_targets, ds_occ, ds_skip, ds_took, ds_min, ds_max, ds_nodes;
hidden int ds_order[MAX_DOMAIN + 1];
hidden int ds_size[MAX_DOMAIN + 1];
hidden int ds_taken[MAX_DOMAIN + 1];
hidden int ds_on_node[MAX_NODES + 1];

#define DUPLICATES_EVICTABLE {{ ir.descheduler.duplicates_evictable }}
#define SPREAD_EVICTABLE {{ ir.descheduler.spread_evictable }}
#define TAINTS_EVICTABLE {{ ir.descheduler.taints_evictable }}
#define AFFINITY_EVICTABLE {{ ir.descheduler.affinity_evictable }}
#define DUPLICATE_KEYS {{ ir.descheduler.duplicate_key_count }}
#define MAX_RANK {{ ir.descheduler.max_rank }}
/* a node of the descheduler's node list (ready) that NodeFit accepts for pod q by static
   properties: not q's own node, not cordoned, its selector, affinity and taints */
#define OTHER_NODE_STATIC(q, n) ((n) != pod[q].node && node_ready[n] && !cordoned[n] && BIT(ds_fit_nodes[slot_template[q]], n))
/* pods the descheduler sees on a node: assigned, not being deleted, on a node of its list */
#define DS_ASSIGNED(q) ((pod[q].status == BOUND || pod[q].status == RUNNING) && node_ready[pod[q].node])

/* ds_y = 1 when pod q fits one of the nodes in mask other than its own, now
   (pkg/descheduler/node/node.go PodFitsAnyOtherNode and NodeFit: selector and required
   affinity, NoSchedule and NoExecute taints, a free pod slot and room for its requests, the
   node not unschedulable, and no pod on the node that q's own required anti-affinity terms
   select). Needs node_usage(). */
hidden int ds_fit_t, ds_fit_k, ds_fit_c, ds_fit_p, ds_fit_anti;
inline fits_other_node(q, mask) {
  ds_y = 0;
  ds_fit_t = slot_template[q];
  for (ds_n : 1 .. NODES) {
    if
    :: ds_y == 0 && BIT(mask, ds_n) && OTHER_NODE_STATIC(q, ds_n) && s_pods[ds_n] + 1 <= node_pod_cap[ds_n] && !CPU_SHORT(ds_fit_t, ds_n) && !MEM_SHORT(ds_fit_t, ds_n) && !SCALAR_SHORT(ds_fit_t, ds_n) ->
       /* podMatchesInterPodAntiAffinity: q's required anti-affinity against the pods there */
       ds_fit_anti = 0;
       if
       :: template_term_count[ds_fit_t] > 0 ->
          for (ds_fit_k : 0 .. template_term_count[ds_fit_t] - 1) {
            ds_fit_c = template_term_first[ds_fit_t] + ds_fit_k;
            if
            :: term_anti[ds_fit_c] && TERM_DOMAIN(ds_fit_c, ds_n) > 0 ->
               for (ds_fit_p : 1 .. PODS) {
                 if
                 :: ds_fit_p != q && HOLDS_RESOURCES(ds_fit_p) && pod[ds_fit_p].node == ds_n && BIT(term_counts[ds_fit_c], slot_template[ds_fit_p]) -> ds_fit_anti = 1
                 :: else -> skip
                 fi
               }
            :: else -> skip
            fi
          }
       :: else -> skip
       fi;
       ds_y = !ds_fit_anti
    :: else -> skip
    fi
  }
}
#define ALL_NODES (-1)
#define fits_elsewhere(q) fits_other_node(q, ALL_NODES)

/* RemoveDuplicates (removeduplicates.go Balance): per node, a listed pod whose owner-and-image
   key list equals an earlier listed pod's there is a duplicate. Per owner key, with o listed
   pods of that key and t target nodes (the union of the nodes each distinct variant of its
   duplicates fits, counting a variant only if it fits more than one node; t >= 2), a node's
   duplicates from the ceil(o / t)-th on are evicted, once per owner key. */
inline remove_duplicates() {
  for (ds_q : 1 .. PODS) {
    ds_listed[ds_q] = 0; ds_dup[ds_q] = 0;
    if
    :: DS_ASSIGNED(ds_q) && BIT(DUPLICATES_EVICTABLE, slot_template[ds_q]) && ds_dup_list[slot_template[ds_q]] > 0 ->
{% if ir.descheduler.node_fit %}
       fits_elsewhere(ds_q);
       ds_listed[ds_q] = ds_y
{% else %}
       ds_listed[ds_q] = 1
{% endif %}
    :: else -> skip
    fi
  }
  for (ds_q : 1 .. PODS) {
    if
    :: ds_listed[ds_q] ->
       for (ds_i : 1 .. ds_q - 1) {
         if
         :: ds_listed[ds_i] && pod[ds_i].node == pod[ds_q].node && ds_dup_list[slot_template[ds_i]] == ds_dup_list[slot_template[ds_q]] -> ds_dup[ds_q] = 1
         :: else -> skip
         fi
       }
    :: else -> skip
    fi
  }
{% if ir.descheduler.duplicate_key_count > 0 %}
  for (ds_k : 1 .. DUPLICATE_KEYS) {
    ds_occ = 0; ds_x = 0;
    for (ds_q : 1 .. PODS) {
      if
      :: ds_listed[ds_q] && BIT(ds_dup_keys[slot_template[ds_q]], ds_k) ->
         ds_occ++;
         if
         :: ds_dup[ds_q] -> ds_x = ds_x | (1 << slot_template[ds_q])
         :: else -> skip
         fi
      :: else -> skip
      fi
    }
    /* target nodes (getTargetNodes): ds_u, over the variants (templates) in ds_x; a node's
       NoSchedule taints count, the cordoned node's node.kubernetes.io/unschedulable too */
    ds_u = 0;
    for (ds_t : 1 .. TEMPLATES) {
      if
      :: BIT(ds_x, ds_t) ->
         ds_y = 0;
         for (ds_n : 1 .. NODES) {
           if
           :: node_ready[ds_n] && BIT(ds_fit_nodes[ds_t], ds_n) && !CORDONED_FOR(ds_t, ds_n) -> ds_y++
           :: else -> skip
           fi
         }
         if
         :: ds_y > 1 ->
            for (ds_n : 1 .. NODES) {
              if
              :: node_ready[ds_n] && BIT(ds_fit_nodes[ds_t], ds_n) && !CORDONED_FOR(ds_t, ds_n) -> ds_u = ds_u | (1 << ds_n)
              :: else -> skip
              fi
            }
         :: else -> skip
         fi
      :: else -> skip
      fi
    }
    ds_targets = 0;
    for (ds_n : 1 .. NODES) {
      if
      :: BIT(ds_u, ds_n) -> ds_targets++
      :: else -> skip
      fi
    }
    if
    :: ds_targets >= 2 ->
       ds_upper = (ds_occ + ds_targets - 1) / ds_targets;
       for (ds_n : 1 .. NODES) { ds_on_node[ds_n] = 0 }
       for (ds_q : 1 .. PODS) {
         if
         :: ds_listed[ds_q] && ds_dup[ds_q] && BIT(ds_dup_keys[slot_template[ds_q]], ds_k) ->
            ds_on_node[pod[ds_q].node]++;
            if
            :: ds_on_node[pod[ds_q].node] >= ds_upper -> ds_mark[ds_q] = PLUGIN_DUPLICATES; ds_calls[ds_q]++
            :: else -> skip
            fi
         :: else -> skip
         fi
       }
    :: else -> skip
    fi
  }
{% endif %}
  skip
}

/* The pods RemovePodsViolatingTopologySpreadConstraint counts for constraint c: listed (its
   pod filter: DefaultEvictor's Filter, namespaces, labelSelector), matched by the selector,
   on a node with the key; with matchLabelKeys pod-template-hash those of revision want_rev. */
#define DS_COUNTED(q, c, want_rev) (DS_ASSIGNED(q) && BIT(SPREAD_EVICTABLE, slot_template[q]) && BIT(constraint_counts[c], slot_template[q]) && DOMAIN(c, pod[q].node) > 0 && ((want_rev) == 2 || pod[q].rev == (want_rev)))
/* the nodes whose domains count for c: the inclusion policies (nodeTaintsPolicy Honor: a
   cordoned node's unschedulable taint too) */
#define DS_ELIGIBLE(c, n) (node_ready[n] && BIT(constraint_policy_nodes[c], n) && DOMAIN(c, n) > 0 && !(constraint_honor_taints[c] && cordoned[n]))

/* Mark ds_move pods of the domain at sorted position ds_j, from the end of its list (ordered by
   ds_rank, then slot), skipping the ds_taken[ds_j] already moved. */
inline take_from_domain(c, want_rev) {
  ds_skip = 0; ds_took = 0; ds_r = MAX_RANK;
  do
  :: ds_r >= 0 && ds_took < ds_move ->
     ds_q = PODS;
     do
     :: ds_q >= 1 && ds_took < ds_move ->
        if
        :: DS_COUNTED(ds_q, c, want_rev) && DOMAIN(c, pod[ds_q].node) == ds_order[ds_j] && ds_rank[slot_template[ds_q]] == ds_r ->
           if
           :: ds_skip < ds_taken[ds_j] -> ds_skip++
           :: else ->
              ds_took++;
{% if ir.descheduler.balance_node_fit %}
              fits_other_node(ds_q, ds_nodes);
{% else %}
              ds_y = 1;
{% endif %}
              if
              :: ds_y -> ds_mark[ds_q] = PLUGIN_SPREAD; ds_calls[ds_q] = 1
              :: else -> skip
              fi
           fi
        :: else -> skip
        fi;
        ds_q--
     :: else -> break
     od;
     ds_r--
  :: else -> break
  od;
  ds_taken[ds_j] = ds_taken[ds_j] + ds_move
}

/* balanceDomains for constraint c over the pods of revision want_rev (2: all) */
inline balance_constraint(c, want_rev) {
  for (ds_d : 0 .. MAX_DOMAIN) { s_count[ds_d] = 0; s_present[ds_d] = 0 }
  for (ds_n : 1 .. NODES) {
    if
    :: DS_ELIGIBLE(c, ds_n) -> s_present[DOMAIN(c, ds_n)] = 1
    :: else -> skip
    fi
  }
  /* a counted pod on a node the policies leave out still makes its domain exist */
  for (ds_q : 1 .. PODS) {
    if
    :: DS_COUNTED(ds_q, c, want_rev) -> s_count[DOMAIN(c, pod[ds_q].node)]++; s_present[DOMAIN(c, pod[ds_q].node)] = 1
    :: else -> skip
    fi
  }
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
     /* filterNodesBelowIdealAvg: eligible nodes of the domains below the average */
     ds_nodes = 0;
     for (ds_n : 1 .. NODES) {
       if
       :: DS_ELIGIBLE(c, ds_n) && s_count[DOMAIN(c, ds_n)] * ds_domains < ds_sum -> ds_nodes = ds_nodes | (1 << ds_n)
       :: else -> skip
       fi
     }
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
              take_from_domain(c, want_rev);
              ds_size[ds_j] = ds_size[ds_j] - ds_move;
              ds_size[ds_i] = ds_size[ds_i] + ds_move
           fi
        fi
     :: else -> break
     od
  :: else -> skip
  fi
}

/* Each listed pod's constraints (the allowed whenUnsatisfiable kinds), balanced one by one;
   with matchLabelKeys pod-template-hash once per revision. A constraint several pods share
   is balanced again with the same result. */
inline balance_constraints_of(first, count) {
  for (ds_k : 0 .. count - 1) {
    ds_c = first + ds_k;
    if
    :: constraint_same_revision[ds_c] ->
       balance_constraint(ds_c, 0);
       balance_constraint(ds_c, 1)
    :: else -> balance_constraint(ds_c, 2)
    fi
  }
}

inline balance_spread() {
  for (ds_t : 1 .. TEMPLATES) {
    /* upstream collects constraints from the pods it lists */
    ds_has = 0;
    for (ds_q : 1 .. PODS) {
      if
      :: DS_ASSIGNED(ds_q) && slot_template[ds_q] == ds_t && BIT(SPREAD_EVICTABLE, ds_t) -> ds_has = 1
      :: else -> skip
      fi
    }
{% if ir.descheduler.spread_hard %}
    if
    :: ds_has && template_hard_count[ds_t] > 0 -> balance_constraints_of(template_hard_first[ds_t], template_hard_count[ds_t])
    :: else -> skip
    fi;
{% endif %}
{% if ir.descheduler.spread_soft %}
    if
    :: ds_has && template_soft_count[ds_t] > 0 && template_require_all[ds_t] -> balance_constraints_of(template_soft_first[ds_t], template_soft_count[ds_t])
    :: else -> skip
    fi;
{% endif %}
    skip
  }
}

{% if ir.descheduler.taints or ir.descheduler.affinity_required or ir.descheduler.affinity_preferred %}
/* Deschedule plugins: pods that violate their node's taints or their node affinity. Needs
   node_usage() (s_req_*, s_pods) for the fit checks. */
inline violating_pods() {
  for (ds_q : 1 .. PODS) {
    if
    :: pod[ds_q].status == RUNNING ->
       ds_t = slot_template[ds_q];
{% if ir.descheduler.taints %}
       if
       :: BIT(TAINTS_EVICTABLE, ds_t) && BIT(ds_taint_bad[ds_t], pod[ds_q].node) -> ds_mark[ds_q] = PLUGIN_TAINTS
       :: else -> skip
       fi;
{% endif %}
{% if ir.descheduler.affinity_required %}
       if
       :: BIT(AFFINITY_EVICTABLE, ds_t) && BIT(ds_affinity_bad[ds_t], pod[ds_q].node) ->
          fits_elsewhere(ds_q);
          if
          :: ds_y -> ds_mark[ds_q] = PLUGIN_AFFINITY
          :: else -> skip
          fi
       :: else -> skip
       fi;
{% endif %}
{% if ir.descheduler.affinity_preferred %}
       if
       :: BIT(AFFINITY_EVICTABLE, ds_t) ->
          ds_x = affinity_raw[ds_t * (MAX_NODES + 1) + pod[ds_q].node];
          for (ds_n : 1 .. NODES) {
            if
            :: OTHER_NODE_STATIC(ds_q, ds_n) && s_pods[ds_n] + 1 <= node_pod_cap[ds_n] && !CPU_SHORT(ds_t, ds_n) && !MEM_SHORT(ds_t, ds_n) && !SCALAR_SHORT(ds_t, ds_n) && affinity_raw[ds_t * (MAX_NODES + 1) + ds_n] > ds_x -> ds_mark[ds_q] = PLUGIN_AFFINITY
            :: else -> skip
            fi
          }
       :: else -> skip
       fi;
{% endif %}
       skip
    :: else -> skip
    fi
  }
  skip
}
{% endif %}
{% if ir.descheduler.low_utilization %}{% set low = ir.descheduler.low_utilization %}
#define LOW_EVICTABLE {{ low.evictable }}
hidden int ds_low, ds_lows, ds_ready, ds_room_cpu, ds_room_mem, ds_room_pods;
#define UNDER(n) (s_req_cpu[n] * 100 < node_cpu[n] * {{ low.thresholds[0] }} && s_req_mem[n] * 100 < node_mem[n] * {{ low.thresholds[1] }} && s_pods[n] * 100 < ds_pods_allocatable[n] * {{ low.thresholds[2] }})
#define OVER(n) (s_req_cpu[n] * 100 > node_cpu[n] * {{ low.targets[0] }} || s_req_mem[n] * 100 > node_mem[n] * {{ low.targets[1] }} || s_pods[n] * 100 > ds_pods_allocatable[n] * {{ low.targets[2] }})

/* Needs node_usage(); changes s_req_* as if the marked pods had gone. */
inline low_node_utilization() {
  ds_low = 0; ds_lows = 0; ds_ready = 0; ds_room_cpu = 0; ds_room_mem = 0; ds_room_pods = 0;
  for (ds_n : 1 .. NODES) {
    if
    :: node_ready[ds_n] && !cordoned[ds_n] ->
       ds_ready++;
       if
       :: UNDER(ds_n) ->
          ds_low = ds_low | (1 << ds_n); ds_lows++;
          ds_room_cpu = ds_room_cpu + node_cpu[ds_n] * {{ low.targets[0] }} / 100 - s_req_cpu[ds_n];
          ds_room_mem = ds_room_mem + node_mem[ds_n] * {{ low.targets[1] }} / 100 - s_req_mem[ds_n];
          ds_room_pods = ds_room_pods + ds_pods_allocatable[ds_n] * {{ low.targets[2] }} / 100 - s_pods[ds_n]
       :: else -> skip
       fi
    :: else -> skip
    fi
  }
  if
  :: ds_lows > {{ low.number_of_nodes }} && ds_lows < ds_ready ->
     for (ds_n : 1 .. NODES) {
       if
       :: node_ready[ds_n] && !BIT(ds_low, ds_n) && OVER(ds_n) ->
          for (ds_q : 1 .. PODS) {
            if
            :: pod[ds_q].status == RUNNING && pod[ds_q].node == ds_n && BIT(LOW_EVICTABLE, slot_template[ds_q]) && OVER(ds_n) && ds_room_cpu > 0 && ds_room_mem > 0 && ds_room_pods > 0 ->
               ds_mark[ds_q] = PLUGIN_LOW_UTILIZATION;
               ds_t = slot_template[ds_q];
               s_req_cpu[ds_n] = s_req_cpu[ds_n] - template_cpu[ds_t]; ds_room_cpu = ds_room_cpu - template_cpu[ds_t];
               s_req_mem[ds_n] = s_req_mem[ds_n] - template_mem[ds_t]; ds_room_mem = ds_room_mem - template_mem[ds_t];
               s_pods[ds_n]--; ds_room_pods--
            :: else -> skip
            fi
          }
       :: else -> skip
       fi
     }
  :: else -> skip
  fi
}
{% endif %}
{% if ir.probe == "descheduler" %}{% include "probes/descheduler.pml" %}{% endif %}
/* One run of the descheduler's profile: the plugins mark pods, then each marked pod still
   running goes through the DefaultEvictor's PreEvictionFilter (nodeFit) and the Eviction API. */
inline descheduler_run() {
  ds_evictions = 0;
  for (ds_q : 1 .. PODS) { ds_mark[ds_q] = 0; ds_calls[ds_q] = 0 }
{% if ir.probe == "descheduler" %}
  probe_descheduler_start();
{% endif %}
  node_usage();
{% if ir.descheduler.taints or ir.descheduler.affinity_required or ir.descheduler.affinity_preferred %}
  violating_pods();
{% endif %}
{% if ir.descheduler.remove_duplicates %}
  remove_duplicates();
{% endif %}
{% if ir.descheduler.spread %}
  balance_spread();
{% endif %}
{% if ir.descheduler.low_utilization %}
  low_node_utilization();
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
       :: ds_y -> disruption_allowed(ds_q); ds_y = b_ok;
          if
          :: !ds_y -> printf("KIVI:%d:%d:%d:%d:2\n", EVENT_DESCHEDULER_DECLINED, ds_q, pod[ds_q].node, ds_mark[ds_q])
          :: else -> skip
          fi
       :: else -> printf("KIVI:%d:%d:%d:%d:1\n", EVENT_DESCHEDULER_DECLINED, ds_q, pod[ds_q].node, ds_mark[ds_q])
       fi;
       if
       :: ds_y ->
          printf("KIVI:%d:%d:%d:%d\n", EVENT_DESCHEDULER_EVICTED, ds_q, pod[ds_q].node, ds_mark[ds_q]);
{% if ir.probe == "descheduler" %}
          printf("KIVI:93:%d:%d:%d\n", ds_q, ds_mark[ds_q], (ds_calls[ds_q] > 0 -> ds_calls[ds_q] : 1));
{% endif %}
          terminate_running(ds_q);
          ds_evictions++;
          evicted[WORKLOAD_OF(ds_q)] = MONITORS_EVICTION_LOOP
       :: else -> skip
       fi
    :: else -> skip
    fi;
    ds_mark[ds_q] = 0
  }
{% if ir.probe == "descheduler" %}
  probe_descheduler_end();
{% endif %}
  skip
}

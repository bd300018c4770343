/*
 * kube-scheduler: one scheduling cycle per step, for the first pending pod.
 * Models pkg/scheduler/framework/plugins (default profile):
 *   Filter: NodeUnschedulable (cordoned nodes), NodeName, NodeAffinity (nodeSelector and required terms), TaintToleration
 *           (NoSchedule, NoExecute) — evaluated before the model, per template and node;
 *           NodeResourcesFit (noderesources/fit.go: pods, cpu, memory against allocatable);
 *           InterPodAffinity, required terms (interpodaffinity/filtering.go): the pod's own
 *           affinity and anti-affinity, and existing pods' anti-affinity against it;
 *           PodTopologySpread, per constraint (podtopologyspread/filtering.go).
 *   Score:  NodeResourcesFit LeastAllocated, MostAllocated or RequestedToCapacityRatio (weight 1,
 *           non-zero requests),
 *           NodeResourcesBalancedAllocation (1), PodTopologySpread (2, scoring.go),
 *           TaintToleration (3), NodeAffinity (2).
 * Nodes with the highest total score tie; kube-scheduler picks one of them at random, so the
 * choice is non-deterministic here (Kivi took the lowest index and missed behaviours).
 * A pod that fits nowhere is marked unschedulable and retried when the cluster changes.
 */
hidden int s_req_cpu[MAX_NODES + 1];
hidden int s_req_mem[MAX_NODES + 1];
hidden int s_nz_cpu[MAX_NODES + 1];
hidden int s_nz_mem[MAX_NODES + 1];
hidden int s_pods[MAX_NODES + 1];
hidden int s_req_scalar[{{ [ir.scalar_resources, 1]|max }} * (MAX_NODES + 1)];
hidden int s_score[MAX_NODES + 1];
hidden int s_raw[MAX_NODES + 1];
hidden int s_count[MAX_DOMAIN + 1];
hidden byte s_present[MAX_DOMAIN + 1];
hidden byte s_seen[MAX_DOMAIN + 1];
hidden int s_size;
hidden int s_n, s_q, s_c, s_t, s_k, s_d, s_min, s_max, s_x, s_y, s_a, s_b, s_domains;
hidden int s_feasible, s_ignored, s_static_fail, s_resource_fail, s_volume_fail, s_spread_fail, s_spread_nodes, s_not_ready;
hidden int s_affinity_fail, s_affinity_nodes, s_cordoned;
hidden int s_template, s_ca;
hidden int s_k2;   /* cluster-autoscaler: template nodes tried, those the pod fits */

#define NONZERO_CPU(t) template_score_cpu[t]
#define NONZERO_MEM(t) template_score_mem[t]
#define DOMAIN(c, n) constraint_domain[(c) * (MAX_NODES + 1) + (n)]
/* Nodes constraint c counts: static inclusion policies, and under nodeTaintsPolicy Honor not
   the nodes tainted while the model runs (not ready: unreachable or not-ready; cordoned). */
#define COUNTS_NODE(c, n) ({% if ir.cluster_autoscaler %}!absent[n] && {% endif %}BIT(constraint_included[c], n) && !(constraint_honor_taints[c] && (!node_ready[n] || cordoned[n])))
#define HOLDS_RESOURCES(q) (pod[q].status >= BOUND)
#define CPU_SHORT(t, n) (template_cpu[t] > 0 && template_cpu[t] > node_cpu[n] - s_req_cpu[n])
#define MEM_SHORT(t, n) (template_mem[t] > 0 && template_mem[t] > node_mem[n] - s_req_mem[n])
/* NodeResourcesFit on ephemeral storage, hugepages and extended resources (fit.go fitsRequest:
   a resource the pod requests must fit what the node has left; a node without it has 0). */
{% if ir.scalar_resources > 0 %}
#define SCALAR_SHORT_K(k, t, n) (template_scalar[(k) * (TEMPLATES + 1) + (t)] > 0 && template_scalar[(k) * (TEMPLATES + 1) + (t)] > node_scalar[(k) * (MAX_NODES + 1) + (n)] - s_req_scalar[(k) * (MAX_NODES + 1) + (n)])
#define SCALAR_SHORT(t, n) ({% for k in range(ir.scalar_resources) %}{% if not loop.first %} || {% endif %}SCALAR_SHORT_K({{ k }}, t, n){% endfor %})
{% else %}
#define SCALAR_SHORT(t, n) 0
{% endif %}
#define SKEW_BROKEN(c, n) (DOMAIN(c, n) == 0 || s_count[DOMAIN(c, n)] + constraint_self[c] - s_min > constraint_skew[c])
#define TERM_DOMAIN(c, n) term_domain[(c) * (MAX_NODES + 1) + (n)]
/* s_count: matching pods per domain of term c; s_x: matching pods anywhere */
#define AFFINITY_BROKEN(c, n) (term_anti[c] -> (TERM_DOMAIN(c, n) > 0 && s_count[TERM_DOMAIN(c, n)] > 0) : (TERM_DOMAIN(c, n) == 0 || (s_count[TERM_DOMAIN(c, n)] == 0 && !(s_x == 0 && term_self[c]))))
/* PodTopologySpread counts assigned pods that are not being deleted, on failed nodes too. */
#define COUNTED(q) (pod[q].status == BOUND || pod[q].status == RUNNING || pod[q].status == UNREACHABLE)
/* NodeUnschedulable: a cordoned node takes only pods that tolerate its taint. */
#define CORDONED_FOR(t, n) (cordoned[n] && !template_tolerates_cordon[t])

/* Matching pods per domain of constraint c, over the nodes it counts; with matchLabelKeys
   pod-template-hash only those of revision want_rev (2: any). */
inline count_domains(c, want_rev) {
  for (s_d : 0 .. MAX_DOMAIN) { s_count[s_d] = 0; s_present[s_d] = 0 }
  for (s_n : 1 .. NODES) {
    if
    :: COUNTS_NODE(c, s_n) && DOMAIN(c, s_n) > 0 -> s_present[DOMAIN(c, s_n)] = 1
    :: else -> skip
    fi
  }
  for (s_q : 1 .. PODS) {
    if
    :: COUNTED(s_q) && COUNTS_NODE(c, pod[s_q].node) && BIT(constraint_counts[c], slot_template[s_q]) && (!constraint_same_revision[c] || want_rev == 2 || pod[s_q].rev == want_rev) ->
       s_count[DOMAIN(c, pod[s_q].node)]++
    :: else -> skip
    fi
  }
{% if ir.stale_reads %}
  /* stale-reads: deleted pods the informer has not delivered still count where they ran */
  for (s_k2 : 1 .. STALE_LAG) {
    if
    :: PHANTOM_COUNTED(s_k2) && COUNTS_NODE(c, phantom_node[s_k2]) && BIT(constraint_counts[c], slot_template[phantom[s_k2]]) && (!constraint_same_revision[c] || want_rev == 2 || phantom_rev[s_k2] == want_rev) ->
       s_count[DOMAIN(c, phantom_node[s_k2])]++
    :: else -> skip
    fi
  }
{% endif %}
}

{% if ir.scalar_resources > 0 %}
/* A node holds a pod of a template: add the pod's scalar resources to what the node holds. */
inline hold_scalars(held_template, held_node) {
{% for k in range(ir.scalar_resources) %}
  s_req_scalar[{{ k }} * (MAX_NODES + 1) + (held_node)] = s_req_scalar[{{ k }} * (MAX_NODES + 1) + (held_node)] + template_scalar[{{ k }} * (TEMPLATES + 1) + (held_template)]{% if not loop.last %};{% endif %}

{% endfor %}
}
{% endif %}

/* What each node holds (terminating pods keep their resources until removed). */
inline node_usage() {
  for (s_n : 1 .. NODES) { s_req_cpu[s_n] = 0; s_req_mem[s_n] = 0; s_nz_cpu[s_n] = 0; s_nz_mem[s_n] = 0; s_pods[s_n] = 0 }
{% if ir.scalar_resources > 0 %}
  for (s_n : 0 .. SCALARS * (MAX_NODES + 1) - 1) { s_req_scalar[s_n] = 0 }
{% endif %}
  for (s_q : 1 .. PODS) {
    if
    :: HOLDS_RESOURCES(s_q) ->
       s_req_cpu[pod[s_q].node] = s_req_cpu[pod[s_q].node] + template_cpu[slot_template[s_q]];
       s_req_mem[pod[s_q].node] = s_req_mem[pod[s_q].node] + template_mem[slot_template[s_q]];
       s_nz_cpu[pod[s_q].node] = s_nz_cpu[pod[s_q].node] + NONZERO_CPU(slot_template[s_q]);
       s_nz_mem[pod[s_q].node] = s_nz_mem[pod[s_q].node] + NONZERO_MEM(slot_template[s_q]);
{% if ir.scalar_resources > 0 %}
       hold_scalars(slot_template[s_q], pod[s_q].node);
{% endif %}
       s_pods[pod[s_q].node]++
    :: else -> skip
    fi
  }
{% if ir.stale_reads %}
  /* stale-reads: deleted pods the informer has not delivered still hold their node's resources */
  for (s_k2 : 1 .. STALE_LAG) {
    if
    :: PHANTOM_HOLDS(s_k2) ->
       s_req_cpu[phantom_node[s_k2]] = s_req_cpu[phantom_node[s_k2]] + template_cpu[slot_template[phantom[s_k2]]];
       s_req_mem[phantom_node[s_k2]] = s_req_mem[phantom_node[s_k2]] + template_mem[slot_template[phantom[s_k2]]];
       s_nz_cpu[phantom_node[s_k2]] = s_nz_cpu[phantom_node[s_k2]] + NONZERO_CPU(slot_template[phantom[s_k2]]);
       s_nz_mem[phantom_node[s_k2]] = s_nz_mem[phantom_node[s_k2]] + NONZERO_MEM(slot_template[phantom[s_k2]]);
{% if ir.scalar_resources > 0 %}
       hold_scalars(slot_template[phantom[s_k2]], phantom_node[s_k2]);
{% endif %}
       s_pods[phantom_node[s_k2]]++
    :: else -> skip
    fi
  }
{% endif %}
}

{% if ir.scoring.strategy == "RequestedToCapacityRatio" %}
/* RequestedToCapacityRatio's broken line (helper/shape_score.go BuildBrokenLinearFunction):
   utilization u (0..100) becomes a score 0..100 by linear interpolation between shape points. */
inline ratio_shape(u) {
  if
{% for point in ir.scoring.ratio_shape %}
{% if loop.first %}
  :: (u) <= {{ point.utilization }} -> u = {{ point.score }}
{% else %}
  :: (u) > {{ loop.previtem.utilization }} && (u) <= {{ point.utilization }} -> u = {{ loop.previtem.score }} + ({{ point.score - loop.previtem.score }}) * ((u) - {{ loop.previtem.utilization }}) / {{ point.utilization - loop.previtem.utilization }}
{% endif %}
{% endfor %}
  :: else -> u = {{ ir.scoring.ratio_shape[-1].score if ir.scoring.ratio_shape else 0 }}
  fi
}
{% endif %}

/* NodeResourcesFit's score of one resource (noderesources/least_allocated.go,
   most_allocated.go, requested_to_capacity_ratio.go); a node without the resource scores 0
   and leaves the weighted mean (resource_allocation.go). */
inline fit_resource_score(requested, capacity, out) {
  if
  :: (capacity) == 0 -> out = 0
{% if ir.scoring.strategy == "MostAllocated" %}
  :: else -> out = ((requested) > (capacity) -> 100 : (requested) * 100 / (capacity))
{% elif ir.scoring.strategy == "RequestedToCapacityRatio" %}
  :: else -> out = ((requested) > (capacity) -> 100 : (requested) * 100 / (capacity)); ratio_shape(out)
{% else %}
  :: else -> out = ((requested) > (capacity) -> 0 : ((capacity) - (requested)) * 100 / (capacity))
{% endif %}
  fi
}

inline score_nodes(p) {
  /* NodeResourcesFit (weight 1) and NodeResourcesBalancedAllocation (weight 1). */
  for (s_n : 1 .. NODES) {
    s_score[s_n] = 0;
    if
    :: BIT(s_feasible, s_n) ->
       fit_resource_score(s_nz_cpu[s_n] + NONZERO_CPU(s_t), node_cpu[s_n], s_a);
       fit_resource_score(s_nz_mem[s_n] + NONZERO_MEM(s_t), node_mem[s_n], s_b);
{% if ir.scoring.strategy == "RequestedToCapacityRatio" %}
       /* Resources scoring 0 leave the mean, which is rounded (math.Round). */
       s_x = (s_a > 0 -> {{ ir.scoring.cpu_weight }} : 0) + (s_b > 0 -> {{ ir.scoring.memory_weight }} : 0);
       s_score[s_n] = (s_x == 0 -> 0 : {{ ir.scoring.fit }} * ((2 * (s_a * {{ ir.scoring.cpu_weight }} + s_b * {{ ir.scoring.memory_weight }}) + s_x) / (2 * s_x)));
{% else %}
       s_x = (node_cpu[s_n] > 0 -> {{ ir.scoring.cpu_weight }} : 0) + (node_mem[s_n] > 0 -> {{ ir.scoring.memory_weight }} : 0);
       s_score[s_n] = (s_x == 0 -> 0 : {{ ir.scoring.fit }} * ((s_a * {{ ir.scoring.cpu_weight }} + s_b * {{ ir.scoring.memory_weight }}) / s_x));
{% endif %}
       s_x = s_req_cpu[s_n] + template_cpu[s_t];
       s_y = s_req_mem[s_n] + template_mem[s_t];
       s_a = (s_x >= node_cpu[s_n] -> 1000 : s_x * 1000 / node_cpu[s_n]);
       s_b = (s_y >= node_mem[s_n] -> 1000 : s_y * 1000 / node_mem[s_n]);
       s_x = (s_a > s_b -> s_a - s_b : s_b - s_a) / 2;
       s_score[s_n] = s_score[s_n] + {{ ir.scoring.balanced }} * ((1000 - s_x) * 100 / 1000)
    :: else -> skip
    fi
  }
  /* TaintToleration (weight 3): fewer untolerated PreferNoSchedule taints is better. */
  s_max = 0;
  for (s_n : 1 .. NODES) {
    if
    :: BIT(s_feasible, s_n) && taint_raw[s_t * (MAX_NODES + 1) + s_n] > s_max -> s_max = taint_raw[s_t * (MAX_NODES + 1) + s_n]
    :: else -> skip
    fi
  }
  for (s_n : 1 .. NODES) {
    if
    :: BIT(s_feasible, s_n) ->
       s_score[s_n] = s_score[s_n] + {{ ir.scoring.taint }} * (s_max == 0 -> 100 : 100 - taint_raw[s_t * (MAX_NODES + 1) + s_n] * 100 / s_max)
    :: else -> skip
    fi
  }
  /* NodeAffinity (weight 2): preferred terms' weights, normalised to 100. */
  s_max = 0;
  for (s_n : 1 .. NODES) {
    if
    :: BIT(s_feasible, s_n) && affinity_raw[s_t * (MAX_NODES + 1) + s_n] > s_max -> s_max = affinity_raw[s_t * (MAX_NODES + 1) + s_n]
    :: else -> skip
    fi
  }
  if
  :: s_max > 0 ->
     for (s_n : 1 .. NODES) {
       if
       :: BIT(s_feasible, s_n) -> s_score[s_n] = s_score[s_n] + {{ ir.scoring.affinity }} * (affinity_raw[s_t * (MAX_NODES + 1) + s_n] * 100 / s_max)
       :: else -> skip
       fi
     }
  :: else -> skip
  fi;
  /* PodTopologySpread (weight 2), ScheduleAnyway constraints: fewer matching pods is better
     (podtopologyspread/scoring.go). raw = round(sum of count x ln(size + 2) + (maxSkew - 1)),
     size: the candidate nodes' domains (for the hostname key, the candidate nodes); nodes
     lacking a key are ignored when the pod has its own constraints (score 0). */
  if
  :: template_soft_count[s_t] > 0 ->
     s_ignored = 0;
     for (s_n : 1 .. NODES) { s_raw[s_n] = 0 }
     for (s_k : 0 .. template_soft_count[s_t] - 1) {
       s_c = template_soft_first[s_t] + s_k;
       for (s_n : 1 .. NODES) {
         if
         :: BIT(s_feasible, s_n) && DOMAIN(s_c, s_n) == 0 && template_require_all[s_t] -> s_ignored = s_ignored | (1 << s_n)
         :: else -> skip
         fi
       }
     }
     for (s_k : 0 .. template_soft_count[s_t] - 1) {
       s_c = template_soft_first[s_t] + s_k;
       count_domains(s_c, pod[p].rev);
       s_size = 0;
       for (s_d : 0 .. MAX_DOMAIN) { s_seen[s_d] = 0 }
       for (s_n : 1 .. NODES) {
         if
         :: BIT(s_feasible, s_n) && !BIT(s_ignored, s_n) && (constraint_hostname[s_c] || !s_seen[DOMAIN(s_c, s_n)]) ->
            s_size++; s_seen[DOMAIN(s_c, s_n)] = 1
         :: else -> skip
         fi
       }
       for (s_n : 1 .. NODES) {
         if
         :: BIT(s_feasible, s_n) && DOMAIN(s_c, s_n) > 0 ->
            s_raw[s_n] = s_raw[s_n] + s_count[DOMAIN(s_c, s_n)] * ln_weight[s_size] + (constraint_skew[s_c] - 1) * 1000
         :: else -> skip
         fi
       }
     }
     s_max = -1; s_min = -1;
     for (s_n : 1 .. NODES) {
       if
       :: BIT(s_feasible, s_n) && !BIT(s_ignored, s_n) ->
          s_raw[s_n] = (s_raw[s_n] + 500) / 1000;
          if
          :: s_max < 0 || s_raw[s_n] > s_max -> s_max = s_raw[s_n]
          :: else -> skip
          fi;
          if
          :: s_min < 0 || s_raw[s_n] < s_min -> s_min = s_raw[s_n]
          :: else -> skip
          fi
       :: else -> skip
       fi
     }
     for (s_n : 1 .. NODES) {
       if
       :: BIT(s_feasible, s_n) && !BIT(s_ignored, s_n) ->
          s_score[s_n] = s_score[s_n] + {{ ir.scoring.spread }} * (s_max == 0 -> 100 : 100 * (s_max + s_min - s_raw[s_n]) / s_max)
       :: else -> skip
       fi
     }
  :: else -> skip
  fi
}

{% if ir.probe == "scheduler" %}{% include "probes/scheduler.pml" %}{% endif %}
proctype Scheduler() {
  byte p;
  int top;
end_scheduler:
  do
  :: atomic {
       to_schedule > 0 ->
       d_step {
         p = 1;
         do
         :: pod[p].status == PENDING && !pod[p].unschedulable -> break
         :: else -> p++
         od;
         s_t = slot_template[p];
         node_usage();
         /* Filters. */
         s_feasible = 0; s_static_fail = 0; s_resource_fail = 0; s_volume_fail = 0; s_spread_fail = 0; s_spread_nodes = 0; s_not_ready = 0; s_cordoned = 0;
         s_template = 0; s_ca = 0;
         for (s_n : 1 .. NODES) {
           if
{% if ir.cluster_autoscaler %}
           :: absent[s_n] ->
              /* cluster-autoscaler's template node of a pool that may grow: the pod is tried on
                 it as on an empty node, through every filter */
              if
              :: node_zone[s_n] == 0 && pool_nodes[node_pool[s_n]] < pool_max[node_pool[s_n]] && slot_node[p] == 0 && BIT(template_static_nodes[s_t], s_n) && node_pod_cap[s_n] >= 1 && !CPU_SHORT(s_t, s_n) && !MEM_SHORT(s_t, s_n) && !SCALAR_SHORT(s_t, s_n) ->
                 s_feasible = s_feasible | (1 << s_n); s_template = s_template | (1 << s_n)
              :: else -> skip
              fi
{% endif %}
           :: !node_ready[s_n] -> s_not_ready++
           :: CORDONED_FOR(s_t, s_n) -> s_cordoned++
           :: !BIT(template_static_nodes[s_t], s_n) || (slot_node[p] > 0 && slot_node[p] != s_n) -> s_static_fail++
           :: else ->
              if
              :: s_pods[s_n] + 1 > node_pod_cap[s_n] || CPU_SHORT(s_t, s_n) || MEM_SHORT(s_t, s_n) || SCALAR_SHORT(s_t, s_n) -> s_resource_fail++
{% if ir.volumes %}
              :: VOLUME_CONFLICT(p, s_n) -> s_volume_fail++
{% endif %}
              :: else -> s_feasible = s_feasible | (1 << s_n)
              fi
           fi
         }
         /* InterPodAffinity filter, required terms; terminating pods still count. */
         s_affinity_fail = 0; s_affinity_nodes = 0;
         if
         :: template_term_count[s_t] > 0 ->
            for (s_k : 0 .. template_term_count[s_t] - 1) {
              s_c = template_term_first[s_t] + s_k;
              for (s_d : 0 .. MAX_DOMAIN) { s_count[s_d] = 0 }
              s_x = 0;
              for (s_q : 1 .. PODS) {
                if
                :: HOLDS_RESOURCES(s_q) && BIT(term_counts[s_c], slot_template[s_q]) ->
                   s_x++; s_count[TERM_DOMAIN(s_c, pod[s_q].node)]++
                :: else -> skip
                fi
              }
{% if ir.stale_reads %}
              for (s_k2 : 1 .. STALE_LAG) {
                if
                :: PHANTOM_HOLDS(s_k2) && BIT(term_counts[s_c], slot_template[phantom[s_k2]]) ->
                   s_x++; s_count[TERM_DOMAIN(s_c, phantom_node[s_k2])]++
                :: else -> skip
                fi
              }
{% endif %}
              for (s_n : 1 .. NODES) {
                if
                :: BIT(s_feasible, s_n) && AFFINITY_BROKEN(s_c, s_n) ->
                   s_feasible = s_feasible & ~(1 << s_n);
                   s_affinity_fail = s_affinity_fail | (1 << s_k);
                   s_affinity_nodes++
                :: else -> skip
                fi
              }
            }
         :: else -> skip
         fi;
         /* PodTopologySpread filter, constraint by constraint. */
         if
         :: template_hard_count[s_t] > 0 ->
            for (s_k : 0 .. template_hard_count[s_t] - 1) {
              s_c = template_hard_first[s_t] + s_k;
              count_domains(s_c, pod[p].rev);
              s_min = -1; s_domains = 0;
              for (s_d : 1 .. MAX_DOMAIN) {
                if
                :: s_present[s_d] ->
                   s_domains++;
                   if
                   :: s_min < 0 || s_count[s_d] < s_min -> s_min = s_count[s_d]
                   :: else -> skip
                   fi
                :: else -> skip
                fi
              }
              if
              :: s_domains < constraint_min_domains[s_c] -> s_min = 0
              :: else -> skip
              fi;
              for (s_n : 1 .. NODES) {
                if
                :: BIT(s_feasible, s_n) && SKEW_BROKEN(s_c, s_n) ->
                   s_feasible = s_feasible & ~(1 << s_n);
                   s_spread_fail = s_spread_fail | (1 << s_k);
                   s_spread_nodes++
                :: else -> skip
                fi
              }
            }
         :: else -> skip
         fi;
{% if ir.cluster_autoscaler %}
         s_ca = (template_node_name[s_t] > 0 -> 0 : s_feasible & s_template);
         s_feasible = s_feasible & ~s_template;
{% endif %}
         if
         :: template_node_name[s_t] > 0 ->
            /* spec.nodeName: no scheduling; the pod goes to that node when it is there and ready. */
            top = (template_node_name[s_t] <= NODES && node_ready[template_node_name[s_t]] -> 1 << template_node_name[s_t] : 0)
         :: template_node_name[s_t] == 0 && s_feasible != 0 ->
            score_nodes(p);
            s_max = -1;
            for (s_n : 1 .. NODES) {
              if
              :: BIT(s_feasible, s_n) && s_score[s_n] > s_max -> s_max = s_score[s_n]
              :: else -> skip
              fi
            }
            top = 0;
            for (s_n : 1 .. NODES) {
              if
              :: BIT(s_feasible, s_n) && s_score[s_n] == s_max -> top = top | (1 << s_n)
              :: else -> skip
              fi
            }
         :: else -> top = 0
         fi{% if ir.probe == "scheduler" %};
         probe_scheduling_cycle(p){% endif %}

       }
       if
       :: top == 0 ->
          d_step {
            pod[p].unschedulable = 1; to_schedule--; unschedulable++;
            printf("KIVI:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d\n", EVENT_POD_UNSCHEDULABLE, p, s_static_fail, s_resource_fail, s_spread_nodes, s_spread_fail, s_not_ready, template_node_name[s_t], s_affinity_nodes, s_affinity_fail, s_cordoned, s_volume_fail)
{% if ir.cluster_autoscaler %}
            ;
            for (s_n : 1 .. NODES) {
              if
              :: BIT(s_ca, s_n) -> scale_up_wanted = scale_up_wanted | (1 << node_pool[s_n])
              :: else -> skip
              fi
            }
            /* no scale-up for this pod: say why (s_x: a scaled pool below its max) */
            s_x = 0;
            for (s_n : 1 .. SCALING_POOLS) {
              if
              :: pool_nodes[s_n] < pool_max[s_n] -> s_x = s_n
              :: else -> skip
              fi
            }
            if
            :: s_ca == 0 && template_node_name[s_t] == 0 -> printf("KIVI:%d:%d:%d\n", EVENT_SCALE_UP_WANTED, p, s_x)
            :: else -> skip
            fi
{% endif %}
          }
{% for n in range(1, shape.max_nodes + 1) %}
       :: BIT(top, {{ n }}) ->
          d_step {
            pod[p].status = BOUND; pod[p].node = {{ n }}; to_schedule--; kubelet_work++; printf("KIVI:%d:%d:{{ n }}\n", EVENT_POD_BOUND, p);
{% if ir.volumes %}
            /* WaitForFirstConsumer: the volume is made in the zone of the node the pod is bound to. */
            if
            :: claim_of_slot[p] > 0 && vol_zone[claim_of_slot[p]] == 0 && !claim_fixed[claim_of_slot[p]] && node_volume_zone[{{ n }}] > 0 ->
               vol_zone[claim_of_slot[p]] = node_volume_zone[{{ n }}];
               printf("KIVI:%d:%d:%d\n", EVENT_VOLUME_PROVISIONED_WITH_POD, p, node_volume_zone[{{ n }}])
            :: else -> skip
            fi;
{% endif %}
            if
            :: unschedulable > 0 -> retry_after_pod_add()
            :: else -> skip
            fi
          }
{% endfor %}
       fi;
       p = 0;
       top = 0;
       canonical()
     }
  od
}

/*
 * kivi-lint model of one verification unit, generated from templates/ — do not edit.
 * Everything here is an integer: nodes, workloads, templates and pods are indices, and what
 * depends only on the manifests (labels, selectors, taints, affinity) was evaluated before.
 *
 * Semantics ("big-step", as in Kivi): one controller step is one indivisible transition; the
 * controllers and the environment interleave between steps. There is no clock in the state:
 * periodic behaviour is modelled by what may happen next, so the state graph is finite.
 */
/*
 * One compiled model serves every topology of the unit: arrays are sized for the largest
 * (MAX_NODES, MAX_PODS) and `init` reads the topology's nodes, pods and tables at run time
 * (kivi_read_input below), so the loops run to the topology's own NODES and PODS.
 */
#define MAX_NODES {{ shape.max_nodes }}
#define MAX_PODS {{ shape.max_pods }}
hidden byte node_count;
hidden byte pod_count;
#define NODES node_count
#define PODS pod_count
#define WORKLOADS {{ ir.workloads|length }}
#define TEMPLATES {{ ir.templates|length }}
#define CONSTRAINTS {{ constraint_count }}
#define AFFINITY_TERMS {{ term_count }}
#define MAX_DOMAIN {{ shape.max_domain }}
#define BUDGETS {{ ir.disruption_budgets|length }}
{% for d in param_defines %}#define {{ d.name }} {{ d.value }}   /* {{ d.check }}: {{ d.description }} */
{% endfor %}#define CHECKS {{ check_names|length }}
{% if simulation %}#define SIMULATION_ROUNDS {{ simulation.rounds }}   /* kivi-lint simulate: the environment's steps before the run may end */
byte environment_acted;
bit simulation_done;             /* the run's end: the environment acts no more */
{% if simulation.scenario %}/* A scenario: the events' first steps in its order (THIS_EVENT, THIS_BUSY: the event whose
   template this is, and whether it is under way, around each event's template). */
#define SCENARIO_STEPS {{ simulation.scenario|length }}
#define SCENARIO_KIND(i) ({% for k in simulation.scenario %}(i) == {{ loop.index0 }} -> {{ k }} : ({% endfor %}0{% for k in simulation.scenario %}){% endfor %})
#define SCENARIO_TURN(k) (scenario_at < SCENARIO_STEPS && SCENARIO_KIND(scenario_at) == (k))
byte scenario_at;                /* the scenario's next step */
bit scenario_under_way[{{ event_proctypes|length + 1 }}];
#define SIMULATION_MAY_ACT (!simulation_done && (THIS_BUSY || SCENARIO_TURN(THIS_EVENT)))
#define ENVIRONMENT_ACTED if :: !scenario_under_way[THIS_EVENT] && SCENARIO_TURN(THIS_EVENT) -> scenario_at++ :: else -> skip fi; scenario_under_way[THIS_EVENT] = THIS_BUSY
#define SIMULATION_STEPS_DONE (scenario_at >= SCENARIO_STEPS)
{% else %}#define SIMULATION_MAY_ACT (!simulation_done)
#define ENVIRONMENT_ACTED if :: environment_acted < 255 -> environment_acted++ :: else -> skip fi
#define SIMULATION_STEPS_DONE (environment_acted >= SIMULATION_ROUNDS)
{% endif %}{% endif %}/* Trace events: each step a counterexample tells prints KIVI:<event>:<values> (src/model/trace.rs). */
{{ trace_defines }}
#define SCALING_POOLS {{ (ir.cluster_autoscaler.pools|length) if ir.cluster_autoscaler else 1 }}

/* Pod phases. */
#define FREE 0          /* an unused slot */
#define PENDING 1       /* created, not bound to a node */
#define BOUND 2         /* bound, not started by the kubelet yet */
#define RUNNING 3
#define TERMINATING 4   /* deleted; still holds its node's resources until the kubelet is done */
#define UNREACHABLE 5   /* on a failed node: not ready, still counted by its ReplicaSet */
#define GONE 6          /* deleted while its node is down: removed once the node is back */

/* A pod's fields share one word, its phase and node in the first byte (up to 7 nodes): a
   pod that starts, moves or stops changes one byte of the state, which the engine's packing
   of stored states (src/engine/pack_state.c) then stores alone. */
#if MAX_NODES < 8
#define NODE_BITS 3
#elif MAX_NODES < 16
#define NODE_BITS 4
#elif MAX_NODES < 32
#define NODE_BITS 5
#elif MAX_NODES < 64
#define NODE_BITS 6
#elif MAX_NODES < 128
#define NODE_BITS 7
#else
#define NODE_BITS 8
#endif
typedef Pod {
  unsigned status : 3;
  unsigned node : NODE_BITS;
  unsigned unschedulable : 1;  /* the scheduler found no node; retried when the cluster changes */
  unsigned warm : 1;           /* past its startup phase (workloads with a startup usage) */
  unsigned rev : 1;            /* 1: created from the new revision of its template */
}
Pod pod[MAX_PODS + 1];

bit node_ready[MAX_NODES + 1];
/* The state of an event or controller the unit does not have never changes: `hidden` keeps it
   out of the state vector (a third of it on a unit with no node events). */
{% set maintenance = "" if ir.node_maintenance else "hidden " %}{% set overload = "" if ir.overload_threshold else "hidden " %}{% set drain = "" if ir.node_drain else "hidden " %}{% set cordon = "" if ir.node_drain or ir.cluster_autoscaler else "hidden " %}{% set failure = "" if ir.node_failure else "hidden " %}
{{ maintenance }}byte maintained[MAX_NODES + 1];  /* node-maintenance: this node had its turn */
{{ maintenance }}byte in_maintenance;         /* the node down for maintenance, 0 for none */
{{ overload }}byte restarting;             /* node-overload: the crashed node restarting, 0 for none */
{{ overload }}byte overloads[MAX_NODES + 1];   /* node-overload: crashes per node (counted up to 2) */
{{ cordon }}byte cordoned[MAX_NODES + 1];    /* spec.unschedulable: input, node-drain, cluster-autoscaler */
{{ drain }}byte draining;               /* node-drain: the node being drained, 0 for none */
{{ failure }}byte nodes_down;             /* node-failure: failed nodes that will come back */
{{ failure }}byte lost_work;              /* node-failure: pods on failed nodes the taint eviction will delete */

short spec[WORKLOADS + 1];      /* desired replicas (spec.replicas, written by the HPA) */
byte running[WORKLOADS + 1];    /* RUNNING pods (available replicas) */
bit min_reached[WORKLOADS + 1];     /* min-replicas-available: the bound was reached once */
bit evicted[WORKLOADS + 1];     /* no-eviction-loop: a controller evicted a pod of it */
byte loops[WORKLOADS + 1];      /* no-eviction-loop: evict/recreate alternations so far */
bit at_max[WORKLOADS + 1];      /* no-replica-oscillation: the HPA reached maxReplicas, no load change since */
/* The HPA's logs (controllers/autoscaler_normalization.pml): recommendations and scale events,
   oldest first, each with its age class. */
#define HPA_LOG {{ shape.hpa_log }}
#define HPA_POLICIES {{ shape.hpa_policies }}
short hpa_rec[(WORKLOADS + 1) * HPA_LOG];
byte hpa_rec_age[(WORKLOADS + 1) * HPA_LOG];
byte hpa_rec_len[WORKLOADS + 1];
{% set events = "" if shape.hpa_events else "hidden " %}{{ events }}short hpa_event[(WORKLOADS + 1) * 2 * HPA_LOG];
{{ events }}byte hpa_event_age[(WORKLOADS + 1) * 2 * HPA_LOG];
{{ events }}byte hpa_event_outdated[(WORKLOADS + 1) * 2 * HPA_LOG];
{{ events }}byte hpa_event_len[(WORKLOADS + 1) * 2];
bit hpa_held[WORKLOADS + 1];    /* the HPA's logs held its last decision back */
byte hpa_held_count;
short rs_spec[(WORKLOADS + 1) * 2];  /* spec.replicas of each workload's old (0) and new (1) ReplicaSet */
bit rolled[WORKLOADS + 1];      /* a new revision was applied */
bit rollout_done[WORKLOADS + 1];
byte load[WORKLOADS + 1];       /* usage level of the workload's pods (index into its levels) */
bit dc_dirty[WORKLOADS + 1];    /* the deployment controller has work for this workload */
bit hpa_dirty[WORKLOADS + 1];   /* the autoscaler should look at this workload again */

/* Counters that gate the controllers (kept exact by every transition). */
byte to_schedule;               /* PENDING pods not marked unschedulable */
byte unschedulable;             /* PENDING pods marked unschedulable */
byte kubelet_work;              /* BOUND or TERMINATING pods */
byte dc_work;                   /* workloads with dc_dirty */
byte hpa_work;                  /* workloads with hpa_dirty */
byte taint_work;                /* RUNNING pods on nodes with a NoExecute taint they do not tolerate */

{% if ir.cluster_autoscaler %}
/* cluster-autoscaler: nodes that do not exist (yet, or any more), nodes per scaled pool, the
   pools a scale-up would help (bit k), the node being deleted. */
bit absent[MAX_NODES + 1];
byte pool_nodes[SCALING_POOLS + 1];
int scale_up_wanted;
byte ca_removing;
#define CONTROLLERS_IDLE_VIEW (to_schedule == 0 && kubelet_work == 0 && dc_work == 0 && taint_work == 0 && scale_up_wanted == 0 && ca_removing == 0)
{% else %}
hidden byte absent[MAX_NODES + 1];
hidden byte pool_nodes[SCALING_POOLS + 1];
#define CONTROLLERS_IDLE_VIEW (to_schedule == 0 && kubelet_work == 0 && dc_work == 0 && taint_work == 0)
{% endif %}
{% if ir.stale_reads %}
/*
 * stale-reads: the informers of the scheduler and the descheduler have not yet delivered the
 * last STALE_LAG deletions of running pods. Those pods still look running on their node to
 * them (resources, spread counts, inter-pod affinity). A newer deletion pushes the oldest
 * out (it is seen by then); the informer may deliver the oldest at any moment.
 */
#define STALE_LAG {{ ir.stale_reads }}
byte phantom[STALE_LAG + 1];        /* the pod's slot, 0 for none; 1 is the newest */
byte phantom_node[STALE_LAG + 1];
bit phantom_rev[STALE_LAG + 1];
#define INFORMERS_CAUGHT_UP (phantom[1] == 0)
/* the phantom k is not the slot's current pod on the same node (which counts by itself) */
#define PHANTOM_HOLDS(k) (phantom[k] > 0 && !(pod[phantom[k]].status >= BOUND && pod[phantom[k]].node == phantom_node[k]))
#define PHANTOM_COUNTED(k) (phantom[k] > 0 && !((pod[phantom[k]].status == BOUND || pod[phantom[k]].status == RUNNING || pod[phantom[k]].status == UNREACHABLE) && pod[phantom[k]].node == phantom_node[k]))
hidden int ph_k;
inline stale_deletion(q) {
{% if ir.stale_reads > 1 %}
  for (ph_k : 1 .. STALE_LAG - 1) {
    phantom[STALE_LAG + 1 - ph_k] = phantom[STALE_LAG - ph_k];
    phantom_node[STALE_LAG + 1 - ph_k] = phantom_node[STALE_LAG - ph_k];
    phantom_rev[STALE_LAG + 1 - ph_k] = phantom_rev[STALE_LAG - ph_k]
  }
{% endif %}
  phantom[1] = q; phantom_node[1] = pod[q].node; phantom_rev[1] = pod[q].rev;
  printf("KIVI:%d:%d:%d\n", EVENT_STALE_DELETION, q, pod[q].node)
}
{% else %}
#define INFORMERS_CAUGHT_UP 1
{% endif %}
#define CONTROLLERS_IDLE (CONTROLLERS_IDLE_VIEW && INFORMERS_CAUGHT_UP)
/* No controller has work but for informers catching up (the descheduler acts on its view). */
#define QUIESCENT_VIEW (CONTROLLERS_IDLE_VIEW && hpa_work == 0)

/* No environment change is under way that will undo itself (a node coming back). */
#define ENVIRONMENT_SETTLED (in_maintenance == 0 && restarting == 0 && nodes_down == 0 && lost_work == 0 && draining == 0)
#define QUIESCENT (CONTROLLERS_IDLE && hpa_work == 0)

/* Read-only tables, filled once by init (hidden: not part of the state vector). */
hidden int node_cpu[MAX_NODES + 1];
hidden int node_mem[MAX_NODES + 1];
hidden int node_pod_cap[MAX_NODES + 1];
hidden byte slot_template[MAX_PODS + 1];
hidden byte slot_node[MAX_PODS + 1];
hidden byte workload_stateful[WORKLOADS + 1];  /* StatefulSets: 1 OrderedReady, 2 Parallel */
hidden byte rollout_partition[WORKLOADS + 1];  /* StatefulSet RollingUpdate partition */          /* DaemonSet pods: the node each slot belongs to */
hidden byte template_workload[TEMPLATES + 1];
hidden byte template_node_name[TEMPLATES + 1];    /* spec.nodeName: node index, 255 = no such node */
hidden int template_no_execute[TEMPLATES + 1];    /* nodes whose NoExecute taints it does not tolerate */
hidden byte min_available[WORKLOADS + 1];
hidden byte min_resettable[WORKLOADS + 1];     /* min-replicas-available: the bound is not a `min` param */
hidden byte template_tolerates_cordon[TEMPLATES + 1];
hidden byte template_failure_eviction[TEMPLATES + 1];  /* evicted from a failed node (no toleration forever) */
hidden byte template_daemon[TEMPLATES + 1];    /* DaemonSet pods: kubectl drain leaves them */
hidden int budget_workloads[BUDGETS + 1];      /* PodDisruptionBudget: workloads it selects (bit w) */
hidden byte budget_max_unavailable[BUDGETS + 1];  /* 1: maxUnavailable, 0: minAvailable */
hidden short budget_value[BUDGETS + 1];        /* a count, or a percentage negated */
hidden byte budget_always_allow[BUDGETS + 1];  /* unhealthyPodEvictionPolicy: AlwaysAllow */
hidden int template_cpu[TEMPLATES + 1];
hidden int template_mem[TEMPLATES + 1];
hidden int template_score_cpu[TEMPLATES + 1];   /* NodeResourcesFit scoring: missing requests count 100m, 200 MiB */
hidden int template_score_mem[TEMPLATES + 1];
hidden int template_static_nodes[TEMPLATES + 1];
hidden byte template_hard_first[TEMPLATES + 1];
hidden byte template_hard_count[TEMPLATES + 1];
hidden byte template_soft_first[TEMPLATES + 1];
hidden byte template_soft_count[TEMPLATES + 1];
hidden byte template_require_all[TEMPLATES + 1];  /* the pod has its own spread constraints */
hidden short affinity_raw[(TEMPLATES + 1) * (MAX_NODES + 1)];
hidden short taint_raw[(TEMPLATES + 1) * (MAX_NODES + 1)];
hidden byte constraint_skew[CONSTRAINTS + 1];
hidden byte constraint_min_domains[CONSTRAINTS + 1];
hidden byte constraint_domain_count[CONSTRAINTS + 1];
hidden int constraint_included[CONSTRAINTS + 1];
hidden int constraint_counts[CONSTRAINTS + 1];   /* bitmask over templates */
hidden byte constraint_self[CONSTRAINTS + 1];
hidden byte constraint_same_revision[CONSTRAINTS + 1];  /* matchLabelKeys: pod-template-hash */
hidden byte constraint_honor_taints[CONSTRAINTS + 1];   /* nodeTaintsPolicy: Honor */
hidden byte constraint_hostname[CONSTRAINTS + 1];  /* the key is the node hostname label */
hidden short ln_weight[MAX_NODES + 1];          /* ln(size + 2) x 1000 */
/* Scalar resources (ephemeral storage, hugepages, extended), resource k at k * (MAX_NODES + 1) + n
   and k * (TEMPLATES + 1) + t. */
#define SCALARS {{ ir.scalar_resources }}
hidden int node_scalar[{{ [ir.scalar_resources, 1]|max }} * (MAX_NODES + 1)];
hidden int template_scalar[{{ [ir.scalar_resources, 1]|max }} * (TEMPLATES + 1)];
hidden byte constraint_domain[(CONSTRAINTS + 1) * (MAX_NODES + 1)];
hidden byte template_term_first[TEMPLATES + 1];
hidden byte template_term_count[TEMPLATES + 1];
hidden byte term_anti[AFFINITY_TERMS + 1];
hidden byte term_self[AFFINITY_TERMS + 1];
hidden int term_counts[AFFINITY_TERMS + 1];       /* bitmask over templates */
hidden byte term_domain[(AFFINITY_TERMS + 1) * (MAX_NODES + 1)];
hidden byte workload_first_slot[WORKLOADS + 1];
hidden byte workload_slots[WORKLOADS + 1];
hidden byte workload_template[WORKLOADS + 1];
hidden short workload_level_count[WORKLOADS + 1];
hidden short workload_base[WORKLOADS + 1];   /* replicas that share the load at its levels */
hidden short workload_startup[WORKLOADS + 1];  /* usage in the startup phase, percent of the request; 0: none */
hidden byte workload_startup_unready[WORKLOADS + 1];  /* pods are not ready during the startup phase */
hidden byte hpa_behavior[WORKLOADS + 1];        /* spec.behavior is set */
/* Its rules per direction (up 0, down 1), durations as age classes (autoscaler_normalization.pml). */
hidden byte hpa_select[(WORKLOADS + 1) * 2];
hidden byte hpa_window[(WORKLOADS + 1) * 2];
hidden byte hpa_longest[(WORKLOADS + 1) * 2];
hidden byte hpa_policy[(WORKLOADS + 1) * 2 * HPA_POLICIES];
hidden int hpa_policy_value[(WORKLOADS + 1) * 2 * HPA_POLICIES];
hidden byte hpa_policy_period[(WORKLOADS + 1) * 2 * HPA_POLICIES];
hidden byte hpa_sync_age[WORKLOADS + 1];       /* the class of an entry one sync period (15 s) old */
hidden byte hpa_rec_expiry[WORKLOADS + 1];     /* from this class a recommendation is in no window */
hidden byte hpa_event_expiry[WORKLOADS + 1];   /* from this class an event is in no period */
hidden byte rollout_kind[WORKLOADS + 1];       /* 0: none, 1: RollingUpdate, 2: Recreate, 3: StatefulSet RollingUpdate */
hidden byte workload_bare[WORKLOADS + 1];      /* a bare Pod: nothing replaces it once it is gone */
hidden byte workload_batch[WORKLOADS + 1];     /* pods that run to completion: no check judges them */
/* Volumes (src/controllers/scheduler/volumes.rs): each claim, by the slot that names it, and the zone its volume
   is in once it has one. An Immediate claim gets its zone at the start; a WaitForFirstConsumer
   one where its first pod is bound. */
{% if ir.volumes %}byte vol_zone[MAX_PODS + 1];{% else %}hidden byte vol_zone[MAX_PODS + 1];{% endif %}

hidden byte i_claim, i_zone;
hidden byte node_volume_zone[MAX_NODES + 1];  /* the node's zone among the volumes' zones, 0 for none */
hidden byte claim_of_slot[MAX_PODS + 1];      /* the slot's claim (a slot), 0 for none */
hidden int claim_nodes[MAX_PODS + 1];         /* nodes a claim without a zone yet may be bound for */
hidden byte claim_fixed[MAX_PODS + 1];        /* bound or Immediate: the scheduler never binds it */
hidden int claim_choices[MAX_PODS + 1];       /* Immediate: the zones the provisioner may pick */
/* VolumeBinding filter: the node is not where the pod's volume is, or may be made. */
#define VOLUME_CONFLICT(p, n) (claim_of_slot[p] > 0 && (vol_zone[claim_of_slot[p]] > 0 -> node_volume_zone[n] != vol_zone[claim_of_slot[p]] : !BIT(claim_nodes[claim_of_slot[p]], n)))
/* Pending pods marked unschedulable that a check judges: batch pods (Jobs, CronJobs) only take room. */
#define JUDGED_UNSCHEDULABLE (unschedulable{% for w in ir.workloads %}{% if w.batch %}{% for k in range(w.slots) %} - pod[{{ w.first_slot + k }}].unschedulable{% endfor %}{% endif %}{% endfor %})
hidden byte workload_symmetric[WORKLOADS + 1]; /* its pods are interchangeable (see canonical below) */
hidden byte node_class[MAX_NODES + 1];       /* nodes of one class are interchangeable; 0: none */
hidden byte class_group[MAX_NODES + 1];      /* per class: classes that trade all their nodes at once; 0: none */
hidden short rollout_surge[WORKLOADS + 1];     /* a count, or a percentage negated */
hidden short rollout_unavailable[WORKLOADS + 1];
hidden short workload_level[(WORKLOADS + 1) * 8];   /* percent of the request, per level */
hidden byte workload_autoscaled[WORKLOADS + 1];
hidden short hpa_min[WORKLOADS + 1];
hidden short hpa_max[WORKLOADS + 1];
hidden short hpa_target[WORKLOADS + 1];        /* cpu utilisation target; 100 without a cpu metric */
hidden byte hpa_metrics[WORKLOADS + 1];        /* metric kinds: 1 cpu, 2 Pods, 4 Object/External Value, 8 AverageValue, 16 memory */
hidden int hpa_memory_target[WORKLOADS + 1];   /* a memory metric's utilisation target, percent */
hidden short workload_manifest_replicas[WORKLOADS + 1];  /* gitops-sync: spec.replicas in Git, -1 for none */
hidden short apply_replicas[WORKLOADS + 1];    /* apply: spec.replicas after the merge, -1 to leave */
hidden byte failures_max;                      /* node-failure: nodes that may fail */
hidden int ds_taint_bad[TEMPLATES + 1];     /* descheduler: nodes whose taints the template's pods violate */
hidden int ds_affinity_bad[TEMPLATES + 1];  /* descheduler: nodes that fail the template's required node affinity */
hidden int ds_pods_allocatable[MAX_NODES + 1];
hidden int constraint_policy_nodes[CONSTRAINTS + 1];  /* nodes the inclusion policies alone admit */
hidden int ds_fit_nodes[TEMPLATES + 1];     /* descheduler NodeFit: nodes the template's selector, affinity and taints accept */
hidden int ds_dup_keys[TEMPLATES + 1];      /* RemoveDuplicates: owner keys of the template's pods (bit k) */
hidden byte ds_dup_list[TEMPLATES + 1];     /* ... their whole key list; equal lists are duplicates */
hidden byte ds_rank[TEMPLATES + 1];         /* topology spread: place in a domain's eviction order */
hidden byte check_on[CHECKS + 1];              /* the checks this run monitors */
/* --all: the workloads whose violation of a check is already reported, so that its monitor
   looks for another (THIS_CHECK: the monitor's check, defined around its template). */
hidden byte check_spared[(CHECKS + 1) * (WORKLOADS + 1)];
#define JUDGES(w) (check_spared[THIS_CHECK * (WORKLOADS + 1) + (w)] == 0)
/* The bookkeeping of a check (min_reached, evicted and loops, at_max) changes only in runs that
   monitor it: in the others it would tell apart states that are otherwise the same (5.7 times
   as many on a unit with an autoscaler, a descheduler and a rollout). */
{% for b in bookkeeping %}#define {{ b.name }} ({% for i in b.runs %}check_on[{{ i }}] || {% endfor %}0)
{% endfor %}hidden byte node_pool[MAX_NODES + 1];          /* cluster-autoscaler: the node's scaled pool, 0 for none */
hidden byte node_zone[MAX_NODES + 1];          /* ... its zone among the pool's zones */
hidden byte pool_min[SCALING_POOLS + 1];
hidden byte pool_max[SCALING_POOLS + 1];
hidden byte pool_zones[SCALING_POOLS + 1];

#define BIT(mask, i) (((mask) >> (i)) & 1)

/*
 * Symmetry reduction. The pods of a Deployment, ReplicaSet or ReplicationController are
 * interchangeable: same template, no ordinal, no pinned node; Kubernetes tells them apart only
 * by random name suffixes. Nodes are interchangeable when every table gives them the same
 * values (node_class, computed by kivi-lint: same allocatable, labels that matter, taints).
 * Two states that differ by such a permutation behave alike, so after every step the nodes of
 * each class are sorted by what they hold, then the pods of each workload by their state, and
 * SPIN stores one state per equivalence class instead of one per order (with 20 replicas, the
 * difference between thousands and millions of states). Whole classes trade places too when
 * kivi-lint finds them alike but for the names of their spread domains (class_group: the
 * zones of a cluster whose pods spread over zones): they are sorted as blocks after their
 * nodes (src/model/symmetry.rs says when that holds). Controllers that take "the first" pod
 * or node of a kind take the one first in this order; as in Kubernetes, their choice among
 * equal ones is arbitrary. Each swap prints `KIVI:48:a:b` (pods) or `KIVI:49:a:b` (nodes) on
 * replay, so the trace follows each pod and node by name. Nothing is sorted while an informer
 * still holds a deleted pod's slot and node (stale-reads): that view refers to indices.
 */
c_code {
/* KIVI_PROFILE set: the moves of each proctype (a controller or an event) counted, and printed
   when pan exits, for `scripts/bench-scaling profile`. Static C, not part of the state. */
extern char *procname[];
static long kivi_moves[256];
static int kivi_profiling = -1;
static void kivi_profile_report(void) {
  int t;
  for (t = 0; t < 256; t++) {
    if (kivi_moves[t]) printf("kivi-profile: %s %ld\n", procname[t], kivi_moves[t]);
  }
}
static void kivi_profile_move(int t) {
  if (kivi_profiling < 0) {
    kivi_profiling = getenv("KIVI_PROFILE") != 0;
    if (kivi_profiling) atexit(kivi_profile_report);
  }
  if (kivi_profiling) kivi_moves[t & 255]++;
}
#define KIVI_SWAP(x, y) do { __typeof__(x) kivi_t = (x); (x) = (y); (y) = kivi_t; } while (0)
static int kivi_pod_key(int q) {
  return (((now.pod[q].status * 256 + now.pod[q].node) * 2 + now.pod[q].unschedulable) * 2
          + (1 - now.pod[q].warm)) * 2 + now.pod[q].rev;
}
/* A pod as its node's signature sees it: all but its slot and node. */
static int kivi_pod_code(int q) {
  return ((((int) template_workload[slot_template[q]] * 8 + now.pod[q].status) * 2
           + now.pod[q].unschedulable) * 2 + now.pod[q].warm) * 2 + now.pod[q].rev;
}
#define KIVI_NODE_FIELDS 11
static int kivi_sig[MAX_NODES + 1][KIVI_NODE_FIELDS + MAX_PODS + 1];
static int kivi_sig_len[MAX_NODES + 1];
/* What node n is, independent of its index: its state; its pods follow (kivi_node_pods). */
static void kivi_node_signature(int n) {
  int *s = kivi_sig[n], len = 0;
  s[len++] = now.node_ready[n];
  /* a hidden field is constant and equal within a class */
  s[len++] = {% if cordon %}0{% else %}now.cordoned[n]{% endif %};
  s[len++] = {% if maintenance %}0{% else %}now.maintained[n]{% endif %};
  s[len++] = {% if overload %}0{% else %}now.overloads[n]{% endif %};
  s[len++] = {% if maintenance %}0{% else %}(now.in_maintenance == n){% endif %};
  s[len++] = {% if overload %}0{% else %}(now.restarting == n){% endif %};
  s[len++] = {% if drain %}0{% else %}(now.draining == n){% endif %};
{% if ir.cluster_autoscaler %}  s[len++] = now.absent[n];
  s[len++] = (now.ca_removing == n);
{% else %}  s[len++] = 0; s[len++] = 0;
{% endif %}{% if ir.node_failure %}  s[len++] = now.failed_once[n];
{% else %}  s[len++] = 0;
{% endif %}{% if ir.node_drain %}  s[len++] = now.drained[n];
{% else %}  s[len++] = 0;
{% endif %}  kivi_sig_len[n] = len;
}
/* Each classed node's pods, appended to its signature in sorted order: one pass over the
   slots (this runs after every step, so it is most of pan's own time). */
static void kivi_node_pods(void) {
  int q, n, i, code, *s;
  for (q = 1; q <= PODS; q++) {
    n = now.pod[q].node;
    if (n == 0 || now.pod[q].status == FREE || !node_class[n]) continue;
    s = kivi_sig[n];
    code = kivi_pod_code(q);
    for (i = kivi_sig_len[n]; i > KIVI_NODE_FIELDS && s[i - 1] > code; i--) s[i] = s[i - 1];
    s[i] = code;
    kivi_sig_len[n]++;
  }
}
static int kivi_node_cmp(int a, int b) {
  int i;
  for (i = 0; i < kivi_sig_len[a] && i < kivi_sig_len[b]; i++) {
    if (kivi_sig[a][i] != kivi_sig[b][i]) return kivi_sig[a][i] < kivi_sig[b][i] ? -1 : 1;
  }
  return kivi_sig_len[a] - kivi_sig_len[b];
}
#define KIVI_REMAP(x, a, b) do { if ((x) == (a)) (x) = (b); else if ((x) == (b)) (x) = (a); } while (0)
static void kivi_swap_pods(int a, int b) {
  KIVI_SWAP(now.pod[a], now.pod[b]);
  Printf("KIVI:%d:%d:%d\n", EVENT_PODS_SWAPPED, a, b);
}
/* Nodes a and b trade places: their state, the pods on them, their DaemonSet pods' slots. */
static void kivi_swap_nodes(int a, int b) {
  int q, w, sa, sb;
  Printf("KIVI:%d:%d:%d\n", EVENT_NODES_SWAPPED, a, b);
  KIVI_SWAP(now.node_ready[a], now.node_ready[b]);
{% if not cordon %}  KIVI_SWAP(now.cordoned[a], now.cordoned[b]);
{% endif %}{% if not maintenance %}  KIVI_SWAP(now.maintained[a], now.maintained[b]);
  KIVI_REMAP(now.in_maintenance, a, b);
{% endif %}{% if not overload %}  KIVI_SWAP(now.overloads[a], now.overloads[b]);
  KIVI_REMAP(now.restarting, a, b);
{% endif %}{% if not drain %}  KIVI_REMAP(now.draining, a, b);
{% endif %}{% if ir.cluster_autoscaler %}  KIVI_SWAP(now.absent[a], now.absent[b]);
  KIVI_REMAP(now.ca_removing, a, b);
{% endif %}{% if ir.node_failure %}  KIVI_SWAP(now.failed_once[a], now.failed_once[b]);
{% endif %}{% if ir.node_drain %}  KIVI_SWAP(now.drained[a], now.drained[b]);
{% endif %}  for (q = 1; q <= PODS; q++) {
    if (now.pod[q].status != FREE) KIVI_REMAP(now.pod[q].node, a, b);
  }
  for (w = 1; w <= WORKLOADS; w++) {
    sa = 0; sb = 0;
    for (q = workload_first_slot[w]; q < workload_first_slot[w] + workload_slots[w]; q++) {
      if (slot_node[q] == a) sa = q;
      if (slot_node[q] == b) sb = q;
    }
    if (sa > 0 && sb > 0) kivi_swap_pods(sa, sb);
  }
  for (q = 0; q < kivi_sig_len[a] || q < kivi_sig_len[b]; q++) KIVI_SWAP(kivi_sig[a][q], kivi_sig[b][q]);
  KIVI_SWAP(kivi_sig_len[a], kivi_sig_len[b]);
}
/* The classes of each group (class_group), each class's nodes in index order: filled once. */
static int kivi_group_classes[MAX_NODES + 1][MAX_NODES + 1], kivi_group_size[MAX_NODES + 1];
static int kivi_class_nodes[MAX_NODES + 1][MAX_NODES + 1], kivi_class_size[MAX_NODES + 1];
static int kivi_groups = -1;
/* Two classes of a group compared by their nodes (each class sorted already), in order. */
static int kivi_class_cmp(int a, int b) {
  int i, c;
  for (i = 0; i < kivi_class_size[a]; i++) {
    c = kivi_node_cmp(kivi_class_nodes[a][i], kivi_class_nodes[b][i]);
    if (c != 0) return c;
  }
  return 0;
}
/* Whole classes of a group in order: insertion sort, a class trading all its nodes with the
   other's (the i-th with the i-th). Positions stay; contents move. */
static void kivi_sort_classes(void) {
  int g, k, n, i, j, x, a, b;
  if (kivi_groups < 0) {
    kivi_groups = 0;
    for (n = 1; n <= NODES; n++) {
      k = node_class[n];
      if (k) kivi_class_nodes[k][kivi_class_size[k]++] = n;
    }
    for (k = 1; k <= NODES; k++) {
      g = class_group[k];
      if (g) { kivi_group_classes[g][kivi_group_size[g]++] = k; if (g > kivi_groups) kivi_groups = g; }
    }
  }
  for (g = 1; g <= kivi_groups; g++) {
    for (i = 1; i < kivi_group_size[g]; i++) {
      for (j = i; j > 0; j--) {
        a = kivi_group_classes[g][j - 1];
        b = kivi_group_classes[g][j];
        if (kivi_class_cmp(a, b) <= 0) break;
        for (x = 0; x < kivi_class_size[a]; x++) kivi_swap_nodes(kivi_class_nodes[a][x], kivi_class_nodes[b][x]);
      }
    }
  }
}
void kivi_canonical(void) {
  int w, first, last, i, j, k, n, count, members[MAX_NODES + 1], key[MAX_PODS + 1], t, largest;
  /* The search for a shorter counterexample is bounded by steps (KIVI_STEP_BUDGET, which
     kivi-lint sets for that search only): the bound, and with it the trail it keeps, is the
     same on any machine. Past it, pan ends as a search that was not completed. */
  static long kivi_steps, kivi_budget = -1;
  if (kivi_budget < 0) { const char *b = getenv("KIVI_STEP_BUDGET"); kivi_budget = b ? atol(b) : 0; }
  if (kivi_budget > 0 && ++kivi_steps > kivi_budget) { printf("kivi: step budget reached\n"); wrapup(); }
  /* nodes, class by class: insertion sort of the class's members by signature */
  count = 0;
  for (n = 1; n <= NODES; n++) {
    if (node_class[n]) { kivi_node_signature(n); count++; }
  }
  if (count > 0) {
    kivi_node_pods();
    for (k = 1; k <= NODES; k++) {
      count = 0;
      for (n = 1; n <= NODES; n++) {
        if (node_class[n] == k) members[count++] = n;
      }
      for (i = 1; i < count; i++) {
        for (j = i; j > 0 && kivi_node_cmp(members[j - 1], members[j]) > 0; j--) {
          kivi_swap_nodes(members[j - 1], members[j]);
        }
      }
    }
    kivi_sort_classes();
  }
  /* pods, workload by workload: insertion sort, each pod's key computed once. The slots are
     nearly always in order already (one step changes a pod or two), so the common path
     compares each new key with the largest so far, kept in a register, and a pod out of
     order moves down with its key held the same way: reading keys back from key[] right
     after writing them stalled on every slot. */
  for (w = 1; w <= WORKLOADS; w++) {
    if (!workload_symmetric[w]) continue;
    first = workload_first_slot[w];
    last = first + workload_slots[w] - 1;
    if (last < first) continue;
    largest = key[first] = kivi_pod_key(first);
    for (i = first + 1; i <= last; i++) {
      t = kivi_pod_key(i);
      if (t >= largest) { key[i] = largest = t; continue; }
      /* the pod moves down past every larger one; their keys move up a slot */
      for (j = i; j > first && key[j - 1] > t; j--) {
        kivi_swap_pods(j - 1, j);
        key[j] = key[j - 1];
      }
      key[j] = t;
    }
  }
}
}
{% if ir.stale_reads %}
inline canonical() {
  if
  :: INFORMERS_CAUGHT_UP -> c_code { kivi_profile_move(((P0 *)_this)->_t); kivi_canonical(); }
  :: else -> c_code { kivi_profile_move(((P0 *)_this)->_t); }
  fi
}
{% else %}
inline canonical() {
  c_code { kivi_profile_move(((P0 *)_this)->_t); kivi_canonical(); }
}
{% endif %}
{% include "controllers/rolling_update.pml" %}
#define LEVEL(w, l) workload_level[(w) * 8 + (l)]
#define WORKLOAD_OF(q) template_workload[slot_template[q]]

/* A pod is gone for good: a bare Pod is not replaced (its "spec" drops to 0). */
inline pod_gone(q) {
  if
  :: workload_bare[WORKLOAD_OF(q)] -> spec[WORKLOAD_OF(q)] = 0
  :: else -> skip
  fi
}

/* A pod stops running (deleted, evicted or lost with its node). */
inline stop_running(q) {
{% if ir.stale_reads %}  stale_deletion(q);
{% endif %}  running[WORKLOAD_OF(q)]--;
  if
  :: BIT(template_no_execute[slot_template[q]], pod[q].node) -> taint_work--
  :: else -> skip
  fi
}

/* The cluster changed: pods the scheduler gave up on are tried again
   (kube-scheduler moves them back to the active queue on cluster events). */
hidden int r_q;
inline retry_unschedulable() {
  for (r_q : 1 .. PODS) {
    if
    :: pod[r_q].status == PENDING && pod[r_q].unschedulable -> pod[r_q].unschedulable = 0; unschedulable--; to_schedule++
    :: else -> skip
    fi
  }  /* a d_step must not end in a loop: the loop's exit would leave it */
{% if ir.cluster_autoscaler %}  scale_up_wanted = 0;  /* the scheduler tells again what a new node would help */
{% endif %}  skip
}

/* The scheduler bound a pod: an assigned pod was added, an event InterPodAffinity and
   PodTopologySpread register (pkg/scheduler/framework/plugins/interpodaffinity/plugin.go and
   podtopologyspread/plugin.go, EventsToRegister: Pod/Add). The scheduling queue moves the pods
   those plugins may have rejected back to the active queue (internal/queue/scheduling_queue.go,
   MoveAllToActiveOrBackoffQueue): here, the pending pods with required pod affinity terms or
   hard spread constraints. A pod rejected for resources or node affinity stays where it is: a
   new pod only takes room. Without this, a pod whose required affinity names a StatefulSet's
   pods, created one by one, waited forever. */
inline retry_after_pod_add() {
  for (r_q : 1 .. PODS) {
    if
    :: pod[r_q].status == PENDING && pod[r_q].unschedulable && (template_term_count[slot_template[r_q]] > 0 || template_hard_count[slot_template[r_q]] > 0) ->
       pod[r_q].unschedulable = 0; unschedulable--; to_schedule++
    :: else -> skip
    fi
  }
  skip
}

/* The environment took pods of w away with their node: min-replicas-available waits for its
   default bound to be reached again before checking it (a `min` param holds throughout). */
inline reset_min(w) {
  if
  :: min_resettable[w] && MONITORS_MIN_REPLICAS -> min_reached[w] = 0
  :: else -> skip
  fi
}

/*
 * Eviction API (pkg/registry/core/pod/storage/eviction.go) with the disruption controller's
 * budget (pkg/controller/disruption): evicting pod q is allowed when every
 * PodDisruptionBudget selecting it has a disruption left (healthy pods above the desired
 * number); a pod that is not ready may go while the budget is met (IfHealthyBudget) or always
 * (AlwaysAllow). b_ok = 1 when allowed.
 */
hidden int b_i, b_j, b_healthy, b_expected, b_desired;
hidden byte b_ok;
inline disruption_allowed(q) {
  b_ok = 1;
{% if ir.disruption_budgets %}
  for (b_i : 1 .. BUDGETS) {
    if
    :: BIT(budget_workloads[b_i], WORKLOAD_OF(q)) ->
       b_healthy = 0; b_expected = 0;
       for (b_j : 1 .. PODS) {
         if
         :: pod[b_j].status == RUNNING && BIT(budget_workloads[b_i], WORKLOAD_OF(b_j)) -> b_healthy++
         :: else -> skip
         fi
       }
       for (b_j : 1 .. WORKLOADS) {
         if
         :: BIT(budget_workloads[b_i], b_j) -> b_expected = b_expected + spec[b_j]
         :: else -> skip
         fi
       }
       b_desired = (budget_max_unavailable[b_i] -> b_expected - RESOLVE_UP(budget_value[b_i], b_expected) : RESOLVE_UP(budget_value[b_i], b_expected));
       if
       :: pod[q].status == RUNNING && b_healthy <= b_desired -> b_ok = 0
       :: pod[q].status != RUNNING && !budget_always_allow[b_i] && b_healthy < b_desired -> b_ok = 0
       :: else -> skip
       fi
    :: else -> skip
    fi
  }
{% endif %}
  skip
}

inline mark_dc(w) {
  if
  :: !dc_dirty[w] -> dc_dirty[w] = 1; dc_work++
  :: else -> skip
  fi
}

inline mark_hpa(w) {
  if
  :: workload_autoscaled[w] && !hpa_dirty[w] -> hpa_dirty[w] = 1; hpa_work++
  :: else -> skip
  fi
}

/* A running pod is evicted or deleted: it terminates (holding its resources until the kubelet
   is done) and its controller replaces it. */
inline terminate_running(q) {
  stop_running(q);
  pod[q].status = TERMINATING; kubelet_work++;
  mark_dc(WORKLOAD_OF(q))
}

{% include "controllers/scheduler.pml" %}
{% include "controllers/deployment.pml" %}
{% include "controllers/kubelet.pml" %}
{% if autoscaled %}{% include "controllers/autoscaler.pml" %}{% endif %}
{% if shape.taints %}{% include "controllers/taint_eviction.pml" %}{% endif %}
{% if ir.descheduler %}{% include "controllers/descheduler.pml" %}{% endif %}
{% if ir.cluster_autoscaler %}{% include "controllers/cluster_autoscaler.pml" %}{% endif %}
{% if ir.stale_reads %}{% include "controllers/informer.pml" %}{% endif %}
{# the environment events, from the registry (src/events/) #}
{% for t in event_templates %}{% if simulation and t.ordinal %}#define THIS_EVENT {{ t.ordinal }}
#define THIS_BUSY ({{ t.busy }})
{% endif %}{% include t.name %}{% if simulation and t.ordinal %}#undef THIS_EVENT
#undef THIS_BUSY
{% endif %}{% endfor %}
{# the checks' monitors, from the registry (src/checks/) #}
{% for m in monitors %}#define THIS_CHECK {{ loop.index }}
{% include m.template %}#undef THIS_CHECK
{% endfor %}
{% if ir.descheduler %}{% include "controllers/descheduler_process.pml" %}{% endif %}
{% if simulation %}

/*
 * `kivi-lint simulate`: one run, from the cluster as the input starts it. It ends at the first
 * moment the cluster has settled (the controllers idle, no node down or draining) after the
 * environment acted SIMULATION_ROUNDS times, at once in a model without events: the events
 * and the descheduler stop (`provided`), and when nothing else can move (`timeout`) the run
 * ends; a check whose monitor fails in that state ends it with its violation instead.
 */
proctype Simulation() {
  atomic { SIMULATION_STEPS_DONE && QUIESCENT && ENVIRONMENT_SETTLED -> simulation_done = 1 };
  /* the environment stops; a check whose monitor fails in this state ends the run first */
  atomic {
    timeout ->
    printf("KIVI:%d\n", EVENT_SIMULATION_ENDED);
    assert(false)
  }
}
{% endif %}

/*
 * The topology, read in init from the file named by KIVI_INPUT: lines of
 * `table index value`, the tables numbered as in the `if` of init (table 0 ends the input).
 */
hidden int in_table, in_index, in_value;
c_code {
static FILE *kivi_input;
void kivi_read_input(void) {
  if (!kivi_input) {
    const char *path = getenv("KIVI_INPUT");
    kivi_input = path ? fopen(path, "r") : 0;
    if (!kivi_input) { fprintf(stderr, "kivi-lint: no topology input (KIVI_INPUT)\n"); exit(2); }
  }
  if (fscanf(kivi_input, "%d %d %d", &in_table, &in_index, &in_value) != 3) {
    in_table = 0; fclose(kivi_input); kivi_input = 0;
  }
}
}

init {
  d_step {
    do
    :: c_code { kivi_read_input(); };
       if
       :: in_table == 0 -> break
{% for t in input_tables %}       :: in_table == {{ loop.index }} -> {{ t }}
{% endfor %}       :: else -> assert(false)
       fi
    od;
    in_table = 0; in_index = 0; in_value = 0
  }
{% if ir.volumes %}
  /* Immediate claims: the provisioner makes each volume at once, in any zone it may use, not
     knowing where the pod will run (pkg/controller/volume/persistentvolume provisionClaim). */
  atomic {
    for (i_claim : 1 .. PODS) {
      if
      :: claim_choices[i_claim] != 0 ->
         i_zone = 1;
         do
         :: BIT(claim_choices[i_claim], i_zone) ->
            vol_zone[i_claim] = i_zone; printf("KIVI:%d:%d:%d\n", EVENT_VOLUME_PROVISIONED, i_claim, i_zone); break
         :: (claim_choices[i_claim] >> (i_zone + 1)) != 0 -> i_zone++
         od
      :: else -> skip
      fi
    }
  }
{% endif %}
{% if ir.probe == "descheduler" %}
  /* conformance: one descheduler run on the cluster as the input starts it */
  d_step { descheduler_run() }
{% endif %}
  atomic {
    run Scheduler();
    run DeploymentController();
    run Kubelet();
{% if autoscaled %}    run Autoscaler();
{% endif %}{% if shape.taints %}    run TaintEviction();
{% endif %}{% if ir.stale_reads %}    run Informer();
{% endif %}{% if ir.cluster_autoscaler %}    run ClusterAutoscaler();
{% endif %}{% if ir.descheduler %}    run Descheduler();
{% endif %}{% for p in event_proctypes %}    run {{ p }}();
{% endfor %}{% for m in monitors %}    if :: check_on[{{ loop.index }}] -> run {{ m.proctype }}() :: else -> skip fi;
{% endfor %}{% if simulation %}    run Simulation();
{% endif %}    skip
  }
}

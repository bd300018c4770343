/*
 * HorizontalPodAutoscaler arithmetic, shared by the Autoscaler process and its conformance
 * probe (templates/probes/autoscaler.pml):
 *  - pkg/controller/podautoscaler/replica_calculator.go GetResourceReplicas and groupPods,
 *    metrics/utilization.go GetResourceUtilizationRatio: the replicas a cpu Resource metric
 *    asks for;
 *  - GetMetricReplicas (calcPlainMetricReplicas): a Pods metric, the per-pod average
 *    against an AverageValue target;
 *  - GetObjectMetricReplicas, GetExternalMetricReplicas (getUsageRatioReplicaCount): a Value
 *    target against the Running and Ready pods; GetObjectPerPodMetricReplicas,
 *    GetExternalPerPodMetricReplicas: an AverageValue target against the current count;
 *  - horizontal.go convertDesiredReplicasWithRules and convertDesiredReplicasWithBehaviorRate:
 *    the recommendation bounded by minReplicas, maxReplicas and the scale-up and scale-down
 *    limits (the limits per current count are computed before the model).
 * Integer arithmetic. The utilisation is an integer percent, as upstream; the usage ratio is
 * kept as the fraction utilisation / target, so the 10% tolerance and the ceiling are exact
 * rationals where upstream's float64 rounds (docs/conformance.md).
 */
/* groupPods: what the autoscaler makes of a pod it selects. */
#define RC_IGNORED 0   /* Failed, or being deleted */
#define RC_PENDING 1
#define RC_RUNNING 2
/* Conditions of the ScalingLimited status. */
#define RC_WITHIN_RANGE 0
#define RC_TOO_FEW 1
#define RC_TOO_MANY 2
#define RC_SCALE_UP_LIMIT 3
#define RC_SCALE_DOWN_LIMIT 4
/* |1 - utilisation / target| <= 0.1 */
#define RC_WITHIN_TOLERANCE(u) RC_NEAR(u, rc_target)
#define RC_NEAR(u, t) (((u) - (t)) * 10 <= (t) && ((t) - (u)) * 10 <= (t))

hidden int rc_current, rc_target, rc_metrics, rc_ready, rc_usage, rc_request, rc_unready, rc_unready_request;
hidden int rc_missing, rc_missing_request, rc_missing_fallback, rc_no_request, rc_util, rc_new_util;
hidden int rc_new_usage, rc_new_request, rc_count, rc_desired, rc_error, rc_pods;
hidden int rc_allowed, rc_condition, rc_normalized;
hidden byte rc_cpu;  /* the resource is cpu: groupPods' readiness rules apply */

inline rc_begin(current, target) {
  rc_current = current; rc_target = target; rc_cpu = 1;
  rc_metrics = 0; rc_ready = 0; rc_usage = 0; rc_request = 0; rc_unready = 0; rc_unready_request = 0;
  rc_missing = 0; rc_missing_request = 0; rc_missing_fallback = 0; rc_no_request = 0; rc_error = 0;
  rc_pods = 0
}

/*
 * One selected pod (groupPods): `request` its cpu request (0: none), `ready` its Ready
 * condition, `recent` still in the 2 minute cpu initialisation period, `metric` whether the
 * metrics API reports it, `usage` its usage in the request's unit.
 */
inline rc_add_pod(phase, ready, recent, metric, request, usage) {
  rc_pods++;
  if
  :: request <= 0 -> rc_no_request++
  :: else -> skip
  fi;
  if
  :: metric -> rc_metrics++
  :: else -> skip
  fi;
  if
  :: phase == RC_IGNORED -> skip
  :: phase == RC_PENDING -> rc_unready++; rc_unready_request = rc_unready_request + request
  :: phase == RC_RUNNING && !metric ->
     rc_missing++; rc_missing_request = rc_missing_request + request;
     /* a missing pod counts as using max(100%, target) of its request when scaling down */
     rc_missing_fallback = rc_missing_fallback + request * (rc_target > 100 -> rc_target : 100) / 100
  :: phase == RC_RUNNING && metric && rc_cpu && (!ready || recent) ->
     rc_unready++; rc_unready_request = rc_unready_request + request
  :: else -> rc_ready++; rc_usage = rc_usage + usage; rc_request = rc_request + request
  fi
}

/* A resource other than cpu (after rc_begin): groupPods counts every Running pod with a
   metric as ready; the cpu initialisation period and the Ready condition are cpu's only. */
inline rc_not_cpu() {
  rc_cpu = 0
}

/* GetResourceReplicas: rc_desired, or rc_error (1: no metrics, 2: none for ready pods, 3: a pod without a request). */
inline rc_calculate() {
  if
  :: rc_metrics == 0 -> rc_error = 1
  :: rc_metrics > 0 && rc_ready == 0 -> rc_error = 2
  :: rc_metrics > 0 && rc_ready > 0 && rc_no_request > 0 -> rc_error = 3
  :: else ->
     rc_util = rc_usage * 100 / rc_request;
     if
     :: rc_missing == 0 && !(rc_unready > 0 && rc_util > rc_target) ->
        if
        :: RC_WITHIN_TOLERANCE(rc_util) -> rc_desired = rc_current
        :: else -> rc_desired = (rc_util * rc_ready + rc_target - 1) / rc_target
        fi
     :: else ->
        rc_count = rc_ready; rc_new_usage = rc_usage; rc_new_request = rc_request;
        if
        :: rc_missing > 0 && rc_util < rc_target ->
           rc_new_usage = rc_new_usage + rc_missing_fallback;
           rc_new_request = rc_new_request + rc_missing_request; rc_count = rc_count + rc_missing
        :: rc_missing > 0 && rc_util > rc_target ->
           rc_new_request = rc_new_request + rc_missing_request; rc_count = rc_count + rc_missing
        :: else -> skip
        fi;
        /* scaling up: unready pods count as using nothing */
        if
        :: rc_unready > 0 && rc_util > rc_target ->
           rc_new_request = rc_new_request + rc_unready_request; rc_count = rc_count + rc_unready
        :: else -> skip
        fi;
        rc_new_util = rc_new_usage * 100 / rc_new_request;
        if
        :: RC_WITHIN_TOLERANCE(rc_new_util) || (rc_util < rc_target && rc_new_util > rc_target) || (rc_util > rc_target && rc_new_util < rc_target) ->
           rc_desired = rc_current
        :: else ->
           rc_desired = (rc_new_util * rc_count + rc_target - 1) / rc_target;
           if
           :: (rc_new_util < rc_target && rc_desired > rc_current) || (rc_new_util > rc_target && rc_desired < rc_current) -> rc_desired = rc_current
           :: else -> skip
           fi
        fi
     fi
  fi
}

/*
 * GetMetricReplicas for a Pods metric (calcPlainMetricReplicas): rc_desired, or rc_error
 * (2: no metrics for ready pods, 4: no pods). The pods come through rc_add_pod with their
 * values as `usage` and no request; a non-cpu metric never marks a Running pod unready
 * (groupPods), so they come in ready. rc_util is the integer average, rc_target the target
 * average; a missing pod counts as the target when scaling down, as 0 otherwise.
 */
inline rc_calculate_plain() {
  if
  :: rc_pods == 0 -> rc_error = 4
  :: rc_pods > 0 && rc_ready == 0 -> rc_error = 2
  :: else ->
     rc_util = rc_usage / rc_ready;
     if
     :: rc_missing == 0 && !(rc_unready > 0 && rc_util > rc_target) ->
        if
        :: RC_WITHIN_TOLERANCE(rc_util) -> rc_desired = rc_current
        :: else -> rc_desired = (rc_util * rc_ready + rc_target - 1) / rc_target
        fi
     :: else ->
        rc_count = rc_ready + rc_missing; rc_new_usage = rc_usage;
        if
        :: rc_missing > 0 && rc_util < rc_target -> rc_new_usage = rc_new_usage + rc_missing * rc_target
        :: else -> skip
        fi;
        if
        :: rc_unready > 0 && rc_util > rc_target -> rc_count = rc_count + rc_unready
        :: else -> skip
        fi;
        rc_new_util = rc_new_usage / rc_count;
        if
        :: RC_WITHIN_TOLERANCE(rc_new_util) || (rc_util < rc_target && rc_new_util > rc_target) || (rc_util > rc_target && rc_new_util < rc_target) ->
           rc_desired = rc_current
        :: else ->
           rc_desired = (rc_new_util * rc_count + rc_target - 1) / rc_target;
           if
           :: (rc_new_util < rc_target && rc_desired > rc_current) || (rc_new_util > rc_target && rc_desired < rc_current) -> rc_desired = rc_current
           :: else -> skip
           fi
        fi
     fi
  fi
}

/*
 * An Object or External metric with a Value target (getUsageRatioReplicaCount): `value`
 * against rc_target, scaled by the Running and Ready pods `ready` (error 4: no pods).
 */
inline rc_calculate_value(value, pods, ready) {
  rc_util = value;
  if
  :: rc_current == 0 -> rc_desired = (value + rc_target - 1) / rc_target
  :: rc_current != 0 && RC_WITHIN_TOLERANCE(value) -> rc_desired = rc_current
  :: rc_current != 0 && !RC_WITHIN_TOLERANCE(value) && pods == 0 -> rc_error = 4
  :: else -> rc_desired = (value * ready + rc_target - 1) / rc_target
  fi
}

/*
 * An Object or External metric with an AverageValue target (the PerPod variants): the total
 * `value` against rc_target per current replica; outside the tolerance ceil(value / target).
 * rc_util is the per-replica usage upstream reports, ceil(value / current).
 */
inline rc_calculate_average_value(value) {
  if
  :: rc_current == 0 -> rc_desired = (value + rc_target - 1) / rc_target; rc_util = 0
  :: else ->
     if
     :: RC_NEAR(value, rc_target * rc_current) -> rc_desired = rc_current
     :: else -> rc_desired = (value + rc_target - 1) / rc_target
     fi;
     rc_util = (value + rc_current - 1) / rc_current
  fi
}

/*
 * The recommendation `desired` bounded: rc_normalized and rc_condition. `up_limit` and
 * `down_limit` are the most and fewest replicas one decision may reach from `current`
 * (without a behavior max(2 x current, 4) and 0).
 */
inline rc_normalize(current, desired, min, max, behavior, up_limit, down_limit) {
  if
  :: max > up_limit -> rc_allowed = up_limit; rc_condition = RC_SCALE_UP_LIMIT
  :: else -> rc_allowed = max; rc_condition = RC_TOO_MANY
  fi;
  if
  :: !behavior && desired < min -> rc_normalized = min; rc_condition = RC_TOO_FEW
  :: !(!behavior && desired < min) && (!behavior || desired > current) && desired > rc_allowed -> rc_normalized = rc_allowed
  :: behavior && desired < current ->
     if
     :: min < down_limit -> rc_allowed = down_limit; rc_condition = RC_SCALE_DOWN_LIMIT
     :: else -> rc_allowed = min; rc_condition = RC_TOO_FEW
     fi;
     if
     :: desired < rc_allowed -> rc_normalized = rc_allowed
     :: else -> rc_normalized = desired; rc_condition = RC_WITHIN_RANGE
     fi
  :: else -> rc_normalized = desired; rc_condition = RC_WITHIN_RANGE
  fi
}

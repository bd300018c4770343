/*
 * Environment event `toy-pod-kill` (a test's toy): when the cluster has settled, someone
 * deletes a running pod, up to {{ ir.events["toy-pod-kill"].times }} times. Its controller
 * replaces it.
 */
byte toy_kills;
proctype ToyPodKill() {
end_toy_pod_kill:
  do
  :: atomic {
       QUIESCENT && toy_kills < {{ ir.events["toy-pod-kill"].times }} && ({% for w in ir.workloads %}running[{{ loop.index }}] > 0 || {% endfor %}false) ->
       toy_kills++;
       if
{% for q in range(1, shape.max_pods + 1) %}
       :: {{ q }} <= PODS && pod[{{ q }}].status == RUNNING ->
          printf("KIVI:%d:{{ q }}\n", EVENT_TOY_POD_KILLED); terminate_running({{ q }})
{% endfor %}
       fi
     }
  od
}

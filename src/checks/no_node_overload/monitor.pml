/*
 * Check `no-node-overload`: no node is driven into overload again after it has restarted
 * (Kivi's kernel-panic intent counted three panics; the second already shows the cycle).
 */
proctype CheckNoNodeOverload() {
end_check_no_node_overload:
  do
  :: atomic {
       ({% for n in range(1, shape.max_nodes + 1) %}{% if not loop.first %} || {% endif %}overloads[{{ n }}] >= 2{% endfor %}) ->
       if
{% for n in range(1, shape.max_nodes + 1) %}
       :: overloads[{{ n }}] >= 2 -> printf("KIVI:%d:{{ n }}\n", EVENT_OVERLOAD_CHECK)
{% endfor %}
       fi;
       assert(false)
     }
  od
}

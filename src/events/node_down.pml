/*
 * A node goes down (maintenance, crash): it stops being ready, and the pods bound to it are
 * lost at once (Kivi's semantics: no graceful termination); their controllers replace them.
 */
hidden int m_q;

inline take_down(n) {
  node_ready[n] = 0;
  for (m_q : 1 .. PODS) {
    if
    :: pod[m_q].node == n && pod[m_q].status != FREE && pod[m_q].status != PENDING ->
       printf("KIVI:%d:%d:%d\n", EVENT_POD_LOST_WITH_NODE, m_q, n);
       if
       :: pod[m_q].status == RUNNING -> stop_running(m_q)
       :: else -> kubelet_work--
       fi;
       mark_dc(WORKLOAD_OF(m_q));
       pod_gone(m_q);
       pod[m_q].status = FREE; pod[m_q].node = 0
    :: else -> skip
    fi
  }
  skip
}

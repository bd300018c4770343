/*
 * Environment event `gitops-sync` (Argo CD selfHeal, Flux): when the live state drifts from
 * Git, the agent applies the manifests again. A manifest that writes `spec.replicas` sets it
 * back, whatever an autoscaler decided (kubectl apply / server-side apply semantics). It
 * acts at settled moments, as often as drift appears.
 */
proctype GitopsSync(){% if simulation %} provided (SIMULATION_MAY_ACT){% endif %} {
end_gitops_sync:
  do
  :: atomic {
       QUIESCENT && ENVIRONMENT_SETTLED && ({% for w in ir.workloads %}{% if w.manifest_replicas >= 0 %}spec[{{ loop.index }}] != workload_manifest_replicas[{{ loop.index }}] || {% endif %}{% endfor %}false) ->
       if
{% for w in ir.workloads %}{% if w.manifest_replicas >= 0 %}
       :: spec[{{ loop.index }}] != workload_manifest_replicas[{{ loop.index }}] ->
          printf("KIVI:%d:{{ loop.index }}:%d:%d\n", EVENT_GITOPS_RESET, spec[{{ loop.index }}], workload_manifest_replicas[{{ loop.index }}]);
          spec[{{ loop.index }}] = workload_manifest_replicas[{{ loop.index }}];
          mark_dc({{ loop.index }});
          mark_hpa({{ loop.index }})
{% endif %}{% endfor %}
       fi
     }
  od
}

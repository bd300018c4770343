use super::*;
use crate::source::SourceMap;

fn units_of(manifests: &str, config: &str) -> (Vec<Unit>, Vec<Object>, Diagnostics) {
    let mut sources = SourceMap::default();
    let mut diags = Diagnostics::default();
    let config = Config::parse(
        config,
        std::path::Path::new("c.yaml"),
        None,
        std::path::Path::new("."),
        &mut sources,
        &mut diags,
    );
    let (_, loaded) = crate::manifest::load_text(&mut sources, "m.yaml", manifests, &mut diags);
    let units = build(&loaded.objects, &config, &[".".into()], None, &mut diags);
    (units, loaded.objects, diags)
}

fn deployment(name: &str, labels: &str, extra: &str, cpu: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {labels}}}\n  template:\n    metadata: {{labels: {labels}}}\n    spec:\n      containers: [{{name: c, image: x, resources: {{requests: {{cpu: {cpu}}}}}}}]\n{extra}"
    )
}

fn names(units: &[Unit], objects: &[Object]) -> Vec<Vec<String>> {
    units
        .iter()
        .map(|u| u.workloads().map(|w| objects[w].id.name.clone()).collect())
        .collect()
}

#[test]
fn unrelated_workloads_are_separate_units() {
    let m = deployment("a", "{app: a}", "", "100m") + &deployment("b", "{app: b}", "", "100m");
    let (units, objects, _) = units_of(&m, crate::config::DEFAULT_CONFIG);
    assert_eq!(names(&units, &objects), [vec!["a"], vec!["b"]]);
    assert_ne!(units[0].id, units[1].id);
}

#[test]
fn spread_selector_pdb_and_hpa_join() {
    let tsc = "      topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {tier: web}}}]\n";
    let m = deployment("a", "{app: a, tier: web}", tsc, "100m")
        + &deployment("b", "{app: b, tier: web}", "", "100m")
        + &deployment("c", "{app: c}", "", "100m")
        + &deployment("d", "{app: d, pdb: shared}", "", "100m")
        + &deployment("e", "{app: e, pdb: shared}", "", "100m")
        + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {maxUnavailable: 1, selector: {matchLabels: {pdb: shared}}}\n"
        + "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: c}, maxReplicas: 4}\n";
    let (units, objects, diags) = units_of(&m, crate::config::DEFAULT_CONFIG);
    assert!(!diags.has_errors(), "{diags:?}");
    assert_eq!(names(&units, &objects), [vec!["a", "b"], vec!["c"], vec!["d", "e"]]);
    assert!(units[1].members.iter().any(|m| m.role == Role::Autoscaler));
    assert!(units[1].checks.contains(&CheckId::NoReplicaOscillation));
    assert!(!units[0].checks.contains(&CheckId::NoReplicaOscillation));
    assert_eq!(
        units[0].edges[0].reason,
        "its topologySpreadConstraints[0] counts their pods"
    );
}

/// A Service decides the default spread constraints of pods no ReplicaSet owns: a bare
/// Pod it selects counts the other pods it selects, and joins them. A Deployment counts
/// only its own revision, whatever selects it.
#[test]
fn services_join_through_default_spread_constraints() {
    let service = "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {tier: web}}\n";
    let pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: debug, labels: {tier: web}}\nspec: {containers: [{name: c, image: x}]}\n";
    let m = deployment("a", "{app: a, tier: web}", "", "100m")
        + &deployment("b", "{app: b, tier: web}", "", "100m")
        + &deployment("c", "{app: c}", "", "100m")
        + service
        + pod;
    let (units, objects, diags) = units_of(&m, crate::config::DEFAULT_CONFIG);
    assert!(!diags.has_errors(), "{diags:?}");
    assert_eq!(names(&units, &objects), [vec!["a", "b", "debug"], vec!["c"]]);
    let services: Vec<&str> = units[0]
        .members
        .iter()
        .filter(|m| m.role == Role::Service)
        .map(|m| objects[m.object].id.name.as_str())
        .collect();
    assert_eq!(services, ["web"]);
    assert!(
        units[0]
            .edges
            .iter()
            .all(|e| e.reason == "its default topology spread constraints count their pods"),
        "{:?}",
        units[0].edges
    );
    // Without the bare Pod the Deployments stay apart.
    let m = deployment("a", "{app: a, tier: web}", "", "100m")
        + &deployment("b", "{app: b, tier: web}", "", "100m")
        + service;
    let (units, objects, _) = units_of(&m, crate::config::DEFAULT_CONFIG);
    assert_eq!(names(&units, &objects), [vec!["a"], vec!["b"]]);
}

/// Extended resources count like cpu: two GPU workloads that do not both fit the pool's
/// GPUs join, whatever their cpu.
#[test]
fn extended_resources_join_workloads_that_compete_for_them() {
    let config = "cluster: {nodePools: [{name: gpu, count: 1, max: 1, allocatable: {cpu: '64', memory: 256Gi, nvidia.com/gpu: 3}}]}\n";
    let gpu = |name: &str| {
        deployment(name, &format!("{{app: {name}}}"), "", "100m").replace(
            "resources: {requests: {cpu: 100m}}",
            "resources: {requests: {cpu: 100m}, limits: {nvidia.com/gpu: 1}}",
        )
    };
    let m = gpu("a") + &gpu("b") + &deployment("c", "{app: c}", "", "100m");
    let (units, objects, diags) = units_of(&m, config);
    assert!(!diags.has_errors(), "{diags:?}");
    assert_eq!(names(&units, &objects), [vec!["a", "b"], vec!["c"]]);
}

#[test]
fn capacity_contention_joins_only_workloads_with_requests() {
    // One pool of at most 2 nodes with 1 CPU each: 2 × 2 × 600m does not fit.
    let config = "cluster: {nodePools: [{name: p, count: 1, max: 2, allocatable: {cpu: '1', memory: 4Gi}}]}\n";
    let m = deployment("a", "{app: a}", "", "600m")
        + &deployment("b", "{app: b}", "", "600m")
        + &deployment("c", "{app: c}", "", "0");
    let (units, objects, _) = units_of(&m, config);
    assert_eq!(names(&units, &objects), [vec!["a", "b"], vec!["c"]]);
    // With room to spare they stay apart.
    let config = "cluster: {nodePools: [{name: p, count: 1, max: 4, allocatable: {cpu: '1', memory: 4Gi}}]}\n";
    let (units, _, _) = units_of(&m, config);
    assert_eq!(units.len(), 3);
}

#[test]
fn node_pools_follow_selectors_affinity_and_taints() {
    let config = "cluster:\n  nodePools:\n  - {name: general, allocatable: {cpu: '4', memory: 16Gi}, labels: {zone: a}}\n  - {name: gpu, allocatable: {cpu: '8', memory: 32Gi}, taints: [{key: gpu, value: 'yes', effect: NoSchedule}]}\n";
    let tol = "      tolerations: [{key: gpu, operator: Exists}]\n";
    let sel = "      nodeSelector: {zone: b}\n";
    let name = "      nodeName: gpu-1\n";
    let m = deployment("plain", "{app: a}", "", "1")
        + &deployment("tolerant", "{app: b}", tol, "1")
        + &deployment("nowhere", "{app: c}", sel, "1")
        + &deployment("pinned", "{app: d}", &format!("{name}{tol}"), "1");
    let (units, objects, diags) = units_of(&m, config);
    let pools: BTreeMap<String, Vec<String>> = units
        .iter()
        .map(|u| (objects[u.members[0].object].id.name.clone(), u.node_pools.clone()))
        .collect();
    assert_eq!(pools["plain"], ["general"]);
    assert_eq!(pools["tolerant"], ["general", "gpu"]);
    assert!(pools["nowhere"].is_empty());
    assert_eq!(pools["pinned"], ["gpu"]);
    assert!(diags.iter().any(|d| {
        d.message
            .contains("no node pool of the cluster admits the pods of Deployment/default/nowhere")
    }));
}

#[test]
fn node_utilisation_balancing_joins_evictable_workloads() {
    let policy = "---\napiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n  - {name: LowNodeUtilization, args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}}\n  plugins: {balance: {enabled: [LowNodeUtilization]}}\n";
    let m = deployment("a", "{app: a}", "", "100m") + &deployment("b", "{app: b}", "", "100m") + policy;
    let (units, objects, _) = units_of(&m, crate::config::DEFAULT_CONFIG);
    assert_eq!(names(&units, &objects), [vec!["a", "b"]]);
    assert!(units[0].checks.contains(&CheckId::NoEvictionLoop));
    // A per-pod plugin attaches the policy but does not join workloads.
    let policy = policy.replace("LowNodeUtilization", "RemoveDuplicates");
    let m = deployment("a", "{app: a}", "", "100m") + &deployment("b", "{app: b}", "", "100m") + &policy;
    let (units, _, _) = units_of(&m, crate::config::DEFAULT_CONFIG);
    assert_eq!(units.len(), 2);
    assert!(
        units
            .iter()
            .all(|u| u.members.iter().any(|m| m.role == Role::DeschedulerPolicy))
    );
}

/// A StatefulSet's claim templates give each pod its own claim; the default class serves a
/// claim without one; an Immediate class decides over a WaitForFirstConsumer one, and the
/// class joins the unit.
#[test]
fn volumes_are_found_through_claims_and_classes() {
    let classes = "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations: {storageclass.kubernetes.io/is-default-class: 'true'}\nvolumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n- matchLabelExpressions: [{key: topology.gke.io/zone, values: [z-b, z-a]}]\n---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\n";
    let db = "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: c, image: x}]\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {}\n";
    let (units, objects, _) = units_of(&(classes.to_string() + db), crate::config::DEFAULT_CONFIG);
    let w = units[0].workloads().next().unwrap();
    let found = storage::pod_volumes(&objects, w);
    let zones = found.zones.unwrap();
    assert!(zones.per_pod && !zones.immediate && !zones.bound);
    assert_eq!(zones.zones, ["z-a", "z-b"]);
    assert!(
        units[0]
            .members
            .iter()
            .any(|m| m.role == Role::Storage && objects[m.object].id.name == "standard")
    );

    let fast = db.replace("spec: {}", "spec: {storageClassName: fast}");
    let (units, objects, _) = units_of(&(classes.to_string() + &fast), crate::config::DEFAULT_CONFIG);
    let w = units[0].workloads().next().unwrap();
    let zones = storage::pod_volumes(&objects, w).zones.unwrap();
    assert!(zones.immediate && zones.zones.is_empty());

    let unknown = db.replace("spec: {}", "spec: {storageClassName: premium}");
    let (_, objects, _) = units_of(&unknown, crate::config::DEFAULT_CONFIG);
    let w = objects.iter().position(|o| o.workload().is_some()).unwrap();
    assert_eq!(
        storage::pod_volumes(&objects, w).unknown_classes,
        [Some("premium".to_string())]
    );
}

use super::*;
use crate::diagnostics::Diagnostics;
use crate::source::SourceMap;
use crate::units::Member;

#[test]
fn memory_unit_is_mib_unless_quantities_need_less() {
    // Manifests in Mi and Gi: MiB, as before.
    assert_eq!(memory_unit([16 * 1024 * MIB, 512 * MIB, 200 * MIB].into_iter()), MIB);
    // Byte quantities (upstream's test pods): exact.
    assert_eq!(memory_unit([20, 19, 5].into_iter()), 1);
    // 1.5G (decimal) on a 512 GiB node: as fine as 32-bit arithmetic allows.
    let unit = memory_unit([1_500_000_000, 512 * 1024 * MIB].into_iter());
    assert!(unit > 1 && (512 * 1024 * MIB) / unit <= 1 << 21, "{unit}");
}

#[test]
fn scalar_unit_keeps_counts_exact_and_bytes_in_range() {
    // Device counts: exact.
    assert_eq!(scalar_unit([1, 2, 8].into_iter()), 1);
    // Ephemeral storage in GiB: the largest power of two dividing them.
    let gib = 1024 * MIB;
    assert_eq!(scalar_unit([100 * gib, 10 * gib].into_iter()), 2 * gib);
    // An odd byte count on a large disk: coarse enough for 32-bit sums.
    let unit = scalar_unit([1_000_000_007, 500 * gib].into_iter());
    assert!((500 * gib) / unit <= 1 << 24, "{unit}");
}

fn hpa(behavior: &str) -> crate::manifest::HorizontalPodAutoscaler {
    let text = format!(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  minReplicas: 1\n  maxReplicas: 10\n  metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}}}]\n{behavior}"
    );
    let mut sources = SourceMap::default();
    let mut diags = Diagnostics::default();
    let (_, loaded) = crate::manifest::load_text(&mut sources, "hpa.yaml", &text, &mut diags);
    assert!(diags.is_empty(), "{diags:?}");
    match &loaded.objects[0].body {
        Body::HorizontalPodAutoscaler(h) => h.as_ref().clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn legacy_rules_have_only_the_controllers_downscale_window() {
    let h = hpa("");
    let (up, down) = scaling_rules(&h);
    assert!(!h.behavior);
    assert!(up.policies.is_empty() && down.policies.is_empty());
    assert_eq!((up.window, down.window), (0, LEGACY_DOWNSCALE_WINDOW));
}

#[test]
fn an_empty_behavior_takes_the_behavior_defaults() {
    // `behavior: {}` is a behavior (normalizeDesiredReplicasWithBehaviors), all defaults.
    let h = hpa("  behavior: {}\n");
    assert!(h.behavior);
    let (up, down) = scaling_rules(&h);
    assert_eq!(up.policies.len(), 2);
    assert_eq!((up.window, down.window), (0, 300));
    assert_eq!(
        down.policies,
        vec![IrScalingPolicy {
            percent: true,
            value: 100,
            period: 15
        }]
    );
    let h = hpa("  behavior:\n    scaleDown: {selectPolicy: Disabled, stabilizationWindowSeconds: 60}\n");
    let (_, down) = scaling_rules(&h);
    assert_eq!((down.select, down.window), (SelectPolicy::Disabled, 60));
}

#[test]
fn age_classes_count_the_thresholds_reached() {
    let rules = "    stabilizationWindowSeconds: 300\n    policies:\n    - {type: Pods, value: 2, periodSeconds: 60}\n";
    let h = hpa(&format!("  behavior:\n   scaleUp:\n{rules}   scaleDown:\n{rules}").replace("\n    ", "\n     "));
    let (scale_up, scale_down) = scaling_rules(&h);
    let a = IrAutoscaler {
        min: 1,
        max: 10,
        target: 50,
        metrics: IrMetrics::default(),
        behavior: true,
        scale_up,
        scale_down,
    };
    assert_eq!(a.thresholds(), vec![60, 300]);
    // An event 59 s old counts in a 60 s period, one 61 s old does not (getReplicasChangePerPeriod).
    assert!(a.class(59) < a.class(60));
    assert!(a.class(61) >= a.class(60));
    assert_eq!(a.class(HPA_SYNC_SECONDS), 0);
    assert_eq!((a.event_expiry(), a.recommendation_expiry()), (1, 2));
    assert!(a.keeps_logs());
}

/// The descheduler IR of some manifests on two plain nodes.
fn descheduler_of(manifests: &str, evictor: &str, plugin: &str, args: &str) -> IrDescheduler {
    let policy = format!(
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n  - {{name: DefaultEvictor, args: {{{evictor}}}}}\n  - {{name: {plugin}, args: {{{args}}}}}\n  plugins: {{balance: {{enabled: [{plugin}]}}}}\n"
    );
    let mut sources = SourceMap::default();
    let mut diags = Diagnostics::default();
    let text = format!("{manifests}\n---\n{policy}");
    let (_, loaded) = crate::manifest::load_text(&mut sources, "d.yaml", &text, &mut diags);
    assert!(diags.is_empty(), "{diags:?}");
    let objects = loaded.objects;
    let workloads: Vec<usize> = (0..objects.len())
        .filter(|&i| objects[i].workload().is_some())
        .collect();
    let mut members: Vec<Member> = workloads
        .iter()
        .map(|&object| Member {
            object,
            role: Role::Workload,
        })
        .collect();
    members.push(Member {
        object: objects.len() - 1,
        role: Role::DeschedulerPolicy,
    });
    let unit = Unit {
        id: "u".into(),
        name: "u".into(),
        scope: 0,
        members,
        node_pools: Vec::new(),
        checks: Vec::new(),
        edges: Vec::new(),
        not_checked: Vec::new(),
        cluster: None,
        drain_alone: false,
    };
    let config = Config::default_for(std::path::Path::new("."), &mut sources);
    let pool = &config.cluster.pools[0];
    let nodes = vec![
        ("n1".to_string(), Labels::default(), pool),
        ("n2".to_string(), Labels::default(), pool),
    ];
    descheduler(&unit, &objects, &workloads, &nodes).expect("a policy").0
}

const OWNED: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs}]}\nspec: {containers: [{name: c, image: x}]}";

/// A unit of the first object, a workload, on every pool of `config`.
fn one_workload_unit(config: &Config, checks: Vec<CheckId>) -> Unit {
    Unit {
        id: "u".into(),
        name: "u".into(),
        scope: 0,
        members: vec![Member {
            object: 0,
            role: Role::Workload,
        }],
        node_pools: config.cluster.pools.iter().map(|p| p.name.clone()).collect(),
        checks,
        edges: Vec::new(),
        not_checked: Vec::new(),
        cluster: None,
        drain_alone: false,
    }
}

/// A Pod from a snapshot taken while it was being deleted starts terminating on its node,
/// holding its resources until the kubelet is done; without a node it is not placed.
#[test]
fn a_pod_with_a_deletion_timestamp_starts_terminating() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: old, deletionTimestamp: '2024-01-01T00:00:00Z'}\nspec: {nodeName: zone-b-1, containers: [{name: c, image: x}]}\n";
    let mut sources = SourceMap::default();
    let mut diags = Diagnostics::default();
    let (_, loaded) = crate::manifest::load_text(&mut sources, "p.yaml", text, &mut diags);
    assert!(diags.is_empty(), "{diags:?}");
    let config = Config::default_for(std::path::Path::new("."), &mut sources);
    let unit = one_workload_unit(&config, Vec::new());
    let (ir, names) = build(
        &unit,
        &loaded.objects,
        &config,
        &Default::default(),
        &Topology::current(&config),
    )
    .unwrap();
    let node = names.nodes.iter().position(|n| n == "zone-b-1").unwrap() + 1;
    assert!(ir.workloads[0].terminating);
    assert_eq!(ir.workloads[0].initial, vec![(node, 1)]);
    let input = super::super::input(&ir, &super::super::Shape::of([&ir]), &[]);
    assert!(
        input.contains(&format!(
            "{} 0 1\n",
            super::super::input::TABLES
                .iter()
                .position(|t| *t == "kubelet_work")
                .unwrap()
                + 1
        )),
        "{input}"
    );
}

#[test]
fn default_evictor_admits_owned_pods_only() {
    let manifests = format!(
        "{OWNED}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: bare}}\nspec: {{containers: [{{name: c, image: x}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: ds, ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: d}}]}}\nspec: {{containers: [{{name: c, image: x}}]}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: mirror, annotations: {{kubernetes.io/config.mirror: m}}, ownerReferences: [{{apiVersion: v1, kind: Node, name: n1}}]}}\nspec: {{containers: [{{name: c, image: x}}]}}"
    );
    let d = descheduler_of(&manifests, "", "RemoveDuplicates", "");
    // Only template 1 (owned by a ReplicaSet): bare, DaemonSet-owned and mirror pods stay.
    assert_eq!(d.duplicates_evictable, 1 << 1);
}

#[test]
fn local_storage_needs_evict_local_storage_pods() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: x}]\n      volumes: [{name: tmp, emptyDir: {}}]";
    assert_eq!(
        descheduler_of(deployment, "", "RemoveDuplicates", "").duplicates_evictable,
        0
    );
    let d = descheduler_of(deployment, "evictLocalStoragePods: true", "RemoveDuplicates", "");
    assert_eq!(d.duplicates_evictable, 1 << 1);
    // A Deployment's pods are owned by a ReplicaSet: excludeOwnerKinds names that kind.
    let d = descheduler_of(
        deployment,
        "evictLocalStoragePods: true",
        "RemoveDuplicates",
        "excludeOwnerKinds: [ReplicaSet]",
    );
    assert_eq!(d.duplicates_evictable, 0);
}

#[test]
fn duplicates_share_owner_and_images() {
    let other_image = OWNED.replace("name: a", "name: c").replace("image: x", "image: y");
    let manifests = format!(
        "{OWNED}\n---\n{}\n---\n{other_image}",
        OWNED.replace("name: a", "name: b")
    );
    let d = descheduler_of(&manifests, "", "RemoveDuplicates", "");
    assert_eq!(d.duplicate_lists[1], d.duplicate_lists[2]);
    assert_ne!(d.duplicate_lists[1], d.duplicate_lists[3]);
    assert_ne!(d.duplicate_keys[1], d.duplicate_keys[3]);
    assert_eq!(d.fit_nodes[1], 0b110);
}

/// A StatefulSet's pods live in their ordinals' slots, replacements included: a rollout and a
/// node failure need slots beyond the replicas for a Deployment's pods, not for its.
#[test]
fn a_statefulset_needs_one_slot_per_ordinal_through_rollouts_and_failures() {
    let slots = |kind: &str| {
        let text = format!(
            "apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web}}\nspec:\n  replicas: 3\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: x}}]}}\n"
        );
        let mut sources = SourceMap::default();
        let mut diags = Diagnostics::default();
        let (_, loaded) = crate::manifest::load_text(&mut sources, "w.yaml", &text, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        let mut config = Config::default_for(std::path::Path::new("."), &mut sources);
        config.events.push(crate::source::Spanned {
            value: crate::config::EnvironmentEvent::NodeFailure {
                count: 1,
                recover: true,
            },
            span: crate::source::Span::default(),
        });
        let unit = one_workload_unit(&config, vec![CheckId::RolloutCompletes]);
        let (ir, _) = build(
            &unit,
            &loaded.objects,
            &config,
            &Default::default(),
            &Topology::current(&config),
        )
        .unwrap();
        ir.pod_slots
    };
    assert_eq!(slots("StatefulSet"), 3);
    assert!(slots("Deployment") > 3 + 3);
}

use super::*;
use crate::manifest::pod::{InclusionPolicy, WhenUnsatisfiable};
use crate::manifest::quantity::IntOrPercent;
use crate::manifest::workload::UpdateStrategy;

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: "0%"}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: init
        resources: {requests: {cpu: "2", memory: 64Mi}}
      containers:
      - name: app
        resources: {requests: {cpu: 500m, memory: 1Gi}}
      - name: sidecar
        resources: {limits: {cpu: 100m, memory: 100Mi}}
      nodeSelector: {disk: ssd}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: web}}
        minDomains: 3
        nodeTaintsPolicy: Honor
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
            topologyKey: kubernetes.io/hostname
"#;

fn load_one(text: &str) -> (Loaded, Diagnostics, SourceMap) {
    let mut sources = SourceMap::default();
    let mut diags = Diagnostics::default();
    let (_, loaded) = load_text(&mut sources, "t.yaml", text, &mut diags);
    (loaded, diags, sources)
}

#[test]
fn deployment_fields_with_spans() {
    let (loaded, diags, _) = load_one(DEPLOYMENT);
    assert!(diags.is_empty(), "{diags:?}");
    let o = &loaded.objects[0];
    assert_eq!(o.id.to_string(), "Deployment/default/web");
    let w = o.workload().unwrap();
    assert_eq!(w.replicas.as_ref().unwrap().value, 3);
    assert_eq!(w.replicas.as_ref().unwrap().span.start.line, 7);
    // max(app 500m + sidecar-less 100m, init 2000m) = 2000m; memory max(1Gi+100Mi, 64Mi)
    let req = w.template.spec.effective_request();
    assert_eq!(req.cpu_millis, 2000);
    assert_eq!(req.memory_bytes, (1 << 30) + 100 * (1 << 20));
    match &w.strategy {
        UpdateStrategy::RollingUpdate {
            max_surge,
            max_unavailable,
            ..
        } => {
            assert_eq!(max_surge.value, IntOrPercent::Int(1));
            assert_eq!(max_unavailable.value, IntOrPercent::Percent(0));
        }
        s => panic!("{s:?}"),
    }
    let tsc = &w.template.spec.topology_spread_constraints[0];
    assert_eq!(tsc.max_skew.value, 1);
    assert_eq!(tsc.max_skew.span.start.line, 29);
    assert_eq!(tsc.when_unsatisfiable.value, WhenUnsatisfiable::DoNotSchedule);
    assert_eq!(tsc.node_taints_policy, InclusionPolicy::Honor);
    assert_eq!(tsc.node_affinity_policy, InclusionPolicy::Honor);
    assert_eq!(tsc.min_domains.as_ref().unwrap().value, 3);
    assert_eq!(
        w.template.spec.affinity.pod_anti.required[0].topology_key.value,
        "kubernetes.io/hostname"
    );
    assert_eq!(w.template.spec.tolerations.len(), 1);
    assert_eq!(w.template.spec.node_selector["disk"], "ssd");
}

#[test]
fn bad_fields_are_located() {
    let (loaded, diags, sources) = load_one(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: three\n  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, resources: {requests: {cpu: 12parsecs}}}]}}\n",
    );
    assert_eq!(loaded.objects.len(), 1);
    let msgs: Vec<String> = diags
        .iter()
        .map(|d| crate::diagnostics::location_string(&sources, d.span) + " " + &d.message)
        .collect();
    assert!(
        msgs[0].starts_with("t.yaml:5:13 `replicas` must be an integer"),
        "{msgs:?}"
    );
    assert!(msgs.iter().any(|m| m.contains("12parsecs")), "{msgs:?}");
}

#[test]
fn lists_are_expanded_and_documents_without_kind_skipped() {
    let (loaded, _, _) = load_one(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n---\nfoo: bar\n---\n- 1\n",
    );
    assert_eq!(loaded.objects.len(), 2);
    assert_eq!(loaded.skipped.len(), 2);
}

/// An empty `metrics` list is defaulted as a missing one: 80% cpu (v2 defaults.go).
#[test]
fn hpa_empty_metrics_default_to_cpu() {
    let (loaded, diags, _) = load_one(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: b}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n  metrics: []\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let Body::HorizontalPodAutoscaler(h) = &loaded.objects[0].body else {
        panic!()
    };
    assert!(matches!(
        h.metrics[..],
        [autoscaling::Metric::Resource {
            target: autoscaling::MetricTarget::Utilization(80),
            ..
        }]
    ));
}

#[test]
fn hpa_v1_and_v2() {
    let (loaded, diags, _) = load_one(
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 5, targetCPUUtilizationPercentage: 50}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: b}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 10\n  metrics:\n  - {type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}}\n  - {type: External, external: {metric: {name: queue}, target: {type: Value, value: '30'}}}\n  - {type: ContainerResource, containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 70}}}\n  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60, policies: [{type: Percent, value: 50, periodSeconds: 15}]}\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let Body::HorizontalPodAutoscaler(a) = &loaded.objects[0].body else {
        panic!()
    };
    assert_eq!(a.min_replicas.value, 1);
    assert!(matches!(
        a.metrics[0],
        autoscaling::Metric::Resource {
            target: autoscaling::MetricTarget::Utilization(50),
            ..
        }
    ));
    let Body::HorizontalPodAutoscaler(b) = &loaded.objects[1].body else {
        panic!()
    };
    assert!(matches!(
        b.metrics[0],
        autoscaling::Metric::Resource {
            target: autoscaling::MetricTarget::AverageValue(524_288_000),
            ..
        }
    ));
    assert!(matches!(
        b.metrics[1],
        autoscaling::Metric::Custom {
            source: autoscaling::MetricSource::External,
            average: false,
            ..
        }
    ));
    assert!(matches!(
        &b.metrics[2],
        autoscaling::Metric::Resource {
            target: autoscaling::MetricTarget::Utilization(70),
            container: Some(c),
            ..
        } if c == "app"
    ));
    assert_eq!(b.scale_down.as_ref().unwrap().stabilization_window_seconds, Some(60));
}

/// autoscaling/v2beta1 writes the target inline; v2beta2 as v2 does.
#[test]
fn hpa_v2beta1_and_v2beta2() {
    let (loaded, diags, _) = load_one(
        "apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 5\n  metrics:\n  - {type: Resource, resource: {name: cpu, targetAverageUtilization: 70}}\n  - {type: Resource, resource: {name: cpu, targetAverageValue: 250m}}\n---\napiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: b}\nspec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 5\n  metrics:\n  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let Body::HorizontalPodAutoscaler(a) = &loaded.objects[0].body else {
        panic!()
    };
    assert!(matches!(
        a.metrics[..],
        [
            autoscaling::Metric::Resource {
                target: autoscaling::MetricTarget::Utilization(70),
                ..
            },
            autoscaling::Metric::Resource {
                target: autoscaling::MetricTarget::AverageValue(250),
                ..
            }
        ]
    ));
    let Body::HorizontalPodAutoscaler(b) = &loaded.objects[1].body else {
        panic!()
    };
    assert!(b.has_modelled_metric());
}

#[test]
fn pdb_defaults_and_selector() {
    let (loaded, diags, _) = load_one(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n",
    );
    assert!(diags.is_empty());
    let Body::PodDisruptionBudget(p) = &loaded.objects[0].body else {
        panic!()
    };
    assert_eq!(p.max_unavailable.as_ref().unwrap().value, IntOrPercent::Int(1));
    assert!(p.min_available.is_none());
}

#[test]
fn descheduler_policy_in_configmap_keeps_lines() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: kube-system}\ndata:\n  policy.yaml: |\n    apiVersion: \"descheduler/v1alpha2\"\n    kind: \"DeschedulerPolicy\"\n    profiles:\n      - name: P\n        pluginConfig:\n        - name: \"LowNodeUtilization\"\n          args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n        plugins:\n          balance:\n            enabled: [\"LowNodeUtilization\"]\n";
    let (loaded, diags, _) = load_one(text);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(loaded.objects.len(), 2);
    let policy = loaded.objects.iter().find(|o| o.embedded).unwrap();
    assert_eq!(policy.id.to_string(), "DeschedulerPolicy/kube-system/d[policy.yaml]");
    let Body::DeschedulerPolicy(p) = &policy.body else {
        panic!()
    };
    let plugin = &p.profiles[0].plugins[0];
    assert_eq!(plugin.name.value, "LowNodeUtilization");
    assert_eq!(plugin.name.span.start.line, 15);
    assert!(plugin.balances_across_workloads());
}

#[test]
fn descheduler_v1alpha1_is_normalised() {
    let (loaded, diags, _) = load_one(
        "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates: {enabled: true}\n  LowNodeUtilization:\n    enabled: true\n    params:\n      nodeResourceUtilizationThresholds: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}\n  PodLifeTime: {enabled: false}\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let Body::DeschedulerPolicy(p) = &loaded.objects[0].body else {
        panic!()
    };
    assert_eq!(p.profiles.len(), 2);
    assert!(
        matches!(&p.profiles[1].plugins[0].args, descheduler::PluginArgs::NodeUtilization { thresholds, .. } if thresholds["cpu"] == 20)
    );
}

#[test]
fn scheduler_configuration() {
    let (loaded, diags, _) = load_one(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 2}]}}\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let Body::SchedulerConfiguration(c) = &loaded.objects[0].body else {
        panic!()
    };
    let p = c.profile("default-scheduler").unwrap();
    assert_eq!(
        p.scoring_strategy.as_ref().unwrap().value,
        scheduler_config::ScoringStrategy::MostAllocated
    );
    assert_eq!(p.default_constraints.as_ref().unwrap().len(), 1);
    // Listing resources leaves the others out.
    assert_eq!(p.resource_weights.get("cpu"), Some(&2));
    assert_eq!(p.resource_weights.get("memory"), None);
}

#[test]
fn scheduler_configuration_added_affinity_and_ratio_shape() {
    let (loaded, diags, _) = load_one(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [general]}]}]\n        preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu}], requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let Body::SchedulerConfiguration(c) = &loaded.objects[0].body else {
        panic!()
    };
    let p = c.profile("default-scheduler").unwrap();
    let general: Labels = [
        ("pool".to_string(), "general".to_string()),
        ("zone".to_string(), "a".to_string()),
    ]
    .into();
    let other: Labels = [("pool".to_string(), "gpu".to_string())].into();
    assert!(p.added_affinity.required_matches("n1", &general));
    assert!(!p.added_affinity.required_matches("n2", &other));
    assert_eq!(p.added_affinity.preferred_weight("n1", &general), 5);
    assert_eq!(p.resource_weights.get("cpu"), Some(&1), "an unset weight is 1");
    assert_eq!(
        p.ratio_shape,
        vec![
            scheduler_config::ShapePoint {
                utilization: 0,
                score: 0
            },
            scheduler_config::ShapePoint {
                utilization: 100,
                score: 10
            }
        ]
    );
}

#[test]
fn ratio_shape_is_validated_with_a_location() {
    for (shape, message) in [
        ("[]", "at least one point"),
        (
            "[{utilization: 50, score: 1}, {utilization: 50, score: 2}]",
            "strictly increasing",
        ),
        ("[{utilization: 101, score: 1}]", "from 0 to 100"),
        ("[{utilization: 10, score: 11}]", "from 0 to 10"),
    ] {
        let text = format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {{scoringStrategy: {{type: RequestedToCapacityRatio, requestedToCapacityRatio: {{shape: {shape}}}}}}}\n"
        );
        let (_, diags, _) = load_one(&text);
        let d = diags
            .iter()
            .next()
            .unwrap_or_else(|| panic!("no diagnostic for {shape}"));
        assert!(d.message.contains(message), "{shape}: {}", d.message);
        assert_eq!(d.span.start.line, 6, "{shape}");
    }
}

#[test]
fn object_id_parse() {
    assert_eq!(
        ObjectId::parse("Deployment/default/web").unwrap().to_string(),
        "Deployment/default/web"
    );
    assert_eq!(ObjectId::parse("Node/n1").unwrap().to_string(), "Node/n1");
    assert!(ObjectId::parse("Deployment/web").is_none());
    assert!(ObjectId::parse("web").is_none());
}

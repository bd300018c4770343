use super::*;

fn parse(text: &str) -> (Config, Diagnostics, SourceMap) {
    let mut sources = SourceMap::default();
    let mut diags = Diagnostics::default();
    let c = Config::parse(
        text,
        Path::new(".kivi-lint.yaml"),
        None,
        Path::new("/repo"),
        &mut sources,
        &mut diags,
    );
    (c, diags, sources)
}

#[test]
fn default_config_is_valid() {
    let (c, diags, _) = parse(DEFAULT_CONFIG);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(c.cluster.pools.len(), 3);
    assert_eq!(c.cluster.pools[0].count, 1);
    assert_eq!(c.cluster.pools[0].max, 2);
    assert_eq!(c.events.len(), 2);
    assert_eq!(c.scaling.max_nodes, 6);
}

#[test]
fn full_example_from_the_schema() {
    let text = r#"apiVersion: kivi-lint/v1alpha1
kind: Config
kubernetesVersion: "1.30"
include: ["**"]
exclude: []
helm: {values: [values-prod.yaml], releaseName: release, namespace: default}
cluster:
  nodePools:
    - name: zone-a
      count: 2
      min: 1
      max: 6
      labels: {topology.kubernetes.io/zone: a}
      hostnameLabels: [kubernetes.io/hostname]
      allocatable: {cpu: "4", memory: 16Gi, pods: 110}
      reserved: {cpu: 500m, memory: 1Gi}
      taints: [{key: dedicated, value: db, effect: NoSchedule}]
  initialPods:
    - {workload: Deployment/default/web, node: zone-a-1, count: 2}
scheduler: {scoringStrategy: LeastAllocated, config: kube-scheduler-config.yaml}
descheduler: {policy: deploy/descheduler-policy.yaml, intervalSeconds: 300}
workloads:
  Deployment/default/web:
    usage: {cpu: 300m, memory: 200Mi}
    startup: {cpu: "1", seconds: 300}
events:
  - {type: load-change, workloads: ["*"], max: 200%}
  - {type: node-failure, count: 1, recover: true}
  - {type: node-maintenance}
  - {type: node-drain}
  - {type: node-overload, threshold: 98%}
  - {type: apply, from: main}
  - {type: gitops-sync}
checks:
  enable: []
  disable: []
  severity: {no-replica-oscillation: warning}
  params: {min-replicas-available: {min: 2}, pods-balanced: {maxSkew: 2}, no-eviction-loop: {loops: 3}}
scaling: {maxNodes: 6, podsPerNode: 6, maxTopologies: 100}
suppressions:
  - {check: pods-schedulable, object: Deployment/default/web, reason: "capacity is added by hand", expires: 2027-06-30}
"#;
    let (c, diags, _) = parse(text);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(c.helm.values, vec![PathBuf::from("values-prod.yaml")]);
    let pool = &c.cluster.pools[0];
    assert_eq!((pool.count, pool.min, pool.max), (2, 1, 6));
    assert_eq!(pool.allocatable.cpu_millis, 4000);
    assert_eq!(pool.reserved.memory_bytes, 1 << 30);
    assert_eq!(c.initial_pods[0].count, 2);
    assert_eq!(
        c.descheduler.policy.as_ref().unwrap().value,
        PathBuf::from("/repo/deploy/descheduler-policy.yaml")
    );
    assert_eq!(c.events.len(), 7);
    assert_eq!(
        c.events[4].value,
        EnvironmentEvent::NodeOverload { threshold_percent: 98 }
    );
    assert_eq!(c.checks.params[&CheckId::NoEvictionLoop]["loops"], 3);
    assert_eq!(c.suppressions[0].expires.unwrap().to_string(), "2027-06-30");
    let web = ObjectId::parse("Deployment/default/web").unwrap();
    assert_eq!(c.workloads[&web].startup.as_ref().unwrap().cpu_millis, Some(1000));
}

/// The reader has a rule for every event of the registry the config lists by `type`:
/// none of them is "a bug of kivi-lint" (the reader's answer to one it has no rule for).
#[test]
fn every_registered_event_is_read() {
    for event in crate::events::EVENTS {
        if matches!(event.configured, crate::events::Configured::ByModel) {
            continue;
        }
        let text = format!(
            "apiVersion: kivi-lint/v1alpha1\nkind: Config\nevents: [{{type: {}}}]\n",
            event.name
        );
        let (c, diags, _) = parse(&text);
        let said = format!("{diags:?}");
        assert!(!said.contains("cannot read"), "{}: {said}", event.name);
        assert!(
            c.events.iter().any(|e| e.value.type_name() == event.name) || !diags.is_empty(),
            "{}: neither read nor said why not",
            event.name
        );
    }
}

/// A param below its check's minimum is an error at its value, not raised silently.
#[test]
fn params_below_their_minimum_are_errors() {
    let (c, diags, _) = parse("checks:\n  params: {no-eviction-loop: {loops: 0}, pods-balanced: {maxSkew: -1}}\n");
    let messages: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages,
        ["`loops` must be at least 1", "`maxSkew` must not be negative"],
        "{diags:?}"
    );
    assert!(c.checks.params.values().all(BTreeMap::is_empty));
}

#[test]
fn cluster_autoscaler_and_zones() {
    let (c, diags, _) = parse(
        "cluster:\n  nodePools:\n    - {name: workers, count: 3, min: 3, max: 6, zones: [a, b, c], allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\n    - {name: fixed, count: 1, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: [{type: cluster-autoscaler, scaleDownUtilization: 60%}]\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let workers = &c.cluster.pools[0];
    assert_eq!(workers.zones, ["a", "b", "c"]);
    assert_eq!(
        workers.node_labels(4).get(cluster::ZONE_LABEL).map(String::as_str),
        Some("a")
    );
    assert_eq!(
        workers.node_labels(2).get(cluster::ZONE_LABEL).map(String::as_str),
        Some("b")
    );
    let event = &c.events[0].value;
    assert_eq!(
        *event,
        EnvironmentEvent::ClusterAutoscaler {
            pools: vec!["*".into()],
            scale_down_utilization: 60
        }
    );
    assert!(event.autoscales(workers));
    assert!(
        !event.autoscales(&c.cluster.pools[1]),
        "a fixed-size pool does not scale"
    );

    let (_, diags, _) = parse(
        "cluster:\n  nodePools:\n    - {name: w, count: 1, max: 2, zones: [a, a], labels: {topology.kubernetes.io/zone: a}, allocatable: {cpu: '4', memory: 16Gi, pods: 110}}\nevents: [{type: cluster-autoscaler, pools: [nope]}]\n",
    );
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(messages.iter().any(|m| m.contains("sets both `zones`")), "{messages:?}");
    assert!(
        messages.iter().any(|m| m.contains("lists a zone twice")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("no node pool is named `nope`")),
        "{messages:?}"
    );
}

#[test]
fn faults() {
    let (c, diags, _) = parse("faults: [stale-reads]\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(c.stale_reads.map(|s| s.value), Some(1));
    let (c, diags, _) = parse("faults: [{type: stale-reads, lag: 3}]\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(c.stale_reads.map(|s| s.value), Some(3));
    let (c, _, _) = parse("\n");
    assert!(c.stale_reads.is_none() && c.controller_lag.is_none());
    let (c, diags, _) = parse("faults: [controller-lag, stale-reads]\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert!(c.controller_lag.is_some() && c.stale_reads.is_some());
    let (_, diags, _) = parse("faults: [crash-restart, {type: stale-reads, lag: 9}]\n");
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("unknown fault `crash-restart`")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("`lag` must be from 1 to 4")),
        "{messages:?}"
    );
}

#[test]
fn unknown_fields_are_located_with_a_suggestion() {
    let (_, diags, sources) =
        parse("apiVersion: kivi-lint/v1alpha1\nkind: Config\nscaling: {maxNode: 6}\nclustr: {}\n");
    let d: Vec<_> = diags.iter().collect();
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(
        crate::diagnostics::location_string(&sources, d[0].span),
        ".kivi-lint.yaml:4:1"
    );
    assert_eq!(d[1].help.as_deref(), Some("did you mean `maxNodes`?"));
}

#[test]
fn bad_values() {
    let (_, diags, _) = parse(
        "checks: {enable: [no-such-check], severity: {pods-schedulable: fatal}}\nsuppressions: [{check: pods-schedulable, object: web, reason: x, expires: 2027-02-30}]\nevents: [{type: earthquake}]\ncluster: {initialPods: [{workload: Deployment/default/web, node: zone-z-1}]}\n",
    );
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("unknown check `no-such-check`")),
        "{messages:?}"
    );
    assert!(messages.iter().any(|m| m.contains("severity must be")));
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`object` must be `Kind/namespace/name`"))
    );
    assert!(messages.iter().any(|m| m.contains("`type` must be one of")));
    assert!(
        messages
            .iter()
            .any(|m| m.contains("node `zone-z-1` is not in the cluster"))
    );
}

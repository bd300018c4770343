//! No input panics (issue 40): generated repositories (manifests of every kind kivi-lint
//! reads, with values at and past the edges Kubernetes allows; configs; kustomizations) go
//! through discovery, the manifest readers, the units, every topology's IR and the PROMELA
//! model. Nothing runs SPIN: the property is that each stage either builds its output or says
//! why, never panics. Bounded: `KIVI_FUZZ_CASES` cases (default 192, a few seconds).
//!
//! Regressions: proptest keeps the seeds of failing cases in `tests/fuzz.proptest-regressions`
//! and replays them first; the crashes found so far are also spelled out as tests below.

use std::path::Path;

use kivi_lint::analysis::{Request, analyze};
use kivi_lint::model::Generator;
use kivi_lint::search::{self, Subject};
use proptest::prelude::*;

/// Integers at and past the edges: negative, zero, small, the model's bounds, int32's.
fn int() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-1".to_string()),
        Just("0".to_string()),
        (1u32..8).prop_map(|n| n.to_string()),
        Just("100".to_string()),
        Just("10000".to_string()),
        Just("10001".to_string()),
        Just("2147483647".to_string()),
        Just("2147483648".to_string()),
        Just("\"3\"".to_string()),
        Just("1.5".to_string()),
        Just("null".to_string()),
    ]
}

fn percent_or_int() -> impl Strategy<Value = String> {
    prop_oneof![
        int(),
        Just("0%".to_string()),
        Just("25%".to_string()),
        Just("100%".to_string()),
        Just("150%".to_string()),
        Just("-5%".to_string()),
        Just("abc".to_string()),
    ]
}

fn quantity() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("100m".to_string()),
        Just("0".to_string()),
        Just("\"2\"".to_string()),
        Just("-1".to_string()),
        Just("1e3".to_string()),
        Just("9Ei".to_string()),
        Just("0.5".to_string()),
        Just("64Mi".to_string()),
        Just("\"\"".to_string()),
        Just("7".to_string()),
    ]
}

fn label() -> impl Strategy<Value = String> {
    prop_oneof![Just("a".to_string()), Just("b".to_string())]
}

fn zone_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("topology.kubernetes.io/zone".to_string()),
        Just("kubernetes.io/hostname".to_string()),
        Just("rack".to_string()),
        Just("\"\"".to_string()),
    ]
}

/// A pod spec with random scheduling constraints.
fn pod_spec() -> impl Strategy<Value = String> {
    (
        quantity(),
        quantity(),
        prop::option::of((int(), zone_key(), prop::bool::ANY, label())),
        prop::option::of((zone_key(), label(), prop::bool::ANY)),
        prop::option::of(label()),
        prop::option::of(int()),
    )
        .prop_map(|(cpu, memory, spread, anti, selector, priority)| {
            let mut spec = format!(
                "      containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: {cpu}, memory: {memory}}}, limits: {{cpu: {cpu}}}}}}}]\n"
            );
            if let Some((skew, key, hard, app)) = spread {
                let when = if hard { "DoNotSchedule" } else { "ScheduleAnyway" };
                spec.push_str(&format!(
                    "      topologySpreadConstraints: [{{maxSkew: {skew}, topologyKey: {key}, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: {app}}}}}}}]\n"
                ));
            }
            if let Some((key, app, required)) = anti {
                if required {
                    spec.push_str(&format!(
                        "      affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{{topologyKey: {key}, labelSelector: {{matchLabels: {{app: {app}}}}}}}]}}}}\n"
                    ));
                } else {
                    spec.push_str(&format!(
                        "      affinity: {{podAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 50, podAffinityTerm: {{topologyKey: {key}, labelSelector: {{matchLabels: {{app: {app}}}}}}}}}]}}}}\n"
                    ));
                }
            }
            if let Some(zone) = selector {
                spec.push_str(&format!("      nodeSelector: {{topology.kubernetes.io/zone: zone-{zone}}}\n"));
            }
            if let Some(p) = priority {
                spec.push_str(&format!("      priority: {p}\n"));
            }
            spec
        })
}

/// One object of a kind kivi-lint reads.
fn object() -> impl Strategy<Value = String> {
    let workload = (
        prop_oneof![
            Just("Deployment"),
            Just("StatefulSet"),
            Just("DaemonSet"),
            Just("ReplicaSet")
        ],
        label(),
        int(),
        pod_spec(),
        prop::option::of((percent_or_int(), percent_or_int())),
    )
        .prop_map(|(kind, app, replicas, spec, rolling)| {
            let strategy = match (kind, rolling) {
                ("Deployment", Some((surge, unavailable))) => format!(
                    "  strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {surge}, maxUnavailable: {unavailable}}}}}\n"
                ),
                _ => String::new(),
            };
            format!(
                "apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: {app}}}\nspec:\n  replicas: {replicas}\n{strategy}  selector: {{matchLabels: {{app: {app}}}}}\n  template:\n    metadata: {{labels: {{app: {app}}}}}\n    spec:\n{spec}"
            )
        });
    let hpa = (label(), int(), int(), int(), prop::bool::ANY).prop_map(|(app, min, max, target, behavior)| {
        let behavior = if behavior {
            "  behavior: {scaleDown: {stabilizationWindowSeconds: 0, policies: [{type: Percent, value: 100, periodSeconds: 15}]}}\n"
        } else {
            ""
        };
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {app}}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {app}}}\n  minReplicas: {min}\n  maxReplicas: {max}\n  metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: {target}}}}}}}]\n{behavior}"
        )
    });
    let pdb = (label(), percent_or_int(), prop::bool::ANY).prop_map(|(app, value, min)| {
        let field = if min { "minAvailable" } else { "maxUnavailable" };
        format!(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {app}}}\nspec:\n  {field}: {value}\n  selector: {{matchLabels: {{app: {app}}}}}\n"
        )
    });
    let service = label().prop_map(|app| {
        format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {app}}}\nspec:\n  selector: {{app: {app}}}\n")
    });
    let pod = (label(), pod_spec()).prop_map(|(app, spec)| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {app}-pod, labels: {{app: {app}}}}}\nspec:\n{}",
            spec.lines().map(|l| format!("{}\n", &l[4..])).collect::<String>()
        )
    });
    prop_oneof![4 => workload, 2 => hpa, 2 => pdb, 1 => service, 1 => pod]
}

/// A config: node pools with random sizes and capacities, random events and bounds.
fn config() -> impl Strategy<Value = String> {
    let pool = (label(), int(), int(), int(), quantity(), int(), prop::bool::ANY).prop_map(
        |(zone, count, min, max, cpu, pods, tainted)| {
            let taints = if tainted {
                ", taints: [{key: dedicated, value: db, effect: NoSchedule}]"
            } else {
                ""
            };
            format!(
                "  - {{name: zone-{zone}, count: {count}, min: {min}, max: {max}, labels: {{topology.kubernetes.io/zone: zone-{zone}}}, allocatable: {{cpu: {cpu}, memory: 8Gi, pods: {pods}}}{taints}}}\n"
            )
        },
    );
    let event = prop_oneof![
        Just("{type: load-change, workloads: [\"*\"], max: 200%}"),
        Just("{type: node-failure, count: 1, recover: true}"),
        Just("{type: node-drain}"),
        Just("{type: node-maintenance}"),
        Just("{type: node-overload, threshold: 98%}"),
        Just("{type: rollout}"),
        Just("{type: load-change, max: -5%}"),
        Just("{type: node-failure, count: 0}"),
    ];
    (
        prop::collection::vec(pool, 0..4),
        prop::collection::vec(event, 0..3),
        int(),
        int(),
    )
        .prop_map(|(pools, events, max_nodes, pods_per_node)| {
            let mut text = String::from("cluster:\n  nodePools:\n");
            if pools.is_empty() {
                text.push_str("  []\n");
            }
            for p in pools {
                text.push_str(&p);
            }
            text.push_str(&format!("events: [{}]\n", events.join(", ")));
            text.push_str(&format!(
                "scaling: {{maxNodes: {max_nodes}, podsPerNode: {pods_per_node}}}\n"
            ));
            text
        })
}

/// A repository: manifests in one or two files, maybe a config, maybe a kustomization over
/// the second file.
#[derive(Debug, Clone)]
struct Repository {
    first: Vec<String>,
    second: Vec<String>,
    config: Option<String>,
    kustomization: bool,
}

fn repository() -> impl Strategy<Value = Repository> {
    (
        prop::collection::vec(object(), 1..5),
        prop::collection::vec(object(), 0..3),
        prop::option::weighted(0.6, config()),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(first, second, config, kustomization)| Repository {
            first,
            second,
            config,
            kustomization,
        })
}

/// Through every stage but SPIN; panics are the failures.
fn analyse_and_model(dir: &Path, repository: &Repository) {
    std::fs::create_dir_all(dir.join("overlay")).unwrap();
    std::fs::write(dir.join("app.yaml"), repository.first.join("---\n")).unwrap();
    if !repository.second.is_empty() {
        let second = if repository.kustomization {
            "overlay/more.yaml"
        } else {
            "more.yaml"
        };
        std::fs::write(dir.join(second), repository.second.join("---\n")).unwrap();
        if repository.kustomization {
            std::fs::write(
                dir.join("overlay/kustomization.yaml"),
                "resources: [more.yaml]\nnamePrefix: p-\nreplicas: [{name: a, count: 4}]\n",
            )
            .unwrap();
        }
    }
    if let Some(config) = &repository.config {
        std::fs::write(dir.join(".kivi-lint.yaml"), config).unwrap();
    }
    let analysis = analyze(&Request {
        paths: vec![dir.to_path_buf()],
        config: None,
        stdin_filename: None,
        render: true,
        jobs: 1,
        allow_outside_repository: false,
        allow_empty: true,
        repository: None,
        file_ids_from: 0,
        strict: false,
        network: Default::default(),
        cluster_state: None,
    });
    for d in analysis.diagnostics.iter() {
        assert!(d.span.start.line >= 1 && d.span.start.column >= 1, "{d:?}");
        let _ = kivi_lint::diagnostics::render(d, &analysis.sources, false);
    }
    let generator = Generator::new().expect("the templates");
    let units: Vec<usize> = (0..analysis.units.len()).collect();
    let _ = search::plan(Subject::of(&analysis), &units, &generator, &search::Options::default());
}

fn cases() -> u32 {
    std::env::var("KIVI_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(192)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("tests/fuzz.proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]
    #[test]
    fn no_generated_repository_panics(repository in repository()) {
        let dir = tempfile::tempdir().unwrap();
        analyse_and_model(dir.path(), &repository);
    }
}

/// The crash issue 40 found: an HPA whose `maxReplicas` is below its `minReplicas` printed its
/// input error, then panicked building the model (`min > max`).
#[test]
fn an_hpa_with_max_below_min_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    analyse_and_model(
        dir.path(),
        &Repository {
            first: vec![
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec:\n      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]\n".into(),
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: a}\n  minReplicas: 5\n  maxReplicas: 3\n".into(),
            ],
            second: Vec::new(),
            config: None,
            kustomization: false,
        },
    );
}

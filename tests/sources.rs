//! What a GitOps repository deploys, rendered for real: Helm charts with `file://` and remote
//! dependencies, chart-testing values, charts that need values, Flux HelmReleases and Flux
//! post-build substitution, with a real `helm` (scripts/setup installs it) and the network off.
//! Fixtures: `fixtures/helm-sources`, `fixtures/flux-postbuild` (their READMEs say what each
//! case is and where it comes from).

mod common;

use common::kivi;
use serde_json::Value;

fn helm_on_path() {
    common::tool(&["helm"], "scripts/install-helm");
}

fn json(args: &[&str], code: i32) -> Value {
    let out = kivi().args(args).assert().code(code).get_output().stdout.clone();
    serde_json::from_slice(&out).expect("stdout is JSON")
}

/// Two replicas of `web` and a budget that lets one go: a deployer's patch changes it.
const WEB_WITH_PDB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web:1, resources: {requests: {cpu: 100m}}}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n";

fn unit<'v>(v: &'v Value, scope: &str) -> &'v Value {
    v["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["scope"] == scope)
        .unwrap_or_else(|| panic!("no unit of scope {scope}: {v}"))
}

fn verdict(u: &Value, check: &str) -> String {
    u["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == check)
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn charts_render_with_their_sources_and_what_cannot_be_had_is_a_counted_note() {
    helm_on_path();
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "fixtures/helm-sources"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);

    // A `file://` dependency is rendered with its parent, located in its own templates, with
    // the parent's values (3 replicas, no autoscaler).
    let umbrella = unit(&v, "fixtures/helm-sources/charts/umbrella");
    let members = umbrella["members"].as_array().unwrap();
    assert!(
        members
            .iter()
            .any(|m| m["kind"] == "Deployment"
                && m["file"] == "fixtures/helm-sources/charts/web/templates/deployment.yaml"),
        "{umbrella}"
    );
    assert!(
        !members.iter().any(|m| m["kind"] == "HorizontalPodAutoscaler"),
        "{umbrella}"
    );

    // chart-testing: one scope per `ci/*-values.yaml`.
    unit(&v, "fixtures/helm-sources/charts/tested/ci/large-values.yaml");
    unit(&v, "fixtures/helm-sources/charts/tested/ci/small-values.yaml");

    // The HelmRelease's chart, as helm-controller installs it: release `shop-web`
    // (targetNamespace-name) in `shop`, the ConfigMap's 5 replicas and the inline
    // `minAvailable: 5`, which blocks every drain.
    let release = unit(&v, "fixtures/helm-sources/flux (HelmRelease flux-system/web)");
    assert_eq!(release["name"], "shop/shop-web-web", "{release}");
    assert_eq!(verdict(release, "drain-completes"), "violated", "{release}");
    // Deployed by the HelmRelease, the chart is not also verified alone with its default
    // values, which nobody installs.
    assert!(
        !v["units"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["scope"] == "fixtures/helm-sources/charts/web"),
        "{v}"
    );

    // What cannot be rendered: one located note each, counted, never an error.
    assert_eq!(v["summary"]["errors"], 0, "{stderr}");
    let limits: Vec<(&str, &str)> = v["summary"]["notRendered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["limit"].as_str().unwrap(), n["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        limits,
        vec![
            ("network-off", "chart fixtures/helm-sources/charts/remote-dep"),
            ("needs-values", "chart fixtures/helm-sources/charts/needs-values"),
            (
                "network-off",
                "HelmRelease podinfo/podinfo in fixtures/helm-sources/flux"
            ),
        ]
    );
    for at in [
        "fixtures/helm-sources/charts/remote-dep/Chart.yaml:7:17",
        "fixtures/helm-sources/charts/needs-values/templates/deployment.yaml:15:20",
        "fixtures/helm-sources/flux/releases.yaml:43:14",
    ] {
        assert!(stderr.contains(at), "{at} in {stderr}");
    }
    assert!(stderr.contains("image.tag is required"), "{stderr}");

    // --strict: every one of them is an input error.
    let strict = json(&["units", "--format", "json", "--strict", "fixtures/helm-sources"], 2);
    assert_eq!(strict["summary"]["errors"], 3, "{strict}");
}

#[test]
fn the_coverage_line_ends_the_human_report() {
    helm_on_path();
    let out = kivi()
        .args(["units", "--color", "never", "fixtures/helm-sources"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8_lossy(&out);
    assert!(
        stdout.ends_with(
            "coverage: 4 of 4 workloads in verification units; not rendered: 2 (remote source, network off), 1 (chart needs values)\n"
        ),
        "{stdout}"
    );
}

#[test]
fn flux_post_build_values_reach_the_verified_objects_and_locate_the_finding() {
    let v = json(&["--format", "json", "--no-fixes", "fixtures/flux-postbuild"], 1);
    let u = &v["units"][0];
    // `${APP_NAMESPACE}` and `${API_REPLICAS}` from the ConfigMap of `substituteFrom`.
    assert_eq!(u["name"], "payments/api", "{u}");
    let drain = u["verification"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "drain-completes")
        .unwrap();
    assert_eq!(drain["verdict"], "violated", "{drain}");
    // `minAvailable: ${MIN_AVAILABLE}` is decided by the Kustomization's `substitute`: the
    // finding points there.
    let text = drain.to_string();
    assert!(
        text.contains("fixtures/flux-postbuild/clusters/production/apps.yaml"),
        "{text}"
    );
    assert!(v["summary"]["notRendered"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn a_placeholder_nothing_fills_leaves_its_document_out_with_a_note() {
    let dir = assert_fs::TempDir::new().unwrap();
    let manifest = dir.path().join("app.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ${NAMESPACE}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: \"web:${TAG}\"}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: ${NAMESPACE:-shop}\nspec:\n  replicas: ${REPLICAS:-2}\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      containers: [{name: api, image: \"api:${TAG}\"}]\n",
    )
    .unwrap();
    let path = manifest.to_str().unwrap();
    let out = kivi()
        .args(["units", "--format", "json", path])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `api` has defaults for what is read (an image tag is not): verified as `shop/api`.
    assert_eq!(v["units"][0]["name"], "shop/api", "{v}");
    assert_eq!(v["units"].as_array().unwrap().len(), 1, "{v}");
    assert!(stderr.contains("app.yaml:5:14"), "{stderr}");
    assert!(
        stderr.contains("`${NAMESPACE}` is filled in at deploy time"),
        "{stderr}"
    );
    assert_eq!(v["summary"]["notRendered"][0]["limit"], "placeholder", "{v}");
}

/// A Helm chart repository on loopback serving podinfo's chart (packaged from the corpus copy
/// of stefanprodan/podinfo), and a copy of fluxcd/flux2-kustomize-helm-example whose
/// HelmRepository points at it.
struct HelmRepositoryCase {
    dir: assert_fs::TempDir,
    server: common::FileServer,
}

/// `kivi-lint --format json --no-fixes --cache-dir CACHE [extra] REPO`: the report and
/// stderr, the exit code asserted.
fn scan(repo: &std::path::Path, cache: &std::path::Path, extra: &[&str], code: i32) -> (Value, String) {
    let out = kivi()
        .args(["--format", "json", "--no-fixes", "--cache-dir", cache.to_str().unwrap()])
        .args(extra)
        .arg(repo)
        .assert()
        .code(code)
        .get_output()
        .clone();
    (
        serde_json::from_slice(&out.stdout).expect("JSON"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn corpus(repo: &str) -> Option<std::path::PathBuf> {
    common::shared_corpus(&format!("real/{repo}"))
}

impl HelmRepositoryCase {
    /// `None` where the shared corpus (podinfo's chart, Flux's example) is not beside the clone.
    fn new(repository_url: impl Fn(u16) -> String) -> Option<HelmRepositoryCase> {
        helm_on_path();
        let podinfo = corpus("stefanprodan__podinfo")?;
        let example = corpus("fluxcd__flux2-kustomize-helm-example")?;
        let dir = assert_fs::TempDir::new().unwrap();
        let charts = dir.path().join("charts");
        std::fs::create_dir_all(&charts).unwrap();
        let helm = |args: &[&str]| {
            let out = std::process::Command::new("helm").args(args).output().unwrap();
            assert!(
                out.status.success(),
                "helm {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let chart = podinfo.join("charts/podinfo");
        helm(&["package", chart.to_str().unwrap(), "-d", charts.to_str().unwrap()]);
        let server = common::FileServer::start(&charts);
        let url = format!("http://127.0.0.1:{}", server.port);
        helm(&["repo", "index", charts.to_str().unwrap(), "--url", &url]);
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        common::copy_tree(&example, &repo);
        let source = repo.join("apps/base/podinfo/repository.yaml");
        let text = std::fs::read_to_string(&source)
            .unwrap()
            .replace("https://stefanprodan.github.io/podinfo", &repository_url(server.port));
        std::fs::remove_file(&source).unwrap();
        std::fs::write(&source, text).unwrap();
        // Its infrastructure charts come from OCI registries on the internet, which this
        // machine cannot reach (`oci_charts_of_flux_and_argo_cd_...` serves one on loopback).
        let controllers = repo.join("infrastructure/controllers");
        for file in ["cert-manager.yaml", "envoy-gateway.yaml", "kustomization.yaml"] {
            std::fs::remove_file(controllers.join(file)).unwrap();
        }
        std::fs::write(
            controllers.join("kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
        )
        .unwrap();
        Some(HelmRepositoryCase { dir, server })
    }

    fn run(&self, extra: &[&str], code: i32) -> (Value, String) {
        scan(
            &self.dir.path().join("repo"),
            &self.dir.path().join("cache"),
            extra,
            code,
        )
    }
}

#[test]
fn flux_helm_releases_render_a_fetched_chart_with_each_environments_values_then_offline() {
    let Some(case) = HelmRepositoryCase::new(|port| format!("http://127.0.0.1:{port}")) else {
        return;
    };
    // The network off: one note per HelmRelease, nothing asked of the server.
    let (v, _) = case.run(&[], 0);
    assert_eq!(v["summary"]["units"], 0, "{v}");
    assert_eq!(v["summary"]["notRendered"].as_array().unwrap().len(), 2, "{v}");
    assert!(case.server.requests().is_empty());

    // Allowed, with the test's own allow-list: podinfo in staging and in production.
    let (v, stderr) = case.run(&["--allow-network", "--allow-host", "127.0.0.1"], 0);
    let units: Vec<(&str, &str)> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["name"].as_str().unwrap(), u["scope"].as_str().unwrap()))
        .collect();
    for env in ["staging", "production"] {
        assert!(
            units.iter().any(|(name, scope)| name.starts_with("podinfo/podinfo")
                && scope.contains(&format!("apps/{env}"))
                && scope.ends_with("(HelmRelease podinfo/podinfo)")),
            "{env}: {units:?}\n{stderr}"
        );
    }
    for u in v["units"].as_array().unwrap() {
        for c in u["verification"]["results"].as_array().unwrap() {
            assert_ne!(c["verdict"], "violated", "{c}");
        }
    }
    let fetched = v["summary"]["fetched"].as_array().unwrap();
    assert_eq!(fetched.len(), 1, "{v}");
    assert_eq!(fetched[0]["name"], "podinfo");
    assert_eq!(fetched[0]["digest"].as_str().unwrap().len(), 64);
    let asked = case.server.requests();
    assert!(asked.contains(&"/index.yaml".to_string()), "{asked:?}");

    // The network off again: the cache renders the same releases, and nothing is asked.
    let (again, _) = case.run(&[], 0);
    assert_eq!(again["summary"]["units"], v["summary"]["units"], "{again}");
    assert_eq!(again["summary"]["fetched"][0]["cached"], true, "{again}");
    assert_eq!(case.server.requests(), asked);
}

#[test]
fn the_network_policy_refuses_loopback_metadata_private_and_file_urls() {
    for url in [
        |port: u16| format!("http://127.0.0.1:{port}"),
        |port: u16| format!("https://127.0.0.1:{port}"),
        |_| "https://169.254.169.254/charts".to_string(),
        |_| "https://10.0.0.1/charts".to_string(),
        |_| "file:///etc".to_string(),
    ] {
        let Some(case) = HelmRepositoryCase::new(url) else {
            return;
        };
        // No allow-list: only public https hosts.
        let (v, stderr) = case.run(&["--allow-network"], 2);
        assert_eq!(v["summary"]["units"], 0, "{v}");
        assert!(
            stderr.contains("cannot be fetched") || stderr.contains("is not verified"),
            "{stderr}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(case.server.requests().is_empty(), "{:?}", case.server.requests());
    }
}

fn helm(args: &[&str]) {
    let out = std::process::Command::new("helm").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Helm chart repository on loopback (under `dir`) holding one chart `name` at `version`,
/// whose one template is a StatefulSet `<release>-<name>`; the server and its URL.
fn serve_chart(dir: &std::path::Path, name: &str, version: &str) -> (common::FileServer, String) {
    let chart = dir.join("chart-source").join(name);
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\n"),
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/statefulset.yaml"),
        format!("apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{{{ .Release.Name }}}}-{name}\nspec:\n  replicas: 1\n  serviceName: {name}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: {name}, image: {name}:1}}]\n"),
    )
    .unwrap();
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    helm(&["package", chart.to_str().unwrap(), "-d", served.to_str().unwrap()]);
    let server = common::FileServer::start(&served);
    let url = format!("http://127.0.0.1:{}", server.port);
    helm(&["repo", "index", served.to_str().unwrap(), "--url", &url]);
    (server, url)
}

#[test]
fn argo_cd_applications_render_their_charts_with_release_namespace_values_and_dependencies() {
    helm_on_path();
    let dir = assert_fs::TempDir::new().unwrap();
    let (server, url) = serve_chart(dir.path(), "wordpress", "9.0.3");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let Some(example) = common::shared_corpus("ecosystem2/argoproj__argocd-example-apps") else {
        return;
    };
    common::copy_tree(&example, &repo);
    let chart_file = repo.join("helm-dependency/Chart.yaml");
    let text = std::fs::read_to_string(&chart_file)
        .unwrap()
        .replace("https://charts.helm.sh/stable", &url);
    std::fs::remove_file(&chart_file).unwrap();
    std::fs::write(&chart_file, text).unwrap();
    let out = kivi()
        .args([
            "units",
            "--format",
            "json",
            "--allow-network",
            "--allow-host",
            "127.0.0.1",
            "--cache-dir",
        ])
        .arg(dir.path().join("cache"))
        .arg(&repo)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let names: Vec<(&str, &str)> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["name"].as_str().unwrap(), u["scope"].as_str().unwrap()))
        .collect();
    let has = |name: &str, scope_end: &str| names.iter().any(|(n, s)| *n == name && s.ends_with(scope_end));
    // The app of apps (`apps`) renders Applications; the one of helm-guestbook renders that
    // chart as Argo CD does: release `helm-guestbook` in its destination namespace.
    assert!(
        has("helm-guestbook/helm-guestbook", "(Application example.helm-guestbook)"),
        "{names:?}"
    );
    // helm-dependency's `wordpress` comes from the chart repository on loopback.
    assert!(
        !has("helm-dependency/release-wordpress", "helm-dependency"),
        "{names:?}"
    );
    assert!(
        has(
            "helm-dependency/helm-dependency-wordpress",
            "(Application example.helm-dependency)"
        ),
        "{names:?}"
    );
    // A plain directory an Application deploys takes its destination namespace.
    assert!(has("guestbook/guestbook-ui", "guestbook"), "{names:?}");
    assert!(server.requests().contains(&"/index.yaml".to_string()));
    assert_eq!(v["summary"]["errors"], 0, "{v}");
}

#[test]
fn a_remote_chart_dependency_is_fetched_into_the_cache_and_located_at_its_entry() {
    helm_on_path();
    let dir = assert_fs::TempDir::new().unwrap();
    // A chart repository on loopback holding `redis` 19.0.0.
    let (server, url) = serve_chart(dir.path(), "redis", "19.0.0");
    // The fixture's chart, its dependency pointed at that repository.
    let chart = dir.path().join("repo/remote-dep");
    std::fs::create_dir_all(&chart).unwrap();
    let text = std::fs::read_to_string(common::root().join("fixtures/helm-sources/charts/remote-dep/Chart.yaml"))
        .unwrap()
        .replace("https://charts.example.com/stable", &url);
    std::fs::write(chart.join("Chart.yaml"), text).unwrap();
    let cache = dir.path().join("cache");
    let run = |extra: &[&str]| {
        let out = kivi()
            .args(["units", "--format", "json", "--cache-dir", cache.to_str().unwrap()])
            .args(extra)
            .arg(&chart)
            .assert()
            .code(0)
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<Value>(&out).unwrap()
    };
    let v = run(&["--allow-network", "--allow-host", "127.0.0.1"]);
    let member = &v["units"][0]["members"][0];
    assert_eq!(member["name"], "release-redis", "{v}");
    // Its templates are not in the repository: the finding would point at the dependency.
    assert!(
        member["file"].as_str().unwrap().ends_with("remote-dep/Chart.yaml"),
        "{member}"
    );
    assert_eq!(member["line"], 7, "{member}");
    assert_eq!(v["summary"]["fetched"][0]["version"], "19.0.0", "{v}");
    let asked = server.requests();
    assert_eq!(asked.len(), 2, "the index and the archive: {asked:?}");
    // Offline, from the cache.
    let again = run(&[]);
    assert_eq!(again["units"][0]["members"][0]["name"], "release-redis", "{again}");
    assert_eq!(server.requests(), asked);
}

#[test]
fn an_application_set_git_directory_generator_makes_one_scope_per_directory() {
    let v = json(&["units", "--format", "json", "fixtures/argocd-appset"], 0);
    let scopes: Vec<(&str, &str)> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["name"].as_str().unwrap(), u["scope"].as_str().unwrap()))
        .collect();
    assert_eq!(
        scopes,
        vec![
            // Each generated Application's destination namespace is its directory's name.
            ("api/api", "fixtures/argocd-appset/apps/api"),
            // Excluded from the generator: deployed by nothing here, checked as plain files.
            ("default/legacy", "fixtures/argocd-appset/apps/legacy"),
            ("web/web", "fixtures/argocd-appset/apps/web"),
            // `apps/web` is one Application (`directory.recurse`): its worker is deployed with it.
            ("web/web-worker", "fixtures/argocd-appset/apps/web"),
        ]
    );
}

#[test]
fn a_flux_kustomization_target_namespace_and_patches_reach_what_it_deploys() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("clusters/prod")).unwrap();
    std::fs::create_dir_all(root.join("apps/web")).unwrap();
    std::fs::write(
        root.join("clusters/prod/apps.yaml"),
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps/web\n  targetNamespace: shop\n  sourceRef: {kind: GitRepository, name: flux-system}\n  patches:\n    - target: {kind: PodDisruptionBudget, name: web}\n      patch: |\n        - op: replace\n          path: /spec/minAvailable\n          value: 2\n",
    )
    .unwrap();
    std::fs::write(root.join("apps/web/web.yaml"), WEB_WITH_PDB).unwrap();
    let v = json(&["--format", "json", "--no-fixes", root.to_str().unwrap()], 1);
    let u = &v["units"][0];
    assert_eq!(u["name"], "shop/web", "{u}");
    // The patched `minAvailable: 2` of two replicas blocks every drain, located at the patch.
    assert_eq!(verdict(u, "drain-completes"), "violated", "{u}");
    assert!(u.to_string().contains("clusters/prod/apps.yaml"), "{u}");
}

#[test]
fn an_argo_cd_application_gives_its_destination_namespace_and_kustomize_patches() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("argocd")).unwrap();
    std::fs::create_dir_all(root.join("apps/web")).unwrap();
    std::fs::write(
        root.join("argocd/web.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source:\n    repoURL: https://example.com/platform.git\n    path: apps/web\n    kustomize:\n      patches:\n        - target: {kind: PodDisruptionBudget}\n          patch: |\n            - op: replace\n              path: /spec/minAvailable\n              value: 2\n",
    )
    .unwrap();
    std::fs::write(root.join("apps/web/web.yaml"), WEB_WITH_PDB).unwrap();
    let v = json(&["--format", "json", "--no-fixes", root.to_str().unwrap()], 1);
    let u = &v["units"][0];
    assert_eq!(u["name"], "shop/web", "{u}");
    assert_eq!(verdict(u, "drain-completes"), "violated", "{u}");
    assert!(u.to_string().contains("argocd/web.yaml"), "{u}");
}

#[test]
fn a_flux_kustomization_substitutes_what_its_kustomization_builds_from_elsewhere() {
    // fluxcd/flux2-hub-spoke-example's layout: the cluster's path is a kustomization whose
    // resources are a shared directory; each cluster substitutes its own name.
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    for cluster in ["staging", "production"] {
        std::fs::create_dir_all(root.join(format!("clusters/{cluster}/web"))).unwrap();
        std::fs::write(
            root.join(format!("clusters/{cluster}/web/kustomization.yaml")),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../../deploy/web\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("hub")).unwrap();
        std::fs::write(
            root.join(format!("hub/{cluster}.yaml")),
            format!("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: web, namespace: {cluster}}}\nspec:\n  path: ./clusters/{cluster}/web\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n  postBuild:\n    substitute:\n      CLUSTER_NAME: {cluster}\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(root.join("deploy/web")).unwrap();
    std::fs::write(
        root.join("deploy/web/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [web.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        root.join("deploy/web/web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: \"${CLUSTER_NAME}\"}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web:1}]\n",
    )
    .unwrap();
    let v = json(&["units", "--format", "json", root.to_str().unwrap()], 0);
    let mut names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, vec!["production/web", "staging/web"], "{v}");
    assert!(v["summary"]["notRendered"].as_array().unwrap().is_empty(), "{v}");
}

/// A kustomization of `WEB_WITH_PDB` at `apps/web`, and a component at `components/strict`
/// whose patch makes the PDB's `minAvailable` 2: every drain is then blocked.
fn web_kustomization_with_component(root: &std::path::Path) {
    std::fs::create_dir_all(root.join("apps/web")).unwrap();
    std::fs::write(root.join("apps/web/web.yaml"), WEB_WITH_PDB).unwrap();
    std::fs::write(
        root.join("apps/web/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [web.yaml]\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("components/strict")).unwrap();
    std::fs::write(
        root.join("components/strict/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n  - target: {kind: PodDisruptionBudget}\n    patch: |\n      - op: replace\n        path: /spec/minAvailable\n        value: 2\n",
    )
    .unwrap();
}

#[test]
fn a_flux_kustomization_builds_its_path_with_its_components_and_name_suffix() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    web_kustomization_with_component(root);
    std::fs::create_dir_all(root.join("clusters/eu")).unwrap();
    std::fs::write(
        root.join("clusters/eu/apps.yaml"),
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps/web\n  sourceRef: {kind: GitRepository, name: flux-system}\n  nameSuffix: -eu\n  components: [../../components/strict]\n",
    )
    .unwrap();
    let v = json(&["--format", "json", "--no-fixes", root.to_str().unwrap()], 1);
    let units = v["units"].as_array().unwrap();
    // Only the build Flux applies is verified: the path alone is deployed by nobody.
    assert_eq!(units.len(), 1, "{v}");
    let u = &units[0];
    assert_eq!(u["name"], "default/web-eu", "{u}");
    assert!(
        u["scope"]
            .as_str()
            .unwrap()
            .ends_with("apps/web (Kustomization flux-system/apps)"),
        "{u}"
    );
    assert_eq!(verdict(u, "drain-completes"), "violated", "{u}");
    assert!(u.to_string().contains("components/strict/kustomization.yaml"), "{u}");
}

#[test]
fn an_argo_cd_kustomize_source_applies_its_prefix_labels_replicas_and_components() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    web_kustomization_with_component(root);
    std::fs::create_dir_all(root.join("argocd")).unwrap();
    std::fs::write(
        root.join("argocd/web.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source:\n    repoURL: https://example.com/platform.git\n    path: apps/web\n    kustomize:\n      namePrefix: prod-\n      commonLabels: {team: shop}\n      images: [web=registry.example.com/web:2]\n      replicas:\n        - name: web\n          count: 1\n",
    )
    .unwrap();
    let v = json(&["--format", "json", "--no-fixes", root.to_str().unwrap()], 1);
    let units = v["units"].as_array().unwrap();
    assert_eq!(units.len(), 1, "{v}");
    let u = &units[0];
    assert_eq!(u["name"], "shop/prod-web", "{u}");
    // One replica under `minAvailable: 1`: the count the Application sets blocks every drain,
    // and the finding points at it.
    assert_eq!(verdict(u, "drain-completes"), "violated", "{u}");
    assert!(u.to_string().contains(r#"argocd/web.yaml","line":15"#), "{u}");
}

/// An OCI registry on loopback holding chart `web` 1.1.0 (a StatefulSet `<release>-web`) as
/// Helm pushes it: a tag list, a manifest naming the chart layer, the layer as a blob.
fn serve_oci_chart(dir: &std::path::Path) -> common::FileServer {
    let chart = dir.join("chart-source/web");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: web\nversion: 1.1.0\n").unwrap();
    std::fs::write(
        chart.join("templates/statefulset.yaml"),
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ .Release.Name }}-web\nspec:\n  replicas: {{ .Values.replicas | default 1 }}\n  serviceName: web\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web:1}]\n",
    )
    .unwrap();
    let packaged = dir.join("packaged");
    helm(&["package", chart.to_str().unwrap(), "-d", packaged.to_str().unwrap()]);
    let archive = std::fs::read(packaged.join("web-1.1.0.tgz")).unwrap();
    let digest = format!("sha256:{}", sha256_hex(&archive));
    let served = dir.join("registry");
    let repo = served.join("v2/charts/web");
    std::fs::create_dir_all(repo.join("tags")).unwrap();
    std::fs::create_dir_all(repo.join("manifests")).unwrap();
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::write(
        repo.join("tags/list"),
        r#"{"name":"charts/web","tags":["1.0.0","1.1.0","latest"]}"#,
    )
    .unwrap();
    std::fs::write(
        repo.join("manifests/1.1.0"),
        format!(
            r#"{{"schemaVersion":2,"config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"sha256:{}","size":2}},"layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"{digest}","size":{}}}]}}"#,
            "0".repeat(64),
            archive.len()
        ),
    )
    .unwrap();
    std::fs::write(repo.join("blobs").join(&digest), &archive).unwrap();
    common::FileServer::start(&served)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn oci_charts_of_flux_and_argo_cd_are_pulled_from_a_registry_then_rendered_offline() {
    helm_on_path();
    let dir = assert_fs::TempDir::new().unwrap();
    let server = serve_oci_chart(dir.path());
    let registry = format!("127.0.0.1:{}", server.port);
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("flux")).unwrap();
    std::fs::create_dir_all(repo.join("argocd")).unwrap();
    std::fs::write(
        repo.join("flux/web.yaml"),
        format!("apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: OCIRepository\nmetadata: {{name: web, namespace: apps}}\nspec:\n  url: oci://{registry}/charts/web\n  ref: {{semver: '>=1.0.0'}}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: web, namespace: apps}}\nspec:\n  chartRef: {{kind: OCIRepository, name: web}}\n  values: {{replicas: 2}}\n"),
    )
    .unwrap();
    std::fs::write(
        repo.join("argocd/web.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: shop-web, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: shop}}\n  source:\n    repoURL: {registry}/charts\n    chart: web\n    targetRevision: 1.1.0\n"),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let run = |extra: &[&str], code: i32| -> Value {
        let out = kivi()
            .args(["units", "--format", "json", "--cache-dir", cache.to_str().unwrap()])
            .args(extra)
            .arg(&repo)
            .assert()
            .code(code)
            .get_output()
            .clone();
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    // The network off: two notes, nothing asked.
    let v = run(&[], 0);
    assert_eq!(v["summary"]["notRendered"].as_array().unwrap().len(), 2, "{v}");
    assert!(server.requests().is_empty());
    // Allowed for the registry's host: the highest version `>=1.0.0` admits, and the pinned one.
    let v = run(&["--allow-network", "--allow-host", "127.0.0.1"], 0);
    let mut names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["apps/web-web", "shop/shop-web-web"], "{v}");
    let fetched = v["summary"]["fetched"].as_array().unwrap();
    assert!(
        fetched
            .iter()
            .all(|f| f["version"] == "1.1.0" && f["url"].as_str().unwrap().starts_with("oci://")),
        "{v}"
    );
    let asked = server.requests();
    assert!(asked.iter().any(|r| r.ends_with("/tags/list")), "{asked:?}");
    // Offline again: the cache has both.
    let again = run(&[], 0);
    assert_eq!(again["summary"]["units"], v["summary"]["units"], "{again}");
    assert_eq!(server.requests(), asked);
}

#[test]
fn an_argo_cd_directory_source_deploys_only_the_files_it_includes() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("argocd")).unwrap();
    std::fs::create_dir_all(root.join("apps/web")).unwrap();
    std::fs::write(
        root.join("argocd/web.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source:\n    repoURL: https://example.com/platform.git\n    path: apps/web\n    directory:\n      exclude: '{strict-*.yaml,*.json}'\n---\n# istio's samples/ambient-argo: a second Application deploys the file the first leaves out.\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: strict, namespace: argocd}\nspec:\n  destination: {server: https://kubernetes.default.svc, namespace: audit}\n  source:\n    repoURL: https://example.com/platform.git\n    path: apps/web\n    directory: {include: 'strict-*.yaml'}\n",
    )
    .unwrap();
    std::fs::write(root.join("apps/web/web.yaml"), WEB_WITH_PDB).unwrap();
    // A stricter budget for the same pods, in a file the Application leaves out.
    std::fs::write(
        root.join("apps/web/strict-pdb.yaml"),
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web-strict}\nspec:\n  minAvailable: 2\n  selector: {matchLabels: {app: web}}\n",
    )
    .unwrap();
    let v = json(&["--format", "json", "--no-fixes", root.to_str().unwrap()], 0);
    let units = v["units"].as_array().unwrap();
    assert_eq!(units.len(), 1, "{v}");
    // Deployed by the first Application only: its namespace, without the other's budget.
    assert_eq!(units[0]["name"], "shop/web", "{v}");
    assert_eq!(verdict(&units[0], "drain-completes"), "verified", "{v}");
    assert!(!units[0].to_string().contains("web-strict"), "{v}");
}

#[test]
fn a_deployed_path_of_another_repository_is_a_counted_note_not_a_silent_pass() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("argocd")).unwrap();
    // theseanchristopher/project6-argocd-applicationset-multienv's layout: every
    // Application an ApplicationSet makes deploys a chart of another repository.
    std::fs::write(
        root.join("argocd/apps.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: apps, namespace: argocd}\nspec:\n  generators:\n    - list:\n        elements: [{env: dev}, {env: prod}]\n  template:\n    metadata: {name: 'web-{{env}}'}\n    spec:\n      source: {repoURL: 'https://example.com/charts.git', path: charts/web, helm: {valueFiles: ['values-{{env}}.yaml']}}\n      destination: {server: 'https://kubernetes.default.svc', namespace: '{{env}}'}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: tenants, namespace: flux-system}\nspec:\n  path: ./tenants/prod\n  sourceRef: {kind: GitRepository, name: tenants}\n",
    )
    .unwrap();
    let out = kivi()
        .args(["--format", "json", root.to_str().unwrap()])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let left: Vec<&str> = v["summary"]["notRendered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        left,
        [
            "Kustomization flux-system/tenants",
            "Application web-dev",
            "Application web-prod"
        ],
        "{v}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the GitRepository `tenants`, another repository"),
        "{stderr}"
    );
}

/// A Git repository on loopback, served as the dumb HTTP protocol serves one (static files):
/// `apps/web` is a kustomization of `WEB_WITH_PDB`, `plain/` a directory of it.
fn serve_git_repository(dir: &std::path::Path) -> (common::FileServer, String) {
    let git = |cwd: &std::path::Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.email=t@example.com",
                "-c",
                "user.name=t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let work = dir.join("platform");
    std::fs::create_dir_all(work.join("apps/web")).unwrap();
    std::fs::create_dir_all(work.join("plain")).unwrap();
    std::fs::write(work.join("apps/web/web.yaml"), WEB_WITH_PDB).unwrap();
    std::fs::write(
        work.join("apps/web/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [web.yaml]\npatches:\n  - target: {kind: PodDisruptionBudget}\n    patch: |\n      - op: replace\n        path: /spec/minAvailable\n        value: 2\n",
    )
    .unwrap();
    std::fs::write(
        work.join("plain/web.yaml"),
        WEB_WITH_PDB.replace("name: web}", "name: api}"),
    )
    .unwrap();
    // `charts/db`: a chart whose replicas come from its values files.
    std::fs::create_dir_all(work.join("charts/db/templates")).unwrap();
    std::fs::write(
        work.join("charts/db/Chart.yaml"),
        "apiVersion: v2\nname: db\nversion: 1.0.0\n",
    )
    .unwrap();
    std::fs::write(work.join("charts/db/values.yaml"), "replicas: 1\n").unwrap();
    std::fs::write(work.join("charts/db/values-prod.yaml"), "replicas: 3\n").unwrap();
    std::fs::write(
        work.join("charts/db/templates/db.yaml"),
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ .Release.Name }}-db\nspec:\n  replicas: {{ .Values.replicas }}\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: db:1}]\n",
    )
    .unwrap();
    git(&work, &["init", "-q"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "platform"]);
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    git(
        &served,
        &["clone", "-q", "--bare", work.to_str().unwrap(), "platform.git"],
    );
    git(&served.join("platform.git"), &["update-server-info"]);
    let server = common::FileServer::start(&served);
    let url = format!("http://127.0.0.1:{}/platform.git", server.port);
    (server, url)
}

#[test]
fn paths_of_another_git_repository_are_fetched_through_the_policy_then_read_offline() {
    let dir = assert_fs::TempDir::new().unwrap();
    let (server, url) = serve_git_repository(dir.path());
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("argocd")).unwrap();
    std::fs::write(
        repo.join("argocd/apps.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: web, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: shop}}\n  source: {{repoURL: '{url}', targetRevision: main, path: apps/web}}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: api, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: shop}}\n  source: {{repoURL: '{url}', targetRevision: main, path: plain}}\n"),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let run = |extra: &[&str], code: i32| scan(&repo, &cache, extra, code);
    // Off: two notes, nothing asked.
    let (v, _) = run(&[], 0);
    assert_eq!(v["summary"]["notRendered"].as_array().unwrap().len(), 2, "{v}");
    assert!(server.requests().is_empty());
    // Without the host named, loopback is refused: an error, and nothing asked.
    let (_, stderr) = run(&["--allow-network"], 2);
    assert!(stderr.contains("cannot be fetched"), "{stderr}");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // Allowed: both paths verified, in the Applications' namespace; the kustomization's
    // budget of 2 blocks every drain, located at the Application's path.
    let (v, stderr) = run(&["--allow-network", "--allow-host", "127.0.0.1"], 1);
    let mut names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["shop/api", "shop/web"], "{v}\n{stderr}");
    let web = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "shop/web")
        .unwrap();
    assert_eq!(verdict(web, "drain-completes"), "violated", "{web}");
    assert!(web.to_string().contains(r#"argocd/apps.yaml","line":6"#), "{web}");
    let asked = server.requests();
    assert!(asked.iter().any(|r| r.contains("/info/refs")), "{asked:?}");
    // Off again: the cache has the checkout.
    let (again, _) = run(&[], 1);
    assert_eq!(again["summary"]["units"], v["summary"]["units"], "{again}");
    assert_eq!(server.requests(), asked);
}

#[test]
fn remote_kustomize_bases_and_files_are_fetched_then_built_from_a_staged_copy() {
    let dir = assert_fs::TempDir::new().unwrap();
    let (server, url) = serve_git_repository(dir.path());
    let port = server.port;
    std::fs::create_dir_all(dir.path().join("served/files")).unwrap();
    std::fs::write(
        dir.path().join("served/files/cache.yaml"),
        WEB_WITH_PDB.split("---").next().unwrap().replace("web", "cache"),
    )
    .unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("overlays/prod")).unwrap();
    std::fs::write(
        repo.join("overlays/prod/kustomization.yaml"),
        format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: prod-\nresources:\n  - {url}//apps/web?ref=main\n  - http://127.0.0.1:{port}/files/cache.yaml\n"),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let run = |extra: &[&str], code: i32| scan(&repo, &cache, extra, code);
    // Off: one note, and nothing else to verify (an empty scan is an error).
    let (v, _) = run(&[], 2);
    assert_eq!(v["summary"]["notRendered"].as_array().unwrap().len(), 1, "{v}");
    assert!(server.requests().is_empty());
    let (v, stderr) = run(&["--allow-network", "--allow-host", "127.0.0.1"], 1);
    let mut names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["default/prod-cache", "default/prod-web"], "{v}\n{stderr}");
    let web = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "default/prod-web")
        .unwrap();
    // The fetched base's budget of 2 blocks every drain: located at the entry naming the base.
    assert_eq!(verdict(web, "drain-completes"), "violated", "{web}");
    assert!(
        web.to_string()
            .contains(r#"overlays/prod/kustomization.yaml","line":5"#),
        "{web}"
    );
    let asked = server.requests();
    let (again, _) = run(&[], 1);
    assert_eq!(again["summary"]["units"], v["summary"]["units"], "{again}");
    assert_eq!(server.requests(), asked);
}

#[test]
fn charts_of_another_git_repository_render_as_their_deployers_install_them() {
    helm_on_path();
    let dir = assert_fs::TempDir::new().unwrap();
    let (server, url) = serve_git_repository(dir.path());
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("deploy")).unwrap();
    std::fs::write(
        repo.join("deploy/db.yaml"),
        format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: orders, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: shop}}\n  source:\n    repoURL: '{url}'\n    targetRevision: main\n    path: charts/db\n    helm: {{valueFiles: [values-prod.yaml]}}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: platform, namespace: flux-system}}\nspec:\n  url: '{url}'\n  ref: {{branch: main}}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: billing, namespace: flux-system}}\nspec:\n  targetNamespace: billing\n  chart:\n    spec:\n      chart: charts/db\n      sourceRef: {{kind: GitRepository, name: platform}}\n"),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let out = kivi()
        .args([
            "units",
            "--format",
            "json",
            "--allow-network",
            "--allow-host",
            "127.0.0.1",
        ])
        .args(["--cache-dir", cache.to_str().unwrap()])
        .arg(&repo)
        .assert()
        .code(0)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["billing/billing-billing-db", "shop/orders-db"],
        "{v}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(server.requests().iter().any(|r| r.contains("/info/refs")));
}

#[test]
fn a_layout_kept_in_a_subdirectory_resolves_from_there_only_for_its_own_repository() {
    let dir = assert_fs::TempDir::new().unwrap();
    let root = dir.path();
    // istio's samples/ambient-argo: the Application's repoURL is a placeholder for the
    // repository the sample becomes, so `application` is the sample's own directory.
    std::fs::create_dir_all(root.join("samples/argo/application")).unwrap();
    std::fs::write(
        root.join("samples/argo/meta.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  destination: {server: https://kubernetes.default.svc, namespace: ambient}\n  source: {repoURL: '{repo-placeholder}', path: application}\n",
    )
    .unwrap();
    std::fs::write(root.join("samples/argo/application/web.yaml"), WEB_WITH_PDB).unwrap();
    // fluxcd/flux2-multi-tenancy: a tenant's GitRepository is another branch, whose
    // `./production` is not this repository's `tenants/production`.
    std::fs::create_dir_all(root.join("tenants/production")).unwrap();
    std::fs::write(
        root.join("tenants/production/sync.yaml"),
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: dev-team, namespace: apps}\nspec:\n  url: https://example.com/platform\n  ref: {branch: dev-team}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: dev-team, namespace: apps}\nspec:\n  path: ./production\n  sourceRef: {kind: GitRepository, name: dev-team}\n",
    )
    .unwrap();
    let v = json(&["units", "--format", "json", root.to_str().unwrap()], 0);
    let names: Vec<&str> = v["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ambient/web"], "{v}");
    let left: Vec<&str> = v["summary"]["notRendered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["source"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["Kustomization apps/dev-team"], "{v}");
}

//! The CI integrations that ship with kivi-lint: the GitHub Action, the GitLab CI template,
//! the pre-commit hooks and the Dockerfile. They must parse, use every input they declare,
//! keep inputs out of scripts, pin sub-actions, and call the CLI only with flags it has.

use std::collections::BTreeSet;

use kivi_lint::source::FileId;
use kivi_lint::yaml::{self, Node};
use serde_json::Value;

mod common;
use common::{kivi, root, stdout_of};

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Parse one YAML document with kivi-lint's own parser (the one that reads manifests).
fn parse_yaml(path: &str) -> Node {
    let stream = yaml::parse(&read(path), FileId(0), &yaml::Limits::default());
    assert!(stream.errors.is_empty(), "{path} does not parse: {:?}", stream.errors);
    assert_eq!(stream.documents.len(), 1, "{path}: one document");
    stream.documents.into_iter().next().unwrap().root
}

fn text(node: &Node, key: &str) -> Option<String> {
    node.get(key).and_then(Node::scalar_text)
}

fn keys(node: &Node) -> Vec<String> {
    node.as_map()
        .unwrap_or_default()
        .iter()
        .filter_map(|(k, _)| k.scalar_text())
        .collect()
}

#[test]
fn action_uses_every_input_through_env_and_exits_last() {
    let action = parse_yaml("action.yml");
    let source = read("action.yml");
    let runs = &source[source.find("\nruns:").expect("a runs section")..];
    let inputs = keys(action.get("inputs").unwrap());
    for required in [
        "path",
        "config",
        "fail-on",
        "sarif-file",
        "junit-file",
        "annotations",
        "job-summary",
        "upload-sarif",
        "args",
    ] {
        assert!(inputs.contains(&required.to_string()), "input {required} is declared");
    }
    for input in &inputs {
        assert!(
            runs.contains(&format!("inputs.{input} "))
                || runs.contains(&format!("inputs.{input}\n"))
                || runs.contains(&format!("inputs.{input} }}}}")),
            "input {input} is used"
        );
    }
    let outputs = keys(action.get("outputs").unwrap());
    assert_eq!(outputs, ["findings", "exit-code", "sarif-file"]);
    let runs = action.get("runs").unwrap();
    assert_eq!(text(runs, "using").as_deref(), Some("composite"));
    let steps = runs.get("steps").unwrap().as_seq().unwrap();
    for step in steps {
        if let Some(script) = text(step, "run") {
            assert!(!script.contains("${{"), "an expression inside run: {script}");
            assert_eq!(text(step, "shell").as_deref(), Some("bash"));
        }
        if let Some(uses) = text(step, "uses") {
            let sha = uses.rsplit('@').next().unwrap();
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{uses} is pinned by commit SHA"
            );
        }
    }
    // The upload happens before the exit, which runs whatever happened before it.
    let names: Vec<String> = steps.iter().filter_map(|s| text(s, "name")).collect();
    let upload = names.iter().position(|n| n.contains("Upload SARIF")).unwrap();
    let exit = names.iter().position(|n| n.starts_with("Exit")).unwrap();
    assert_eq!(exit, steps.len() - 1);
    assert!(upload < exit);
    assert_eq!(text(&steps[exit], "if").as_deref(), Some("always()"));
    assert!(text(&steps[upload], "if").unwrap().starts_with("always()"));
}

#[test]
fn gitlab_template_keeps_reports_when_the_job_fails() {
    let template = parse_yaml("ci/gitlab/kivi-lint.gitlab-ci.yml");
    let job = template.get(".kivi-lint").unwrap();
    let artifacts = job.get("artifacts").unwrap();
    assert_eq!(text(artifacts, "when").as_deref(), Some("always"));
    let reports = artifacts.get("reports").unwrap();
    assert_eq!(text(reports, "junit").as_deref(), Some("kivi-lint-junit.xml"));
    assert_eq!(
        text(reports, "codequality").as_deref(),
        Some("gl-code-quality-report.json")
    );
    let script = job.get("script").unwrap().as_seq().unwrap()[0].scalar_text().unwrap();
    assert!(script.contains("--format junit=kivi-lint-junit.xml"));
    assert!(script.contains("--format codequality=gl-code-quality-report.json"));
    assert_eq!(
        text(template.get("kivi-lint").unwrap(), "extends").as_deref(),
        Some(".kivi-lint")
    );
    // Exit 3 (inconclusive only) is a warning, not a failed job; 1 and 2 still fail it.
    let codes: Vec<String> = job
        .get("allow_failure")
        .and_then(|a| a.get("exit_codes"))
        .and_then(|c| c.as_seq())
        .unwrap()
        .iter()
        .filter_map(|c| c.scalar_text())
        .collect();
    assert_eq!(codes, ["3"]);
}

/// The pre-commit mirror (integrations/pre-commit/, after ruff-pre-commit) installs the wheel
/// of the crate's own version, and its hook is the main repository's `kivi-lint` hook but for
/// the install.
#[test]
fn the_pre_commit_mirror_installs_this_versions_wheel_with_the_same_hook() {
    let version = read("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap()
        .to_string();
    let pyproject = read("integrations/pre-commit/pyproject.toml");
    assert!(pyproject.contains(&format!("version = \"{version}\"")), "{pyproject}");
    assert!(
        pyproject.contains(&format!("dependencies = [\"kivi-lint=={version}\"]")),
        "{pyproject}"
    );
    let mirror = parse_yaml("integrations/pre-commit/.pre-commit-hooks.yaml");
    let main = parse_yaml(".pre-commit-hooks.yaml");
    let (mirror, main) = (&mirror.as_seq().unwrap()[0], &main.as_seq().unwrap()[0]);
    assert_eq!(text(mirror, "language").as_deref(), Some("python"));
    for key in [
        "id",
        "entry",
        "files",
        "pass_filenames",
        "require_serial",
        "minimum_pre_commit_version",
    ] {
        assert_eq!(text(mirror, key), text(main, key), "{key}");
    }
}

#[test]
fn pre_commit_hooks_match_templates_and_map_files_to_units() {
    let hooks = parse_yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_seq().unwrap();
    let ids: Vec<String> = hooks.iter().filter_map(|h| text(h, "id")).collect();
    assert_eq!(ids, ["kivi-lint", "kivi-lint-system", "kivi-lint-docker"]);
    for hook in hooks {
        let files = text(hook, "files").unwrap();
        assert!(files.contains("tpl"), "Helm helpers (.tpl) trigger the hook: {files}");
        assert!(text(hook, "entry").unwrap().contains(" --pre-commit"));
        assert_eq!(text(hook, "require_serial").as_deref(), Some("true"));
        assert!(hook.get("types").is_none(), "types: [yaml] would miss .tpl files");
        // The docker hook's container is removed after each commit and runs as the
        // committer's uid, for whom the image's home does not exist: its cache lives in the
        // repository, which that uid can write.
        if text(hook, "language").as_deref() == Some("docker_image") {
            assert!(
                text(hook, "entry").unwrap().contains("--cache-dir .kivi-lint-cache"),
                "a writable cache that outlives the container"
            );
        }
    }
}

#[test]
fn pre_commit_mode_checks_each_render_unit_once() {
    let units = |files: &[&str]| -> Value {
        let args = [&["units", "--pre-commit", "--format", "json"][..], files].concat();
        serde_json::from_str(&stdout_of(&args, 0)).unwrap()
    };
    let scopes = |v: &Value, kind: &str| -> Vec<String> {
        v["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == kind)
            .map(|s| s["path"].as_str().unwrap().to_string())
            .collect()
    };
    // Two files of one overlay, one of another and a plain file: each unit rendered once.
    let v = units(&[
        "fixtures/demo-shop/apps/production/kustomization.yaml",
        "fixtures/demo-shop/apps/production/checkout-replicas.yaml",
        "fixtures/demo-shop/apps/staging/kustomization.yaml",
        "fixtures/demo-shop/platform/namespaces.yaml",
    ]);
    assert_eq!(
        scopes(&v, "kustomize"),
        ["fixtures/demo-shop/apps/production", "fixtures/demo-shop/apps/staging"],
        "{v}"
    );
    assert_eq!(
        scopes(&v, "files"),
        [
            "fixtures/demo-shop/apps/production",
            "fixtures/demo-shop/apps/staging",
            "fixtures/demo-shop/platform"
        ]
    );
    // A template of a Helm chart is checked through its chart (rendered by the test's helm).
    let helm_args = assert_fs::NamedTempFile::new("helm-args").unwrap();
    let out = common::kivi_with_helm_stand_in(helm_args.path())
        .args([
            "units",
            "--pre-commit",
            "--format",
            "json",
            "fixtures/helm-chart/charts/web/templates/deployment.yaml",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(scopes(&v, "helm").len(), 1, "{v}");
    assert!(
        scopes(&v, "helm")[0].starts_with("fixtures/helm-chart/charts/web"),
        "{v}"
    );
}

/// A changed file that is no Kubernetes manifest and lies in no chart or kustomization checks
/// nothing; a manifest at the repository root checks the root's manifests, not every
/// directory below it.
#[test]
fn pre_commit_root_level_files_check_only_their_own_unit() {
    let repo = assert_fs::TempDir::new().unwrap();
    let deployment = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: c, image: nginx}}]\n"
        )
    };
    std::fs::write(
        repo.path().join(".pre-commit-config.yaml"),
        "repos:\n- repo: local\n  hooks: [{id: x, name: x, entry: x, language: system}]\n",
    )
    .unwrap();
    std::fs::write(repo.path().join("package.json"), "{\"name\": \"x\"}\n").unwrap();
    std::fs::write(repo.path().join("root.yaml"), deployment("root")).unwrap();
    std::fs::create_dir(repo.path().join("apps")).unwrap();
    // Would be an input error if it were read.
    std::fs::write(repo.path().join("apps/broken.yaml"), "kind: [\n").unwrap();
    let units = |files: &[&str]| -> Value {
        let out = kivi()
            .current_dir(repo.path())
            .args(["units", "--pre-commit", "--format", "json"])
            .args(files)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        if out.stdout.is_empty() {
            return Value::Null;
        }
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let names = |v: &Value| -> Vec<String> {
        v["units"]
            .as_array()
            .map(|u| u.iter().map(|u| u["name"].as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    assert!(names(&units(&[".pre-commit-config.yaml", "package.json"])).is_empty());
    assert_eq!(
        names(&units(&["root.yaml", ".pre-commit-config.yaml"])),
        ["default/root"]
    );
    // The scan itself, as the hook runs it: nothing to check is a clean exit.
    let out = kivi()
        .current_dir(repo.path())
        .args(["--pre-commit", ".pre-commit-config.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Every `kivi-lint …` command the docs and integration files show, as argument lists.
fn documented_commands() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut files: Vec<String> = [
        "README.md",
        "action.yml",
        "ci/gitlab/kivi-lint.gitlab-ci.yml",
        ".pre-commit-hooks.yaml",
        "integrations/pre-commit/.pre-commit-hooks.yaml",
        "Dockerfile",
    ]
    .map(String::from)
    .to_vec();
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .collect();
    pages.sort();
    files.extend(pages);
    for file in &files {
        let file = file.as_str();
        let source = read(file);
        let mut joined = String::new();
        for line in source.lines() {
            // Shell continuations make one command of several lines.
            if let Some(l) = line.trim_end().strip_suffix('\\') {
                joined.push_str(l);
                continue;
            }
            joined.push_str(line);
            let command = std::mem::take(&mut joined);
            let Some(at) = command.find("kivi-lint ") else { continue };
            let rest = &command[at + "kivi-lint ".len()..];
            // Only real invocations: the binary name followed by arguments, in code.
            if !(rest.starts_with('-')
                || rest.starts_with('.')
                || rest.starts_with('"')
                || rest.starts_with('$')
                || rest
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| ["units", "rules", "explain", "merge", "config"].contains(&w)))
            {
                continue;
            }
            let args: Vec<String> = rest
                .split(|c: char| c.is_whitespace() || c == '`' || c == '\'' || c == ')')
                .filter(|a| !a.is_empty())
                .take_while(|a| !a.starts_with('#') && *a != "|" && *a != "&&" && *a != ">" && *a != ";")
                .map(String::from)
                .collect();
            out.push((format!("{file}: {}", command.trim()), args));
        }
    }
    out
}

#[test]
fn documented_commands_match_the_cli() {
    let help = |args: &[&str]| -> String { stdout_of(&[args, &["--help"]].concat(), 0) };
    let formats = [
        "human",
        "json",
        "sarif",
        "junit",
        "github",
        "codequality",
        "markdown",
        "html",
    ];
    let commands = documented_commands();
    assert!(commands.len() >= 15, "found the documented commands: {commands:#?}");
    let mut checked = BTreeSet::new();
    for (place, args) in &commands {
        let sub = args
            .first()
            .filter(|a| ["units", "rules", "explain", "merge", "config"].contains(&a.as_str()));
        let text = match sub {
            Some(s) => help(&[s.as_str()]),
            None => help(&[]),
        };
        for (i, arg) in args.iter().enumerate() {
            let flag = arg.split('=').next().unwrap().trim_matches('"');
            if flag.starts_with("--") && flag.len() > 2 {
                assert!(
                    text.contains(&format!("{flag} "))
                        || text.contains(&format!("{flag}\n"))
                        || text.contains(&format!("{flag} <"))
                        || text.contains(&format!("{flag}=")),
                    "{place}: `{flag}` is not a flag of kivi-lint {}",
                    sub.map_or("", |s| s.as_str())
                );
                checked.insert(flag.to_string());
            }
            if (arg == "--format" || arg == "-f")
                && let Some(value) = args.get(i + 1)
            {
                let name = value.trim_matches('"').split('=').next().unwrap();
                if !name.starts_with('$') {
                    assert!(formats.contains(&name), "{place}: unknown format {name}");
                }
            }
            if let Some(value) = arg.strip_prefix("--format=") {
                let name = value.split('=').next().unwrap();
                assert!(formats.contains(&name), "{place}: unknown format {name}");
            }
        }
    }
    for flag in ["--format", "--fail-on", "--pre-commit", "--changed-since", "--shard"] {
        assert!(checked.contains(flag), "{flag} is documented somewhere: {checked:?}");
    }
}

/// What hadolint and Kubernetes ask of the image: base images by digest, a numeric
/// non-root USER (runAsNonRoot can only verify a number), Helm by checksum, a build context
/// without `target/`. And what buildah/podman need as much as Docker BuildKit: no stage
/// chosen by an ARG (buildah skips it as unused), images named in full (no search list of
/// registries), no `ADD --checksum` (buildah 1.28 rejects it). hadolint itself runs in
/// `.ci/run`.
#[test]
fn dockerfile_pins_its_inputs_and_runs_as_a_numeric_non_root_user() {
    let dockerfile = read("Dockerfile");
    let stages: Vec<&str> = dockerfile.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert!(stages.len() >= 2, "multi-stage");
    let names: Vec<&str> = stages
        .iter()
        .filter_map(|l| l.split(" AS ").nth(1))
        .map(str::trim)
        .collect();
    for from in &stages {
        let image = from
            .split_whitespace()
            .find(|w| !w.starts_with("FROM") && !w.starts_with("--platform"))
            .unwrap();
        assert!(!image.starts_with("${"), "{from}: a stage chosen by an ARG");
        let is_stage = names.contains(&image) || image == "scratch";
        assert!(is_stage || image.contains("@sha256:"), "{from}: pinned by digest");
        assert!(
            is_stage || image.split('/').next().is_some_and(|registry| registry.contains('.')),
            "{from}: named with its registry"
        );
    }
    let stage = |name: &str| -> &str {
        let at = dockerfile
            .find(&format!(" AS {name}\n"))
            .unwrap_or_else(|| panic!("a stage {name}"));
        let rest = &dockerfile[at..];
        &rest[..rest[1..].find("\nFROM ").map_or(rest.len(), |i| i + 1)]
    };
    let runtime = stage("runtime");
    for needed in [
        "spin=",
        "gcc=",
        "/usr/local/bin/kustomize",
        "/usr/local/bin/helm",
        "/etc/gitconfig",
    ] {
        assert!(runtime.contains(needed), "the runtime image has {needed}");
    }
    // The default (last) stage builds from source; the release's `--target prebuilt` copies
    // its static binary.
    let last_stage = &dockerfile[dockerfile.rfind("\nFROM ").unwrap()..];
    assert!(last_stage.starts_with("\nFROM runtime AS image"), "{last_stage}");
    assert!(last_stage.contains("COPY --from=source /kivi-lint /usr/local/bin/kivi-lint"));
    assert!(stage("prebuilt").contains("COPY dist/linux-"));
    for line in dockerfile.lines().filter(|l| l.starts_with("ADD ")) {
        let file = line.split_whitespace().last().unwrap();
        assert!(!line.contains("--checksum"), "{line}: buildah rejects ADD --checksum");
        let checked = dockerfile.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.len() >= 2 && words[0].len() == 64 && words[1] == file
        });
        assert!(
            checked && dockerfile.contains("sha256sum -c"),
            "{line}: checked by sha256sum"
        );
    }
    let last_stage = runtime;
    assert!(last_stage.contains("ENTRYPOINT [\"kivi-lint\"]"));
    // Every file the build copies from the checkout exists (`dist/` is the release
    // workflow's output) and is in the build context.
    let ignore = read(".dockerignore");
    for line in dockerfile
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let parts: Vec<&str> = line.split_whitespace().collect();
        for source in &parts[1..parts.len() - 1] {
            let top = source.split('/').next().unwrap();
            assert!(
                ignore
                    .lines()
                    .any(|l| l.trim_start_matches('!').trim_end_matches('/') == top),
                "{source} is in the build context"
            );
            if top != "dist" {
                assert!(root().join(source).exists(), "{line}: {source} exists");
            }
        }
    }
    assert!(
        ignore.lines().next_back().is_some() && ignore.lines().any(|l| l.trim() == "*"),
        "the context is an allow-list"
    );
}

/// The value of `inputs.NAME` in an `env:` entry, for running the action's scripts here.
fn input_name(expression: &str) -> Option<&str> {
    expression.trim().strip_prefix("${{ inputs.")?.strip_suffix(" }}")
}

/// Run the action's `Run kivi-lint` and exit steps with bash as a runner would: inputs through
/// env, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY` and `RUNNER_TEMP` files, kivi-lint on PATH.
#[test]
fn action_scripts_record_the_exit_code_write_reports_and_exit_last() {
    let action = parse_yaml("action.yml");
    let defaults: Vec<(String, String)> = action
        .get("inputs")
        .unwrap()
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.scalar_text().unwrap(), text(v, "default").unwrap_or_default()))
        .collect();
    let steps = action.get("runs").unwrap().get("steps").unwrap().as_seq().unwrap();
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| text(s, "name").is_some_and(|n| n.starts_with(name)))
            .unwrap()
    };
    let dir = assert_fs::TempDir::new().unwrap();
    let (output, summary, temp) = (
        dir.path().join("output"),
        dir.path().join("summary"),
        dir.path().join("temp"),
    );
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::write(&summary, "").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("kivi-lint");
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap());
    let inputs = |overrides: &[(&str, &str)]| -> Vec<(String, String)> {
        let run = step("Run kivi-lint");
        run.get("env")
            .unwrap()
            .as_map()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                // The event's context (a fork's pull request), as on a push: false.
                let Some(name) = input_name(&v.scalar_text().unwrap()).map(str::to_string) else {
                    return (k.scalar_text().unwrap(), "false".to_string());
                };
                let value = overrides
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_else(|| defaults.iter().find(|(n, _)| *n == name).unwrap().1.clone());
                (k.scalar_text().unwrap(), value)
            })
            .collect()
    };
    let run_step = |env: Vec<(String, String)>| {
        github_bash(&text(step("Run kivi-lint"), "run").unwrap())
            .current_dir(root())
            .envs(env)
            .env("PATH", &path)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", &temp)
            .env(
                "KIVI_LINT_CACHE_DIR",
                std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
            )
            .output()
            .unwrap()
    };
    let sarif = dir.path().join("out.sarif");
    let junit = dir.path().join("out.xml");
    let out = run_step(inputs(&[
        ("path", "fixtures/kivi-c3"),
        ("sarif-file", sarif.to_str().unwrap()),
        ("junit-file", junit.to_str().unwrap()),
        ("args", "-q --jobs 2"),
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The run step never fails: the upload comes first.
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("::error file=fixtures/kivi-c3/deploy/php-apache.yaml,line=26"),
        "{stdout}"
    );
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert!(outputs.contains("exit-code=1\n"), "{outputs}");
    assert!(outputs.contains("findings=1\n"), "{outputs}");
    assert!(
        outputs.contains(&format!("sarif-file={}\n", sarif.display())),
        "{outputs}"
    );
    assert!(sarif.is_file() && junit.is_file());
    let written = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        written.matches("## kivi-lint").count(),
        1,
        "the summary once: {written}"
    );
    assert!(written.contains("sequenceDiagram"));

    // Without annotations and summary: the human report, nothing appended.
    let out = run_step(inputs(&[
        ("path", "fixtures/kivi-c3"),
        ("annotations", "false"),
        ("job-summary", "false"),
        ("sarif-file", ""),
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        !stdout.contains("::error") && stdout.contains("✗ error pods-schedulable"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        written,
        "job-summary: false appends nothing"
    );
    assert!(std::fs::read_to_string(&output).unwrap().ends_with("sarif-file=\n"));

    // The last step exits with the recorded code; an inconclusive-only run (3) passes with a
    // warning unless fail-on-inconclusive says otherwise.
    let exit = text(step("Exit"), "run").unwrap();
    for (code, fail_on_inconclusive, expected) in [
        ("0", "false", 0),
        ("1", "false", 1),
        ("3", "false", 0),
        ("3", "true", 3),
        ("", "false", 2),
    ] {
        let out = github_bash(&exit)
            .env("CODE", code)
            .env("FAIL_ON_INCONCLUSIVE", fail_on_inconclusive)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(expected), "CODE={code:?}");
        if code == "3" {
            assert!(
                String::from_utf8_lossy(&out.stdout)
                    .contains("::warning title=kivi-lint::some checks are inconclusive")
            );
        }
    }
}

/// Install steps of the action: a runner without spin and without a way to install it gets
/// one clear error naming the runner; the release archive is the one release.yml publishes
/// for the runner's platform, at the action's own version unless `version:` names another.
#[test]
fn action_installs_the_release_for_the_runner_or_says_why_it_cannot() {
    let action = parse_yaml("action.yml");
    let steps = action.get("runs").unwrap().get("steps").unwrap().as_seq().unwrap();
    let run_of = |name: &str| {
        let s = steps
            .iter()
            .find(|s| text(s, "name").is_some_and(|n| n.starts_with(name)))
            .unwrap();
        text(s, "run").unwrap()
    };
    let inputs = action.get("inputs").unwrap();
    for input in ["install", "fail-on-inconclusive", "cache"] {
        assert!(inputs.get(input).is_some(), "input {input}");
    }
    assert_eq!(
        text(inputs.get("install").unwrap(), "default").as_deref(),
        Some("release")
    );

    // No spin, no cc, no apt-get: only bash's builtins and `id` on PATH.
    let bin = assert_fs::TempDir::new().unwrap();
    std::os::unix::fs::symlink(which("id"), bin.path().join("id")).unwrap();
    let out = std::process::Command::new(which("bash"))
        .arg("-c")
        .arg(run_of("Install SPIN"))
        .env_clear()
        .env("PATH", bin.path())
        .env("RUNNER_OS", "macOS")
        .env("RUNNER_ARCH", "ARM64")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.starts_with("::error title=kivi-lint needs SPIN::this runner (macOS ARM64)"),
        "{stdout}"
    );

    // The release for each runner platform, and the names release.yml builds.
    let release = read(".github/workflows/release.yml");
    let version = read("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("version = \"")?.strip_suffix('"').map(str::to_string))
        .unwrap();
    for (os, arch, target) in [
        ("Linux", "X64", "x86_64-unknown-linux-musl"),
        ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
        ("macOS", "X64", "x86_64-apple-darwin"),
        ("macOS", "ARM64", "aarch64-apple-darwin"),
    ] {
        let output = assert_fs::NamedTempFile::new("output").unwrap();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(run_of("Choose the kivi-lint release"))
            .env("VERSION", "")
            .env("ACTION_PATH", root())
            .env("RUNNER_OS", os)
            .env("RUNNER_ARCH", arch)
            .env("GITHUB_OUTPUT", output.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let written = std::fs::read_to_string(output.path()).unwrap();
        assert_eq!(written, format!("version={version}\ntarget={target}\n"));
        assert!(
            release.contains(&format!("target: {target},")),
            "release.yml builds {target}"
        );
    }
    assert!(release.contains("kivi-lint-$VERSION-$TARGET.tar.gz") && release.contains("SHA256SUMS"));
    assert!(run_of("Install kivi-lint").contains("archive=\"kivi-lint-${VERSION}-${TARGET}.tar.gz\""));

    // A fork's pull request has a read-only token: no upload, a notice instead.
    let condition = |name: &str| {
        let s = steps
            .iter()
            .find(|s| text(s, "name").is_some_and(|n| n.starts_with(name)))
            .unwrap();
        text(s, "if").unwrap()
    };
    assert!(condition("Upload SARIF").contains("github.event.pull_request.head.repo.fork != true"));
    assert!(condition("Note that forks").contains("github.event.pull_request.head.repo.fork == true"));
    // The verifier cache is kept by actions/cache, pinned by commit.
    assert!(steps.iter().any(|s| {
        text(s, "uses")
            .is_some_and(|u| u.starts_with("actions/cache/restore@") && u.len() > "actions/cache/restore@".len() + 39)
    }));
}

/// A `shell: bash` step run exactly as GitHub's runner runs it: the script written to a file
/// and run with `bash --noprofile --norc -eo pipefail FILE` (a test once ran steps with
/// `bash -c`, without `-e`, and missed that the run step died on the first finding).
fn github_bash(script: &str) -> std::process::Command {
    let file = tempfile_in_target("step.sh");
    std::fs::write(&file, script).unwrap();
    let mut command = std::process::Command::new(which("bash"));
    command.args(["--noprofile", "--norc", "-eo", "pipefail"]).arg(file);
    command
}

/// A fresh file name under the test target's temporary directory.
fn tempfile_in_target(name: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("integrations-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn which(program: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} on PATH"))
}

/// The quick start finds the binary wherever cargo put it: `scripts/demo` runs
/// `$(scripts/target-dir)/release/kivi-lint`, and scripts/target-dir follows CARGO_TARGET_DIR
/// (the demo once built for minutes, then failed with 127 looking in ./target).
#[test]
fn the_demo_finds_the_binary_wherever_cargo_put_it() {
    let root = root();
    let target_dir = |custom: Option<&str>| {
        let mut c = std::process::Command::new(root.join("scripts/target-dir"));
        c.env_remove("CARGO_TARGET_DIR");
        if let Some(dir) = custom {
            c.env("CARGO_TARGET_DIR", dir);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(target_dir(Some("/tmp/kivi-elsewhere")), "/tmp/kivi-elsewhere");
    assert!(!target_dir(None).is_empty());
    let demo = std::fs::read_to_string(root.join("scripts/demo")).unwrap();
    assert!(demo.contains("\"$(scripts/target-dir)/release/kivi-lint\""), "{demo}");
    // Only what the demo needs is installed, and cargo's progress shows.
    assert!(
        demo.contains("scripts/setup --runtime") && !demo.contains("--quiet"),
        "{demo}"
    );
}

/// The action's step named `name` (its `run:` script).
fn action_step(name: &str) -> String {
    let action = parse_yaml("action.yml");
    let steps = action.get("runs").unwrap().get("steps").unwrap().as_seq().unwrap();
    let step = steps
        .iter()
        .find(|s| text(s, "name").is_some_and(|n| n.starts_with(name)))
        .unwrap_or_else(|| panic!("a step named {name}"));
    text(step, "run").unwrap()
}

/// A directory holding executable scripts `name` with the given bodies, to stand in for
/// kivi-lint, curl or cargo in a step's PATH.
fn stand_ins(scripts: &[(&str, &str)]) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile_in_target("bin");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body) in scripts {
        let file = dir.join(name);
        std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// Issue 40 (14, and the `--` of 1): the run step's outputs come from this run only. A
/// kivi-lint killed before it wrote anything (exit 137) leaves no `sarif-file` output, even
/// where the pull request committed a `kivi-lint.sarif`; the paths reach kivi-lint after `--`.
#[test]
fn action_outputs_come_from_this_run_only() {
    let work = tempfile_in_target("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("kivi-lint.sarif"), "{\"forged\": true}").unwrap();
    let argv = work.join("argv");
    let bin = stand_ins(&[(
        "kivi-lint",
        &format!("printf '%s\\n' \"$@\" > '{}'\nkill -KILL $$", argv.display()),
    )]);
    let (output, summary, temp) = (work.join("output"), work.join("summary"), work.join("temp"));
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::write(&summary, "").unwrap();
    let out = github_bash(&action_step("Run kivi-lint"))
        .current_dir(&work)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("INPUT_PATH", "-evil.yaml deploy")
        .env("INPUT_CONFIG", "")
        .env("INPUT_FAIL_ON", "error")
        .env("INPUT_SARIF_FILE", "kivi-lint.sarif")
        .env("INPUT_JUNIT_FILE", "")
        .env("INPUT_ANNOTATIONS", "true")
        .env("INPUT_JOB_SUMMARY", "true")
        .env("INPUT_CACHE", "false")
        .env("INPUT_ARGS", "")
        .env("INPUT_ALLOW_NETWORK", "config")
        .env("FROM_FORK", "true")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("RUNNER_TEMP", &temp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert_eq!(outputs, "exit-code=137\nfindings=0\nsarif-file=\n");
    assert!(
        !work.join("kivi-lint.sarif").exists(),
        "the committed report is not uploaded"
    );
    let argv = std::fs::read_to_string(argv).unwrap();
    assert!(argv.ends_with("--\n-evil.yaml\ndeploy\n"), "{argv}");

    let out = github_bash(&action_step("Exit")).env("CODE", "137").output().unwrap();
    assert_eq!(out.status.code(), Some(137));
    assert!(String::from_utf8_lossy(&out.stdout).contains("kivi-lint failed (exit code 137)"));
}

/// Issue 40 (18): no release for this version (not yet published, or a platform without
/// one) is not an error: the action builds its own source with Cargo.lock, with a notice. A
/// checksum mismatch stays an error.
#[test]
fn action_builds_its_source_when_no_release_matches() {
    let work = tempfile_in_target("install");
    let temp = work.join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let cargo_args = work.join("cargo-args");
    let bin = stand_ins(&[
        ("curl", "exit 22"),
        (
            "cargo",
            &format!(
                "printf '%s\\n' \"$@\" > '{}'\nmkdir -p \"$6/bin\"\nprintf '#!/bin/sh\\necho kivi-lint 0.0.0\\n' > \"$6/bin/kivi-lint\"\nchmod +x \"$6/bin/kivi-lint\"",
                cargo_args.display()
            ),
        ),
    ]);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let install = action_step("Install kivi-lint");
    for (target, notice) in [
        (
            "x86_64-unknown-linux-musl",
            "release v9.9.9 has no kivi-lint-9.9.9-x86_64-unknown-linux-musl.tar.gz",
        ),
        ("", "no release binary for Linux RISCV64"),
    ] {
        let _ = std::fs::remove_file(&cargo_args);
        let out = github_bash(&install)
            .env("PATH", &path)
            .env("INSTALL", "release")
            .env("VERSION", "9.9.9")
            .env("TARGET", target)
            .env("ACTION_PATH", root())
            .env("RUNNER_TEMP", &temp)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "RISCV64")
            .env("GITHUB_PATH", work.join("github-path"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            stdout.contains("::notice title=kivi-lint::") && stdout.contains(notice),
            "{stdout}"
        );
        let args = std::fs::read_to_string(&cargo_args).unwrap();
        assert!(args.starts_with("install\n--locked\n--path\n"), "{args}");
        assert!(stdout.contains("kivi-lint 0.0.0"), "the built binary runs: {stdout}");
    }
}

/// Issue 40 (18, 19): the release runs on runners GitHub still has, every job has a time
/// limit, and the action's cache is saved whatever the run found.
#[test]
fn release_runners_exist_every_job_is_bounded_and_the_cache_is_saved_on_findings() {
    let release = parse_yaml(".github/workflows/release.yml");
    let retired = ["macos-12", "macos-13", "ubuntu-20.04", "windows-2019"];
    for (name, job) in release.get("jobs").unwrap().as_map().unwrap() {
        let name = name.scalar_text().unwrap();
        assert!(text(job, "timeout-minutes").is_some(), "job {name} has a time limit");
        let mut runners: Vec<String> = text(job, "runs-on").into_iter().collect();
        if let Some(include) = job
            .get("strategy")
            .and_then(|s| s.get("matrix"))
            .and_then(|m| m.get("include"))
            .and_then(Node::as_seq)
        {
            runners.extend(include.iter().filter_map(|i| text(i, "os")));
        }
        for runner in runners {
            assert!(
                !retired.contains(&runner.as_str()),
                "job {name} runs on retired {runner}"
            );
        }
    }
    let action = parse_yaml("action.yml");
    let steps = action.get("runs").unwrap().get("steps").unwrap().as_seq().unwrap();
    let uses: Vec<String> = steps.iter().filter_map(|s| text(s, "uses")).collect();
    assert!(
        !uses.iter().any(|u| u.starts_with("actions/cache@")),
        "actions/cache saves on success only"
    );
    assert!(uses.iter().any(|u| u.starts_with("actions/cache/restore@")));
    let save = steps
        .iter()
        .find(|s| text(s, "uses").is_some_and(|u| u.starts_with("actions/cache/save@")))
        .expect("a save step");
    assert!(text(save, "if").unwrap().starts_with("always()"));
    let names: Vec<String> = steps.iter().filter_map(|s| text(s, "name")).collect();
    let position = |prefix: &str| names.iter().position(|n| n.starts_with(prefix)).unwrap();
    assert!(position("Save the verifier cache") > position("Run kivi-lint"));
}

/// Issue 40 (1): GitLab's template neither globs its variables nor lets a path become an
/// option: `KIVI_LINT_PATH='*'` in a project holding a file named `--format=json=…` gives
/// kivi-lint the path `*` after `--`; a report file the merge request committed is removed
/// before the run.
#[test]
fn gitlab_template_never_globs_and_puts_paths_after_the_separator() {
    let template = parse_yaml("ci/gitlab/kivi-lint.gitlab-ci.yml");
    let script = template
        .get(".kivi-lint")
        .unwrap()
        .get("script")
        .unwrap()
        .as_seq()
        .unwrap()[0]
        .scalar_text()
        .unwrap();
    let work = tempfile_in_target("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("--format=json=stolen.json"), "").unwrap();
    std::fs::write(work.join("gl-code-quality-report.json"), "[]").unwrap();
    let argv = work.join("argv");
    let bin = stand_ins(&[("kivi-lint", &format!("printf '%s\\n' \"$@\" > '{}'", argv.display()))]);
    for shell in ["sh", "bash"] {
        let out = std::process::Command::new(which(shell))
            .args(["-e", "-c", &script])
            .current_dir(&work)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("KIVI_LINT_PATH", "*")
            .env("KIVI_LINT_CONFIG", "")
            .env("KIVI_LINT_FAIL_ON", "error")
            .env("KIVI_LINT_ARGS", "-q")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let argv = std::fs::read_to_string(&argv).unwrap();
        assert!(argv.ends_with("-q\n--\n*\n"), "{shell}: {argv}");
        assert!(!argv.contains("--format=json=stolen.json"), "{argv}");
        assert!(!work.join("gl-code-quality-report.json").exists());
    }
}

/// Issue 40 (1): each pre-commit hook's entry ends with `--`, so a staged file named like an
/// option is a path: run as pre-commit runs it (the entry split as a shell would, the file
/// names appended), `--emit-models=out.yaml` writes no model directory.
#[test]
fn pre_commit_entries_keep_file_names_out_of_the_options() {
    let hooks = parse_yaml(".pre-commit-hooks.yaml");
    for hook in hooks.as_seq().unwrap() {
        let entry = text(hook, "entry").unwrap();
        assert!(entry.ends_with(" --"), "{entry}");
    }
    let repo = tempfile_in_target("hooked");
    std::fs::create_dir_all(&repo).unwrap();
    let staged = "--emit-models=out.yaml";
    std::fs::write(
        repo.join(staged),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {}\n",
    )
    .unwrap();
    let entry = text(&hooks.as_seq().unwrap()[1], "entry").unwrap();
    let mut words = entry.split_whitespace();
    assert_eq!(words.next(), Some("kivi-lint"));
    let out = kivi()
        .args(words)
        .arg(staged)
        .current_dir(&repo)
        .env("KIVI_LINT_CACHE_DIR", repo.join("../cache"))
        .output()
        .unwrap();
    assert!(!repo.join("out.yaml").exists(), "a file name became --emit-models");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
}

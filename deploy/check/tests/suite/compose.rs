//! compose.yaml and the Dockerfile, checked statically.

use std::collections::BTreeMap;

use deploy_check::compose::{ComposeFile, listen_ports};

use super::support;

fn load() -> ComposeFile {
    ComposeFile::load(
        &support::deploy_dir().join("compose.yaml"),
        &support::example_vars(),
    )
    .expect("compose.yaml")
}

#[test]
fn compose_file_has_no_cross_reference_problems() {
    let compose = load();
    assert_eq!(
        compose.problems(&support::deploy_dir()),
        Vec::<String>::new()
    );
    assert_eq!(compose.start_order(), ["prompt-service", "agent-service"]);
}

#[test]
fn compose_layout_is_one_host_with_state_on_a_volume() {
    let compose = load();
    let prompt = &compose.services["prompt-service"];
    let agent = &compose.services["agent-service"];
    // prompt-service: compose network only.
    assert!(prompt.ports.is_empty(), "{:?}", prompt.ports);
    // agent-service: published on loopback, finds prompt-service by name.
    assert!(
        agent.ports.iter().all(|p| p.starts_with("127.0.0.1:")),
        "{:?}",
        agent.ports
    );
    let prompt_port = listen_ports(prompt)[0];
    assert!(
        agent
            .environment
            .values()
            .any(|v| *v == format!("http://prompt-service:{prompt_port}"))
    );
    assert_eq!(
        agent.depends_on["prompt-service"].condition,
        "service_healthy"
    );
    // State on a named volume at the state dir; openclaw.json read-only at the config path.
    let state = agent
        .volumes
        .iter()
        .find(|m| m.kind == "volume")
        .expect("state volume");
    assert_eq!(state.target, agent.environment["OPENCLAW_STATE_DIR"]);
    assert!(compose.volumes.contains_key(&state.source));
    let config = agent
        .volumes
        .iter()
        .find(|m| m.target == agent.environment["OPENCLAW_CONFIG_PATH"])
        .expect("config mount");
    assert_eq!(
        (config.kind.as_str(), config.read_only),
        ("bind", Some(true))
    );
    // Provider keys from an optional, git-ignored env file with a committed example.
    assert_eq!(agent.env_file[0].path, "./.env");
    assert_eq!(agent.env_file[0].required, Some(false));
    let ignore =
        std::fs::read_to_string(support::repo_root().join(".gitignore")).expect(".gitignore");
    assert!(
        ignore.lines().any(|l| l == "/deploy/.env"),
        "deploy/.env must be git-ignored"
    );
    let dockerignore =
        std::fs::read_to_string(support::repo_root().join(".dockerignore")).expect(".dockerignore");
    for entry in ["target", ".git", "deploy/.env"] {
        assert!(
            dockerignore.lines().any(|l| l == entry),
            ".dockerignore lacks {entry}"
        );
    }
}

/// A compose project in a temporary directory: `compose.yaml` plus files.
fn project(compose: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }
    std::fs::write(dir.path().join("compose.yaml"), compose).expect("compose");
    let parsed =
        ComposeFile::load(&dir.path().join("compose.yaml"), &BTreeMap::new()).expect("parse");
    let problems = parsed.problems(dir.path());
    (dir, problems)
}

const DOCKERFILE: &str = "FROM debian AS app\nUSER 10001\nENTRYPOINT [\"/usr/local/bin/app\"]\n";

#[test]
fn every_rule_reports_its_problem() {
    let compose = r#"
services:
  a:
    build: { context: ., target: app }
    environment: { A_LISTEN: "0.0.0.0:1", A_DRAIN_SECS: "10", URL: "http://b:9" }
    depends_on: { b: { condition: service_healthy } }
    ports: ["0.0.0.0:80:1", "127.0.0.1:81:2"]
    expose: ["3"]
    volumes:
      - { type: volume, source: undeclared, target: /data }
      - { type: bind, source: ./missing.json, target: /etc/x.json, read_only: true }
    env_file: [{ path: ./.env, required: false }]
    healthcheck: { test: ["CMD", "/bin/other", "status"], interval: five }
    restart: "no"
    stop_grace_period: 12s
  b:
    build: { context: ./nowhere }
    environment: { B_LISTEN: "0.0.0.0:9" }
    restart: always
volumes:
  unused: {}
"#;
    let (_dir, problems) = project(compose, &[("Dockerfile", DOCKERFILE)]);
    assert_eq!(
        problems,
        [
            "services.a: healthcheck runs Some(\"/bin/other\"), not the image's entrypoint Some(\"/usr/local/bin/app\")",
            "services.a: healthcheck does not use the binary's healthcheck subcommand",
            "services.a: healthcheck.interval \"five\" is not a duration",
            "services.a: depends_on b with service_healthy, but b has no healthcheck",
            "services.a: restart policy Some(\"no\") does not restart a crash",
            "services.a: stop_grace_period 12s leaves under 5s after the 10s drain",
            "services.a: port \"0.0.0.0:80:1\" is published on \"0.0.0.0\" by default, not 127.0.0.1",
            "services.a: port \"127.0.0.1:81:2\": nothing listens on container port 2 (listening: [1])",
            "services.a: expose \"3\": nothing listens there (listening: [1])",
            "services.a: volume \"undeclared\" is not declared under top-level volumes",
            "services.a: bind source \"./missing.json\" does not exist",
            "services.a: A_LISTEN=0.0.0.0:1 serves other hosts but A_TOKENS_FILE is not set (no token, no start)",
            "services.a: env_file \"./.env\" has no committed example \"./.env.example\"",
            "services.b: build context \"./nowhere\" is not a directory",
            "services.b: no stop_grace_period (Compose's default is 10 s)",
            "services.b: B_LISTEN=0.0.0.0:9 serves other hosts but B_TOKENS_FILE is not set (no token, no start)",
            "volumes.unused: declared but no service mounts it",
        ]
    );
}

#[test]
fn root_images_and_missing_dockerfiles_are_refused() {
    let compose = r#"
services:
  a:
    build: { context: ., target: app }
    environment: { A_DRAIN_SECS: "1" }
    restart: always
    stop_grace_period: 10s
  b:
    build: { context: ., dockerfile: Missing.Dockerfile }
    environment: { B_DRAIN_SECS: "1" }
    restart: always
    stop_grace_period: 10s
"#;
    let (_dir, problems) = project(
        compose,
        &[("Dockerfile", "FROM debian AS app\nENTRYPOINT [\"/x\"]\n")],
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        problems[0],
        "services.a: target \"app\" runs as root (no USER)"
    );
    assert!(
        problems[1].starts_with("services.b: Dockerfile ")
            && problems[1].ends_with("Missing.Dockerfile does not exist"),
        "{}",
        problems[1]
    );
}

#[test]
fn a_misspelled_key_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("compose.yaml");
    std::fs::write(
        &path,
        "services:\n  a:\n    helthcheck: { test: [CMD, x] }\n",
    )
    .expect("write");
    let error = ComposeFile::load(&path, &BTreeMap::new()).expect_err("typo");
    assert!(
        error.to_string().contains("unknown field `helthcheck`"),
        "{error}"
    );
}

#[test]
fn the_dockerfile_targets_run_each_binary_as_non_root() {
    let dockerfile =
        deploy_check::dockerfile::Dockerfile::load(&support::deploy_dir().join("Dockerfile"))
            .expect("Dockerfile");
    for (target, binary) in [
        ("prompt-service", "prompt-service"),
        ("agent-service", "agent-service"),
    ] {
        let image = dockerfile.image(target).expect(target);
        assert_eq!(image.entrypoint, [format!("/usr/local/bin/{binary}")]);
        assert_eq!(image.cmd, ["serve"]);
        assert_eq!(image.user.as_deref(), Some("10001:10001"));
        assert_eq!(
            image.healthcheck,
            Some(vec![
                format!("/usr/local/bin/{binary}"),
                "healthcheck".to_owned()
            ])
        );
    }
    // Both binaries come from one stage: compiled in a Rust image, or
    // prebuilt on the host (the argument picks which).
    let compiled = dockerfile.stage("compiled").expect("compiled stage");
    assert!(compiled.base.starts_with("rust:"), "{}", compiled.base);
    assert_eq!(
        dockerfile.stage("binaries").expect("binaries").base,
        "${BINARIES}"
    );
    // The runtime holds only files taken from slim Debian packages: no
    // base image layers (a slim Debian alone is twice the size limit).
    let runtime = dockerfile.stage("runtime").expect("runtime stage");
    assert_eq!(runtime.base, "scratch");
    let rootfs = dockerfile.stage("rootfs").expect("rootfs stage");
    assert!(
        rootfs.base.starts_with("debian:") && rootfs.base.ends_with("-slim"),
        "{}",
        rootfs.base
    );
    // The router runs as a numeric non-root user (runAsNonRoot can check it).
    let router = dockerfile.image("router").expect("router");
    assert_eq!(router.user.as_deref(), Some("10002:10002"));
    // Only the built-in frontend: no `# syntax=` directive.
    assert_eq!(dockerfile.directives, []);
    assert_eq!(dockerfile.problems(), Vec::<String>::new());
}

/// A `# syntax=` directive fails builds without registry access before the
/// file is read, so the compose check refuses it.
#[test]
fn a_syntax_directive_is_refused() {
    let compose = r#"
services:
  a:
    build: { context: ., target: app }
    environment: { A_DRAIN_SECS: "1" }
    restart: always
    stop_grace_period: 10s
"#;
    let (_dir, problems) = project(
        compose,
        &[(
            "Dockerfile",
            &format!("# syntax=docker/dockerfile:1.7\n{DOCKERFILE}"),
        )],
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].ends_with(
            "Dockerfile: line 1: `# syntax=docker/dockerfile:1.7` pulls a frontend image before \
             the build starts (fails offline); use the built-in frontend"
        ),
        "{}",
        problems[0]
    );
}

/// Both services listen on all interfaces in their containers, so
/// both read accepted tokens from a secret, and agent-service sends
/// prompt-service's first token from the same secret.
#[test]
fn the_compose_services_require_tokens_from_secrets() {
    let compose = load();
    let prompt = &compose.services["prompt-service"];
    let agent = &compose.services["agent-service"];
    assert_eq!(prompt.secrets, ["prompt-tokens"]);
    assert_eq!(agent.secrets, ["agent-tokens", "prompt-tokens"]);
    assert_eq!(
        prompt.environment["PROMPT_SERVICE_TOKENS_FILE"],
        "/run/secrets/prompt-tokens"
    );
    assert_eq!(
        agent.environment["AGENT_SERVICE_TOKENS_FILE"],
        "/run/secrets/agent-tokens"
    );
    assert_eq!(
        agent.environment["PROMPT_SERVICE_TOKEN_FILE"],
        "/run/secrets/prompt-tokens"
    );
    for secret in compose.secrets.values() {
        assert!(secret.file.starts_with("./secrets/"), "{}", secret.file);
    }
    let ignore =
        std::fs::read_to_string(support::repo_root().join(".gitignore")).expect(".gitignore");
    assert!(ignore.lines().any(|l| l == "/deploy/secrets/"));
    let dockerignore =
        std::fs::read_to_string(support::repo_root().join(".dockerignore")).expect(".dockerignore");
    assert!(dockerignore.lines().any(|l| l == "deploy/secrets"));
}

#[test]
fn unauthenticated_services_are_reported() {
    let compose = r#"
services:
  a:
    build: { context: ., target: app }
    environment: { A_LISTEN: "0.0.0.0:1", A_DRAIN_SECS: "1", B_URL: "http://b:2" }
    depends_on: { b: { condition: service_started } }
    restart: always
    stop_grace_period: 10s
  b:
    build: { context: ., target: app }
    environment: { B_LISTEN: "0.0.0.0:2", B_DRAIN_SECS: "1", B_TOKENS_FILE: /run/secrets/other }
    secrets: [b-tokens, undeclared]
    restart: always
    stop_grace_period: 10s
secrets:
  b-tokens: { file: ./secrets/b-tokens }
"#;
    let (_dir, problems) = project(compose, &[("Dockerfile", DOCKERFILE)]);
    assert_eq!(
        problems,
        [
            "services.a: A_LISTEN=0.0.0.0:1 serves other hosts but A_TOKENS_FILE is not set (no token, no start)",
            "services.a: B_URL calls b, which requires a token, but B_TOKEN_FILE is not set",
            "services.b: secret \"undeclared\" is not declared under top-level secrets",
            "services.b: B_TOKENS_FILE=/run/secrets/other is not one of its secrets (/run/secrets/b-tokens, /run/secrets/undeclared)",
            "secrets.b-tokens: ./secrets/b-tokens is not git-ignored (it holds a real secret)",
        ]
    );
}

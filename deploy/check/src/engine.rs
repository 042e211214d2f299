//! `deploy-check engine`: `compose.yaml` on a real Docker engine, end to end.
//!
//! Not part of `cargo test` (CI has no engine); it refuses at once, saying
//! so, when no engine answers. In order: the engine's versions against what
//! the compose file and the Dockerfile need; the host's release binaries
//! with their debug info split off ([`crate::dist`]); `compose build` of both
//! images from them; each image's size (at most [`IMAGE_LIMIT_BYTES`]), no
//! debug section in its binary, a shell in agent-service's for the exec
//! tool; `up --wait` until both are healthy; reflection of both services;
//! a call without a token refused; `Setup` with the read-only mounted
//! config; a Run with the scripted model; a restart and a recreate of
//! agent-service keep the session; `stop` exits 0 in both containers; and
//! `down` exits 0.
//!
//! Its project (`openclaw-deploy-check`), image tag (`deploy-check`), ports
//! (ephemeral, on the host's loopback) and tokens (made up per run) are its
//! own, so it neither uses nor disturbs a deployment of the same file; an
//! override file next to the tokens points the secrets at them, builds from
//! the prebuilt binaries and publishes prompt-service's port for the
//! reflection check.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use openclaw_proto::agent::v1 as pb;
use tonic::transport::Channel;

use crate::calls;

/// Largest accepted image, in bytes (what `docker images` shows as 40 MB).
pub const IMAGE_LIMIT_BYTES: u64 = 40_000_000;

/// Compose project of the check.
const PROJECT: &str = "openclaw-deploy-check";
/// Image tag of the check (`OPENCLAW_TAG`).
const TAG: &str = "deploy-check";
/// How long `up --wait` may take.
const WAIT_SECS: u32 = 120;

/// What the engine must be for this repository's deploy files, and why.
/// `(component, minimum, reason)`; versions compare numerically.
pub const REQUIREMENTS: &[(&str, &str, &str)] = &[
    (
        "engine",
        "25.0",
        "compose.yaml's healthcheck.start_interval (older engines refuse the file)",
    ),
    (
        "compose",
        "2.24",
        "compose.yaml's env_file entries with `required: false`",
    ),
];

/// Compose from this version on builds through buildx and needs
/// [`BUILDX_WITH_NEW_COMPOSE`] or newer.
pub const COMPOSE_NEEDING_NEW_BUILDX: &str = "2.40";
/// See [`COMPOSE_NEEDING_NEW_BUILDX`].
pub const BUILDX_WITH_NEW_COMPOSE: &str = "0.17";

/// How to run the check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository root (the build context).
    pub repo: PathBuf,
    /// Where the release binaries are (`target/release`).
    pub binaries: PathBuf,
    /// Extra `--build-arg`s, for example `http_proxy` when apt needs one.
    pub build_args: Vec<(String, String)>,
    /// The network of the build containers (`host` to reach a proxy on the
    /// host's loopback).
    pub build_network: Option<String>,
    /// Where published ports are reached from here.
    pub host: String,
}

/// Why the check failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No engine answers: the check cannot run here.
    #[error(
        "no Docker engine answers ({0}). This check needs one; it is not part of cargo test. \
         Start an engine (or point DOCKER_HOST at one) and run it again: see deploy/README.md, \
         \"Checking on a real engine\"."
    )]
    NoEngine(String),
    /// The engine is too old for the deploy files.
    #[error("{0}")]
    TooOld(String),
    /// A step failed.
    #[error("{step}: {detail}")]
    Step {
        /// Which step.
        step: &'static str,
        /// What went wrong.
        detail: String,
    },
}

fn step(step: &'static str) -> impl FnOnce(String) -> EngineError {
    move |detail| EngineError::Step { step, detail }
}

/// Runs the check, printing one line per result.
pub async fn run(options: &Options) -> Result<(), EngineError> {
    let versions = versions().await?;
    say(&format!(
        "engine: Docker Engine {}, Compose {}, buildx {}",
        versions["engine"], versions["compose"], versions["buildx"]
    ));
    check_versions(&versions).map_err(EngineError::TooOld)?;

    let started = Instant::now();
    let dist = options.repo.join("deploy/dist");
    let split = crate::dist::split_all(&options.binaries, &dist)
        .map_err(|e| step("dist")(e.to_string()))?;
    for s in &split {
        say(&format!(
            "dist: {} {} without debug info ({} of DWARF split off to {})",
            s.name,
            megabytes(s.binary_bytes),
            megabytes(s.debug_bytes),
            relative(&s.debug, &options.repo)
        ));
    }

    let work = tempfile::tempdir().map_err(|e| step("temp dir")(e.to_string()))?;
    let project = Project::prepare(options, work.path())?;
    let result = project.exercise(options).await;
    // Whatever happened, leave nothing running.
    let down = project
        .compose(&["down", "--volumes", "--timeout", "60"])
        .await;
    match (result, down) {
        (Err(e), _) => {
            let logs = project
                .compose(&["logs", "--no-color", "--tail", "40"])
                .await
                .unwrap_or_default();
            eprintln!("{logs}");
            Err(e)
        }
        (Ok(()), Err(e)) => Err(step("down")(e)),
        (Ok(()), Ok(_)) => {
            say(&format!(
                "down: exit 0; whole check {:.1} s",
                started.elapsed().as_secs_f64()
            ));
            Ok(())
        }
    }
}

fn say(line: &str) {
    println!("{line}");
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The engine's, Compose's and buildx's versions.
async fn versions() -> Result<BTreeMap<&'static str, String>, EngineError> {
    let engine = docker(&["version", "--format", "{{.Server.Version}}"])
        .await
        .map_err(EngineError::NoEngine)?;
    let compose = docker(&["compose", "version", "--short"])
        .await
        .map_err(|e| EngineError::TooOld(format!("docker compose is not installed: {e}")))?;
    let buildx = docker(&["buildx", "version"])
        .await
        .map_err(|e| EngineError::TooOld(format!("docker buildx is not installed: {e}")))?;
    let buildx = buildx
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .trim_start_matches('v')
        .to_owned();
    Ok([
        ("engine", engine.trim().to_owned()),
        ("compose", compose.trim().trim_start_matches('v').to_owned()),
        ("buildx", buildx),
    ]
    .into())
}

/// Checks [`REQUIREMENTS`] and the Compose/buildx pairing.
pub fn check_versions(versions: &BTreeMap<&'static str, String>) -> Result<(), String> {
    let mut problems = Vec::new();
    for (component, minimum, reason) in REQUIREMENTS {
        let found = versions.get(component).map(String::as_str).unwrap_or("");
        if !at_least(found, minimum) {
            problems.push(format!(
                "{component} {found} is older than {minimum}, needed for {reason}"
            ));
        }
    }
    let compose = versions.get("compose").map(String::as_str).unwrap_or("");
    let buildx = versions.get("buildx").map(String::as_str).unwrap_or("");
    if at_least(compose, COMPOSE_NEEDING_NEW_BUILDX) && !at_least(buildx, BUILDX_WITH_NEW_COMPOSE) {
        problems.push(format!(
            "Compose {compose} builds only with buildx {BUILDX_WITH_NEW_COMPOSE} or newer (found \
             {buildx}): update buildx, or build with `docker build` and run `compose up` without \
             --build"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `found >= minimum`, comparing the leading numbers of dotted versions
/// (`26.1.5+dfsg1` is 26.1.5).
pub fn at_least(found: &str, minimum: &str) -> bool {
    let numbers = |v: &str| -> Vec<u64> {
        v.split('.')
            .map(|part| {
                let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().unwrap_or(0)
            })
            .collect()
    };
    let (found, minimum) = (numbers(found), numbers(minimum));
    if found.is_empty() || found == [0] {
        return false;
    }
    for i in 0..found.len().max(minimum.len()) {
        let (f, m) = (
            found.get(i).copied().unwrap_or(0),
            minimum.get(i).copied().unwrap_or(0),
        );
        if f != m {
            return f > m;
        }
    }
    true
}

/// Runs `docker ARGS`; its stdout, or its stderr as the error.
async fn docker(args: &[&str]) -> Result<String, String> {
    let output = tokio::process::Command::new("docker")
        .args(args)
        .output()
        .await
        .map_err(|e| format!("cannot run docker: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "docker {} exited with {}: {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// The compose project of the check and its files.
struct Project {
    compose_args: Vec<String>,
    agent_token: String,
    prompt_token: String,
}

impl Project {
    /// Writes the tokens, the env file and the override file into `work`.
    fn prepare(options: &Options, work: &Path) -> Result<Self, EngineError> {
        let write = |name: &str, text: &str| -> Result<PathBuf, EngineError> {
            use std::os::unix::fs::PermissionsExt;
            let path = work.join(name);
            std::fs::write(&path, text).map_err(|e| step("write")(format!("{name}: {e}")))?;
            // Read by the containers' uid 10001 (see deploy/README.md, "Tokens").
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
                .map_err(|e| step("write")(format!("{name}: {e}")))?;
            Ok(path)
        };
        let unique = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        );
        let agent_token = format!("deploy-check-agent-{unique}");
        let prompt_token = format!("deploy-check-prompt-{unique}");
        let agent_tokens = write("agent-tokens", &format!("{agent_token}\n"))?;
        let prompt_tokens = write("prompt-tokens", &format!("{prompt_token}\n"))?;
        let deploy = options.repo.join("deploy");
        let example = std::fs::read_to_string(deploy.join(".env.example"))
            .map_err(|e| step("env file")(format!(".env.example: {e}")))?;
        let mut vars = crate::compose::parse_env_file(&example);
        vars.insert("OPENCLAW_TAG".into(), TAG.into());
        // Ephemeral host ports: never the ones a deployment on this host uses.
        vars.insert("AGENT_SERVICE_PORT".into(), "0".into());
        vars.insert("AGENT_SERVICE_METRICS_PORT".into(), "0".into());
        let env: String = vars.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let env_file = write("env", &env)?;

        let mut args: BTreeMap<String, String> = [("BINARIES".into(), "prebuilt".into())].into();
        args.extend(options.build_args.iter().cloned());
        let build = serde_json::json!({
            "args": args,
            "network": options.build_network,
        });
        let override_file = serde_json::json!({
            "services": {
                "prompt-service": { "build": build, "ports": ["127.0.0.1::50051"] },
                "agent-service": { "build": build },
            },
            "secrets": {
                "agent-tokens": { "file": agent_tokens },
                "prompt-tokens": { "file": prompt_tokens },
            },
        });
        let mut override_file = override_file;
        if options.build_network.is_none() {
            for service in ["prompt-service", "agent-service"] {
                if let Some(build) = override_file["services"][service]["build"].as_object_mut() {
                    build.remove("network");
                }
            }
        }
        // JSON is YAML.
        let override_path = write("override.yaml", &override_file.to_string())?;
        let compose_args = [
            "compose",
            "--project-name",
            PROJECT,
            "--file",
            &deploy.join("compose.yaml").display().to_string(),
            "--file",
            &override_path.display().to_string(),
            "--env-file",
            &env_file.display().to_string(),
        ]
        .map(String::from)
        .to_vec();
        Ok(Self {
            compose_args,
            agent_token,
            prompt_token,
        })
    }

    async fn compose(&self, args: &[&str]) -> Result<String, String> {
        let mut all: Vec<&str> = self.compose_args.iter().map(String::as_str).collect();
        all.extend(args);
        docker(&all).await
    }

    /// Everything between build and down.
    async fn exercise(&self, options: &Options) -> Result<(), EngineError> {
        let at = Instant::now();
        self.compose(&["build"]).await.map_err(step("build"))?;
        say(&format!(
            "build: both images in {:.1} s",
            at.elapsed().as_secs_f64()
        ));
        for (service, binary) in [
            ("prompt-service", "/usr/local/bin/prompt-service"),
            ("agent-service", "/usr/local/bin/agent-service"),
        ] {
            self.check_image(service, binary).await?;
        }
        let shell = docker(&[
            "run",
            "--rm",
            "--entrypoint",
            "/bin/sh",
            &image("agent-service"),
            "-c",
            "echo shell ok",
        ])
        .await
        .map_err(step("agent-service shell"))?;
        if shell.trim() != "shell ok" {
            return Err(step("agent-service shell")(format!("sh printed {shell:?}")));
        }
        say("image agent-service: /bin/sh runs (the exec tool's shell)");

        check_router_image(options).await?;

        let at = Instant::now();
        self.up(&[]).await?;
        say(&format!(
            "up: both services healthy in {:.1} s",
            at.elapsed().as_secs_f64()
        ));

        let prompt = self.channel(options, "prompt-service", 50051).await?;
        let agent = self.channel(options, "agent-service", 50052).await?;
        for (service, channel, served) in [
            (
                "prompt-service",
                &prompt,
                "openclaw.prompt.v1.PromptService",
            ),
            ("agent-service", &agent, "openclaw.agent.v1.AgentService"),
        ] {
            let listed = service_kit::listed_services(channel.clone())
                .await
                .map_err(|s| step("reflection")(format!("{service}: {s}")))?;
            let mut expected = vec![
                "grpc.health.v1.Health".to_owned(),
                "grpc.reflection.v1.ServerReflection".to_owned(),
                "grpc.reflection.v1alpha.ServerReflection".to_owned(),
                served.to_owned(),
            ];
            expected.sort();
            if listed.v1 != expected || listed.v1alpha != expected {
                return Err(step("reflection")(format!(
                    "{service} lists {listed:?}, expected {expected:?}"
                )));
            }
            say(&format!(
                "reflection: {service} lists {}",
                listed.v1.join(", ")
            ));
        }
        self.check_tokens(&prompt, &agent).await?;

        let mut client = calls::client(agent, &self.agent_token).map_err(step("client"))?;
        let setup = client
            .setup(pb::SetupRequest::default())
            .await
            .map_err(|s| step("Setup")(format!("{} {}", s.code(), s.message())))?
            .into_inner();
        if setup.config_created || setup.config_path != "/etc/openclaw/openclaw.json" {
            return Err(step("Setup")(format!("unexpected reply {setup:?}")));
        }
        say(&format!(
            "Setup: OK with the read-only config {} (config_created false); workspaces: {}",
            setup.config_path,
            setup
                .workspaces
                .iter()
                .map(|w| format!(
                    "{} ({} files created by this call)",
                    w.workspace,
                    w.created_files.len()
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));

        let key = "agent:main:deploy-check";
        let first = calls::run(&mut client, key, "hello")
            .await
            .map_err(step("Run"))?;
        if !first.final_text.starts_with(calls::DEMO_REPLY) {
            return Err(step("Run")(format!(
                "unexpected answer {:?}",
                first.final_text
            )));
        }
        say(&format!(
            "Run: session {} answered {:?}...",
            first.session_id,
            first.final_text.chars().take(44).collect::<String>()
        ));

        for (what, recreate) in [("restart", false), ("recreate", true)] {
            let at = Instant::now();
            if recreate {
                // A new container on the same volume.
                self.up(&["--force-recreate", "--no-deps", "agent-service"])
                    .await?;
            } else {
                self.compose(&["restart", "agent-service"])
                    .await
                    .map_err(step("restart"))?;
                self.up(&["--no-recreate", "agent-service"]).await?;
            }
            let agent = self.channel(options, "agent-service", 50052).await?;
            let mut client = calls::client(agent, &self.agent_token).map_err(step("client"))?;
            let again = calls::run(&mut client, key, "hello again")
                .await
                .map_err(step("Run after restart"))?;
            let said = calls::user_messages(&mut client, key)
                .await
                .map_err(step("transcript"))?;
            if again.session_id != first.session_id || said.len() < 2 {
                return Err(step("session kept")(format!(
                    "after {what}: session {} (was {}), user messages {said:?}",
                    again.session_id, first.session_id
                )));
            }
            say(&format!(
                "{what}: healthy again in {:.1} s; session {} kept, {} user messages in its transcript",
                at.elapsed().as_secs_f64(),
                again.session_id,
                said.len()
            ));
        }

        // `docker logs`, not `compose logs`: exactly what the container
        // printed (the service logs on stderr), without Compose's framing.
        let id = self
            .compose(&["ps", "--quiet", "agent-service"])
            .await
            .map_err(step("logs"))?;
        let output = tokio::process::Command::new("docker")
            .args(["logs", id.trim()])
            .output()
            .await
            .map_err(|e| step("logs")(e.to_string()))?;
        let logs = String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = logs.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return Err(step("logs")("agent-service logged nothing".into()));
        }
        if let Some(bad) = lines
            .iter()
            .find(|l| serde_json::from_str::<serde_json::Value>(l).is_err())
        {
            return Err(step("logs")(format!("not a JSON line: {bad}")));
        }
        say(&format!(
            "logs: agent-service's {} lines since the recreate are all JSON",
            lines.len()
        ));

        let at = Instant::now();
        let ids: Vec<String> = self
            .compose(&["ps", "--all", "--quiet"])
            .await
            .map_err(step("ps"))?
            .lines()
            .map(str::to_owned)
            .collect();
        self.compose(&["stop"]).await.map_err(step("stop"))?;
        let mut codes = Vec::new();
        for id in &ids {
            let state = docker(&["inspect", "--format", "{{.Name}} {{.State.ExitCode}}", id])
                .await
                .map_err(step("stop"))?;
            codes.push(state.trim().trim_start_matches('/').to_owned());
        }
        if ids.len() != 2 || codes.iter().any(|c| !c.ends_with(" 0")) {
            return Err(step("stop")(format!("exit codes {codes:?}")));
        }
        say(&format!(
            "stop: {:.1} s, exit codes {}",
            at.elapsed().as_secs_f64(),
            codes.join(", ")
        ));
        Ok(())
    }

    /// Both services refuse a call without a token; prompt-service answers
    /// one with its token.
    async fn check_tokens(&self, prompt: &Channel, agent: &Channel) -> Result<(), EngineError> {
        use openclaw_proto::prompt::v1::{
            ResolveProviderContributionRequest, prompt_service_client::PromptServiceClient,
        };
        let refused = pb::agent_service_client::AgentServiceClient::new(agent.clone())
            .setup(pb::SetupRequest::default())
            .await;
        if !matches!(&refused, Err(s) if s.code() == tonic::Code::Unauthenticated) {
            return Err(step("auth")(format!(
                "agent-service Setup without a token: {refused:?}"
            )));
        }
        let refused = PromptServiceClient::new(prompt.clone())
            .resolve_provider_contribution(ResolveProviderContributionRequest::default())
            .await;
        if !matches!(&refused, Err(s) if s.code() == tonic::Code::Unauthenticated) {
            return Err(step("auth")(format!(
                "prompt-service without a token: {refused:?}"
            )));
        }
        let token = service_kit::BearerToken::new(&self.prompt_token).map_err(step("auth"))?;
        let mut request = tonic::Request::new(ResolveProviderContributionRequest {
            provider_id: "openai".into(),
            model_id: "gpt-5.5".into(),
            ..Default::default()
        });
        token.apply(&mut request);
        PromptServiceClient::new(prompt.clone())
            .resolve_provider_contribution(request)
            .await
            .map_err(|s| step("auth")(format!("prompt-service with its token: {s}")))?;
        say(
            "auth: both services refuse a call without a token (UNAUTHENTICATED); prompt-service answers its own",
        );
        Ok(())
    }

    /// `up --wait` with `extra` (options, then services; all when none).
    async fn up(&self, extra: &[&str]) -> Result<(), EngineError> {
        let timeout = WAIT_SECS.to_string();
        let mut args = vec!["up", "--detach", "--wait", "--wait-timeout", &timeout];
        args.extend(extra);
        self.compose(&args).await.map_err(step("up"))?;
        Ok(())
    }

    /// A channel to a service's published `port`.
    async fn channel(
        &self,
        options: &Options,
        service: &str,
        port: u16,
    ) -> Result<Channel, EngineError> {
        let published = self
            .compose(&["port", service, &port.to_string()])
            .await
            .map_err(step("port"))?;
        let host_port = published
            .trim()
            .rsplit_once(':')
            .map(|(_, p)| p.to_owned())
            .ok_or_else(|| step("port")(format!("{service}:{port} published as {published:?}")))?;
        let url = format!("http://{}:{host_port}", options.host);
        tonic::transport::Endpoint::from_shared(url.clone())
            .map_err(|e| step("connect")(e.to_string()))?
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| {
                step("connect")(format!(
                    "{service} at {url}: {e} (are published ports reachable from here? see \
                     --host in deploy/README.md)"
                ))
            })
    }

    /// Size, debug sections and binary of one service's image.
    async fn check_image(&self, service: &str, binary: &str) -> Result<(), EngineError> {
        let name = image(service);
        let size: u64 = docker(&["image", "inspect", "--format", "{{.Size}}", &name])
            .await
            .map_err(step("image"))?
            .trim()
            .parse()
            .map_err(|e| step("image")(format!("{name}: size: {e}")))?;
        let container = docker(&["create", &name])
            .await
            .map_err(step("image"))?
            .trim()
            .to_owned();
        let copy = tempfile::tempdir().map_err(|e| step("image")(e.to_string()))?;
        let local = copy.path().join(service);
        let copied = docker(&[
            "cp",
            &format!("{container}:{binary}"),
            &local.display().to_string(),
        ])
        .await;
        let _ = docker(&["rm", &container]).await;
        copied.map_err(step("image"))?;
        let sections =
            crate::dist::debug_sections(&local).map_err(|e| step("image")(e.to_string()))?;
        if !sections.is_empty() {
            return Err(step("image")(format!(
                "{name}: {binary} has debug sections {sections:?}"
            )));
        }
        if size > IMAGE_LIMIT_BYTES {
            return Err(step("image")(format!(
                "{name} is {}, over the {} limit",
                megabytes(size),
                megabytes(IMAGE_LIMIT_BYTES)
            )));
        }
        say(&format!(
            "image {name}: {} (limit {}), {binary} has no debug sections",
            megabytes(size),
            megabytes(IMAGE_LIMIT_BYTES)
        ));
        Ok(())
    }
}

/// Builds the router image and has its HAProxy check the Kubernetes config.
async fn check_router_image(options: &Options) -> Result<(), EngineError> {
    let name = image("router");
    let dockerfile = options.repo.join("deploy/Dockerfile").display().to_string();
    let mut args = vec![
        "build".to_owned(),
        "--quiet".to_owned(),
        "--file".to_owned(),
        dockerfile,
        "--target".to_owned(),
        "router".to_owned(),
        "--tag".to_owned(),
        name.clone(),
    ];
    for (key, value) in &options.build_args {
        args.push("--build-arg".into());
        args.push(format!("{key}={value}"));
    }
    if let Some(network) = &options.build_network {
        args.push("--network".into());
        args.push(network.clone());
    }
    args.push(options.repo.display().to_string());
    let at = Instant::now();
    docker(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await
        .map_err(step("router image"))?;
    let inspected = docker(&[
        "image",
        "inspect",
        "--format",
        "{{.Config.User}} {{.Config.StopSignal}} {{.Size}}",
        &name,
    ])
    .await
    .map_err(step("router image"))?;
    let fields: Vec<&str> = inspected.split_whitespace().collect();
    if fields.get(..2) != Some(&["10002:10002", "SIGUSR1"][..]) {
        return Err(step("router image")(format!(
            "{name}: user and stop signal are {inspected:?}, expected 10002:10002 SIGUSR1"
        )));
    }
    let config = options.repo.join("deploy/k8s/router/haproxy.cfg");
    let mount = format!(
        "type=bind,source={},target=/usr/local/etc/haproxy/haproxy.cfg,readonly",
        config.display()
    );
    let version = docker(&["run", "--rm", "--entrypoint", "haproxy", &name, "-v"])
        .await
        .map_err(step("router image"))?;
    docker(&["run", "--rm", "--mount", &mount, &name, "-c"])
        .await
        .map_err(step("router config"))?;
    say(&format!(
        "image {name}: built in {:.1} s, {}, user 10002, stop signal SIGUSR1; {} accepts k8s/router/haproxy.cfg",
        at.elapsed().as_secs_f64(),
        megabytes(fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0)),
        version.lines().next().unwrap_or("haproxy").trim()
    ));
    Ok(())
}

fn image(service: &str) -> String {
    format!("openclaw/{service}:{TAG}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(at_least("26.1.5+dfsg1", "25.0"));
        assert!(at_least("25.0.0", "25.0"));
        assert!(!at_least("24.0.9", "25.0"));
        assert!(at_least("2.26.1-4", "2.24"));
        assert!(!at_least("2.9.0", "2.24"));
        assert!(!at_least("", "2.24"));
        assert!(!at_least("0.13.1+ds1", "0.17"));
    }

    #[test]
    fn old_engines_and_mismatched_buildx_are_refused() {
        let of = |engine: &str, compose: &str, buildx: &str| {
            check_versions(
                &[
                    ("engine", engine.to_owned()),
                    ("compose", compose.to_owned()),
                    ("buildx", buildx.to_owned()),
                ]
                .into(),
            )
        };
        assert_eq!(of("26.1.5", "2.26.1", "0.13.1"), Ok(()));
        assert_eq!(
            of("20.10.24", "2.26.1", "0.13.1"),
            Err(
                "engine 20.10.24 is older than 25.0, needed for compose.yaml's \
                 healthcheck.start_interval (older engines refuse the file)"
                    .into()
            )
        );
        assert!(
            of("27.0.1", "2.40.0", "0.13.1")
                .is_err_and(|e| e.starts_with("Compose 2.40.0 builds only with buildx 0.17"))
        );
        assert_eq!(of("27.0.1", "2.40.0", "0.17.1"), Ok(()));
    }
}

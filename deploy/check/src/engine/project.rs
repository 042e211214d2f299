//! The check's compose project: its files (tokens, env file, override),
//! and the steps that talk to the running services.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use openclaw_proto::agent::v1 as pb;
use tonic::transport::Channel;

use super::{EngineError, Options, PROJECT, TAG, WAIT_SECS, docker, say, step};
use crate::calls;

/// The session the check runs in.
const SESSION_KEY: &str = "agent:main:deploy-check";

/// The compose project of the check and its files.
pub(super) struct Project {
    compose_args: Vec<String>,
    agent_token: String,
    prompt_token: String,
    /// The token files and the env file, which the routed project uses too.
    pub(super) secrets: super::routed::Secrets,
    pub(super) env_file: PathBuf,
}

impl Project {
    /// Writes the tokens, the env file and the override file into `work`.
    pub(super) fn prepare(options: &Options, work: &Path) -> Result<Self, EngineError> {
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
            secrets: super::routed::Secrets {
                agent_tokens,
                prompt_tokens,
            },
            env_file,
        })
    }

    /// The token clients of agent-service send.
    pub(super) fn agent_token(&self) -> &str {
        &self.agent_token
    }

    pub(super) async fn compose(&self, args: &[&str]) -> Result<String, String> {
        let mut all: Vec<&str> = self.compose_args.iter().map(String::as_str).collect();
        all.extend(args);
        docker(&all).await
    }

    /// Setup with the read-only mounted config, then a Run with the
    /// scripted model; its outcome.
    pub(super) async fn setup_and_run(
        &self,
        agent: Channel,
    ) -> Result<calls::RunOutcome, EngineError> {
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
        let first = calls::run(&mut client, SESSION_KEY, "hello")
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
        Ok(first)
    }

    /// A restart, then a recreate (a new container on the same volume) of
    /// agent-service: the session of `first` continues after each.
    pub(super) async fn restarts_keep_the_session(
        &self,
        options: &Options,
        first: &calls::RunOutcome,
    ) -> Result<(), EngineError> {
        for (what, recreate) in [("restart", false), ("recreate", true)] {
            let at = Instant::now();
            if recreate {
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
            let again = calls::run(&mut client, SESSION_KEY, "hello again")
                .await
                .map_err(step("Run after restart"))?;
            let said = calls::user_messages(&mut client, SESSION_KEY)
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
        Ok(())
    }

    /// agent-service's log lines are JSON. `docker logs`, not `compose
    /// logs`: exactly what the container printed (the service logs on
    /// stderr), without Compose's framing.
    pub(super) async fn check_logs(&self) -> Result<(), EngineError> {
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
        Ok(())
    }

    /// `compose stop`: both containers exit 0.
    pub(super) async fn stop(&self) -> Result<(), EngineError> {
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
    pub(super) async fn check_tokens(
        &self,
        prompt: &Channel,
        agent: &Channel,
    ) -> Result<(), EngineError> {
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
    pub(super) async fn up(&self, extra: &[&str]) -> Result<(), EngineError> {
        let timeout = WAIT_SECS.to_string();
        let mut args = vec!["up", "--detach", "--wait", "--wait-timeout", &timeout];
        args.extend(extra);
        self.compose(&args).await.map_err(step("up"))?;
        Ok(())
    }

    /// A channel to a service's published `port`.
    pub(super) async fn channel(
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
}

/// Reflection lists exactly what each service serves.
pub(super) async fn check_reflection(prompt: &Channel, agent: &Channel) -> Result<(), EngineError> {
    for (service, channel, served) in [
        ("prompt-service", prompt, "openclaw.prompt.v1.PromptService"),
        ("agent-service", agent, "openclaw.agent.v1.AgentService"),
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
    Ok(())
}

//! The routed topology on the engine: the Kubernetes layout (agent-service replicas behind the
//! router, each with its own state volume) as a compose project built from the shipped files,
//! and the session-ownership cases checked on it.
//!
//! The project is made from what deploy/ ships, not written again: each service's definition
//! (image, command, environment, secrets, mounts, health check, hardening) is compose.yaml's;
//! the replica count, the replica variable and the router URLs are the StatefulSet's; the
//! router runs the router image with `k8s/router` mounted as its ConfigMap is, unchanged. The
//! containers answer to the names the router config uses (`agent-service-<i>.<namespace>...`,
//! the headless prompt-service name) through network aliases, so the config needs no edit.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use openclaw_proto::agent::v1 as pb;
use serde_json::{Value, json};
use tonic::{Code, transport::Channel};

use super::{EngineError, Options, WAIT_SECS, docker, say, step};
use crate::{calls, haproxy::HaproxyConfig, k8s::Bundle};

/// Compose project of the routed check.
pub(crate) const PROJECT: &str = "openclaw-deploy-check-routed";
/// prompt-service replicas behind the router (any number works; two shows the balancing).
const PROMPT_REPLICAS: u32 = 2;
/// The StatefulSet whose layout the project copies.
const STATEFUL_SET: &str = "agent-service";
/// The router's backend of agent-service replicas and of prompt-service.
const AGENT_BACKEND: &str = "agent_service";
const PROMPT_BACKEND: &str = "prompt_service";
/// How long a session's calls may keep failing after its replica is back, while the router
/// resolves its name again (`hold valid` in the resolvers, 10 s).
const BACK_WITHIN: Duration = Duration::from_secs(60);
/// The router's readiness, as its startup probe asks it (`GET /ready` on the health port),
/// with what the router image has: bash.
const ROUTER_READY: &str = "exec 3<>/dev/tcp/127.0.0.1/8404 \
    && printf 'GET /ready HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '";

/// The layout the shipped files describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// agent-service replicas: the StatefulSet's `replicas`.
    pub replicas: u32,
    /// `AGENT_SERVICE_REPLICA` as the StatefulSet sets it (`$(POD_NAME)/N`).
    pub replica_value: String,
    /// `PROMPT_SERVICE_URL` and `AGENT_SERVICE_ROUTER_URL` of the StatefulSet (the router).
    pub prompt_url: String,
    /// See [`Self::prompt_url`].
    pub router_url: String,
    /// The router's agent-service servers: (server name, host it resolves), slot order.
    pub agent_servers: Vec<(String, String)>,
    /// The host the router's prompt-service template resolves.
    pub prompt_host: String,
}

impl Layout {
    /// Reads the layout from deploy/k8s (the StatefulSet and the router config).
    pub fn load(deploy: &Path) -> Result<Self, String> {
        let bundle = Bundle::load(&deploy.join("k8s")).map_err(|e| e.to_string())?;
        let sts = bundle
            .get("StatefulSet", STATEFUL_SET)
            .ok_or_else(|| format!("no StatefulSet/{STATEFUL_SET} in deploy/k8s"))?;
        let replicas = sts.value["spec"]["replicas"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("StatefulSet/{STATEFUL_SET} has no spec.replicas"))?;
        let env = |name: &str| -> Result<String, String> {
            crate::k8s::containers(sts)
                .flat_map(|c| crate::k8s::array(c, "/env"))
                .find(|e| e["name"] == name)
                .and_then(|e| e["value"].as_str())
                .map(str::to_owned)
                .ok_or_else(|| format!("StatefulSet/{STATEFUL_SET} does not set {name}"))
        };
        let config = HaproxyConfig::load(&deploy.join("k8s/router/haproxy.cfg"))
            .map_err(|e| e.to_string())?;
        let host = |address: &str| {
            address
                .rsplit_once(':')
                .map_or(address, |(h, _)| h)
                .to_owned()
        };
        let servers = |backend: &str| {
            config
                .section("backend", backend)
                .map(|section| config.servers(section))
                .ok_or_else(|| format!("haproxy.cfg has no backend {backend}"))
        };
        let agent_servers = servers(AGENT_BACKEND)?
            .into_iter()
            .filter(|s| !s.template)
            .map(|s| (s.name, host(&s.address)))
            .collect();
        let prompt_host = servers(PROMPT_BACKEND)?
            .into_iter()
            .find(|s| s.template)
            .map(|s| host(&s.address))
            .ok_or("haproxy.cfg's prompt_service backend has no server-template")?;
        Ok(Self {
            replicas,
            replica_value: env("AGENT_SERVICE_REPLICA")?,
            prompt_url: env("PROMPT_SERVICE_URL")?,
            router_url: env("AGENT_SERVICE_ROUTER_URL")?,
            agent_servers,
            prompt_host,
        })
    }

    /// The router's service name: the host of the router URL.
    pub fn router_service(&self) -> String {
        let rest = self
            .router_url
            .split_once("://")
            .map_or(self.router_url.as_str(), |(_, rest)| rest);
        rest.rsplit_once(':').map_or(rest, |(h, _)| h).to_owned()
    }

    /// Replica `i`'s service (and pod) name, as the router's server for slot `i` is named.
    pub fn agent_service(&self, i: u32) -> String {
        self.agent_servers
            .get(i as usize)
            .map_or_else(|| format!("agent-service-{i}"), |(name, _)| name.clone())
    }
}

/// Where the project's secrets are.
#[derive(Debug, Clone)]
pub struct Secrets {
    /// agent-service's tokens file.
    pub agent_tokens: PathBuf,
    /// prompt-service's tokens file.
    pub prompt_tokens: PathBuf,
}

/// The routed project's compose file (JSON, which is YAML), from deploy/compose.yaml's
/// services and `layout`: `layout.replicas` agent-service replicas, each named as its pod with
/// `AGENT_SERVICE_REPLICA` as the StatefulSet sets it, its own state volume and its router
/// server's name as an alias; two prompt-service under the router's headless name; the router
/// with k8s/router mounted as its ConfigMap. Published on the loopback: the router's
/// AgentService port and each replica's own (for calls that bypass the router).
pub fn project_file(deploy: &Path, layout: &Layout, secrets: &Secrets) -> Result<Value, String> {
    let path = deploy.join("compose.yaml");
    let text = crate::read(&path).map_err(|e| e.to_string())?;
    let compose = crate::yaml::all(&path, &text)
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .ok_or("compose.yaml is empty")?;
    let base = |name: &str| -> Result<serde_json::Map<String, Value>, String> {
        let mut service = compose["services"][name]
            .as_object()
            .cloned()
            .ok_or_else(|| format!("compose.yaml has no service {name}"))?;
        for key in ["build", "ports", "depends_on", "expose"] {
            service.remove(key);
        }
        // Built by the first part of the check; never pulled.
        service.insert("pull_policy".into(), "never".into());
        anchor_paths(&mut service, deploy);
        Ok(service)
    };
    let router = layout.router_service();
    let mut services = serde_json::Map::new();
    let mut healthy_prompts = serde_json::Map::new();
    for i in 0..PROMPT_REPLICAS {
        let mut prompt = base("prompt-service")?;
        prompt.insert("networks".into(), aliases(&[&layout.prompt_host]));
        let name = format!("prompt-service-{i}");
        healthy_prompts.insert(name.clone(), json!({ "condition": "service_healthy" }));
        services.insert(name, Value::Object(prompt));
    }
    let mut volumes = serde_json::Map::new();
    let mut started_agents = serde_json::Map::new();
    for i in 0..layout.replicas {
        let name = layout.agent_service(i);
        let host = layout
            .agent_servers
            .get(i as usize)
            .map(|(_, host)| host.as_str())
            .ok_or_else(|| format!("the router has no server for slot {i}"))?;
        let mut agent = base("agent-service")?;
        let env = agent
            .entry("environment")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .ok_or("agent-service's environment is not a mapping")?;
        env.insert(
            "AGENT_SERVICE_REPLICA".into(),
            layout.replica_value.replace("$(POD_NAME)", &name).into(),
        );
        env.insert(
            "PROMPT_SERVICE_URL".into(),
            layout.prompt_url.clone().into(),
        );
        env.insert(
            "AGENT_SERVICE_ROUTER_URL".into(),
            layout.router_url.clone().into(),
        );
        // One state volume per replica, as the StatefulSet's claim template gives each pod.
        let volume = format!("state-{name}");
        for mount in agent
            .get_mut("volumes")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if mount["type"] == "volume" {
                mount["source"] = volume.clone().into();
            }
        }
        volumes.insert(volume, json!({}));
        agent.insert("ports".into(), json!(["127.0.0.1::50052"]));
        agent.insert("networks".into(), aliases(&[host]));
        agent.insert("depends_on".into(), Value::Object(healthy_prompts.clone()));
        started_agents.insert(name.clone(), json!({ "condition": "service_started" }));
        services.insert(name, Value::Object(agent));
    }
    // The router starts after the replicas. In the cluster each replica's name is its own
    // Service, which resolves whether or not the pod runs; here a name resolves only once its
    // container runs, and HAProxy's start-up lookup (`init-addr last,libc,none`) of a name
    // the engine's DNS does not know waits for the upstream resolvers to time out. Its health
    // check is the Deployment's startup probe: `/ready` on the health port.
    services.insert(
        router.clone(),
        json!({
            "image": super::image("router"),
            "pull_policy": "never",
            "ports": ["127.0.0.1::50052"],
            "volumes": [{
                "type": "bind",
                "source": deploy.join("k8s/router"),
                "target": "/usr/local/etc/haproxy",
                "read_only": true,
            }],
            "depends_on": started_agents,
            "healthcheck": {
                "test": ["CMD", "bash", "-c", ROUTER_READY],
                "interval": "10s",
                "timeout": "5s",
                "retries": 3,
                "start_period": "30s",
                "start_interval": "1s",
            },
        }),
    );
    Ok(json!({
        "name": PROJECT,
        "services": services,
        "volumes": volumes,
        "secrets": {
            "agent-tokens": { "file": secrets.agent_tokens },
            "prompt-tokens": { "file": secrets.prompt_tokens },
        },
    }))
}

/// A service's place on the default network, under `names` too.
fn aliases(names: &[&str]) -> Value {
    json!({ "default": { "aliases": names } })
}

/// compose.yaml's relative paths (bind sources, env files) are relative to deploy/; the
/// project file lives elsewhere.
fn anchor_paths(service: &mut serde_json::Map<String, Value>, deploy: &Path) {
    let anchored = |path: &str| deploy.join(path).display().to_string();
    for mount in service
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if mount["type"] == "bind"
            && let Some(source) = mount["source"].as_str().filter(|s| s.starts_with('.'))
        {
            mount["source"] = anchored(source).into();
        }
    }
    for file in service
        .get_mut("env_file")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(path) = file["path"].as_str().filter(|s| s.starts_with('.')) {
            file["path"] = anchored(path).into();
        }
    }
}

/// The routed project, running.
struct Routed {
    compose_args: Vec<String>,
    layout: Layout,
    token: String,
}

/// Writes the project file into `work`, brings it up and checks the ownership cases; takes it
/// down whatever happened.
pub(super) async fn run(
    options: &Options,
    work: &Path,
    secrets: &Secrets,
    env_file: &Path,
    token: &str,
) -> Result<(), EngineError> {
    let deploy = options.repo.join("deploy");
    let layout = Layout::load(&deploy).map_err(step("routed project"))?;
    let file = project_file(&deploy, &layout, secrets).map_err(step("routed project"))?;
    let path = work.join("routed.yaml");
    std::fs::write(&path, file.to_string()).map_err(|e| step("routed project")(e.to_string()))?;
    let routed = Routed {
        compose_args: [
            "compose",
            "--project-name",
            PROJECT,
            "--file",
            &path.display().to_string(),
            "--env-file",
            &env_file.display().to_string(),
        ]
        .map(String::from)
        .to_vec(),
        layout,
        token: token.to_owned(),
    };
    let result = routed.exercise(options).await;
    if result.is_err() {
        // Before `down`, which removes the containers and their logs.
        let logs = routed
            .compose(&["logs", "--no-color", "--tail", "40"])
            .await
            .unwrap_or_default();
        eprintln!("{logs}");
    }
    let at = Instant::now();
    // The replicas first: `down` would stop the router first (it depends on them), and a
    // stopping router lets the streams in flight finish, among them each replica's health
    // watch of prompt-service, which ends only with the replica.
    let replicas: Vec<String> = (0..routed.layout.replicas)
        .map(|i| routed.layout.agent_service(i))
        .collect();
    let mut stop = vec!["stop", "--timeout", "60"];
    stop.extend(replicas.iter().map(String::as_str));
    let stopped = routed.compose(&stop).await;
    let down = match stopped {
        Ok(_) => {
            routed
                .compose(&["down", "--volumes", "--timeout", "60"])
                .await
        }
        Err(e) => {
            // Still take everything down, then report the failed stop.
            let _ = routed
                .compose(&["down", "--volumes", "--timeout", "60"])
                .await;
            Err(e)
        }
    };
    match (result, down) {
        (Err(e), _) => Err(e),
        (Ok(()), Err(e)) => Err(step("routed down")(e)),
        (Ok(()), Ok(_)) => {
            say(&format!(
                "routed down: the replicas, then the rest, exit 0 in {:.1} s",
                at.elapsed().as_secs_f64()
            ));
            Ok(())
        }
    }
}

impl Routed {
    async fn compose(&self, args: &[&str]) -> Result<String, String> {
        let mut all: Vec<&str> = self.compose_args.iter().map(String::as_str).collect();
        all.extend(args);
        docker(&all).await
    }

    async fn up(&self, extra: &[&str]) -> Result<(), EngineError> {
        let timeout = WAIT_SECS.to_string();
        let mut args = vec!["up", "--detach", "--wait", "--wait-timeout", &timeout];
        args.extend(extra);
        self.compose(&args).await.map_err(step("routed up"))?;
        Ok(())
    }

    async fn client(&self, options: &Options, service: &str) -> Result<calls::Client, EngineError> {
        let published = self
            .compose(&["port", service, "50052"])
            .await
            .map_err(step("routed port"))?;
        let port = published
            .trim()
            .rsplit_once(':')
            .map(|(_, p)| p.to_owned())
            .ok_or_else(|| step("routed port")(format!("{service}: {published:?}")))?;
        let channel: Channel =
            tonic::transport::Endpoint::from_shared(format!("http://{}:{port}", options.host))
                .map_err(|e| step("routed connect")(e.to_string()))?
                .connect_timeout(Duration::from_secs(5))
                .connect_lazy();
        calls::client(channel, &self.token).map_err(step("routed client"))
    }

    async fn exercise(&self, options: &Options) -> Result<(), EngineError> {
        let at = Instant::now();
        self.up(&[]).await?;
        let n = self.layout.replicas;
        let names: Vec<String> = (0..n).map(|i| self.layout.agent_service(i)).collect();
        say(&format!(
            "routed up: {PROMPT_REPLICAS} prompt-service, {n} agent-service ({}; one state volume each) and the router with k8s/router/haproxy.cfg, healthy in {:.1} s",
            names
                .iter()
                .map(|name| format!(
                    "{name} with AGENT_SERVICE_REPLICA={}",
                    self.layout.replica_value.replace("$(POD_NAME)", name)
                ))
                .collect::<Vec<_>>()
                .join(", "),
            at.elapsed().as_secs_f64()
        ));
        let router_service = self.layout.router_service();
        let mut router = self.client(options, &router_service).await?;
        let mut direct = Vec::new();
        for name in &names {
            let mut client = self.client(options, name).await?;
            // Each replica's own workspaces (Setup through the router reaches one replica).
            client
                .setup(pb::SetupRequest::default())
                .await
                .map_err(|s| {
                    step("routed Setup")(format!("{name}: {} {}", s.code(), s.message()))
                })?;
            direct.push(client);
        }

        // A key per replica, found by asking replica 0 straight (no header, as a client that
        // bypasses the router): its own are NOT_FOUND, the others FAILED_PRECONDITION.
        let keys = owned_keys(&mut direct[0], n).await?;
        say(&format!(
            "owners: replica 0 answers {} NOT_FOUND (its own) and {} FAILED_PRECONDITION naming replica 1 when called straight",
            keys[0],
            keys[1..].join(", ")
        ));

        // Through the router: each key lands on its owner, twice in the same session.
        let mut sessions = Vec::new();
        for (owner, key) in keys.iter().enumerate() {
            let first = calls::run(&mut router, key, "hello")
                .await
                .map_err(step("routed Run"))?;
            let again = calls::run(&mut router, key, "hello again")
                .await
                .map_err(step("routed Run"))?;
            let on_owner = session_id(&mut direct[owner], key).await?;
            if again.session_id != first.session_id
                || on_owner.as_deref() != Some(&first.session_id)
            {
                return Err(step("routed owner")(format!(
                    "{key}: runs in {} then {}, the owner {} holds {on_owner:?}",
                    first.session_id, again.session_id, names[owner]
                )));
            }
            say(&format!(
                "routed Run: {key} ran twice in session {} on its owner {}",
                first.session_id, names[owner]
            ));
            sessions.push(first.session_id);
        }

        // The header twice: refused by the router.
        let mut twice = calls::run_request(&keys[0], "twice").map_err(step("routed header"))?;
        let value = keys[1]
            .parse()
            .map_err(|e| step("routed header")(format!("{e}")))?;
        twice
            .metadata_mut()
            .append(service_kit::SESSION_KEY_HEADER, value);
        let refused = router.run(twice).await;
        expect_code(
            &refused.map(|_| ()),
            Code::InvalidArgument,
            "two session-key headers",
        )?;
        say(
            "two headers: the router refuses a call with x-openclaw-session-key twice (INVALID_ARGUMENT)",
        );

        // Straight to the wrong replica: refused, nothing created.
        let wrong = direct[0]
            .run(pb::RunRequest {
                session: calls::session_ref(&keys[1]),
                message: "astray".into(),
                ..Default::default()
            })
            .await;
        expect_code(
            &wrong.map(|_| ()),
            Code::FailedPrecondition,
            "a Run sent to the wrong replica",
        )?;
        self.holds_not(&mut direct[0], &keys[1], &names[0]).await?;
        say(&format!(
            "wrong replica: {} refuses a Run of {} sent straight to it (FAILED_PRECONDITION) and holds no such session",
            names[0], keys[1]
        ));

        // The owner away: its keys answer UNAVAILABLE from the router, nothing moves.
        let away = &names[1];
        self.compose(&["stop", away])
            .await
            .map_err(step("routed stop"))?;
        let error_file =
            error_file_message(&options.repo.join("deploy")).map_err(step("routed project"))?;
        let at = Instant::now();
        let refused = calls::run(&mut router, &keys[1], "while away").await;
        let refused = router_refusal(&refused, &error_file).map_err(step("routed replica away"))?;
        let refused_in = at.elapsed().as_secs_f64();
        self.holds_not(&mut direct[0], &keys[1], &names[0]).await?;
        calls::run(&mut router, &keys[0], "meanwhile")
            .await
            .map_err(step("routed Run while a replica is away"))?;
        say(&format!(
            "replica away: with {away} stopped, {} answers UNAVAILABLE through the router in {refused_in:.1} s ({refused}); {} holds no second session of it; {} still runs",
            keys[1], names[0], keys[0]
        ));

        // Back: the session is still there, on its owner.
        let at = Instant::now();
        self.compose(&["start", away])
            .await
            .map_err(step("routed start"))?;
        self.up(&["--no-recreate", away]).await?;
        let back = loop {
            match calls::run(&mut router, &keys[1], "back").await {
                Ok(outcome) => break outcome,
                Err(error) if at.elapsed() < BACK_WITHIN && error.contains("Unavailable") => {
                    // As a client does: retry UNAVAILABLE with a pause.
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(error) => return Err(step("routed Run after the replica is back")(error)),
            }
        };
        let said = calls::user_messages(&mut router, &keys[1])
            .await
            .map_err(step("routed transcript"))?;
        if back.session_id != sessions[1] || said.len() != 3 {
            return Err(step("routed back")(format!(
                "{}: session {} (was {}), user messages {said:?}",
                keys[1], back.session_id, sessions[1]
            )));
        }
        say(&format!(
            "replica back: {away} answers again through the router after {:.1} s; session {} kept, user messages {said:?}",
            at.elapsed().as_secs_f64(),
            back.session_id
        ));
        Ok(())
    }

    /// `replica` holds no session of `key` (asked without a header, as an operator would).
    async fn holds_not(
        &self,
        replica: &mut calls::Client,
        key: &str,
        name: &str,
    ) -> Result<(), EngineError> {
        let listed = replica
            .list_sessions(pb::ListSessionsRequest {
                agent_id: "main".into(),
                ..Default::default()
            })
            .await
            .map_err(|s| {
                step("routed ListSessions")(format!("{name}: {} {}", s.code(), s.message()))
            })?
            .into_inner()
            .sessions;
        if listed.iter().any(|s| s.session_key == key) {
            return Err(step("routed ownership")(format!(
                "{name} holds a session of {key}, which it does not own"
            )));
        }
        Ok(())
    }
}

/// Keys of the main agent, one per replica in slot order, found by how replica 0 answers a
/// GetSession sent straight to it.
async fn owned_keys(
    replica0: &mut calls::Client,
    replicas: u32,
) -> Result<Vec<String>, EngineError> {
    let mut found: Vec<Option<String>> = vec![None; replicas as usize];
    for n in 0..200 {
        let key = format!("agent:main:deploy-check-{n}");
        let answer = replica0
            .get_session(pb::GetSessionRequest {
                session: calls::session_ref(&key),
            })
            .await;
        let owner = match answer {
            Err(status) if status.code() == Code::NotFound => 0,
            Err(status) if status.code() == Code::FailedPrecondition => status
                .message()
                .split("lives on replica ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|ordinal| ordinal.parse::<usize>().ok())
                .ok_or_else(|| {
                    step("routed owners")(format!("refusal names no replica: {}", status.message()))
                })?,
            other => {
                return Err(step("routed owners")(format!(
                    "GetSession {key} on replica 0: {other:?}"
                )));
            }
        };
        if let Some(slot) = found.get_mut(owner)
            && slot.is_none()
        {
            *slot = Some(key);
        }
        if found.iter().all(Option::is_some) {
            return Ok(found.into_iter().flatten().collect());
        }
    }
    Err(step("routed owners")(format!(
        "200 keys did not cover {replicas} replicas"
    )))
}

/// The id of `key`'s session on the replica `client` calls straight, None when it has none.
async fn session_id(client: &mut calls::Client, key: &str) -> Result<Option<String>, EngineError> {
    let answer = client
        .get_session(pb::GetSessionRequest {
            session: calls::session_ref(key),
        })
        .await;
    match answer {
        Ok(reply) => Ok(Some(reply.into_inner().session_id)),
        Err(status) if status.code() == Code::NotFound => Ok(None),
        Err(status) => Err(step("routed GetSession")(format!(
            "{key}: {} {}",
            status.code(),
            status.message()
        ))),
    }
}

fn expect_code<T>(
    answer: &Result<T, tonic::Status>,
    code: Code,
    what: &str,
) -> Result<(), EngineError> {
    match answer {
        Err(status) if status.code() == code => Ok(()),
        Err(status) => Err(step("routed refusal")(format!(
            "{what}: {} {} (expected {code:?})",
            status.code(),
            status.message()
        ))),
        Ok(_) => Err(step("routed refusal")(format!(
            "{what}: accepted (expected {code:?})"
        ))),
    }
}

/// How the router refused a call whose replica is away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Its own answer, the error file for 503 (`grpc-status: 14`): the replica's address refused
    /// the connection, as a Kubernetes Service without endpoints does.
    ErrorFile,
    /// HTTP/2 `RST_STREAM(REFUSED_STREAM)`, which gRPC clients report as UNAVAILABLE: HAProxy
    /// answers so, instead of with its error file, when every connect to the replica timed out
    /// (a stopped container's address does not answer). The call reached no replica.
    RefusedStream,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ErrorFile => "the router's own 503 answer, grpc-503.http",
            Self::RefusedStream => {
                "HTTP/2 REFUSED_STREAM: the router's connects to the stopped container's address timed out, \
                 and HAProxy refuses such a stream rather than send its error file"
            }
        })
    }
}

/// The `grpc-message` of the router's error file for 503 (deploy/k8s/router/grpc-503.http).
pub fn error_file_message(deploy: &Path) -> Result<String, String> {
    let path = deploy.join("k8s/router/grpc-503.http");
    let text = crate::read(&path).map_err(|e| e.to_string())?;
    text.lines()
        .find_map(|line| line.strip_prefix("grpc-message:"))
        .map(|message| message.trim().to_owned())
        .ok_or_else(|| format!("{} has no grpc-message line", path.display()))
}

/// A Run through the router to a replica that is away: refused UNAVAILABLE by the router itself,
/// with its error file (`error_file` is its message) or a refused HTTP/2 stream; anything else
/// (an answer, INTERNAL, UNAVAILABLE from elsewhere) is an error.
pub fn router_refusal(
    answer: &Result<calls::RunOutcome, String>,
    error_file: &str,
) -> Result<Refusal, String> {
    match answer {
        // calls::run's error: "Run KEY: CODE MESSAGE".
        Err(error) if error.contains(": Unavailable ") && error.contains(error_file) => {
            Ok(Refusal::ErrorFile)
        }
        // tonic reports only REFUSED_STREAM among the HTTP/2 resets as UNAVAILABLE.
        Err(error) if error.contains(": Unavailable h2 protocol error: ") => {
            Ok(Refusal::RefusedStream)
        }
        Err(error) => Err(format!(
            "expected UNAVAILABLE from the router (its error file or a refused stream), got {error}"
        )),
        Ok(outcome) => Err(format!(
            "the Run was answered in session {} while its replica was stopped",
            outcome.session_id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// The routed project keeps the owner rules in agreement: as many agent-service replicas as
    /// the StatefulSet (and the router's `use-server` rules), each with its ordinal in
    /// AGENT_SERVICE_REPLICA and answering to its router server's name, one state volume each.
    #[test]
    fn the_routed_project_has_the_shipped_layout() {
        let layout = Layout::load(&deploy()).expect("layout");
        assert_eq!(layout.replicas, 2);
        assert_eq!(layout.agent_servers.len(), layout.replicas as usize);
        assert_eq!(layout.router_service(), "openclaw-router");
        let secrets = Secrets {
            agent_tokens: "/t/agent".into(),
            prompt_tokens: "/t/prompt".into(),
        };
        let file = project_file(&deploy(), &layout, &secrets).expect("project");
        let services = file["services"].as_object().expect("services");
        let mut volumes = Vec::new();
        for i in 0..layout.replicas {
            let name = format!("agent-service-{i}");
            let agent = &services[&name];
            let replica = agent["environment"]["AGENT_SERVICE_REPLICA"]
                .as_str()
                .expect("replica");
            assert_eq!(replica, format!("{name}/{}", layout.replicas));
            assert_eq!(
                agent["networks"]["default"]["aliases"][0],
                format!("{name}.openclaw.svc.cluster.local")
            );
            assert_eq!(
                agent["environment"]["AGENT_SERVICE_ROUTER_URL"],
                "http://openclaw-router:50052"
            );
            assert_eq!(
                agent["environment"]["PROMPT_SERVICE_URL"],
                "http://openclaw-router:50051"
            );
            assert!(agent.get("build").is_none());
            let state: Vec<&Value> = agent["volumes"]
                .as_array()
                .expect("volumes")
                .iter()
                .filter(|m| m["type"] == "volume")
                .collect();
            assert_eq!(state.len(), 1, "{agent}");
            volumes.push(state[0]["source"].as_str().expect("source").to_owned());
            // compose.yaml's relative bind sources, anchored at deploy/.
            for bind in agent["volumes"].as_array().expect("volumes") {
                if bind["type"] == "bind" {
                    assert!(
                        Path::new(bind["source"].as_str().expect("source")).is_absolute(),
                        "{bind}"
                    );
                }
            }
        }
        assert_eq!(volumes, ["state-agent-service-0", "state-agent-service-1"]);
        assert_eq!(
            services["prompt-service-0"]["networks"]["default"]["aliases"][0],
            "prompt-service-headless.openclaw.svc.cluster.local"
        );
        let router = &services["openclaw-router"];
        assert_eq!(router["volumes"][0]["target"], "/usr/local/etc/haproxy");
        assert_eq!(file["secrets"]["agent-tokens"]["file"], "/t/agent");
        // The replicas come up before the router, which waits for its startup probe.
        let router_depends: Vec<&String> = router["depends_on"]
            .as_object()
            .expect("depends_on")
            .keys()
            .collect();
        assert_eq!(router_depends, ["agent-service-0", "agent-service-1"]);
        assert!(
            services["agent-service-0"]["depends_on"]
                .get("openclaw-router")
                .is_none()
        );
        assert!(
            router["healthcheck"]["test"][3]
                .as_str()
                .expect("test")
                .contains("/dev/tcp/127.0.0.1/8404")
        );
    }

    /// A call to a stopped replica counts as refused by the router only when it is UNAVAILABLE
    /// with the router's error file or a refused HTTP/2 stream (tonic's only UNAVAILABLE reset).
    #[test]
    fn only_the_routers_refusals_count() {
        let message = error_file_message(&deploy()).expect("grpc-503.http");
        assert!(message.contains("HTTP 503"), "{message}");
        let err = |text: &str| Err(format!("Run agent:main:k: {text}"));
        assert_eq!(
            router_refusal(&err(&format!("Unavailable {message}")), &message),
            Ok(Refusal::ErrorFile)
        );
        assert_eq!(
            router_refusal(&err("Unavailable h2 protocol error: http2 error"), &message),
            Ok(Refusal::RefusedStream)
        );
        for other in [
            "Internal h2 protocol error: http2 error",
            "Unknown transport error",
            "Unavailable the session lives on replica 1 of 2: it is away",
            &format!("Internal {message}"),
        ] {
            assert!(router_refusal(&err(other), &message).is_err(), "{other}");
        }
        let answered = Ok(calls::RunOutcome {
            session_id: "s".into(),
            final_text: "t".into(),
        });
        assert!(router_refusal(&answered, &message).is_err());
    }
}

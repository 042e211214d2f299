//! The Kubernetes router for real: HAProxy from Debian (installed into
//! .tools by the test itself) runs deploy/k8s/router/haproxy.cfg, mapped
//! onto loopback, in front of two native agent-service replicas; the
//! replicas reach prompt-service through the router's prompt port, as in
//! the cluster.
//!
//! - every call of a session lands on one replica, and both replicas own
//!   sessions;
//! - a session call without the session-key header is refused with
//!   INVALID_ARGUMENT naming the header; calls that name no session pass;
//! - while a replica is away its sessions get UNAVAILABLE and do not move;
//!   once it is back they reach it again, history intact;
//! - a reload (SIGUSR2 to the master) and a graceful stop (SIGUSR1) let a
//!   Run stream in flight finish on the old worker;
//! - an agent's cron jobs live on the replica of its main session: cron job
//!   calls carry the main session key, a session's `cron` tool on the other
//!   replica reaches them through the router, and a cron session is routed
//!   where its job is.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
    time::Duration,
};

use deploy_check::{calls, haproxy::HaproxyConfig, install::Haproxy, native::ProcessPlan};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tonic::{Code, transport::Channel};

use super::support::{self, Running};

/// Answers at once, naming the message it answers.
const FAST_SCRIPT: &str = r#"{ chunkChars: 4096, turns: [{ text: "pong: {{lastUserMessage}}" }] }"#;
/// What the slow agent says, one character every 30 ms (about 3 s): long
/// enough for a reload or a stop to happen while it streams.
const SLOW_TEXT: &str = "This answer streams slowly, one character at a time, so that the router can be reloaded or stopped midway.";

/// The planner agent's model: greets, schedules a job with its `cron` tool,
/// and answers the job's own prompt when it runs.
const PLANNER_SCRIPT: &str = r#"{
  turns: [
    { when: "hello", text: "hi" },
    { when: "schedule", toolCalls: [{ name: "cron", arguments: { action: "add", schedule: "every 1h", prompt: "Water the plants." } }] },
    { text: "scheduled: {{lastToolResult}}" },
    { when: "water the plants", text: "watered" },
  ],
}"#;

/// The spawner agent's model: starts a subagent on a task, and the child answers it.
const SPAWNER_SCRIPT: &str = r#"{
  turns: [
    { when: "delegate", toolCalls: [{ name: "sessions_spawn", arguments: { task: "Report the weather." } }] },
    { text: "spawned: {{lastToolResult}}" },
    { when: "report the weather", text: "sunny" },
  ],
}"#;

fn config() -> String {
    r#"{
  agents: {
    defaults: { model: "fast/m", userTimezone: "UTC" },
    list: [
      { id: "main", default: true },
      { id: "slow", model: "slow/m" },
      { id: "planner", model: "planner/m" },
      { id: "spawner", model: "spawner/m" },
    ],
  },
  models: {
    providers: {
      fast: { api: "scripted", script: "fast.json5", models: [{ id: "m" }] },
      slow: { api: "scripted", script: "slow.json5", models: [{ id: "m" }] },
      planner: { api: "scripted", script: "planner.json5", models: [{ id: "m" }] },
      spawner: { api: "scripted", script: "spawner.json5", models: [{ id: "m" }] },
    },
  },
}
"#
    .to_owned()
}

fn slow_script() -> String {
    format!(r#"{{ chunkChars: 1, delayMs: 30, turns: [{{ text: "{SLOW_TEXT}" }}] }}"#)
}

/// The services in the router config, by the address it names them with.
const AGENT_0: &str = "agent-service-0.openclaw.svc.cluster.local:50052";
const AGENT_1: &str = "agent-service-1.openclaw.svc.cluster.local:50052";
const PROMPT: &str = "prompt-service-headless.openclaw.svc.cluster.local:50051";
/// The replicas behind the router, as its `use-server` rules and the StatefulSet have them.
const REPLICAS: u32 = 2;

struct Cluster {
    /// Holds the configs and the replicas' state (deleted last).
    _root: support::Root,
    router: Running,
    master_socket: PathBuf,
    /// The router's AgentService port.
    agent_port: u16,
    /// The router's PromptService port.
    prompt_port: u16,
    _prompt: Running,
    replicas: Vec<Replica>,
    /// One cluster at a time (dropped last, after its processes): the ports are picked free
    /// and then bound by the processes, and two clusters starting together could pick the
    /// same ones.
    _exclusive: tokio::sync::MutexGuard<'static, ()>,
}

/// Held by each running cluster (its `_exclusive` field).
static EXCLUSIVE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Replica {
    plan: ProcessPlan,
    running: Option<Running>,
    port: u16,
}

impl Replica {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn plan(
    service: &str,
    program: PathBuf,
    env: BTreeMap<String, String>,
    listen: u16,
) -> ProcessPlan {
    ProcessPlan {
        service: service.to_owned(),
        healthcheck: Some((program.clone(), vec!["healthcheck".to_owned()])),
        program,
        args: vec!["serve".to_owned()],
        env,
        ports: [(listen, listen)].into(),
        stop_grace: Duration::from_secs(30),
        health_deadline: Duration::from_secs(30),
        drop_capabilities: false,
        no_new_privileges: false,
    }
}

impl Cluster {
    async fn start() -> Self {
        Self::start_with(None, None).await
    }

    /// With `hard_stop_after` in place of the config's (a test cannot wait
    /// the 610 s a stopping router may take).
    /// With `dns`, replica 1 is named `agent-service-1.test`, which the router resolves
    /// through that responder, and the resolvers' holds are cut to seconds (a test cannot
    /// wait out an hour-long DNS outage).
    async fn start_with(hard_stop_after: Option<&str>, dns: Option<&Dns>) -> Self {
        let exclusive = EXCLUSIVE.lock().await;
        let haproxy = tokio::task::spawn_blocking(Haproxy::ensure)
            .await
            .expect("install task")
            .unwrap_or_else(|e| panic!("install HAProxy: {e}"));
        let root = support::Root::new();
        let dir = root.path().to_path_buf();
        let port = || support::free_port().expect("port");
        let (agent_port, prompt_port, health_port) = (port(), port(), port());
        let (replica_ports, prompt_service_port) = ([port(), port()], port());

        // The router first: the replicas render through its prompt port.
        let mut text =
            std::fs::read_to_string(support::deploy_dir().join("k8s/router/haproxy.cfg"))
                .expect("haproxy.cfg");
        if let Some(bound) = hard_stop_after {
            let shorter = text.replace("hard-stop-after 610s", &format!("hard-stop-after {bound}"));
            assert_ne!(shorter, text, "haproxy.cfg sets hard-stop-after 610s");
            text = shorter;
        }
        if let Some(dns) = dns {
            for (from, to) in [
                ("parse-resolv-conf", format!("nameserver test {}", dns.addr)),
                ("hold valid 10s", "hold valid 1s".to_owned()),
                (" 1h\n", " 2s\n".to_owned()),
                // No libc lookup of the test name at start: the responder answers it.
                ("init-addr last,libc,none", "init-addr none".to_owned()),
            ] {
                assert!(text.contains(from), "haproxy.cfg has {from:?}");
                text = text.replace(from, &to);
            }
        }
        // The error files the config names where the ConfigMap mounts them.
        text = text.replace(
            "/usr/local/etc/haproxy/",
            &format!("{}/", support::deploy_dir().join("k8s/router").display()),
        );
        let loopback = |p: u16| format!("127.0.0.1:{p}");
        let mapped = HaproxyConfig::mapped(
            &text,
            &[
                (50052, agent_port),
                (50051, prompt_port),
                (8404, health_port),
            ]
            .into(),
            &[
                (AGENT_0.to_owned(), loopback(replica_ports[0])),
                (
                    AGENT_1.to_owned(),
                    match dns {
                        Some(_) => format!("{DNS_NAME}:{}", replica_ports[1]),
                        None => loopback(replica_ports[1]),
                    },
                ),
                (PROMPT.to_owned(), loopback(prompt_service_port)),
            ]
            .into(),
        )
        .expect("map the router config");
        let config_path = dir.join("haproxy.cfg");
        std::fs::write(&config_path, mapped).expect("write haproxy.cfg");
        let master_socket = dir.join("master.sock");
        let router = Running::spawn(&ProcessPlan {
            service: "router".into(),
            program: haproxy.binary.clone(),
            args: vec![
                "-W".into(),
                "-db".into(),
                "-S".into(),
                master_socket.display().to_string(),
                "-f".into(),
                config_path.display().to_string(),
            ],
            env: [("LD_LIBRARY_PATH".to_owned(), haproxy.library_path.clone())].into(),
            healthcheck: None,
            ports: BTreeMap::new(),
            stop_grace: Duration::from_secs(30),
            health_deadline: Duration::ZERO,
            drop_capabilities: false,
            no_new_privileges: false,
        });

        let bin = support::bin_dir();
        let prompt_env: BTreeMap<String, String> = [(
            "PROMPT_SERVICE_LISTEN".to_owned(),
            loopback(prompt_service_port),
        )]
        .into();
        let mut prompt = Running::spawn(&plan(
            "prompt-service",
            bin.join("prompt-service"),
            prompt_env,
            prompt_service_port,
        ));
        prompt
            .wait_healthy()
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", prompt.log()));

        let config_dir = dir.join("config");
        std::fs::create_dir_all(&config_dir).expect("config dir");
        std::fs::write(config_dir.join("openclaw.json"), config()).expect("config");
        std::fs::write(config_dir.join("fast.json5"), FAST_SCRIPT).expect("script");
        std::fs::write(config_dir.join("slow.json5"), slow_script()).expect("script");
        std::fs::write(config_dir.join("planner.json5"), PLANNER_SCRIPT).expect("script");
        std::fs::write(config_dir.join("spawner.json5"), SPAWNER_SCRIPT).expect("script");
        let mut replicas = Vec::new();
        for (ordinal, port) in replica_ports.into_iter().enumerate() {
            let home = dir.join(format!("agent-service-{ordinal}"));
            let env: BTreeMap<String, String> = [
                ("AGENT_SERVICE_LISTEN", loopback(port)),
                ("AGENT_SERVICE_DRAIN_SECS", "20".to_owned()),
                (
                    "OPENCLAW_STATE_DIR",
                    home.join("state").display().to_string(),
                ),
                (
                    "OPENCLAW_CONFIG_PATH",
                    config_dir.join("openclaw.json").display().to_string(),
                ),
                (
                    "PROMPT_SERVICE_URL",
                    format!("http://{}", loopback(prompt_port)),
                ),
                (
                    "AGENT_SERVICE_ROUTER_URL",
                    format!("http://{}", loopback(agent_port)),
                ),
                ("HOME", home.display().to_string()),
                ("AGENT_SERVICE_REPLICA", format!("{ordinal}/{REPLICAS}")),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
            let mut replica = Replica {
                plan: plan(
                    &format!("agent-service-{ordinal}"),
                    bin.join("agent-service"),
                    env,
                    port,
                ),
                running: None,
                port,
            };
            replica.start().await;
            replicas.push(replica);
        }
        let cluster = Self {
            _root: root,
            router,
            master_socket,
            agent_port,
            prompt_port,
            _prompt: prompt,
            replicas,
            _exclusive: exclusive,
        };
        cluster.wait_router().await;
        cluster
    }

    /// Until both of the router's service ports answer a health check
    /// through it. The router starts before prompt-service, so its first
    /// check of prompt-service fails and it routes no render there until
    /// later checks pass: a run before that would find no backend.
    async fn wait_router(&self) {
        for port in [self.agent_port, self.prompt_port] {
            let endpoint = format!("http://127.0.0.1:{port}");
            let mut backoff = Duration::from_millis(20);
            let mut answered = false;
            for _ in 0..80 {
                if let Ok(true) = service_kit::probe(&endpoint, "", Duration::from_secs(2)).await {
                    answered = true;
                    break;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(500));
            }
            assert!(
                answered,
                "the router's port {port} never answered a health check\n{}",
                self.router.log()
            );
        }
    }

    async fn router_channel(&self) -> Channel {
        Channel::from_shared(format!("http://127.0.0.1:{}", self.agent_port))
            .expect("url")
            .connect()
            .await
            .unwrap_or_else(|e| panic!("connect to the router: {e}\n{}", self.router.log()))
    }

    async fn router_client(&self) -> calls::Client {
        calls::client(self.router_channel().await, "unused-on-loopback").expect("client")
    }

    /// The replicas (0 or 1) that hold the session of `key`, with its id there: each
    /// replica's own session list, asked directly (a replica refuses calls about sessions it
    /// does not own, so only its list tells whether it holds one anyway).
    async fn owners(&self, key: &str) -> Vec<(usize, String)> {
        let mut owners = Vec::new();
        for ordinal in 0..self.replicas.len() {
            if let Some(id) = self.listed_on(ordinal, key).await {
                owners.push((ordinal, id));
            }
        }
        owners
    }

    /// The id of the session of `key` in replica `ordinal`'s session list, if it is listed.
    async fn listed_on(&self, ordinal: usize, key: &str) -> Option<String> {
        let agent_id = calls::session_ref(key)
            .map(|r| r.agent_id)
            .unwrap_or_default();
        let listed = self
            .replica_client(ordinal)
            .await
            .list_sessions(pb::ListSessionsRequest {
                agent_id,
                ..Default::default()
            })
            .await
            .unwrap_or_else(|s| panic!("ListSessions on replica {ordinal}: {s}"))
            .into_inner();
        listed
            .sessions
            .into_iter()
            .find(|s| s.session_key == key)
            .map(|s| s.session_id)
    }

    /// The master CLI's answer to `command`. While the master reloads (it
    /// re-executes itself) its socket refuses connections for a moment.
    async fn master(&self, command: &str) -> Result<String, String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::UnixStream::connect(&self.master_socket)
            .await
            .map_err(|e| format!("master socket: {e}"))?;
        stream
            .write_all(format!("{command}\n").as_bytes())
            .await
            .map_err(|e| format!("send: {e}"))?;
        // The CLI answers once the command line ends and closes on EOF.
        stream
            .shutdown()
            .await
            .map_err(|e| format!("end the command: {e}"))?;
        // The master may reset the connection right after its answer.
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => return Err(format!("master socket: {e}")),
            }
        }
        Ok(String::from_utf8_lossy(&answer).into_owned())
    }

    /// The current workers' and the old (draining) workers' pids.
    async fn workers(&self) -> Result<(Vec<u32>, Vec<u32>), String> {
        let answer = self.master("show proc").await?;
        let (mut current, mut old) = (Vec::new(), Vec::new());
        let mut in_old = false;
        for line in answer.lines() {
            if line.starts_with("# old workers") {
                in_old = true;
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            if let [pid, "worker", ..] = fields.as_slice()
                && let Ok(pid) = pid.parse()
            {
                if in_old { &mut old } else { &mut current }.push(pid);
            }
        }
        Ok((current, old))
    }

    /// Polls `workers` until `done` holds (or fails after about 10 s).
    async fn until_workers(&self, what: &str, done: impl Fn(&[u32], &[u32]) -> bool) {
        let mut backoff = Duration::from_millis(10);
        let mut last = Err(String::new());
        for _ in 0..400 {
            last = self.workers().await;
            if let Ok((current, old)) = &last
                && done(current, old)
            {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(100));
        }
        panic!("workers never {what}: {last:?}\n{}", self.router.log());
    }

    fn signal_router(&self, signal: nix::sys::signal::Signal) {
        let pid = self.router.pid().expect("router running");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).expect("signal the router");
    }
}

impl Replica {
    async fn start(&mut self) {
        let mut running = Running::spawn(&self.plan);
        running
            .wait_healthy()
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", running.log()));
        self.running = Some(running);
    }

    async fn stop(&mut self) {
        let mut running = self.running.take().expect("running");
        let status = running
            .terminate()
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", running.log()));
        assert!(status.success(), "{status}\n{}", running.log());
    }
}

/// A Run in the session of `key` once it streams: the stream and what it sent so far.
async fn streaming(
    client: &mut calls::Client,
    key: &str,
) -> (tonic::Streaming<pb::RunEvent>, Vec<pb::RunEvent>) {
    let mut stream = client
        .run(calls::run_request(key, "stream").expect("request"))
        .await
        .expect("Run")
        .into_inner();
    let seen = first_delta(&mut stream).await;
    (stream, seen)
}

/// Waits (at most 30 s) for a run's first text delta: it is streaming.
async fn first_delta(stream: &mut tonic::Streaming<pb::RunEvent>) -> Vec<pb::RunEvent> {
    let mut seen = Vec::new();
    let waited = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let event = stream
                .message()
                .await
                .expect("run stream")
                .unwrap_or_else(|| panic!("the run ended before streaming: {seen:?}"));
            let delta = matches!(event.event, Some(pb::run_event::Event::TextDelta(_)));
            seen.push(event);
            if delta {
                return;
            }
        }
    })
    .await;
    assert!(waited.is_ok(), "no text delta within 30 s: {seen:?}");
    seen
}

/// The rest of a run's stream (at most 30 s), and its outcome.
async fn rest(
    mut stream: tonic::Streaming<pb::RunEvent>,
    mut seen: Vec<pb::RunEvent>,
) -> calls::RunOutcome {
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = stream.message().await.expect("the stream was cut") {
            seen.push(event);
        }
    })
    .await
    .expect("the run did not end within 30 s");
    calls::outcome(seen).expect("run outcome")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_stay_on_their_replica_and_calls_without_the_key_are_refused() {
    let mut cluster = Cluster::start().await;
    let mut client = cluster.router_client().await;
    let keys: Vec<String> = (0..12).map(|i| format!("agent:main:route-{i}")).collect();

    // Two runs per session through the router: both reach the same replica
    // (the second continues the first's session), and only that replica
    // knows the session.
    let mut owner_of = BTreeMap::new();
    for key in &keys {
        let first = calls::run(&mut client, key, &format!("one {key}"))
            .await
            .unwrap_or_else(|e| panic!("{e}\n{}", cluster.router.log()));
        assert_eq!(first.final_text, format!("pong: one {key}"));
        let second = calls::run(&mut client, key, &format!("two {key}"))
            .await
            .expect("second run");
        assert_eq!(second.session_id, first.session_id, "{key}");
        let owners = cluster.owners(key).await;
        assert_eq!(owners, [(owners[0].0, first.session_id.clone())], "{key}");
        assert_eq!(
            calls::user_messages(&mut client, key)
                .await
                .expect("transcript"),
            [format!("one {key}"), format!("two {key}")]
        );
        owner_of.insert(key.clone(), owners[0].0);
    }
    let owned: Vec<usize> = (0..2)
        .map(|r| owner_of.values().filter(|&&o| o == r).count())
        .collect();
    assert!(
        owned.iter().all(|&n| n > 0),
        "sessions per replica: {owned:?}"
    );

    // No header on a session call: refused by the router, naming the header.
    let refused = AgentServiceClient::new(cluster.router_channel().await)
        .run(pb::RunRequest {
            session: calls::session_ref(&keys[0]),
            message: "no header".into(),
            ..Default::default()
        })
        .await
        .expect_err("a Run without the header");
    support::assert_status(&refused, Code::InvalidArgument, "x-openclaw-session-key");
    let refused = AgentServiceClient::new(cluster.router_channel().await)
        .get_session(pb::GetSessionRequest {
            session: calls::session_ref(&keys[0]),
        })
        .await
        .expect_err("a GetSession without the header");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    // ...and it reached no replica: the session still has two messages.
    assert_eq!(
        calls::user_messages(&mut client, &keys[0])
            .await
            .expect("transcript")
            .len(),
        2
    );
    // Calls that name no session need no header.
    let agents = AgentServiceClient::new(cluster.router_channel().await)
        .list_agents(pb::ListAgentsRequest {})
        .await
        .expect("ListAgents without the header")
        .into_inner();
    assert_eq!(agents.agents.len(), 4);

    // Replica 0 goes away: its sessions get UNAVAILABLE and stay put.
    let away: Vec<&String> = keys.iter().filter(|k| owner_of[*k] == 0).collect();
    cluster.replicas[0].stop().await;
    for key in &away {
        let status = calls::run(&mut client, key, "while away")
            .await
            .expect_err("its replica is away");
        assert!(status.contains("Unavailable"), "{key}: {status}");
    }
    let staying = keys
        .iter()
        .find(|k| owner_of[*k] == 1)
        .expect("a key of replica 1");
    calls::run(&mut client, staying, "still here")
        .await
        .expect("replica 1's sessions are unaffected");
    for key in &away {
        let owners = cluster.owners_of_running(key).await;
        assert_eq!(owners, Vec::<usize>::new(), "{key} moved to replica 1");
    }

    // Back with its volume: the same sessions, their history intact.
    cluster.replicas[0].start().await;
    for key in &away {
        let after = calls::run(&mut client, key, &format!("three {key}"))
            .await
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        let owners = cluster.owners(key).await;
        assert_eq!(owners, [(0, after.session_id.clone())], "{key}");
        assert_eq!(
            calls::user_messages(&mut client, key)
                .await
                .expect("transcript"),
            [
                format!("one {key}"),
                format!("two {key}"),
                format!("three {key}")
            ]
        );
    }
}

impl Cluster {
    /// A client of replica `ordinal`'s own port.
    async fn replica_client(&self, ordinal: usize) -> AgentServiceClient<Channel> {
        let channel = Channel::from_shared(self.replicas[ordinal].url())
            .expect("url")
            .connect()
            .await
            .expect("connect to a replica");
        AgentServiceClient::new(channel)
    }

    /// The ids of `agent`'s cron jobs on each replica, asked directly. A replica that does
    /// not own the agent's main session refuses (FAILED_PRECONDITION, naming the owner), so it
    /// serves no job of the agent: an empty list.
    async fn jobs_by_replica(&self, agent: &str) -> Vec<Vec<String>> {
        let mut jobs = Vec::new();
        for ordinal in 0..self.replicas.len() {
            let listed = self
                .replica_client(ordinal)
                .await
                .list_cron_jobs(pb::ListCronJobsRequest {
                    agent_id: agent.into(),
                })
                .await;
            jobs.push(match listed {
                Ok(listed) => listed.into_inner().jobs.into_iter().map(|j| j.id).collect(),
                Err(status)
                    if status.code() == Code::FailedPrecondition
                        && status.message().contains("lives on replica") =>
                {
                    Vec::new()
                }
                Err(status) => panic!("ListCronJobs on replica {ordinal}: {status}"),
            });
        }
        jobs
    }

    /// Like `owners`, asking only the replicas that are running.
    async fn owners_of_running(&self, key: &str) -> Vec<usize> {
        let mut owners = Vec::new();
        for (ordinal, replica) in self.replicas.iter().enumerate() {
            if replica.running.is_some() && self.listed_on(ordinal, key).await.is_some() {
                owners.push(ordinal);
            }
        }
        owners
    }
}

/// The bound on a stopping router in this test: longer than the slow run,
/// far shorter than the config's 610 s. The replicas keep a health watch on
/// prompt-service open through the router, which only this bound ends.
const HARD_STOP_AFTER: &str = "10s";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cron_jobs_live_on_the_replica_of_their_agents_main_session() {
    let cluster = Cluster::start().await;
    let mut client = cluster.router_client().await;
    let main = "agent:planner:main";
    calls::run(&mut client, main, "hello")
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.router.log()));
    let [(home, _)] = cluster.owners(main).await[..] else {
        panic!("the main session is on one replica");
    };
    // A session of the same agent on the other replica.
    let mut elsewhere = None;
    for i in 0..24 {
        let key = format!("agent:planner:chat-{i}");
        calls::run(&mut client, &key, "hello")
            .await
            .expect("a chat");
        if cluster.owners(&key).await[0].0 != home {
            elsewhere = Some(key);
            break;
        }
    }
    let elsewhere = elsewhere.expect("a session on the other replica");

    // Its cron tool adds the job where the main session is, through the router.
    let answer = calls::run(&mut client, &elsewhere, "schedule the watering")
        .await
        .expect("the scheduling run");
    let jobs = cluster.jobs_by_replica("planner").await;
    assert_eq!(jobs[1 - home], Vec::<String>::new(), "{jobs:?}");
    let [job] = &jobs[home][..] else {
        panic!("one job on the main session's replica: {jobs:?}\n{answer:?}");
    };
    assert!(
        answer.final_text.starts_with("scheduled: ") && answer.final_text.contains(job.as_str()),
        "{answer:?}"
    );

    // Cron job calls through the router carry the main session key: listed, run, and
    // the run's cron session reached through the router, on the same replica.
    let listed = client
        .list_cron_jobs(
            calls::keyed(
                main,
                pb::ListCronJobsRequest {
                    agent_id: "planner".into(),
                },
            )
            .expect("request"),
        )
        .await
        .expect("ListCronJobs through the router")
        .into_inner();
    assert_eq!(listed.jobs.iter().map(|j| &j.id).collect::<Vec<_>>(), [job]);
    let ran = run_planner_job(&mut client, main, job, false)
        .await
        .expect("RunCronJob through the router");
    let cron_session = format!("agent:planner:cron:{job}");
    assert_eq!(
        (ran.status(), ran.session_key.as_str()),
        (pb::CronRunStatus::Ok, cron_session.as_str()),
        "{ran:?}"
    );
    assert_eq!(cluster.owners(&cron_session).await.len(), 1);
    assert_eq!(cluster.owners(&cron_session).await[0].0, home);
    assert_eq!(
        calls::user_messages(&mut client, &cron_session)
            .await
            .expect("the cron session through the router"),
        ["Water the plants."]
    );

    // Without the header the router refuses a cron job call; with another session's key
    // the replica does, naming the main session key.
    let refused = AgentServiceClient::new(cluster.router_channel().await)
        .list_cron_jobs(pb::ListCronJobsRequest {
            agent_id: "planner".into(),
        })
        .await
        .expect_err("ListCronJobs without the header");
    support::assert_status(&refused, Code::InvalidArgument, "x-openclaw-session-key");
    let refused = client
        .remove_cron_job(
            calls::keyed(
                &elsewhere,
                pb::RemoveCronJobRequest {
                    agent_id: "planner".into(),
                    id: job.clone(),
                },
            )
            .expect("request"),
        )
        .await
        .expect_err("RemoveCronJob keyed by another session");
    support::assert_status(&refused, Code::InvalidArgument, "\"agent:planner:main\"");
    // A job may deliver only to sessions that live with it.
    let report = pb::CronJobSpec {
        prompt: "Report.".into(),
        deliver: true,
        deliver_to: elsewhere.clone(),
        ..hourly()
    };
    let refused = add_planner_job(&mut client, main, report)
        .await
        .expect_err("delivery to a session of another replica");
    support::assert_status(&refused, Code::InvalidArgument, "another replica");
    assert_eq!(
        cluster.jobs_by_replica("planner").await[home],
        std::slice::from_ref(job)
    );

    // A main-session job run with queue_only: answered once queued, run in the main session.
    let water = pb::CronJobSpec {
        prompt: "Water the plants, please.".into(),
        target: pb::CronTarget::Main as i32,
        ..hourly()
    };
    let reminder = add_planner_job(&mut client, main, water)
        .await
        .expect("a main-session job");
    let queued = run_planner_job(&mut client, main, &reminder.id, true)
        .await
        .expect("RunCronJob queue_only");
    assert_eq!(
        (queued.status(), queued.session_key.as_str()),
        (pb::CronRunStatus::Unspecified, main),
        "{queued:?}"
    );
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = calls::user_messages(&mut client, main)
            .await
            .expect("the main session");
        if seen.iter().any(|m| m.contains(&reminder.id)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        seen.iter()
            .any(|m| m.starts_with("[Cron Job Due]") && m.contains("Water the plants, please.")),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_reload_or_stop_lets_streams_in_flight_finish() {
    use nix::sys::signal::Signal;
    let mut cluster = Cluster::start_with(Some(HARD_STOP_AFTER), None).await;
    let mut client = cluster.router_client().await;

    // Reload while a Run streams: a new worker takes new calls, the old one
    // finishes the stream, then leaves (by hard-stop-after at the latest).
    let (stream, seen) = streaming(&mut client, "agent:slow:reload").await;
    let (before, _) = cluster.workers().await.expect("workers");
    assert_eq!(before.len(), 1, "{before:?}");
    cluster.signal_router(Signal::SIGUSR2);
    cluster
        .until_workers("reloaded", |current, old| {
            !current.is_empty() && current != before.as_slice() && old == before.as_slice()
        })
        .await;
    let mut fresh = cluster.router_client().await;
    calls::run(&mut fresh, "agent:main:after-reload", "new worker")
        .await
        .expect("a call after the reload");
    let outcome = rest(stream, seen).await;
    assert_eq!(outcome.final_text, SLOW_TEXT);
    cluster
        .until_workers("retired the old one", |_, old| old.is_empty())
        .await;
    // The replicas follow prompt-service's health through the new worker:
    // ready again, and runs render.
    for replica in &cluster.replicas {
        wait_ready(&replica.url()).await;
    }
    let mut fresh = cluster.router_client().await;
    calls::run(&mut fresh, "agent:main:after-retire", "still rendering")
        .await
        .expect("a call after the old worker left");

    // Graceful stop while a Run streams: the listeners close at once, the
    // stream finishes, then the router exits.
    let (stream, seen) = streaming(&mut client, "agent:slow:stop").await;
    cluster.signal_router(Signal::SIGUSR1);
    let mut backoff = Duration::from_millis(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", cluster.agent_port))
        .await
        .is_ok()
    {
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(100));
    }
    let outcome = rest(stream, seen).await;
    assert_eq!(outcome.final_text, SLOW_TEXT);
    let status = cluster
        .router
        .wait()
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.router.log()));
    assert!(status.success(), "{status}\n{}", cluster.router.log());
}

/// Until agent-service at `url` reports its AgentService SERVING (20 s at most).
/// A job every hour; the rest of the spec is the default.
fn hourly() -> pb::CronJobSpec {
    pb::CronJobSpec {
        schedule: "every 1h".into(),
        ..Default::default()
    }
}

/// AddCronJob of `spec` for agent `planner`, keyed by `key`.
async fn add_planner_job(
    client: &mut calls::Client,
    key: &str,
    spec: pb::CronJobSpec,
) -> Result<pb::CronJob, tonic::Status> {
    let message = pb::AddCronJobRequest {
        agent_id: "planner".into(),
        spec: Some(spec),
    };
    let request = calls::keyed(key, message).expect("request");
    let answer = client.add_cron_job(request).await;
    answer.map(tonic::Response::into_inner)
}

/// RunCronJob of agent `planner`'s job `id`, keyed by `key`.
async fn run_planner_job(
    client: &mut calls::Client,
    key: &str,
    id: &str,
    queue_only: bool,
) -> Result<pb::RunCronJobResponse, tonic::Status> {
    let message = pb::RunCronJobRequest {
        agent_id: "planner".into(),
        id: id.to_owned(),
        queue_only,
    };
    let request = calls::keyed(key, message).expect("request");
    let answer = client.run_cron_job(request).await;
    answer.map(tonic::Response::into_inner)
}

async fn wait_ready(url: &str) {
    let mut backoff = Duration::from_millis(20);
    for _ in 0..60 {
        if let Ok(true) = service_kit::probe(
            url,
            "openclaw.agent.v1.AgentService",
            Duration::from_secs(2),
        )
        .await
        {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(500));
    }
    panic!("{url} never became ready again");
}

/// A key of the `main` agent that `ordinal` owns (of [`REPLICAS`]), by agent-service's own
/// ownership function.
fn key_owned_by(ordinal: u32, prefix: &str) -> String {
    let replica = agent_server::Replica::new(0, REPLICAS).expect("replica");
    (0..64)
        .map(|i| format!("agent:main:{prefix}-{i}"))
        .find(|k| replica.owner_of(k) == ordinal)
        .expect("a key of that replica")
}

/// `message`, routed by the header sent twice: `first` then `second`.
fn twice_keyed<T>(first: &str, second: &str, message: T) -> tonic::Request<T> {
    let mut request = calls::keyed(first, message).expect("request");
    request.metadata_mut().append(
        service_kit::SESSION_KEY_HEADER,
        second.parse().expect("header value"),
    );
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_has_one_home_whatever_the_router_does() {
    let mut cluster = Cluster::start().await;
    let mut client = cluster.router_client().await;
    let replica = agent_server::Replica::new(0, REPLICAS).expect("replica");

    // HAProxy's crc32 routing and agent-service's ownership function agree: every key lands
    // on the replica agent-service says owns it, including keys with a comma (HAProxy would
    // split a header's values at it), a cron session (its agent's main session's replica)
    // and the older subagent key format.
    let mut keys: Vec<String> = (0..10).map(|i| format!("agent:main:crc-{i}")).collect();
    keys.extend(["agent:main:a,b".to_owned(), "agent:main:x, y".to_owned()]);
    for key in &keys {
        let ran = calls::run(&mut client, key, "where")
            .await
            .unwrap_or_else(|e| panic!("{key}: {e}\n{}", cluster.router.log()));
        let owner = usize::try_from(replica.owner_of(key)).expect("ordinal");
        assert_eq!(
            cluster.owners(key).await,
            [(owner, ran.session_id)],
            "{key}"
        );
    }
    let homes: BTreeSet<u32> = keys.iter().map(|k| replica.owner_of(k)).collect();
    assert_eq!(homes.len(), 2, "both replicas own some of {keys:?}");

    // A key of replica 1 sent straight to replica 0: refused naming replica 1, nothing
    // created there (by Run, Send or CreateSession, with or without the header).
    let theirs = key_owned_by(1, "theirs");
    let direct = cluster.replica_client(0).await;
    let refused = direct
        .clone()
        .run(pb::RunRequest {
            session: calls::session_ref(&theirs),
            message: "straight to the wrong replica".into(),
            ..Default::default()
        })
        .await
        .expect_err("a Run for replica 1's session on replica 0");
    support::assert_status(
        &refused,
        Code::FailedPrecondition,
        "replica 1 (agent-service-1)",
    );
    let refused = direct
        .clone()
        .send(
            calls::keyed(
                &theirs,
                pb::SendRequest {
                    session: calls::session_ref(&theirs),
                    message: "with the header".into(),
                    ..Default::default()
                },
            )
            .expect("request"),
        )
        .await
        .expect_err("a Send for replica 1's session on replica 0");
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    let refused = direct
        .clone()
        .create_session(pb::CreateSessionRequest {
            agent_id: "main".into(),
            session_key: theirs.clone(),
            ..Default::default()
        })
        .await
        .expect_err("a CreateSession for replica 1's session on replica 0");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert_eq!(cluster.owners(&theirs).await, []);

    // The header twice: refused by the router and by a replica, naming the header, with
    // the body's session created nowhere.
    let ours = key_owned_by(0, "ours");
    for (via, mut to) in [
        (
            "the router",
            AgentServiceClient::new(cluster.router_channel().await),
        ),
        ("replica 0", direct.clone()),
    ] {
        let refused = to
            .run(twice_keyed(
                &ours,
                &theirs,
                pb::RunRequest {
                    session: calls::session_ref(&theirs),
                    message: "two headers".into(),
                    ..Default::default()
                },
            ))
            .await
            .expect_err("two session-key headers");
        assert_eq!(refused.code(), Code::InvalidArgument, "{via}: {refused:?}");
        assert!(
            refused.message().contains("x-openclaw-session-key")
                && refused.message().contains("more than once"),
            "{via}: {refused:?}"
        );
    }
    assert_eq!(cluster.owners(&theirs).await, []);
    assert_eq!(cluster.owners(&ours).await, []);

    // Replica 1 out of the router's use (as when its name stops resolving beyond the
    // resolvers' hold: HAProxy puts the server in maintenance): its sessions go to replica
    // 0, which refuses them with UNAVAILABLE naming replica 1 and creates nothing.
    let answer = cluster
        .master("@1 set server agent_service/agent-service-1 state maint")
        .await
        .expect("master CLI");
    assert!(answer.trim().is_empty(), "{answer}");
    let status = client
        .run(calls::run_request(&theirs, "owner in maintenance").expect("request"))
        .await
        .expect_err("its owner is out of use");
    support::assert_status(&status, Code::Unavailable, "replica 1 (agent-service-1)");
    assert_eq!(cluster.owners(&theirs).await, []);
    cluster
        .master("@1 set server agent_service/agent-service-1 state ready")
        .await
        .expect("master CLI");
    calls::run(&mut client, &theirs, "owner back")
        .await
        .expect("its owner is back in use");
    let [(1, _)] = cluster.owners(&theirs).await[..] else {
        panic!("{theirs} lives on replica 1 only");
    };

    // Replica 1 stopped: the router's own 503 reaches a tonic client as UNAVAILABLE with the
    // router's cause (not INTERNAL from decoding an HTML page), and nothing moves.
    cluster.replicas[1].stop().await;
    let status = client
        .run(calls::run_request(&theirs, "owner stopped").expect("request"))
        .await
        .expect_err("its owner is stopped");
    support::assert_status(&status, Code::Unavailable, "HTTP 503");
    assert_eq!(
        cluster.owners_of_running(&theirs).await,
        Vec::<usize>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_session_lives_and_is_reached_on_its_parents_replica() {
    let cluster = Cluster::start().await;
    let mut client = cluster.router_client().await;
    let replica = agent_server::Replica::new(0, REPLICAS).expect("replica");
    // A parent on the other replica than children named after their agent alone
    // (agent:spawner:subagent:<id>) would be routed to.
    let agent_home = replica.owner_of("agent:spawner");
    let parent = (0..64)
        .map(|i| format!("agent:spawner:chat-{i}"))
        .find(|k| replica.owner_of(k) != agent_home)
        .expect("a parent key");
    let home = usize::try_from(replica.owner_of(&parent)).expect("ordinal");
    calls::run(&mut client, &parent, "delegate the forecast")
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.router.log()));
    // The spawn tool's result names the child. (The run's final text may not: when the
    // child finishes first, its announcement reaches the parent's run as a steered
    // message, and the script answers that instead.)
    let results = calls::texts_of(&mut client, &parent, "toolResult")
        .await
        .unwrap_or_else(|e| panic!("the parent's transcript through the router: {e}"));
    let child = results
        .iter()
        .flat_map(|text| {
            text.split(|c: char| {
                c.is_whitespace() || matches!(c, '(' | ')' | ',' | '"' | '`' | '{' | '}')
            })
        })
        .find(|word| word.contains(":subagent:"))
        .unwrap_or_else(|| panic!("no child session key in the tool results {results:?}"))
        .trim_end_matches('.')
        .to_owned();
    assert!(child.starts_with(&format!("{parent}:subagent:")), "{child}");

    // The child's calls through the router reach the parent's replica, which holds it.
    let mut task = Vec::new();
    for _ in 0..100 {
        task = calls::user_messages(&mut client, &child)
            .await
            .unwrap_or_else(|e| panic!("the child's transcript through the router: {e}"));
        if !task.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        task.first()
            .is_some_and(|m| m.starts_with("[Subagent Task]")),
        "{task:?}"
    );
    let [(owner, _)] = cluster.owners(&child).await[..] else {
        panic!("{child} lives on one replica");
    };
    assert_eq!(owner, home, "{child}");
}

/// The name replica 1 has in the DNS test.
const DNS_NAME: &str = "agent-service-1.test";

/// A DNS responder on UDP loopback for the router's resolvers: answers A queries for
/// [`DNS_NAME`] with 127.0.0.1 (AAAA with no record) until told to fail, then NXDOMAIN.
struct Dns {
    addr: std::net::SocketAddr,
    failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// NXDOMAIN answers sent so far.
    refused: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Dns {
    async fn start() -> Self {
        use std::sync::{
            Arc,
            atomic::{AtomicBool, AtomicUsize, Ordering},
        };
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("bind the DNS responder");
        let addr = socket.local_addr().expect("address");
        let failing = Arc::new(AtomicBool::new(false));
        let refused = Arc::new(AtomicUsize::new(0));
        let (fail, count) = (Arc::clone(&failing), Arc::clone(&refused));
        tokio::spawn(async move {
            let mut buffer = [0u8; 1500];
            loop {
                let Ok((len, peer)) = socket.recv_from(&mut buffer).await else {
                    return;
                };
                let failing = fail.load(Ordering::SeqCst);
                if let Some((answer, nx)) = dns_answer(&buffer[..len], failing) {
                    if nx {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    let _ = socket.send_to(&answer, peer).await;
                }
            }
        });
        Self {
            addr,
            failing,
            refused,
        }
    }

    fn fail(&self, failing: bool) {
        self.failing
            .store(failing, std::sync::atomic::Ordering::SeqCst);
    }

    fn refused(&self) -> usize {
        self.refused.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The answer to one DNS query (RFC 1035 message format), and whether it is NXDOMAIN.
/// None for what is not a single-question query.
fn dns_answer(query: &[u8], failing: bool) -> Option<(Vec<u8>, bool)> {
    let header = query.get(..12)?;
    if header.get(4..6)? != [0, 1] {
        return None;
    }
    // The question: labels up to the root, then type and class.
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*query.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(query.get(at..at + len)?).to_ascii_lowercase());
        at += len;
    }
    let question = query.get(12..at + 4)?;
    let qtype = u16::from_be_bytes([*query.get(at)?, *query.get(at + 1)?]);
    let known = labels.join(".") == DNS_NAME;
    let nx = !known || failing;
    let a_record = !nx && qtype == 1;
    let mut answer = Vec::new();
    answer.extend_from_slice(&header[..2]);
    // QR, the query's opcode and RD, AA; RCODE 3 (NXDOMAIN) or 0.
    answer.push(0x80 | (header[2] & 0x79) | 0x04);
    answer.push(if nx { 3 } else { 0 });
    answer.extend_from_slice(&[0, 1, 0, u8::from(a_record), 0, 0, 0, 0]);
    answer.extend_from_slice(question);
    if a_record {
        // A pointer to the question's name, A, IN, TTL 1 s, 127.0.0.1.
        answer.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 127, 0, 0, 1]);
    }
    Some((answer, nx))
}

impl Cluster {
    /// Whether the router holds `server` of the agent backend in maintenance (`show stat`).
    async fn in_maintenance(&self, server: &str) -> bool {
        let stat = self.master("@1 show stat").await.unwrap_or_default();
        stat.lines()
            .find(|l| l.starts_with(&format!("agent_service,{server},")))
            .is_some_and(|l| l.contains("MAINT"))
    }

    /// Polls until `server`'s maintenance state is `wanted` (about 30 s at most).
    async fn until_maintenance(&self, server: &str, wanted: bool) {
        let mut backoff = Duration::from_millis(50);
        for _ in 0..120 {
            if self.in_maintenance(server).await == wanted {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
        panic!(
            "{server} never {} maintenance\n{}",
            if wanted { "entered" } else { "left" },
            self.router.log()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_name_stops_resolving_keeps_its_sessions() {
    let dns = Dns::start().await;
    let cluster = Cluster::start_with(None, Some(&dns)).await;
    cluster.until_maintenance("agent-service-1", false).await;
    let mut client = cluster.router_client().await;
    let theirs = key_owned_by(1, "dns");
    calls::run(&mut client, &theirs, "before the outage")
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", cluster.router.log()));
    let [(1, _)] = cluster.owners(&theirs).await[..] else {
        panic!("{theirs} lives on replica 1");
    };

    // The name fails for longer than the (shortened) hold: the router puts the server in
    // maintenance and sends its sessions to replica 0, which refuses them, UNAVAILABLE
    // naming replica 1, and creates nothing.
    dns.fail(true);
    cluster.until_maintenance("agent-service-1", true).await;
    assert!(dns.refused() > 0, "the router asked and got NXDOMAIN");
    let fresh = key_owned_by(1, "dns-fresh");
    for key in [&theirs, &fresh] {
        let status = client
            .run(calls::run_request(key, "during the outage").expect("request"))
            .await
            .expect_err("its owner's name does not resolve");
        assert_eq!(status.code(), Code::Unavailable, "{key}: {status:?}");
        assert!(
            status.message().contains("replica 1 (agent-service-1)"),
            "{key}: {status:?}"
        );
    }
    assert!(cluster.listed_on(0, &theirs).await.is_none());
    assert!(cluster.listed_on(0, &fresh).await.is_none());

    // The name resolves again: the sessions are back on their replica, history intact.
    dns.fail(false);
    cluster.until_maintenance("agent-service-1", false).await;
    calls::run(&mut client, &theirs, "after the outage")
        .await
        .expect("its owner resolves again");
    assert_eq!(
        calls::user_messages(&mut client, &theirs)
            .await
            .expect("transcript"),
        ["before the outage", "after the outage"]
    );
}

//! Per-turn overhead through the Codex runtime versus our own loop, same
//! process, same run.
//!
//! One agent-service in this process on 127.0.0.1:0 with two agents: `ours`
//! on the embedded loop and `codex` on the Codex runtime (the real pinned
//! app-server, installed by codex-peer), both pointed at the SAME instant
//! fake Responses model; prompt-service is real, over gRPC. Each sample is
//! the wall time of one `Run` RPC as the client sees it (send to `final`),
//! with turns of the arms interleaved (each arm first, second and third
//! equally often) so that machine noise hits them alike. Two kinds of turn:
//! - text: one model call answering "ok";
//! - tool: the model calls our `read` tool (a Codex dynamic tool on the
//!   Codex side), then answers after the result: two model calls.
//!
//! A third arm drives Codex directly: an app-server of its own, started
//! with the command line, `initialize`, `thread/start` and `turn/start`
//! params agent-service sent and in the environment it gave the child
//! (recorded once from a capture agent whose command is a wrapper copying
//! its stdin and environment), answering each dynamic tool
//! call with the answer agent-service gave the capture agent, its thread
//! begun with the recorded first turn (the one pasting per-turn context),
//! then timed from `turn/start` to `turn/completed`; its turns are
//! interleaved with the other two, the Codex agent runs all its turns on
//! one thread as the direct drive does, and the difference is what
//! agent-service adds around a Codex turn.
//!
//! `cargo bench -p agent-server --bench codex_turns` (release build).
//! `CODEX_BENCH_TURNS` sets the turns per agent and kind (default 40).
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use agent_runtime::{MapEnv, Runtime, RuntimeOptions, Settings};
use agent_testkit::{FakeReply, FakeServer, WireFormat};
use codex_peer::CodexInstall;
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    net::TcpListener,
    process::{Child, ChildStdin, ChildStdout, Command},
    sync::oneshot,
};
use tonic::transport::Channel;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let turns: usize = std::env::var("CODEX_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let codex = CodexInstall::ensure().expect("installing the pinned Codex");
    // The fake model serves from a thread and runtime of its own: a real
    // model is another machine, and on agent-service's two worker threads
    // its answers would wait behind the work they are being compared with.
    let (started, fake_ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the fake model's runtime");
        runtime.block_on(async move {
            let fake = FakeServer::start(WireFormat::OpenAiResponses)
                .await
                .expect("fake model");
            let _ = started.send(fake);
            std::future::pending::<()>().await;
        });
    });
    let (base_url, fake) = fake_ready.recv().expect("the fake model started");
    fake.set_recording(false);

    // prompt-service over gRPC, as in production.
    let prompt_listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let prompt_endpoint = format!("http://{}", prompt_listener.local_addr().expect("addr"));
    let (_stop_prompt, prompt_stopped) = oneshot::channel::<()>();
    tokio::spawn(prompt_server::serve(
        prompt_listener,
        prompt_server::ServeConfig::default(),
        async {
            let _ = prompt_stopped.await;
        },
    ));
    let prompt = Arc::new(
        prompt_client::GrpcPromptSource::connect_lazy(
            &prompt_endpoint,
            prompt_client::RetryPolicy::default(),
        )
        .expect("prompt client"),
    );

    let dir = tempfile::tempdir().expect("state");
    let codex_home = dir.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).expect("CODEX_HOME");
    let capture_home = dir.path().join("capture-home");
    std::fs::create_dir_all(&capture_home).expect("CODEX_HOME");
    let recorder = dir.path().join("recorder");
    std::fs::create_dir_all(&recorder).expect("recorder");
    let wrapper = recording_wrapper(&recorder, codex.binary());
    let provider = json!({
        "name": "fake", "base_url": base_url, "wire_api": "responses",
        "request_max_retries": 0, "stream_max_retries": 0,
    });
    let config = format!(
        r#"{{
  agents: {{
    defaults: {{ userTimezone: "Europe/Berlin" }},
    list: [
      {{ id: "ours", default: true, model: "fake/test-model" }},
      {{ id: "codex", model: "test-model", runtime: {{ type: "codex", codex: {{
        command: {command}, codexHome: {home},
        approvalPolicy: "never", sandbox: "read-only", modelProvider: {provider},
      }} }} }},
      {{ id: "capture", model: "test-model", runtime: {{ type: "codex", codex: {{
        command: {wrapper}, codexHome: {capture_home},
        approvalPolicy: "never", sandbox: "read-only", modelProvider: {provider},
      }} }} }},
    ],
  }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "openai-responses", apiKey: "k", models: [{{ id: "test-model" }}] }} }} }},
}}"#,
        command = json!(codex.binary().display().to_string()),
        home = json!(codex_home.display().to_string()),
        wrapper = json!(wrapper.display().to_string()),
        capture_home = json!(capture_home.display().to_string()),
    );
    let settings = Settings {
        state_dir: dir.path().join("state"),
        config_path: dir.path().join("openclaw.json"),
        home_dir: dir.path().to_path_buf(),
    };
    std::fs::write(&settings.config_path, config).expect("config");
    let runtime = Runtime::start(RuntimeOptions::new(
        settings,
        Arc::new(MapEnv::of([("HOME", dir.path().display().to_string())])),
        Arc::new(openclaw_transcript::SystemClock),
        prompt,
    ))
    .expect("runtime");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(agent_server::serve(
        listener,
        agent_server::ServeConfig::default(),
        Arc::clone(&runtime),
        async {
            let _ = stopped.await;
        },
    ));
    let channel = Channel::from_shared(endpoint)
        .expect("endpoint")
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .expect("connect");
    let client = AgentServiceClient::new(channel);
    client
        .clone()
        .setup(pb::SetupRequest::default())
        .await
        .expect("Setup");

    println!(
        "{}; instant fake Responses model; {turns} turns per agent and kind, interleaved",
        codex.version()
    );
    // The first Codex turn also spawns the app-server and starts the thread.
    fake.set_instant(FakeReply::text("ok"), FakeReply::text("ok"));
    let began = Instant::now();
    run(&client, "codex", "text", "Hello.").await;
    println!(
        "  first Codex turn (spawn, initialize, thread/start, turn): {:.1} ms",
        ms(began.elapsed())
    );
    run(&client, "ours", "text", "Hello.").await;
    // Two turns on the capture agent: the second one's turn/start is a
    // steady-state turn (no per-turn context pasted again).
    run(&client, "capture", "text", "Hello.").await;
    run(&client, "capture", "text", "Turn 0: check AGENTS.md.").await;
    // A tool turn on the capture agent records agent-service's answer to
    // `item/tool/call`, which the direct drive then gives word for word:
    // the answer stays in the thread's history and is sent again in every
    // later model request, so its size is part of a like-for-like turn.
    fake.set_instant(
        FakeReply::tool_call("call_1", "read", json!({"path": "AGENTS.md"})),
        FakeReply::text("AGENTS.md is there."),
    );
    run(&client, "capture", "tool", "Turn 0: check AGENTS.md.").await;
    let direct_home = dir.path().join("direct-home");
    std::fs::create_dir_all(&direct_home).expect("CODEX_HOME");
    // The direct drive's first turn answers as the Codex agent's did.
    fake.set_instant(FakeReply::text("ok"), FakeReply::text("ok"));
    let mut direct = Direct::start(codex.binary(), &direct_home, &recorder).await;

    for (kind, on_user, on_result) in [
        ("text", FakeReply::text("ok"), FakeReply::text("ok")),
        (
            "tool",
            FakeReply::tool_call("call_1", "read", json!({"path": "AGENTS.md"})),
            FakeReply::text("AGENTS.md is there."),
        ),
    ] {
        fake.set_instant(on_user, on_result);
        let mut ours = Vec::with_capacity(turns);
        let mut theirs = Vec::with_capacity(turns);
        let mut direct_turns = Vec::with_capacity(turns);
        let mut codex_phases = Vec::with_capacity(turns);
        // CPU this process spent during each arm's turns: agent-service,
        // prompt-service, the fake model and the client for the Codex
        // runtime; the fake model and the direct drive's client for the
        // direct drive. The difference is agent-service's (and
        // prompt-service's) CPU per Codex turn, on the cores Codex needs.
        let (mut cpu_codex, mut cpu_direct) = (Duration::ZERO, Duration::ZERO);
        for i in 0..turns {
            let text = format!("Turn {i}: check AGENTS.md.");
            // Each arm goes first, second and third equally often, so what
            // a turn leaves running behind it (Codex's own bookkeeping after
            // `turn/completed`, our index write after a run) falls on every
            // arm alike instead of always on the same next one.
            for arm in (0..3).map(|k| (i + k) % 3) {
                match arm {
                    0 => ours.push(run(&client, "ours", kind, &text).await),
                    1 => {
                        // One session, so one Codex thread, for both kinds,
                        // as the direct drive runs all its turns on one thread.
                        let before = cpu_used();
                        let phases = run_phases(&client, "codex", "text", &text).await;
                        cpu_codex += cpu_used().saturating_sub(before);
                        theirs.push(phases.total);
                        codex_phases.push(phases);
                    }
                    _ => {
                        let before = cpu_used();
                        direct_turns.push(direct.turn(&text).await);
                        cpu_direct += cpu_used().saturating_sub(before);
                    }
                }
            }
        }
        let phase = |pick: fn(&Phases) -> Duration| {
            let mut all: Vec<Duration> = codex_phases.iter().map(pick).collect();
            ms(median(&mut all))
        };
        println!(
            "  {kind} turn, Codex runtime phases (median ms from the request): started {:.1}, model_call {:.1}, turn_end {:.1}, end of stream {:.1}",
            phase(|p| p.started),
            phase(|p| p.model_call),
            phase(|p| p.turn_end),
            phase(|p| p.total),
        );
        // Turn i of the Codex runtime and turn i of the direct drive ran
        // side by side: the median of their differences is what one turn
        // gains, with the machine's slow and quiet stretches shared.
        let mut paired: Vec<f64> = theirs
            .iter()
            .zip(&direct_turns)
            .map(|(t, d)| ms(*t) - ms(*d))
            .collect();
        paired.sort_by(f64::total_cmp);
        let paired = paired[paired.len() / 2];
        let (ours, theirs, alone) = (
            median(&mut ours),
            median(&mut theirs),
            median(&mut direct_turns),
        );
        println!(
            "  {kind} turn, median of {turns}: our loop {:>7.1} ms | Codex runtime {:>7.1} ms | Codex driven directly {:>7.1} ms",
            ms(ours),
            ms(theirs),
            ms(alone),
        );
        println!(
            "  {kind} turn: the Codex runtime adds {:>6.1} ms over the direct drive ({:.2}x); Codex adds {:>6.1} ms over our loop",
            ms(theirs) - ms(alone),
            ms(theirs) / ms(alone),
            ms(theirs) - ms(ours),
        );
        println!(
            "  {kind} turn: median of the {turns} side-by-side differences (Codex runtime - direct drive): {paired:.1} ms"
        );
        let per_turn = |total: Duration| ms(total) / turns as f64;
        println!(
            "  {kind} turn: CPU of this process per turn: {:.2} ms during a Codex runtime turn, {:.2} ms during a direct one",
            per_turn(cpu_codex),
            per_turn(cpu_direct),
        );
    }
    direct.stop().await;
    println!("  fake model served {} requests", fake.request_count());

    let _ = stop.send(());
    server.await.expect("server task").expect("serve");
}

/// One `Run` on `agent`'s session `key`, to its final event; returns its wall time.
async fn run(
    client: &AgentServiceClient<Channel>,
    agent: &str,
    key: &str,
    message: &str,
) -> Duration {
    run_phases(client, agent, key, message).await.total
}

/// When the events of one `Run` arrived, from the request.
#[derive(Debug, Clone, Copy, Default)]
struct Phases {
    /// `started`: the run was taken and its user message written.
    started: Duration,
    /// The first `model_call`: the prompt (for Codex: `RenderCodexTurn`) is ready.
    model_call: Duration,
    /// The last `turn_end`: the turn ran and its entries are written.
    turn_end: Duration,
    /// The stream ended after `final`.
    total: Duration,
}

/// [`run`], with the arrival time of each phase's event.
async fn run_phases(
    client: &AgentServiceClient<Channel>,
    agent: &str,
    key: &str,
    message: &str,
) -> Phases {
    let request = pb::RunRequest {
        session: Some(pb::SessionRef {
            agent_id: agent.to_owned(),
            target: Some(pb::session_ref::Target::SessionKey(key.to_owned())),
        }),
        message: message.to_owned(),
        ..Default::default()
    };
    let began = Instant::now();
    let mut phases = Phases::default();
    let mut stream = client.clone().run(request).await.expect("Run").into_inner();
    let mut finished = false;
    while let Some(event) = stream.message().await.expect("stream") {
        match event.event {
            Some(pb::run_event::Event::Started(_)) => phases.started = began.elapsed(),
            Some(pb::run_event::Event::ModelCall(_)) if phases.model_call.is_zero() => {
                phases.model_call = began.elapsed();
            }
            Some(pb::run_event::Event::TurnEnd(_)) => phases.turn_end = began.elapsed(),
            Some(pb::run_event::Event::Final(_)) => finished = true,
            Some(pb::run_event::Event::Error(e)) => panic!("{agent} run failed: {e:?}"),
            _ => {}
        }
    }
    assert!(finished, "{agent}: the run ended without a final event");
    phases.total = began.elapsed();
    phases
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// User plus system CPU time of this process so far.
fn cpu_used() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(Duration::ZERO, |usage| {
        let micros = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(u64::try_from(t.tv_sec()).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec()).unwrap_or(0))
        };
        micros(usage.user_time()) + micros(usage.system_time())
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The file the capture wrapper appends agent-service's lines to, the one
/// it writes its arguments to and the one holding its environment
/// (NUL-separated `KEY=value` entries).
const SENT_LOG: &str = "sent.jsonl";
const ARGS_LOG: &str = "args";
const ENV_LOG: &str = "env";

/// A script that runs `codex` with its arguments written to `dir/args`, its
/// environment to `dir/env` and its stdin copied to `dir/sent.jsonl`.
fn recording_wrapper(dir: &Path, codex: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let script = dir.join("codex-recording");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\nenv -0 > {}\ntee -a {} | {} \"$@\"\n",
            quote(&dir.join(ARGS_LOG)),
            quote(&dir.join(ENV_LOG)),
            quote(&dir.join(SENT_LOG)),
            quote(codex)
        ),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script
}

/// A Codex app-server driven without agent-service, with recorded params.
struct Direct {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    turn_start: Value,
    /// agent-service's recorded answer to a dynamic tool call.
    tool_answer: Value,
}

impl Direct {
    /// Starts the app-server with the recorded command line, runs the
    /// recorded `initialize`, `thread/start` and that thread's first
    /// `turn/start`, and keeps a recorded steady-state `turn/start` for
    /// [`Direct::turn`].
    async fn start(binary: &Path, home: &Path, recorder: &Path) -> Self {
        let args: Vec<String> = std::fs::read_to_string(recorder.join(ARGS_LOG))
            .expect("recorded arguments")
            .lines()
            .map(str::to_owned)
            .collect();
        let sent: Vec<Value> = std::fs::read_to_string(recorder.join(SENT_LOG))
            .expect("recorded requests")
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let params = |method: &str| -> Vec<Value> {
            sent.iter()
                .filter(|m| m["method"] == method && m.get("id").is_some())
                .map(|m| m["params"].clone())
                .collect()
        };
        let initialize = params("initialize").pop().expect("a recorded initialize");
        let thread_start = params("thread/start")
            .pop()
            .expect("a recorded thread/start");
        let turns = params("turn/start");
        let turn_start = turns
            .get(1)
            .cloned()
            .expect("a recorded steady-state turn/start");
        // The last recorded turn is the first of the thread the last
        // `thread/start` began: it pastes the per-turn context, as the
        // first turn of the Codex agent's thread did.
        let first_turn = turns.last().cloned().expect("a recorded first turn");
        let tool_answer = sent
            .iter()
            .filter(|m| m.get("method").is_none() && m["result"].get("contentItems").is_some())
            .map(|m| m["result"].clone())
            .next_back()
            .expect("a recorded answer to item/tool/call");
        // The environment agent-service gave the capture agent's child (the
        // Codex agent's differs only in CODEX_HOME): what Codex reads from
        // it (TLS trust above all, see the README) changes its per-turn cost.
        let env = std::fs::read(recorder.join(ENV_LOG)).expect("recorded environment");
        let mut command = Command::new(binary);
        command.args(&args).env_clear();
        for entry in env.split(|b| *b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let (key, value) = entry.split_once('=').expect("KEY=value");
            if key == "CODEX_HOME" {
                command.env(key, home);
            } else {
                command.env(key, value);
            }
        }
        // Spawned as agent-service spawns it: a process group of its own,
        // stderr read to the end.
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("spawn Codex");
        let stderr = child.stderr.take().expect("stderr");
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(_)) = lines.next_line().await {}
        });
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut direct = Self {
            child,
            stdin,
            lines,
            next_id: 0,
            turn_start,
            tool_answer,
        };
        direct.request("initialize", initialize).await;
        direct.send(&json!({"method": "initialized"})).await;
        let result = direct.request("thread/start", thread_start).await;
        let thread = result["thread"]["id"]
            .as_str()
            .expect("thread id")
            .to_owned();
        direct.turn_start["threadId"] = json!(thread);
        // The thread's history starts as the Codex agent's does: one turn
        // with the per-turn context, then the timed turns.
        let mut first_turn = first_turn;
        first_turn["threadId"] = json!(thread);
        direct.request("turn/start", first_turn).await;
        direct.read_until(|m| m["method"] == "turn/completed").await;
        direct
    }

    /// One turn with `text` as its input: `turn/start` to `turn/completed`.
    async fn turn(&mut self, text: &str) -> Duration {
        let mut params = self.turn_start.clone();
        params["input"][0]["text"] = json!(text);
        let began = Instant::now();
        self.request("turn/start", params).await;
        self.read_until(|m| m["method"] == "turn/completed").await;
        began.elapsed()
    }

    /// Closes Codex's stdin (it exits on end of input), killing it if it
    /// is still there after a few seconds.
    async fn stop(self) {
        let Self {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        if tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to Codex");
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"id": id, "method": method, "params": params}))
            .await;
        let response = self
            .read_until(|m| m.get("method").is_none() && m["id"] == id)
            .await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// Reads until `done` matches, answering Codex's requests on the way
    /// (a dynamic tool call gets agent-service's recorded answer, anything
    /// else is accepted).
    async fn read_until(&mut self, done: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self
                .lines
                .next_line()
                .await
                .expect("read from Codex")
                .expect("Codex closed its stdout");
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if done(&message) {
                return message;
            }
            if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) {
                let result = if method == "item/tool/call" {
                    self.tool_answer.clone()
                } else {
                    json!({"decision": "accept"})
                };
                let reply = json!({"id": id, "result": result});
                self.send(&reply).await;
            }
        }
    }
}

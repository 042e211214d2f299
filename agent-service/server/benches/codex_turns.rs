//! Per-turn overhead through the Codex runtime versus our own loop, same
//! process, same run.
//!
//! One agent-service in this process on 127.0.0.1:0 with two agents: `ours`
//! on the embedded loop and `codex` on the Codex runtime (the real pinned
//! app-server, installed by codex-peer), both pointed at the SAME instant
//! fake Responses model; prompt-service is real, over gRPC. Each sample is
//! the wall time of one `Run` RPC as the client sees it (send to `final`),
//! with turns of the two agents interleaved so that machine noise hits both
//! alike. Two kinds of turn:
//! - text: one model call answering "ok";
//! - tool: the model calls our `read` tool (a Codex dynamic tool on the
//!   Codex side), then answers after the result: two model calls.
//!
//! `cargo bench -p agent-server --bench codex_turns` (release build).
//! `CODEX_BENCH_TURNS` sets the turns per agent and kind (default 40).
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use agent_runtime::{MapEnv, Runtime, RuntimeOptions, Settings};
use agent_testkit::{FakeReply, FakeServer, WireFormat};
use codex_peer::CodexInstall;
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use serde_json::json;
use tokio::{net::TcpListener, sync::oneshot};
use tonic::transport::Channel;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let turns: usize = std::env::var("CODEX_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let codex = CodexInstall::ensure().expect("installing the pinned Codex");
    let (base_url, fake) = FakeServer::start(WireFormat::OpenAiResponses)
        .await
        .expect("fake model");
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
    ],
  }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "openai-responses", apiKey: "k", models: [{{ id: "test-model" }}] }} }} }},
}}"#,
        command = json!(codex.binary().display().to_string()),
        home = json!(codex_home.display().to_string()),
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
        for i in 0..turns {
            let text = format!("Turn {i}: check AGENTS.md.");
            ours.push(run(&client, "ours", kind, &text).await);
            theirs.push(run(&client, "codex", kind, &text).await);
        }
        let (ours, theirs) = (median(&mut ours), median(&mut theirs));
        println!(
            "  {kind} turn, median of {turns}: our loop {:>7.1} ms | Codex runtime {:>7.1} ms | Codex adds {:>7.1} ms",
            ms(ours),
            ms(theirs),
            ms(theirs) - ms(ours),
        );
    }
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
    let request = pb::RunRequest {
        session: Some(pb::SessionRef {
            agent_id: agent.to_owned(),
            target: Some(pb::session_ref::Target::SessionKey(key.to_owned())),
        }),
        message: message.to_owned(),
        ..Default::default()
    };
    let began = Instant::now();
    let mut stream = client.clone().run(request).await.expect("Run").into_inner();
    let mut finished = false;
    while let Some(event) = stream.message().await.expect("stream") {
        match event.event {
            Some(pb::run_event::Event::Final(_)) => finished = true,
            Some(pb::run_event::Event::Error(e)) => panic!("{agent} run failed: {e:?}"),
            _ => {}
        }
    }
    assert!(finished, "{agent}: the run ended without a final event");
    began.elapsed()
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

//! Per-turn overhead through the Codex runtime: the real pinned Codex
//! app-server, an instant fake Responses model on 127.0.0.1, N text turns
//! on one thread, timed around `CodexRunner::run_turn` (turn/start, the
//! item stream, turn/completed, our transcript). Prints the figures.
//!
//! `cargo bench -p openclaw-codex-harness --bench turn_overhead -- [turns]`
//! (default 50 turns; cargo's own `--bench` flag is ignored).
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use agent_testkit::{FakeReply, FakeServer, WireFormat};
use codex_peer::CodexInstall;
use openclaw_codex_harness::{
    ApprovalRules, CodexParams, CodexRunner, HarnessSettings, TurnInput, TurnStatus,
};
use openclaw_tools::{ToolContext, ToolRegistry, Unavailable};
use openclaw_workspace::Confined;
use prompt_codex::{ApprovalPolicy, CodexTurnInput, SandboxMode, render_codex_turn};
use serde_json::{Map, Value, json};

fn params(workspace: &str, text: &str, thread_id: Option<&str>) -> CodexParams {
    let mut input = CodexTurnInput::new(prompt_render::RenderInput::new(workspace), "fake-model");
    input.input_text = text.to_owned();
    input.approval_policy = ApprovalPolicy::Never;
    input.sandbox = SandboxMode::ReadOnly;
    if let Some(id) = thread_id {
        input.thread_id = id.to_owned();
        input.resume = true;
    }
    let mapped = render_codex_turn(&input).expect("maps");
    CodexParams {
        thread_start: mapped.thread_start,
        thread_resume: mapped.thread_resume,
        turn_start: mapped.turn_start,
        new_thread_turn_start: mapped.new_thread_turn_start,
    }
}

fn summary(label: &str, samples: &mut [Duration]) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let mean = samples.iter().map(|d| ms(*d)).sum::<f64>() / samples.len() as f64;
    println!(
        "{label:<34} n={:<4} median {:>7.1} ms  p90 {:>7.1} ms  min {:>7.1} ms  max {:>7.1} ms  mean {:>7.1} ms",
        samples.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
        mean,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let turns: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50);
    let codex = CodexInstall::ensure().expect("installing the pinned Codex");
    let (base_url, fake) = FakeServer::start(WireFormat::OpenAiResponses)
        .await
        .expect("fake model");
    fake.set_instant(FakeReply::text("ok"), FakeReply::text("ok"));
    let workspace = tempfile::tempdir().expect("workspace");
    let home = tempfile::tempdir().expect("CODEX_HOME");
    let mut settings = HarnessSettings::new(codex.binary());
    settings.codex_home = Some(home.path().to_owned());
    let provider: Map<String, Value> = serde_json::from_value(json!({
        "name": "fake", "base_url": base_url, "wire_api": "responses",
        "request_max_retries": 0, "stream_max_retries": 0,
    }))
    .expect("provider");
    settings.model_provider = Some(provider);
    let ws = workspace.path().to_string_lossy().into_owned();
    let confined = Arc::new(Confined::new(workspace.path()).expect("workspace"));
    let input = |text: &str, thread: Option<&str>| TurnInput {
        thread_id: thread.map(str::to_owned),
        params: params(&ws, text, thread),
        history: openclaw_codex_harness::History::default(),
        tools: Arc::new(ToolRegistry::new()),
        tool_ctx: ToolContext::new(
            Arc::clone(&confined),
            Arc::new(Unavailable),
            Arc::new(Unavailable),
        ),
        approvals: ApprovalRules::default(),
    };
    let run = |runner: Arc<CodexRunner>, input: TurnInput| async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel(256);
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let began = Instant::now();
        let outcome = runner.run_turn(input, tx).await.expect("turn");
        let took = began.elapsed();
        drain.await.expect("drain");
        assert_eq!(outcome.status, TurnStatus::Completed);
        (outcome, took)
    };

    println!(
        "{} ({} turns on one thread, instant fake model)",
        codex.version(),
        turns
    );
    let mut spawns = Vec::new();
    let mut first_turns = Vec::new();
    let mut runner = None;
    let mut thread = String::new();
    for _ in 0..3 {
        if let Some(old) = runner.take() {
            let old: Arc<CodexRunner> = old;
            old.shutdown().await;
        }
        let fresh = Arc::new(CodexRunner::new(settings.clone()));
        let began = Instant::now();
        fresh.start().await.expect("start");
        spawns.push(began.elapsed());
        let (outcome, took) = run(Arc::clone(&fresh), input("Hello.", None)).await;
        first_turns.push(took);
        thread = outcome.thread_id;
        runner = Some(fresh);
    }
    let runner = runner.expect("runner");
    let mut samples = Vec::with_capacity(turns);
    for i in 0..turns {
        let text = format!("Turn {i}.");
        let (_, took) = run(Arc::clone(&runner), input(&text, Some(&thread))).await;
        samples.push(took);
    }
    summary("spawn + initialize", &mut spawns);
    summary("first turn (thread/start + turn)", &mut first_turns);
    let window = (turns / 5).max(1);
    let mut early = samples[..window].to_vec();
    let mut late = samples[turns - window..].to_vec();
    summary("text turn on a loaded thread", &mut samples);
    summary("  the first fifth of the turns", &mut early);
    summary("  the last fifth (longer history)", &mut late);
    println!("model requests served: {}", fake.request_count());
    runner.shutdown().await;
}

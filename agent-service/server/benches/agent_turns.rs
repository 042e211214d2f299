//! Per-turn overhead of agent-service, end to end through gRPC.
//!
//! What runs: the real `agent-service` binary as a child process (so its
//! memory can be read from /proc), a real prompt-service on a loopback socket
//! in this process, and a fake model server that answers at once: the first
//! call of a run gets a `read` tool call, the call after the tool result gets
//! the final text. So every run is one user message, two model calls, one
//! tool call and four transcript appends (each fsynced), and every model call
//! includes a `RenderSystemPrompt` round trip to prompt-service.
//!
//! Two measurements:
//! 1. Sequential runs in one client: wall time of each run as the client
//!    sees it (from sending `Run` to the `final` event), reported per run and
//!    per model call (run / 2), p50 and p99.
//! 2. 200 sessions at once, each running `RUNS_PER_SESSION` runs back to
//!    back: throughput (runs and model calls per second) and agent-service's
//!    peak resident memory (VmHWM) against its resident memory at idle.
//!
//! `cargo bench -p agent-server --bench agent_turns` (release build). Set
//! AGENT_BENCH_RUNS / AGENT_BENCH_SESSIONS to change the sizes. The fake model
//! and prompt-service share this process's cores with agent-service, so the
//! figures are an upper bound of the service's own cost.

mod common;

use std::time::Instant;

use agent_testkit::{FakeReply, FakeServer, WireFormat};
use common::{
    config_text, connect, env_usize, memory_kib, ms, percentile, run, start_agent_service,
    start_prompt_service,
};
use openclaw_proto::agent::v1 as pb;

const RUNS_PER_SESSION: usize = 10;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let sequential_runs = env_usize("AGENT_BENCH_RUNS", 400);
    let sessions = env_usize("AGENT_BENCH_SESSIONS", 200);

    let (base_url, fake) = FakeServer::start(WireFormat::ChatCompletions).await?;
    fake.set_recording(false);
    fake.set_instant(
        FakeReply::tool_call("call-1", "read", serde_json::json!({ "path": "AGENTS.md" })),
        FakeReply::text("Done: AGENTS.md is there."),
    );
    let prompt = start_prompt_service().await?;
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("openclaw.json");
    std::fs::write(&config, config_text(&base_url))?;
    let (mut child, endpoint) =
        start_agent_service(dir.path(), &config, &prompt.endpoint, &[]).await?;
    let client = connect(&endpoint).await?;
    client
        .clone()
        .setup(pb::SetupRequest::default())
        .await
        .map_err(|s| anyhow::anyhow!("Setup: {s}"))?;

    // Warm up: connections, page cache, prompt-service memo.
    for i in 0..20 {
        run(&client, &format!("warm-{}", i % 2), "warm up").await?;
    }
    let idle_rss = memory_kib(child.id(), "VmRSS:");

    // 1. Sequential.
    let mut runs = Vec::with_capacity(sequential_runs);
    for i in 0..sequential_runs {
        // A new session every 20 runs keeps the history (and so the request
        // size) within a realistic few turns.
        let key = format!("seq-{}", i / 20);
        let began = Instant::now();
        run(&client, &key, "Please check that AGENTS.md exists.").await?;
        runs.push(began.elapsed());
    }
    runs.sort();
    let p50 = percentile(&runs, 0.50);
    let p99 = percentile(&runs, 0.99);
    println!(
        "agent-service per-turn overhead, instant fake model, {sequential_runs} sequential runs"
    );
    println!(
        "  (each run: 1 user message, 2 model calls with a prompt render each, 1 tool call, 4 fsynced appends)"
    );
    println!(
        "  per run:        p50 {:>8.2} ms   p99 {:>8.2} ms",
        ms(p50),
        ms(p99)
    );
    println!(
        "  per model call: p50 {:>8.2} ms   p99 {:>8.2} ms",
        ms(p50) / 2.0,
        ms(p99) / 2.0
    );

    // 2. Many sessions at once.
    let began = Instant::now();
    let mut tasks = Vec::with_capacity(sessions);
    for s in 0..sessions {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let key = format!("load-{s}");
            let mut times = Vec::with_capacity(RUNS_PER_SESSION);
            for _ in 0..RUNS_PER_SESSION {
                let t = Instant::now();
                run(&client, &key, "Please check that AGENTS.md exists.").await?;
                times.push(t.elapsed());
            }
            anyhow::Ok(times)
        }));
    }
    let mut all = Vec::with_capacity(sessions * RUNS_PER_SESSION);
    for task in tasks {
        all.extend(task.await??);
    }
    let wall = began.elapsed();
    all.sort();
    let total = all.len() as f64;
    let peak = memory_kib(child.id(), "VmHWM:");
    println!(
        "{sessions} sessions at once, {RUNS_PER_SESSION} runs each ({} runs, {} model calls) in {:.2} s",
        all.len(),
        all.len() * 2,
        wall.as_secs_f64()
    );
    println!(
        "  throughput: {:.0} runs/s, {:.0} model calls/s",
        total / wall.as_secs_f64(),
        total * 2.0 / wall.as_secs_f64()
    );
    println!(
        "  run latency under load: p50 {:.1} ms   p99 {:.1} ms",
        ms(percentile(&all, 0.50)),
        ms(percentile(&all, 0.99))
    );
    println!(
        "  agent-service memory: {} MiB resident at idle (after warm-up), {} MiB peak (VmHWM)",
        idle_rss.map_or("?".to_owned(), |k| format!("{:.1}", k as f64 / 1024.0)),
        peak.map_or("?".to_owned(), |k| format!("{:.1}", k as f64 / 1024.0)),
    );
    println!("  fake model served {} requests", fake.request_count());

    let _ = child.start_kill();
    let _ = child.wait().await;
    drop(prompt);
    Ok(())
}

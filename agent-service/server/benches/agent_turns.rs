//! Per-turn overhead of agent-service, end to end through gRPC.
//!
//! What runs: the real `agent-service` binary as a child process (so its
//! memory can be read from /proc), a real prompt-service on a loopback socket
//! in this process, and a fake model server that answers at once: the first
//! call of a run gets a `read` tool call, the call after the tool result gets
//! the final text. So every run is one user message, two model calls, one
//! tool call, four transcript appends and two fsyncs (the journal's before the
//! message is acknowledged, the transcript's when the run ends). Every model call builds
//! its render request; the first of a run sends it to prompt-service (a `RenderSystemPrompt`
//! round trip) and the second, whose request is unchanged, reuses that answer.
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
    config_text, connect, context_switches, cpu_ms, env_usize, free_address, memory_kib, ms,
    percentile, run, start_agent_service, start_prompt_service,
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
    let metrics_listen = free_address()?;
    let metrics_url = format!("http://{metrics_listen}/metrics");
    let (mut child, endpoint) = start_agent_service(
        dir.path(),
        &config,
        &prompt.endpoint,
        &["--metrics-listen", &metrics_listen],
    )
    .await?;
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
    let fsyncs_before = Fsyncs::scrape(&metrics_url).await?;
    let cpu_before = (cpu_ms(child.id()), cpu_ms(Some(std::process::id())));
    let switches_before = context_switches(child.id());
    let mut runs = Vec::with_capacity(sequential_runs);
    for i in 0..sequential_runs {
        // A new session every 20 runs keeps the history (and so the request
        // size) within a realistic few turns.
        let key = format!("seq-{}", i / 20);
        let began = Instant::now();
        run(&client, &key, "Please check that AGENTS.md exists.").await?;
        runs.push(began.elapsed());
    }
    let fsyncs = Fsyncs::scrape(&metrics_url).await?.since(&fsyncs_before);
    let cpu_service = cpu_ms(child.id()) - cpu_before.0;
    let switches = context_switches(child.id()).saturating_sub(switches_before);
    let cpu_here = cpu_ms(Some(std::process::id())) - cpu_before.1;
    runs.sort();
    let p50 = percentile(&runs, 0.50);
    let p99 = percentile(&runs, 0.99);
    println!(
        "agent-service per-turn overhead, instant fake model, {sequential_runs} sequential runs"
    );
    println!(
        "  (each run: 1 user message, 2 model calls each building its render request (sent once: the second is unchanged), 1 tool call, 4 transcript appends)"
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

    let n = sequential_runs as f64;
    println!(
        "  fsyncs per run: {:.2} journal (mean {:.2} ms), {:.2} transcript (mean {:.2} ms)",
        fsyncs.journal.count / n,
        fsyncs.journal.mean_ms(),
        fsyncs.transcript.count / n,
        fsyncs.transcript.mean_ms(),
    );
    println!(
        "  agent-service context switches per run: {:.1} (thread sleeps and hand-offs)",
        switches as f64 / n
    );
    // Where the time goes: CPU per model call of agent-service, and of this
    // process (the client, prompt-service and the fake model).
    println!(
        "  CPU per model call: agent-service {:.2} ms, this process (client, prompt-service, fake model) {:.2} ms",
        cpu_service / (2.0 * n),
        cpu_here / (2.0 * n),
    );
    // What the disk alone takes for one fsync of a small append, here and now:
    // a run waits for two (the message's before it is acknowledged, the
    // transcript's before `final`), so twice this is the floor of a run.
    let mut floor = fdatasync_latencies(dir.path(), 200)?;
    floor.sort();
    println!(
        "  the disk's fdatasync of a small append: p50 {:.2} ms, p99 {:.2} ms (a run's floor: 2 x p50 = {:.2} ms, {:.2} ms a model call)",
        ms(percentile(&floor, 0.50)),
        ms(percentile(&floor, 0.99)),
        2.0 * ms(percentile(&floor, 0.50)),
        ms(percentile(&floor, 0.50)),
    );

    // 2. Many sessions at once.
    let cpu_before_load = cpu_ms(child.id());
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
    let cpu_load = cpu_ms(child.id()) - cpu_before_load;
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
    // Under load the workers rarely sleep between events, so a model call costs less CPU
    // than in the sequential phase, where every exchange wakes a parked thread.
    println!(
        "  CPU per model call under load: agent-service {:.2} ms",
        cpu_load / (total * 2.0)
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

/// Counts and total seconds of agent-service's fsyncs, by file, from its metrics.
#[derive(Debug, Default)]
struct Fsyncs {
    journal: Tally,
    transcript: Tally,
}

/// How many fsyncs and how long they took in all.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    count: f64,
    seconds: f64,
}

impl Tally {
    fn mean_ms(self) -> f64 {
        if self.count == 0.0 {
            0.0
        } else {
            self.seconds / self.count * 1000.0
        }
    }

    fn minus(self, before: Self) -> Self {
        Self {
            count: self.count - before.count,
            seconds: self.seconds - before.seconds,
        }
    }
}

impl Fsyncs {
    async fn scrape(url: &str) -> anyhow::Result<Self> {
        let text = reqwest::get(url).await?.error_for_status()?.text().await?;
        let value = |series: String| {
            text.lines()
                .find_map(|line| line.strip_prefix(series.as_str()))
                .and_then(|rest| rest.trim().parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let of = |file: &str| Tally {
            count: value(format!(r#"agent_fsync_seconds_count{{file="{file}"}} "#)),
            seconds: value(format!(r#"agent_fsync_seconds_sum{{file="{file}"}} "#)),
        };
        Ok(Self {
            journal: of("journal"),
            transcript: of("transcript"),
        })
    }

    fn since(&self, before: &Self) -> Self {
        Self {
            journal: self.journal.minus(before.journal),
            transcript: self.transcript.minus(before.transcript),
        }
    }
}

/// Times `count` appends of a 200-byte line, each followed by `fdatasync`, in `dir`.
fn fdatasync_latencies(
    dir: &std::path::Path,
    count: usize,
) -> anyhow::Result<Vec<std::time::Duration>> {
    use std::io::Write as _;
    let path = dir.join("fdatasync-probe");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let line = [b'x'; 199];
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        file.write_all(&line)?;
        file.write_all(b"\n")?;
        let began = Instant::now();
        file.sync_data()?;
        times.push(began.elapsed());
    }
    std::fs::remove_file(&path)?;
    Ok(times)
}

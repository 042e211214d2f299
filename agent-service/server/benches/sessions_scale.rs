//! How one agent-service scales with the number of sessions, end to end through gRPC.
//!
//! What runs: the real `agent-service` binary as a child process (its memory and descriptors
//! are read from /proc), a real prompt-service on a loopback socket in this process, and a fake
//! model server that answers at once: each run is one user message, two model calls (the
//! first asks for a `read` tool call, the second gives the final text) and one tool call, with
//! the transcript appends fsynced as in production.
//!
//! 1. The curve: for 10, 100 and 1,000 sessions at once, each session runs `SCALE_RUNS` runs
//!    back to back. Reported per step: runs/s, p50 and p99 per model call (a run's time over
//!    two), the peak resident memory while the step ran and that peak over the number of
//!    sessions, and the most descriptors open.
//! 2. Many sessions: more sessions get one run each (1,000 at once) until `SCALE_SESSIONS`
//!    exist; then the benchmark waits for the idle release (`--idle-release-secs`,
//!    `SCALE_IDLE_SECS`) and for the resident memory to settle (the allocator gives
//!    freed pages back over a few seconds), and reports the resident memory per idle
//!    session over the settled baseline and the descriptors left open on session files.
//!
//! 3. The index at that size: `ListSessions` of every session and of one page of 1,000 and
//!    the page after it (medians of five calls, as the client sees them), and index updates: `CreateSession` of new keys one at a time (each
//!    a durable index update and a new transcript) and `ResetSession` of existing ones (an
//!    index update and an archive rename), medians of twenty.
//!
//! The figures go to stdout and into an SVG chart (`SCALE_SVG`, default
//! `sessions-scale.svg` beside this file: the chart the README links to).
//!
//! `cargo bench -p agent-server --bench sessions_scale` (release build) runs the curve and
//! 10,000 sessions. `-- --phase many` skips the curve (and the chart), and
//! `-- --phase 100k` is the many-sessions phase at 100,000 sessions (`SCALE_SESSIONS` sets
//! another number). The fake model, prompt-service and the clients share the machine's cores
//! with agent-service.

mod common;

use std::{
    fmt::Write as _,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use agent_testkit::{FakeReply, FakeServer, WireFormat};
use common::{
    config_text, connect, cpu_ms, descriptors, env_usize, memory_kib, ms, percentile, run,
    start_agent_service, start_prompt_service,
};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tonic::transport::Channel;

/// Client connections the sessions are spread over (HTTP/2 streams multiplex on each).
const CONNECTIONS: usize = 16;
const STEPS: [usize; 3] = [10, 100, 1_000];
const MESSAGE: &str = "Please check that AGENTS.md exists.";

/// One step of the curve.
struct Step {
    sessions: usize,
    runs_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    peak_kib: u64,
    most_fds: usize,
}

/// Which parts run (`--phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The curve, then the many sessions.
    All,
    /// Only the many sessions.
    Many,
}

/// The phase and the default number of sessions from the arguments (`cargo bench` adds
/// `--bench`, which is ignored).
fn phase() -> anyhow::Result<(Phase, usize)> {
    let mut args = std::env::args().skip(1);
    let mut chosen = (Phase::All, 10_000);
    while let Some(arg) = args.next() {
        if arg == "--phase" {
            chosen = match args.next().as_deref() {
                Some("all") => (Phase::All, 10_000),
                Some("many") => (Phase::Many, 10_000),
                Some("100k") => (Phase::Many, 100_000),
                other => anyhow::bail!("--phase takes all, many or 100k, not {other:?}"),
            };
        }
    }
    Ok(chosen)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let (phase, default_sessions) = phase()?;
    let total_sessions = env_usize("SCALE_SESSIONS", default_sessions);
    let runs_per_session = env_usize("SCALE_RUNS", 5);
    let idle_secs = env_usize("SCALE_IDLE_SECS", 2);
    let svg_path = std::env::var("SCALE_SVG").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/benches/sessions-scale.svg").to_owned()
    });

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
    let idle_flag = idle_secs.to_string();
    let (mut child, endpoint) = start_agent_service(
        dir.path(),
        &config,
        &prompt.endpoint,
        &[
            "--idle-release-secs",
            &idle_flag,
            "--max-concurrent-streams",
            "4096",
            "--max-concurrent-requests",
            "4096",
        ],
    )
    .await?;
    let pid = child.id();
    let sessions_dir = dir.path().join("state");
    let mut clients = Vec::with_capacity(CONNECTIONS);
    for _ in 0..CONNECTIONS {
        clients.push(connect(&endpoint).await?);
    }
    clients[0]
        .clone()
        .setup(pb::SetupRequest::default())
        .await
        .map_err(|s| anyhow::anyhow!("Setup: {s}"))?;

    // Warm up (connections, page cache, prompt-service memo), then let the warm-up sessions
    // be released, so the baseline is a service holding no session.
    for i in 0..20 {
        run(&clients[0], &format!("warm-{}", i % 2), MESSAGE).await?;
    }
    wait_released(pid, &sessions_dir, idle_secs).await?;
    let (baseline, _) = settle(pid).await;
    println!(
        "agent-service scaling, instant fake model, {runs_per_session} runs per session \
         (1 user message, 2 model calls, 1 tool call each)"
    );
    println!(
        "  resident with no session open: {:.1} MiB",
        baseline as f64 / 1024.0
    );

    let mut steps = Vec::new();
    let mut created = 0;
    let curve: &[usize] = if phase == Phase::All { &STEPS } else { &[] };
    for &sessions in curve {
        let step = run_step(
            &clients,
            pid,
            &sessions_dir,
            sessions,
            runs_per_session,
            &format!("curve-{sessions}"),
        )
        .await?;
        created += sessions;
        println!(
            "  {:>5} sessions at once: {:>6.0} runs/s, per model call p50 {:>7.2} ms p99 {:>8.2} ms, \
             peak {:>6.1} MiB ({:>5.1} KiB a session over the idle baseline), most descriptors {}",
            step.sessions,
            step.runs_per_s,
            step.p50_ms,
            step.p99_ms,
            step.peak_kib as f64 / 1024.0,
            step.peak_kib.saturating_sub(baseline) as f64 / step.sessions as f64,
            step.most_fds
        );
        steps.push(step);
    }

    // Many sessions: one run each, 1,000 at once, until `total_sessions` exist.
    let remaining = total_sessions.saturating_sub(created);
    let began = Instant::now();
    let fill = fill_sessions(&clients, remaining, 1_000).await?;
    let fill_wall = began.elapsed();
    println!(
        "  {remaining} more sessions, one run each, 1,000 at once: {:.0} runs/s ({} runs in {:.1} s)",
        fill as f64 / fill_wall.as_secs_f64(),
        fill,
        fill_wall.as_secs_f64()
    );
    let hwm = memory_kib(pid, "VmHWM:").unwrap_or(0);
    let waited = wait_released(pid, &sessions_dir, idle_secs).await?;
    let at_release = memory_kib(pid, "VmRSS:").unwrap_or(0);
    let (fds, session_fds) = descriptors(pid, &sessions_dir).unwrap_or((0, 0));
    let threads = memory_kib(pid, "Threads:").unwrap_or(0);
    // The allocator gives freed pages back over the next seconds (jemalloc's
    // background purge): the idle figure is the settled one.
    let (idle, settled) = settle(pid).await;
    let per_idle_kib = idle.saturating_sub(baseline) as f64 / total_sessions as f64;
    println!(
        "  {total_sessions} sessions, all idle and released ({:.1} s after the last run): \
         {:.1} MiB resident then, {threads} threads; {} descriptors open, {} of them on \
         session files; peak of the whole run {:.1} MiB (VmHWM)",
        waited.as_secs_f64(),
        at_release as f64 / 1024.0,
        fds,
        session_fds,
        hwm as f64 / 1024.0
    );
    println!(
        "  settled {:.0} s later: {:.1} MiB resident, {} threads: {:.2} KiB a session over the baseline",
        settled.as_secs_f64(),
        idle as f64 / 1024.0,
        memory_kib(pid, "Threads:").unwrap_or(0),
        per_idle_kib,
    );

    index_figures(&clients[0], pid, total_sessions).await?;

    if phase == Phase::All {
        std::fs::write(
            &svg_path,
            chart(&steps, baseline, per_idle_kib, total_sessions),
        )?;
        println!("  chart: {svg_path}");
    }

    let _ = child.start_kill();
    let _ = child.wait().await;
    drop(prompt);
    Ok(())
}

/// Runs one step of the curve: `sessions` sessions at once, `runs` runs each.
async fn run_step(
    clients: &[AgentServiceClient<Channel>],
    pid: Option<u32>,
    sessions_dir: &std::path::Path,
    sessions: usize,
    runs: usize,
    prefix: &str,
) -> anyhow::Result<Step> {
    let sampler = Sampler::start(pid, sessions_dir);
    let began = Instant::now();
    let mut tasks = Vec::with_capacity(sessions);
    for s in 0..sessions {
        let client = clients[s % clients.len()].clone();
        let key = format!("{prefix}-{s}");
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(runs);
            for _ in 0..runs {
                let t = Instant::now();
                run(&client, &key, MESSAGE).await?;
                times.push(t.elapsed());
            }
            anyhow::Ok(times)
        }));
    }
    let mut all = Vec::with_capacity(sessions * runs);
    for task in tasks {
        all.extend(task.await??);
    }
    let wall = began.elapsed();
    let (peak_kib, most_fds) = sampler.stop().await;
    all.sort();
    Ok(Step {
        sessions,
        runs_per_s: all.len() as f64 / wall.as_secs_f64(),
        p50_ms: ms(percentile(&all, 0.50)) / 2.0,
        p99_ms: ms(percentile(&all, 0.99)) / 2.0,
        peak_kib,
        most_fds,
    })
}

/// Sessions per page in the paged `ListSessions` figures.
const LIST_PAGE: u32 = 1_000;

/// Lists every session (five times), a page of them, and times index updates, with `total` sessions in the
/// index; prints the medians.
async fn index_figures(
    client: &AgentServiceClient<Channel>,
    pid: Option<u32>,
    total: usize,
) -> anyhow::Result<()> {
    let (mut lists, listed, list_cpu) = list_all(client, pid, pb::SessionView::Full).await?;
    let (mut basic_lists, basic_listed, basic_cpu) =
        list_all(client, pid, pb::SessionView::Basic).await?;
    anyhow::ensure!(
        listed >= total && basic_listed == listed,
        "ListSessions returned {listed} sessions ({basic_listed} in the basic view), {total} exist"
    );
    // A page as the CLI asks for it (the most recent 1,000), and the next page after it.
    let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let began = Instant::now();
        let first = client
            .clone()
            .list_sessions(pb::ListSessionsRequest {
                page_size: LIST_PAGE,
                ..Default::default()
            })
            .await
            .map_err(|s| anyhow::anyhow!("ListSessions: {s}"))?
            .into_inner();
        firsts.push(began.elapsed());
        anyhow::ensure!(
            first.sessions.len() == LIST_PAGE as usize && !first.next_page_token.is_empty()
        );
        let began = Instant::now();
        client
            .clone()
            .list_sessions(pb::ListSessionsRequest {
                page_size: LIST_PAGE,
                page_token: first.next_page_token,
                ..Default::default()
            })
            .await
            .map_err(|s| anyhow::anyhow!("ListSessions: {s}"))?;
        seconds.push(began.elapsed());
    }
    let (mut creates, mut resets) = (Vec::new(), Vec::new());
    for i in 0..20 {
        let began = Instant::now();
        client
            .clone()
            .create_session(pb::CreateSessionRequest {
                session_key: format!("index-probe-{i}"),
                ..Default::default()
            })
            .await
            .map_err(|s| anyhow::anyhow!("CreateSession: {s}"))?;
        creates.push(began.elapsed());
        let began = Instant::now();
        client
            .clone()
            .reset_session(pb::ResetSessionRequest {
                session: Some(pb::SessionRef {
                    agent_id: String::new(),
                    target: Some(pb::session_ref::Target::SessionKey(format!("many-{i}"))),
                }),
            })
            .await
            .map_err(|s| anyhow::anyhow!("ResetSession: {s}"))?;
        resets.push(began.elapsed());
    }
    for times in [
        &mut lists,
        &mut basic_lists,
        &mut firsts,
        &mut seconds,
        &mut creates,
        &mut resets,
    ] {
        times.sort();
    }
    println!(
        "  index of {listed} sessions: ListSessions of all of them p50 {:.1} ms (max {:.1} ms; \
         agent-service CPU {list_cpu:.0} ms a list), in the basic view p50 {:.1} ms (max {:.1} ms; \
         agent-service CPU {basic_cpu:.0} ms a list); a page of {LIST_PAGE} p50 {:.1} ms, the next page p50 {:.1} ms; \
         index updates: CreateSession p50 {:.2} ms, ResetSession p50 {:.2} ms",
        ms(percentile(&lists, 0.5)),
        ms(percentile(&lists, 1.0)),
        ms(percentile(&basic_lists, 0.5)),
        ms(percentile(&basic_lists, 1.0)),
        ms(percentile(&firsts, 0.5)),
        ms(percentile(&seconds, 0.5)),
        ms(percentile(&creates, 0.5)),
        ms(percentile(&resets, 0.5)),
    );
    Ok(())
}

/// Lists every session five times in `view`: the wall times as this client sees them (its
/// decoding included), the sessions listed, and agent-service's own CPU per list.
async fn list_all(
    client: &AgentServiceClient<Channel>,
    pid: Option<u32>,
    view: pb::SessionView,
) -> anyhow::Result<(Vec<Duration>, usize, f64)> {
    let mut times = Vec::new();
    let mut listed = 0;
    let cpu_before = cpu_ms(pid);
    for _ in 0..5 {
        let began = Instant::now();
        let response = client
            .clone()
            .list_sessions(pb::ListSessionsRequest {
                view: view as i32,
                ..Default::default()
            })
            .await
            .map_err(|s| anyhow::anyhow!("ListSessions: {s}"))?;
        times.push(began.elapsed());
        listed = response.into_inner().sessions.len();
    }
    Ok((times, listed, (cpu_ms(pid) - cpu_before) / 5.0))
}

/// Gives `count` new sessions one run each, `at_once` at a time. Returns the runs done.
async fn fill_sessions(
    clients: &[AgentServiceClient<Channel>],
    count: usize,
    at_once: usize,
) -> anyhow::Result<usize> {
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::with_capacity(at_once);
    for worker in 0..at_once {
        let client = clients[worker % clients.len()].clone();
        let next = Arc::clone(&next);
        tasks.push(tokio::spawn(async move {
            let mut done = 0;
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= count as u64 {
                    return anyhow::Ok(done);
                }
                run(&client, &format!("many-{n}"), MESSAGE).await?;
                done += 1;
            }
        }));
    }
    let mut done = 0;
    for task in tasks {
        done += task.await??;
    }
    Ok(done)
}

/// Waits until no descriptor of the child points into the state directory's session files and
/// its resident memory has settled (the idle release ran). Returns how long that took.
async fn wait_released(
    pid: Option<u32>,
    state: &std::path::Path,
    idle_secs: usize,
) -> anyhow::Result<Duration> {
    let began = Instant::now();
    let limit = Duration::from_secs(idle_secs as u64 * 4 + 60);
    let sessions = state.join("agents");
    loop {
        let open = descriptors(pid, &sessions).map_or(0, |(_, under)| under);
        if open == 0 && began.elapsed() >= Duration::from_secs(idle_secs as u64) {
            break;
        }
        anyhow::ensure!(
            began.elapsed() < limit,
            "{open} session files still open after {:.0} s: the idle release did not run",
            began.elapsed().as_secs_f64()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The allocator returns freed pages shortly after; give it a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok(began.elapsed())
}

/// Waits until the child's resident memory stops falling: five samples a second
/// apart within 1 % of each other (at most a minute). Returns it and how long that took.
async fn settle(pid: Option<u32>) -> (u64, Duration) {
    let began = Instant::now();
    let mut recent = std::collections::VecDeque::new();
    loop {
        let now = memory_kib(pid, "VmRSS:").unwrap_or(0);
        recent.push_back(now);
        if recent.len() > 5 {
            recent.pop_front();
        }
        let (low, high) = (
            recent.iter().copied().min().unwrap_or(0),
            recent.iter().copied().max().unwrap_or(0),
        );
        if (recent.len() == 5 && high - low <= now / 100)
            || began.elapsed() > Duration::from_secs(60)
        {
            return (now, began.elapsed());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Samples the child's resident memory and descriptors every 20 ms; keeps the largest.
struct Sampler {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<(u64, usize)>,
}

impl Sampler {
    fn start(pid: Option<u32>, dir: &std::path::Path) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let dir = dir.to_path_buf();
        let task = tokio::spawn(async move {
            let (mut rss, mut fds) = (0, 0);
            while !flag.load(Ordering::Relaxed) {
                rss = rss.max(memory_kib(pid, "VmRSS:").unwrap_or(0));
                fds = fds.max(descriptors(pid, &dir).map_or(0, |(all, _)| all));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (rss, fds)
        });
        Self { stop, task }
    }

    async fn stop(self) -> (u64, usize) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or((0, 0))
    }
}

/// Three small charts over the number of sessions at once (log scale): runs/s, p99 per model
/// call, and resident memory per session (active; idle after release as a dashed line).
fn chart(steps: &[Step], baseline: u64, per_idle_kib: f64, total: usize) -> String {
    let panels: [(&str, Vec<f64>); 3] = [
        (
            "runs per second",
            steps.iter().map(|s| s.runs_per_s).collect(),
        ),
        (
            "p99 per model call (ms)",
            steps.iter().map(|s| s.p99_ms).collect(),
        ),
        (
            "KiB per session (peak, active)",
            steps
                .iter()
                .map(|s| s.peak_kib.saturating_sub(baseline) as f64 / s.sessions as f64)
                .collect(),
        ),
    ];
    let (w, h, pad) = (300.0, 220.0, 45.0);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">"#,
        w * 3.0,
        h + 30.0
    );
    let _ = write!(
        svg,
        r#"<text x="10" y="{}">agent-service, one replica, instant fake model: sessions at once (log scale) on each x axis; idle: {total} sessions released, {per_idle_kib:.1} KiB each</text>"#,
        h + 22.0
    );
    let xs: Vec<f64> = steps.iter().map(|s| (s.sessions as f64).log10()).collect();
    let (x_min, x_max) = (
        xs.first().copied().unwrap_or(1.0),
        xs.last().copied().unwrap_or(3.0),
    );
    for (i, (title, ys)) in panels.iter().enumerate() {
        let left = i as f64 * w;
        let y_max = ys.iter().copied().fold(0.0_f64, f64::max).max(per_idle_kib) * 1.15;
        let px = |x: f64| left + pad + (x - x_min) / (x_max - x_min).max(1e-9) * (w - pad * 1.5);
        let py = |y: f64| h - pad + -(y / y_max.max(1e-9)) * (h - pad * 1.6);
        let _ = write!(
            svg,
            r#"<text x="{}" y="16" font-weight="bold">{title}</text><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
            left + pad,
            px(x_min),
            py(0.0),
            px(x_max),
            py(0.0),
            px(x_min),
            py(0.0),
            px(x_min),
            py(y_max)
        );
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end">{:.0}</text>"#,
            px(x_min) - 4.0,
            py(y_max) + 4.0,
            y_max
        );
        let points: Vec<String> = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="steelblue" stroke-width="2" points="{}"/>"#,
            points.join(" ")
        );
        for ((x, y), step) in xs.iter().zip(ys).zip(steps) {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="steelblue"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{:.1}</text><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px(*x),
                py(*y),
                px(*x),
                py(*y) - 7.0,
                y,
                px(*x),
                py(0.0) + 14.0,
                step.sessions
            );
        }
        if i == 2 {
            let _ = write!(
                svg,
                r#"<line x1="{}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="darkorange" stroke-dasharray="4 3"/><text x="{}" y="{:.1}" fill="darkorange">idle, released</text>"#,
                px(x_min),
                py(per_idle_kib),
                px(x_max),
                py(per_idle_kib),
                px(x_min) + 4.0,
                py(per_idle_kib) - 4.0
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

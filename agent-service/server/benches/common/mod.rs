//! What the agent-service benchmarks share: a real prompt-service on a loopback socket, the
//! real `agent-service` binary as a child process, one `Run` to its end, and readings of the
//! child's memory and descriptors from /proc.

#![allow(dead_code, reason = "each benchmark uses a part")]

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use agent_testkit::WireFormat;
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tokio::{net::TcpListener, process::Child, sync::oneshot};
use tonic::transport::Channel;

/// A prompt-service serving on loopback in this process until dropped, with room for 4,096
/// calls at once (the benchmarks run up to a thousand sessions).
pub struct PromptService {
    pub endpoint: String,
    _stop: oneshot::Sender<()>,
}

pub async fn start_prompt_service() -> anyhow::Result<PromptService> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let endpoint = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(prompt_server::serve(
        listener,
        prompt_server::ServeConfig {
            overload: service_kit::OverloadConfig {
                max_concurrent_requests: 4096,
                max_concurrent_streams: 4096,
            },
            ..prompt_server::ServeConfig::default()
        },
        async {
            let _ = stopped.await;
        },
    ));
    Ok(PromptService {
        endpoint,
        _stop: stop,
    })
}

/// Starts the real `agent-service` over `root/state` with `config` and the extra flags, and
/// waits until it reports SERVING. Returns the child and its endpoint.
pub async fn start_agent_service(
    root: &std::path::Path,
    config: &std::path::Path,
    prompt: &str,
    extra_args: &[&str],
) -> anyhow::Result<(Child, String)> {
    let listen = free_address()?;
    // `AGENT_SERVICE_BIN` runs another build of the binary (to compare two builds).
    let program = std::env::var_os("AGENT_SERVICE_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_agent-service").into());
    let child = tokio::process::Command::new(program)
        .arg("--listen")
        .arg(&listen)
        .arg("--state-dir")
        .arg(root.join("state"))
        .arg("--config")
        .arg(config)
        .arg("--prompt-service")
        .arg(prompt)
        .args(extra_args)
        .env("HOME", root)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let endpoint = format!("http://{listen}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if service_kit::probe(&endpoint, "", Duration::from_secs(1))
            .await
            .unwrap_or(false)
        {
            return Ok((child, endpoint));
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "agent-service did not become SERVING on {listen} within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client on its own connection to `endpoint`.
/// A client of agent-service at `endpoint`. With `AGENT_BENCH_ACCEPT_GZIP=1` it tells the
/// server it accepts gzipped responses, as grpcio (Python) and grpc-js (Node) clients do by
/// default; the server gzips only when started with `--compress-responses`.
pub async fn connect(endpoint: &str) -> anyhow::Result<AgentServiceClient<Channel>> {
    let channel = Channel::from_shared(endpoint.to_owned())?
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await?;
    let client = AgentServiceClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20);
    Ok(if env_usize("AGENT_BENCH_ACCEPT_GZIP", 0) == 1 {
        client.accept_compressed(tonic::codec::CompressionEncoding::Gzip)
    } else {
        client
    })
}

/// One `Run`, to its final event; an error event or status is an error.
pub async fn run(
    client: &AgentServiceClient<Channel>,
    key: &str,
    message: &str,
) -> anyhow::Result<()> {
    let request = pb::RunRequest {
        session: Some(pb::SessionRef {
            agent_id: String::new(),
            target: Some(pb::session_ref::Target::SessionKey(key.to_owned())),
        }),
        message: message.to_owned(),
        ..Default::default()
    };
    let mut stream = client
        .clone()
        .run(request)
        .await
        .map_err(|s| anyhow::anyhow!("Run: {s}"))?
        .into_inner();
    let mut finished = false;
    while let Some(event) = stream.message().await? {
        match event.event {
            Some(pb::run_event::Event::Final(_)) => finished = true,
            Some(pb::run_event::Event::Error(e)) => anyhow::bail!("run failed: {e:?}"),
            _ => {}
        }
    }
    anyhow::ensure!(finished, "the run ended without a final event");
    Ok(())
}

/// The config of one agent on the fake model at `base_url`.
pub fn config_text(base_url: &str) -> String {
    format!(
        r#"{{
  agents: {{ defaults: {{ model: "fake/test-model", userTimezone: "Europe/Berlin" }} }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "{}", apiKey: "bench-key", models: [{{ id: "test-model" }}] }} }} }},
}}"#,
        WireFormat::ChatCompletions.api()
    )
}

/// A `/proc/<pid>/status` field in KiB (Linux only; None elsewhere).
pub fn memory_kib(pid: Option<u32>, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The child's open descriptors: all of them, and those on session files under `dir` (each
/// agent's index and its update log, which stay open for the version check, not counted).
pub fn descriptors(pid: Option<u32>, dir: &std::path::Path) -> Option<(usize, usize)> {
    let entries = std::fs::read_dir(format!("/proc/{}/fd", pid?)).ok()?;
    let (mut all, mut under) = (0, 0);
    for entry in entries.flatten() {
        all += 1;
        if std::fs::read_link(entry.path()).is_ok_and(|t| {
            t.starts_with(dir)
                && !t
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("sessions.json"))
        }) {
            under += 1;
        }
    }
    Some((all, under))
}

pub fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A loopback address with a port free at the moment of asking.
pub fn free_address() -> anyhow::Result<String> {
    let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(probe.local_addr()?.to_string())
}

/// Context switches of a process's live threads so far (voluntary and not, from
/// /proc/<pid>/task/*/status): each is a thread going to sleep or being put off the CPU, the
/// hand-offs a turn pays for. Threads that already exited are not counted.
pub fn context_switches(pid: Option<u32>) -> u64 {
    let Some(tasks) = pid.and_then(|pid| std::fs::read_dir(format!("/proc/{pid}/task")).ok())
    else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// User plus system CPU time of a process so far, in milliseconds (from /proc).
pub fn cpu_ms(pid: Option<u32>) -> f64 {
    let Some(stat) = pid.and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
    else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) closed by ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name;
    // clock ticks of 10 ms (USER_HZ is 100 on Linux).
    (ticks(11) + ticks(12)) * 10.0
}

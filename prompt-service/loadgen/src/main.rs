//! `prompt-loadgen`: drives RenderSystemPrompt over loopback at several
//! concurrencies and, in the same run, a trivial echo RPC whose request and
//! response have the same sizes, so the ratio shows the service's own cost.
//!
//! By default it starts `prompt-service --bench-echo` (the binary next to
//! itself) on a free loopback port; `--addr` targets a running server instead.
//!
//! The generator shares the machine with the server, so its own work is part
//! of every latency it measures. By default it does the same work for both
//! RPCs: each request is encoded once up front and sent as raw bytes, and
//! each response is taken as raw bytes and checked only for its length (the
//! first response of each kind is decoded and checked whole). `--typed`
//! instead uses the generated clients as an application would, cloning and
//! encoding the structured request and decoding the structured response on
//! every call, which adds the client's cost of the larger message to the
//! render side only.
//!
//! The render requests are a session's turns (`--turns`, default 8): the
//! same stable inputs with different turn fields, cycled. The server renders
//! every turn and encodes every reply; as in production, it recognises the
//! stable part of a request it has seen before by its bytes and decodes only
//! the turn fields.

use std::{
    io::Write,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use clap::Parser;
use openclaw_proto::{
    bench::v1::{EchoRequest, echo_client::EchoClient},
    prompt::v1::prompt_service_client::PromptServiceClient,
};
use prost::{
    Message,
    bytes::{Buf, BufMut, Bytes},
};
use tonic::{
    Status,
    codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder},
    codegen::http::uri::PathAndQuery,
    transport::Channel,
};

/// Measure RenderSystemPrompt against a same-size echo baseline.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Target an already running server (started with --bench-echo) instead of spawning one.
    #[arg(long)]
    addr: Option<String>,
    /// Path of the prompt-service binary to spawn (default: next to this binary).
    #[arg(long)]
    server_bin: Option<std::path::PathBuf>,
    /// Concurrency levels to run.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// Seconds of measurement per (RPC, concurrency) pair.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Seconds of warm-up per pair (not measured).
    #[arg(long, default_value_t = 1)]
    warmup: u64,
    /// Use the generated typed clients (clone, encode and decode structured
    /// messages on every call) instead of pre-encoded raw bytes.
    #[arg(long)]
    typed: bool,
    /// Distinct render requests cycled through: one session's turns, sharing
    /// the stable inputs and differing in the turn fields (channel, runtime
    /// host, extra context). 1 sends the same request every time.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1000))]
    turns: u32,
}

const RENDER_PATH: &str = "/openclaw.prompt.v1.PromptService/RenderSystemPrompt";
const ECHO_PATH: &str = "/openclaw.bench.v1.Echo/Echo";

/// Sends pre-encoded request bytes and returns the response bytes undecoded.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// One raw unary call; the response length is returned.
async fn raw_call(
    grpc: &mut tonic::client::Grpc<Channel>,
    path: &'static str,
    body: Bytes,
) -> Result<usize, Status> {
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let response = grpc
        .unary(
            tonic::Request::new(body),
            PathAndQuery::from_static(path),
            RawCodec,
        )
        .await?;
    Ok(response.into_inner().len())
}

struct Spawned(Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Debug, Clone, Copy)]
enum Rpc {
    Render,
    Echo,
}

struct Figures {
    rps: f64,
    p50_us: u64,
    p99_us: u64,
    errors: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (endpoint, _server) = match &args.addr {
        Some(addr) => (format!("http://{addr}"), None),
        None => {
            let (endpoint, child) = spawn_server(args.server_bin.clone())?;
            (endpoint, Some(child))
        }
    };
    wait_healthy(&endpoint).await?;
    let channel = Channel::from_shared(endpoint.clone())?
        .tcp_nodelay(true)
        .connect()
        .await?;

    let requests = turn_requests(args.turns);
    let mut renders = Vec::with_capacity(requests.len());
    for request in &requests {
        let response = PromptServiceClient::new(channel.clone())
            .render_system_prompt(request.clone())
            .await?
            .into_inner();
        renders.push((Bytes::from(request.encode_to_vec()), response.encoded_len()));
    }
    let (request, response) = (
        requests[0].clone(),
        PromptServiceClient::new(channel.clone())
            .render_system_prompt(requests[0].clone())
            .await?
            .into_inner(),
    );
    let echo = EchoRequest {
        payload: vec![b'x'; request.encoded_len()],
        response_bytes: u32::try_from(response.encoded_len())?,
    };
    // The raw calls must get exactly what the typed ones get.
    let raw = Raw {
        renders,
        echo: Bytes::from(echo.encode_to_vec()),
        echo_len: EchoClient::new(channel.clone())
            .echo(echo.clone())
            .await?
            .into_inner()
            .encoded_len(),
    };
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    for (body, want) in &raw.renders {
        let got = raw_call(&mut grpc, RENDER_PATH, body.clone()).await?;
        if got != *want {
            bail!("raw render response is {got} bytes, the typed one {want}");
        }
    }
    let got = raw_call(&mut grpc, ECHO_PATH, raw.echo.clone()).await?;
    if got != raw.echo_len {
        bail!(
            "raw echo response is {got} bytes, the typed one {}",
            raw.echo_len
        );
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "prompt-service load test against {endpoint}")?;
    writeln!(
        out,
        "render request {} B, response {} B ({} prompt chars), {} turn(s) cycled; echo sized the same; {} s per point after {} s warm-up; {} client",
        request.encoded_len(),
        response.encoded_len(),
        response.chars,
        requests.len(),
        args.seconds,
        args.warmup,
        if args.typed { "typed" } else { "raw-bytes" }
    )?;
    writeln!(
        out,
        "{:>4} | {:>10} {:>9} {:>9} | {:>10} {:>9} {:>9} | {:>9}",
        "conc", "render/s", "p50 µs", "p99 µs", "echo/s", "p50 µs", "p99 µs", "p50 ratio"
    )?;
    for &conc in &args.concurrency {
        let load = Load {
            channel: &channel,
            requests: &requests,
            echo: &echo,
            raw: (!args.typed).then_some(&raw),
            conc,
            warmup: args.warmup,
            seconds: args.seconds,
        };
        let render = run(Rpc::Render, &load).await;
        let baseline = run(Rpc::Echo, &load).await;
        let ratio = render.p50_us as f64 / baseline.p50_us.max(1) as f64;
        writeln!(
            out,
            "{conc:>4} | {:>10.0} {:>9} {:>9} | {:>10.0} {:>9} {:>9} | {ratio:>9.2}",
            render.rps,
            render.p50_us,
            render.p99_us,
            baseline.rps,
            baseline.p50_us,
            baseline.p99_us
        )?;
        if render.errors + baseline.errors > 0 {
            writeln!(
                out,
                "     errors: render {}, echo {}",
                render.errors, baseline.errors
            )?;
        }
    }
    Ok(())
}

fn spawn_server(bin: Option<std::path::PathBuf>) -> anyhow::Result<(String, Spawned)> {
    let bin = match bin {
        Some(bin) => bin,
        None => std::env::current_exe()?.with_file_name("prompt-service"),
    };
    if !bin.exists() {
        bail!(
            "{} not found; build it (cargo build --release -p prompt-server) or pass --server-bin/--addr",
            bin.display()
        );
    }
    // Reserve a free port, release it, hand it to the server.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(&bin)
        .args(["--listen", &addr, "--bench-echo"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("spawning {}", bin.display()))?;
    Ok((format!("http://{addr}"), Spawned(child)))
}

async fn wait_healthy(endpoint: &str) -> anyhow::Result<()> {
    let start = Instant::now();
    loop {
        if service_kit::probe(endpoint, "", Duration::from_secs(1)).await == Ok(true) {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(20) {
            bail!("server at {endpoint} did not become healthy within 20 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The render requests of one session's turns: the realistic fixture with
/// the turn fields varied.
fn turn_requests(turns: u32) -> Vec<openclaw_proto::prompt::v1::RenderSystemPromptRequest> {
    const CHANNELS: [&str; 4] = ["telegram", "discord", "slack", "webchat"];
    let base = prompt_render::fixtures::realistic();
    (0..turns as usize)
        .map(|i| {
            let mut input = base.clone();
            if i > 0 {
                input.channel.name = CHANNELS[i % CHANNELS.len()].into();
                input.runtime.host = format!("host-{}", i % 3);
                input.extra_system_prompt = format!("This is turn {i} of the load test.");
            }
            prompt_server::request_from_input(&input)
        })
        .collect()
}

/// Pre-encoded requests and the response sizes they must get.
#[derive(Debug, Clone)]
struct Raw {
    /// Per turn: request bytes, response length.
    renders: Vec<(Bytes, usize)>,
    echo: Bytes,
    echo_len: usize,
}

/// One measurement point.
struct Load<'a> {
    channel: &'a Channel,
    requests: &'a [openclaw_proto::prompt::v1::RenderSystemPromptRequest],
    echo: &'a EchoRequest,
    /// Raw-bytes mode; `None` for typed clients.
    raw: Option<&'a Raw>,
    conc: usize,
    warmup: u64,
    seconds: u64,
}

async fn run(rpc: Rpc, load: &Load<'_>) -> Figures {
    let seconds = load.seconds;
    let warm_until = Instant::now() + Duration::from_secs(load.warmup);
    let stop_at = warm_until + Duration::from_secs(seconds);
    let mut tasks = Vec::with_capacity(load.conc);
    for task in 0..load.conc {
        let mut render = PromptServiceClient::new(load.channel.clone());
        let mut echoer = EchoClient::new(load.channel.clone());
        let mut grpc = tonic::client::Grpc::new(load.channel.clone());
        let (requests, echo, raw) = (load.requests.to_vec(), load.echo.clone(), load.raw.cloned());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0usize;
            // Each task walks the turns from its own starting point.
            let mut turn = task;
            loop {
                let now = Instant::now();
                if now >= stop_at {
                    break;
                }
                turn = (turn + 1) % requests.len();
                let ok = match (rpc, &raw) {
                    (Rpc::Render, Some(raw)) => {
                        let (body, want) = &raw.renders[turn];
                        raw_call(&mut grpc, RENDER_PATH, body.clone())
                            .await
                            .is_ok_and(|len| len == *want)
                    }
                    (Rpc::Echo, Some(raw)) => raw_call(&mut grpc, ECHO_PATH, raw.echo.clone())
                        .await
                        .is_ok_and(|len| len == raw.echo_len),
                    (Rpc::Render, None) => render
                        .render_system_prompt(requests[turn].clone())
                        .await
                        .is_ok(),
                    (Rpc::Echo, None) => echoer.echo(echo.clone()).await.is_ok(),
                };
                let done = Instant::now();
                if now >= warm_until {
                    if ok {
                        latencies.push(
                            u64::try_from(done.duration_since(now).as_micros()).unwrap_or(u64::MAX),
                        );
                    } else {
                        errors += 1;
                    }
                }
            }
            (latencies, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        if let Ok((mut l, e)) = task.await {
            all.append(&mut l);
            errors += e;
        }
    }
    all.sort_unstable();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    Figures {
        rps: all.len() as f64 / seconds as f64,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        errors,
    }
}

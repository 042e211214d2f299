//! `prompt-service`: serve the PromptService, preview a render, or probe health.

use std::{io::Write, process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};
use prompt_server::{PreviewFormat, ServeConfig};
use service_kit::{OverloadConfig, SecurityArgs, ServerSecurity};

/// Prefix of the environment variables, as security messages name them.
const ENV_PREFIX: &str = "PROMPT_SERVICE";

/// Stateless gRPC service that renders OpenClaw agent system prompts.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    /// Address to listen on (HOST:PORT).
    #[arg(
        long,
        env = "PROMPT_SERVICE_LISTEN",
        default_value = "127.0.0.1:50051",
        global = true
    )]
    listen: String,
    /// Largest request message accepted, in bytes (bigger: RESOURCE_EXHAUSTED).
    #[arg(long, env = "PROMPT_SERVICE_MAX_REQUEST_BYTES", default_value_t = 4 * 1024 * 1024)]
    max_request_bytes: usize,
    /// Seconds in-flight requests may run after SIGTERM/SIGINT.
    #[arg(long, env = "PROMPT_SERVICE_DRAIN_SECS", default_value_t = 10)]
    drain_secs: u64,
    /// Log format on stderr: text or json (filter with RUST_LOG).
    #[arg(long, env = "PROMPT_SERVICE_LOG_FORMAT", default_value = "text")]
    log_format: service_kit::LogFormat,
    /// Serve Prometheus metrics over HTTP on HOST:PORT (unset: no metrics endpoint).
    #[arg(long, env = "PROMPT_SERVICE_METRICS_LISTEN")]
    metrics_listen: Option<String>,
    /// Also serve the bench echo baseline (used by prompt-loadgen only).
    #[arg(long, hide = true)]
    bench_echo: bool,

    #[command(flatten)]
    security: SecurityArgs,

    /// Unary calls in progress at once; past it a call gets RESOURCE_EXHAUSTED at once
    /// instead of queueing (health checks are exempt).
    #[arg(
        long,
        env = "PROMPT_SERVICE_MAX_CONCURRENT_REQUESTS",
        default_value_t = 256,
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Overload"
    )]
    max_concurrent_requests: u32,
    /// Streaming calls open at once (here only reflection); past it RESOURCE_EXHAUSTED.
    #[arg(
        long,
        env = "PROMPT_SERVICE_MAX_CONCURRENT_STREAMS",
        default_value_t = 256,
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Overload"
    )]
    max_concurrent_streams: u32,
    /// Longest a call may run, in seconds, whatever its own grpc-timeout (which is honoured
    /// when shorter); then DEADLINE_EXCEEDED.
    #[arg(
        long,
        env = "PROMPT_SERVICE_REQUEST_TIMEOUT_SECS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..),
        help_heading = "Overload"
    )]
    request_timeout_secs: u64,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the gRPC API (the default).
    Serve,
    /// Render a RenderSystemPromptRequest written as JSON5 and print exactly what the RPC returns.
    Render {
        /// Path of the JSON5 request file ("-" for stdin).
        request: String,
        /// What to print.
        #[arg(long, value_enum, default_value = "text")]
        format: PreviewFormat,
    },
    /// Exit 0 when the server at --listen reports SERVING (container health checks).
    Healthcheck,
}

/// Prints each problem and returns the usage exit code (EX_USAGE).
fn refuse(problems: &[String]) -> ExitCode {
    for problem in problems {
        eprintln!("error: {problem}");
    }
    ExitCode::from(64)
}

/// mimalloc instead of the system allocator: a render request makes a few
/// hundred small allocations on whichever worker thread runs it, and glibc's
/// malloc spent a measurable share of the server's time consolidating and
/// clearing pages under load (see README "Performance").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli: Cli = SecurityArgs::parse_cli(ENV_PREFIX);
    service_kit::init_tracing(cli.log_format);
    match cli.command.as_ref().unwrap_or(&Command::Serve) {
        Command::Serve => {
            let addr = service_kit::parse_listen(&cli.listen).map_err(anyhow::Error::msg)?;
            // Checked before binding: a server that would serve other hosts
            // unauthenticated never opens its port.
            let security = match ServerSecurity::resolve(&cli.security.flags(), ENV_PREFIX) {
                Ok(security) => security,
                Err(problems) => return Ok(refuse(&problems)),
            };
            if let Err(problem) = security.check_listen(addr, ENV_PREFIX) {
                return Ok(refuse(&[problem]));
            }
            let listener = tokio::net::TcpListener::bind(addr).await?;
            if let Some(metrics) = &cli.metrics_listen {
                service_kit::metrics::listen(metrics).await?;
            }
            let config = ServeConfig {
                max_request_bytes: cli.max_request_bytes,
                drain_timeout: Duration::from_secs(cli.drain_secs),
                bench_echo: cli.bench_echo,
                request_timeout: Duration::from_secs(cli.request_timeout_secs),
                security,
                overload: OverloadConfig {
                    max_concurrent_requests: cli.max_concurrent_requests as usize,
                    max_concurrent_streams: cli.max_concurrent_streams as usize,
                },
            };
            prompt_server::serve(listener, config, service_kit::shutdown_signal()).await?;
            service_kit::flush_traces();
        }
        Command::Render { request, format } => {
            let text = if request == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(request)?
            };
            match prompt_server::preview(&text, *format) {
                Ok(out) => writeln!(std::io::stdout().lock(), "{out}")?,
                Err(error) => {
                    eprintln!("error: {error}");
                    return Ok(ExitCode::from(65));
                }
            }
        }
        Command::Healthcheck => {
            // Health is open: no token is sent. Over TLS when this server
            // serves TLS (the same --tls-cert setting), verified with --tls-ca.
            let target = service_kit::parse_listen(&cli.listen)
                .and_then(|addr| cli.security.flags().probe_target(addr, ENV_PREFIX));
            let (endpoint, tls) = match target {
                Ok(target) => target,
                Err(problem) => return Ok(refuse(&[problem])),
            };
            let serving =
                service_kit::probe_with(&endpoint, "", Duration::from_secs(3), tls.as_ref())
                    .await
                    .unwrap_or_else(|e| {
                        eprintln!("{e}");
                        false
                    });
            return Ok(if serving {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

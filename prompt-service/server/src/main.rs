//! `prompt-service`: serve the PromptService, preview a render, or probe health.

use std::{io::Write, process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};
use prompt_server::{PreviewFormat, ServeConfig};

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

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    service_kit::init_tracing(cli.log_format);
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let addr = service_kit::parse_listen(&cli.listen).map_err(anyhow::Error::msg)?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            if let Some(metrics) = &cli.metrics_listen {
                service_kit::metrics::listen(metrics).await?;
            }
            let config = ServeConfig {
                max_request_bytes: cli.max_request_bytes,
                drain_timeout: Duration::from_secs(cli.drain_secs),
                bench_echo: cli.bench_echo,
                ..ServeConfig::default()
            };
            prompt_server::serve(listener, config, service_kit::shutdown_signal()).await?;
        }
        Command::Render { request, format } => {
            let text = if request == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&request)?
            };
            match prompt_server::preview(&text, format) {
                Ok(out) => writeln!(std::io::stdout().lock(), "{out}")?,
                Err(error) => {
                    eprintln!("error: {error}");
                    return Ok(ExitCode::from(65));
                }
            }
        }
        Command::Healthcheck => {
            let endpoint = format!("http://{}", cli.listen.trim());
            let serving = service_kit::probe(&endpoint, "", Duration::from_secs(3))
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

//! `agent-service`: serve the AgentService, or probe a running one's health.

use std::{path::PathBuf, process::ExitCode, sync::Arc, time::Duration};

use agent_runtime::{Flags, ProcessEnv, Runtime, RuntimeOptions, Settings};
use clap::{Parser, Subcommand};

/// Stateful gRPC service that owns OpenClaw agents, workspaces and sessions.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    /// Address to listen on (HOST:PORT).
    #[arg(
        long,
        env = "AGENT_SERVICE_LISTEN",
        default_value = "127.0.0.1:50052",
        global = true
    )]
    listen: String,
    /// State directory (sessions, workspaces); default $OPENCLAW_STATE_DIR or ~/.openclaw.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Config file; default $OPENCLAW_CONFIG_PATH or <state dir>/openclaw.json.
    #[arg(long)]
    config: Option<PathBuf>,
    /// prompt-service address (for example http://127.0.0.1:50051). Unset: render
    /// prompts in this process (the single-binary embedded mode).
    #[arg(long, env = "PROMPT_SERVICE_URL")]
    prompt_service: Option<String>,
    /// Largest request message accepted, in bytes (bigger: RESOURCE_EXHAUSTED).
    #[arg(long, env = "AGENT_SERVICE_MAX_REQUEST_BYTES", default_value_t = 4 * 1024 * 1024)]
    max_request_bytes: usize,
    /// Seconds in-flight calls may run after SIGTERM/SIGINT before sessions are flushed.
    #[arg(long, env = "AGENT_SERVICE_DRAIN_SECS", default_value_t = 10)]
    drain_secs: u64,
    /// Log format on stderr: text or json (filter with RUST_LOG).
    #[arg(long, env = "AGENT_SERVICE_LOG_FORMAT", default_value = "text")]
    log_format: service_kit::LogFormat,
    /// Serve Prometheus metrics over HTTP on HOST:PORT (unset: no metrics endpoint).
    #[arg(long, env = "AGENT_SERVICE_METRICS_LISTEN")]
    metrics_listen: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the gRPC API (the default).
    Serve,
    /// Exit 0 when the server at --listen reports SERVING (container health checks).
    Healthcheck,
}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    service_kit::init_tracing(cli.log_format);
    if let Some(Command::Healthcheck) = cli.command {
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
    let flags = Flags {
        state_dir: cli.state_dir,
        config: cli.config,
    };
    let settings = match Settings::resolve(&flags, &ProcessEnv) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(64));
        }
    };
    let prompt: Arc<dyn prompt_client::PromptSource> = match &cli.prompt_service {
        Some(url) => Arc::new(prompt_client::GrpcPromptSource::connect_lazy(
            url,
            prompt_client::RetryPolicy::default(),
        )?),
        None => Arc::new(prompt_client::InProcessPromptSource::new()?),
    };
    tracing::info!(prompt = %prompt.describe(), "prompt source");
    let runtime = Runtime::start(RuntimeOptions {
        settings,
        env: Arc::new(ProcessEnv),
        clock: Arc::new(openclaw_transcript::SystemClock),
        prompt,
    })?;
    let addr = service_kit::parse_listen(&cli.listen).map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    if let Some(metrics) = &cli.metrics_listen {
        service_kit::metrics::listen(metrics).await?;
    }
    let config = agent_server::ServeConfig {
        max_request_bytes: cli.max_request_bytes,
        drain_timeout: Duration::from_secs(cli.drain_secs),
    };
    agent_server::serve(listener, config, runtime, service_kit::shutdown_signal()).await?;
    Ok(ExitCode::SUCCESS)
}

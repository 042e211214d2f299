//! `agent-service`: serve the AgentService, or probe a running one's health.

use std::{path::PathBuf, process::ExitCode, sync::Arc, time::Duration};

use agent_runtime::{Flags, ProcessEnv, Runtime, RuntimeOptions, Settings};
use clap::{Parser, Subcommand};
use service_kit::{ClientFlags, ClientSecurity, OverloadConfig, SecurityArgs, ServerSecurity};

/// Prefix of the environment variables, as security messages name them.
const ENV_PREFIX: &str = "AGENT_SERVICE";

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
    /// Serve the web inspector (sessions, transcripts, prompt layers, cache breaks; read-only)
    /// over HTTP on HOST:PORT (unset: none). A non-loopback address needs bearer tokens
    /// (--tokens / --tokens-file), which the inspector then asks for too.
    #[arg(long, env = "AGENT_SERVICE_INSPECTOR_LISTEN", value_name = "HOST:PORT")]
    inspector_listen: Option<String>,
    /// The bubblewrap program sandboxed sessions run their commands in (a name is looked up
    /// on PATH). Checked at start-up; if it cannot isolate here, sandboxed runs are refused.
    #[arg(long, env = "AGENT_SERVICE_SANDBOX_BWRAP", default_value = agent_runtime::DEFAULT_SANDBOX_PROGRAM, value_name = "PROGRAM")]
    sandbox_bwrap: std::ffi::OsString,

    #[command(flatten)]
    security: SecurityArgs,

    /// File whose first token is sent to prompt-service as `authorization: Bearer <token>`
    /// (prompt-service's own --tokens-file will do: keep the newest token first).
    #[arg(
        long,
        env = "PROMPT_SERVICE_TOKEN_FILE",
        value_name = "PATH",
        help_heading = "Calling prompt-service"
    )]
    prompt_service_token_file: Option<PathBuf>,
    /// Bearer token sent to prompt-service (prefer --prompt-service-token-file).
    #[arg(
        long,
        env = "PROMPT_SERVICE_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN",
        help_heading = "Calling prompt-service"
    )]
    prompt_service_token: Option<String>,
    /// CA (PEM) that signed prompt-service's certificate; needed for an https:// --prompt-service.
    #[arg(
        long,
        env = "PROMPT_SERVICE_CA",
        value_name = "PEM",
        help_heading = "Calling prompt-service"
    )]
    prompt_service_ca: Option<PathBuf>,
    /// Client certificate (PEM) presented to prompt-service when it requires one (mTLS).
    #[arg(
        long,
        env = "PROMPT_SERVICE_CLIENT_CERT",
        value_name = "PEM",
        help_heading = "Calling prompt-service"
    )]
    prompt_service_client_cert: Option<PathBuf>,
    /// Private key (PEM) of --prompt-service-client-cert.
    #[arg(
        long,
        env = "PROMPT_SERVICE_CLIENT_KEY",
        value_name = "PEM",
        help_heading = "Calling prompt-service"
    )]
    prompt_service_client_key: Option<PathBuf>,
    /// Name expected in prompt-service's certificate (default: the host of --prompt-service).
    #[arg(
        long,
        env = "PROMPT_SERVICE_SERVER_NAME",
        value_name = "NAME",
        help_heading = "Calling prompt-service"
    )]
    prompt_service_server_name: Option<String>,
    /// How long a prompt-service call keeps retrying a service that cannot be reached
    /// (refused connections, shed load) before the call fails UNAVAILABLE, in milliseconds,
    /// whatever the call's own deadline.
    #[arg(
        long,
        env = "PROMPT_SERVICE_RETRY_BUDGET_MS",
        value_name = "MS",
        default_value_t = 2000,
        value_parser = clap::value_parser!(u64).range(1..),
        help_heading = "Calling prompt-service"
    )]
    prompt_service_retry_budget_ms: u64,

    /// Unary calls in progress at once; past it a call gets RESOURCE_EXHAUSTED at once
    /// instead of queueing (health checks are exempt).
    #[arg(
        long,
        env = "AGENT_SERVICE_MAX_CONCURRENT_REQUESTS",
        default_value_t = 256,
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Overload"
    )]
    max_concurrent_requests: u32,
    /// Streaming calls open at once (Run, WatchSession, GetTranscript, reflection), a pool
    /// apart so long streams never starve unary calls; past it RESOURCE_EXHAUSTED at once.
    #[arg(
        long,
        env = "AGENT_SERVICE_MAX_CONCURRENT_STREAMS",
        default_value_t = 256,
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Overload"
    )]
    max_concurrent_streams: u32,
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

impl Cli {
    fn prompt_client_flags(&self) -> ClientFlags {
        ClientFlags {
            token: self.prompt_service_token.clone(),
            token_file: self.prompt_service_token_file.clone(),
            ca: self.prompt_service_ca.clone(),
            cert: self.prompt_service_client_cert.clone(),
            key: self.prompt_service_client_key.clone(),
            server_name: self.prompt_service_server_name.clone(),
        }
    }

    /// How to call prompt-service; an error when its credentials are set
    /// but prompts render in this process.
    fn prompt_security(&self) -> Result<Option<ClientSecurity>, Vec<String>> {
        let flags = self.prompt_client_flags();
        match &self.prompt_service {
            Some(url) => {
                ClientSecurity::resolve(&flags, url, "prompt-service", "PROMPT_SERVICE").map(Some)
            }
            None => {
                let set = flags.token.is_some()
                    || flags.token_file.is_some()
                    || flags.ca.is_some()
                    || flags.cert.is_some()
                    || flags.key.is_some();
                if set {
                    Err(vec![
                        "prompt-service credentials (--prompt-service-token*, --prompt-service-ca, \
                         --prompt-service-client-*) are set but --prompt-service \
                         (PROMPT_SERVICE_URL) is not: prompts would render in this process"
                            .to_owned(),
                    ])
                } else {
                    Ok(None)
                }
            }
        }
    }
}

/// Prints each problem and returns the usage exit code (EX_USAGE).
fn refuse(problems: &[String]) -> ExitCode {
    for problem in problems {
        eprintln!("error: {problem}");
    }
    ExitCode::from(64)
}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli: Cli = SecurityArgs::parse_cli(ENV_PREFIX);
    // Log lines pass through the runtime's redactor: a secret quoted in any message (a
    // provider's error body, a config value) is replaced before it is written.
    let redactor = openclaw_secrets::Redactor::new();
    service_kit::init_tracing_to(
        cli.log_format,
        openclaw_secrets::RedactingWriter::new(redactor.clone(), std::io::stderr),
    );
    if let Some(Command::Healthcheck) = cli.command {
        // Health is open: no token is sent. Over TLS when this server serves
        // TLS (the same --tls-cert setting), verified with --tls-ca.
        let target = service_kit::parse_listen(&cli.listen)
            .and_then(|addr| cli.security.flags().probe_target(addr, ENV_PREFIX));
        let (endpoint, tls) = match target {
            Ok(target) => target,
            Err(problem) => return Ok(refuse(&[problem])),
        };
        let serving = service_kit::probe_with(&endpoint, "", Duration::from_secs(3), tls.as_ref())
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
    // Checked before anything starts: a server that would serve other hosts
    // unauthenticated never opens its port.
    let addr = service_kit::parse_listen(&cli.listen).map_err(anyhow::Error::msg)?;
    let security = match ServerSecurity::resolve(&cli.security.flags(), ENV_PREFIX) {
        Ok(security) => security,
        Err(problems) => return Ok(refuse(&problems)),
    };
    if let Err(problem) = security.check_listen(addr, ENV_PREFIX) {
        return Ok(refuse(&[problem]));
    }
    let inspector_addr = match cli
        .inspector_listen
        .as_deref()
        .map(service_kit::parse_listen)
    {
        None => None,
        Some(Ok(addr)) => {
            if let Err(problem) = agent_inspector::check_listen(addr, security.tokens.as_ref()) {
                return Ok(refuse(&[problem]));
            }
            Some(addr)
        }
        Some(Err(problem)) => return Ok(refuse(&[format!("--inspector-listen: {problem}")])),
    };
    let prompt_security = match cli.prompt_security() {
        Ok(security) => security,
        Err(problems) => return Ok(refuse(&problems)),
    };
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
    let retry = prompt_client::RetryPolicy {
        give_up_after: Duration::from_millis(cli.prompt_service_retry_budget_ms),
        ..prompt_client::RetryPolicy::default()
    };
    let (prompt, prompt_reachability): (Arc<dyn prompt_client::PromptSource>, _) =
        match (&cli.prompt_service, prompt_security) {
            (Some(url), Some(security)) => {
                let grpc =
                    prompt_client::GrpcPromptSource::connect_lazy_with(url, retry, &security)?;
                let reachability = grpc.reachability();
                (Arc::new(grpc), Some(reachability))
            }
            _ => (Arc::new(prompt_client::InProcessPromptSource::new()?), None),
        };
    tracing::info!(prompt = %prompt.describe(), "prompt source");
    // The inspector shows each model call's prompt: it sees the renders on their way to the
    // runtime (unchanged).
    let renders = Arc::new(agent_inspector::RenderLog::default());
    let prompt: Arc<dyn prompt_client::PromptSource> = if inspector_addr.is_some() {
        Arc::new(agent_inspector::RecordingPromptSource::new(
            prompt,
            Arc::clone(&renders),
        ))
    } else {
        prompt
    };
    if let Some(token) = &cli.prompt_service_token {
        redactor.replace_source(
            "auth",
            [openclaw_secrets::Secret::new(
                "PROMPT_SERVICE_TOKEN",
                token.clone(),
            )],
        );
    }
    let runtime = Runtime::start(RuntimeOptions {
        sandbox_program: cli.sandbox_bwrap.clone(),
        redactor,
        ..RuntimeOptions::new(
            settings,
            Arc::new(ProcessEnv),
            Arc::new(openclaw_transcript::SystemClock),
            prompt,
        )
    })?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    if let Some(metrics) = &cli.metrics_listen {
        service_kit::metrics::listen(metrics).await?;
    }
    let inspector = match inspector_addr {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let inspector = agent_inspector::Inspector::new(
                Arc::clone(&runtime),
                renders,
                security.tokens.clone(),
            );
            Some(tokio::spawn(async move {
                let served =
                    agent_inspector::serve(listener, inspector, std::future::pending()).await;
                if let Err(error) = served {
                    tracing::error!(%error, "inspector stopped");
                }
            }))
        }
        None => None,
    };
    let config = agent_server::ServeConfig {
        max_request_bytes: cli.max_request_bytes,
        drain_timeout: Duration::from_secs(cli.drain_secs),
        security,
        overload: OverloadConfig {
            max_concurrent_requests: cli.max_concurrent_requests as usize,
            max_concurrent_streams: cli.max_concurrent_streams as usize,
        },
        prompt_reachability,
    };
    agent_server::serve(listener, config, runtime, service_kit::shutdown_signal()).await?;
    if let Some(inspector) = inspector {
        inspector.abort();
    }
    service_kit::flush_traces();
    Ok(ExitCode::SUCCESS)
}

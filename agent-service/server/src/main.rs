//! `agent-service`: serve the AgentService, or probe a running one's health.

use std::{path::PathBuf, process::ExitCode, sync::Arc, time::Duration};

use agent_runtime::{Flags, ProcessEnv, Runtime, RuntimeOptions, Settings};
use clap::{Parser, Subcommand};
use service_kit::{BearerToken, ClientFlags, ClientSecurity, ServerArgs, refuse};

/// Prefix of the environment variables.
const ENV_PREFIX: &str = "AGENT_SERVICE";

/// Runs OpenClaw agents over gRPC: their workspaces, sessions and turns,
/// with prompts from prompt-service (or rendered in this process).
#[derive(Debug, Parser)]
#[command(name = "agent-service", version, long_about = None)]
struct Cli {
    /// Address to listen on (HOST:PORT).
    #[arg(long, env = "AGENT_SERVICE_LISTEN", default_value = "127.0.0.1:50052")]
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
    /// Serve the web inspector (sessions, transcripts, prompt layers, cache breaks; read-only)
    /// over HTTP on HOST:PORT (unset: none). A non-loopback address needs bearer tokens
    /// (--tokens / --tokens-file), which the inspector then asks for too.
    #[arg(long, env = "AGENT_SERVICE_INSPECTOR_LISTEN", value_name = "HOST:PORT")]
    inspector_listen: Option<String>,
    /// The bubblewrap program sandboxed sessions run their commands in (a name is looked up
    /// on PATH). Checked at start-up; if it cannot isolate here, sandboxed runs are refused.
    #[arg(long, env = "AGENT_SERVICE_SANDBOX_BWRAP", default_value = agent_runtime::DEFAULT_SANDBOX_PROGRAM, value_name = "PROGRAM")]
    sandbox_bwrap: std::ffi::OsString,
    /// Seconds a session stays idle (no run, no watcher, no background command) before its
    /// transcript file, buffers and memory are released; the next call on it opens it again
    /// and reads its transcript. 0 keeps every session open until shutdown.
    #[arg(
        long,
        env = "AGENT_SERVICE_IDLE_RELEASE_SECS",
        value_name = "SECS",
        default_value_t = agent_runtime::DEFAULT_IDLE_RELEASE.as_secs()
    )]
    idle_release_secs: u64,

    /// The router in front of every replica (for example http://openclaw-router:50052). Set
    /// it when several replicas share the agents: an agent's cron jobs then live on the
    /// replica that owns its main session, and the `cron` tool of a session on any replica
    /// manages them through the router. Unset: one replica, jobs kept here.
    #[arg(long, env = "AGENT_SERVICE_ROUTER_URL", value_name = "URL")]
    router_url: Option<String>,
    /// File whose first token the calls through --router-url carry (default: the first of
    /// this service's own accepted tokens, from --tokens-file or --tokens, which every replica
    /// accepts).
    #[arg(long, env = "AGENT_SERVICE_ROUTER_TOKEN_FILE", value_name = "PATH")]
    router_token_file: Option<PathBuf>,

    /// This replica's place among those behind the router, <ordinal>/<count> (the ordinal may
    /// be the StatefulSet pod name: agent-service-1/2). Calls about sessions another replica
    /// owns are refused. Unset: one replica, which owns every session.
    #[arg(long, env = "AGENT_SERVICE_REPLICA", value_name = "ORDINAL/COUNT")]
    replica: Option<agent_server::Replica>,

    #[command(flatten)]
    server: ServerArgs,

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

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the gRPC API (the default).
    Serve,
    /// Exit 0 when the server at --listen reports SERVING (container health checks). TLS
    /// settings are the top-level flags (or their variables), as for serving.
    Healthcheck {
        /// Address of the server to probe (default: the top-level --listen).
        #[arg(long)]
        listen: Option<String>,
    },
}

impl Cli {
    /// The router cron tool calls go through, with the token they carry.
    fn cron_router(&self) -> Result<Option<agent_server::CronRouter>, Vec<String>> {
        let Some(url) = &self.router_url else {
            if self.router_token_file.is_some() {
                return Err(vec![
                    "--router-token-file (AGENT_SERVICE_ROUTER_TOKEN_FILE) is set but \
                     --router-url (AGENT_SERVICE_ROUTER_URL) is not"
                        .to_owned(),
                ]);
            }
            return Ok(None);
        };
        let security = &self.server.security;
        let token = match (
            &self.router_token_file,
            &security.tokens_file,
            &security.tokens,
        ) {
            (Some(path), _, _) => Some(BearerToken::from_file(path).map_err(|e| {
                vec![format!(
                    "--router-token-file (AGENT_SERVICE_ROUTER_TOKEN_FILE): {e}"
                )]
            })?),
            (None, Some(path), _) => Some(
                BearerToken::from_file(path)
                    .map_err(|e| vec![format!("--tokens-file, for --router-url: {e}")])?,
            ),
            (None, None, Some(tokens)) => service_kit::auth::parse_token_list(tokens)
                .and_then(|tokens| tokens.first().map(|t| BearerToken::new(t)).transpose())
                .map_err(|e| vec![format!("--tokens, for --router-url: {e}")])?,
            (None, None, None) => None,
        };
        agent_server::CronRouter::new(url, token)
            .map(Some)
            .map_err(|e| vec![format!("--router-url (AGENT_SERVICE_ROUTER_URL): {e}")])
    }

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

/// Threads for blocking work (transcript appends and fsyncs, journal writes, index
/// rewrites). More would not make one disk faster, and each thread keeps its own stack and
/// allocator heap: tokio's default of 512 let a thousand busy sessions start 512 of them.
const BLOCKING_THREADS: usize = 64;

/// jemalloc instead of the system allocator, with its background threads
/// purging freed pages: glibc's malloc kept the memory of every session it
/// ever served (thousands of sessions released while idle left the process
/// at its peak), while jemalloc gives pages back a few seconds after they
/// are freed (see README "Performance").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    // Before any secret is read: the commands agents run on the host are this user's too.
    if let Err(problem) = service_kit::deny_same_user_inspection() {
        eprintln!("error: {problem}");
        return ExitCode::FAILURE;
    }
    raise_open_file_limit();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    // One `error:` line, never a Debug dump with a backtrace (whatever
    // RUST_BACKTRACE says): these are the user's errors (a port in use, an
    // unreadable state directory), not the program's.
    runtime.block_on(run()).unwrap_or_else(|error| {
        eprintln!("error: {error:#}");
        ExitCode::FAILURE
    })
}

/// Raises the soft limit on open files to the hard limit: an active session holds about
/// three descriptors (transcript, journal, its share of connections), so a thousand of them
/// need more than the usual soft limit of 1,024. A limit that cannot be raised stays.
fn raise_open_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

async fn run() -> anyhow::Result<ExitCode> {
    let cli: Cli = ServerArgs::parse_cli(ENV_PREFIX);
    // Log lines pass through the runtime's redactor: a secret quoted in any message (a
    // provider's error body, a config value) is replaced before it is written.
    let redactor = openclaw_secrets::Redactor::new();
    service_kit::init_tracing_to(
        cli.server.log_format,
        openclaw_secrets::RedactingWriter::new(redactor.clone(), std::io::stderr),
    );
    if let Some(Command::Healthcheck { listen }) = &cli.command {
        let listen = listen.as_deref().unwrap_or(&cli.listen);
        return Ok(service_kit::healthcheck(listen, &cli.server.security, ENV_PREFIX).await);
    }
    let (addr, security) = match cli.server.resolve(&cli.listen, ENV_PREFIX) {
        Ok(resolved) => resolved,
        Err(problems) => return Ok(refuse(&problems)),
    };
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
    let cron_router = match cli.cron_router() {
        Ok(router) => router,
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
    // The service's own tokens are secrets like provider keys: redacted everywhere, and every
    // variable holding one is kept from the commands the runtime starts.
    let own = agent_server::OwnCredentials {
        tokens: cli.server.security.tokens.clone(),
        tokens_file: cli.server.security.tokens_file.clone(),
        prompt_token: cli.prompt_service_token.clone(),
        prompt_token_file: cli.prompt_service_token_file.clone(),
        router_token_file: cli.router_token_file.clone(),
    };
    redactor.replace_source("auth", own.secrets());
    let runtime = Runtime::start(RuntimeOptions {
        sandbox_program: cli.sandbox_bwrap.clone(),
        redactor,
        install_dir: agent_runtime::install_dir(),
        idle_release: (cli.idle_release_secs > 0)
            .then(|| Duration::from_secs(cli.idle_release_secs)),
        cron_forward: cron_router.map(agent_server::CronRouter::forward),
        open_listeners: agent_server::open_listeners(
            addr,
            &security,
            inspector_addr,
            cli.server.metrics_listen.as_deref(),
        ),
        ..RuntimeOptions::new(
            settings,
            Arc::new(ProcessEnv),
            Arc::new(openclaw_transcript::SystemClock),
            prompt,
        )
    })?;
    let listener = service_kit::bind(addr, "--listen").await?;
    if let Some(metrics) = &cli.server.metrics_listen {
        service_kit::metrics::listen(metrics, &[agent_runtime::metrics::CATALOG]).await?;
    }
    let inspector = match inspector_addr {
        Some(addr) => {
            let listener = service_kit::bind(addr, "--inspector-listen").await?;
            let connections = cli.server.connections();
            let inspector = agent_inspector::Inspector::new(
                Arc::clone(&runtime),
                renders,
                security.tokens.clone(),
            );
            Some(tokio::spawn(async move {
                let served = agent_inspector::serve(
                    listener,
                    inspector,
                    connections,
                    std::future::pending(),
                )
                .await;
                if let Err(error) = served {
                    tracing::error!(%error, "inspector stopped");
                }
            }))
        }
        None => None,
    };
    let config = agent_server::ServeConfig {
        max_request_bytes: cli.server.max_request_bytes,
        drain_timeout: cli.server.drain_timeout(),
        security,
        overload: cli.server.overload.config(),
        prompt_reachability,
        connections: cli.server.connections(),
        replica: cli.replica.unwrap_or_default(),
    };
    agent_server::serve(listener, config, runtime, service_kit::shutdown_signal()).await?;
    if let Some(inspector) = inspector {
        inspector.abort();
    }
    service_kit::flush_traces();
    Ok(ExitCode::SUCCESS)
}

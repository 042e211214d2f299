//! `openclaw up` and `openclaw demo`: resolve the state dir and config,
//! bind, start the [`Stack`], report where everything is, serve until the
//! shutdown signal, stop in order.

use std::{
    future::Future,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use agent_runtime::{Env, Flags, Settings};
use tokio::net::TcpListener;

use crate::{
    args::{DemoArgs, UpArgs},
    chat,
    client::{self, DEFAULT_SERVER, Target},
    demo::{self, DEMO_STATE_DIR},
    error::CliError,
    stack::{Listeners, Stack, StackOptions},
    term::Term,
};

/// How long both services get to report SERVING.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// Seconds in-flight calls get after Ctrl-C in `demo` (as `up`'s default).
const DEMO_DRAIN_SECS: u64 = 10;

/// Default listen addresses (the individual services' defaults).
const PROMPT_LISTEN: &str = "127.0.0.1:50051";
const AGENT_LISTEN: &str = "127.0.0.1:50052";

/// What the host process provides: environment and working directory, so
/// tests never touch the real ones.
#[derive(Clone)]
pub struct Host {
    /// Environment variables (HOME, OPENCLAW_STATE_DIR, `${VAR}` in the config).
    pub env: Arc<dyn Env>,
    /// The current directory (relative paths and the demo state dir).
    pub cwd: PathBuf,
    /// True when stdin is a terminal (show a prompt in interactive chat).
    pub stdin_tty: bool,
    /// Secrets to keep out of log lines and replies (shared with the log writer).
    pub redactor: openclaw_secrets::Redactor,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("cwd", &self.cwd)
            .field("stdin_tty", &self.stdin_tty)
            .finish_non_exhaustive()
    }
}

/// Where state and config live. Flags win, then (except in demo mode) the
/// environment, then the defaults; with `demo` the state dir defaults to
/// `./.openclaw-demo` and the config to `<state dir>/openclaw.json`, so a
/// demo never reads or writes the user's real `~/.openclaw`. Paths come
/// back absolute: workspaces must be absolute for prompt-service.
pub fn resolve_settings(
    state_dir: Option<&Path>,
    config: Option<&Path>,
    demo: bool,
    host: &Host,
) -> Result<Settings, CliError> {
    let state_dir = match (state_dir, demo) {
        (Some(dir), _) => Some(dir.to_path_buf()),
        (None, true) => Some(host.cwd.join(DEMO_STATE_DIR)),
        (None, false) => None,
    };
    let config = match (config, &state_dir, demo) {
        (Some(file), _, _) => Some(file.to_path_buf()),
        (None, Some(dir), true) => Some(dir.join("openclaw.json")),
        (None, _, _) => None,
    };
    let flags = Flags { state_dir, config };
    let settings = Settings::resolve(&flags, host.env.as_ref())
        .map_err(|e| CliError::Config(e.to_string()))?
        .anchored(&host.cwd);
    Ok(settings)
}

/// The state dir, created when missing and proved writable, before anything says ready
/// (exit 73 otherwise, as for a listen address that cannot be bound).
pub fn check_state_dir(settings: &Settings) -> Result<(), CliError> {
    settings.check_state_dir().map_err(CliError::StateDir)
}

/// `up` and `demo` serve without authentication (they take no token or TLS flags), so they
/// listen on loopback only: `flag`'s `addr` must parse and be a loopback address (exit 64).
pub fn check_listen(addr: &str, flag: &str) -> Result<(), CliError> {
    let parsed =
        service_kit::parse_listen(addr).map_err(|e| CliError::Config(format!("{flag}: {e}")))?;
    if parsed.ip().is_loopback() {
        return Ok(());
    }
    Err(CliError::Config(format!(
        "{flag} {addr}: `openclaw up` serves without authentication, so it listens on a \
         loopback address only (127.0.0.1:PORT or [::1]:PORT); to serve other hosts, run \
         prompt-service and agent-service themselves with bearer tokens and TLS (see deploy/)"
    )))
}

/// Binds `addr` (the value of `flag`; loopback only, see [`check_listen`]); when `fallback`
/// is set and the address is taken, binds a free port on the same host instead.
pub async fn bind(addr: &str, flag: &str, fallback: bool) -> Result<TcpListener, CliError> {
    check_listen(addr, flag)?;
    let parsed = service_kit::parse_listen(addr).map_err(CliError::Config)?;
    match TcpListener::bind(parsed).await {
        Ok(listener) => Ok(listener),
        Err(error) if fallback && error.kind() == std::io::ErrorKind::AddrInUse => {
            tracing::info!(addr = %parsed, "address in use; taking a free port");
            TcpListener::bind((parsed.ip(), 0))
                .await
                .map_err(|source| CliError::Bind {
                    addr: format!("{addr} ({flag})"),
                    source,
                })
        }
        Err(source) => Err(CliError::Bind {
            addr: format!("{addr} ({flag})"),
            source,
        }),
    }
}

/// `openclaw up`: serve until `shutdown` resolves.
pub async fn up(
    args: &UpArgs,
    host: &Host,
    term: &mut Term<'_>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), CliError> {
    let settings = resolve_settings(
        args.state_dir.as_deref(),
        args.config.as_deref(),
        args.demo,
        host,
    )?;
    check_listen(&args.prompt_listen, "--prompt-listen")?;
    check_listen(&args.agent_listen, "--agent-listen")?;
    check_state_dir(&settings)?;
    if args.demo {
        log_demo_files(&demo::write_demo_files(&settings.config_path)?);
    }
    let listeners = Listeners {
        prompt: bind(&args.prompt_listen, "--prompt-listen", false).await?,
        agent: bind(&args.agent_listen, "--agent-listen", false).await?,
    };
    let stack = start(listeners, settings, host, args.drain_secs).await?;
    let metrics = serve_metrics(&args.observe).await?;
    term.line(&ready_banner(&stack, metrics))?;
    shutdown.await;
    stack.shutdown().await
}

/// `openclaw demo`: `up --demo`, one demo turn printed as `chat -m` prints
/// it, then serve until `shutdown` resolves.
pub async fn demo(
    args: &DemoArgs,
    host: &Host,
    term: &mut Term<'_>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), CliError> {
    let settings = resolve_settings(args.state_dir.as_deref(), None, true, host)?;
    check_state_dir(&settings)?;
    log_demo_files(&demo::write_demo_files(&settings.config_path)?);
    // The default ports make `openclaw chat` work without flags; a taken
    // port only falls back when the user did not ask for it explicitly.
    let listeners = Listeners {
        prompt: bind(
            args.prompt_listen.as_deref().unwrap_or(PROMPT_LISTEN),
            "--prompt-listen",
            args.prompt_listen.is_none(),
        )
        .await?,
        agent: bind(
            args.agent_listen.as_deref().unwrap_or(AGENT_LISTEN),
            "--agent-listen",
            args.agent_listen.is_none(),
        )
        .await?,
    };
    let stack = start(listeners, settings, host, DEMO_DRAIN_SECS).await?;
    let metrics = serve_metrics(&args.observe).await?;
    let mut shutdown = std::pin::pin!(shutdown);
    let turn = async {
        let mut client = client::connect(&stack.agent_url()).await?;
        term.line(&format!("> {}", args.message))?;
        chat::run_turn(&mut client, &Target::default(), &args.message, false, term).await
    };
    let outcome = tokio::select! {
        outcome = turn => Some(outcome),
        () = &mut shutdown => None,
    };
    match outcome {
        Some(Ok(_)) => {}
        Some(Err(error)) => {
            // The failed turn is the error worth reporting; a shutdown
            // problem on top of it is only logged.
            if let Err(problem) = stack.shutdown().await {
                tracing::warn!(%problem, "shutdown after the failed demo turn");
            }
            return Err(error);
        }
        None => return stack.shutdown().await,
    }
    let server = server_flag(&stack);
    let hints = [
        ("chat", "talk to it (/help lists commands)"),
        ("sessions show main", "this session's transcript"),
        ("context", "what the next prompt holds"),
    ]
    .map(|(command, what)| vec![format!("  openclaw {command}{server}"), what.to_owned()]);
    term.line("\nThe demo keeps serving. From another terminal:")?;
    term.table(&hints)?;
    if let Some(addr) = metrics {
        term.line(&format!("Metrics: http://{addr}/metrics"))?;
    }
    term.line("Stop with Ctrl-C.")?;
    shutdown.await;
    stack.shutdown().await
}

async fn start(
    listeners: Listeners,
    settings: Settings,
    host: &Host,
    drain_secs: u64,
) -> Result<Stack, CliError> {
    tracing::info!(
        state_dir = %settings.state_dir.display(),
        config = %settings.config_path.display(),
        config_exists = settings.config_path.exists(),
        "starting prompt-service and agent-service"
    );
    let options = StackOptions {
        settings,
        env: Arc::clone(&host.env),
        drain_timeout: Duration::from_secs(drain_secs),
        redactor: host.redactor.clone(),
    };
    let mut stack = Stack::start(listeners, options).await?;
    tracing::info!(prompt_service = %stack.prompt_url(), agent_service = %stack.agent_url(), "listening");
    stack.wait_ready(READY_TIMEOUT).await?;
    Ok(stack)
}

/// Both services' metrics on `--metrics-listen`, when given: one endpoint,
/// since they share this process.
async fn serve_metrics(
    observe: &crate::args::ObserveArgs,
) -> Result<Option<std::net::SocketAddr>, CliError> {
    let Some(addr) = &observe.metrics_listen else {
        return Ok(None);
    };
    let catalogs = [
        prompt_server::metrics::CATALOG,
        agent_runtime::metrics::CATALOG,
    ];
    service_kit::metrics::listen(addr, &catalogs)
        .await
        .map(Some)
        .map_err(|e| CliError::Config(e.to_string()))
}

fn log_demo_files(files: &demo::DemoFiles) {
    if files.config_written {
        tracing::info!(
            config = %files.config_path.display(),
            script = %files.script_path.display(),
            "wrote the demo config (offline scripted model)"
        );
    } else {
        tracing::info!(config = %files.config_path.display(), "config exists; left as is");
    }
}

/// `--server URL` when agent-service is not where `chat` looks by default.
fn server_flag(stack: &Stack) -> String {
    if stack.agent_url() == DEFAULT_SERVER {
        String::new()
    } else {
        format!(" --server {}", stack.agent_url())
    }
}

fn chat_hint(stack: &Stack) -> String {
    format!(
        "openclaw chat{} -m \"{}\"",
        server_flag(stack),
        demo::DEMO_MESSAGE
    )
}

fn ready_banner(stack: &Stack, metrics: Option<std::net::SocketAddr>) -> String {
    let settings = stack.settings();
    let metrics = metrics
        .map(|addr| format!("\n  metrics         http://{addr}/metrics"))
        .unwrap_or_default();
    format!(
        "openclaw is ready\n  prompt-service  {}\n  agent-service   {}\n  state dir       {}\n  config          {}{metrics}\nTry:  {}\nStop: Ctrl-C",
        stack.prompt_url(),
        stack.agent_url(),
        settings.state_dir.display(),
        settings.config_path.display(),
        chat_hint(stack),
    )
}

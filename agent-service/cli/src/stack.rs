//! Both services in one process, as `openclaw up` runs them: prompt-service
//! on one listener, agent-service on another, agent-service rendering every
//! prompt through prompt-service over gRPC (the production path, not the
//! in-process shortcut). Takes bound listeners so tests pass `127.0.0.1:0`.

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use agent_runtime::{Env, Runtime, RuntimeOptions, Settings};
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};

use crate::error::CliError;

/// Health service names: each service reports SERVING under its own name
/// once it can answer (agent-service only with a valid config).
const PROMPT_HEALTH: &str = "openclaw.prompt.v1.PromptService";
const AGENT_HEALTH: &str = "openclaw.agent.v1.AgentService";

/// Pause between readiness probes. The first probe normally succeeds: the
/// listeners are bound before the servers start.
const PROBE_INTERVAL: Duration = Duration::from_millis(50);

/// The two bound listeners.
#[derive(Debug)]
pub struct Listeners {
    /// For prompt-service.
    pub prompt: TcpListener,
    /// For agent-service.
    pub agent: TcpListener,
}

/// What the stack needs besides its listeners.
#[derive(Clone)]
pub struct StackOptions {
    /// State dir and config path.
    pub settings: Settings,
    /// Environment (for `${VAR}` in the config and API keys).
    pub env: Arc<dyn Env>,
    /// How long in-flight calls may run after shutdown begins, per service.
    pub drain_timeout: Duration,
    /// Where the runtime puts the config's secrets (share it with the log writer).
    pub redactor: openclaw_secrets::Redactor,
}

impl std::fmt::Debug for StackOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackOptions")
            .field("settings", &self.settings)
            .field("drain_timeout", &self.drain_timeout)
            .finish_non_exhaustive()
    }
}

type ServeTask<E> = JoinHandle<Result<(), E>>;

/// Both services, running. Dropping it asks both to stop; [`Stack::shutdown`]
/// stops them in order and waits.
#[derive(Debug)]
pub struct Stack {
    prompt_addr: SocketAddr,
    agent_addr: SocketAddr,
    runtime: Arc<Runtime>,
    prompt_stop: Option<oneshot::Sender<()>>,
    prompt_task: Option<ServeTask<prompt_server::ServeError>>,
    agent_stop: Option<oneshot::Sender<()>>,
    agent_task: Option<ServeTask<agent_server::ServeError>>,
}

impl Stack {
    /// Starts prompt-service, then agent-service with a gRPC prompt client
    /// pointing at it. An invalid config is refused here, every problem
    /// listed, rather than serving NOT_SERVING (this is the quick-start path).
    pub async fn start(listeners: Listeners, options: StackOptions) -> Result<Self, CliError> {
        let prompt_addr = reachable(&listeners.prompt)?;
        let agent_addr = reachable(&listeners.agent)?;
        let (prompt_stop, stopped) = oneshot::channel::<()>();
        let prompt_config = prompt_server::ServeConfig {
            drain_timeout: options.drain_timeout,
            ..prompt_server::ServeConfig::default()
        };
        let prompt_task = tokio::spawn(prompt_server::serve(
            listeners.prompt,
            prompt_config,
            async {
                let _ = stopped.await;
            },
        ));
        let (runtime, prompt_reachability) =
            start_runtime(&options, &format!("http://{prompt_addr}"))?;
        let mut stack = Self {
            prompt_addr,
            agent_addr,
            runtime,
            prompt_stop: Some(prompt_stop),
            prompt_task: Some(prompt_task),
            agent_stop: None,
            agent_task: None,
        };
        if let Err(error) = stack.runtime.config().ready() {
            return Err(CliError::Config(error.to_string()));
        }
        let (agent_stop, stopped) = oneshot::channel::<()>();
        let agent_config = agent_server::ServeConfig {
            drain_timeout: options.drain_timeout,
            prompt_reachability: Some(prompt_reachability),
            ..agent_server::ServeConfig::default()
        };
        stack.agent_task = Some(tokio::spawn(agent_server::serve(
            listeners.agent,
            agent_config,
            Arc::clone(&stack.runtime),
            async {
                let _ = stopped.await;
            },
        )));
        stack.agent_stop = Some(agent_stop);
        Ok(stack)
    }

    /// `http://` URL of prompt-service.
    pub fn prompt_url(&self) -> String {
        format!("http://{}", self.prompt_addr)
    }

    /// `http://` URL of agent-service (what `openclaw chat --server` takes).
    pub fn agent_url(&self) -> String {
        format!("http://{}", self.agent_addr)
    }

    /// The state dir and config path in use.
    pub fn settings(&self) -> &Settings {
        self.runtime.settings()
    }

    /// Waits until both services answer health checks with SERVING, or
    /// `timeout` passes, or a server stops early (its error is returned).
    pub async fn wait_ready(&mut self, timeout: Duration) -> Result<(), CliError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let targets = [
            (self.prompt_url(), PROMPT_HEALTH),
            (self.agent_url(), AGENT_HEALTH),
        ];
        for (url, service) in targets {
            loop {
                self.check_running().await?;
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let last = match service_kit::probe(&url, service, left.max(PROBE_INTERVAL)).await {
                    Ok(true) => break,
                    Ok(false) => format!("{service} at {url} is not SERVING"),
                    Err(error) => error,
                };
                if tokio::time::Instant::now() + PROBE_INTERVAL > deadline {
                    return Err(CliError::Startup(format!(
                        "not ready after {} ms: {last}",
                        timeout.as_millis()
                    )));
                }
                tokio::time::sleep(PROBE_INTERVAL).await;
            }
        }
        Ok(())
    }

    /// A server task that already ended is an error now, not a hang later.
    async fn check_running(&mut self) -> Result<(), CliError> {
        if let Some(task) = self.prompt_task.take_if(|t| t.is_finished()) {
            return Err(ended("prompt-service", task).await);
        }
        if let Some(task) = self.agent_task.take_if(|t| t.is_finished()) {
            return Err(ended("agent-service", task).await);
        }
        Ok(())
    }

    /// Stops agent-service first (it drains in-flight runs, which still
    /// need prompt-service, then flushes and closes every session), then
    /// prompt-service.
    pub async fn shutdown(mut self) -> Result<(), CliError> {
        let mut problems = Vec::new();
        if let Some(stop) = self.agent_stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.agent_task.take()
            && let Err(problem) = join("agent-service", task).await
        {
            problems.push(problem);
        }
        if let Some(stop) = self.prompt_stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.prompt_task.take()
            && let Err(problem) = join("prompt-service", task).await
        {
            problems.push(problem);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(CliError::Shutdown(problems.join("; ")))
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // Same order as `shutdown`, without waiting.
        if let Some(stop) = self.agent_stop.take() {
            let _ = stop.send(());
        }
        if let Some(stop) = self.prompt_stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The runtime, rendering through prompt-service at `prompt_url`, and that service's
/// reachability (agent-service's readiness and `openclaw status` follow it).
fn start_runtime(
    options: &StackOptions,
    prompt_url: &str,
) -> Result<(Arc<Runtime>, tokio::sync::watch::Receiver<bool>), CliError> {
    let prompt = prompt_client::GrpcPromptSource::connect_lazy(
        prompt_url,
        prompt_client::RetryPolicy::default(),
    )
    .map_err(|e| CliError::Startup(format!("prompt-service client: {e}")))?;
    let reachability = prompt.reachability();
    let runtime = Runtime::start(RuntimeOptions {
        redactor: options.redactor.clone(),
        install_dir: agent_runtime::install_dir(),
        ..RuntimeOptions::new(
            options.settings.clone(),
            Arc::clone(&options.env),
            Arc::new(openclaw_transcript::SystemClock),
            Arc::new(prompt),
        )
    })
    .map_err(|e| CliError::Startup(format!("agent runtime: {e}")))?;
    Ok((runtime, reachability))
}

/// The address clients should dial: a wildcard bind is reached on loopback.
fn reachable(listener: &TcpListener) -> Result<SocketAddr, CliError> {
    let addr = listener.local_addr().map_err(|source| CliError::Bind {
        addr: "a listener".to_owned(),
        source,
    })?;
    Ok(if addr.ip().is_unspecified() {
        let loopback = match addr.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        };
        SocketAddr::new(loopback, addr.port())
    } else {
        addr
    })
}

async fn join<E: std::fmt::Display>(name: &str, task: ServeTask<E>) -> Result<(), String> {
    match task.await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("{name}: {error}")),
        Err(error) => Err(format!("{name} task failed: {error}")),
    }
}

async fn ended<E: std::fmt::Display>(name: &str, task: ServeTask<E>) -> CliError {
    match join(name, task).await {
        Ok(()) => CliError::Startup(format!("{name} stopped before it was ready")),
        Err(problem) => CliError::Startup(problem),
    }
}

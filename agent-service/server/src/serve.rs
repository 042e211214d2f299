//! `serve`: AgentService plus health and reflection on a bound listener,
//! behind authentication, TLS, load shedding and per-call deadlines.

use std::{future::Future, sync::Arc, time::Duration};

use agent_runtime::Runtime;
use openclaw_proto::agent::v1::agent_service_server::AgentServiceServer;
use tokio::net::TcpListener;
use tonic::transport::Server;
use tower::ServiceBuilder;

use crate::{
    readiness::{self, Readiness},
    service::AgentServiceImpl,
};

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Largest accepted request message, in bytes.
    pub max_request_bytes: usize,
    /// Gzip responses for clients that accept gzip (`--compress-responses`); off, responses
    /// go uncompressed. Gzipped requests are accepted either way.
    pub compress_responses: bool,
    /// How long in-flight calls may run after a shutdown signal.
    pub drain_timeout: Duration,
    /// Caller authentication (bearer tokens, client certificates) and TLS.
    pub security: service_kit::ServerSecurity,
    /// Unary calls and streams in progress at once; past them
    /// RESOURCE_EXHAUSTED at once.
    pub overload: service_kit::OverloadConfig,
    /// prompt-service's reachability ([`prompt_client::GrpcPromptSource::reachability`]):
    /// while it is `false` the AgentService health status is NOT_SERVING.
    /// None when prompts render in this process.
    pub prompt_reachability: Option<tokio::sync::watch::Receiver<bool>>,
    /// The bound on connections held at once and their idle timeout.
    pub connections: service_kit::ConnectionLimits,
    /// This replica among those sharing the sessions (`--replica`); the default, one of one,
    /// owns every session.
    pub replica: crate::Replica,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            max_request_bytes: service_kit::DEFAULT_MAX_REQUEST_BYTES,
            compress_responses: false,
            drain_timeout: Duration::from_secs(10),
            security: service_kit::ServerSecurity::default(),
            overload: service_kit::OverloadConfig::default(),
            prompt_reachability: None,
            connections: service_kit::ConnectionLimits::default(),
            replica: crate::Replica::default(),
        }
    }
}

/// Errors that stop the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Reflection could not be built from the descriptor set.
    #[error("cannot build reflection: {0}")]
    Reflection(#[from] service_kit::ReflectionError),
    /// The listener is reachable from other hosts and nothing authenticates
    /// callers (see [`service_kit::ServerSecurity::check_listen`]).
    #[error("{0}")]
    Insecure(String),
    /// The transport failed.
    #[error("transport error: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Serves until `shutdown` resolves, drains in-flight calls, then flushes and
/// closes every session.
pub async fn serve(
    listener: TcpListener,
    config: ServeConfig,
    runtime: Arc<Runtime>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener.local_addr().ok();
    if let Some(addr) = addr {
        config
            .security
            .check_listen(addr, "AGENT_SERVICE")
            .map_err(ServeError::Insecure)?;
        config.security.log_startup(addr);
    }
    // Messages a crashed predecessor acknowledged but never wrote go into
    // their transcripts before anything new arrives.
    let recovered = runtime.recover_journals().await;
    if recovered > 0 {
        tracing::warn!(
            sessions = recovered,
            "recovered acknowledged messages from a previous crash"
        );
    }
    // Subagents cut short by the previous stop or crash, and results their
    // parents never got (after the journals: a result the journal saved is
    // not pushed twice).
    let pushed = runtime.recover_subagents().await;
    if pushed > 0 {
        tracing::warn!(
            results = pushed,
            "pushed subagent results left over from before the restart"
        );
    }
    // Heartbeat turns (agents.defaults.heartbeat.every); they stop when
    // shutdown begins.
    runtime.start_heartbeats();
    // Cron jobs (after the journals: an interrupted run's message is in its transcript by
    // now, which is how the scheduler tells a handed-over run from one that never started).
    runtime.start_cron();
    // Sessions idle for a while give back their memory and descriptors until used again.
    runtime.start_idle_release();
    let health = service_kit::health_services(
        &[<AgentServiceServer<AgentServiceImpl> as tonic::server::NamedService>::NAME],
        config.compress_responses,
    )?;
    // With an invalid config, or while prompt-service cannot be reached, the
    // process stays up (liveness, clear errors) but the agent service
    // reports NOT_SERVING (readiness).
    let readiness = Readiness::start(
        health.reporter.clone(),
        readiness::Inputs {
            config_ready: runtime.config().ready().is_ok(),
            prompt: config.prompt_reachability.clone(),
        },
    )
    .await;
    let (stopping_tx, stopping_rx) = tokio::sync::watch::channel(false);
    let served = crate::service::ServedWith {
        tls: config.security.tls.is_some(),
        client_certificates: config
            .security
            .tls
            .as_ref()
            .is_some_and(|t| t.requires_client_cert()),
        bearer_tokens: config.security.tokens.is_some(),
        prompt_reachability: config.prompt_reachability.clone(),
        serving: Some(readiness.serving()),
        started_at_ms: started_at_ms(),
        stopping: Some(stopping_rx),
        replica: config.replica,
    };
    let service = crate::sessions_reply::agent_routes(
        AgentServiceImpl::serving(Arc::clone(&runtime), served),
        service_kit::MessageSettings {
            max_request_bytes: config.max_request_bytes,
            compress_responses: config.compress_responses,
        },
    );
    // Outermost first (as in prompt-service; service_kit's crate docs,
    // "Layer order", give the reasons): the request span wraps every
    // refusal; metrics sit outside every refusal so each is counted with its
    // status code; authentication comes before load shedding, so callers
    // without a token never take a slot from those with one (health passes
    // both); the deadline (the client's grpc-timeout only: runs may stream
    // for long) starts when a call is admitted; the size check runs before
    // any handler decodes the body; a body that cannot be decoded answers
    // INVALID_ARGUMENT. Status messages are redacted outermost, so nothing below (a
    // refusal quoting a provider, a command's output in an error) sends a secret.
    let layers = ServiceBuilder::new()
        .layer(crate::redact::RedactStatusLayer::new(
            runtime.redactor().clone(),
        ))
        .layer(service_kit::trace_layer())
        .layer(service_kit::RpcMetricsLayer::new())
        .layer(config.security.auth_layer())
        .layer(service_kit::OverloadLayer::new(config.overload))
        .layer(service_kit::DeadlineLayer::new(None))
        .layer(service_kit::RequestSizeLimitLayer::new(
            config.max_request_bytes,
        ))
        .layer(service_kit::MalformedRequestLayer::new());

    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel();
    let stopping = Arc::clone(&runtime);
    let signal = async move {
        shutdown.await;
        stopping.begin_shutdown();
        // Watches end now, not at the end of the drain.
        let _ = stopping_tx.send(true);
        readiness.stop().await;
        tracing::info!("stopped accepting; draining in-flight calls");
        let _ = drain_tx.send(());
    };
    tracing::info!(addr = %addr.map_or_else(|| "unknown".to_owned(), |a| a.to_string()), state_dir = %runtime.settings().state_dir.display(), "agent-service listening");
    let server = config
        .security
        .apply_tls(Server::builder())?
        .http2_keepalive_interval(Some(service_kit::HTTP2_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(service_kit::HTTP2_KEEPALIVE_TIMEOUT))
        .layer(layers)
        .add_routes(health.routes)
        .add_service(service)
        .serve_with_incoming_shutdown(
            service_kit::connections::incoming(listener, config.connections),
            signal,
        );
    let result = service_kit::drain(server, drain_rx, config.drain_timeout).await;
    // Runs started by Send outlive their RPC: they get what is left of the
    // drain window, then are cancelled.
    runtime.shutdown(config.drain_timeout).await;
    result?;
    tracing::info!("agent-service stopped");
    Ok(())
}

/// Now, ms since the epoch (the process's start time in the status report).
fn started_at_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

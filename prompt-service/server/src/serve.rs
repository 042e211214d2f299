//! `serve`: the PromptService plus health and reflection on a bound listener,
//! behind authentication, TLS, load shedding and per-call deadlines.

use std::{future::Future, time::Duration};

use openclaw_proto::{
    bench::v1::{EchoRequest, EchoResponse, echo_server},
    prompt::v1::prompt_service_server::PromptServiceServer,
};
use tokio::net::TcpListener;
use tonic::{Request, Response, Status, server::NamedService, transport::Server};
use tower::ServiceBuilder;

use crate::{reply::prompt_routes, service::PromptServiceImpl};

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Largest accepted request message, in bytes.
    pub max_request_bytes: usize,
    /// Gzip responses for clients that accept gzip (`--compress-responses`); off, responses
    /// go uncompressed. Gzipped requests are accepted either way.
    pub compress_responses: bool,
    /// How long in-flight requests may run after a shutdown signal.
    pub drain_timeout: Duration,
    /// Upper bound on any request, on top of the client's own deadline
    /// (`grpc-timeout`); past it the call ends with DEADLINE_EXCEEDED.
    pub request_timeout: Duration,
    /// Also serve the `openclaw.bench.v1.Echo` baseline (load generator only).
    pub bench_echo: bool,
    /// Caller authentication (bearer tokens, client certificates) and TLS.
    pub security: service_kit::ServerSecurity,
    /// Calls in progress at once; past them RESOURCE_EXHAUSTED at once.
    pub overload: service_kit::OverloadConfig,
    /// The bound on connections held at once and their idle timeout.
    pub connections: service_kit::ConnectionLimits,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            max_request_bytes: service_kit::DEFAULT_MAX_REQUEST_BYTES,
            compress_responses: false,
            drain_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            bench_echo: false,
            security: service_kit::ServerSecurity::default(),
            overload: service_kit::OverloadConfig::default(),
            connections: service_kit::ConnectionLimits::default(),
        }
    }
}

/// Errors that stop the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Reflection could not be built from the descriptor set.
    #[error("cannot build reflection: {0}")]
    Reflection(#[from] service_kit::ReflectionError),
    /// The config schema validator could not be built (a bug, reported).
    #[error("cannot build the config validator: {0}")]
    Config(#[from] openclaw_config::ConfigError),
    /// The listener is reachable from other hosts and nothing authenticates
    /// callers (see [`service_kit::ServerSecurity::check_listen`]).
    #[error("{0}")]
    Insecure(String),
    /// The transport failed.
    #[error("transport error: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Serves until `shutdown` resolves, then drains for `drain_timeout`.
pub async fn serve(
    listener: TcpListener,
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener.local_addr().ok();
    if let Some(addr) = addr {
        config
            .security
            .check_listen(addr, "PROMPT_SERVICE")
            .map_err(ServeError::Insecure)?;
        config.security.log_startup(addr);
    }
    let mut served = vec![<PromptServiceServer<PromptServiceImpl> as NamedService>::NAME];
    if config.bench_echo {
        served.push(echo_server::SERVICE_NAME);
    }
    let health = service_kit::health_services(&served, config.compress_responses)?;
    let reporter = health.reporter.clone();
    reporter
        .set_serving::<PromptServiceServer<PromptServiceImpl>>()
        .await;

    let service = PromptServiceImpl::new()?;
    let prompt = prompt_routes(
        service,
        service_kit::MessageSettings {
            max_request_bytes: config.max_request_bytes,
            compress_responses: config.compress_responses,
        },
    );
    let echo = config.bench_echo.then(|| {
        echo_server::EchoServer::new(EchoService)
            .max_decoding_message_size(config.max_request_bytes)
    });

    // Outermost first (the same order as agent-service's; the reasons are
    // in service_kit's crate docs, "Layer order"): the span wraps everything so every refusal is
    // logged inside its request span; metrics sit outside every refusal so
    // each is counted with its status code; authentication comes before
    // load shedding, so callers without a token never take a slot from
    // those with one; the deadline starts when a call is admitted and
    // covers reading its body; the size check runs before any handler
    // decodes the body; a body that cannot be decoded answers
    // INVALID_ARGUMENT. Health passes authentication and load shedding.
    let layers = ServiceBuilder::new()
        .layer(service_kit::trace_layer())
        .layer(service_kit::RpcMetricsLayer::new())
        .layer(config.security.auth_layer())
        .layer(service_kit::OverloadLayer::new(config.overload))
        .layer(service_kit::DeadlineLayer::new(Some(
            config.request_timeout,
        )))
        .layer(service_kit::RequestSizeLimitLayer::new(
            config.max_request_bytes,
        ))
        .layer(service_kit::MalformedRequestLayer::new());

    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel();
    let signal = async move {
        shutdown.await;
        reporter
            .set_not_serving::<PromptServiceServer<PromptServiceImpl>>()
            .await;
        tracing::info!("stopped accepting; draining in-flight requests");
        let _ = drain_tx.send(());
    };
    tracing::info!(addr = %addr.map_or_else(|| "unknown".to_owned(), |a| a.to_string()), bench_echo = config.bench_echo, "prompt-service listening");
    // No `Server::timeout`: the DeadlineLayer enforces the same bound and
    // answers DEADLINE_EXCEEDED (tonic's own timer answers CANCELLED).
    let server = config
        .security
        .apply_tls(Server::builder())?
        .http2_keepalive_interval(Some(service_kit::HTTP2_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(service_kit::HTTP2_KEEPALIVE_TIMEOUT))
        .layer(layers)
        .add_routes(health.routes)
        .add_service(prompt)
        .add_optional_service(echo)
        .serve_with_incoming_shutdown(
            service_kit::connections::incoming(listener, config.connections),
            signal,
        );
    service_kit::drain(server, drain_rx, config.drain_timeout).await?;
    tracing::info!("prompt-service stopped");
    Ok(())
}

/// The bench baseline: returns a payload of the requested size.
#[derive(Debug, Clone, Copy)]
struct EchoService;

#[tonic::async_trait]
impl echo_server::Echo for EchoService {
    async fn echo(&self, request: Request<EchoRequest>) -> Result<Response<EchoResponse>, Status> {
        let req = request.into_inner();
        let payload = if req.response_bytes == 0 {
            req.payload
        } else {
            vec![b'x'; req.response_bytes as usize]
        };
        Ok(Response::new(EchoResponse { payload }))
    }
}

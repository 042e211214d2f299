//! `serve`: the PromptService plus health and reflection on a bound listener.

use std::{future::Future, time::Duration};

use openclaw_proto::{
    bench::v1::{EchoRequest, EchoResponse, echo_server},
    prompt::v1::prompt_service_server::PromptServiceServer,
};
use tokio::net::TcpListener;
use tonic::{Request, Response, Status, codec::CompressionEncoding, transport::Server};
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;

use crate::service::PromptServiceImpl;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Largest accepted request message, in bytes.
    pub max_request_bytes: usize,
    /// How long in-flight requests may run after a shutdown signal.
    pub drain_timeout: Duration,
    /// Upper bound on any request, on top of the client's own deadline.
    pub request_timeout: Duration,
    /// Also serve the `openclaw.bench.v1.Echo` baseline (load generator only).
    pub bench_echo: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            max_request_bytes: service_kit::DEFAULT_MAX_REQUEST_BYTES,
            drain_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            bench_echo: false,
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
    let health = service_kit::health_services()?;
    let reporter = health.reporter.clone();
    reporter
        .set_serving::<PromptServiceServer<PromptServiceImpl>>()
        .await;

    let service = PromptServiceImpl::new(std::sync::Arc::default())?;
    let prompt = PromptServiceServer::new(service)
        .max_decoding_message_size(config.max_request_bytes)
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip);
    let echo = config.bench_echo.then(|| {
        echo_server::EchoServer::new(EchoService)
            .max_decoding_message_size(config.max_request_bytes)
    });

    // Outermost first: the span wraps everything so size refusals are
    // logged inside their request span; metrics sit outside the size check
    // so refusals are counted with their status code; the size check runs
    // before any handler decodes the body.
    let layers = ServiceBuilder::new()
        .layer(TraceLayer::new_for_grpc().make_span_with(service_kit::request_span as fn(&_) -> _))
        .layer(service_kit::RpcMetricsLayer::new())
        .layer(service_kit::RequestSizeLimitLayer::new(
            config.max_request_bytes,
        ));

    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel();
    let signal = async move {
        shutdown.await;
        reporter
            .set_not_serving::<PromptServiceServer<PromptServiceImpl>>()
            .await;
        tracing::info!("stopped accepting; draining in-flight requests");
        let _ = drain_tx.send(());
    };
    let addr = listener.local_addr().ok();
    tracing::info!(addr = ?addr, bench_echo = config.bench_echo, "prompt-service listening");
    let server = Server::builder()
        .timeout(config.request_timeout)
        .layer(layers)
        .add_routes(health.routes)
        .add_service(prompt)
        .add_optional_service(echo)
        .serve_with_incoming_shutdown(service_kit::incoming(listener), signal);
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

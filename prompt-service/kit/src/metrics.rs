//! Prometheus metrics plumbing: the scrape endpoint, the per-RPC metrics
//! every server records, and the hook by which a service adds its own.
//!
//! Each service defines its metrics (names, labels, units, HELP text and
//! histogram buckets) in a [`Catalog`] of its own and records them through
//! named functions next to it, so every name is defined once and listed in
//! the README. Until [`serve`] (or [`listen`]) installs the recorder every
//! recording is a cheap no-op, which is what tests and `--metrics-listen`
//! unset get. The endpoint answers `GET /metrics` only.
//!
//! Labels are bounded on purpose: agent id, provider, model, gRPC method and
//! status code. Session ids never become labels (one time series per session
//! would grow without bound); per-session detail is in the logs and in the
//! `RunEvent` stream.
//!
//! The kit defines no service's metrics: prompt-service's live in
//! prompt-server, agent-service's in agent-runtime.

use std::{convert::Infallible, net::SocketAddr, time::Duration};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;

/// Per-RPC count (counter; labels `grpc_service`, `grpc_method`, `grpc_code`).
pub const RPC_HANDLED: &str = "grpc_server_handled_total";
/// Per-RPC latency in seconds, to the end of the response stream (histogram;
/// same labels).
pub const RPC_SECONDS: &str = "grpc_server_handling_seconds";
/// Calls and streams in progress (gauge; `grpc_service`, `grpc_method`).
/// For `openclaw.agent.v1.AgentService/Run` this is the number of runs
/// streaming to clients.
pub const RPC_IN_FLIGHT: &str = "grpc_server_in_flight";
/// Latency buckets (seconds): sub-millisecond renders up to five-minute runs.
const SECONDS_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0, 300.0,
];
/// How often histogram data is compacted (the exporter's own default).
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// Why the metrics endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The `--metrics-listen` address is not `HOST:PORT`.
    #[error("--metrics-listen: {0}")]
    Address(String),
    /// The listener could not be bound.
    #[error("cannot listen on {addr} for metrics: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The bucket configuration was refused (a bug).
    #[error("cannot build the Prometheus recorder: {0}")]
    Build(#[from] metrics_exporter_prometheus::BuildError),
    /// A recorder is already installed in this process.
    #[error("a metrics recorder is already installed")]
    AlreadyInstalled,
}

/// What a service adds to the endpoint: the HELP lines of its metrics and
/// the buckets of its histograms that are not in seconds (every histogram
/// whose name ends in `_seconds` gets the kit's latency buckets).
#[derive(Debug, Clone, Copy)]
pub struct Catalog {
    /// Describes the service's metrics (`metrics::describe_*`).
    pub describe: fn(),
    /// Histogram buckets by full metric name.
    pub buckets: &'static [(&'static str, &'static [f64])],
}

/// The path the endpoint serves.
pub const PATH: &str = "/metrics";

/// Parses `addr`, binds it and [`serve`]s. Returns the bound address.
pub async fn listen(addr: &str, catalogs: &[Catalog]) -> Result<SocketAddr, MetricsError> {
    let addr = crate::parse_listen(addr).map_err(MetricsError::Address)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| MetricsError::Bind { addr, source })?;
    serve(listener, catalogs)
}

/// Installs the process-wide Prometheus recorder with the RPC metrics and
/// those of `catalogs` (one per service this process runs), and serves its text exposition at `GET /metrics` on
/// `listener` (any other path is 404, another method 405) from a background
/// task that lives as long as the runtime. Returns the bound address. A
/// second call in one process fails with [`MetricsError::AlreadyInstalled`].
pub fn serve(listener: TcpListener, catalogs: &[Catalog]) -> Result<SocketAddr, MetricsError> {
    let addr = listener.local_addr().map_err(|source| MetricsError::Bind {
        addr: SocketAddr::from(([0, 0, 0, 0], 0)),
        source,
    })?;
    let mut builder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)?;
    for (name, buckets) in catalogs.iter().flat_map(|c| c.buckets) {
        builder = builder.set_buckets_for_metric(Matcher::Full((*name).into()), buckets)?;
    }
    let recorder = builder.build_recorder();
    let handle = recorder.handle();
    ::metrics::set_global_recorder(recorder).map_err(|_| MetricsError::AlreadyInstalled)?;
    describe_rpc();
    for catalog in catalogs {
        (catalog.describe)();
    }
    tokio::spawn(upkeep(handle.clone()));
    tokio::spawn(accept(listener, handle));
    tracing::info!(%addr, "metrics listening");
    Ok(addr)
}

async fn upkeep(handle: PrometheusHandle) {
    let mut tick = tokio::time::interval(UPKEEP_INTERVAL);
    loop {
        tick.tick().await;
        handle.run_upkeep();
    }
}

async fn accept(listener: TcpListener, handle: PrometheusHandle) {
    // Bounded like every listener of the service (see `crate::connections`): silent
    // connections to the metrics port cannot take the process's descriptors.
    let listener = crate::LimitedListener::new(listener, crate::ConnectionLimits::default());
    loop {
        let (stream, _) = listener.next().await;
        let handle = handle.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let response = respond(&handle, request.method(), request.uri().path());
                async move { Ok::<_, Infallible>(response) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%error, "metrics connection ended with an error");
            }
        });
    }
}

/// The endpoint's answer: the exposition for `GET /metrics`, 404 for any
/// other path and 405 for any other method there.
fn respond(handle: &PrometheusHandle, method: &http::Method, path: &str) -> Response<Full<Bytes>> {
    let plain = |status: http::StatusCode, body: String| {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        response
    };
    let text = http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
    if path != PATH {
        let mut response = plain(
            http::StatusCode::NOT_FOUND,
            format!("not found: metrics are served at {PATH}\n"),
        );
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, text);
        return response;
    }
    if method != http::Method::GET {
        let mut response = plain(
            http::StatusCode::METHOD_NOT_ALLOWED,
            format!("method {method} not allowed: use GET\n"),
        );
        response
            .headers_mut()
            .insert(http::header::ALLOW, http::HeaderValue::from_static("GET"));
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, text);
        return response;
    }
    let mut response = plain(http::StatusCode::OK, handle.render());
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, text);
    response
}

/// HELP lines of the RPC metrics.
fn describe_rpc() {
    use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        RPC_HANDLED,
        "gRPC calls completed, by method and status code."
    );
    describe_histogram!(
        RPC_SECONDS,
        Unit::Seconds,
        "gRPC call latency to the end of the response stream."
    );
    describe_gauge!(RPC_IN_FLIGHT, "gRPC calls and streams in progress.");
}

/// Adds one to a gauge on creation and takes it away on drop.
#[derive(Debug)]
pub struct GaugeGuard {
    gauge: ::metrics::Gauge,
}

impl GaugeGuard {
    /// Adds one to the gauge `name` until the guard is dropped.
    pub fn new(name: &'static str) -> Self {
        let gauge = ::metrics::gauge!(name);
        gauge.increment(1.0);
        Self { gauge }
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.gauge.decrement(1.0);
    }
}

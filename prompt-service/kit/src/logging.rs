//! Tracing setup and the per-request span.

use tonic::body::Body;
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            other => Err(format!(
                "unknown log format {other:?} (expected text or json)"
            )),
        }
    }
}

/// Installs the global subscriber: `RUST_LOG` filter (default `info`), logs
/// on stderr so stdout stays free for command output, and OTLP trace export
/// when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (see [`crate::flush_traces`]).
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let registry = tracing_subscriber::registry()
        .with(filter)
        .with(crate::otlp::layer());
    let result = match format {
        LogFormat::Text => registry
            .with(fmt::layer().with_writer(std::io::stderr).with_target(false))
            .try_init(),
        LogFormat::Json => registry
            .with(
                fmt::layer()
                    .json()
                    .with_writer(std::io::stderr)
                    .with_current_span(true),
            )
            .try_init(),
    };
    // A second init (tests) keeps the first subscriber.
    if result.is_ok()
        && let Some(endpoint) = crate::otlp::endpoint()
    {
        tracing::info!(%endpoint, "exporting traces over OTLP/HTTP");
    }
}

/// The request header that names the session a call is about. Clients send
/// it on session RPCs; a Kubernetes deployment routes on it (Envoy ring hash,
/// deploy/k8s), and the request span records it.
pub const SESSION_KEY_HEADER: &str = "x-openclaw-session-key";

/// The span every request runs in: the gRPC method path, the session key
/// when the client sent [`SESSION_KEY_HEADER`], and an empty `session_id`
/// that the handler fills in with [`record_session_id`] once it knows it.
pub fn request_span(req: &http::Request<Body>) -> tracing::Span {
    let session_key = req
        .headers()
        .get(SESSION_KEY_HEADER)
        .and_then(|v| v.to_str().ok());
    tracing::info_span!(
        "grpc",
        method = %req.uri().path(),
        session_key,
        session_id = tracing::field::Empty,
    )
}

/// Records the session id on the current request span (call it from a
/// handler, where that span is current; elsewhere it does nothing).
pub fn record_session_id(session_id: &str) {
    tracing::Span::current().record("session_id", session_id);
}

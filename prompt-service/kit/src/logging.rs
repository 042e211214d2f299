//! Tracing setup, the per-request span and the line that reports a failed
//! call at the level its status code deserves.

use std::{io::IsTerminal, time::Duration};

use tonic::{Code, body::Body};
use tower_http::{
    classify::{GrpcErrorsAsFailures, GrpcFailureClass, SharedClassifier},
    trace::{DefaultOnBodyChunk, DefaultOnEos, DefaultOnRequest, DefaultOnResponse, TraceLayer},
};
use tracing::Level;
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
    init_tracing_to(format, std::io::stderr);
}

/// [`init_tracing`] writing log lines through `writer` (agent-service passes one that
/// redacts secrets).
pub fn init_tracing_to<W>(format: LogFormat, writer: W)
where
    W: for<'a> fmt::MakeWriter<'a> + Send + Sync + 'static,
{
    init_tracing_with(format, writer, "info");
}

/// [`init_tracing_to`] with `default_filter` (an `EnvFilter` directive such
/// as `warn`) where `RUST_LOG` is unset.
pub fn init_tracing_with<W>(format: LogFormat, writer: W, default_filter: &str)
where
    W: for<'a> fmt::MakeWriter<'a> + Send + Sync + 'static,
{
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let registry = tracing_subscriber::registry()
        .with(filter)
        .with(crate::otlp::layer());
    let result = match format {
        LogFormat::Text => registry
            .with(
                fmt::layer()
                    .with_writer(writer)
                    .with_target(false)
                    // Colour only for a person at a terminal: a file or a
                    // pipe gets plain text.
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                fmt::layer()
                    .json()
                    .with_writer(writer)
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

/// The request span layer both servers put outermost: [`request_span`] for
/// every call, and a failed call logged by [`OutcomeLog`].
pub type RequestTraceLayer = TraceLayer<
    SharedClassifier<GrpcErrorsAsFailures>,
    fn(&http::Request<Body>) -> tracing::Span,
    DefaultOnRequest,
    DefaultOnResponse,
    DefaultOnBodyChunk,
    DefaultOnEos,
    OutcomeLog,
>;

/// See [`RequestTraceLayer`].
pub fn trace_layer() -> RequestTraceLayer {
    TraceLayer::new_for_grpc()
        .make_span_with(request_span as fn(&_) -> _)
        .on_failure(OutcomeLog)
}

/// Logs a call that did not end OK, at [`failure_level`] of its code.
/// tower-http's default logs every non-OK code at ERROR, so a client asking
/// for a session that does not exist would page whoever watches errors.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutcomeLog;

impl tower_http::trace::OnFailure<GrpcFailureClass> for OutcomeLog {
    fn on_failure(&mut self, class: GrpcFailureClass, latency: Duration, _span: &tracing::Span) {
        let latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
        let (code, message) = match &class {
            GrpcFailureClass::Status(status) => (
                Code::from(status.code_raw()),
                status.message().unwrap_or_default().to_owned(),
            ),
            // The response body failed while being sent: the connection
            // broke, mostly because the client went away.
            GrpcFailureClass::Error(error) => (Code::Cancelled, error.clone()),
            // A class tower-http adds later: loudly, until it is placed here.
            _ => (Code::Unknown, class.to_string()),
        };
        let code_name = crate::rpc_metrics::code_name(code);
        macro_rules! log {
            ($level:expr) => {
                tracing::event!($level, grpc_code = code_name, grpc_message = %message, latency_ms, "call failed")
            };
        }
        match failure_level(code) {
            Level::ERROR => log!(Level::ERROR),
            Level::WARN => log!(Level::WARN),
            Level::INFO => log!(Level::INFO),
            Level::DEBUG => log!(Level::DEBUG),
            _ => log!(Level::TRACE),
        }
    }
}

/// How loudly a call that ended with `code` is logged. ERROR is kept for
/// faults of the server or of what it depends on, the codes an operator
/// must act on; WARN for limits being hit and refused credentials, worth a
/// look when they pile up; INFO for the caller's own mistakes and choices
/// (a bad field, an unknown session or health service name, its deadline,
/// its cancellation), which are the caller's to fix.
pub fn failure_level(code: Code) -> Level {
    match code {
        Code::Unknown | Code::Internal | Code::DataLoss | Code::Unavailable => Level::ERROR,
        Code::ResourceExhausted | Code::Unauthenticated | Code::PermissionDenied => Level::WARN,
        Code::Ok
        | Code::Cancelled
        | Code::InvalidArgument
        | Code::DeadlineExceeded
        | Code::NotFound
        | Code::AlreadyExists
        | Code::FailedPrecondition
        | Code::Aborted
        | Code::OutOfRange
        | Code::Unimplemented => Level::INFO,
    }
}

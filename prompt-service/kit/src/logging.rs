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
/// on stderr so stdout stays free for command output.
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let registry = tracing_subscriber::registry().with(filter);
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
    drop(result);
}

/// The span every request runs in: the gRPC method path.
pub fn request_span(req: &http::Request<Body>) -> tracing::Span {
    tracing::info_span!("grpc", method = %req.uri().path())
}

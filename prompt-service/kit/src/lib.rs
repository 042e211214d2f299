//! gRPC serving plumbing shared by prompt-service and agent-service.
//!
//! What both binaries need identically: the request size limit that answers
//! RESOURCE_EXHAUSTED, one tracing span per request, per-RPC metrics and the
//! Prometheus endpoint to which each service adds its own metrics
//! ([`metrics`]), health and reflection services, SIGTERM/SIGINT handling
//! with a bounded drain, listen-address parsing and the `healthcheck` probe
//! used by container health checks. And the security and overload layers:
//! bearer-token and client-certificate authentication ([`auth`]), TLS from
//! PEM files ([`tls`]), the refusal to serve other hosts unauthenticated
//! ([`security`]), load shedding ([`overload`]) and per-call deadlines
//! ([`deadline`]).
//!
//! # Layer order
//!
//! Both servers stack the layers the same way, outermost first:
//!
//! 1. the request span ([`trace_layer`]): every refusal below is logged
//!    inside its call's span, and a failed call at the level its code
//!    deserves ([`failure_level`]);
//! 2. [`RpcMetricsLayer`]: every refusal below is counted with its status
//!    code (UNAUTHENTICATED, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED);
//! 3. [`AuthLayer`]: before load shedding, so callers without credentials
//!    are turned away without ever holding a slot that callers with them
//!    need, and cost one SHA-256 each;
//! 4. [`OverloadLayer`]: admitted calls take a slot or get
//!    RESOURCE_EXHAUSTED at once;
//! 5. [`DeadlineLayer`]: the clock of an admitted call, covering the
//!    reading of its request body too; it must sit outside
//!    [`RequestSizeLimitLayer`], which calls inward only once it has read
//!    the message prefix;
//! 6. [`RequestSizeLimitLayer`];
//! 7. [`MalformedRequestLayer`], next to the services: a request body tonic
//!    cannot read answers INVALID_ARGUMENT instead of INTERNAL, and only
//!    the services' own decoding is inside it.
//!
//! gRPC health passes 3 and 4 (open, exempt from shedding), so probes
//! answer without a token and while the server is full. TLS sits below all
//! of them, in the transport.
//!
//! It holds no service logic and no prompt or agent types.

pub mod auth;
pub mod connections;
pub mod deadline;
mod gateway;
mod hardening;
mod health;
mod layer;
mod limit;
mod logging;
mod malformed;
mod messages;
mod methods;
pub mod metrics;
mod otlp;
pub mod overload;
mod rpc_metrics;
mod runtime;
pub mod security;
mod server_args;
mod shutdown;
#[cfg(feature = "test-metrics")]
pub mod test_metrics;
#[cfg(feature = "test-pki")]
pub mod test_pki;
pub mod tls;

pub use auth::{AuthLayer, AuthPolicy, BearerToken, TokenSet};
pub use connections::{ConnectionLimits, LimitedListener};
pub use deadline::DeadlineLayer;
pub use gateway::gateway_unavailable;
pub use hardening::{close_inherited_descriptors, deny_same_user_inspection};
pub use health::{
    HealthServices, ListedServices, error_chain, health_services, listed_services, probe,
    probe_with,
};
pub use limit::{RequestSizeLimit, RequestSizeLimitLayer};
pub use logging::{
    LogFormat, OutcomeLog, RequestTraceLayer, SESSION_KEY_HEADER, failure_level, init_tracing,
    init_tracing_to, init_tracing_with, record_session_id, request_span, trace_layer,
};
pub use malformed::{MalformedRequest, MalformedRequestLayer};
pub use messages::{MessageSettings, OwnRoute};
pub use otlp::flush_traces;
pub use overload::{OverloadConfig, OverloadLayer};
pub use rpc_metrics::{RpcMetrics, RpcMetricsLayer};
pub use runtime::{RuntimeStartError, runtime};
pub use security::{ClientFlags, ClientSecurity, SecurityArgs, SecurityFlags, ServerSecurity};
pub use server_args::{OverloadArgs, ServerArgs, healthcheck, refuse};
pub use shutdown::{drain, shutdown_signal};
pub use tls::{ClientTls, ServerTls};
pub use tonic_reflection::server::Error as ReflectionError;

use std::net::SocketAddr;

/// Default request message limit (4 MiB, tonic's own default).
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// HTTP/2 keepalive of both servers: a PING after this much silence on a
/// connection. A peer that vanished (no FIN, say a dropped VM) is found
/// within interval + [`HTTP2_KEEPALIVE_TIMEOUT`], and its open streams, with
/// their overload slots, are dropped then instead of after TCP's own
/// keepalive (minutes).
pub const HTTP2_KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a keepalive PING may go unanswered before the connection closes.
pub const HTTP2_KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Accepted connections with `TCP_NODELAY` and keepalive. Without nodelay a
/// response that ends in a small segment waits for the client's delayed ACK
/// (about 40 ms on Linux); measured: p50 of a unary call at concurrency 1
/// went from 44 ms to well under a millisecond.
pub fn incoming(listener: tokio::net::TcpListener) -> tonic::transport::server::TcpIncoming {
    tonic::transport::server::TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(std::time::Duration::from_secs(60)))
}

/// Binds a TCP listener on `addr` for the listener `flag` configures; a failure names both
/// (`cannot listen on 127.0.0.1:50052 (--listen): Address already in use`), so an operator
/// knows which of a binary's listeners could not start.
pub async fn bind(addr: SocketAddr, flag: &str) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        std::io::Error::new(e.kind(), format!("cannot listen on {addr} ({flag}): {e}"))
    })
}

/// Parses a `HOST:PORT` listen address, accepting `localhost`.
pub fn parse_listen(addr: &str) -> Result<SocketAddr, String> {
    let trimmed = addr.trim();
    let normalized = match trimmed.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => trimmed.to_owned(),
    };
    normalized
        .parse()
        .map_err(|e| format!("invalid listen address {addr:?} (expected HOST:PORT): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(parse_listen("127.0.0.1:50051").map(|a| a.port()), Ok(50051));
        assert_eq!(
            parse_listen("localhost:7").map(|a| a.ip().is_loopback()),
            Ok(true)
        );
        assert_eq!(parse_listen("[::1]:9").map(|a| a.port()), Ok(9));
        assert!(parse_listen("nope").is_err());
    }
}

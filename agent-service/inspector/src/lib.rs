//! A read-only web inspector of agent-service, for operators.
//!
//! [`serve`] answers HTTP on a listener of its own: one page (its HTML, script and styles are
//! compiled into the binary) and a JSON API over the [`agent_runtime::Runtime`] the gRPC API
//! serves, through the same runtime calls (agents, sessions, transcripts, prompt previews,
//! session events). Nothing in it writes: there is no route that changes a session.
//!
//! What the runtime does not keep, the prompt each model call sent, comes from two observers:
//! [`record::RecordingPromptSource`] wraps the prompt source and remembers recent renders by
//! stable-prefix hash, and [`turns::Observer`] follows each session's events and keeps its recent
//! model calls joined with their renders. Both are in memory and bounded; the cache-break view
//! compares consecutive calls from them.
//!
//! Authentication is the gRPC API's bearer tokens: `authorization: Bearer <token>`, or the
//! cookie the page sets after it is opened once as `/?token=<token>` (browsers cannot put a
//! header on an event stream). Without tokens the inspector may only listen on loopback
//! ([`check_listen`]) and answers only requests addressed to a loopback name or its listen
//! address (a DNS-rebinding page names its own host). Every response carries a strict Content-Security-Policy, and the page
//! builds its DOM from text nodes only.

mod api;
mod auth;
mod events;
mod layers;
pub mod record;
pub mod sections;
pub mod turns;

use std::{future::Future, net::SocketAddr, sync::Arc};

use agent_runtime::Runtime;
use service_kit::TokenSet;
use tokio::net::TcpListener;

pub use record::{RecordingPromptSource, RenderLog};

/// What the inspector serves and whom it lets in.
#[derive(Debug, Clone)]
pub struct Inspector {
    runtime: Arc<Runtime>,
    observer: Arc<turns::Observer>,
    tokens: Option<TokenSet>,
}

impl Inspector {
    /// An inspector of `runtime`. `renders` must be the log of the [`RecordingPromptSource`]
    /// the runtime was started with (else no turn shows its prompt); `tokens` are the gRPC
    /// API's bearer tokens (None: no token is asked for).
    pub fn new(runtime: Arc<Runtime>, renders: Arc<RenderLog>, tokens: Option<TokenSet>) -> Self {
        let observer = turns::Observer::new(Arc::clone(&runtime), renders);
        Self {
            runtime,
            observer,
            tokens,
        }
    }
}

/// Refuses an address other hosts can reach unless bearer tokens are configured: the
/// inspector shows every transcript.
pub fn check_listen(addr: SocketAddr, tokens: Option<&TokenSet>) -> Result<(), String> {
    if addr.ip().is_loopback() || tokens.is_some() {
        return Ok(());
    }
    Err(format!(
        "refusing to serve the inspector on {addr} without bearer tokens: anyone who can reach \
         it could read every transcript. Listen on a loopback address, or configure tokens \
         (--tokens-file / AGENT_SERVICE_TOKENS_FILE)"
    ))
}

/// Errors that stop the inspector.
#[derive(Debug, thiserror::Error)]
pub enum InspectorError {
    /// [`check_listen`] refused the address.
    #[error("{0}")]
    Insecure(String),
    /// The listener failed.
    #[error("inspector listener: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves `inspector` on `listener`, holding at most `connections.max_connections` at once
/// and closing idle ones, until `shutdown` resolves (open event streams end then).
pub async fn serve(
    listener: TcpListener,
    inspector: Inspector,
    connections: service_kit::ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), InspectorError> {
    let addr = listener.local_addr()?;
    check_listen(addr, inspector.tokens.as_ref()).map_err(InspectorError::Insecure)?;
    let discovery = inspector.observer.spawn_discovery();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let state = api::State {
        runtime: inspector.runtime,
        observer: inspector.observer,
        stopping: stop_rx,
    };
    let app = api::router(state, auth::Auth::new(inspector.tokens, addr));
    tracing::info!(%addr, "inspector listening");
    let listener = service_kit::LimitedListener::new(listener, connections);
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        })
        .await;
    discovery.abort();
    result.map_err(InspectorError::Io)
}

//! Load shedding: a server-wide cap on calls in progress that answers
//! RESOURCE_EXHAUSTED at once instead of queueing.
//!
//! Two pools, chosen by method from the compiled-in descriptors:
//! - **requests**: unary calls. A slot is held from admission until the
//!   response body has ended, which for a unary call is when the handler is
//!   done.
//! - **streams**: calls with a streaming side (`Run`, `WatchSession`,
//!   `GetTranscript`, reflection). A slot is held for the whole stream, so
//!   the cap bounds the open streams; long streams can only exhaust their
//!   own pool, never the unary calls', and a stream whose client vanished
//!   frees its slot when HTTP/2 keepalive (set by the servers) declares the
//!   connection dead.
//!
//! gRPC health bypasses both pools: a probe must answer while the server is
//! saturated, or an orchestrator would restart a server that is merely busy.
//!
//! Why not tower's `ConcurrencyLimit` + `LoadShed`: its permit is released
//! when the response *future* completes, so a stream would count only until
//! its first message, and tonic's own `concurrency_limit_per_connection` is
//! per connection (a client opens another connection and gets a new quota).

use std::{collections::HashSet, sync::Arc, task::Poll};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;
use tower::Layer;

use crate::layer::{
    Inner, Layered, Observed, Observer, OnCall, PolledFrame, Request, ResponseFuture,
};

/// Default cap on unary calls in progress, per server.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 256;
/// Default cap on open streaming calls, per server.
pub const DEFAULT_MAX_CONCURRENT_STREAMS: usize = 256;

/// The two caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverloadConfig {
    /// Unary calls in progress at once.
    pub max_concurrent_requests: usize,
    /// Streaming calls open at once.
    pub max_concurrent_streams: usize,
}

impl Default for OverloadConfig {
    fn default() -> Self {
        Self {
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
        }
    }
}

/// One pool of slots.
#[derive(Debug)]
struct Pool {
    slots: Arc<Semaphore>,
    limit: usize,
    what: &'static str,
}

impl Pool {
    fn new(limit: usize, what: &'static str) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(limit)),
            limit,
            what,
        }
    }
}

#[derive(Debug)]
struct Shared {
    requests: Pool,
    streams: Pool,
    /// `/package.Service/Method` of every method with a streaming side.
    streaming: HashSet<String>,
}

/// Tower layer adding [`Overload`].
#[derive(Debug, Clone)]
pub struct OverloadLayer {
    shared: Arc<Shared>,
}

impl OverloadLayer {
    /// Caps calls as `config` says. Every service built from this layer
    /// shares the same slots (tonic clones the layered service per
    /// connection).
    pub fn new(config: OverloadConfig) -> Self {
        // A decoding failure (a bug, logged) would count streams as unary
        // calls, which still bounds them.
        let streaming = crate::methods::served_methods()
            .into_iter()
            .filter(|m| m.client_streaming || m.server_streaming)
            .map(|m| m.path)
            .collect();
        Self {
            shared: Arc::new(Shared {
                requests: Pool::new(config.max_concurrent_requests, "requests"),
                streams: Pool::new(config.max_concurrent_streams, "streams"),
                streaming,
            }),
        }
    }
}

impl OnCall for OverloadLayer {
    fn on_call<S: Inner>(&self, inner: &mut S, req: Request) -> ResponseFuture<S::Error> {
        let path = req.uri().path();
        if path.starts_with("/grpc.health.v1.Health/") {
            return Box::pin(inner.call(req));
        }
        let pool = if self.shared.streaming.contains(path) {
            &self.shared.streams
        } else {
            &self.shared.requests
        };
        let Ok(permit) = Arc::clone(&pool.slots).try_acquire_owned() else {
            // Debug, not warn: under overload a line per shed call would add
            // log volume exactly when the server has least to spare. Sheds
            // are counted in grpc_server_handled_total{grpc_code="ResourceExhausted"}.
            tracing::debug!(
                pool = pool.what,
                limit = pool.limit,
                "request shed: server at capacity"
            );
            let status = Status::resource_exhausted(format!(
                "server at capacity: {} concurrent {} in progress; retry with backoff",
                pool.limit, pool.what
            ));
            return Box::pin(std::future::ready(Ok(status.into_http())));
        };
        let call = inner.call(req);
        Box::pin(async move {
            let response = call.await?;
            Ok(response.map(|body| Observed::body(body, Held(Some(permit)))))
        })
    }
}

impl<S> Layer<S> for OverloadLayer {
    type Service = Overload<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Layered::new(self.clone(), inner)
    }
}

/// See the module docs.
pub type Overload<S> = Layered<OverloadLayer, S>;

/// A call's slot, held until its response body ends or is dropped.
struct Held(Option<OwnedSemaphorePermit>);

impl Observer for Held {
    fn observe(&mut self, polled: &PolledFrame) {
        if let Poll::Ready(None) = polled {
            self.0 = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_methods_come_from_the_descriptors() {
        let layer = OverloadLayer::new(OverloadConfig::default());
        let streaming = &layer.shared.streaming;
        for path in [
            "/openclaw.agent.v1.AgentService/Run",
            "/openclaw.agent.v1.AgentService/WatchSession",
            "/openclaw.agent.v1.AgentService/GetTranscript",
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        ] {
            assert!(streaming.contains(path), "{path}");
        }
        for path in [
            "/openclaw.agent.v1.AgentService/Send",
            "/openclaw.prompt.v1.PromptService/RenderSystemPrompt",
        ] {
            assert!(!streaming.contains(path), "{path}");
        }
    }
}

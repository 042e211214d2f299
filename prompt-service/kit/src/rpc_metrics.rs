//! Per-RPC metrics: a count and a latency histogram by method and status
//! code, and a gauge of calls in progress.
//!
//! The status code of a gRPC call is not known when the handler returns: a
//! failure before any message comes as `grpc-status` in the response headers
//! (trailers-only), everything else in the trailers after the last message of
//! the body. So the layer wraps the response body and records when the
//! trailers pass through, which also makes the latency of a streaming call
//! (`Run`, `GetTranscript`) its whole duration. A call whose future or body
//! is dropped first (client gone, deadline) is recorded as CANCELLED.

use std::{collections::HashSet, sync::Arc, task::Poll, time::Instant};

use tonic::Code;
use tower::Layer;

use crate::layer::{
    Inner, Layered, Observed, Observer, OnCall, PolledFrame, Request, ResponseFuture,
};
use crate::metrics::{RPC_HANDLED, RPC_IN_FLIGHT, RPC_SECONDS};

/// Label value for paths that name no method we serve. Unknown paths are
/// folded into one series so a client sending made-up paths cannot create
/// time series without bound.
const UNKNOWN: &str = "unknown";

/// Tower layer adding [`RpcMetrics`].
#[derive(Debug, Clone)]
pub struct RpcMetricsLayer {
    known: Arc<HashSet<String>>,
}

impl RpcMetricsLayer {
    /// Labels the methods of our protos, gRPC health and reflection by name;
    /// any other path is labelled `unknown`.
    pub fn new() -> Self {
        // A decoding failure (a bug, logged) only costs labels.
        let known = crate::methods::served_methods()
            .into_iter()
            .map(|m| m.path)
            .collect();
        Self {
            known: Arc::new(known),
        }
    }
}

impl Default for RpcMetricsLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl OnCall for RpcMetricsLayer {
    fn on_call<S: Inner>(&self, inner: &mut S, req: Request) -> ResponseFuture<S::Error> {
        let path = req.uri().path();
        let (service, method) = match path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .filter(|_| self.known.contains(path))
        {
            Some((service, method)) => (service.to_owned(), method.to_owned()),
            None => (UNKNOWN.to_owned(), UNKNOWN.to_owned()),
        };
        let mut call = Call::start(service, method);
        let future = inner.call(req);
        Box::pin(async move {
            let response = match future.await {
                Ok(response) => response,
                Err(error) => {
                    call.finish(Code::Unknown);
                    return Err(error);
                }
            };
            if let Some(code) = response.headers().get("grpc-status") {
                call.finish(Code::from_bytes(code.as_bytes()));
                return Ok(response);
            }
            Ok(response.map(|body| Observed::body(body, call)))
        })
    }
}

impl<S> Layer<S> for RpcMetricsLayer {
    type Service = RpcMetrics<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Layered::new(self.clone(), inner)
    }
}

/// See the module docs.
pub type RpcMetrics<S> = Layered<RpcMetricsLayer, S>;

/// One call being measured; records exactly once.
struct Call {
    service: String,
    method: String,
    started: Instant,
    finished: bool,
}

impl Call {
    fn start(service: String, method: String) -> Self {
        ::metrics::gauge!(RPC_IN_FLIGHT, "grpc_service" => service.clone(), "grpc_method" => method.clone())
            .increment(1.0);
        Self {
            service,
            method,
            started: Instant::now(),
            finished: false,
        }
    }

    fn finish(&mut self, code: Code) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let (service, method) = (self.service.clone(), self.method.clone());
        let code = code_name(code);
        ::metrics::gauge!(RPC_IN_FLIGHT, "grpc_service" => service.clone(), "grpc_method" => method.clone())
            .decrement(1.0);
        ::metrics::counter!(RPC_HANDLED, "grpc_service" => service.clone(), "grpc_method" => method.clone(), "grpc_code" => code)
            .increment(1);
        ::metrics::histogram!(RPC_SECONDS, "grpc_service" => service, "grpc_method" => method, "grpc_code" => code)
            .record(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.finish(Code::Cancelled);
    }
}

/// The response body records the call when its trailers pass.
impl Observer for Call {
    fn observe(&mut self, polled: &PolledFrame) {
        match polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(code) = frame.trailers_ref().and_then(|t| t.get("grpc-status")) {
                    self.finish(Code::from_bytes(code.as_bytes()));
                }
            }
            Poll::Ready(Some(Err(status))) => self.finish(status.code()),
            // A gRPC body always ends with trailers; without them the
            // outcome is not known.
            Poll::Ready(None) => self.finish(Code::Unknown),
            Poll::Pending => {}
        }
    }
}

/// The canonical name of a status code, as the gRPC spec spells it.
pub(crate) fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

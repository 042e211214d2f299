//! Per-call deadlines: the client's `grpc-timeout`, capped by an optional
//! server limit, ending the call with DEADLINE_EXCEEDED.
//!
//! tonic already reads `grpc-timeout`, but only for the response future
//! (the handler up to its first response headers), and it answers CANCELLED
//! "Timeout expired". This layer answers DEADLINE_EXCEEDED, as the gRPC
//! spec says, and also bounds the response body: a stream still open at
//! the deadline ends with DEADLINE_EXCEEDED in its trailers and its
//! producer is dropped. Its clock starts in `call`, before tonic's own
//! timer, so it always fires first.
//!
//! A tonic client runs the same `grpc-timeout` timer on its side, so a
//! unary call that gets no answer before its deadline usually ends there
//! first, as CANCELLED; the server still stops the call's work at the
//! deadline and frees its overload slot.

use std::{
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use tonic::{Status, body::Body};
use tower::Layer;

use crate::layer::{Inner, Layered, OnCall, PolledFrame, Request, ResponseFuture};

/// The gRPC deadline header.
const GRPC_TIMEOUT: &str = "grpc-timeout";

/// Tower layer adding [`Deadline`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DeadlineLayer {
    limit: Option<Duration>,
}

impl DeadlineLayer {
    /// Honours each call's `grpc-timeout`; with `limit`, no call runs
    /// longer than it either (except gRPC health, whose `Watch` streams
    /// stay open as long as their clients want).
    pub fn new(limit: Option<Duration>) -> Self {
        Self { limit }
    }
}

impl OnCall for DeadlineLayer {
    fn on_call<S: Inner>(&self, inner: &mut S, req: Request) -> ResponseFuture<S::Error> {
        let client = req
            .headers()
            .get(GRPC_TIMEOUT)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_grpc_timeout);
        // The server's limit is for work; a health Watch stream is no work
        // and may stay open (its client's own deadline still applies).
        let limit = self
            .limit
            .filter(|_| !req.uri().path().starts_with("/grpc.health.v1.Health/"));
        let (timeout, whose) = match (client, limit) {
            (None, None) => return Box::pin(inner.call(req)),
            (Some(c), Some(l)) if l < c => (l, "the server's limit"),
            (Some(c), _) => (c, "its grpc-timeout"),
            (None, Some(l)) => (l, "the server's limit"),
        };
        let deadline = Instant::now() + timeout;
        let message = format!(
            "deadline exceeded: the call ran past {whose} of {}",
            human(timeout)
        );
        let call = inner.call(req);
        Box::pin(async move {
            match tokio::time::timeout_at(deadline, call).await {
                Err(_elapsed) => {
                    tracing::info!(
                        timeout_ms = millis(timeout),
                        "call ended: deadline exceeded"
                    );
                    Ok(Status::deadline_exceeded(message).into_http())
                }
                Ok(Err(error)) => Err(error),
                Ok(Ok(response)) => Ok(response.map(|body| {
                    Body::new(Bounded {
                        inner: Some(body),
                        sleep: Box::pin(tokio::time::sleep_until(deadline)),
                        message,
                        timeout,
                    })
                })),
            }
        })
    }
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Layered::new(*self, inner)
    }
}

/// See the module docs.
pub type Deadline<S> = Layered<DeadlineLayer, S>;

/// A response body that ends with DEADLINE_EXCEEDED trailers at the deadline.
struct Bounded {
    /// None once ended (by itself or by the deadline).
    inner: Option<Body>,
    sleep: Pin<Box<Sleep>>,
    message: String,
    timeout: Duration,
}

impl HttpBody for Bounded {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        if let Poll::Ready(frame) = Pin::new(inner).poll_frame(cx) {
            if frame.is_none() {
                self.inner = None;
            }
            return Poll::Ready(frame);
        }
        if self.sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        // Dropping the body drops the stream that feeds it: the handler's
        // work for this call stops here.
        self.inner = None;
        tracing::info!(
            timeout_ms = millis(self.timeout),
            "stream ended: deadline exceeded"
        );
        let status = Status::deadline_exceeded(std::mem::take(&mut self.message));
        let mut trailers = http::HeaderMap::new();
        match status.add_header(&mut trailers) {
            Ok(()) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
            Err(status) => Poll::Ready(Some(Err(status))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

/// `grpc-timeout`: at most 8 digits and a unit (H M S m u n).
pub(crate) fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    let split = value.len().checked_sub(1)?;
    let (digits, unit) = value.split_at_checked(split)?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn human(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_values() {
        assert_eq!(parse_grpc_timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse_grpc_timeout("3S"), Some(Duration::from_secs(3)));
        assert_eq!(parse_grpc_timeout("2M"), Some(Duration::from_secs(120)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_grpc_timeout("7u"), Some(Duration::from_micros(7)));
        assert_eq!(
            parse_grpc_timeout("99999999n"),
            Some(Duration::from_nanos(99_999_999))
        );
        for bad in ["", "m", "123456789S", "12x", "-1S", "1.5S", "é"] {
            assert_eq!(parse_grpc_timeout(bad), None, "{bad:?}");
        }
        assert_eq!(human(Duration::from_millis(250)), "250ms");
        assert_eq!(human(Duration::from_secs(30)), "30s");
    }
}

//! A request body the server cannot read answers INVALID_ARGUMENT.
//!
//! tonic decodes a unary request before the handler runs, and answers
//! INTERNAL when it cannot: bytes that are not the method's protobuf
//! message ("failed to decode Protobuf message"), a bad gRPC frame (an
//! unknown compression flag, a body that ends inside its message) or no
//! message at all. Those are the caller's mistakes, and INTERNAL would also
//! be logged as a server fault. The protobuf error surfaces only inside the
//! codec, which the generated code of every service (and health) builds
//! itself, so this layer decides from outside instead, without reading any
//! message text:
//!
//! tonic reads a unary request's body to its very end (its trailers) before
//! it calls the handler. So a call whose body was never read to a clean end
//! (whole frames, at least one message) never reached its handler; if it
//! failed INTERNAL, reading the request failed, and the answer becomes
//! INVALID_ARGUMENT naming the message type the method expects. A handler's
//! own INTERNAL always comes after a clean end and passes unchanged.
//!
//! Methods whose client streams (reflection) are left alone: their handler
//! runs while the body is still being read.

use std::{
    collections::HashMap,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::{Code, Status, body::Body};
use tower::{Layer, Service};

/// Bytes of the gRPC message prefix: a compression flag and a u32 length.
const PREFIX_LEN: usize = 5;

/// Tower layer adding [`MalformedRequest`].
#[derive(Debug, Clone)]
pub struct MalformedRequestLayer {
    /// Request message type by path, for the methods with a unary request.
    unary: Arc<HashMap<String, String>>,
}

impl MalformedRequestLayer {
    /// Covers every method with a unary request in our descriptor sets
    /// (both services and gRPC health).
    pub fn new() -> Self {
        let unary = crate::methods::served_methods()
            .into_iter()
            .filter(|m| !m.client_streaming)
            .map(|m| (m.path, m.input_type))
            .collect();
        Self {
            unary: Arc::new(unary),
        }
    }
}

impl Default for MalformedRequestLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Layer<S> for MalformedRequestLayer {
    type Service = MalformedRequest<S>;
    fn layer(&self, inner: S) -> Self::Service {
        MalformedRequest {
            inner,
            unary: Arc::clone(&self.unary),
        }
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct MalformedRequest<S> {
    inner: S,
    unary: Arc<HashMap<String, String>>,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S> Service<http::Request<Body>> for MalformedRequest<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let Some(input_type) = self.unary.get(req.uri().path()).cloned() else {
            return Box::pin(self.inner.call(req));
        };
        let read_whole = Arc::new(AtomicBool::new(false));
        let req = req.map(|body| {
            Body::new(Watched {
                inner: body,
                framing: Framing::default(),
                read_whole: Arc::clone(&read_whole),
            })
        });
        let future = self.inner.call(req);
        Box::pin(async move {
            let response = future.await?;
            let refused_unread = !read_whole.load(Ordering::Acquire)
                && Status::from_header_map(response.headers())
                    .is_some_and(|status| status.code() == Code::Internal);
            if !refused_unread {
                return Ok(response);
            }
            let detail = Status::from_header_map(response.headers())
                .map(|status| status.message().to_owned())
                .unwrap_or_default();
            tracing::debug!(%input_type, %detail, "request body refused: not a readable message");
            Ok(Status::invalid_argument(format!(
                "the request body is not a valid {input_type} message: {detail}"
            ))
            .into_http())
        })
    }
}

/// Where a request body is in its gRPC frames.
#[derive(Debug, Default)]
struct Framing {
    prefix: [u8; PREFIX_LEN],
    /// Bytes of the current prefix seen so far.
    prefix_seen: usize,
    /// Bytes of the current message still to come.
    message_left: usize,
    /// Whole messages seen.
    messages: u64,
}

impl Framing {
    fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.message_left > 0 {
                let n = self.message_left.min(data.len());
                self.message_left -= n;
                data = &data[n..];
                if self.message_left == 0 {
                    self.messages += 1;
                }
                continue;
            }
            let n = (PREFIX_LEN - self.prefix_seen).min(data.len());
            self.prefix[self.prefix_seen..self.prefix_seen + n].copy_from_slice(&data[..n]);
            self.prefix_seen += n;
            data = &data[n..];
            if self.prefix_seen == PREFIX_LEN {
                self.prefix_seen = 0;
                let [_, a, b, c, d] = self.prefix;
                self.message_left = u32::from_be_bytes([a, b, c, d]) as usize;
                if self.message_left == 0 {
                    self.messages += 1;
                }
            }
        }
    }

    /// Whole frames only, and at least one message.
    fn complete(&self) -> bool {
        self.prefix_seen == 0 && self.message_left == 0 && self.messages > 0
    }
}

/// A request body that notes when it was read to a clean end.
struct Watched {
    inner: Body,
    framing: Framing,
    read_whole: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.framing.feed(data);
                }
            }
            Poll::Ready(None) => {
                if self.framing.complete() {
                    self.read_whole.store(true, Ordering::Release);
                }
            }
            Poll::Ready(Some(Err(_))) | Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framing(chunks: &[&[u8]]) -> Framing {
        let mut framing = Framing::default();
        for chunk in chunks {
            framing.feed(chunk);
        }
        framing
    }

    #[test]
    fn frames_are_followed_across_chunk_boundaries() {
        assert!(framing(&[&[0, 0, 0, 0, 2, 8, 1]]).complete());
        assert!(framing(&[&[0, 0], &[0, 0, 2, 8], &[1]]).complete());
        // An empty message is a message.
        assert!(framing(&[&[0, 0, 0, 0, 0]]).complete());
        assert!(framing(&[&[0, 0, 0, 0, 1, 8], &[0, 0, 0, 0, 0]]).complete());
        // No message, a cut prefix, a cut message.
        assert!(!framing(&[]).complete());
        assert!(!framing(&[&[0, 0, 0]]).complete());
        assert!(!framing(&[&[0, 0, 0, 0, 9, 1, 2]]).complete());
    }
}

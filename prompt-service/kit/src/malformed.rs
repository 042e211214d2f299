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
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::Poll,
};

use tonic::{Code, Status};
use tower::Layer;

use crate::layer::{
    Inner, Layered, Observed, Observer, OnCall, PolledFrame, Request, ResponseFuture,
};

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

impl OnCall for MalformedRequestLayer {
    fn on_call<S: Inner>(&self, inner: &mut S, req: Request) -> ResponseFuture<S::Error> {
        let Some(input_type) = self.unary.get(req.uri().path()).cloned() else {
            return Box::pin(inner.call(req));
        };
        let read_whole = Arc::new(AtomicBool::new(false));
        let req = req.map(|body| {
            let observer = ReadWhole {
                framing: Framing::default(),
                read_whole: Arc::clone(&read_whole),
            };
            Observed::body(body, observer)
        });
        let future = inner.call(req);
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

impl<S> Layer<S> for MalformedRequestLayer {
    type Service = MalformedRequest<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Layered::new(self.clone(), inner)
    }
}

/// See the module docs.
pub type MalformedRequest<S> = Layered<MalformedRequestLayer, S>;

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

/// Notes when a request body was read to a clean end.
struct ReadWhole {
    framing: Framing,
    read_whole: Arc<AtomicBool>,
}

impl Observer for ReadWhole {
    fn observe(&mut self, polled: &PolledFrame) {
        match polled {
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

//! Request size limit that answers RESOURCE_EXHAUSTED.
//!
//! tonic's own `max_decoding_message_size` rejects oversize messages with
//! OUT_OF_RANGE after buffering them. This layer reads only the 5-byte gRPC
//! length prefix of the first message and refuses an oversize request before
//! its body is read, with the status code our API promises (and a body
//! whose first byte is no compression flag, so no gRPC frame at all, gets
//! INVALID_ARGUMENT before its "length" is believed). tonic's limit
//! stays configured as a second guard for later messages of a stream.

use std::{
    collections::VecDeque,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::{Buf, Bytes};
use http_body::{Body as HttpBody, Frame};
use tonic::{Status, body::Body};
use tower::Layer;

use crate::layer::{Inner, Layered, OnCall, PolledFrame, Request, ResponseFuture};

/// Bytes of the gRPC message prefix: a compression flag and a u32 length.
const PREFIX_LEN: usize = 5;

/// Tower layer adding [`RequestSizeLimit`].
#[derive(Debug, Clone, Copy)]
pub struct RequestSizeLimitLayer {
    max_bytes: usize,
}

impl RequestSizeLimitLayer {
    /// Refuses request messages larger than `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        Self { max_bytes }
    }
}

impl OnCall for RequestSizeLimitLayer {
    fn on_call<S: Inner>(&self, inner: &mut S, req: Request) -> ResponseFuture<S::Error> {
        // Take the service that was driven to readiness; leave a fresh clone.
        let clone = inner.clone();
        let mut inner = std::mem::replace(inner, clone);
        let max_bytes = self.max_bytes;
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let (body, prefix) = peek_prefix(body).await;
            if let Some((flag, _)) = prefix.filter(|(flag, _)| *flag > 1) {
                // Not a gRPC message frame at all (say JSON posted to the
                // port): its "length" would be text read as a number.
                tracing::debug!(flag, "request refused: not a gRPC message frame");
                return Ok(Status::invalid_argument(format!(
                    "the request body is not a gRPC message: its first byte, the compression \
                     flag, is {flag} (0 or 1 expected)"
                ))
                .into_http());
            }
            if let Some(len) = prefix.map(|(_, len)| len).filter(|&len| len > max_bytes) {
                tracing::warn!(len, max_bytes, "request refused: message too large");
                return Ok(Status::resource_exhausted(format!(
                    "request message is {len} bytes; the limit is {max_bytes} bytes"
                ))
                .into_http());
            }
            inner.call(http::Request::from_parts(parts, body)).await
        })
    }
}

impl<S> Layer<S> for RequestSizeLimitLayer {
    type Service = RequestSizeLimit<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Layered::new(*self, inner)
    }
}

/// See the module docs.
pub type RequestSizeLimit<S> = Layered<RequestSizeLimitLayer, S>;

/// Reads frames until the 5-byte prefix is known, then returns a body that
/// replays what was read followed by the rest, and the prefix's compression
/// flag and declared length.
async fn peek_prefix(mut body: Body) -> (Body, Option<(u8, usize)>) {
    let mut buffered: VecDeque<Bytes> = VecDeque::new();
    let mut seen = 0usize;
    let mut trailers = None;
    while seen < PREFIX_LEN {
        match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => {
                    seen += data.len();
                    buffered.push_back(data);
                }
                Err(frame) => {
                    trailers = Some(frame);
                    break;
                }
            },
            // End of body or a transport error: let tonic report it.
            Some(Err(_)) | None => break,
        }
    }
    let len = (seen >= PREFIX_LEN).then(|| {
        let mut prefix = [0u8; PREFIX_LEN];
        let mut filled = 0;
        for chunk in &buffered {
            let mut c = chunk.clone();
            while filled < PREFIX_LEN && c.has_remaining() {
                prefix[filled] = c.get_u8();
                filled += 1;
            }
        }
        (
            prefix[0],
            u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize,
        )
    });
    let replay = Replay {
        buffered,
        trailers,
        inner: body,
    };
    (Body::new(replay), len)
}

/// A body that yields already-read frames before the rest of `inner`.
struct Replay {
    buffered: VecDeque<Bytes>,
    trailers: Option<Frame<Bytes>>,
    inner: Body,
}

impl HttpBody for Replay {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame {
        if let Some(data) = self.buffered.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        if let Some(frame) = self.trailers.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        Pin::new(&mut self.inner).poll_frame(cx)
    }
}

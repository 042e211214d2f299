//! Status messages without secrets: every `grpc-message` this server sends, in response
//! headers (an error before any message) or trailers (a stream that failed), has the
//! runtime's secret values replaced. An error text may quote what a provider or a command
//! said, and that may hold a key; this layer is the one place no such text gets past.

use std::pin::Pin;
use std::task::{Context, Poll};

use http::HeaderMap;
use http_body::{Body as HttpBody, Frame, SizeHint};
use openclaw_secrets::Redactor;
use tonic::{Status, body::Body};
use tower::{Layer, Service};

/// Tower layer adding [`RedactStatus`].
#[derive(Debug, Clone)]
pub struct RedactStatusLayer {
    redactor: Redactor,
}

impl RedactStatusLayer {
    /// Redacts with `redactor` (the runtime's).
    pub fn new(redactor: Redactor) -> Self {
        Self { redactor }
    }
}

impl<S> Layer<S> for RedactStatusLayer {
    type Service = RedactStatus<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RedactStatus {
            inner,
            redactor: self.redactor.clone(),
        }
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct RedactStatus<S> {
    inner: S,
    redactor: Redactor,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for RedactStatus<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: HttpBody<Data = bytes::Bytes> + Send + 'static,
    ResBody::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqBody>) -> Self::Future {
        let future = self.inner.call(req);
        let redactor = self.redactor.clone();
        Box::pin(async move {
            let response = future.await?;
            let (mut parts, body) = response.into_parts();
            if redactor.is_empty() {
                return Ok(http::Response::from_parts(parts, Body::new(body)));
            }
            redact_headers(&redactor, &mut parts.headers);
            let body = Body::new(Trailers {
                inner: Box::pin(body),
                redactor,
            });
            Ok(http::Response::from_parts(parts, body))
        })
    }
}

/// Rewrites `grpc-message` when its decoded text holds a secret.
fn redact_headers(redactor: &Redactor, headers: &mut HeaderMap) {
    let Some(status) = Status::from_header_map(headers) else {
        return;
    };
    let redacted = redactor.redact(status.message());
    if redacted == status.message() {
        return;
    }
    let replacement = Status::with_metadata(
        status.code(),
        redacted.into_owned(),
        status.metadata().clone(),
    );
    headers.remove("grpc-message");
    if replacement.add_header(headers).is_err() {
        // An unencodable message: say nothing rather than the secret.
        headers.remove("grpc-message");
    }
}

/// The response body with its trailers redacted.
struct Trailers<B> {
    inner: Pin<Box<B>>,
    redactor: Redactor,
}

impl<B> HttpBody for Trailers<B>
where
    B: HttpBody<Data = bytes::Bytes>,
{
    type Data = bytes::Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let redactor = self.redactor.clone();
        match self.inner.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let frame = match frame.into_trailers() {
                    Ok(mut trailers) => {
                        redact_headers(&redactor, &mut trailers);
                        Frame::trailers(trailers)
                    }
                    Err(frame) => frame,
                };
                Poll::Ready(Some(Ok(frame)))
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

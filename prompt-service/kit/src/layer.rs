//! The tower plumbing every layer of the kit shares: a layer says what it
//! does with one call ([`OnCall`]), and [`Layered`] is the service that puts
//! it in front of the services inside, passing readiness through unchanged.
//! A layer that only watches a body go by wraps it in [`Observed`].

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::{Status, body::Body};
use tower::Service;

/// The answer of a layered call, boxed: each layer's future has its own type.
pub type ResponseFuture<E> = Pin<Box<dyn Future<Output = Result<http::Response<Body>, E>> + Send>>;

/// A gRPC request as the layers see it.
pub type Request = http::Request<Body>;

/// The services a layer of the kit can sit in front of: the gRPC router and
/// the kit's other layers around it.
pub trait Inner:
    Service<
        http::Request<Body>,
        Response = http::Response<Body>,
        Future: Send + 'static,
        Error: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S> Inner for S
where
    S: Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
}

/// What a layer does with one call: answer it itself, or call `inner` (which
/// [`Layered`] has driven to readiness) and maybe wrap its response.
pub trait OnCall {
    /// Handles `req`; called in [`Service::call`], so work done here runs when
    /// the request arrives rather than when the response is polled.
    fn on_call<S: Inner>(
        &self,
        inner: &mut S,
        req: http::Request<Body>,
    ) -> ResponseFuture<S::Error>;
}

/// A service with the layer `L` in front of `inner`.
#[derive(Debug, Clone)]
pub struct Layered<L, S> {
    layer: L,
    inner: S,
}

impl<L, S> Layered<L, S> {
    /// `inner` behind `layer`.
    pub(crate) fn new(layer: L, inner: S) -> Self {
        Self { layer, inner }
    }
}

impl<L: OnCall, S: Inner> Service<http::Request<Body>> for Layered<L, S> {
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        self.layer.on_call(&mut self.inner, req)
    }
}

/// What [`HttpBody::poll_frame`] of a request or response body returns.
pub(crate) type PolledFrame = Poll<Option<Result<Frame<Bytes>, Status>>>;

/// What a layer notes of a body as its frames pass through [`Observed`].
pub(crate) trait Observer {
    /// Sees the outcome of each poll of the body, before its reader does.
    fn observe(&mut self, polled: &PolledFrame);
}

/// A body passed on unchanged, each poll of it shown to an [`Observer`].
pub(crate) struct Observed<O> {
    inner: Body,
    observer: O,
}

impl<O: Observer + Send + Unpin + 'static> Observed<O> {
    /// `inner`, watched by `observer`.
    pub(crate) fn body(inner: Body, observer: O) -> Body {
        Body::new(Self { inner, observer })
    }
}

impl<O: Observer + Unpin> HttpBody for Observed<O> {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> PolledFrame {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        self.observer.observe(&polled);
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

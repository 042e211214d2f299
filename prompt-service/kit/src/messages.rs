//! How both servers read request messages and write response messages, for the methods a
//! service encodes itself (beside its generated server, which takes the same settings).

use tonic::{codec::Codec, server::Grpc};

/// Request size limit and response compression, as `--max-request-bytes` and
/// `--compress-responses` set them.
#[derive(Debug, Clone, Copy)]
pub struct MessageSettings {
    /// Largest request message accepted, in bytes, after decompression.
    pub max_request_bytes: usize,
    /// Gzip responses for clients that accept gzip.
    pub compress_responses: bool,
}

impl MessageSettings {
    /// A server-side gRPC method handler over `codec` with these settings: gzipped requests
    /// accepted, responses gzipped only when asked for.
    pub fn grpc<C: Codec>(&self, codec: C) -> Grpc<C> {
        crate::with_message_settings!(Grpc::new(codec), *self)
    }
}

/// `$server` (a tonic-generated server) reading and writing messages as `$messages` (a
/// [`MessageSettings`]) says: gzipped requests accepted, responses gzipped only when asked
/// for. A macro because generated servers and tonic's `Grpc` share these builder methods but
/// no trait; [`MessageSettings::grpc`] applies it to a method served by hand.
#[macro_export]
macro_rules! with_message_settings {
    ($server:expr, $messages:expr) => {{
        let messages: $crate::MessageSettings = $messages;
        let server = $server
            .max_decoding_message_size(messages.max_request_bytes)
            .accept_compressed(::tonic::codec::CompressionEncoding::Gzip);
        if messages.compress_responses {
            server.send_compressed(::tonic::codec::CompressionEncoding::Gzip)
        } else {
            server
        }
    }};
}

/// A service's generated server with one unary method served by hand: requests to `path` are
/// decoded and answered by `method` through `codec` (with the same [`MessageSettings`] the
/// generated server was built with), every other request goes to `generated`. For a reply
/// that is cheaper to write straight from the service's own data than through its message.
#[derive(Debug, Clone)]
pub struct OwnRoute<G, C, M> {
    generated: G,
    path: &'static str,
    codec: C,
    method: M,
    messages: MessageSettings,
}

impl<G, C, M> OwnRoute<G, C, M> {
    /// `generated` with `path` served by `method` through `codec`.
    pub fn new(
        generated: G,
        path: &'static str,
        codec: C,
        method: M,
        messages: MessageSettings,
    ) -> Self {
        Self {
            generated,
            path,
            codec,
            method,
            messages,
        }
    }
}

impl<G: tonic::server::NamedService, C, M> tonic::server::NamedService for OwnRoute<G, C, M> {
    const NAME: &'static str = G::NAME;
}

impl<G, C, M> tower::Service<http::Request<tonic::body::Body>> for OwnRoute<G, C, M>
where
    G: tower::Service<
            http::Request<tonic::body::Body>,
            Response = http::Response<tonic::body::Body>,
            Error = std::convert::Infallible,
            Future = tonic::codegen::BoxFuture<
                http::Response<tonic::body::Body>,
                std::convert::Infallible,
            >,
        >,
    C: Codec + Clone + Send + 'static,
    C::Decode: Send + 'static,
    C::Encode: Send + 'static,
    M: tonic::server::UnaryService<C::Decode, Response = C::Encode> + Clone + Send + 'static,
    M::Future: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        if req.uri().path() != self.path {
            return self.generated.call(req);
        }
        let mut grpc = self.messages.grpc(self.codec.clone());
        let method = self.method.clone();
        Box::pin(async move { Ok(grpc.unary(method, req).await) })
    }
}

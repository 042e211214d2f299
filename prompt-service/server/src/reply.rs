//! The RenderSystemPrompt reply, encoded straight from the renderer's
//! output, and the route that serves it.
//!
//! Why: a reply carries the ~35 KB stable prefix twice (in `text` and in
//! `stable_prefix`). Building a `RenderSystemPromptResponse` first means
//! copying the memoised prefix into a fresh `String`, then copying it again
//! into the encode buffer, which regrows as the big fields arrive. Here the
//! three text fields are written from the shared prefix into a buffer
//! reserved once at the exact size, and everything else is encoded by prost
//! from the same conversion the RPC has always used. The wire bytes are
//! identical to prost's encoding of [`response_from_rendered`] (tested).

use std::{
    convert::Infallible,
    future::{Ready, ready},
    task::{Context, Poll},
};

use openclaw_proto::prompt::v1::{self as pb, prompt_service_server::PromptServiceServer};
use prompt_render as render;
use prost::{
    Message,
    bytes::BufMut,
    encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len},
};
use tonic::{
    Request, Response, Status,
    body::Body,
    codec::{BufferSettings, Codec, CompressionEncoding, EncodeBuf, Encoder},
    codegen::BoxFuture,
    server::{Grpc, NamedService, UnaryService},
};

use crate::{
    convert::{context_to_pb, mode_to_pb, section_to_pb, skills_to_pb, tools_to_pb},
    service::PromptServiceImpl,
};

/// The RenderSystemPrompt path, the one route [`PromptRoutes`] serves itself.
const RENDER_PATH: &str = "/openclaw.prompt.v1.PromptService/RenderSystemPrompt";

/// A rendered prompt on its way to the wire as a `RenderSystemPromptResponse`.
#[derive(Debug)]
pub struct RenderReply {
    text: String,
    stable_prefix: render::SharedStr,
    dynamic_suffix: String,
    /// Every other field; its three text fields are left empty.
    rest: pb::RenderSystemPromptResponse,
}

impl RenderReply {
    /// Takes a rendered prompt apart for encoding.
    pub fn new(r: render::Rendered) -> Self {
        let render::Rendered {
            text,
            stable_prefix,
            dynamic_suffix,
            boundary_offset,
            stable_prefix_sha256,
            stable_prefix_chars: _,
            mode,
            sections,
            context,
            skills,
            tools,
            chars,
            approx_tokens,
        } = r;
        Self {
            text,
            stable_prefix,
            dynamic_suffix,
            rest: pb::RenderSystemPromptResponse {
                text: String::new(),
                stable_prefix: String::new(),
                dynamic_suffix: String::new(),
                boundary_offset: u32::try_from(boundary_offset).unwrap_or(u32::MAX),
                boundary_marker: render::CACHE_BOUNDARY_MARKER.to_owned(),
                stable_prefix_sha256: stable_prefix_sha256.into(),
                resolved_mode: mode_to_pb(mode) as i32,
                sections: sections.iter().map(section_to_pb).collect(),
                context: Some(context_to_pb(context)),
                skills: Some(skills_to_pb(&skills)),
                tools: Some(tools_to_pb(&tools)),
                chars,
                approx_tokens,
            },
        }
    }

    /// The same message as an ordinary proto value.
    pub fn into_response(self) -> pb::RenderSystemPromptResponse {
        pb::RenderSystemPromptResponse {
            text: self.text,
            stable_prefix: self.stable_prefix.into(),
            dynamic_suffix: self.dynamic_suffix,
            ..self.rest
        }
    }

    /// Characters of the whole prompt.
    pub fn chars(&self) -> u32 {
        self.rest.chars
    }

    /// Fields 1 to 3 (`text`, `stable_prefix`, `dynamic_suffix`), the
    /// lowest-numbered ones, so writing them before the rest keeps prost's
    /// field order. Empty strings are left out, as proto3 does.
    fn text_fields(&self) -> [(u32, &str); 3] {
        [
            (1, self.text.as_str()),
            (2, self.stable_prefix.as_str()),
            (3, self.dynamic_suffix.as_str()),
        ]
    }

    /// Length of the encoded message.
    pub fn encoded_len(&self) -> usize {
        self.text_fields()
            .iter()
            .filter(|(_, s)| !s.is_empty())
            .map(|(tag, s)| key_len(*tag) + encoded_len_varint(s.len() as u64) + s.len())
            .sum::<usize>()
            + self.rest.encoded_len()
    }

    /// Writes the message; `buf` must have room for [`Self::encoded_len`].
    pub fn encode_raw(&self, buf: &mut impl BufMut) {
        for (tag, s) in self.text_fields() {
            if !s.is_empty() {
                encode_key(tag, WireType::LengthDelimited, buf);
                encode_varint(s.len() as u64, buf);
                buf.put_slice(s.as_bytes());
            }
        }
        self.rest.encode_raw(buf);
    }
}

/// Decodes requests with prost and encodes [`RenderReply`]s.
#[derive(Debug, Clone, Copy, Default)]
struct RenderCodec;

impl Codec for RenderCodec {
    type Encode = RenderReply;
    type Decode = pb::RenderSystemPromptRequest;
    type Encoder = ReplyEncoder;
    type Decoder = tonic_prost::ProstDecoder<pb::RenderSystemPromptRequest>;

    fn encoder(&mut self) -> Self::Encoder {
        ReplyEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::new(BufferSettings::default())
    }
}

#[derive(Debug, Clone, Copy)]
struct ReplyEncoder;

impl Encoder for ReplyEncoder {
    type Item = RenderReply;
    type Error = Status;

    fn encode(&mut self, item: RenderReply, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // One reservation at the exact size: no regrowth copies.
        buf.reserve(item.encoded_len());
        item.encode_raw(buf);
        Ok(())
    }
}

/// The PromptService routes: RenderSystemPrompt through [`RenderCodec`],
/// every other method through the generated server.
#[derive(Debug, Clone)]
pub(crate) struct PromptRoutes {
    generated: PromptServiceServer<PromptServiceImpl>,
    service: PromptServiceImpl,
    max_request_bytes: usize,
}

impl PromptRoutes {
    /// Routes for `service`; requests above `max_request_bytes` are refused
    /// as the generated server refuses them.
    pub(crate) fn new(service: PromptServiceImpl, max_request_bytes: usize) -> Self {
        Self {
            generated: PromptServiceServer::new(service.clone())
                .max_decoding_message_size(max_request_bytes)
                .accept_compressed(CompressionEncoding::Gzip)
                .send_compressed(CompressionEncoding::Gzip),
            service,
            max_request_bytes,
        }
    }
}

impl NamedService for PromptRoutes {
    const NAME: &'static str = <PromptServiceServer<PromptServiceImpl> as NamedService>::NAME;
}

impl tower::Service<http::Request<Body>> for PromptRoutes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if req.uri().path() != RENDER_PATH {
            return self.generated.call(req);
        }
        // The same settings as the generated server's.
        let mut grpc = Grpc::new(RenderCodec)
            .max_decoding_message_size(self.max_request_bytes)
            .accept_compressed(CompressionEncoding::Gzip)
            .send_compressed(CompressionEncoding::Gzip);
        let method = RenderMethod(self.service.clone());
        Box::pin(async move { Ok(grpc.unary(method, req).await) })
    }
}

struct RenderMethod(PromptServiceImpl);

impl UnaryService<pb::RenderSystemPromptRequest> for RenderMethod {
    type Response = RenderReply;
    type Future = Ready<Result<Response<RenderReply>, Status>>;

    fn call(&mut self, request: Request<pb::RenderSystemPromptRequest>) -> Self::Future {
        ready(self.0.render_reply(request.into_inner()).map(Response::new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{convert::response_from_rendered, input_from_request, request_from_input};
    use prompt_render::{PromptMode, Renderer, fixtures};

    fn check(input: &render::RenderInput) {
        let renderer = Renderer::default();
        let input = input_from_request(request_from_input(input)).expect("valid fixture");
        let expected = response_from_rendered(renderer.render(&input).expect("renders"));
        let reply = RenderReply::new(renderer.render(&input).expect("renders"));
        let mut wire = Vec::new();
        reply.encode_raw(&mut wire);
        assert_eq!(reply.encoded_len(), wire.len());
        assert_eq!(wire, expected.encode_to_vec());
        assert_eq!(reply.into_response(), expected);
    }

    #[test]
    fn the_reply_encodes_exactly_as_prost_encodes_the_response() {
        let mut input = fixtures::realistic();
        check(&input);
        // No dynamic suffix and a one-line stable prefix.
        input.prompt_mode = Some(PromptMode::None);
        check(&input);
    }
}

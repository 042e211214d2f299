//! The RenderSystemPrompt reply, encoded straight from the renderer's
//! output, and the route that serves it.
//!
//! Why: a reply carries the ~35 KB stable prefix twice (in `text` and in
//! `stable_prefix`). Building a `RenderSystemPromptResponse` first means
//! copying the cached prefix into a fresh `String`, then copying it again
//! into the encode buffer, which regrows as the big fields arrive. Here the
//! three text fields are written from the shared prefix (`text` from its two
//! parts, never joined) into a buffer reserved once at the exact size. The reports that depend only on the
//! stable block (stable sections, skills, tools) are encoded by prost once
//! per block ([`ReplyParts`]) and copied; the rest is encoded by prost from
//! the same conversions the RPC has always used. The wire bytes are
//! identical to prost's encoding of [`response_from_rendered`] (tested).
//!
//! The route hands the request to the service as bytes, so that a request
//! whose stable part was seen before is not decoded again (see
//! [`crate::wire`]).

use std::{
    future::{Ready, ready},
    sync::Arc,
};

use openclaw_proto::prompt::v1::{self as pb, prompt_service_server::PromptServiceServer};
use prompt_render as render;
use prost::{
    Message,
    bytes::{Buf, BufMut, Bytes},
    encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len},
};
use tonic::{
    Request, Response, Status,
    codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder},
    server::UnaryService,
};

use crate::{
    convert::{
        context_to_pb, mode_to_pb, section_into_pb, section_to_pb, skills_to_pb, tools_to_pb,
    },
    service::PromptServiceImpl,
};

/// The RenderSystemPrompt path, the one route [`prompt_routes`] serves itself.
const RENDER_PATH: &str = "/openclaw.prompt.v1.PromptService/RenderSystemPrompt";

/// The encoded reply fields that depend only on a stable block: the stable
/// sections' entries of field 8, and fields 10 (skills) and 11 (tools).
/// Encoded by prost once per block and copied into every reply after.
#[derive(Debug)]
pub struct ReplyParts {
    stable_sections: Vec<u8>,
    skills_and_tools: Vec<u8>,
}

impl ReplyParts {
    /// The parts of replies rendered from `prepared`.
    pub fn of(prepared: &render::Prepared) -> Self {
        Self::from_reports(
            prepared.stable_sections(),
            prepared.skills(),
            prepared.tools(),
        )
    }

    fn from_reports(
        stable_sections: &[render::SectionReport],
        skills: &render::SkillsReport,
        tools: &render::ToolsReport,
    ) -> Self {
        Self {
            stable_sections: pb::RenderSystemPromptResponse {
                sections: stable_sections.iter().map(section_to_pb).collect(),
                ..Default::default()
            }
            .encode_to_vec(),
            skills_and_tools: pb::RenderSystemPromptResponse {
                skills: Some(skills_to_pb(skills)),
                tools: Some(tools_to_pb(tools)),
                ..Default::default()
            }
            .encode_to_vec(),
        }
    }
}

/// A rendered prompt on its way to the wire as a `RenderSystemPromptResponse`.
///
/// Written in field order: the three text fields straight from the shared
/// prefix, fields 4-7 by prost, the stable sections from [`ReplyParts`], the
/// dynamic sections and field 9 by prost, fields 10-11 from the parts, and
/// fields 12-16 by prost.
#[derive(Debug)]
pub struct RenderReply {
    text: render::PromptText,
    stable_prefix: render::SharedStr,
    dynamic_suffix: String,
    stable_prefix_chars: u32,
    /// Fields 4 to 7.
    head: pb::RenderSystemPromptResponse,
    parts: Arc<ReplyParts>,
    /// The dynamic sections' entries of field 8, and field 9.
    middle: pb::RenderSystemPromptResponse,
    /// Fields 12 to 16.
    tail: pb::RenderSystemPromptResponse,
}

impl RenderReply {
    /// Takes a rendered prompt apart for encoding.
    pub fn new(r: render::Rendered) -> Self {
        let parts = ReplyParts::from_reports(r.sections.stable(), &r.skills, &r.tools);
        Self::with_parts(r, Arc::new(parts))
    }

    /// The same, with the stable parts already encoded (they must come
    /// from the block `r` was rendered from).
    pub fn with_parts(r: render::Rendered, parts: Arc<ReplyParts>) -> Self {
        let render::Rendered {
            text,
            stable_prefix,
            dynamic_suffix,
            boundary_offset,
            relocatable_offset,
            prompt_surface,
            stable_prefix_sha256,
            stable_prefix_chars,
            mode,
            sections,
            context,
            // In `parts`.
            skills: _,
            tools: _,
            chars,
            approx_tokens,
        } = r;
        Self {
            text,
            stable_prefix,
            dynamic_suffix,
            stable_prefix_chars,
            head: pb::RenderSystemPromptResponse {
                boundary_offset: u32::try_from(boundary_offset).unwrap_or(u32::MAX),
                boundary_marker: render::CACHE_BOUNDARY_MARKER.to_owned(),
                stable_prefix_sha256: stable_prefix_sha256.into(),
                resolved_mode: mode_to_pb(mode) as i32,
                ..Default::default()
            },
            parts,
            middle: pb::RenderSystemPromptResponse {
                sections: sections
                    .into_dynamic()
                    .into_iter()
                    .map(section_into_pb)
                    .collect(),
                context: Some(context_to_pb(context)),
                ..Default::default()
            },
            tail: pb::RenderSystemPromptResponse {
                chars,
                approx_tokens,
                relocatable_offset: u32::try_from(relocatable_offset).unwrap_or(u32::MAX),
                relocatable_marker: render::RELOCATABLE_MARKER.to_owned(),
                prompt_surface: crate::convert::surface_to_pb(prompt_surface) as i32,
                ..Default::default()
            },
        }
    }

    /// Characters of the whole prompt.
    pub fn chars(&self) -> u32 {
        self.tail.chars
    }

    /// Characters of the stable prefix.
    pub fn stable_prefix_chars(&self) -> u32 {
        self.stable_prefix_chars
    }

    /// The request's prompt surface, by its metric name.
    pub fn surface_name(&self) -> &'static str {
        pb::PromptSurface::try_from(self.tail.prompt_surface)
            .map(crate::convert::surface_of)
            .map_or("unspecified", render::PromptSurface::as_str)
    }

    /// Fields 1 to 3 (`text`, `stable_prefix`, `dynamic_suffix`), the
    /// lowest-numbered ones, each in parts. Empty strings are left out, as
    /// proto3 does.
    fn text_fields(&self) -> [(u32, [&str; 2]); 3] {
        [
            (1, self.text.parts()),
            (2, [self.stable_prefix.as_str(), ""]),
            (3, [self.dynamic_suffix.as_str(), ""]),
        ]
    }

    /// Length of the encoded message.
    pub fn encoded_len(&self) -> usize {
        self.text_fields()
            .iter()
            .map(|(tag, parts)| (tag, parts.iter().map(|p| p.len()).sum::<usize>()))
            .filter(|(_, len)| *len > 0)
            .map(|(tag, len)| key_len(*tag) + encoded_len_varint(len as u64) + len)
            .sum::<usize>()
            + self.head.encoded_len()
            + self.parts.stable_sections.len()
            + self.middle.encoded_len()
            + self.parts.skills_and_tools.len()
            + self.tail.encoded_len()
    }

    /// Writes the message; `buf` must have room for [`Self::encoded_len`].
    pub fn encode_raw(&self, buf: &mut impl BufMut) {
        for (tag, parts) in self.text_fields() {
            let len = parts.iter().map(|p| p.len()).sum::<usize>();
            if len > 0 {
                encode_key(tag, WireType::LengthDelimited, buf);
                encode_varint(len as u64, buf);
                for part in parts {
                    buf.put_slice(part.as_bytes());
                }
            }
        }
        self.head.encode_raw(buf);
        buf.put_slice(&self.parts.stable_sections);
        self.middle.encode_raw(buf);
        buf.put_slice(&self.parts.skills_and_tools);
        self.tail.encode_raw(buf);
    }
}

/// Takes requests as bytes (see [`crate::wire`]) and encodes [`RenderReply`]s.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RenderCodec;

impl Codec for RenderCodec {
    type Encode = RenderReply;
    type Decode = Bytes;
    type Encoder = ReplyEncoder;
    type Decoder = BytesDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        ReplyEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        BytesDecoder
    }
}

/// The request message's bytes, undecoded (taken from tonic's buffer
/// without a copy).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BytesDecoder;

impl Decoder for BytesDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplyEncoder;

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

/// The PromptService routes: RenderSystemPrompt through [`RenderCodec`], every other method
/// through the generated server, every one reading and writing messages as `messages` says.
pub(crate) fn prompt_routes(
    service: PromptServiceImpl,
    messages: service_kit::MessageSettings,
) -> service_kit::OwnRoute<PromptServiceServer<PromptServiceImpl>, RenderCodec, RenderMethod> {
    let generated =
        service_kit::with_message_settings!(PromptServiceServer::new(service.clone()), messages);
    service_kit::OwnRoute::new(
        generated,
        RENDER_PATH,
        RenderCodec,
        RenderMethod(service),
        messages,
    )
}

/// RenderSystemPrompt, answered with a [`RenderReply`].
#[derive(Debug, Clone)]
pub(crate) struct RenderMethod(PromptServiceImpl);

impl UnaryService<Bytes> for RenderMethod {
    type Response = RenderReply;
    type Future = Ready<Result<Response<RenderReply>, Status>>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        ready(self.0.render_wire(&request.into_inner()).map(Response::new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{convert::response_from_rendered, input_from_request, request_from_input};
    use prompt_render::{Prepared, PromptMode, SessionKind, fixtures};

    fn assert_encodes_as(reply: RenderReply, expected: &pb::RenderSystemPromptResponse) {
        let mut wire = Vec::new();
        reply.encode_raw(&mut wire);
        assert_eq!(reply.encoded_len(), wire.len());
        assert_eq!(wire, expected.encode_to_vec());
    }

    fn check(input: &render::RenderInput) {
        let input = input_from_request(request_from_input(input)).expect("valid fixture");
        let expected = response_from_rendered(render::render(&input).expect("renders"));
        assert_encodes_as(
            RenderReply::new(render::render(&input).expect("renders")),
            &expected,
        );
        // From a prepared block, with its parts encoded once and shared.
        let mut stable = input.clone();
        let turn = stable.take_turn();
        let prepared = Prepared::new(stable).expect("prepares");
        let parts = Arc::new(ReplyParts::of(&prepared));
        for _ in 0..2 {
            let rendered = prepared.render_turn(&turn).expect("renders");
            assert_encodes_as(
                RenderReply::with_parts(rendered, Arc::clone(&parts)),
                &expected,
            );
        }
    }

    #[test]
    fn the_reply_encodes_exactly_as_prost_encodes_the_response() {
        let mut input = fixtures::realistic();
        check(&input);
        // A heartbeat run: HEARTBEAT.md below the boundary.
        input.session_kind = SessionKind::Heartbeat;
        input.heartbeat.enabled = true;
        check(&input);
        // Minimal mode: no skills listing.
        input.session_kind = SessionKind::Subagent;
        check(&input);
        // No tools, no skills, no files.
        input.tools.clear();
        input.skills.clear();
        input.context_files.clear();
        check(&input);
        // No dynamic suffix and a one-line stable prefix.
        input.prompt_mode = Some(PromptMode::None);
        check(&input);
    }
}

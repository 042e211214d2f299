//! The ListSessions reply, encoded straight from the session index rows, and
//! the route that serves it.
//!
//! Why: a list of every session is the API's largest reply (about 125 bytes a
//! session, 12 MB for 100,000). Building a `pb::Session` per row first means
//! four or five string copies a row, and prost then measures every nested
//! message two or three times while the encode buffer regrows as the reply
//! arrives. Here each session is written from the row it was listed from
//! (borrowed strings, the agent's workspace path shared by every session it
//! does not sandbox) into a buffer reserved once at the exact size. The wire
//! bytes are identical to prost's encoding of the response the generated
//! method builds (tested), so clients see no difference.

use std::{
    borrow::Cow,
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use agent_runtime::{WorkspacePaths, sessions::SessionInfo};
use openclaw_proto::agent::v1::{self as pb, agent_service_server::AgentServiceServer};
use prost::{
    bytes::BufMut,
    encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len},
};
use tonic::{
    Request, Response, Status,
    body::Body,
    codec::{Codec, CompressionEncoding, EncodeBuf, Encoder},
    server::{Grpc, NamedService, UnaryService},
};

use crate::{convert, service::AgentServiceImpl};

/// The ListSessions path, the one route [`AgentRoutes`] serves itself.
const LIST_PATH: &str = "/openclaw.agent.v1.AgentService/ListSessions";

/// One listed session with what its entry in the reply needs besides the index row.
#[derive(Debug)]
struct Row {
    info: SessionInfo,
    /// The session id, hyphenated (ASCII).
    session_id: [u8; uuid::fmt::Hyphenated::LENGTH],
    /// The session's working directory when it is not the agent's own (a sandbox's).
    workspace: Option<String>,
    cuts: Vec<pb::RepeatedCut>,
    /// Length of the encoded `Session` message.
    len: usize,
}

/// A page of sessions on its way to the wire as a `ListSessionsResponse`.
#[derive(Debug)]
pub(crate) struct SessionsReply {
    rows: Vec<Row>,
    /// The agent's own workspace: the `workspace` of every row without one.
    agent_workspace: String,
    next_page_token: String,
}

impl SessionsReply {
    /// The reply for `infos` (one agent's sessions, in list order): `paths` gives each
    /// session's working directory, `cuts_of` its repeated bootstrap cuts.
    pub(crate) fn new(
        infos: Vec<SessionInfo>,
        paths: Option<&WorkspacePaths>,
        cuts_of: impl Fn(&SessionInfo) -> Vec<pb::RepeatedCut>,
        next_page_token: String,
    ) -> Self {
        let mut agent_workspace: Option<String> = None;
        let rows = infos
            .into_iter()
            .map(|info| {
                let workspace = match paths.map(|p| p.of(&info.key)) {
                    None => Some(String::new()),
                    Some(Cow::Owned(path)) => Some(path.display().to_string()),
                    Some(Cow::Borrowed(path)) => {
                        agent_workspace.get_or_insert_with(|| path.display().to_string());
                        None
                    }
                };
                let mut row = Row {
                    cuts: cuts_of(&info),
                    session_id: hyphenated(&info),
                    info,
                    workspace,
                    len: 0,
                };
                row.len = Fields::new(&row, agent_workspace.as_deref().unwrap_or("")).len();
                row
            })
            .collect();
        Self {
            rows,
            agent_workspace: agent_workspace.unwrap_or_default(),
            next_page_token,
        }
    }

    /// Length of the encoded message.
    pub(crate) fn encoded_len(&self) -> usize {
        self.rows
            .iter()
            .map(|row| key_len(1) + encoded_len_varint(row.len as u64) + row.len)
            .sum::<usize>()
            + str_len(2, &self.next_page_token)
    }

    /// Writes the message; `buf` should have room for [`Self::encoded_len`].
    pub(crate) fn encode_raw(&self, buf: &mut impl BufMut) {
        for row in &self.rows {
            encode_key(1, WireType::LengthDelimited, buf);
            encode_varint(row.len as u64, buf);
            Fields::new(row, &self.agent_workspace).put(buf);
        }
        put_str(2, &self.next_page_token, buf);
    }
}

/// The session id of `info` as the API spells it (lowercase, hyphenated).
fn hyphenated(info: &SessionInfo) -> [u8; uuid::fmt::Hyphenated::LENGTH] {
    let mut id = [0; uuid::fmt::Hyphenated::LENGTH];
    info.entry
        .session_id
        .uuid()
        .hyphenated()
        .encode_lower(&mut id);
    id
}

/// The fields of one `Session` message, borrowed from its row.
struct Fields<'a> {
    row: &'a Row,
    workspace: &'a str,
    chat_type: u64,
}

impl<'a> Fields<'a> {
    fn new(row: &'a Row, agent_workspace: &'a str) -> Self {
        let chat_type = convert::chat_type_of(row.info.entry.chat_type.as_deref()) as i32;
        Self {
            row,
            workspace: row.workspace.as_deref().unwrap_or(agent_workspace),
            chat_type: u64::try_from(chat_type).unwrap_or_default(),
        }
    }

    fn strings(&self) -> [(u32, &str); 7] {
        let entry = &self.row.info.entry;
        [
            (1, self.row.info.agent_id.as_str()),
            (2, self.row.info.key.as_str()),
            // A hyphenated UUID is ASCII.
            (
                3,
                std::str::from_utf8(&self.row.session_id).unwrap_or_default(),
            ),
            (6, entry.channel.as_deref().unwrap_or("")),
            (8, entry.display_name.as_deref().unwrap_or("")),
            (9, entry.model_override.as_deref().unwrap_or("")),
            (11, self.workspace),
        ]
    }

    fn usage(&self) -> [(u32, u64); 5] {
        let entry = &self.row.info.entry;
        [
            (1, entry.input_tokens),
            (2, entry.output_tokens),
            (3, entry.total_tokens),
            (4, entry.cache_read),
            (5, entry.cache_write),
        ]
    }

    /// Length of the `Session` message.
    fn len(&self) -> usize {
        let entry = &self.row.info.entry;
        let usage = self.usage().iter().map(|(t, v)| uint_len(*t, *v)).sum();
        self.strings()
            .iter()
            .map(|(t, s)| str_len(*t, s))
            .sum::<usize>()
            + nested_len(4, timestamp_len(entry.created_at))
            + nested_len(5, timestamp_len(entry.updated_at))
            + uint_len(7, self.chat_type)
            + nested_len(10, usage)
            + uint_len(12, entry.compaction_count)
            + self
                .row
                .cuts
                .iter()
                .map(|cut| prost::encoding::message::encoded_len(13, cut))
                .sum::<usize>()
    }

    /// Writes the `Session` message's fields in field order, as prost does.
    fn put(&self, buf: &mut impl BufMut) {
        let entry = &self.row.info.entry;
        let [
            agent_id,
            key,
            session_id,
            channel,
            display_name,
            model_override,
            workspace,
        ] = self.strings();
        for (tag, s) in [agent_id, key, session_id] {
            put_str(tag, s, buf);
        }
        put_timestamp(4, entry.created_at, buf);
        put_timestamp(5, entry.updated_at, buf);
        put_str(channel.0, channel.1, buf);
        put_uint(7, self.chat_type, buf);
        for (tag, s) in [display_name, model_override] {
            put_str(tag, s, buf);
        }
        let usage = self.usage();
        encode_key(10, WireType::LengthDelimited, buf);
        encode_varint(
            usage.iter().map(|(t, v)| uint_len(*t, *v)).sum::<usize>() as u64,
            buf,
        );
        for (tag, value) in usage {
            put_uint(tag, value, buf);
        }
        put_str(workspace.0, workspace.1, buf);
        put_uint(12, entry.compaction_count, buf);
        for cut in &self.row.cuts {
            prost::encoding::message::encode(13, cut, buf);
        }
    }
}

/// A string field (proto3: left out when empty).
fn str_len(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        key_len(tag) + encoded_len_varint(s.len() as u64) + s.len()
    }
}

fn put_str(tag: u32, s: &str, buf: &mut impl BufMut) {
    if !s.is_empty() {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(s.len() as u64, buf);
        buf.put_slice(s.as_bytes());
    }
}

/// A varint field (proto3: left out when zero).
fn uint_len(tag: u32, value: u64) -> usize {
    if value == 0 {
        0
    } else {
        key_len(tag) + encoded_len_varint(value)
    }
}

fn put_uint(tag: u32, value: u64, buf: &mut impl BufMut) {
    if value != 0 {
        encode_key(tag, WireType::Varint, buf);
        encode_varint(value, buf);
    }
}

/// A message field that is always present, whose body is `len` bytes.
fn nested_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

/// `google.protobuf.Timestamp` fields of a time in ms since the epoch, as
/// [`convert::timestamp_ms`] makes them: seconds (int64) and nanos (int32,
/// never negative here), each a varint of its two's-complement value.
fn timestamp_fields(ms: i64) -> [(u32, u64); 2] {
    let t = convert::timestamp_ms(ms);
    [(1, t.seconds as u64), (2, i64::from(t.nanos) as u64)]
}

fn timestamp_len(ms: i64) -> usize {
    timestamp_fields(ms)
        .iter()
        .map(|(t, v)| uint_len(*t, *v))
        .sum()
}

fn put_timestamp(tag: u32, ms: i64, buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(timestamp_len(ms) as u64, buf);
    for (field, value) in timestamp_fields(ms) {
        put_uint(field, value, buf);
    }
}

/// Decodes `ListSessionsRequest`s with prost and encodes [`SessionsReply`]s.
#[derive(Debug, Clone, Copy, Default)]
struct SessionsCodec;

impl Codec for SessionsCodec {
    type Encode = SessionsReply;
    type Decode = pb::ListSessionsRequest;
    type Encoder = ReplyEncoder;
    type Decoder = tonic_prost::ProstDecoder<pb::ListSessionsRequest>;

    fn encoder(&mut self) -> Self::Encoder {
        ReplyEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::new(tonic::codec::BufferSettings::default())
    }
}

#[derive(Debug, Clone, Copy)]
struct ReplyEncoder;

impl Encoder for ReplyEncoder {
    type Item = SessionsReply;
    type Error = Status;

    fn encode(&mut self, item: SessionsReply, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // One reservation at the exact size: no regrowth copies.
        buf.reserve(item.encoded_len());
        item.encode_raw(buf);
        Ok(())
    }
}

/// The AgentService routes: ListSessions through [`SessionsCodec`], every
/// other method through the generated server (with the same settings).
#[derive(Debug, Clone)]
pub(crate) struct AgentRoutes {
    generated: AgentServiceServer<AgentServiceImpl>,
    service: AgentServiceImpl,
    max_request_bytes: usize,
    compress_responses: bool,
}

impl AgentRoutes {
    /// Routes for `service`; requests above `max_request_bytes` are refused, responses
    /// are gzipped for clients that accept it only when `compress_responses` is set.
    pub(crate) fn new(
        service: AgentServiceImpl,
        max_request_bytes: usize,
        compress_responses: bool,
    ) -> Self {
        let generated = AgentServiceServer::new(service.clone())
            .max_decoding_message_size(max_request_bytes)
            .accept_compressed(CompressionEncoding::Gzip);
        Self {
            generated: if compress_responses {
                generated.send_compressed(CompressionEncoding::Gzip)
            } else {
                generated
            },
            service,
            max_request_bytes,
            compress_responses,
        }
    }
}

impl NamedService for AgentRoutes {
    const NAME: &'static str = <AgentServiceServer<AgentServiceImpl> as NamedService>::NAME;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl tower::Service<http::Request<Body>> for AgentRoutes {
    type Response = http::Response<Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        if req.uri().path() != LIST_PATH {
            return self.generated.call(req);
        }
        let grpc = Grpc::new(SessionsCodec)
            .max_decoding_message_size(self.max_request_bytes)
            .accept_compressed(CompressionEncoding::Gzip);
        let mut grpc = if self.compress_responses {
            grpc.send_compressed(CompressionEncoding::Gzip)
        } else {
            grpc
        };
        let method = ListMethod(self.service.clone());
        Box::pin(async move { Ok(grpc.unary(method, req).await) })
    }
}

struct ListMethod(AgentServiceImpl);

impl UnaryService<pb::ListSessionsRequest> for ListMethod {
    type Response = SessionsReply;
    type Future = BoxFuture<Result<Response<SessionsReply>, Status>>;

    fn call(&mut self, request: Request<pb::ListSessionsRequest>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move {
            let page = service.list_page(request.into_inner()).await?;
            Ok(Response::new(service.sessions_reply(page)))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agent_runtime::bootstrap_cuts::RepeatedCut;
    use openclaw_transcript::{SessionEntry, SessionKey};

    use prost::Message;

    use super::*;

    fn info(key: &str, entry: SessionEntry) -> SessionInfo {
        SessionInfo {
            agent_id: "main".to_owned(),
            key: SessionKey::new(key).expect("key"),
            entry: Arc::new(entry),
        }
    }

    fn entry(id: u128, created_at: i64, updated_at: i64) -> SessionEntry {
        serde_json::from_value(serde_json::json!({
            "sessionId": uuid::Uuid::from_u128(id).hyphenated().to_string(),
            "createdAt": created_at,
            "updatedAt": updated_at,
        }))
        .expect("entry")
    }

    /// Rows touching every field's edge: empty and long strings (a length
    /// varint of two bytes), zero and huge counters, times before the epoch
    /// and with sub-second parts, each chat type, cuts, a sandbox path.
    fn rows() -> Vec<(SessionInfo, Option<String>, Vec<RepeatedCut>)> {
        let mut full = entry(u128::MAX - 7, 1_796_583_024_848, 1_796_583_027_874);
        full.chat_type = Some("group".into());
        full.channel = Some("telegram".into());
        full.display_name = Some("Ünïcode ✓ ".repeat(20));
        full.model_override = Some("anthropic/claude".into());
        full.compaction_count = 3;
        full.input_tokens = 6001;
        full.output_tokens = 103;
        full.total_tokens = u64::MAX;
        full.cache_read = 1 << 40;
        full.cache_write = 1;
        let mut room = entry(42, -1_500, -1);
        room.chat_type = Some("room".into());
        let mut unknown = entry(7, 999, 1_000);
        unknown.chat_type = Some("elsewhere".into());
        let cut = RepeatedCut {
            path: "AGENTS.md".into(),
            raw_chars: 40_000,
            injected_chars: 20_000,
            renders: 5,
        };
        vec![
            (info("agent:main:main", full), None, vec![cut.clone()]),
            (info("agent:main:zero", entry(0, 0, 0)), None, vec![]),
            (
                info("agent:main:telegram:group:42", room),
                Some("/srv/sandboxes/agent-main-telegram-group-42".into()),
                vec![cut.clone(), cut],
            ),
            (info("agent:main:other", unknown), None, vec![]),
        ]
    }

    fn assert_encodes_as_prost(
        rows: Vec<(SessionInfo, Option<String>, Vec<RepeatedCut>)>,
        agent_workspace: &str,
        token: &str,
    ) {
        let expected = pb::ListSessionsResponse {
            sessions: rows
                .iter()
                .map(|(info, workspace, cuts)| {
                    convert::session_to_pb(
                        info.clone(),
                        workspace
                            .clone()
                            .unwrap_or_else(|| agent_workspace.to_owned()),
                        cuts,
                    )
                })
                .collect(),
            next_page_token: token.to_owned(),
        };
        let reply = SessionsReply {
            agent_workspace: agent_workspace.to_owned(),
            next_page_token: token.to_owned(),
            rows: rows
                .into_iter()
                .map(|(info, workspace, cuts)| {
                    let mut row = Row {
                        session_id: hyphenated(&info),
                        info,
                        workspace,
                        cuts: cuts.iter().map(convert::cut_to_pb).collect(),
                        len: 0,
                    };
                    row.len = Fields::new(&row, agent_workspace).len();
                    row
                })
                .collect(),
        };
        let mut wire = Vec::new();
        reply.encode_raw(&mut wire);
        assert_eq!(reply.encoded_len(), wire.len());
        assert_eq!(wire, expected.encode_to_vec());
        assert_eq!(
            pb::ListSessionsResponse::decode(wire.as_slice()).expect("decodes"),
            expected
        );
    }

    #[test]
    fn the_reply_encodes_exactly_as_prost_encodes_the_response() {
        assert_encodes_as_prost(
            rows(),
            "/home/user/.openclaw/workspace",
            "1796583027874:agent:main:x",
        );
        // No agent workspace, no token, no sessions.
        assert_encodes_as_prost(rows(), "", "");
        assert_encodes_as_prost(Vec::new(), "/w", "");
        // A session message longer than 127 bytes needs a two-byte length.
        let long = rows()
            .into_iter()
            .map(|(info, _, cuts)| (info, Some("/p".repeat(200)), cuts))
            .collect();
        assert_encodes_as_prost(long, "/w", "t");
    }
}

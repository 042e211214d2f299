//! The ListSessions reply, encoded straight from the session index rows, and
//! the route that serves it.
//!
//! Why: a list of every session is the API's largest reply (about 125 bytes a
//! session, 12 MB for 100,000). Building a `pb::Session` per row first means
//! four or five string copies a row, and prost then measures every nested
//! message two or three times while the encode buffer regrows as the reply
//! arrives. Here each session is written once, from the row it was listed
//! from (borrowed strings, the agent's workspace path spelled once for every
//! session it does not sandbox), with plain byte pushes into one body sized
//! for the page, which is copied into tonic's buffer reserved at its exact
//! size. The wire bytes are identical to prost's encoding of the response the
//! generated method builds (tested), so clients see no difference.

use std::{borrow::Cow, future::Future, pin::Pin};

use agent_runtime::{WorkspacePaths, sessions::ListedRow};
use openclaw_proto::agent::v1::{self as pb, agent_service_server::AgentServiceServer};
use prost::{
    bytes::BufMut,
    encoding::{WireType, encoded_len_varint, key_len},
};
use tonic::{
    Request, Response, Status,
    codec::{Codec, EncodeBuf, Encoder},
    server::UnaryService,
};

use crate::{convert, service::AgentServiceImpl};

/// The ListSessions path, the one route [`agent_routes`] serves itself.
const LIST_PATH: &str = "/openclaw.agent.v1.AgentService/ListSessions";

/// A page of sessions encoded as a `ListSessionsResponse`.
#[derive(Debug)]
pub(crate) struct SessionsReply {
    /// The message.
    body: Vec<u8>,
}

impl SessionsReply {
    /// The reply for `rows` (sessions of agent `agent_id`, in list order): `paths` gives each
    /// session's working directory, `cuts_of` its repeated bootstrap cuts.
    pub(crate) fn new(
        agent_id: &str,
        rows: &[ListedRow<'_>],
        paths: Option<&WorkspacePaths>,
        cuts_of: impl Fn(&openclaw_transcript::SessionKey) -> Vec<pb::RepeatedCut>,
        next_page_token: &str,
    ) -> Self {
        // About 125 bytes a session with a short workspace path; a longer one regrows.
        let mut body = Vec::with_capacity(rows.len() * 160 + next_page_token.len() + 8);
        let mut session = Vec::with_capacity(512);
        // The agent's own workspace, spelled once for every session it does not sandbox.
        let mut agent_workspace: Option<String> = None;
        for row in rows {
            let sandbox;
            let workspace = match paths.map(|p| p.of(row.key)) {
                None => "",
                Some(Cow::Owned(path)) => {
                    sandbox = path.display().to_string();
                    &sandbox
                }
                Some(Cow::Borrowed(path)) => {
                    agent_workspace.get_or_insert_with(|| path.display().to_string())
                }
            };
            session.clear();
            write_session(agent_id, row, workspace, &cuts_of(row.key), &mut session);
            put_bytes(1, &session, &mut body);
        }
        put_bytes(2, next_page_token.as_bytes(), &mut body);
        Self { body }
    }

    /// The `SESSION_VIEW_BASIC` reply for `rows`: each session's key, update time, channel,
    /// chat type and display name (as [`convert::basic_session_to_pb`] builds them).
    pub(crate) fn basic(rows: &[ListedRow<'_>], next_page_token: &str) -> Self {
        let mut body = Vec::with_capacity(rows.len() * 64 + next_page_token.len() + 8);
        let mut session = Vec::with_capacity(256);
        for row in rows {
            session.clear();
            write_basic_session(row, &mut session);
            put_bytes(1, &session, &mut body);
        }
        put_bytes(2, next_page_token.as_bytes(), &mut body);
        Self { body }
    }

    /// Length of the encoded message.
    pub(crate) fn encoded_len(&self) -> usize {
        self.body.len()
    }

    /// The encoded message.
    #[cfg(test)]
    fn bytes(&self) -> &[u8] {
        &self.body
    }
}

/// Writes one `Session` message's fields in field order, as prost does.
fn write_session(
    agent_id: &str,
    row: &ListedRow<'_>,
    workspace: &str,
    cuts: &[pb::RepeatedCut],
    out: &mut Vec<u8>,
) {
    let entry = row.entry;
    let mut session_id = [0; uuid::fmt::Hyphenated::LENGTH];
    entry
        .session_id
        .uuid()
        .hyphenated()
        .encode_lower(&mut session_id);
    put_bytes(1, agent_id.as_bytes(), out);
    put_bytes(2, row.key.as_str().as_bytes(), out);
    put_bytes(3, &session_id, out);
    put_timestamp(4, entry.created_at, out);
    put_timestamp(5, entry.updated_at, out);
    put_conversation(entry, out);
    put_bytes(
        9,
        entry.model_override.as_deref().unwrap_or("").as_bytes(),
        out,
    );
    let usage = [
        (1, entry.input_tokens),
        (2, entry.output_tokens),
        (3, entry.total_tokens),
        (4, entry.cache_read),
        (5, entry.cache_write),
    ];
    put_key(10, WireType::LengthDelimited, out);
    put_varint(
        usage.iter().map(|(t, v)| uint_len(*t, *v)).sum::<usize>() as u64,
        out,
    );
    for (tag, value) in usage {
        put_uint(tag, value, out);
    }
    put_bytes(11, workspace.as_bytes(), out);
    put_uint(12, entry.compaction_count, out);
    for cut in cuts {
        prost::encoding::message::encode(13, cut, out);
    }
}

/// Writes the fields of a `SESSION_VIEW_BASIC` session in field order.
fn write_basic_session(row: &ListedRow<'_>, out: &mut Vec<u8>) {
    let entry = row.entry;
    put_bytes(2, row.key.as_str().as_bytes(), out);
    put_timestamp(5, entry.updated_at, out);
    put_conversation(entry, out);
}

/// Fields 6 to 8, which both views carry: channel, chat type and display name.
fn put_conversation(entry: &openclaw_transcript::SessionEntry, out: &mut Vec<u8>) {
    put_bytes(6, entry.channel.as_deref().unwrap_or("").as_bytes(), out);
    // An enum is an int32: a varint of its two's-complement value (never negative here).
    let chat_type = convert::chat_type_of(entry.chat_type.as_deref()) as i32;
    put_uint(7, i64::from(chat_type) as u64, out);
    put_bytes(
        8,
        entry.display_name.as_deref().unwrap_or("").as_bytes(),
        out,
    );
}

fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_key(tag: u32, wire_type: WireType, out: &mut Vec<u8>) {
    put_varint(u64::from(tag << 3 | wire_type as u32), out);
}

/// A string or bytes field (proto3: left out when empty).
fn put_bytes(tag: u32, value: &[u8], out: &mut Vec<u8>) {
    if !value.is_empty() {
        put_key(tag, WireType::LengthDelimited, out);
        put_varint(value.len() as u64, out);
        out.extend_from_slice(value);
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

fn put_uint(tag: u32, value: u64, out: &mut Vec<u8>) {
    if value != 0 {
        put_key(tag, WireType::Varint, out);
        put_varint(value, out);
    }
}

/// A `google.protobuf.Timestamp` field (always present) of a time in ms since the epoch,
/// as [`convert::timestamp_ms`] makes it: seconds (int64) and nanos (int32, never
/// negative here), each a varint of its two's-complement value.
fn put_timestamp(tag: u32, ms: i64, out: &mut Vec<u8>) {
    let t = convert::timestamp_ms(ms);
    let fields = [(1, t.seconds as u64), (2, i64::from(t.nanos) as u64)];
    put_key(tag, WireType::LengthDelimited, out);
    put_varint(
        fields.iter().map(|(f, v)| uint_len(*f, *v)).sum::<usize>() as u64,
        out,
    );
    for (field, value) in fields {
        put_uint(field, value, out);
    }
}

/// Decodes `ListSessionsRequest`s with prost and encodes [`SessionsReply`]s.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionsCodec;

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
pub(crate) struct ReplyEncoder;

impl Encoder for ReplyEncoder {
    type Item = SessionsReply;
    type Error = Status;

    fn encode(&mut self, item: SessionsReply, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // One reservation at the exact size: no regrowth copies.
        buf.reserve(item.encoded_len());
        buf.put_slice(&item.body);
        Ok(())
    }
}

/// The AgentService routes: ListSessions through [`SessionsCodec`], every other method
/// through the generated server, every one reading and writing messages as `messages` says.
pub(crate) fn agent_routes(
    service: AgentServiceImpl,
    messages: service_kit::MessageSettings,
) -> service_kit::OwnRoute<AgentServiceServer<AgentServiceImpl>, SessionsCodec, ListMethod> {
    let generated =
        service_kit::with_message_settings!(AgentServiceServer::new(service.clone()), messages);
    service_kit::OwnRoute::new(
        generated,
        LIST_PATH,
        SessionsCodec,
        ListMethod(service),
        messages,
    )
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// ListSessions, answered with a [`SessionsReply`].
#[derive(Debug, Clone)]
pub(crate) struct ListMethod(AgentServiceImpl);

impl UnaryService<pb::ListSessionsRequest> for ListMethod {
    type Response = SessionsReply;
    type Future = BoxFuture<Result<Response<SessionsReply>, Status>>;

    fn call(&mut self, request: Request<pb::ListSessionsRequest>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move {
            let query = AgentServiceImpl::list_query(request.into_inner())?;
            Ok(Response::new(service.sessions_reply(query).await?))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agent_runtime::bootstrap_cuts::RepeatedCut;
    use agent_runtime::sessions::SessionInfo;
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

    /// `info` as a list hands it to a reply.
    fn listed(info: &SessionInfo) -> ListedRow<'_> {
        ListedRow {
            key: &info.key,
            entry: &info.entry,
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
        let workspace_of = |workspace: &Option<String>| {
            workspace
                .clone()
                .unwrap_or_else(|| agent_workspace.to_owned())
        };
        let expected = pb::ListSessionsResponse {
            sessions: rows
                .iter()
                .map(|(info, workspace, cuts)| {
                    convert::session_to_pb(info.clone(), workspace_of(workspace), cuts)
                })
                .collect(),
            next_page_token: token.to_owned(),
        };
        // The same rows written one by one, as `new` writes them.
        let mut body = Vec::new();
        let mut session = Vec::new();
        for (info, workspace, cuts) in &rows {
            session.clear();
            let cuts: Vec<_> = cuts.iter().map(convert::cut_to_pb).collect();
            write_session(
                &info.agent_id,
                &listed(info),
                &workspace_of(workspace),
                &cuts,
                &mut session,
            );
            put_bytes(1, &session, &mut body);
        }
        put_bytes(2, token.as_bytes(), &mut body);
        assert_eq!(body, expected.encode_to_vec());
        assert_eq!(
            pb::ListSessionsResponse::decode(body.as_slice()).expect("decodes"),
            expected
        );
        // `new` writes the same, for rows in the agent's own workspace.
        if rows.iter().all(|(_, workspace, _)| workspace.is_none()) {
            let listed: Vec<ListedRow<'_>> = rows.iter().map(|(info, _, _)| listed(info)).collect();
            let cuts = |key: &SessionKey| {
                rows.iter()
                    .find(|(row, _, _)| row.key == *key)
                    .map(|(_, _, cuts)| cuts.iter().map(convert::cut_to_pb).collect())
                    .unwrap_or_default()
            };
            let reply = SessionsReply::new("main", &listed, None, cuts, token);
            if agent_workspace.is_empty() {
                assert_eq!(reply.bytes(), body.as_slice());
                assert_eq!(reply.encoded_len(), body.len());
            }
        }
    }

    #[test]
    fn the_basic_reply_encodes_exactly_as_prost_encodes_the_basic_response() {
        for (infos, token) in [
            (
                rows().into_iter().map(|(info, _, _)| info).collect(),
                "1796583027874:agent:main:x",
            ),
            (Vec::new(), ""),
        ] {
            let expected = pb::ListSessionsResponse {
                sessions: infos.iter().map(convert::basic_session_to_pb).collect(),
                next_page_token: token.to_owned(),
            };
            let rows: Vec<ListedRow<'_>> = infos.iter().map(listed).collect();
            let reply = SessionsReply::basic(&rows, token);
            assert_eq!(reply.bytes(), expected.encode_to_vec().as_slice());
            assert_eq!(reply.encoded_len(), expected.encoded_len());
        }
        // The basic view leaves out what a list does not show.
        let full = rows().remove(0).0;
        let basic = convert::basic_session_to_pb(&full);
        assert_eq!(basic.session_key, "agent:main:main");
        assert_eq!(basic.channel, "telegram");
        assert_eq!(basic.chat_type, pb::ChatType::Group as i32);
        assert!(basic.display_name.starts_with("Ünïcode"));
        assert!(basic.updated_at.is_some());
        assert!(basic.session_id.is_empty() && basic.agent_id.is_empty());
        assert!(basic.usage.is_none() && basic.created_at.is_none());
        assert!(basic.workspace.is_empty() && basic.model_override.is_empty());
        assert_eq!(basic.compactions, 0);
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
        // Every session without a path: what `new` writes when the agent is gone.
        let pathless = rows()
            .into_iter()
            .map(|(info, _, cuts)| (info, None, cuts))
            .collect();
        assert_encodes_as_prost(pathless, "", "token");
        assert_encodes_as_prost(Vec::new(), "/w", "");
        // A session message longer than 127 bytes needs a two-byte length.
        let long = rows()
            .into_iter()
            .map(|(info, _, cuts)| (info, Some("/p".repeat(200)), cuts))
            .collect();
        assert_encodes_as_prost(long, "/w", "t");
    }
}

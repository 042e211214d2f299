//! The line format: the session header and the entries that follow it.
//!
//! Every line is one JSON object. Line 1 is `{"type":"session",...}`; every later line is an
//! entry `{"type", "id", "parentId", "timestamp", ...}`. Entry types this crate does not know
//! read back as [`EntryBody::Unknown`] with every field kept.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::message::{Message, UserContent, json_kind, tagged_object};
use crate::paths::{SessionId, SessionKey};

/// The transcript format version this crate writes.
pub const CURRENT_VERSION: u32 = 3;

/// Line 1 of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "session", rename_all = "camelCase")]
pub struct SessionHeader {
    /// Format version; [`CURRENT_VERSION`] for files this crate creates.
    pub version: u32,
    /// The session id, also the file's stem.
    pub id: SessionId,
    /// Creation time, RFC 3339.
    pub timestamp: String,
    /// The workspace the session runs in.
    pub cwd: String,
    /// The transcript this one was forked from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// The index key the session was created under. Our addition (pi ignores unknown header
    /// fields): it is what lets [`crate::SessionStore::rebuild_index`] map files back to keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<SessionKey>,
}

/// An entry id: 8 lowercase hex digits for entries this crate writes, unique within a file.
/// Ids read from a file are kept as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(String);

impl EntryId {
    /// Wraps an id as read or referenced; not validated.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub(crate) fn from_u32(value: u32) -> Self {
        Self(format!("{value:08x}"))
    }

    /// The 32-bit value of an 8-lowercase-hex id, the only shape the writer generates.
    pub(crate) fn as_u32(&self) -> Option<u32> {
        let s = self.0.as_str();
        let lower_hex = s.len() == 8 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        lower_hex.then(|| u32::from_str_radix(s, 16).ok()).flatten()
    }

    /// The id as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl SessionHeader {
    /// A version-3 header for a new session created at `at` under `key`.
    pub fn new(
        id: SessionId,
        key: SessionKey,
        cwd: impl Into<String>,
        at: jiff::Timestamp,
    ) -> Self {
        Self {
            version: CURRENT_VERSION,
            id,
            timestamp: crate::clock::rfc3339(at),
            cwd: cwd.into(),
            parent_session: None,
            session_key: Some(key),
        }
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One transcript entry: the common fields plus a typed body.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Unique within the file.
    pub id: EntryId,
    /// The previous entry on this branch; `None` for the first entry.
    pub parent_id: Option<EntryId>,
    /// RFC 3339 as written (not re-validated on read, so other writers' variants still load).
    pub timestamp: String,
    /// What the entry records.
    pub body: EntryBody,
}

/// What an entry records, tagged by `type` (snake_case), fields camelCase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case")]
pub enum EntryBody {
    /// A conversation message.
    Message {
        /// The message.
        message: Message,
    },
    /// The session switched model.
    #[serde(rename_all = "camelCase")]
    ModelChange {
        /// Provider id.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// The thinking level changed.
    #[serde(rename_all = "camelCase")]
    ThinkingLevelChange {
        /// The new level, e.g. `high`.
        thinking_level: String,
    },
    /// Older context was summarised; entries from `first_kept_entry_id` on are kept verbatim.
    #[serde(rename_all = "camelCase")]
    Compaction {
        /// The summary that replaces the compacted entries.
        summary: String,
        /// First entry kept after the summary.
        first_kept_entry_id: EntryId,
        /// Context size before compaction.
        tokens_before: u64,
        /// Opaque details.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Whether a hook produced the summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// Summary of an abandoned branch.
    #[serde(rename_all = "camelCase")]
    BranchSummary {
        /// Where the summarised branch left off.
        from_id: EntryId,
        /// The summary.
        summary: String,
        /// Opaque details.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Whether a hook produced the summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// Extension state; never enters model context.
    #[serde(rename_all = "camelCase")]
    Custom {
        /// Extension-defined kind.
        custom_type: String,
        /// Extension-defined payload.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// An extension message that enters context as a user message.
    #[serde(rename_all = "camelCase")]
    CustomMessage {
        /// Extension-defined kind.
        custom_type: String,
        /// The message content.
        content: UserContent,
        /// Opaque details.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Whether the UI shows it.
        display: bool,
    },
    /// A user label on an entry.
    #[serde(rename_all = "camelCase")]
    Label {
        /// The labelled entry.
        target_id: EntryId,
        /// The label; `None` clears it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Session metadata.
    SessionInfo {
        /// Display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// An entry type this crate does not know: every field except `id`, `parentId` and
    /// `timestamp` (which live on [`Entry`]), `type` included.
    #[serde(skip)]
    Unknown(Map<String, Value>),
}

const KNOWN_TYPES: [&str; 9] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

impl EntryBody {
    /// The `type` tag as written.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Message { .. } => "message",
            Self::ModelChange { .. } => "model_change",
            Self::ThinkingLevelChange { .. } => "thinking_level_change",
            Self::Compaction { .. } => "compaction",
            Self::BranchSummary { .. } => "branch_summary",
            Self::Custom { .. } => "custom",
            Self::CustomMessage { .. } => "custom_message",
            Self::Label { .. } => "label",
            Self::SessionInfo { .. } => "session_info",
            Self::Unknown(object) => object.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

impl Serialize for EntryBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Unknown(object) => object.serialize(serializer),
            known => Self::serialize(known, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for EntryBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (kind, object) = tagged_object(deserializer, "type")?;
        body_from_object(kind.as_deref(), object).map_err(D::Error::custom)
    }
}

fn body_from_object(
    kind: Option<&str>,
    object: Map<String, Value>,
) -> Result<EntryBody, serde_json::Error> {
    if kind.is_some_and(|kind| KNOWN_TYPES.contains(&kind)) {
        EntryBody::deserialize(Value::Object(object))
    } else {
        Ok(EntryBody::Unknown(object))
    }
}

impl Serialize for Entry {
    /// Writes `type`, `id`, `parentId`, `timestamp` first, then the body's fields, so lines
    /// read the same as pi's.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let body = match serde_json::to_value(&self.body).map_err(S::Error::custom)? {
            Value::Object(body) => body,
            other => {
                return Err(S::Error::custom(format_args!(
                    "entry body serialised to {}",
                    json_kind(&other)
                )));
            }
        };
        let mut line = Map::with_capacity(body.len() + 3);
        line.insert("type".into(), Value::String(self.body.type_name().into()));
        line.insert("id".into(), Value::String(self.id.0.clone()));
        let parent = self.parent_id.as_ref().map(|p| Value::String(p.0.clone()));
        line.insert("parentId".into(), parent.unwrap_or(Value::Null));
        line.insert("timestamp".into(), Value::String(self.timestamp.clone()));
        for (key, value) in body {
            if !matches!(key.as_str(), "type" | "id" | "parentId" | "timestamp") {
                line.insert(key, value);
            }
        }
        line.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (kind, object) = tagged_object(deserializer, "type")?;
        entry_from_object(kind.as_deref(), object).map_err(D::Error::custom)
    }
}

fn entry_from_object(kind: Option<&str>, mut object: Map<String, Value>) -> Result<Entry, String> {
    if kind.is_none() {
        return Err("missing string field `type`".into());
    }
    let id = match object.shift_remove("id") {
        Some(Value::String(id)) => EntryId(id),
        _ => return Err("missing string field `id`".into()),
    };
    let parent_id = match object.shift_remove("parentId") {
        None | Some(Value::Null) => None,
        Some(Value::String(parent)) => Some(EntryId(parent)),
        Some(other) => return Err(format!("`parentId` is {}", json_kind(&other))),
    };
    let timestamp = match object.shift_remove("timestamp") {
        Some(Value::String(timestamp)) => timestamp,
        _ => return Err("missing string field `timestamp`".into()),
    };
    let body = body_from_object(kind, object).map_err(|e| e.to_string())?;
    Ok(Entry {
        id,
        parent_id,
        timestamp,
        body,
    })
}

/// One decoded line.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "transient: matched at once; boxing would allocate per line to shrink the once-per-file header case"
)]
pub(crate) enum Line {
    Header(SessionHeader),
    Entry(Entry),
}

/// Why a line is not a record; the reader turns this into a [`crate::BadLineReason`].
#[derive(Debug)]
pub(crate) enum DecodeError {
    Json(serde_json::Error),
    Shape(String),
}

/// Decodes one line (without its `\n`). One JSON parse; the typed structs are then built from
/// the parsed tree by moving its strings, never by re-reading the bytes.
pub(crate) fn decode_line(bytes: &[u8]) -> Result<Line, DecodeError> {
    let value: Value = serde_json::from_slice(bytes).map_err(DecodeError::Json)?;
    let Value::Object(object) = value else {
        return Err(DecodeError::Shape(format!(
            "line is {}, not an object",
            json_kind(&value)
        )));
    };
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if kind.as_deref() == Some("session") {
        SessionHeader::deserialize(Value::Object(object))
            .map(Line::Header)
            .map_err(|e| DecodeError::Shape(format!("bad session header: {e}")))
    } else {
        entry_from_object(kind.as_deref(), object)
            .map(Line::Entry)
            .map_err(DecodeError::Shape)
    }
}

/// Encodes a record as one line, `\n` included.
pub(crate) fn encode_line<T: Serialize>(record: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_known_type_deserialises_as_known() {
        let bodies = [
            json!({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}),
            json!({"type": "model_change", "provider": "p", "modelId": "m"}),
            json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
            json!({"type": "compaction", "summary": "s", "firstKeptEntryId": "0000000a", "tokensBefore": 5}),
            json!({"type": "branch_summary", "fromId": "0000000a", "summary": "s"}),
            json!({"type": "custom", "customType": "x"}),
            json!({"type": "custom_message", "customType": "x", "content": "c", "display": true}),
            json!({"type": "label", "targetId": "0000000a", "label": "l"}),
            json!({"type": "session_info", "name": "n"}),
        ];
        assert_eq!(bodies.len(), KNOWN_TYPES.len());
        for body in bodies {
            let parsed: EntryBody = serde_json::from_value(body.clone()).unwrap();
            assert!(!matches!(parsed, EntryBody::Unknown(_)), "{body}");
            assert_eq!(parsed.type_name(), body["type"]);
            assert_eq!(serde_json::to_value(&parsed).unwrap(), body);
        }
    }

    #[test]
    fn only_lowercase_eight_hex_ids_map_to_u32() {
        assert_eq!(EntryId::new("0000002a").as_u32(), Some(42));
        assert_eq!(EntryId::from_u32(42).as_str(), "0000002a");
        for id in ["0000002A", "2a", "00000002a", "+000002a", "zzzzzzzz"] {
            assert_eq!(EntryId::new(id).as_u32(), None, "{id}");
        }
    }
}

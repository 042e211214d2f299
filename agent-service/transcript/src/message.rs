//! Conversation messages as pi-ai stores them inside `message` entries, tagged by `role`.
//!
//! Roles and content-block types this crate does not know read back as `Other` with every field
//! kept, so a transcript written by a newer runtime still loads. A *known* role or block type
//! with a malformed body is an error, which the reader reports as a bad line.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object and the value of its tag field, if that is a string.
pub(crate) type Tagged = (Option<String>, Map<String, Value>);

/// Splits a JSON object into its tag and the object itself (tag still inside).
pub(crate) fn tagged_object<'de, D: Deserializer<'de>>(
    deserializer: D,
    tag: &str,
) -> Result<Tagged, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Object(object) => {
            let name = object.get(tag).and_then(Value::as_str).map(str::to_owned);
            Ok((name, object))
        }
        other => Err(D::Error::custom(format_args!(
            "expected a JSON object, found {}",
            json_kind(&other)
        ))),
    }
}

pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// `{role:"user", content, timestamp}`.
    User(UserMessage),
    /// `{role:"assistant", content, provider, model, ...}`.
    Assistant(AssistantMessage),
    /// `{role:"toolResult", toolCallId, toolName, content, isError, ...}`.
    ToolResult(ToolResultMessage),
    /// A role this crate does not know (e.g. `custom`, `bashExecution`), every field kept.
    #[serde(skip)]
    Other(Map<String, Value>),
}

const KNOWN_ROLES: [&str; 3] = ["user", "assistant", "toolResult"];

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Other(object) => object.serialize(serializer),
            known => Self::serialize(known, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (role, object) = tagged_object(deserializer, "role")?;
        if role
            .as_deref()
            .is_some_and(|role| KNOWN_ROLES.contains(&role))
        {
            Self::deserialize(Value::Object(object)).map_err(D::Error::custom)
        } else {
            Ok(Self::Other(object))
        }
    }
}

/// A user turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Plain text or content blocks (text and images).
    pub content: UserContent,
    /// Milliseconds since the Unix epoch.
    pub timestamp: i64,
}

/// Content that may be a bare string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// A bare string.
    Text(String),
    /// A list of content blocks.
    Blocks(Vec<ContentBlock>),
}

/// One assistant reply, as the provider returned it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in stream order.
    pub content: Vec<ContentBlock>,
    /// Provider id, e.g. `anthropic`.
    pub provider: String,
    /// Model id as the provider names it.
    pub model: String,
    /// Wire API used, e.g. `openai-responses`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token usage reported by the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why generation stopped.
    pub stop_reason: StopReason,
    /// The provider's error text when `stop_reason` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub timestamp: i64,
}

/// Token counts for one assistant message; a count the provider omitted reads as 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Sum as the provider reports it.
    pub total_tokens: u64,
    /// Cost breakdown, opaque to this crate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Value>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// `stop`: natural end of turn.
    Stop,
    /// `length`: output token limit reached.
    Length,
    /// `toolUse`: the model called tools.
    ToolUse,
    /// `error`: the provider failed.
    Error,
    /// `aborted`: the run was aborted.
    Aborted,
    /// A reason this crate does not know, kept as written so a newer runtime's assistant
    /// messages still load.
    Other(String),
}

impl StopReason {
    /// The reason as written.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::Other(other) => other,
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(deserializer)?.as_str() {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "toolUse" => Self::ToolUse,
            "error" => Self::Error,
            "aborted" => Self::Aborted,
            other => Self::Other(other.to_owned()),
        })
    }
}

/// The result of one tool call, stored as its own message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The `id` of the `toolCall` block this answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Whether the tool failed.
    pub is_error: bool,
    /// UI/runtime metadata, never replayed to a provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Milliseconds since the Unix epoch.
    pub timestamp: i64,
}

/// One block of message content, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// `{type:"text", text}`.
    Text(TextContent),
    /// `{type:"thinking", thinking, thinkingSignature?}`.
    Thinking(ThinkingContent),
    /// `{type:"toolCall", id, name, arguments}`.
    ToolCall(ToolCall),
    /// `{type:"image", data, mimeType}`.
    Image(ImageContent),
    /// A block type this crate does not know, every field kept.
    #[serde(skip)]
    Other(Map<String, Value>),
}

const KNOWN_BLOCKS: [&str; 4] = ["text", "thinking", "toolCall", "image"];

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent { text: text.into() })
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Other(object) => object.serialize(serializer),
            known => Self::serialize(known, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (kind, object) = tagged_object(deserializer, "type")?;
        if kind
            .as_deref()
            .is_some_and(|kind| KNOWN_BLOCKS.contains(&kind))
        {
            Self::deserialize(Value::Object(object)).map_err(D::Error::custom)
        } else {
            Ok(Self::Other(object))
        }
    }
}

/// Visible text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
}

/// Model reasoning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text.
    pub thinking: String,
    /// Provider signature needed to replay the block; for a redacted block, the provider's
    /// encrypted `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// Whether the provider sent this reasoning encrypted (Anthropic's `redacted_thinking`):
    /// `thinking` is then a placeholder and the signature holds the data to replay.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id, echoed by the matching tool result.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, any JSON.
    pub arguments: Value,
}

/// An inline image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 data.
    pub data: String,
    /// e.g. `image/png`.
    pub mime_type: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_known_role_and_block_deserialises_as_known() {
        let blocks = [
            json!({"type": "text", "text": "a"}),
            json!({"type": "thinking", "thinking": "t"}),
            json!({"type": "toolCall", "id": "c", "name": "n", "arguments": {}}),
            json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
        ];
        assert_eq!(blocks.len(), KNOWN_BLOCKS.len());
        for block in blocks {
            let parsed: ContentBlock = serde_json::from_value(block.clone()).unwrap();
            assert!(!matches!(parsed, ContentBlock::Other(_)), "{block}");
            assert_eq!(serde_json::to_value(&parsed).unwrap(), block);
        }
        let messages = [
            json!({"role": "user", "content": "hi", "timestamp": 1}),
            json!({"role": "assistant", "content": [], "provider": "p", "model": "m",
                   "stopReason": "stop", "timestamp": 1}),
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "n", "content": [],
                   "isError": false, "timestamp": 1}),
        ];
        assert_eq!(messages.len(), KNOWN_ROLES.len());
        for message in messages {
            let parsed: Message = serde_json::from_value(message.clone()).unwrap();
            assert!(!matches!(parsed, Message::Other(_)), "{message}");
            assert_eq!(serde_json::to_value(&parsed).unwrap(), message);
        }
    }
}

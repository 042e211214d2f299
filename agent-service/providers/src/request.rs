//! What the agent loop hands a provider, and what a provider streams back while it answers.

use std::fmt;
use std::sync::Arc;

use openclaw_config::raw::ThinkingLevel;
use openclaw_transcript::{ContentBlock, Message, ToolCall, Usage, UserContent};
use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// One model call: everything a provider needs to build its wire request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// The wire model id, already mapped from the model reference by the provider's rule
    /// ([`crate::ResolvedModel::wire_model`], L14).
    pub model: String,
    /// The system prompt, split at the prompt-cache boundary.
    pub system: SystemPrompt,
    /// The conversation so far, tool calls already paired with their results by the loop.
    /// Shared: the loop keeps the list for the session's next call, and retries send it again.
    pub messages: Arc<Vec<Message>>,
    /// Tools the model may call, in the order they are sent (shared by a run's calls).
    pub tools: Arc<[ToolSpec]>,
    /// Output token limit; `None` takes the model's `maxTokens` from config, else leaves it
    /// to the API (Anthropic, which requires one, gets [`crate::DEFAULT_ANTHROPIC_MAX_TOKENS`]).
    pub max_output_tokens: Option<u32>,
    /// Reasoning effort (`minimal`, `low`, `medium`, `high`, `xhigh`), from the agent's
    /// thinking level ([`reasoning_effort`]); `None` or `off` sends none. Anthropic turns it
    /// into a `thinking` budget, Responses into `reasoning.effort` (with encrypted reasoning
    /// included for replay), Chat Completions into `reasoning_effort`.
    pub reasoning_effort: Option<String>,
}

impl ModelRequest {
    /// About how many bytes a wire format's body for this request takes: the texts, the tool
    /// schemas, and a margin for the JSON around them and for escapes. The capacity a body
    /// starts with, so that encoding a long conversation does not copy the growing body
    /// again and again; a guess that is short costs one more copy, nothing else.
    pub(crate) fn body_size_hint(&self) -> usize {
        let messages: usize = self.messages.iter().map(message_size).sum();
        let tools: usize = self
            .tools
            .iter()
            .map(|tool| tool.name.len() + tool.description.len() + tool.parameters.get().len() + 64)
            .sum();
        let plain = self.model.len() + self.system.stable.len() + self.system.dynamic.len();
        let total = plain + messages + tools + 512;
        total + total / 8
    }
}

/// The bytes of a message's texts and data, plus a little for its JSON frame.
fn message_size(message: &Message) -> usize {
    match message {
        Message::User(user) => {
            64 + match &user.content {
                UserContent::Text(text) => text.len(),
                UserContent::Blocks(blocks) => blocks_size(blocks),
            }
        }
        Message::Assistant(assistant) => 64 + blocks_size(&assistant.content),
        Message::ToolResult(result) => {
            64 + result.tool_call_id.len() + result.tool_name.len() + blocks_size(&result.content)
        }
        Message::Other(_) => 256,
    }
}

fn blocks_size(blocks: &[ContentBlock]) -> usize {
    blocks
        .iter()
        .map(|block| {
            32 + match block {
                ContentBlock::Text(text) => text.text.len(),
                ContentBlock::Thinking(thinking) => {
                    thinking.thinking.len()
                        + thinking.thinking_signature.as_ref().map_or(0, String::len)
                }
                ContentBlock::ToolCall(call) => {
                    call.id.len()
                        + call.name.len()
                        + match &call.arguments {
                            Value::String(raw) => raw.len(),
                            _ => 128,
                        }
                }
                ContentBlock::Image(image) => image.data.len() + image.mime_type.len(),
                ContentBlock::Other(_) => 256,
            }
        })
        .sum()
}

/// The system prompt split at the prompt-cache boundary (P-24). Cloning one is cheap: the
/// texts are shared, so every model call of a run carries the run's render without a copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPrompt {
    /// Everything above the boundary: identical across turns, so caches can reuse it.
    pub stable: Arc<str>,
    /// Everything below the boundary: per-turn sections.
    pub dynamic: Arc<str>,
}

impl SystemPrompt {
    /// The whole prompt for APIs with a single system text: `stable + "\n\n" + dynamic`, or the
    /// one part that is non-empty. The stable part stays a byte prefix, so prefix caches still
    /// hit.
    pub fn joined(&self) -> String {
        match (self.stable.is_empty(), self.dynamic.is_empty()) {
            (_, true) => self.stable.to_string(),
            (true, false) => self.dynamic.to_string(),
            (false, false) => format!("{}\n\n{}", self.stable, self.dynamic),
        }
    }
}

/// A tool the model may call. Cloning one is cheap: its long texts, the description and the
/// schema, are shared, so a run hands the same definitions to every model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// What the tool does, for the model (shared).
    pub description: Arc<str>,
    /// JSON Schema of the arguments object, encoded once.
    pub parameters: ToolSchema,
}

/// The JSON Schema of a tool's arguments, encoded as JSON text once and shared: every request
/// body writes the text as it is, and the prompt's tool list shows the same text.
///
/// The text is the compact encoding of the schema value ([`Value`]'s `to_string`), keys in the
/// schema's own order.
#[derive(Clone)]
pub struct ToolSchema(Arc<RawValue>);

impl ToolSchema {
    /// The schema as compact JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl From<&Value> for ToolSchema {
    fn from(schema: &Value) -> Self {
        // Encoding a `Value` cannot fail (its keys are strings, its numbers finite); `null`
        // stands in rather than a panic should that ever change.
        let raw =
            serde_json::value::to_raw_value(schema).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Self(Arc::from(raw))
    }
}

impl From<Value> for ToolSchema {
    fn from(schema: Value) -> Self {
        Self::from(&schema)
    }
}

impl Serialize for ToolSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (*self.0).serialize(serializer)
    }
}

impl fmt::Display for ToolSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolSchema").field(&self.get()).finish()
    }
}

impl PartialEq for ToolSchema {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for ToolSchema {}

/// Something the model produced, sent to the caller as soon as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Visible text.
    TextDelta(String),
    /// Reasoning text.
    ThinkingDelta(String),
    /// The model started a tool call; its arguments are still streaming.
    ToolCallStarted {
        /// The call id that the tool result must echo.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A tool call whose arguments are complete: parsed as JSON, or, when their text is not
    /// JSON (or was cut off by the output limit), carried raw (see [`tool_arguments`]). Sent
    /// once per call; a call whose stream broke off is never sent.
    ToolCallFinished(ToolCall),
    /// Token usage of the whole reply, sent once, just before the reply completes.
    Usage(Usage),
}

/// A tool call's argument text that is not JSON: the model wrote it badly, or the output limit
/// cut it off (the reply's stop reason is then `length`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidArguments {
    /// The argument text exactly as the model sent it.
    pub raw: String,
    /// Why it is not usable, in the JSON parser's words (`EOF while parsing an object at
    /// line 1 column 12`).
    pub error: String,
}

/// The arguments of a tool call from a reply, or why they are invalid.
///
/// Every wire format sends a call's arguments as a JSON object (Anthropic's `input`, the
/// OpenAI formats' `arguments` text), so a reply carries a call whose text did not parse with
/// that text as a JSON string in [`ToolCall::arguments`], which keeps it in the transcript and
/// replays it as the model wrote it. This reads that convention back: a string is
/// [`InvalidArguments`], with the parse error; anything else is the parsed value. The loop
/// answers an invalid call with an error result telling the model what was wrong, instead of
/// running the tool.
pub fn tool_arguments(call: &ToolCall) -> Result<&Value, InvalidArguments> {
    match &call.arguments {
        Value::String(raw) => Err(InvalidArguments {
            raw: raw.clone(),
            error: match serde_json::from_str::<Value>(raw) {
                Err(error) => error.to_string(),
                Ok(_) => "the arguments are not a JSON object".to_owned(),
            },
        }),
        parsed => Ok(parsed),
    }
}

/// The text blocks of `blocks` joined by newlines; images and other blocks are left out.
pub(crate) fn joined_text(blocks: &[ContentBlock]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// The reasoning effort a thinking level asks for (`thinkingDefault`): the level's own name,
/// `adaptive` as `medium` (the level the prompt states for it), none for `off` or no level.
pub fn reasoning_effort(level: Option<ThinkingLevel>) -> Option<String> {
    let effort = match level? {
        ThinkingLevel::Off => return None,
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium | ThinkingLevel::Adaptive => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "xhigh",
    };
    Some(effort.to_owned())
}

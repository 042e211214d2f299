//! The Anthropic Messages API: `POST {baseUrl}/v1/messages` with `x-api-key`,
//! `anthropic-version: 2023-06-01` and `stream: true`.
//!
//! Request (P-24): `system` is two text blocks, the STABLE prefix first carrying
//! `cache_control: {type: "ephemeral"}`, then the dynamic suffix without it, so every turn of a
//! session reuses the cached prefix (tools sit before `system` in Anthropic's cache order and
//! are covered by the same breakpoint). A second breakpoint on the last user-side block caches
//! the conversation so far. Tool calls are `tool_use` blocks, results `tool_result` blocks in
//! one user message per run of results. Thinking blocks are replayed only from earlier
//! Anthropic replies, with their signatures; `redacted_thinking` blocks with their `data`.
//! A thinking level sets `thinking: {type: "enabled", budget_tokens}` below `max_tokens`.
//!
//! Stream: `message_start` (input and cache usage), `content_block_start` (text, tool_use,
//! thinking, redacted_thinking), `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`,
//! `signature_delta`), `content_block_stop`, `message_delta` (stop reason, output usage),
//! `message_stop` (terminal), `ping`, `error`.

use http::{HeaderName, HeaderValue};
use openclaw_transcript::{ContentBlock, Message, StopReason, ToolResultMessage, UserContent};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

use crate::body::to_bytes;
use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::reply::{ReplyBuilder, count};
use crate::request::{ModelRequest, ToolSchema};
use crate::sse::SseEvent;
use crate::transport::{Auth, Endpoint, WireDecoder};

const API: &str = "anthropic-messages";

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `max_tokens` when neither the request nor the model's `maxTokens` sets one (the Messages
/// API requires the field): the output limit of Claude Opus 4 and 4.1, below that of every
/// later model (64,000). Older models with a smaller limit (Claude 3.5: 8,192) need their
/// `maxTokens` configured.
pub const DEFAULT_ANTHROPIC_MAX_TOKENS: u32 = 32_000;

/// A provider speaking the Anthropic Messages API.
pub type AnthropicMessages = HttpProvider<AnthropicWire>;

/// The Anthropic Messages wire format, for [`AnthropicMessages`].
#[derive(Debug)]
pub struct AnthropicWire;

impl Wire for AnthropicWire {
    const API: &'static str = API;
    const NAME: &'static str = "AnthropicMessages";
    type Decoder = AnthropicDecoder;

    /// The endpoint's base URL is without `/v1`; one ending in `/v1` is accepted too.
    fn post(endpoint: &Endpoint, request: &ModelRequest) -> Result<Post, ProviderError> {
        let path = if endpoint.base_url().ends_with("/v1") {
            "/messages"
        } else {
            "/v1/messages"
        };
        let headers = vec![(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        )];
        Ok(Post {
            path,
            auth: Auth::XApiKey,
            headers,
            body: request_body(request)?,
        })
    }
}

/// The smallest thinking budget the API accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

/// Thinking budget for a reasoning effort; `None` (also `off`) turns thinking off.
fn thinking_budget(effort: Option<&str>) -> Option<u32> {
    match effort? {
        "minimal" => Some(MIN_THINKING_BUDGET),
        "low" => Some(4096),
        "medium" => Some(8192),
        "high" | "xhigh" | "max" => Some(16_384),
        _ => None,
    }
}

/// `max_tokens` and the thinking budget, which counts against it and must stay below it. The
/// limit (the request's, the model's `maxTokens`, else [`DEFAULT_ANTHROPIC_MAX_TOKENS`]) is a
/// cap, usually the model's own maximum: the budget shrinks to leave at least
/// [`MIN_THINKING_BUDGET`] tokens of answer, and thinking is off when even the smallest budget
/// does not fit.
fn token_limits(request: &ModelRequest) -> (u32, Option<u32>) {
    let cap = request
        .max_output_tokens
        .unwrap_or(DEFAULT_ANTHROPIC_MAX_TOKENS);
    let budget = thinking_budget(request.reasoning_effort.as_deref());
    let room = cap.saturating_sub(MIN_THINKING_BUDGET);
    (
        cap,
        budget.and_then(|budget| (room >= MIN_THINKING_BUDGET).then(|| budget.min(room))),
    )
}

/// The JSON body for `request`.
pub(crate) fn request_body(request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    let mut system = Vec::with_capacity(2);
    if !request.system.stable.is_empty() {
        system.push(Block::Text {
            text: &request.system.stable,
            cache_control: Some(EPHEMERAL),
        });
    }
    if !request.system.dynamic.is_empty() {
        system.push(Block::Text {
            text: &request.system.dynamic,
            cache_control: None,
        });
    }
    to_bytes(&Body {
        request,
        system,
        messages: messages(&request.messages),
    })
}

/// The request body: its fields in the order the API documents them.
struct Body<'a> {
    request: &'a ModelRequest,
    system: Vec<Block<'a>>,
    messages: Vec<MessageOut<'a>>,
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let (max_tokens, budget) = token_limits(request);
        let mut body = serializer.serialize_map(None)?;
        body.serialize_entry("model", &request.model)?;
        body.serialize_entry("max_tokens", &max_tokens)?;
        if !self.system.is_empty() {
            body.serialize_entry("system", &self.system)?;
        }
        body.serialize_entry("messages", &self.messages)?;
        if !request.tools.is_empty() {
            body.serialize_entry(
                "tools",
                &request
                    .tools
                    .iter()
                    .map(|tool| ToolOut {
                        name: &tool.name,
                        description: &tool.description,
                        input_schema: &tool.parameters,
                    })
                    .collect::<Vec<_>>(),
            )?;
        }
        if let Some(budget) = budget {
            body.serialize_entry(
                "thinking",
                &Thinking {
                    kind: "enabled",
                    budget_tokens: budget,
                },
            )?;
        }
        body.serialize_entry("stream", &true)?;
        body.end()
    }
}

#[derive(Serialize)]
struct ToolOut<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a ToolSchema,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// `cache_control: {type: "ephemeral"}`, a prompt-cache breakpoint.
#[derive(Clone, Copy, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// One message: a role and its content blocks.
#[derive(Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

/// A content block, tagged by its `type`. Only the blocks a user message holds can carry the
/// conversation's cache breakpoint.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: ToolId<'a>,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: ToolId<'a>,
        content: Vec<Block<'a>>,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl Block<'_> {
    /// Puts the conversation's cache breakpoint on this block, if it is one that takes it.
    fn mark_cached(&mut self) {
        match self {
            Self::Text { cache_control, .. }
            | Self::Image { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => *cache_control = Some(EPHEMERAL),
            Self::Thinking { .. } | Self::RedactedThinking { .. } | Self::ToolUse { .. } => {}
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

/// A tool call's `input`: its arguments when they are a JSON object, else `{}` (arguments
/// that did not parse travel as text, which the API refuses here).
struct Input<'a>(Option<&'a Value>);

impl Serialize for Input<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(arguments) => arguments.serialize(serializer),
            None => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

fn messages(messages: &[Message]) -> Vec<MessageOut<'_>> {
    let mut out: Vec<MessageOut<'_>> = Vec::new();
    for message in messages {
        match message {
            Message::User(user) => {
                let blocks = match &user.content {
                    UserContent::Text(text) => text_block(text).into_iter().collect(),
                    UserContent::Blocks(blocks) => blocks.iter().filter_map(user_block).collect(),
                };
                push(&mut out, "user", blocks);
            }
            Message::Assistant(assistant) => {
                let same_api = assistant.api.as_deref() == Some(API);
                let blocks = assistant
                    .content
                    .iter()
                    .filter_map(|block| assistant_block(block, same_api))
                    .collect();
                push(&mut out, "assistant", blocks);
            }
            Message::ToolResult(result) => push(&mut out, "user", vec![tool_result(result)]),
            Message::Other(_) => {}
        }
    }
    // Cache the conversation so far: a breakpoint on the last block of the last user turn.
    if let Some(last) = out.last_mut().filter(|last| last.role == "user")
        && let Some(block) = last.content.last_mut()
    {
        block.mark_cached();
    }
    out
}

/// Appends blocks as a message of `role`, merging into the previous message of the same role
/// (tool results after tool results, a user message after results); empty messages are
/// skipped because the API refuses them.
fn push<'a>(out: &mut Vec<MessageOut<'a>>, role: &'static str, blocks: Vec<Block<'a>>) {
    if blocks.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.role == role => last.content.extend(blocks),
        _ => out.push(MessageOut {
            role,
            content: blocks,
        }),
    }
}

/// The API refuses empty text blocks.
fn text_block(text: &str) -> Option<Block<'_>> {
    (!text.is_empty()).then_some(Block::Text {
        text,
        cache_control: None,
    })
}

fn user_block(block: &ContentBlock) -> Option<Block<'_>> {
    match block {
        ContentBlock::Text(text) => text_block(&text.text),
        ContentBlock::Image(image) => Some(Block::Image {
            source: ImageSource {
                kind: "base64",
                media_type: &image.mime_type,
                data: &image.data,
            },
            cache_control: None,
        }),
        _ => None,
    }
}

fn assistant_block(block: &ContentBlock, same_api: bool) -> Option<Block<'_>> {
    match block {
        ContentBlock::Text(text) => text_block(&text.text),
        ContentBlock::Thinking(thinking) if same_api => {
            let signature = thinking
                .thinking_signature
                .as_deref()
                .filter(|s| !s.is_empty())?;
            Some(if thinking.redacted {
                Block::RedactedThinking { data: signature }
            } else {
                Block::Thinking {
                    thinking: &thinking.thinking,
                    signature,
                }
            })
        }
        ContentBlock::ToolCall(call) => Some(Block::ToolUse {
            id: ToolId(&call.id),
            name: &call.name,
            input: Input(Some(&call.arguments).filter(|arguments| arguments.is_object())),
        }),
        _ => None,
    }
}

fn tool_result(result: &ToolResultMessage) -> Block<'_> {
    Block::ToolResult {
        tool_use_id: ToolId(&result.tool_call_id),
        content: result.content.iter().filter_map(user_block).collect(),
        is_error: result.is_error,
        cache_control: None,
    }
}

/// A tool id as the API accepts it (see [`tool_id`]); an id that is already valid is written
/// as it is.
struct ToolId<'a>(&'a str);

impl Serialize for ToolId<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.chars().all(valid_id_char) {
            serializer.serialize_str(self.0)
        } else {
            serializer.serialize_str(&tool_id(self.0))
        }
    }
}

fn valid_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Anthropic accepts tool ids matching `[a-zA-Z0-9_-]+`; ids made by other APIs may hold other
/// characters. The same mapping applies to a call and its result, so pairs stay paired.
fn tool_id(id: &str) -> String {
    id.chars()
        .map(|c| if valid_id_char(c) { c } else { '_' })
        .collect()
}

#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    reply: ReplyBuilder,
}

impl WireDecoder for AnthropicDecoder {
    fn reply(&mut self) -> &mut ReplyBuilder {
        &mut self.reply
    }

    fn unstreamed(&self, body: Value) -> Vec<SseEvent> {
        let event = |kind: &str, mut data: Value| {
            data["type"] = json!(kind);
            SseEvent {
                event: Some(kind.to_owned()),
                data: data.to_string(),
            }
        };
        if body.get("type").and_then(Value::as_str) == Some("error") {
            return vec![event("error", body)];
        }
        let usage = body.get("usage").cloned().unwrap_or_else(|| json!({}));
        let mut events = vec![event("message_start", json!({"message": {"usage": usage}}))];
        let blocks = body.get("content").and_then(Value::as_array);
        for (index, block) in blocks.into_iter().flatten().enumerate() {
            let delta = |delta: Value| {
                event(
                    "content_block_delta",
                    json!({"index": index, "delta": delta}),
                )
            };
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let start = json!({"type": "tool_use", "id": block.get("id"), "name": block.get("name")});
                    events.push(event(
                        "content_block_start",
                        json!({"index": index, "content_block": start}),
                    ));
                    let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                    events.push(delta(
                        json!({"type": "input_json_delta", "partial_json": input.to_string()}),
                    ));
                }
                Some("thinking") => {
                    let start = json!({"type": "thinking", "thinking": block.get("thinking")});
                    events.push(event(
                        "content_block_start",
                        json!({"index": index, "content_block": start}),
                    ));
                    if let Some(signature) = block.get("signature") {
                        events.push(delta(
                            json!({"type": "signature_delta", "signature": signature}),
                        ));
                    }
                }
                // Text arrives whole in the block's start, as a stream's first piece would.
                _ => events.push(event(
                    "content_block_start",
                    json!({"index": index, "content_block": block}),
                )),
            }
            events.push(event("content_block_stop", json!({"index": index})));
        }
        let stop = json!({"stop_reason": body.get("stop_reason")});
        events.push(event(
            "message_delta",
            json!({"delta": stop, "usage": {"output_tokens": body.pointer("/usage/output_tokens")}}),
        ));
        events.push(event("message_stop", json!({})));
        events
    }

    fn on_event(&mut self, event: &SseEvent) -> Result<bool, ProviderError> {
        let json: Value = serde_json::from_str(&event.data).map_err(|error| {
            ProviderError::malformed(format!("an Anthropic event is not JSON: {error}"))
        })?;
        let kind = json
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let index = count(json.get("index"));
        let text = |value: &Value, field: &str| {
            value
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match kind {
            "message_start" => {
                if let Some(usage) = json.pointer("/message/usage") {
                    self.usage(usage);
                }
            }
            "content_block_start" => {
                let block = json.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => self.reply.text(Some(index), &text(block, "text")),
                    Some("thinking") => {
                        self.reply.open_thinking(index);
                        self.reply.thinking(Some(index), &text(block, "thinking"));
                    }
                    Some("tool_use") => self.reply.tool(
                        index,
                        block.get("id").and_then(Value::as_str),
                        block.get("name").and_then(Value::as_str),
                        None,
                    ),
                    // Reasoning the safety systems encrypted: kept to be replayed as sent.
                    Some("redacted_thinking") => {
                        self.reply.redacted_thinking(index, &text(block, "data"));
                    }
                    // Server tools are not represented in transcripts.
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = json.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => self.reply.text(Some(index), &text(delta, "text")),
                    Some("thinking_delta") => {
                        self.reply.thinking(Some(index), &text(delta, "thinking"))
                    }
                    Some("signature_delta") => {
                        self.reply
                            .signature(index, &text(delta, "signature"), false)
                    }
                    Some("input_json_delta") if self.reply.has_tool(index) => {
                        self.reply
                            .tool(index, None, None, Some(&text(delta, "partial_json")));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => self.reply.finish_tool(index)?,
            "message_delta" => {
                if let Some(usage) = json.get("usage") {
                    self.usage(usage);
                }
                if let Some(reason) = json.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    let stop = match reason {
                        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
                        "tool_use" => StopReason::ToolUse,
                        "refusal" => {
                            self.reply.set_error_message("the model refused to answer");
                            StopReason::Error
                        }
                        _ => StopReason::Stop,
                    };
                    self.reply.set_stop(stop);
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let failure = json.get("error").unwrap_or(&Value::Null);
                let message = failure
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the stream failed")
                    .to_owned();
                return Err(error::from_stream(
                    failure.get("type").and_then(Value::as_str),
                    message,
                ));
            }
            _ => {}
        }
        Ok(false)
    }
}

impl AnthropicDecoder {
    /// Anthropic reports usage in parts (`message_start`, then `message_delta`); each field
    /// present overrides, and `input_tokens` already excludes cached tokens. Cache writes come
    /// as `cache_creation_input_tokens`, or, from a gateway that passes on only the breakdown
    /// by lifetime, as the sum of `cache_creation`'s counts.
    fn usage(&mut self, usage: &Value) {
        let breakdown = usage
            .get("cache_creation")
            .and_then(Value::as_object)
            .map(|parts| parts.values().filter_map(Value::as_u64).sum::<u64>());
        let field = |name: &str| {
            let value = usage.get(name).and_then(Value::as_u64);
            match name {
                "cache_creation_input_tokens" => value.or(breakdown),
                _ => value,
            }
        };
        let total = self.reply.usage_mut();
        for (name, target) in [
            ("input_tokens", &mut total.input),
            ("output_tokens", &mut total.output),
            ("cache_read_input_tokens", &mut total.cache_read),
            ("cache_creation_input_tokens", &mut total.cache_write),
        ] {
            if let Some(value) = field(name) {
                *target = value;
            }
        }
        total.total_tokens = total.input + total.output + total.cache_read + total.cache_write;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_ids_are_sanitised_and_errors_mapped() {
        assert_eq!(tool_id("call_1|fc.2"), "call_1_fc_2");
        let mut decoder = AnthropicDecoder::default();
        let error = SseEvent {
            event: Some("error".into()),
            data: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
        };
        assert_eq!(
            decoder.on_event(&error),
            Err(ProviderError::server(529, "Overloaded"))
        );
    }

    #[test]
    fn cache_writes_come_from_the_flat_count_or_its_breakdown() {
        let written = |usage: Value| {
            let mut decoder = AnthropicDecoder::default();
            decoder.usage(&usage);
            decoder.reply.usage_mut().cache_write
        };
        assert_eq!(written(json!({"cache_creation_input_tokens": 50})), 50);
        let breakdown = json!({"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 20});
        assert_eq!(written(json!({"cache_creation": breakdown})), 50);
        // Both given (Anthropic's own shape): the flat count, once.
        assert_eq!(
            written(json!({"cache_creation_input_tokens": 50, "cache_creation": breakdown})),
            50
        );
    }

    #[test]
    fn thinking_budget_fits_under_max_tokens() {
        let limits = |max: Option<u32>, effort: Option<&str>| {
            token_limits(&ModelRequest {
                max_output_tokens: max,
                reasoning_effort: effort.map(str::to_owned),
                ..ModelRequest::default()
            })
        };
        assert_eq!(limits(None, None), (32_000, None));
        assert_eq!(limits(None, Some("low")), (32_000, Some(4096)));
        assert_eq!(limits(Some(32_000), Some("high")), (32_000, Some(16_384)));
        assert_eq!(limits(Some(6000), Some("high")), (6000, Some(4976)));
        assert_eq!(limits(Some(2000), Some("high")), (2000, None));
        assert_eq!(limits(Some(2000), Some("off")), (2000, None));
    }
}

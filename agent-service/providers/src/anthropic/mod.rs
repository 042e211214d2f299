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
use openclaw_transcript::StopReason;
use serde_json::{Value, json};

use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::reply::{ReplyBuilder, count};
use crate::request::ModelRequest;
use crate::sse::SseEvent;
use crate::transport::{Auth, Endpoint, WireDecoder};

mod request_body;

use request_body::request_body;

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

/// Anthropic accepts tool ids matching `[a-zA-Z0-9_-]+`; ids made by other APIs may hold other
/// characters. The same mapping applies to a call and its result, so pairs stay paired.
fn tool_id(id: &str) -> String {
    id.chars()
        .map(|c| if valid_id_char(c) { c } else { '_' })
        .collect()
}

fn valid_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
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

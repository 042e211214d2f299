//! The OpenAI Responses API: `POST {baseUrl}/responses` with `stream: true`.
//!
//! Request: `instructions` is the joined system prompt; `input` holds user messages, assistant
//! text (`message` items whose content is the text, the SDK's `EasyInputMessageParam`),
//! `function_call` items, `function_call_output`
//! items, and reasoning items replayed from earlier Responses replies (their encrypted content
//! travels in the thinking block's signature, as pi-ai stores it). `store: false`, so nothing
//! depends on server-side state.
//!
//! Stream: `response.output_item.added/done`, `response.output_text.delta`,
//! `response.function_call_arguments.delta/done`, `response.reasoning_summary_text.delta`,
//! `response.completed` / `response.incomplete` (terminal, with usage), `response.failed` and
//! `error`. Unknown event types are ignored, as Codex does.

use openclaw_transcript::StopReason;
use serde_json::{Value, json};

use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::reply::{ReplyBuilder, count};
use crate::request::ModelRequest;
use crate::sse::SseEvent;
use crate::transport::{Auth, Endpoint, WireDecoder};
use crate::usage::openai_usage;

mod request_body;

use request_body::request_body;

const API: &str = "openai-responses";

/// A provider speaking the OpenAI Responses API.
pub type OpenAiResponses = HttpProvider<ResponsesWire>;

/// The OpenAI Responses wire format, for [`OpenAiResponses`].
#[derive(Debug)]
pub struct ResponsesWire;

impl Wire for ResponsesWire {
    const API: &'static str = API;
    const NAME: &'static str = "OpenAiResponses";
    type Decoder = ResponsesDecoder;

    fn post(_endpoint: &Endpoint, request: &ModelRequest) -> Result<Post, ProviderError> {
        Ok(Post {
            path: "/responses",
            auth: Auth::Bearer,
            headers: Vec::new(),
            body: request_body(request)?,
        })
    }
}

/// A reasoning item can be replayed without server-side storage only with its encrypted
/// content.
fn replayable_reasoning(signature: Option<&str>) -> Option<Value> {
    let item: Value = serde_json::from_str(signature?).ok()?;
    let is_reasoning = item.get("type").and_then(Value::as_str) == Some("reasoning");
    let encrypted = item.get("encrypted_content").is_some_and(|v| v.is_string());
    (is_reasoning && encrypted).then_some(item)
}

#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    reply: ReplyBuilder,
}

impl WireDecoder for ResponsesDecoder {
    fn reply(&mut self) -> &mut ReplyBuilder {
        &mut self.reply
    }

    fn unstreamed(&self, body: Value) -> Vec<SseEvent> {
        Self::unstreamed_events(body)
    }

    fn on_event(&mut self, event: &SseEvent) -> Result<bool, ProviderError> {
        let json: Value = serde_json::from_str(&event.data).map_err(|error| {
            ProviderError::malformed(format!("a Responses event is not JSON: {error}"))
        })?;
        let kind = json
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let index = count(json.get("output_index"));
        let text = |field: &str| json.get(field).and_then(Value::as_str).unwrap_or_default();
        match kind {
            "response.output_item.added" => {
                let item = json.get("item").unwrap_or(&Value::Null);
                match item_type(item) {
                    "function_call" => self.reply.tool(
                        index,
                        item.get("call_id").and_then(Value::as_str),
                        item.get("name").and_then(Value::as_str),
                        item.get("arguments").and_then(Value::as_str),
                    ),
                    "reasoning" => self.reply.open_thinking(index),
                    _ => {}
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.reply.text(Some(index), text("delta"));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.reply.thinking(Some(index), text("delta"));
            }
            "response.reasoning_summary_part.added"
                if count(json.get("summary_index")) > 0 && self.reply.has_thinking_text(index) =>
            {
                self.reply.thinking(Some(index), "\n\n");
            }
            "response.function_call_arguments.delta" if self.reply.has_tool(index) => {
                self.reply.tool(index, None, None, Some(text("delta")));
            }
            "response.function_call_arguments.done" => {
                self.reply.tool_arguments(index, text("arguments"));
            }
            "response.output_item.done" => {
                self.item_done(index, json.get("item").unwrap_or(&Value::Null))?
            }
            "response.completed" | "response.incomplete" => {
                self.completed(json.get("response").unwrap_or(&Value::Null));
                return Ok(true);
            }
            "response.failed" => {
                let failure = json.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(stream_error(failure));
            }
            "error" => {
                let failure = json.get("error").filter(|e| e.is_object()).unwrap_or(&json);
                return Err(stream_error(failure));
            }
            _ => {}
        }
        Ok(false)
    }
}

impl ResponsesDecoder {
    fn unstreamed_events(body: Value) -> Vec<SseEvent> {
        let event = |kind: &str, mut data: Value| {
            data["type"] = json!(kind);
            SseEvent {
                event: Some(kind.to_owned()),
                data: data.to_string(),
            }
        };
        let status = body
            .get("status")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let failed = body.get("error").is_some_and(|e| !e.is_null());
        match status.as_deref() {
            Some("failed") => return vec![event("response.failed", json!({"response": body}))],
            // An error answered with status 200, not a response at all.
            None if failed => {
                let error = body.get("error").cloned().unwrap_or(Value::Null);
                return vec![event("error", json!({"error": error}))];
            }
            _ => {}
        }
        let mut events: Vec<SseEvent> = body
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, item)| {
                event(
                    "response.output_item.done",
                    json!({"output_index": index, "item": item}),
                )
            })
            .collect();
        let terminal = match status.as_deref() {
            Some("incomplete") => "response.incomplete",
            _ => "response.completed",
        };
        events.push(event(terminal, json!({"response": body})));
        events
    }

    fn item_done(&mut self, index: u64, item: &Value) -> Result<(), ProviderError> {
        match item_type(item) {
            "function_call" => {
                let arguments = item.get("arguments").and_then(Value::as_str);
                if self.reply.has_tool(index) {
                    if let Some(arguments) = arguments {
                        self.reply.tool_arguments(index, arguments);
                    }
                } else {
                    self.reply.tool(
                        index,
                        item.get("call_id").and_then(Value::as_str),
                        item.get("name").and_then(Value::as_str),
                        arguments,
                    );
                }
                self.reply.finish_tool(index)?;
            }
            // A server that sent no deltas still delivers the text in the finished item.
            "message" if !self.reply.has_text(index) => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        self.reply.text(Some(index), text);
                    }
                }
            }
            "reasoning" => {
                if !self.reply.has_thinking_text(index) {
                    let summaries = item.get("summary").and_then(Value::as_array);
                    let texts: Vec<&str> = summaries
                        .into_iter()
                        .flatten()
                        .filter_map(|part| part.get("text").and_then(Value::as_str))
                        .collect();
                    self.reply.thinking(Some(index), &texts.join("\n\n"));
                }
                self.reply.signature(index, &item.to_string(), true);
            }
            _ => {}
        }
        Ok(())
    }

    fn completed(&mut self, response: &Value) {
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            self.reply
                .set_usage(openai_usage(usage, "input_tokens", "input_tokens_details"));
        }
        let reason = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        let stop = match (response.get("status").and_then(Value::as_str), reason) {
            (Some("incomplete"), Some("content_filter")) => {
                self.reply
                    .set_error_message("the response was stopped by a content filter");
                StopReason::Error
            }
            (Some("incomplete"), _) => StopReason::Length,
            _ if self.reply.has_tool_calls() => StopReason::ToolUse,
            _ => StopReason::Stop,
        };
        self.reply.set_stop(stop);
    }
}

fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or_default()
}

fn stream_error(failure: &Value) -> ProviderError {
    let code = failure
        .get("code")
        .or_else(|| failure.get("type"))
        .and_then(Value::as_str);
    let message = failure
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the response failed")
        .to_owned();
    error::from_stream(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_transcript::ContentBlock;

    fn feed(decoder: &mut ResponsesDecoder, event: Value) -> Result<bool, ProviderError> {
        decoder.on_event(&SseEvent {
            event: None,
            data: event.to_string(),
        })
    }

    #[test]
    fn failed_and_error_events_map_their_codes() {
        let mut decoder = ResponsesDecoder::default();
        let failed = json!({
            "type": "response.failed",
            "response": {"error": {"code": "context_length_exceeded", "message": "too long"}},
        });
        assert!(matches!(
            feed(&mut decoder, failed),
            Err(ProviderError::ContextOverflow { .. })
        ));
        let error = json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow"});
        assert!(matches!(
            feed(&mut decoder, error),
            Err(ProviderError::RateLimited { .. })
        ));
    }

    #[test]
    fn reasoning_items_keep_their_encrypted_content_for_replay() {
        let mut decoder = ResponsesDecoder::default();
        let item = json!({
            "type": "reasoning", "id": "rs_1", "encrypted_content": "enc",
            "summary": [{"type": "summary_text", "text": "plan"}],
        });
        let opened = json!({"type": "reasoning", "id": "rs_1", "summary": []});
        let added =
            json!({"type": "response.output_item.added", "output_index": 0, "item": opened});
        feed(&mut decoder, added).unwrap();
        feed(
            &mut decoder,
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        )
        .unwrap();
        let message = decoder.reply.into_message("p", "m", API, 0);
        let ContentBlock::Thinking(thinking) = &message.content[0] else {
            panic!("{message:?}")
        };
        assert_eq!(thinking.thinking, "plan");
        assert_eq!(
            replayable_reasoning(thinking.thinking_signature.as_deref()),
            Some(item)
        );
    }

    #[test]
    fn incomplete_means_length() {
        let mut decoder = ResponsesDecoder::default();
        let response = json!({
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
        });
        let incomplete = json!({"type": "response.incomplete", "response": response});
        let done = feed(&mut decoder, incomplete).unwrap();
        assert!(done);
        assert_eq!(
            decoder.reply.into_message("p", "m", API, 0).stop_reason,
            StopReason::Length
        );
    }
}

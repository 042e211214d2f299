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

use openclaw_transcript::{ContentBlock, Message, StopReason, ToolResultMessage, UserContent};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

use crate::body::{ArgumentText, DataUrl, SystemText, TextBlocks, to_bytes};
use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::reply::{ReplyBuilder, count};
use crate::request::{ModelRequest, ToolSchema};
use crate::sse::SseEvent;
use crate::transport::{Auth, Endpoint, WireDecoder};
use crate::usage::openai_usage;

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

/// The JSON body for `request`.
pub(crate) fn request_body(request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    to_bytes(&Body {
        request,
        input: input_items(&request.messages),
    })
}

/// The request body: its fields in the order the API documents them.
struct Body<'a> {
    request: &'a ModelRequest,
    input: Vec<Item<'a>>,
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let mut body = serializer.serialize_map(None)?;
        body.serialize_entry("model", &request.model)?;
        let instructions = SystemText(&request.system);
        if !instructions.is_empty() {
            body.serialize_entry("instructions", &instructions)?;
        }
        body.serialize_entry("input", &self.input)?;
        if !request.tools.is_empty() {
            body.serialize_entry(
                "tools",
                &request
                    .tools
                    .iter()
                    .map(|tool| FunctionTool {
                        kind: "function",
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.parameters,
                        strict: false,
                    })
                    .collect::<Vec<_>>(),
            )?;
            body.serialize_entry("tool_choice", "auto")?;
            body.serialize_entry("parallel_tool_calls", &true)?;
        }
        if let Some(max) = request.max_output_tokens {
            body.serialize_entry("max_output_tokens", &max)?;
        }
        if let Some(effort) = effort(request) {
            body.serialize_entry(
                "reasoning",
                &Reasoning {
                    effort,
                    summary: "auto",
                },
            )?;
            body.serialize_entry("include", &["reasoning.encrypted_content"])?;
        }
        body.serialize_entry("store", &false)?;
        body.serialize_entry("stream", &true)?;
        body.end()
    }
}

#[derive(Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a ToolSchema,
    /// The Responses API defaults to strict schemas, which refuse ordinary ones.
    strict: bool,
}

#[derive(Serialize)]
struct Reasoning<'a> {
    effort: &'a str,
    summary: &'static str,
}

fn effort(request: &ModelRequest) -> Option<&str> {
    request
        .reasoning_effort
        .as_deref()
        .filter(|effort| !matches!(*effort, "" | "off" | "none"))
}

/// One entry of `input`: an item of ours, or a reasoning item replayed as the API sent it.
#[derive(Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Ours(InputItem<'a>),
    Replayed(Value),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputItem<'a> {
    Message {
        role: &'static str,
        content: MessageContent<'a>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: ArgumentText<'a>,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: TextBlocks<'a>,
    },
}

/// A user message's parts, or an assistant message's text.
#[derive(Serialize)]
#[serde(untagged)]
enum MessageContent<'a> {
    Parts(Vec<Part<'a>>),
    Text(&'a str),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText {
        text: &'a str,
    },
    InputImage {
        detail: &'static str,
        image_url: DataUrl<'a>,
    },
}

fn input_items(messages: &[Message]) -> Vec<Item<'_>> {
    let mut items = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(user) => {
                let parts = match &user.content {
                    UserContent::Text(text) => vec![Part::InputText { text }],
                    UserContent::Blocks(blocks) => blocks.iter().filter_map(user_part).collect(),
                };
                if !parts.is_empty() {
                    items.push(Item::Ours(InputItem::Message {
                        role: "user",
                        content: MessageContent::Parts(parts),
                    }));
                }
            }
            Message::Assistant(assistant) => {
                let same_api = assistant.api.as_deref() == Some(API);
                for block in &assistant.content {
                    match block {
                        // An easy input message: an `output_text` message item would need the
                        // `id` and `status` of the item the API once sent, which replies
                        // built from other sources do not have.
                        ContentBlock::Text(text) if !text.text.is_empty() => {
                            items.push(Item::Ours(InputItem::Message {
                                role: "assistant",
                                content: MessageContent::Text(&text.text),
                            }));
                        }
                        ContentBlock::Thinking(thinking) if same_api => {
                            if let Some(item) =
                                replayable_reasoning(thinking.thinking_signature.as_deref())
                            {
                                items.push(Item::Replayed(item));
                            }
                        }
                        ContentBlock::ToolCall(call) => {
                            items.push(Item::Ours(InputItem::FunctionCall {
                                call_id: &call.id,
                                name: &call.name,
                                arguments: ArgumentText(call),
                            }));
                        }
                        _ => {}
                    }
                }
            }
            Message::ToolResult(result) => items.push(Item::Ours(InputItem::FunctionCallOutput {
                call_id: &result.tool_call_id,
                output: tool_output(result),
            })),
            // Roles this crate does not know are the loop's to convert, never sent raw.
            Message::Other(_) => {}
        }
    }
    items
}

fn user_part(block: &ContentBlock) -> Option<Part<'_>> {
    match block {
        ContentBlock::Text(text) => Some(Part::InputText { text: &text.text }),
        ContentBlock::Image(image) => Some(Part::InputImage {
            detail: "auto",
            image_url: DataUrl(image),
        }),
        _ => None,
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

/// The text of a tool result; images cannot travel in `function_call_output` and are left out.
pub(crate) fn tool_output(result: &ToolResultMessage) -> TextBlocks<'_> {
    TextBlocks::lines(&result.content)
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

//! OpenAI-compatible Chat Completions: `POST {baseUrl}/chat/completions` with `stream: true`
//! and `stream_options: {include_usage: true}`, as served by OpenAI, Ollama, vLLM, llama.cpp's
//! server and OpenRouter.
//!
//! Request: ONE system message (`stable + "\n\n" + dynamic`; several chat templates of local
//! models refuse a second system message, and the stable part stays a byte prefix for prefix
//! caches), then the conversation; tool calls as `tool_calls`, results as `role: "tool"`; user
//! messages in a row (left by a run that failed before the model answered) as one.
//!
//! Stream: `data:` chunks with `choices[0].delta` (`content`, `reasoning_content` or
//! `reasoning`, `tool_calls` fragments by `index`), `finish_reason`, a final chunk with `usage`
//! and `data: [DONE]`. Leniency for the servers that differ: missing ids are made up, a missing
//! `[DONE]` after a `finish_reason` is accepted, `arguments` sent as an object is accepted,
//! `finish_reason: "stop"` with tool calls means `toolUse`, an `error` chunk fails the call, and
//! a server that ignores `stream: true` and sends one `chat.completion` body is read as one
//! chunk. Cache counts come from whichever usage fields the server uses (see
//! `usage::openai_usage`).

use openclaw_transcript::{ContentBlock, Message, StopReason, UserContent};
use serde_json::{Map, Value, json};

use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::openai_responses::tool_output;
use crate::reply::ReplyBuilder;
use crate::request::{ModelRequest, joined_text, object};
use crate::sse::SseEvent;
use crate::transport::{Auth, Endpoint, WireDecoder};
use crate::usage::openai_usage;

const API: &str = "openai-completions";

/// A provider speaking OpenAI-compatible Chat Completions.
pub type ChatCompletions = HttpProvider<ChatWire>;

/// The OpenAI-compatible Chat Completions wire format, for [`ChatCompletions`].
#[derive(Debug)]
pub struct ChatWire;

impl Wire for ChatWire {
    const API: &'static str = API;
    const NAME: &'static str = "ChatCompletions";
    type Decoder = ChatDecoder;

    fn post(endpoint: &Endpoint, request: &ModelRequest) -> Post {
        Post {
            path: "/chat/completions",
            auth: Auth::Bearer,
            headers: Vec::new(),
            body: request_body(request, max_tokens_field(endpoint.base_url())),
        }
    }
}

/// OpenAI itself refuses `max_tokens` for reasoning models; the compatible servers know only
/// `max_tokens`.
fn max_tokens_field(base_url: &str) -> &'static str {
    if base_url.contains("://api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// The JSON body for `request`.
pub(crate) fn request_body(request: &ModelRequest, max_tokens_field: &str) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let system = request.system.joined();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in request.messages.iter().filter_map(chat_message) {
        push_merging_users(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                object([
                    ("type", "function".into()),
                    (
                        "function",
                        object([
                            ("name", tool.name.as_str().into()),
                            ("description", tool.description.as_str().into()),
                            ("parameters", tool.parameters.clone()),
                        ]),
                    ),
                ])
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = request.max_output_tokens {
        body.insert(max_tokens_field.into(), json!(max));
    }
    if let Some(effort) = request
        .reasoning_effort
        .as_deref()
        .filter(|effort| !matches!(*effort, "" | "off" | "none"))
    {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

fn chat_message(message: &Message) -> Option<Value> {
    match message {
        Message::User(user) => {
            let content = match &user.content {
                UserContent::Text(text) => json!(text),
                UserContent::Blocks(blocks) => user_content(blocks)?,
            };
            Some(object([("role", "user".into()), ("content", content)]))
        }
        Message::Assistant(assistant) => {
            let mut text = String::new();
            let mut calls = Vec::new();
            for block in &assistant.content {
                match block {
                    ContentBlock::Text(part) => text.push_str(&part.text),
                    ContentBlock::ToolCall(call) => calls.push(json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": crate::request::argument_text(call)},
                    })),
                    // Reasoning cannot be replayed through Chat Completions.
                    _ => {}
                }
            }
            if text.is_empty() && calls.is_empty() {
                return None;
            }
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            out.insert(
                "content".into(),
                if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                },
            );
            if !calls.is_empty() {
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Some(Value::Object(out))
        }
        Message::ToolResult(result) => Some(object([
            ("role", "tool".into()),
            ("tool_call_id", result.tool_call_id.as_str().into()),
            ("content", tool_output(result).into()),
        ])),
        Message::Other(_) => None,
    }
}

/// Appends `message`, folding a user message into a user message right before it. Two user
/// messages in a row happen whenever a run failed before the model answered (its message stays
/// in the transcript) and another follows; the chat templates of many local models refuse them
/// ("roles must alternate"). Text joins with a blank line; content with images becomes one part
/// list.
fn push_merging_users(messages: &mut Vec<Value>, message: Value) {
    let is_user = |m: &Value| m.get("role").and_then(Value::as_str) == Some("user");
    let Some(last) = messages
        .last_mut()
        .filter(|last| is_user(last) && is_user(&message))
    else {
        messages.push(message);
        return;
    };
    let as_parts = |content: &Value| match content {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(parts) => parts.clone(),
        _ => Vec::new(),
    };
    let merged = match (&last["content"], &message["content"]) {
        (Value::String(before), Value::String(after)) => json!(format!("{before}\n\n{after}")),
        (before, after) => {
            let mut parts = as_parts(before);
            parts.extend(as_parts(after));
            Value::Array(parts)
        }
    };
    last["content"] = merged;
}

/// Text-only blocks become one string (every server accepts that); images need the part list.
fn user_content(blocks: &[ContentBlock]) -> Option<Value> {
    let has_image = blocks
        .iter()
        .any(|block| matches!(block, ContentBlock::Image(_)));
    if !has_image {
        // No text block at all is no content; an empty one is an empty string.
        let has_text = blocks.iter().any(|b| matches!(b, ContentBlock::Text(_)));
        return has_text.then(|| json!(joined_text(blocks)));
    }
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(json!({"type": "text", "text": text.text})),
            ContentBlock::Image(image) => Some(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)},
            })),
            _ => None,
        })
        .collect();
    Some(Value::Array(parts))
}

#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    reply: ReplyBuilder,
    finished: bool,
}

impl WireDecoder for ChatDecoder {
    fn reply(&mut self) -> &mut ReplyBuilder {
        &mut self.reply
    }

    fn on_event(&mut self, event: &SseEvent) -> Result<bool, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            ProviderError::malformed(format!("a chat completion chunk is not JSON: {error}"))
        })?;
        if let Some(failure) = chunk.get("error").filter(|e| !e.is_null()) {
            let (code, message) = error::error_fields(&json!({ "error": failure }).to_string());
            return Err(error::from_stream(code.as_deref(), message));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.reply.set_usage(openai_usage(
                usage,
                "prompt_tokens",
                "prompt_tokens_details",
            ));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(false);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        let reasoning = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .and_then(Value::as_str);
        if let Some(reasoning) = reasoning {
            self.reply.thinking(None, reasoning);
        }
        if let Some(content) = delta.get("content").and_then(Value::as_str) {
            self.reply.text(None, content);
        }
        for (position, call) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            if !self.reply.has_tool(index) {
                self.reply.finish_complete_tools_before(index);
            }
            let function = call.get("function").unwrap_or(&Value::Null);
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => Some(text.clone()),
                Some(Value::Null) | None => None,
                Some(object) => Some(object.to_string()),
            };
            self.reply.tool(
                index,
                call.get("id").and_then(Value::as_str),
                function.get("name").and_then(Value::as_str),
                arguments.as_deref(),
            );
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finished = true;
            self.reply.finish_open_tools()?;
            let stop = match reason {
                "length" | "max_tokens" => StopReason::Length,
                "tool_calls" | "function_call" | "tool_use" => StopReason::ToolUse,
                "content_filter" => {
                    self.reply
                        .set_error_message("the response was stopped by a content filter");
                    StopReason::Error
                }
                _ => StopReason::Stop,
            };
            self.reply.set_stop(stop);
        }
        Ok(false)
    }

    fn unstreamed(&self, body: Value) -> Vec<SseEvent> {
        let data = |value: &Value| SseEvent {
            event: None,
            data: value.to_string(),
        };
        // An error answered with status 200: the chunk path reports it.
        if body.get("error").is_some_and(|e| !e.is_null()) {
            return vec![data(&body)];
        }
        let choice = body.pointer("/choices/0").unwrap_or(&Value::Null);
        let mut delta = choice.get("message").cloned().unwrap_or_else(|| json!({}));
        // Whole calls carry no stream `index`: their position is it.
        if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (index, call) in calls.iter_mut().enumerate() {
                call["index"] = json!(index);
            }
        }
        let chunk = json!({
            "choices": [{"index": 0, "delta": delta, "finish_reason": choice.get("finish_reason")}],
            "usage": body.get("usage"),
        });
        vec![
            data(&chunk),
            SseEvent {
                event: None,
                data: "[DONE]".to_owned(),
            },
        ]
    }

    fn on_eof(&mut self) -> Result<(), ProviderError> {
        if self.finished {
            return Ok(());
        }
        Err(ProviderError::connection(
            "the stream ended before a finish_reason".to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::StreamEvent;

    fn feed(decoder: &mut ChatDecoder, chunk: Value) -> Result<bool, ProviderError> {
        decoder.on_event(&SseEvent {
            event: None,
            data: chunk.to_string(),
        })
    }

    #[test]
    fn ollama_style_whole_calls_and_stop_finish_mean_tool_use() {
        let mut decoder = ChatDecoder::default();
        feed(&mut decoder, json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "read", "arguments": {"path": "a"}}}
        ]}, "finish_reason": null}]})).unwrap();
        feed(
            &mut decoder,
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        )
        .unwrap();
        decoder.on_eof().unwrap();
        let message = decoder.reply.into_message("p", "m", API, 0);
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        let ContentBlock::ToolCall(call) = &message.content[0] else {
            panic!("{message:?}")
        };
        assert_eq!(
            (call.id.as_str(), &call.arguments),
            ("call_0", &json!({"path": "a"}))
        );
    }

    #[test]
    fn error_chunks_and_reasoning_fields() {
        let mut decoder = ChatDecoder::default();
        feed(
            &mut decoder,
            json!({"choices": [{"delta": {"reasoning_content": "think"}}]}),
        )
        .unwrap();
        feed(
            &mut decoder,
            json!({"choices": [{"delta": {"reasoning": "ing"}}]}),
        )
        .unwrap();
        assert_eq!(
            decoder.reply.take_events(),
            vec![
                StreamEvent::ThinkingDelta("think".into()),
                StreamEvent::ThinkingDelta("ing".into())
            ]
        );
        let error = json!({"error": {"message": "This model's maximum context length is 4096 tokens", "code": 400}});
        assert!(matches!(
            feed(&mut decoder, error),
            Err(ProviderError::ContextOverflow { .. })
        ));
    }

    #[test]
    fn max_tokens_field_depends_on_the_server() {
        assert_eq!(
            max_tokens_field("https://api.openai.com/v1"),
            "max_completion_tokens"
        );
        assert_eq!(max_tokens_field("http://localhost:11434/v1"), "max_tokens");
    }
}

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

use openclaw_transcript::StopReason;
use serde_json::{Value, json};

use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::reply::ReplyBuilder;
use crate::request::ModelRequest;
use crate::sse::SseEvent;
use crate::transport::{Auth, Endpoint, WireDecoder};

mod chunk;
mod request_body;

use chunk::Chunk;
use request_body::request_body;

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

    fn post(endpoint: &Endpoint, request: &ModelRequest) -> Result<Post, ProviderError> {
        Ok(Post {
            path: "/chat/completions",
            auth: Auth::Bearer,
            headers: Vec::new(),
            body: request_body(request, max_tokens_field(endpoint.base_url()))?,
        })
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
        if let Some(chunk) = Chunk::typed(data) {
            return self.on_chunk(chunk);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            ProviderError::malformed(format!("a chat completion chunk is not JSON: {error}"))
        })?;
        if let Some(failure) = chunk.get("error").filter(|e| !e.is_null()) {
            let (code, message) = error::error_fields(&json!({ "error": failure }).to_string());
            return Err(error::from_stream(code.as_deref(), message));
        }
        self.on_chunk(Chunk::lenient(&chunk))
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

impl ChatDecoder {
    /// Applies one chunk: its usage, then its first choice's reasoning, text and tool call
    /// fragments, then its finish reason.
    fn on_chunk(&mut self, chunk: Chunk<'_>) -> Result<bool, ProviderError> {
        if let Some(usage) = chunk.usage {
            self.reply.set_usage(usage);
        }
        let Some(choice) = chunk.choice else {
            return Ok(false);
        };
        if let Some(reasoning) = choice.reasoning {
            self.reply.thinking(None, &reasoning);
        }
        if let Some(content) = choice.content {
            self.reply.text(None, &content);
        }
        for call in choice.calls {
            if !self.reply.has_tool(call.index) {
                self.reply.finish_complete_tools_before(call.index);
            }
            self.reply.tool(
                call.index,
                call.id.as_deref(),
                call.name.as_deref(),
                call.arguments.as_deref(),
            );
        }
        if let Some(reason) = choice.finish_reason {
            self.finished = true;
            self.reply.finish_open_tools()?;
            let stop = match &*reason {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::StreamEvent;
    use openclaw_transcript::ContentBlock;

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

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

use std::fmt::{self, Display};

use openclaw_transcript::{ContentBlock, Message, StopReason};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

use crate::body::{ArgumentText, DataUrl, SystemText, TextBlocks, to_bytes};
use crate::error::{self, ProviderError};
use crate::http_provider::{HttpProvider, Post, Wire};
use crate::openai_responses::tool_output;
use crate::reply::ReplyBuilder;
use crate::request::{ModelRequest, ToolSchema, ToolSpec};
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

/// The JSON body for `request`.
pub(crate) fn request_body(
    request: &ModelRequest,
    max_tokens_field: &'static str,
) -> Result<Vec<u8>, ProviderError> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let system = SystemText(&request.system);
    if !system.is_empty() {
        messages.push(ChatMessage::System { content: system });
    }
    for message in request.messages.iter().filter_map(chat_message) {
        push_merging_users(&mut messages, message);
    }
    to_bytes(&Body {
        request,
        messages,
        max_tokens_field,
    })
}

/// The request body: its fields in the order the API documents them.
struct Body<'a> {
    request: &'a ModelRequest,
    messages: Vec<ChatMessage<'a>>,
    max_tokens_field: &'static str,
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let mut body = serializer.serialize_map(None)?;
        body.serialize_entry("model", &request.model)?;
        body.serialize_entry("messages", &self.messages)?;
        if !request.tools.is_empty() {
            body.serialize_entry("tools", &Tools(&request.tools))?;
        }
        if let Some(max) = request.max_output_tokens {
            body.serialize_entry(self.max_tokens_field, &max)?;
        }
        if let Some(effort) = request
            .reasoning_effort
            .as_deref()
            .filter(|effort| !matches!(*effort, "" | "off" | "none"))
        {
            body.serialize_entry("reasoning_effort", effort)?;
        }
        body.serialize_entry("stream", &true)?;
        body.serialize_entry(
            "stream_options",
            &StreamOptions {
                include_usage: true,
            },
        )?;
        body.end()
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// `tools`: `{type: "function", function: {name, description, parameters}}` each.
struct Tools<'a>(&'a [ToolSpec]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|tool| FunctionTool {
            kind: "function",
            function: Function {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        }))
    }
}

#[derive(Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a ToolSchema,
}

/// One entry of `messages`, tagged by its `role`.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: SystemText<'a>,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        /// `null` when the reply was only tool calls.
        content: Option<TextBlocks<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<CallOut<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: TextBlocks<'a>,
    },
}

/// A user message's content: one string, or a part list when it holds images.
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Text<'a>),
    Parts(Vec<Part<'a>>),
}

impl<'a> UserContent<'a> {
    fn into_parts(self) -> Vec<Part<'a>> {
        match self {
            Self::Text(text) => vec![Part::Text { text }],
            Self::Parts(parts) => parts,
        }
    }
}

/// Text of a user message: its own, its text blocks joined, or two messages' merged.
#[derive(Serialize)]
#[serde(untagged)]
enum Text<'a> {
    Borrowed(&'a str),
    Blocks(TextBlocks<'a>),
    Merged(String),
}

impl Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Borrowed(text) => f.write_str(text),
            Self::Blocks(blocks) => blocks.fmt(f),
            Self::Merged(text) => f.write_str(text),
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Text<'a> },
    ImageUrl { image_url: ImageUrl<'a> },
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: DataUrl<'a>,
}

/// A tool call of an assistant message.
#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: ArgumentText<'a>,
}

fn chat_message(message: &Message) -> Option<ChatMessage<'_>> {
    match message {
        Message::User(user) => {
            let content = match &user.content {
                openclaw_transcript::UserContent::Text(text) => {
                    UserContent::Text(Text::Borrowed(text))
                }
                openclaw_transcript::UserContent::Blocks(blocks) => user_content(blocks)?,
            };
            Some(ChatMessage::User { content })
        }
        Message::Assistant(assistant) => {
            let text = TextBlocks::concatenated(&assistant.content);
            // Reasoning cannot be replayed through Chat Completions.
            let calls: Vec<CallOut<'_>> = assistant
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolCall(call) => Some(CallOut {
                        id: &call.id,
                        kind: "function",
                        function: CallFunction {
                            name: &call.name,
                            arguments: ArgumentText(call),
                        },
                    }),
                    _ => None,
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                return None;
            }
            Some(ChatMessage::Assistant {
                content: (!text.is_empty()).then_some(text),
                tool_calls: calls,
            })
        }
        Message::ToolResult(result) => Some(ChatMessage::Tool {
            tool_call_id: &result.tool_call_id,
            content: tool_output(result),
        }),
        Message::Other(_) => None,
    }
}

/// Appends `message`, folding a user message into a user message right before it. Two user
/// messages in a row happen whenever a run failed before the model answered (its message stays
/// in the transcript) and another follows; the chat templates of many local models refuse them
/// ("roles must alternate"). Text joins with a blank line; content with images becomes one part
/// list.
fn push_merging_users<'a>(messages: &mut Vec<ChatMessage<'a>>, message: ChatMessage<'a>) {
    match (messages.last_mut(), message) {
        (Some(ChatMessage::User { content: before }), ChatMessage::User { content: after }) => {
            let earlier = std::mem::replace(before, UserContent::Parts(Vec::new()));
            *before = match (earlier, after) {
                (UserContent::Text(earlier), UserContent::Text(after)) => {
                    UserContent::Text(Text::Merged(format!("{earlier}\n\n{after}")))
                }
                (earlier, after) => {
                    let mut parts = earlier.into_parts();
                    parts.extend(after.into_parts());
                    UserContent::Parts(parts)
                }
            };
        }
        (_, message) => messages.push(message),
    }
}

/// Text-only blocks become one string (every server accepts that); images need the part list.
fn user_content(blocks: &[ContentBlock]) -> Option<UserContent<'_>> {
    let has_image = blocks
        .iter()
        .any(|block| matches!(block, ContentBlock::Image(_)));
    if !has_image {
        // No text block at all is no content; an empty one is an empty string.
        let has_text = blocks.iter().any(|b| matches!(b, ContentBlock::Text(_)));
        return has_text.then(|| UserContent::Text(Text::Blocks(TextBlocks::lines(blocks))));
    }
    let parts: Vec<Part<'_>> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(Part::Text {
                text: Text::Borrowed(&text.text),
            }),
            ContentBlock::Image(image) => Some(Part::ImageUrl {
                image_url: ImageUrl {
                    url: DataUrl(image),
                },
            }),
            _ => None,
        })
        .collect();
    Some(UserContent::Parts(parts))
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

//! The Chat Completions request body, serialised from the request it borrows: one system
//! message, the conversation with user messages in a row merged, the tools, the output limit
//! under the server's field name and the reasoning effort.

use std::fmt::{self, Display};

use openclaw_transcript::{ContentBlock, Message};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::body::{ArgumentText, DataUrl, SystemText, TextBlocks, to_bytes_sized, tool_output};
use crate::error::ProviderError;
use crate::request::{ModelRequest, ToolSchema};

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
    to_bytes_sized(
        &Body {
            request,
            messages,
            max_tokens_field,
        },
        request.body_size_hint(),
    )
}

/// The request body, its fields always in this order (a prefix cache compares bytes).
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
            body.serialize_entry(
                "tools",
                &request
                    .tools
                    .iter()
                    .map(|tool| FunctionTool {
                        kind: "function",
                        function: Function {
                            name: &tool.name,
                            description: &tool.description,
                            parameters: &tool.parameters,
                        },
                    })
                    .collect::<Vec<_>>(),
            )?;
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

/// A `tools` entry: `{type: "function", function: {name, description, parameters}}`.
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

//! The Messages API request body, serialised from the request it borrows: the system blocks
//! with the stable prefix's cache breakpoint, the messages merged by role with the
//! conversation's breakpoint on the last user block, the tools and the thinking budget.

use openclaw_transcript::{ContentBlock, Message, ToolResultMessage, UserContent};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::{API, token_limits, tool_id, valid_id_char};
use crate::body::to_bytes_sized;
use crate::error::ProviderError;
use crate::request::{ModelRequest, ToolSchema};

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
    to_bytes_sized(
        &Body {
            request,
            system,
            messages: messages(&request.messages),
        },
        request.body_size_hint(),
    )
}

/// The request body, its fields always in this order (a prefix cache compares bytes).
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

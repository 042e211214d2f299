//! The Responses API request body, serialised from the request it borrows: the joined system
//! prompt as `instructions`, the conversation as input items (reasoning items replayed as the
//! API sent them), the tools, the output limit and the reasoning settings.

use openclaw_transcript::{ContentBlock, Message, UserContent};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::{API, replayable_reasoning};
use crate::body::{ArgumentText, DataUrl, SystemText, TextBlocks, to_bytes_sized, tool_output};
use crate::error::ProviderError;
use crate::request::{ModelRequest, ToolSchema};

/// The JSON body for `request`.
pub(crate) fn request_body(request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    to_bytes_sized(
        &Body {
            request,
            input: input_items(&request.messages),
        },
        request.body_size_hint(),
    )
}

/// The request body, its fields always in this order (a prefix cache compares bytes).
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

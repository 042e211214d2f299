//! Pieces of request bodies the wire formats share, serialised straight from the request they
//! borrow: the system prompt joined at the cache boundary, text blocks joined, a tool call's
//! argument text and an image's data URL. None of them copies a message's text into a new
//! value first: each writes its text, escaped, into the body's bytes as the body is encoded.

use std::fmt::{self, Display};

use openclaw_transcript::{ContentBlock, ImageContent, ToolCall, ToolResultMessage};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::ProviderError;
use crate::request::SystemPrompt;

/// `body` encoded as compact JSON, the bytes a wire format sends.
pub(crate) fn to_bytes(body: &impl Serialize) -> Result<Vec<u8>, ProviderError> {
    to_bytes_sized(body, 0)
}

/// [`to_bytes`] into a buffer that starts with room for `capacity` bytes (see
/// [`crate::request::ModelRequest::body_size_hint`]).
pub(crate) fn to_bytes_sized(
    body: &impl Serialize,
    capacity: usize,
) -> Result<Vec<u8>, ProviderError> {
    let mut bytes = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut bytes, body)
        .map_err(|error| ProviderError::malformed(format!("request body: {error}")))?;
    Ok(bytes)
}

/// The whole system prompt for APIs with a single system text, as
/// [`SystemPrompt::joined`] gives it, written without joining it first.
#[derive(Clone, Copy)]
pub(crate) struct SystemText<'a>(pub(crate) &'a SystemPrompt);

impl SystemText<'_> {
    /// Whether there is no system text at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.stable.is_empty() && self.0.dynamic.is_empty()
    }
}

impl Display for SystemText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let SystemPrompt { stable, dynamic } = self.0;
        f.write_str(stable)?;
        if !stable.is_empty() && !dynamic.is_empty() {
            f.write_str("\n\n")?;
        }
        f.write_str(dynamic)
    }
}

impl Serialize for SystemText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The text blocks of some content joined by a separator; images and other blocks are left
/// out. With `"\n"` it is [`crate::request::joined_text`].
#[derive(Clone, Copy)]
pub(crate) struct TextBlocks<'a> {
    blocks: &'a [ContentBlock],
    separator: &'static str,
}

impl<'a> TextBlocks<'a> {
    /// The text blocks of `blocks` joined by newlines.
    pub(crate) fn lines(blocks: &'a [ContentBlock]) -> Self {
        Self {
            blocks,
            separator: "\n",
        }
    }

    /// The text blocks of `blocks` run together.
    pub(crate) fn concatenated(blocks: &'a [ContentBlock]) -> Self {
        Self {
            blocks,
            separator: "",
        }
    }

    /// Whether the joined text is empty.
    pub(crate) fn is_empty(&self) -> bool {
        let mut texts = self.texts();
        texts.next().is_none_or(|first| {
            first.is_empty() && texts.all(|text| self.separator.is_empty() && text.is_empty())
        })
    }

    fn texts(&self) -> impl Iterator<Item = &'a str> {
        self.blocks.iter().filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
    }
}

impl Display for TextBlocks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, text) in self.texts().enumerate() {
            if at > 0 {
                f.write_str(self.separator)?;
            }
            f.write_str(text)?;
        }
        Ok(())
    }
}

impl Serialize for TextBlocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The argument text of a call replayed to an API that takes text: the JSON, or the raw text
/// of arguments that did not parse, so the model sees what it wrote.
#[derive(Clone, Copy)]
pub(crate) struct ArgumentText<'a>(pub(crate) &'a ToolCall);

impl Serialize for ArgumentText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0.arguments {
            Value::String(raw) => serializer.serialize_str(raw),
            // `Value`'s `Display` is its compact JSON.
            parsed => serializer.collect_str(parsed),
        }
    }
}

/// An image as a `data:` URL.
#[derive(Clone, Copy)]
pub(crate) struct DataUrl<'a>(pub(crate) &'a ImageContent);

impl Display for DataUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("data:")?;
        f.write_str(&self.0.mime_type)?;
        f.write_str(";base64,")?;
        f.write_str(&self.0.data)
    }
}

impl Serialize for DataUrl<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The text of a tool result for the OpenAI formats; images cannot travel in their tool results
/// (`role: "tool"`, `function_call_output`) and are left out.
pub(crate) fn tool_output(result: &ToolResultMessage) -> TextBlocks<'_> {
    TextBlocks::lines(&result.content)
}

//! What a fake server answers to one request: a streamed turn or an HTTP error, with optional
//! delays and faults.

use std::time::Duration;

use serde_json::Value;

/// Token counts a fake turn reports, in the API's own usage shape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FakeUsage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache (OpenAI: `cached_tokens`, counted inside the
    /// input total; Anthropic: `cache_read_input_tokens`).
    pub cache_read: u64,
    /// Input tokens written to the cache (Anthropic's `cache_creation_input_tokens`; OpenAI
    /// has no such field).
    pub cache_write: u64,
}

/// How an OpenAI-format fake (Responses or Chat Completions) reports cache writes, which
/// OpenAI's own API never does and gateways in front of other models do, each its own way. The
/// prompt total then counts the written tokens too, as those gateways count them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheWriteField {
    /// Not at all: OpenAI's own usage shape.
    #[default]
    Unreported,
    /// `prompt_tokens_details.cache_write_tokens` (Responses: `input_tokens_details.
    /// cache_write_tokens`), next to `cached_tokens`, as OpenRouter reports them.
    Details,
    /// Anthropic's names at the top of the usage object, `cache_creation_input_tokens` and
    /// `cache_read_input_tokens`, as proxies that translate Anthropic's API report them.
    AnthropicNames,
}

/// A tool call of a fake turn.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments; their JSON text is streamed in `chunks` pieces.
    pub arguments: Value,
    /// How many pieces the argument text is streamed in (at least 1).
    pub chunks: usize,
    /// A freeform (custom) tool call: `arguments` is a string sent as the
    /// call's raw `input` (Responses `custom_tool_call`; other wire formats
    /// send it as a function call).
    pub freeform: bool,
}

/// One model turn: optional thinking, optional text, tool calls, usage.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeTurn {
    /// Reasoning text, streamed before the text.
    pub thinking: Option<String>,
    /// Visible text.
    pub text: Option<String>,
    /// How many deltas text and thinking are each streamed in (at least 1).
    pub deltas: usize,
    /// Tool calls, after the text.
    pub tool_calls: Vec<FakeToolCall>,
    /// Reported usage.
    pub usage: FakeUsage,
    /// End with the API's "output limit reached" stop reason instead of stop/tool use.
    pub truncated: bool,
    /// Where an OpenAI-format fake reports `usage.cache_write` (Anthropic always reports it).
    pub cache_write_field: CacheWriteField,
}

impl Default for FakeTurn {
    fn default() -> Self {
        Self {
            thinking: None,
            text: None,
            deltas: 1,
            tool_calls: Vec::new(),
            usage: FakeUsage {
                input: 10,
                output: 5,
                cache_read: 0,
                cache_write: 0,
            },
            truncated: false,
            cache_write_field: CacheWriteField::Unreported,
        }
    }
}

/// An HTTP error the fake answers with, in the API's own error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FakeError {
    /// 429 with an optional `retry-after` (seconds).
    RateLimited {
        /// The `retry-after` header value in seconds.
        retry_after: Option<u64>,
    },
    /// A 5xx server error (529 is Anthropic's "overloaded").
    Server {
        /// The status.
        status: u16,
    },
    /// 400 saying the prompt is too long, in the API's words.
    ContextOverflow,
    /// Any status with a message.
    Other {
        /// The status.
        status: u16,
        /// The message.
        message: String,
    },
}

/// Where in the stream a fault strikes: after this many content deltas (text, thinking or
/// argument pieces) were written; 0 means right before the first delta. With fewer deltas
/// than that, it strikes before the terminal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// A frame whose JSON is cut off.
    Malformed(usize),
    /// The connection is aborted (no terminal event, no final chunk).
    Cut(usize),
    /// The stream stays open and silent until the server stops.
    Stall(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    Turn(FakeTurn),
    Error(FakeError),
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeReply {
    pub(crate) body: Body,
    pub(crate) delay: Duration,
    pub(crate) frame_delay: Duration,
    pub(crate) fault: Option<Fault>,
    /// Answer with the whole reply as one JSON body, ignoring `stream: true`.
    pub(crate) unstreamed: bool,
    /// Send an error's body as an event stream.
    pub(crate) error_as_events: bool,
}

impl FakeReply {
    /// A turn, as built.
    pub fn turn(turn: FakeTurn) -> Self {
        Self {
            body: Body::Turn(turn),
            delay: Duration::ZERO,
            frame_delay: Duration::ZERO,
            fault: None,
            unstreamed: false,
            error_as_events: false,
        }
    }

    /// A text turn, streamed in one delta (see [`FakeReply::deltas`]).
    pub fn text(text: impl Into<String>) -> Self {
        Self::turn(FakeTurn {
            text: Some(text.into()),
            ..FakeTurn::default()
        })
    }

    /// A turn with one tool call, its arguments streamed in one piece (see
    /// [`FakeReply::argument_chunks`]).
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self::turn(FakeTurn::default()).with_tool_call(id, name, arguments)
    }

    /// An HTTP error.
    pub fn error(error: FakeError) -> Self {
        Self {
            body: Body::Error(error),
            delay: Duration::ZERO,
            frame_delay: Duration::ZERO,
            fault: None,
            unstreamed: false,
            error_as_events: false,
        }
    }

    /// 429, with `retry-after: <seconds>` when given.
    pub fn rate_limited(retry_after: Option<u64>) -> Self {
        Self::error(FakeError::RateLimited { retry_after })
    }

    /// A 5xx status.
    pub fn server_error(status: u16) -> Self {
        Self::error(FakeError::Server { status })
    }

    /// 400: the prompt does not fit the context window.
    pub fn context_overflow() -> Self {
        Self::error(FakeError::ContextOverflow)
    }

    fn edit(mut self, change: impl FnOnce(&mut FakeTurn)) -> Self {
        if let Body::Turn(turn) = &mut self.body {
            change(turn);
        }
        self
    }

    /// Sets the visible text.
    pub fn with_text(self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.edit(|turn| turn.text = Some(text))
    }

    /// Sets the reasoning text.
    pub fn with_thinking(self, thinking: impl Into<String>) -> Self {
        let thinking = thinking.into();
        self.edit(|turn| turn.thinking = Some(thinking))
    }

    /// Adds a tool call after the existing ones.
    pub fn with_tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        let call = FakeToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            chunks: 1,
            freeform: false,
        };
        self.edit(|turn| turn.tool_calls.push(call))
    }

    /// A turn with one freeform tool call (a Responses `custom_tool_call`
    /// whose `input` is `input`, as Codex's own `apply_patch` takes it).
    pub fn custom_tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        input: impl Into<String>,
    ) -> Self {
        let call = FakeToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Value::String(input.into()),
            chunks: 1,
            freeform: true,
        };
        Self::turn(FakeTurn::default()).edit(|turn| turn.tool_calls.push(call))
    }

    /// Streams text and thinking in `n` deltas each.
    pub fn deltas(self, n: usize) -> Self {
        self.edit(|turn| turn.deltas = n.max(1))
    }

    /// Streams every tool call's argument text in `n` pieces.
    pub fn argument_chunks(self, n: usize) -> Self {
        self.edit(|turn| {
            turn.tool_calls
                .iter_mut()
                .for_each(|call| call.chunks = n.max(1))
        })
    }

    /// Sets the reported usage.
    pub fn usage(self, usage: FakeUsage) -> Self {
        self.edit(|turn| turn.usage = usage)
    }

    /// Reports the turn's cache writes where a gateway would (OpenAI formats only).
    pub fn cache_write_as(self, field: CacheWriteField) -> Self {
        self.edit(|turn| turn.cache_write_field = field)
    }

    /// Answers with the whole reply as one `application/json` body, the API's non-streaming
    /// response, as a server (or proxy) that ignores `stream: true` does. Faults and frame
    /// delays do not apply.
    pub fn unstreamed(mut self) -> Self {
        self.unstreamed = true;
        self
    }

    /// Sends an error's body as an event stream (`text/event-stream`, one `error` event with
    /// the API's error object), as some gateways answer a streaming request that failed.
    pub fn as_event_stream(mut self) -> Self {
        self.error_as_events = true;
        self
    }

    /// Ends with the API's "output limit reached" reason.
    pub fn truncated(self) -> Self {
        self.edit(|turn| turn.truncated = true)
    }

    /// Waits this long before answering at all.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Waits this long before each stream frame.
    pub fn frame_delay(mut self, delay: Duration) -> Self {
        self.frame_delay = delay;
        self
    }

    /// Sends a frame with cut-off JSON after `deltas` content deltas.
    pub fn malformed_after(mut self, deltas: usize) -> Self {
        self.fault = Some(Fault::Malformed(deltas));
        self
    }

    /// Aborts the connection after `deltas` content deltas, without a terminal event.
    pub fn cut_after(mut self, deltas: usize) -> Self {
        self.fault = Some(Fault::Cut(deltas));
        self
    }

    /// Goes silent after `deltas` content deltas, keeping the connection open.
    pub fn stall_after(mut self, deltas: usize) -> Self {
        self.fault = Some(Fault::Stall(deltas));
        self
    }
}

/// Splits `text` into `n` pieces of nearly equal length in characters (fewer when the text is
/// shorter than `n`; one empty piece for empty text).
pub(crate) fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(n.max(1));
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_every_character() {
        assert_eq!(split("héllo wörld", 3), vec!["héll", "o wö", "rld"]);
        assert_eq!(split("ab", 5), vec!["a", "b"]);
        assert_eq!(split("", 3), vec![""]);
    }
}

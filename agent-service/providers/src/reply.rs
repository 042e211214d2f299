//! Assembles one assistant reply from stream fragments, in stream order, and queues the stream
//! events each fragment produces. Shared by every wire format, so the rule "a tool call is
//! announced as finished only with complete arguments" (L10) lives in one place, and so does
//! the rule for arguments that do not parse: they travel raw (see [`crate::tool_arguments`]).

use std::collections::BTreeMap;

use openclaw_transcript::{
    AssistantMessage, ContentBlock, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
};
use serde_json::Value;

use crate::error::ProviderError;
use crate::request::StreamEvent;

/// One content block under construction.
#[derive(Debug)]
enum Slot {
    Text(String),
    Thinking {
        text: String,
        signature: Option<String>,
        redacted: bool,
    },
    Tool {
        id: Option<String>,
        name: String,
        arguments: String,
        announced: bool,
        finished: Option<Value>,
    },
}

/// The reply so far. Blocks are addressed by the API's own index (`key`) where it has one,
/// or appended to the last block of the same kind where it does not (chat text).
#[derive(Debug, Default)]
pub(crate) struct ReplyBuilder {
    slots: Vec<Slot>,
    keys: BTreeMap<u64, usize>,
    tool_keys: BTreeMap<u64, usize>,
    usage: Option<Usage>,
    stop: Option<StopReason>,
    error_message: Option<String>,
    outbox: Vec<StreamEvent>,
}

impl ReplyBuilder {
    /// Appends visible text: to block `key`, or to the last block when it is text.
    pub(crate) fn text(&mut self, key: Option<u64>, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let at = self.slot_for(
            key,
            |slot| matches!(slot, Slot::Text(_)),
            || Slot::Text(String::new()),
        );
        if let Slot::Text(text) = &mut self.slots[at] {
            text.push_str(delta);
        }
        self.outbox.push(StreamEvent::TextDelta(delta.to_owned()));
    }

    /// Opens a thinking block at `key` even before any text, so it keeps its stream position.
    pub(crate) fn open_thinking(&mut self, key: u64) {
        self.slot_for(
            Some(key),
            |slot| matches!(slot, Slot::Thinking { .. }),
            empty_thinking,
        );
    }

    /// Appends reasoning text: to block `key`, or to the last block when it is thinking.
    pub(crate) fn thinking(&mut self, key: Option<u64>, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let at = self.slot_for(
            key,
            |slot| matches!(slot, Slot::Thinking { .. }),
            empty_thinking,
        );
        if let Slot::Thinking { text, .. } = &mut self.slots[at] {
            text.push_str(delta);
        }
        self.outbox
            .push(StreamEvent::ThinkingDelta(delta.to_owned()));
    }

    /// Whether block `key` holds thinking text already.
    pub(crate) fn has_thinking_text(&self, key: u64) -> bool {
        self.keys.get(&key).is_some_and(
            |&at| matches!(&self.slots[at], Slot::Thinking { text, .. } if !text.is_empty()),
        )
    }

    /// Whether block `key` holds text already.
    pub(crate) fn has_text(&self, key: u64) -> bool {
        self.keys
            .get(&key)
            .is_some_and(|&at| matches!(&self.slots[at], Slot::Text(text) if !text.is_empty()))
    }

    /// Appends to (or, with `replace`, sets) the signature that lets block `key` be replayed.
    pub(crate) fn signature(&mut self, key: u64, part: &str, replace: bool) {
        let at = self.slot_for(
            Some(key),
            |slot| matches!(slot, Slot::Thinking { .. }),
            empty_thinking,
        );
        if let Slot::Thinking { signature, .. } = &mut self.slots[at] {
            match signature {
                Some(existing) if !replace => existing.push_str(part),
                _ => *signature = Some(part.to_owned()),
            }
        }
    }

    /// Block `key` is reasoning the provider sent encrypted: kept, with its `data`, only to be
    /// replayed.
    pub(crate) fn redacted_thinking(&mut self, key: u64, data: &str) {
        self.slots.push(Slot::Thinking {
            text: REDACTED_THINKING_TEXT.to_owned(),
            signature: Some(data.to_owned()),
            redacted: true,
        });
        self.keys.insert(key, self.slots.len() - 1);
    }

    /// Creates or updates tool call `key`. It is announced ([`StreamEvent::ToolCallStarted`])
    /// as soon as its name is known; a missing id is then made up from the key.
    pub(crate) fn tool(
        &mut self,
        key: u64,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) {
        let at = match self.tool_keys.get(&key) {
            Some(&at) => at,
            None => {
                self.slots.push(Slot::Tool {
                    id: None,
                    name: String::new(),
                    arguments: String::new(),
                    announced: false,
                    finished: None,
                });
                self.tool_keys.insert(key, self.slots.len() - 1);
                self.slots.len() - 1
            }
        };
        let Slot::Tool {
            id: slot_id,
            name: slot_name,
            arguments: slot_arguments,
            announced,
            finished,
        } = &mut self.slots[at]
        else {
            return;
        };
        if finished.is_some() {
            return;
        }
        if let Some(id) = id.filter(|id| !id.is_empty())
            && !*announced
        {
            *slot_id = Some(id.to_owned());
        }
        if let Some(name) = name.filter(|name| !name.is_empty())
            && slot_name.is_empty()
        {
            name.clone_into(slot_name);
        }
        if let Some(arguments) = arguments {
            slot_arguments.push_str(arguments);
        }
        if !*announced && !slot_name.is_empty() {
            *announced = true;
            let id = slot_id.get_or_insert_with(|| format!("call_{key}")).clone();
            self.outbox.push(StreamEvent::ToolCallStarted {
                id,
                name: slot_name.clone(),
            });
        }
    }

    /// Whether tool call `key` exists.
    pub(crate) fn has_tool(&self, key: u64) -> bool {
        self.tool_keys.contains_key(&key)
    }

    /// Replaces the accumulated arguments of tool call `key` with the complete text.
    pub(crate) fn tool_arguments(&mut self, key: u64, complete: &str) {
        if let Some(&at) = self.tool_keys.get(&key)
            && let Slot::Tool {
                arguments,
                finished: None,
                ..
            } = &mut self.slots[at]
        {
            complete.clone_into(arguments);
        }
    }

    /// Tool call `key` is complete: parse its arguments (empty means `{}`) and announce it.
    /// Arguments that are not JSON are kept as their raw text (a JSON string).
    pub(crate) fn finish_tool(&mut self, key: u64) -> Result<(), ProviderError> {
        let Some(&at) = self.tool_keys.get(&key) else {
            return Ok(());
        };
        self.finish_slot(at)
    }

    /// Finishes the open tool calls with a key below `key` whose arguments already parse as a
    /// JSON object, which cannot be the prefix of a longer one. Chat Completions streams calls
    /// one after the other, so a new index usually means the earlier calls are complete.
    pub(crate) fn finish_complete_tools_before(&mut self, key: u64) {
        let candidates: Vec<usize> = self.tool_keys.range(..key).map(|(_, &at)| at).collect();
        for at in candidates {
            let complete = matches!(
                &self.slots[at],
                Slot::Tool { name, arguments, finished: None, .. }
                    if !name.is_empty()
                        && serde_json::from_str::<Value>(arguments).is_ok_and(|v| v.is_object())
            );
            if complete {
                // Cannot fail: name and arguments were just checked.
                let _ = self.finish_slot(at);
            }
        }
    }

    /// Finishes every tool call still open, in stream order (for APIs that end all calls at
    /// once, and at the terminal event of the others).
    pub(crate) fn finish_open_tools(&mut self) -> Result<(), ProviderError> {
        for at in 0..self.slots.len() {
            self.finish_slot(at)?;
        }
        Ok(())
    }

    fn finish_slot(&mut self, at: usize) -> Result<(), ProviderError> {
        let Slot::Tool {
            id,
            name,
            arguments,
            announced,
            finished,
        } = &mut self.slots[at]
        else {
            return Ok(());
        };
        if finished.is_some() {
            return Ok(());
        }
        if name.is_empty() {
            return Err(ProviderError::malformed(
                "a tool call arrived without a name",
            ));
        }
        let parsed = if arguments.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str(arguments) {
                Ok(parsed) => parsed,
                Err(error) => {
                    tracing::debug!(tool = %name, %error, "tool call arguments are not JSON; kept raw");
                    Value::String(arguments.clone())
                }
            }
        };
        let id = id.get_or_insert_with(|| format!("call_{at}")).clone();
        if !*announced {
            *announced = true;
            self.outbox.push(StreamEvent::ToolCallStarted {
                id: id.clone(),
                name: name.clone(),
            });
        }
        *finished = Some(parsed.clone());
        self.outbox.push(StreamEvent::ToolCallFinished(ToolCall {
            id,
            name: name.clone(),
            arguments: parsed,
        }));
        Ok(())
    }

    /// Records usage (the last report wins).
    pub(crate) fn set_usage(&mut self, usage: Usage) {
        self.usage = Some(usage);
    }

    /// The usage recorded so far, for APIs that report it in parts.
    pub(crate) fn usage_mut(&mut self) -> &mut Usage {
        self.usage.get_or_insert_with(Usage::default)
    }

    /// Queues the one [`StreamEvent::Usage`], if usage was reported.
    pub(crate) fn emit_usage(&mut self) {
        if let Some(usage) = &self.usage {
            self.outbox.push(StreamEvent::Usage(usage.clone()));
        }
    }

    /// Records why the model stopped.
    pub(crate) fn set_stop(&mut self, stop: StopReason) {
        self.stop = Some(stop);
    }

    /// Records the provider's reason for a `stop_reason` of `error` (a content filter, a refusal).
    pub(crate) fn set_error_message(&mut self, message: impl Into<String>) {
        self.error_message = Some(message.into());
    }

    /// The visible text so far, every text block joined in stream order.
    pub(crate) fn text_so_far(&self) -> String {
        self.slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether any tool call was started.
    pub(crate) fn has_tool_calls(&self) -> bool {
        !self.tool_keys.is_empty()
    }

    /// The events queued since the last call.
    pub(crate) fn take_events(&mut self) -> Vec<StreamEvent> {
        std::mem::take(&mut self.outbox)
    }

    /// The finished message. Tool calls that never finished are dropped (L10); empty text is
    /// dropped; the stop reason becomes `toolUse` whenever a finished tool call is present,
    /// because some servers say `stop` there.
    pub(crate) fn into_message(
        self,
        provider: &str,
        model: &str,
        api: &str,
        timestamp: i64,
    ) -> AssistantMessage {
        let mut content = Vec::with_capacity(self.slots.len());
        for slot in self.slots {
            match slot {
                Slot::Text(text) if !text.is_empty() => {
                    content.push(ContentBlock::Text(TextContent { text }));
                }
                Slot::Thinking {
                    text,
                    signature,
                    redacted,
                } if !text.is_empty() || signature.is_some() => {
                    content.push(ContentBlock::Thinking(ThinkingContent {
                        thinking: text,
                        thinking_signature: signature,
                        redacted,
                    }));
                }
                Slot::Tool {
                    id: Some(id),
                    name,
                    finished: Some(arguments),
                    ..
                } => {
                    content.push(ContentBlock::ToolCall(ToolCall {
                        id,
                        name,
                        arguments,
                    }));
                }
                Slot::Text(_) | Slot::Thinking { .. } | Slot::Tool { .. } => {}
            }
        }
        let has_calls = content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolCall(_)));
        let stop = match self.stop {
            Some(StopReason::Stop) | None if has_calls => StopReason::ToolUse,
            Some(stop) => stop,
            None => StopReason::Stop,
        };
        AssistantMessage {
            content,
            provider: provider.to_owned(),
            model: model.to_owned(),
            api: Some(api.to_owned()),
            usage: Some(self.usage.unwrap_or_default()),
            stop_reason: stop,
            error_message: self.error_message,
            timestamp,
        }
    }

    /// The block for `key` (creating it when absent), or without a key the last block when
    /// `same_kind` accepts it, else a new one.
    fn slot_for(
        &mut self,
        key: Option<u64>,
        same_kind: impl Fn(&Slot) -> bool,
        new: impl FnOnce() -> Slot,
    ) -> usize {
        match key {
            Some(key) => match self.keys.get(&key) {
                Some(&at) if same_kind(&self.slots[at]) => at,
                _ => {
                    self.slots.push(new());
                    self.keys.insert(key, self.slots.len() - 1);
                    self.slots.len() - 1
                }
            },
            None => match self.slots.last() {
                Some(last) if same_kind(last) => self.slots.len() - 1,
                _ => {
                    self.slots.push(new());
                    self.slots.len() - 1
                }
            },
        }
    }
}

fn empty_thinking() -> Slot {
    Slot::Thinking {
        text: String::new(),
        signature: None,
        redacted: false,
    }
}

/// The text a redacted thinking block shows in transcripts (pi-ai writes the same).
pub(crate) const REDACTED_THINKING_TEXT: &str = "[Reasoning redacted]";

/// A JSON number as `u64`, 0 when absent.
pub(crate) fn count(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_keep_stream_order_and_partial_calls_never_leak() {
        let mut reply = ReplyBuilder::default();
        reply.open_thinking(0);
        reply.thinking(Some(0), "hmm");
        reply.text(Some(1), "Hel");
        reply.text(Some(1), "lo");
        reply.tool(2, Some("c1"), Some("read"), Some("{\"pa"));
        reply.tool(2, None, None, Some("th\":1}"));
        reply.finish_tool(2).unwrap();
        reply.tool(3, Some("c2"), Some("write"), Some("{\"unfinished"));
        let events = reply.take_events();
        assert_eq!(
            events,
            vec![
                StreamEvent::ThinkingDelta("hmm".into()),
                StreamEvent::TextDelta("Hel".into()),
                StreamEvent::TextDelta("lo".into()),
                StreamEvent::ToolCallStarted {
                    id: "c1".into(),
                    name: "read".into()
                },
                StreamEvent::ToolCallFinished(ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({"path": 1})
                }),
                StreamEvent::ToolCallStarted {
                    id: "c2".into(),
                    name: "write".into()
                },
            ]
        );
        let message = reply.into_message("p", "m", "api", 5);
        assert_eq!(message.content.len(), 3, "the unfinished call is dropped");
        assert_eq!(message.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn bad_arguments_travel_raw_and_empty_arguments_are_an_object() {
        let mut reply = ReplyBuilder::default();
        reply.tool(0, Some("a"), Some("t"), Some("{oops"));
        reply.finish_tool(0).unwrap();
        let message = reply.into_message("p", "m", "api", 0);
        let ContentBlock::ToolCall(call) = &message.content[0] else {
            panic!("{message:?}");
        };
        let invalid = crate::tool_arguments(call).unwrap_err();
        assert_eq!(invalid.raw, "{oops");
        assert!(
            invalid.error.contains("key must be a string"),
            "{invalid:?}"
        );
        let mut reply = ReplyBuilder::default();
        reply.tool(0, None, Some("t"), None);
        reply.finish_open_tools().unwrap();
        let message = reply.into_message("p", "m", "api", 0);
        assert_eq!(
            message.content,
            vec![ContentBlock::ToolCall(ToolCall {
                id: "call_0".into(),
                name: "t".into(),
                arguments: json!({})
            })]
        );
    }
}

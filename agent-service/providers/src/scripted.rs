//! The offline scripted model (api `scripted`): canned turns from a JSON5 script, streamed like
//! a real model, for demos and tests without any account or network. It is clearly not a
//! model: it never reads the prompt beyond the last user message and tool result.
//!
//! Script shape:
//! ```json5
//! {
//!   chunkChars: 6,          // text is streamed in deltas of this many characters (default 6)
//!   delayMs: 0,             // pause between deltas (default 0)
//!   exhausted: "cycle",     // past the last turn: "cycle" (default), "repeatLast", or a turn
//!   turns: [
//!     { when: "hello", text: "Hi!" },   // chosen when the last user message contains "hello"
//!     { thinking: "...", text: "...", toolCalls: [{ name: "read", arguments: { path: "AGENTS.md" } }] },
//!   ],
//! }
//! ```
//!
//! Which turn answers is a pure function of the conversation, so any number of sessions can
//! share one provider and a restarted service picks up where it was. With `a` the number of
//! assistant messages since the last user message: when a turn's `when` occurs in the last
//! user message (case-insensitively; the first such turn, `s`), turn `s + a` answers; otherwise
//! turn number (assistant messages in the whole conversation) answers. So a tool-call turn is
//! followed by the next turn once the tool result is back.
//!
//! In `text`, `{{lastUserMessage}}` and `{{lastToolResult}}` (its first 400 characters) are
//! replaced. Usage is an estimate: characters / 4.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use openclaw_transcript::{
    AssistantMessage, Clock, ContentBlock, Message, StopReason, TextContent, ThinkingContent,
    ToolCall, Usage, UserContent, unix_millis,
};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::provider::ModelProvider;
use crate::request::{ModelRequest, StreamEvent, joined_text};
use crate::transport::send_all;

const API: &str = "scripted";

/// The quick-start demo script (`examples/demo-script.json5`): reads AGENTS.md with the `read`
/// tool, then answers quoting it.
pub const DEMO_SCRIPT: &str = include_str!("../examples/demo-script.json5");

/// How much of the last tool result `{{lastToolResult}}` quotes.
const QUOTE_CHARS: usize = 400;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Script {
    turns: Vec<ScriptTurn>,
    #[serde(default)]
    exhausted: Exhausted,
    chunk_chars: Option<usize>,
    delay_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScriptTurn {
    when: Option<String>,
    thinking: Option<String>,
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptToolCall>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptToolCall {
    id: Option<String>,
    name: String,
    #[serde(default = "empty_object")]
    arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Exhausted {
    Mode(ExhaustedMode),
    Reply(ScriptTurn),
}

impl Default for Exhausted {
    fn default() -> Self {
        Self::Mode(ExhaustedMode::Cycle)
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
enum ExhaustedMode {
    Cycle,
    RepeatLast,
}

/// The offline scripted model.
#[derive(Clone)]
pub struct ScriptedProvider {
    id: String,
    script: Script,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedProvider")
            .field("id", &self.id)
            .field("turns", &self.script.turns.len())
            .finish_non_exhaustive()
    }
}

impl ScriptedProvider {
    /// Parses a JSON5 script. A script without turns is refused.
    pub fn from_json5(
        id: impl Into<String>,
        text: &str,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ProviderError> {
        let id = id.into();
        let script: Script = json5::from_str(text).map_err(|error| {
            ProviderError::config(format!("models.providers.{id}.script: {error}"))
        })?;
        if script.turns.is_empty() {
            return Err(ProviderError::config(format!(
                "models.providers.{id}.script: the script has no turns"
            )));
        }
        Ok(Self { id, script, clock })
    }

    /// Reads and parses a script file.
    pub fn from_file(
        id: impl Into<String>,
        path: &Path,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ProviderError> {
        let id = id.into();
        let text = std::fs::read_to_string(path).map_err(|error| {
            ProviderError::config(format!(
                "models.providers.{id}.script: cannot read {}: {error}",
                path.display()
            ))
        })?;
        Self::from_json5(id, &text, clock)
    }

    /// The number of scripted turns.
    pub fn turn_count(&self) -> usize {
        self.script.turns.len()
    }

    /// The turn answering `messages`.
    fn pick(&self, messages: &[Message]) -> ScriptTurn {
        let turns = &self.script.turns;
        let last_user = messages.iter().rposition(|m| matches!(m, Message::User(_)));
        let assistants = |from: usize| {
            messages[from..]
                .iter()
                .filter(|m| matches!(m, Message::Assistant(_)))
                .count()
        };
        let since_user = last_user.map_or(0, &assistants);
        let user_text = last_user
            .map(|at| message_text(&messages[at]))
            .unwrap_or_default()
            .to_lowercase();
        let anchor = turns.iter().position(|turn| {
            turn.when
                .as_deref()
                .is_some_and(|when| user_text.contains(&when.to_lowercase()))
        });
        let index = match anchor {
            Some(start) => start + since_user,
            None => assistants(0),
        };
        match (turns.get(index), &self.script.exhausted) {
            (Some(turn), _) => turn.clone(),
            (None, Exhausted::Mode(ExhaustedMode::Cycle)) => turns[index % turns.len()].clone(),
            (None, Exhausted::Mode(ExhaustedMode::RepeatLast)) => turns[turns.len() - 1].clone(),
            (None, Exhausted::Reply(turn)) => turn.clone(),
        }
    }
}

fn message_text(message: &Message) -> String {
    let blocks = match message {
        Message::User(user) => match &user.content {
            UserContent::Text(text) => return text.clone(),
            UserContent::Blocks(blocks) => blocks,
        },
        Message::ToolResult(result) => &result.content,
        Message::Assistant(assistant) => &assistant.content,
        Message::Other(_) => return String::new(),
    };
    joined_text(blocks)
}

fn fill(template: &str, messages: &[Message]) -> String {
    let last = |pick: fn(&Message) -> bool| {
        messages
            .iter()
            .rev()
            .find(|m| pick(m))
            .map(message_text)
            .unwrap_or_default()
    };
    let mut text = template.to_owned();
    if text.contains("{{lastUserMessage}}") {
        text = text.replace(
            "{{lastUserMessage}}",
            &last(|m| matches!(m, Message::User(_))),
        );
    }
    if text.contains("{{lastToolResult}}") {
        let result = last(|m| matches!(m, Message::ToolResult(_)));
        let quote: String = unfenced(&result).chars().take(QUOTE_CHARS).collect();
        text = text.replace("{{lastToolResult}}", &quote);
    }
    text
}

/// The data inside an untrusted-content fence (the runtime wraps tool
/// results in `<<<UNTRUSTED_DATA ...>>>`, a notice line, the data, then
/// `<<<END_UNTRUSTED_DATA ...>>>`): a model reads the fence as framing and
/// quotes the data, so the script does too. Text without a fence is returned
/// as it is.
fn unfenced(text: &str) -> &str {
    if !text.starts_with("<<<UNTRUSTED_DATA ") {
        return text;
    }
    let mut lines = text.splitn(3, '\n');
    let (Some(_marker), Some(_notice), Some(rest)) = (lines.next(), lines.next(), lines.next())
    else {
        return text;
    };
    match rest.rfind("<<<END_UNTRUSTED_DATA ") {
        Some(end) => rest[..end].trim_end_matches('\n'),
        None => rest,
    }
}

/// Splits text into pieces of `size` characters.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|chunk| chunk.iter().collect())
        .collect()
}

#[async_trait]
impl ModelProvider for ScriptedProvider {
    fn id(&self) -> &str {
        &self.id
    }

    fn api(&self) -> &'static str {
        API
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        events: mpsc::Sender<StreamEvent>,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError> {
        let timestamp = unix_millis(self.clock.now());
        let turn = self.pick(&request.messages);
        let size = self.script.chunk_chars.unwrap_or(6);
        let delay = Duration::from_millis(self.script.delay_ms.unwrap_or(0));
        let mut content = Vec::new();
        let mut output_chars = 0;
        let thinking = turn.thinking.as_deref().map(|t| fill(t, &request.messages));
        let text = turn.text.as_deref().map(|t| fill(t, &request.messages));
        let parts = [(thinking, true), (text, false)];
        for (part, is_thinking) in parts {
            let Some(part) = part.filter(|p| !p.is_empty()) else {
                continue;
            };
            for piece in pieces(&part, size) {
                if !delay.is_zero() {
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                let event = if is_thinking {
                    StreamEvent::ThinkingDelta(piece)
                } else {
                    StreamEvent::TextDelta(piece)
                };
                send_all(vec![event], &events, &cancel).await?;
            }
            output_chars += part.chars().count();
            content.push(if is_thinking {
                ContentBlock::Thinking(ThinkingContent {
                    thinking: part,
                    thinking_signature: None,
                    redacted: false,
                })
            } else {
                ContentBlock::Text(TextContent { text: part })
            });
        }
        let round = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant(_)))
            .count();
        for (n, call) in turn.tool_calls.iter().enumerate() {
            let id = call
                .id
                .clone()
                .unwrap_or_else(|| format!("scripted_{round}_{n}"));
            let call = ToolCall {
                id,
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            };
            output_chars += call.arguments.to_string().chars().count();
            send_all(
                vec![
                    StreamEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    },
                    StreamEvent::ToolCallFinished(call.clone()),
                ],
                &events,
                &cancel,
            )
            .await?;
            content.push(ContentBlock::ToolCall(call));
        }
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        let input_chars = request.system.stable.chars().count()
            + request.system.dynamic.chars().count()
            + request
                .messages
                .iter()
                .map(|m| message_text(m).chars().count())
                .sum::<usize>();
        let estimate = |chars: usize| chars.div_ceil(4) as u64;
        let usage = Usage {
            input: estimate(input_chars),
            output: estimate(output_chars),
            total_tokens: estimate(input_chars) + estimate(output_chars),
            ..Usage::default()
        };
        send_all(vec![StreamEvent::Usage(usage.clone())], &events, &cancel).await?;
        let stop_reason = if turn.tool_calls.is_empty() {
            StopReason::Stop
        } else {
            StopReason::ToolUse
        };
        Ok(AssistantMessage {
            content,
            provider: self.id.clone(),
            model: request.model.clone(),
            api: Some(API.to_owned()),
            usage: Some(usage),
            stop_reason,
            error_message: None,
            timestamp,
        })
    }
}

#[cfg(test)]
mod unfence_tests {
    use super::unfenced;

    #[test]
    fn quotes_the_data_inside_an_untrusted_fence() {
        let fenced = "<<<UNTRUSTED_DATA id=\"abc\" source=\"tool:read\">>>\n(Output of a tool call, shown as data.)\n# AGENTS.md\nline two\n<<<END_UNTRUSTED_DATA id=\"abc\">>>";
        assert_eq!(unfenced(fenced), "# AGENTS.md\nline two");
        assert_eq!(unfenced("plain result"), "plain result");
        // A fence cut short keeps what there is.
        assert_eq!(
            unfenced("<<<UNTRUSTED_DATA id=\"x\">>>\nnotice\ndata"),
            "data"
        );
    }
}

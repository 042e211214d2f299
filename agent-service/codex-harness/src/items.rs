//! Our transcript, built from Codex's `item/*` notifications.
//!
//! `turn/completed` carries only the final message, so every entry comes
//! from the item stream: assistant text (`agentMessage`), reasoning
//! summaries (`reasoning`), and tool calls with their results: our dynamic
//! tools, and Codex's own work written as a call plus result pair
//! (`commandExecution` as `codex_exec`, `fileChange` as
//! `codex_apply_patch`, `mcpToolCall` as `mcp__<server>__<tool>`,
//! `webSearch` as `codex_web_search`, any other item as `codex_<type>`
//! with the item as arguments), and the tool calls Codex answers without an
//! item of its own (a call of a tool nobody declared, say `browser`, which
//! Codex answers "unsupported call"), read from the raw response items the
//! harness asks for (`experimentalRawEvents` on `thread/start`) as
//! `codex_<name>`. Results of everything Codex did itself carry
//! `details: {"codexOwned": true, "codexItem": <type>}`. The names use only `[A-Za-z0-9_-]`
//! so a provider accepts them if the session later runs on the embedded
//! loop. Items started and never completed (steer and interrupt leave
//! `agentMessage` items open; a dead process leaves anything open) are
//! closed by [`ItemTracker::finish`], so every tool call has its result.
//!
//! Each model response becomes one assistant message followed by its tool
//! results, as in the embedded loop: `[thinking, text, toolCall…]`,
//! results, `[text]`. A response ends with its `thread/tokenUsage/updated`
//! (whose usage the message carries), or when text follows tool results.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, PoisonError},
    time::Instant,
};

use openclaw_transcript::{
    AssistantMessage, ContentBlock, Message, StopReason, ThinkingContent, ToolCall,
    ToolResultMessage, Usage,
};
use serde_json::{Value, json};

use crate::{
    events::{HarnessEvent, TurnStatus},
    tool_items::{
        codex_name, codex_owned, kind, shorten, str_field, summarize, tool_call, tool_result,
    },
};

/// Tool output shown in a stream event (the transcript keeps all of it).
const EVENT_OUTPUT_CHARS: usize = 4096;
/// The `api` written on assistant messages.
pub const CODEX_API: &str = "codex-app-server";
/// The result of a dynamic tool call the turn ended before it answered, as the embedded loop
/// words an interrupted call's result.
const UNANSWERED: &str = "interrupted: the Codex turn ended while this call ran";

/// What our dynamic tools returned, by call id, before their fenced copy went to Codex:
/// the transcript keeps the tool's own text.
pub(crate) type Answers = Arc<Mutex<HashMap<String, String>>>;

enum Open {
    Agent { text: String },
    Reasoning { text: String },
    Tool { name: String, started: Instant },
}

/// Collects one turn's entries.
pub(crate) struct ItemTracker {
    entries: Vec<Message>,
    /// The assistant message of the model response being read.
    current: Option<AssistantMessage>,
    /// Results of `current`'s tool calls, written after it.
    results: Vec<Message>,
    /// A model response ended (`thread/tokenUsage/updated` comes after each):
    /// the next output starts a new assistant message.
    boundary: bool,
    open: Vec<(String, Open)>,
    provider: String,
    model: String,
    final_text: String,
    /// The last partial (never completed) assistant text.
    partial: String,
    total: Usage,
    unassigned: Option<Usage>,
    /// Calls read from raw response items, written into the transcript when
    /// they arrived and not (yet) claimed by an item of Codex's.
    raw_pending: Vec<RawCall>,
    /// Ids of the tool-like items Codex reported: their raw calls and
    /// outputs are already covered.
    claimed: HashSet<String>,
    answers: Answers,
}

/// A tool call seen only as a raw response item so far.
struct RawCall {
    id: String,
    name: String,
    arguments: Value,
    started: Instant,
}

/// What a finished tracker hands back.
pub(crate) struct Finished {
    pub entries: Vec<Message>,
    pub final_text: String,
    pub usage: Usage,
    pub events: Vec<HarnessEvent>,
}

impl ItemTracker {
    pub(crate) fn new(provider: &str, model: &str) -> Self {
        Self {
            entries: Vec::new(),
            current: None,
            results: Vec::new(),
            boundary: false,
            open: Vec::new(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            final_text: String::new(),
            partial: String::new(),
            total: Usage::default(),
            unassigned: None,
            raw_pending: Vec::new(),
            claimed: HashSet::new(),
            answers: Answers::default(),
        }
    }

    /// Where the turn records what our dynamic tools returned (see [`Answers`]).
    pub(crate) fn answers(&self) -> Answers {
        Arc::clone(&self.answers)
    }

    /// `item/started`.
    pub(crate) fn started(&mut self, params: &Value) -> Vec<HarnessEvent> {
        let item = &params["item"];
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            return Vec::new();
        };
        let at = timestamp(params, "startedAtMs");
        match kind(item) {
            "agentMessage" => {
                let text = str_field(item, "text").to_owned();
                self.open.push((id.to_owned(), Open::Agent { text }));
                Vec::new()
            }
            "reasoning" => {
                let text = String::new();
                self.open.push((id.to_owned(), Open::Reasoning { text }));
                Vec::new()
            }
            _ => match tool_call(item) {
                Some((name, arguments)) => {
                    let summary = summarize(&name, &arguments);
                    self.claim_or_push_call(id, &name, arguments, at);
                    let started = Instant::now();
                    let open = Open::Tool {
                        name: name.clone(),
                        started,
                    };
                    self.open.push((id.to_owned(), open));
                    vec![HarnessEvent::ToolStarted {
                        call_id: id.to_owned(),
                        name,
                        summary,
                    }]
                }
                None => Vec::new(),
            },
        }
    }

    /// `item/agentMessage/delta`.
    pub(crate) fn agent_delta(&mut self, params: &Value) -> Option<HarnessEvent> {
        let id = params.get("itemId").and_then(Value::as_str)?;
        let delta = str_field(params, "delta");
        match self.find(id) {
            Some(Open::Agent { text }) => text.push_str(delta),
            _ => self.open.push((
                id.to_owned(),
                Open::Agent {
                    text: delta.to_owned(),
                },
            )),
        }
        Some(HarnessEvent::TextDelta(delta.to_owned()))
    }

    /// `item/reasoning/summaryTextDelta` and `item/reasoning/textDelta`.
    pub(crate) fn reasoning_delta(&mut self, params: &Value) -> Option<HarnessEvent> {
        let id = params.get("itemId").and_then(Value::as_str)?;
        let delta = str_field(params, "delta");
        if let Some(Open::Reasoning { text }) = self.find(id) {
            text.push_str(delta);
        }
        Some(HarnessEvent::ThinkingDelta(delta.to_owned()))
    }

    /// `item/completed`.
    pub(crate) fn completed(&mut self, params: &Value) -> Vec<HarnessEvent> {
        let item = &params["item"];
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            return Vec::new();
        };
        let at = timestamp(params, "completedAtMs");
        let open = self
            .open
            .iter()
            .position(|(open_id, _)| open_id == id)
            .map(|i| self.open.remove(i).1);
        match kind(item) {
            "agentMessage" => {
                let streamed = match open {
                    Some(Open::Agent { text }) => text,
                    _ => String::new(),
                };
                let text = match str_field(item, "text") {
                    "" => streamed,
                    full => full.to_owned(),
                };
                if !text.is_empty() {
                    self.final_text.clone_from(&text);
                    self.output(at, false)
                        .content
                        .push(ContentBlock::text(text));
                }
                Vec::new()
            }
            "reasoning" => {
                let summary: Vec<&str> = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|parts| parts.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let text = match (summary.join("\n\n"), open) {
                    (joined, _) if !joined.is_empty() => joined,
                    (_, Some(Open::Reasoning { text })) => text,
                    _ => String::new(),
                };
                if !text.is_empty() {
                    let block = ContentBlock::Thinking(ThinkingContent {
                        thinking: text,
                        thinking_signature: None,
                        redacted: false,
                    });
                    self.output(at, false).content.push(block);
                }
                Vec::new()
            }
            _ => {
                let Some((name, arguments)) = tool_call(item) else {
                    return Vec::new();
                };
                let started = match open {
                    Some(Open::Tool { started, .. }) => started,
                    _ => {
                        // Completed without a start: record the call now.
                        self.claim_or_push_call(id, &name, arguments, at);
                        Instant::now()
                    }
                };
                let (mut text, is_error) = tool_result(item);
                if !codex_owned(item) {
                    let answered = self
                        .answers
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(id);
                    match answered {
                        Some(raw) => text = raw,
                        None if text.is_empty() => UNANSWERED.clone_into(&mut text),
                        None => {}
                    }
                }
                let duration_ms = item
                    .get("durationMs")
                    .and_then(Value::as_u64)
                    .unwrap_or_else(|| millis(started));
                let details = codex_owned(item).then(|| owned_details(kind(item)));
                self.push_result(id, &name, &text, is_error, at, details);
                vec![HarnessEvent::ToolFinished {
                    call_id: id.to_owned(),
                    name,
                    is_error,
                    output: shorten(&text, EVENT_OUTPUT_CHARS),
                    duration_ms,
                }]
            }
        }
    }

    /// `rawResponseItem/completed`: a tool call the model made, or Codex's
    /// answer to one. Calls and answers that an item of Codex's reports
    /// (our dynamic tools, commands, patches ...) are left to that item; the
    /// rest (a tool nobody declared) are written as Codex-owned calls.
    pub(crate) fn raw_item(&mut self, params: &Value) -> Vec<HarnessEvent> {
        let item = &params["item"];
        let Some(id) = item.get("call_id").and_then(Value::as_str) else {
            return Vec::new();
        };
        if self.claimed.contains(id) {
            return Vec::new();
        }
        let at = timestamp(params, "completedAtMs");
        match kind(item) {
            "function_call" | "custom_tool_call" => {
                if self.raw_pending.iter().any(|c| c.id == id) {
                    return Vec::new();
                }
                let arguments = match item.get("arguments").and_then(Value::as_str) {
                    Some(text) => serde_json::from_str(text)
                        .unwrap_or_else(|_| Value::String(text.to_owned())),
                    None => json!({"input": str_field(item, "input")}),
                };
                let name = codex_name(str_field(item, "name"));
                // Written now, into the model response it belongs to; an item
                // of Codex's for the same call takes it over.
                self.push_call(id, &name, arguments.clone(), at);
                self.raw_pending.push(RawCall {
                    id: id.to_owned(),
                    name,
                    arguments,
                    started: Instant::now(),
                });
                Vec::new()
            }
            raw @ ("function_call_output" | "custom_tool_call_output") => {
                let Some(index) = self.raw_pending.iter().position(|c| c.id == id) else {
                    return Vec::new();
                };
                let call = self.raw_pending.remove(index);
                let text = match item.get("output") {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                self.claimed.insert(call.id.clone());
                let details = owned_details(raw.trim_end_matches("_output"));
                self.push_result(&call.id, &call.name, &text, false, at, Some(details));
                vec![
                    HarnessEvent::ToolStarted {
                        call_id: call.id.clone(),
                        summary: summarize(&call.name, &call.arguments),
                        name: call.name.clone(),
                    },
                    HarnessEvent::ToolFinished {
                        call_id: call.id,
                        name: call.name,
                        is_error: false,
                        output: shorten(&text, EVENT_OUTPUT_CHARS),
                        duration_ms: millis(call.started),
                    },
                ]
            }
            _ => Vec::new(),
        }
    }

    /// Records the call of a tool-like item, or takes over the call a raw
    /// response item wrote for it (same id) under the item's name.
    fn claim_or_push_call(&mut self, id: &str, name: &str, arguments: Value, at: i64) {
        self.claimed.insert(id.to_owned());
        let Some(index) = self.raw_pending.iter().position(|c| c.id == id) else {
            self.push_call(id, name, arguments, at);
            return;
        };
        self.raw_pending.remove(index);
        let blocks = self
            .current
            .iter_mut()
            .flat_map(|m| m.content.iter_mut())
            .chain(self.entries.iter_mut().rev().flat_map(|m| match m {
                Message::Assistant(a) => a.content.iter_mut(),
                _ => [].iter_mut(),
            }));
        for block in blocks {
            if let ContentBlock::ToolCall(call) = block
                && call.id == id
            {
                call.name = name.to_owned();
                call.arguments = arguments;
                return;
            }
        }
        self.push_call(id, name, arguments, at);
    }

    /// `thread/tokenUsage/updated` (its `last` breakdown).
    pub(crate) fn usage(&mut self, params: &Value) -> Option<HarnessEvent> {
        let last = params.get("tokenUsage")?.get("last")?;
        let n = |key: &str| last.get(key).and_then(Value::as_u64).unwrap_or(0);
        let cached = n("cachedInputTokens");
        let usage = Usage {
            input: n("inputTokens").saturating_sub(cached),
            output: n("outputTokens"),
            cache_read: cached,
            cache_write: n("cacheWriteInputTokens"),
            total_tokens: n("totalTokens"),
            cost: None,
        };
        add(&mut self.total, &usage);
        let slot = match self.current.as_mut() {
            Some(message) => &mut message.usage,
            None => &mut self.unassigned,
        };
        add(slot.get_or_insert_with(Usage::default), &usage);
        self.boundary = true;
        Some(HarnessEvent::Usage(usage))
    }

    /// User messages steered into the turn, at this point of the
    /// transcript. `turn/steer` abandons the model stream at once and the
    /// open `agentMessage` never completes: its partial text is closed here,
    /// before the steered messages, as an aborted reply.
    pub(crate) fn steered(&mut self, messages: &[String]) {
        let at = now_ms();
        let (agents, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|(_, open)| matches!(open, Open::Agent { .. }));
        self.open = rest;
        for (_, open) in agents {
            if let Open::Agent { text } = open {
                self.close_partial(text, at);
            }
        }
        self.flush();
        for text in messages {
            self.entries
                .push(Message::User(openclaw_transcript::UserMessage {
                    content: openclaw_transcript::UserContent::Text(text.clone()),
                    timestamp: at,
                }));
        }
    }

    fn close_partial(&mut self, text: String, at: i64) {
        if text.is_empty() {
            return;
        }
        let message = self.output(at, false);
        message.content.push(ContentBlock::text(text.clone()));
        message.stop_reason = StopReason::Aborted;
        self.partial = text;
    }

    /// A tool call is still running (steering waits for it, R-11).
    pub(crate) fn tool_in_flight(&self) -> bool {
        self.open
            .iter()
            .any(|(_, open)| matches!(open, Open::Tool { .. }))
    }

    /// Closes every dangling item and hands the entries over.
    pub(crate) fn finish(mut self, status: &TurnStatus) -> Finished {
        let at = now_ms();
        let mut events = Vec::new();
        for call in std::mem::take(&mut self.raw_pending) {
            let text = "The turn ended before Codex answered this call.";
            let details = Some(owned_details("function_call"));
            self.push_result(&call.id, &call.name, text, true, at, details);
            events.push(HarnessEvent::ToolFinished {
                call_id: call.id,
                name: call.name,
                is_error: true,
                output: text.to_owned(),
                duration_ms: millis(call.started),
            });
        }
        for (id, open) in std::mem::take(&mut self.open) {
            match open {
                Open::Agent { text } => self.close_partial(text, at),
                Open::Reasoning { .. } => {}
                Open::Tool { name, started } => {
                    let text = match status {
                        TurnStatus::ProcessExited { .. } | TurnStatus::Unresponsive { .. } => {
                            "The Codex app-server exited before this call finished; it may or may not have taken effect."
                        }
                        _ => {
                            "The turn ended before this call finished; it may or may not have taken effect."
                        }
                    };
                    let details = (!self.is_ours(&name)).then(|| owned_details("unfinished"));
                    self.push_result(&id, &name, text, true, at, details);
                    events.push(HarnessEvent::ToolFinished {
                        call_id: id,
                        name,
                        is_error: true,
                        output: text.to_owned(),
                        duration_ms: millis(started),
                    });
                }
            }
        }
        match status {
            TurnStatus::Failed { message, .. } => {
                let entry = self.output(at, false);
                entry.stop_reason = StopReason::Error;
                entry.error_message = Some(message.clone());
            }
            // The turn is marked interrupted in our transcript: its partial
            // reply, or an empty aborted message when nothing had streamed.
            TurnStatus::ProcessExited { detail } => {
                let entry = self.output(at, false);
                entry.stop_reason = StopReason::Aborted;
                entry.error_message = Some(format!(
                    "the Codex app-server exited during this turn, which was interrupted: {detail}"
                ));
            }
            TurnStatus::Unresponsive { detail } => {
                let entry = self.output(at, false);
                entry.stop_reason = StopReason::Aborted;
                entry.error_message = Some(format!("this turn was interrupted: {detail}"));
            }
            TurnStatus::Completed | TurnStatus::Interrupted => {}
        }
        if self.final_text.is_empty() {
            self.final_text = std::mem::take(&mut self.partial);
        }
        self.flush();
        Finished {
            entries: self.entries,
            final_text: self.final_text,
            usage: self.total,
            events,
        }
    }

    fn find(&mut self, id: &str) -> Option<&mut Open> {
        self.open
            .iter_mut()
            .find(|(open_id, _)| open_id == id)
            .map(|(_, open)| open)
    }

    /// The assistant message new output goes into: a new one after a model
    /// response ended, and for text or reasoning after tool results (the
    /// model answered them). Calls of one response share a message, as
    /// Codex runs them one after the other.
    fn output(&mut self, at: i64, call: bool) -> &mut AssistantMessage {
        if self.boundary || (!call && !self.results.is_empty()) {
            self.flush();
        }
        let (provider, model, usage) = (&self.provider, &self.model, &mut self.unassigned);
        self.current.get_or_insert_with(|| AssistantMessage {
            content: Vec::new(),
            provider: provider.clone(),
            model: model.clone(),
            api: Some(CODEX_API.to_owned()),
            usage: usage.take(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: at,
        })
    }

    /// Writes the current assistant message and its results.
    fn flush(&mut self) {
        if let Some(message) = self.current.take() {
            self.entries.push(Message::Assistant(message));
        }
        self.entries.append(&mut self.results);
        self.boundary = false;
    }

    fn push_call(&mut self, id: &str, name: &str, arguments: Value, at: i64) {
        let message = self.output(at, true);
        message.content.push(ContentBlock::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments,
        }));
        message.stop_reason = StopReason::ToolUse;
    }

    fn push_result(
        &mut self,
        id: &str,
        name: &str,
        text: &str,
        is_error: bool,
        at: i64,
        details: Option<Value>,
    ) {
        self.results.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: id.to_owned(),
            tool_name: name.to_owned(),
            content: vec![ContentBlock::text(text)],
            is_error,
            details,
            timestamp: at,
        }));
    }

    /// Codex's own names all start with `codex_` or `mcp__`; ours do not.
    fn is_ours(&self, name: &str) -> bool {
        !name.starts_with("codex_") && !name.starts_with("mcp__")
    }
}

/// The `details` of a result Codex produced itself.
fn owned_details(item: &str) -> Value {
    json!({"codexOwned": true, "codexItem": item})
}

fn add(total: &mut Usage, usage: &Usage) {
    total.input += usage.input;
    total.output += usage.output;
    total.cache_read += usage.cache_read;
    total.cache_write += usage.cache_write;
    total.total_tokens += usage.total_tokens;
}

fn timestamp(params: &Value, key: &str) -> i64 {
    params
        .get(key)
        .or_else(|| params["item"].get(key))
        .and_then(Value::as_i64)
        .unwrap_or_else(now_ms)
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "items_tests.rs"]
mod tests;

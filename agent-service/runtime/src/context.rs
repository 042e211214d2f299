//! The conversation a model sees: rebuilt from transcript entries, and kept
//! well-formed by one pairing check run before every model request
//! (lesson L10).

use std::{borrow::Borrow, collections::BTreeSet, sync::Arc};

mod rejected;

pub use rejected::{REJECTED_ENTRY, Rejection};

use openclaw_transcript::{
    ContentBlock, Entry, EntryBody, EntryId, Message, ToolResultMessage, UserContent, UserMessage,
};

/// Text of the error result filled in for a tool call that never got one.
pub const INTERRUPTED: &str = "Tool call interrupted: no result was recorded (the run was stopped or crashed before the tool finished).";

/// Messages in conversation order, rebuilt from transcript entries.
///
/// A `compaction` entry replaces everything before its first kept entry
/// with its summary (as a user message), keeping the later entries whole. Each message is
/// held shared, so a run takes the history without copying it (see
/// [`Conversation::shared_messages`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    entries: Vec<(EntryId, Arc<Message>)>,
    /// The first message is the summary of this compaction entry.
    summary: Option<EntryId>,
    /// A memory flush ran since the last compaction (a `custom` entry of
    /// type [`MEMORY_FLUSH_ENTRY`]).
    flushed: bool,
}

/// `customType` of the transcript entry that records a memory-flush turn.
pub const MEMORY_FLUSH_ENTRY: &str = "openclaw:memory-flush";

/// The key in a compaction entry's `details` holding the AGENTS.md
/// excerpt re-read after the compaction (P-40).
pub const AGENTS_REFRESH_DETAIL: &str = "agentsRefresh";

impl Conversation {
    /// Applies one transcript entry.
    pub fn apply(&mut self, entry: &Entry) {
        match &entry.body {
            EntryBody::Message { message } => self
                .entries
                .push((entry.id.clone(), Arc::new(message.clone()))),
            EntryBody::Compaction {
                summary,
                first_kept_entry_id,
                details,
                ..
            } => {
                let kept_from = self
                    .entries
                    .iter()
                    .position(|(id, _)| id == first_kept_entry_id)
                    .unwrap_or(self.entries.len());
                let kept: Vec<(EntryId, Arc<Message>)> = self.entries.drain(kept_from..).collect();
                self.entries.clear();
                let refresh = details
                    .as_ref()
                    .and_then(|d| d.get(AGENTS_REFRESH_DETAIL))
                    .and_then(serde_json::Value::as_str);
                self.entries.push((
                    entry.id.clone(),
                    Arc::new(summary_message(summary, refresh)),
                ));
                self.entries.extend(kept);
                self.summary = Some(entry.id.clone());
                self.flushed = false;
            }
            EntryBody::Custom { custom_type, .. } if custom_type == MEMORY_FLUSH_ENTRY => {
                self.flushed = true;
            }
            EntryBody::Custom { custom_type, data } if custom_type == REJECTED_ENTRY => {
                if let Some(rejection) = Rejection::from_data(data.as_ref()) {
                    rejection.apply(&mut self.entries);
                }
            }
            _ => {}
        }
    }

    /// True when the first message is a compaction summary.
    pub fn starts_with_summary(&self) -> bool {
        match (&self.summary, self.entries.first()) {
            (Some(summary), Some((first, _))) => summary == first,
            _ => false,
        }
    }

    /// True when a memory flush ran since the last compaction.
    pub fn flushed_since_compaction(&self) -> bool {
        self.flushed
    }

    /// The messages, in order.
    pub fn messages(&self) -> Vec<Message> {
        self.entries.iter().map(|(_, m)| (**m).clone()).collect()
    }

    /// The messages, in order, shared with the conversation rather than copied.
    pub fn shared_messages(&self) -> Vec<Arc<Message>> {
        self.entries.iter().map(|(_, m)| Arc::clone(m)).collect()
    }

    /// The end of the conversation, without copying the rest of it.
    pub fn tail(&self) -> Tail {
        let mut users: Vec<Message> = self
            .entries
            .iter()
            .rev()
            .map(|(_, m)| &**m)
            .take_while(|m| matches!(m, Message::User(_)))
            .cloned()
            .collect();
        users.reverse();
        let before = self.entries.len() - users.len();
        // From the end: the nearest assistant message is usually right there.
        let replied = self.entries[..before]
            .iter()
            .rev()
            .any(|(_, m)| matches!(**m, Message::Assistant(_)));
        Tail {
            len: self.entries.len(),
            users,
            replied,
        }
    }

    /// Entry ids and messages, in order (for compaction cut points).
    pub fn entries(&self) -> &[(EntryId, Arc<Message>)] {
        &self.entries
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no message yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The end of a conversation (see [`Conversation::tail`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tail {
    /// How many messages the conversation holds.
    pub len: usize,
    /// The user messages it ends with, oldest first.
    pub users: Vec<Message>,
    /// Whether an assistant message comes before them.
    pub replied: bool,
}

/// First line of the message that stands in for compacted history.
pub const SUMMARY_HEADER: &str =
    "[Summary of the earlier conversation, written when it was compacted]";

/// Heading of the AGENTS.md excerpt that follows a summary.
pub const AGENTS_REFRESH_HEADER: &str =
    "[AGENTS.md, re-read after the compaction: the workspace rules still apply]";

fn summary_message(summary: &str, agents_refresh: Option<&str>) -> Message {
    let mut text = format!("{SUMMARY_HEADER}\n{summary}");
    if let Some(refresh) = agents_refresh.filter(|r| !r.is_empty()) {
        text.push_str("\n\n");
        text.push_str(AGENTS_REFRESH_HEADER);
        text.push('\n');
        text.push_str(refresh);
    }
    Message::User(UserMessage {
        content: UserContent::Text(text),
        timestamp: 0,
    })
}

/// Tool call ids of an assistant message, in order.
pub fn tool_call_ids(message: &Message) -> Vec<(String, String)> {
    match message {
        Message::Assistant(a) => a
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolCall(call) => Some((call.id.clone(), call.name.clone())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// What [`repair_pairing`] changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairingRepair {
    /// Tool results whose call is not in the preceding assistant message: dropped.
    pub orphans_dropped: Vec<String>,
    /// Results filled in for calls that had none; persist these.
    pub filled: Vec<ToolResultMessage>,
}

impl PairingRepair {
    /// True when nothing was wrong.
    pub fn is_clean(&self) -> bool {
        self.orphans_dropped.is_empty() && self.filled.is_empty()
    }
}

/// Ensures every assistant tool call is followed at once by exactly one
/// result, before a model request (lesson L10). A call's result that sits
/// further down (a result written after a crash, once other entries had
/// followed the call) is moved up next to its call, so a repair persisted
/// once stays repaired. Other orphaned and duplicate results are dropped;
/// calls without any result get an "interrupted" error result, returned so
/// the caller persists it (the next load is then clean). `now_ms` stamps
/// filled results.
pub fn repair_pairing<M>(messages: &mut Vec<M>, now_ms: i64) -> PairingRepair
where
    M: Borrow<Message> + From<Message>,
{
    // Almost every history is already paired: checked in place, it is not taken apart.
    if paired(messages) {
        return PairingRepair::default();
    }
    repair_in_full(messages, now_ms)
}

/// [`repair_pairing`] without its shortcut for a history already paired.
fn repair_in_full<M>(messages: &mut Vec<M>, now_ms: i64) -> PairingRepair
where
    M: Borrow<Message> + From<Message>,
{
    let mut repair = PairingRepair::default();
    let mut slots: Vec<Option<M>> = std::mem::take(messages).into_iter().map(Some).collect();
    let mut out: Vec<M> = Vec::with_capacity(slots.len());
    let mut i = 0;
    while i < slots.len() {
        let Some(message) = slots[i].take() else {
            i += 1;
            continue;
        };
        i += 1;
        if let Message::ToolResult(r) = message.borrow() {
            // A result not directly after its call (handled below) is an orphan.
            repair.orphans_dropped.push(r.tool_call_id.clone());
            continue;
        }
        let calls = tool_call_ids(message.borrow());
        out.push(message);
        if calls.is_empty() {
            continue;
        }
        let mut answered: BTreeSet<String> = BTreeSet::new();
        while let Some(Some(next)) = slots.get(i) {
            let Message::ToolResult(r) = next.borrow() else {
                break;
            };
            let id = r.tool_call_id.clone();
            let known = calls.iter().any(|(call, _)| *call == id);
            if let Some(result) = slots[i].take() {
                if known && !answered.contains(&id) {
                    answered.insert(id);
                    out.push(result);
                } else {
                    repair.orphans_dropped.push(id);
                }
            }
            i += 1;
        }
        for (id, name) in calls {
            if answered.contains(&id) {
                continue;
            }
            if let Some(later) = later_result(&mut slots, i, &id) {
                answered.insert(id);
                out.push(later);
                continue;
            }
            let filled = ToolResultMessage {
                tool_call_id: id,
                tool_name: name,
                content: vec![ContentBlock::text(INTERRUPTED)],
                details: None,
                is_error: true,
                timestamp: now_ms,
            };
            out.push(M::from(Message::ToolResult(filled.clone())));
            repair.filled.push(filled);
        }
    }
    *messages = out;
    repair
}

/// Whether every tool call is answered exactly once by the results right after its assistant
/// message, and every result answers a call that way: the histories [`repair_pairing`] would
/// leave as they are.
fn paired<M: Borrow<Message>>(messages: &[M]) -> bool {
    let mut at = 0;
    while let Some(message) = messages.get(at) {
        at += 1;
        let Message::Assistant(assistant) = message.borrow() else {
            if matches!(message.borrow(), Message::ToolResult(_)) {
                return false;
            }
            continue;
        };
        let calls: Vec<&str> = assistant
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolCall(call) => Some(call.id.as_str()),
                _ => None,
            })
            .collect();
        let mut answered: Vec<&str> = Vec::with_capacity(calls.len());
        while let Some(Message::ToolResult(result)) = messages.get(at).map(Borrow::borrow) {
            let id = result.tool_call_id.as_str();
            if !calls.contains(&id) || answered.contains(&id) {
                return false;
            }
            answered.push(id);
            at += 1;
        }
        if !calls.iter().all(|call| answered.contains(call)) {
            return false;
        }
    }
    true
}

/// Takes the first result for `id` at or after `from`, stopping at the next
/// assistant message that calls `id` again (that result would be its).
fn later_result<M: Borrow<Message>>(slots: &mut [Option<M>], from: usize, id: &str) -> Option<M> {
    for slot in slots.iter_mut().skip(from) {
        let Some(message) = slot.as_ref() else {
            continue;
        };
        match message.borrow() {
            Message::ToolResult(r) if r.tool_call_id == id => return slot.take(),
            other if tool_call_ids(other).iter().any(|(call, _)| call == id) => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_transcript::{AssistantMessage, StopReason, ToolCall};

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: 0,
        })
    }

    fn call(ids: &[&str]) -> Message {
        Message::Assistant(AssistantMessage {
            content: ids
                .iter()
                .map(|id| {
                    ContentBlock::ToolCall(ToolCall {
                        id: (*id).into(),
                        name: "read".into(),
                        arguments: serde_json::json!({}),
                    })
                })
                .collect(),
            provider: "p".into(),
            model: "m".into(),
            api: None,
            usage: None,
            stop_reason: StopReason::ToolUse,
            error_message: None,
            timestamp: 0,
        })
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("ok")],
            details: None,
            is_error: false,
            timestamp: 0,
        })
    }

    fn shape(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m {
                Message::User(_) => "user".to_owned(),
                Message::Assistant(_) => format!(
                    "call{:?}",
                    tool_call_ids(m)
                        .into_iter()
                        .map(|(i, _)| i)
                        .collect::<Vec<_>>()
                ),
                Message::ToolResult(r) => format!(
                    "result:{}{}",
                    r.tool_call_id,
                    if r.is_error { "!" } else { "" }
                ),
                Message::Other(_) => "other".to_owned(),
            })
            .collect()
    }

    fn conversation(messages: &[Message]) -> Conversation {
        let mut c = Conversation::default();
        for (i, message) in messages.iter().enumerate() {
            c.apply(&Entry {
                id: EntryId::new(format!("e{i}")),
                parent_id: None,
                timestamp: String::new(),
                body: EntryBody::Message {
                    message: message.clone(),
                },
            });
        }
        c
    }

    #[test]
    fn the_tail_is_the_trailing_user_messages_and_whether_a_reply_came_before() {
        assert_eq!(Conversation::default().tail(), Tail::default());
        let c = conversation(&[
            user("hi"),
            call(&["a"]),
            result("a"),
            user("one"),
            user("two"),
        ]);
        let tail = c.tail();
        assert_eq!((tail.len, tail.replied), (5, true));
        assert_eq!(tail.users, [user("one"), user("two")]);
        let after_a_result = conversation(&[user("hi"), call(&["a"]), result("a")]).tail();
        assert!(after_a_result.users.is_empty() && after_a_result.replied);
        let unanswered = conversation(&[user("a"), user("b")]).tail();
        assert_eq!((unanswered.len, unanswered.replied), (2, false));
        assert_eq!(unanswered.users.len(), 2);
        let only_results = conversation(&[result("x"), user("b")]).tail();
        assert_eq!((only_results.users.len(), only_results.replied), (1, false));
    }

    /// The in-place check is an exact shortcut: over every history of up to five messages
    /// made of a user message, calls and results, it says "paired" exactly where the full
    /// repair would change nothing and report nothing.
    #[test]
    fn the_paired_check_agrees_with_the_full_repair() {
        let pieces = [
            user("hi"),
            call(&["a"]),
            call(&["a", "b"]),
            call(&["b", "b"]),
            call(&[]),
            result("a"),
            result("b"),
        ];
        let mut histories: Vec<Vec<Message>> = vec![Vec::new()];
        let mut checked = 0;
        for _ in 0..5 {
            let mut longer = Vec::new();
            for history in &histories {
                for piece in &pieces {
                    let mut next = history.clone();
                    next.push(piece.clone());
                    longer.push(next);
                }
            }
            for history in &longer {
                let mut repaired = history.clone();
                let report = repair_in_full(&mut repaired, 0);
                assert_eq!(
                    paired(history),
                    report.is_clean() && &repaired == history,
                    "{:?}",
                    shape(history)
                );
                checked += 1;
            }
            histories = longer;
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn complete_pairs_are_untouched() {
        let mut m = vec![
            user("hi"),
            call(&["a", "b"]),
            result("b"),
            result("a"),
            user("next"),
        ];
        let before = m.clone();
        assert!(repair_pairing(&mut m, 1).is_clean());
        assert_eq!(m, before);
    }

    #[test]
    fn missing_results_are_filled_and_orphans_dropped() {
        let mut m = vec![
            user("hi"),
            result("zz"),
            call(&["a", "b"]),
            result("a"),
            result("a"),
            user("next"),
        ];
        let repair = repair_pairing(&mut m, 7);
        assert_eq!(
            shape(&m),
            [
                "user",
                "call[\"a\", \"b\"]",
                "result:a",
                "result:b!",
                "user"
            ]
        );
        assert_eq!(repair.orphans_dropped, ["zz", "a"]);
        assert_eq!(repair.filled.len(), 1);
        assert_eq!(repair.filled[0].timestamp, 7);
        // Repairing again changes nothing: the result is idempotent.
        assert!(repair_pairing(&mut m, 8).is_clean());
    }

    /// A crash left a call without its result; the next run appended a user
    /// message and then the filled result (lesson L10, found by the soak).
    /// The result is moved next to its call, and nothing is filled again.
    #[test]
    fn a_result_persisted_after_later_entries_is_moved_up_not_refilled() {
        let mut history = vec![
            user("go"),
            call(&["a"]),
            user("next"),
            result("a"),
            user("more"),
        ];
        let repair = repair_pairing(&mut history, 0);
        assert!(repair.is_clean(), "{repair:?}");
        assert_eq!(
            shape(&history),
            ["user", "call[\"a\"]", "result:a", "user", "user"]
        );
        // A later call reusing the id keeps its own result.
        let mut reused = vec![call(&["x"]), user("u"), call(&["x"]), result("x")];
        let repair = repair_pairing(&mut reused, 0);
        assert_eq!(repair.filled.len(), 1);
        assert_eq!(
            shape(&reused),
            [
                "call[\"x\"]",
                "result:x!",
                "user",
                "call[\"x\"]",
                "result:x"
            ]
        );
    }

    #[test]
    fn a_trailing_call_without_results_is_closed() {
        let mut m = vec![user("hi"), call(&["x"])];
        let repair = repair_pairing(&mut m, 0);
        assert_eq!(shape(&m), ["user", "call[\"x\"]", "result:x!"]);
        assert_eq!(repair.filled.len(), 1);
    }
}

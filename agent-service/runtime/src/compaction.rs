//! The pure parts of compaction (P-40; lessons L5, L10, L12):
//! the token budget of a model, the context estimate, where to cut, what the
//! summariser reads, and the "still too big" report. The run loop that uses
//! them lives in `run::compactor`.
//!
//! Sizes are estimated, not counted: four characters to a token over
//! everything a request carries (system prompt, tool schemas, messages).
//! The estimate is taken from the request about to be sent, so a large
//! incoming message counts before the provider sees it (lesson L5), rather
//! than trusting the previous turn's reported usage.

use std::borrow::Borrow;

use openclaw_config::raw::RawConfig;
use openclaw_transcript::{ContentBlock, Message, UserContent};

/// Characters per estimated token.
pub const CHARS_PER_TOKEN: u64 = 4;
/// Context window assumed when neither the model catalog
/// (`models.providers.<id>.models[].contextWindow`) nor
/// `agents.defaults.contextWindow` says.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;
/// Default lower bound of the reserve (`compaction.reserveTokensFloor`).
pub const DEFAULT_RESERVE_FLOOR: u64 = 20_000;
/// Default distance below the threshold at which the memory flush runs
/// (`compaction.memoryFlush.softThresholdTokens`).
pub const DEFAULT_SOFT_THRESHOLD: u64 = 4_000;
/// Room left for the summary itself when choosing what to keep.
pub const SUMMARY_ALLOWANCE_TOKENS: u64 = 2_000;
/// What one tool result may show the summariser (head and tail).
pub const SUMMARY_TOOL_RESULT_CHARS: usize = 2_000;
/// What one tool call's arguments may show the summariser.
pub const SUMMARY_TOOL_ARGS_CHARS: usize = 600;
/// Estimated size of an image block, in characters (about 1,600 tokens).
const IMAGE_CHARS: usize = 6_400;

/// The token budget of one model, from the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The model's context window.
    pub window: u64,
    /// Tokens kept free below the window (never more than half of it).
    pub reserve: u64,
    /// The memory flush runs this many tokens before the threshold.
    pub soft: u64,
    /// Whether the memory-flush turn runs at all.
    pub flush_enabled: bool,
}

impl Budget {
    /// The budget of `provider/model`: the model catalog's `contextWindow`,
    /// else `agents.defaults.contextWindow`, else [`DEFAULT_CONTEXT_WINDOW`];
    /// the reserve is `compaction.reserveTokens` raised to
    /// `compaction.reserveTokensFloor` (default 20,000).
    pub fn resolve(config: &RawConfig, provider: &str, model: &str) -> Self {
        let defaults = config.agents.as_ref().and_then(|a| a.defaults.as_ref());
        let catalog = config
            .models
            .as_ref()
            .and_then(|m| m.providers.as_ref())
            .and_then(|p| p.get(provider))
            .and_then(|p| p.models.as_ref())
            .and_then(|models| models.iter().find(|m| m.id == model))
            .and_then(|m| m.context_window);
        let window = catalog
            .or_else(|| defaults.and_then(|d| d.context_window))
            .filter(|w| *w > 0)
            .unwrap_or(DEFAULT_CONTEXT_WINDOW);
        let compaction = defaults.and_then(|d| d.compaction.as_ref());
        let floor = compaction
            .and_then(|c| c.reserve_tokens_floor)
            .unwrap_or(DEFAULT_RESERVE_FLOOR);
        let reserve = compaction
            .and_then(|c| c.reserve_tokens)
            .unwrap_or(floor)
            .max(floor);
        let flush = compaction.and_then(|c| c.memory_flush.as_ref());
        Self {
            window,
            reserve: reserve.min(window / 2),
            soft: flush
                .and_then(|f| f.soft_threshold_tokens)
                .unwrap_or(DEFAULT_SOFT_THRESHOLD),
            flush_enabled: flush.and_then(|f| f.enabled).unwrap_or(true),
        }
    }

    /// Compaction starts above this many tokens: the window minus the reserve.
    pub fn threshold(&self) -> u64 {
        self.window - self.reserve
    }

    /// The memory flush runs above this many tokens.
    pub fn flush_at(&self) -> u64 {
        self.threshold().saturating_sub(self.soft)
    }
}

/// Tokens for `chars` characters.
pub fn tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(CHARS_PER_TOKEN)
}

/// Characters a message contributes to a request.
pub fn message_chars(message: &Message) -> usize {
    match message {
        Message::User(user) => match &user.content {
            UserContent::Text(text) => text.chars().count(),
            UserContent::Blocks(blocks) => blocks.iter().map(block_chars).sum(),
        },
        Message::Assistant(a) => a.content.iter().map(block_chars).sum(),
        Message::ToolResult(r) => {
            r.tool_name.len() + r.content.iter().map(block_chars).sum::<usize>()
        }
        Message::Other(map) => json_chars(map),
    }
}

fn block_chars(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(t) => t.text.chars().count(),
        ContentBlock::Thinking(t) => t.thinking.chars().count(),
        ContentBlock::ToolCall(call) => {
            call.id.len() + call.name.len() + json_chars(&call.arguments)
        }
        ContentBlock::Image(_) => IMAGE_CHARS,
        ContentBlock::Other(map) => json_chars(map),
    }
}

/// The characters of `value` as compact JSON, counted as it is written: nothing is kept, so
/// counting a history on every model call allocates nothing for its tool arguments.
fn json_chars(value: &impl serde::Serialize) -> usize {
    /// Counts the characters of the UTF-8 written to it (every byte that does not continue a
    /// character).
    struct Chars(usize);
    impl std::io::Write for Chars {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut chars = Chars(0);
    // Writing a `Value` or a map into memory cannot fail.
    let _ = serde_json::to_writer(&mut chars, value);
    chars.0
}

/// The estimated size of one request, by part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    /// System prompt characters.
    pub system_chars: usize,
    /// Tool names, descriptions and schemas.
    pub tool_chars: usize,
    /// Messages.
    pub message_chars: usize,
}

impl Estimate {
    /// The estimate of a request with this system prompt, tools and messages.
    pub fn of<M: Borrow<Message>>(system_chars: usize, tool_chars: usize, messages: &[M]) -> Self {
        Self {
            system_chars,
            tool_chars,
            message_chars: messages.iter().map(|m| message_chars(m.borrow())).sum(),
        }
    }

    /// What stays whatever is compacted: system prompt and tools.
    pub fn fixed_tokens(&self) -> u64 {
        tokens(self.system_chars + self.tool_chars)
    }

    /// The whole estimate.
    pub fn tokens(&self) -> u64 {
        tokens(self.system_chars + self.tool_chars + self.message_chars)
    }
}

/// How many tokens of the newest messages a compaction keeps whole: half of
/// what the threshold leaves after the fixed parts and the summary, so the
/// compacted session has room to grow again.
pub fn keep_budget(budget: &Budget, estimate: &Estimate) -> u64 {
    budget
        .threshold()
        .saturating_sub(estimate.fixed_tokens() + SUMMARY_ALLOWANCE_TOKENS)
        / 2
}

/// Where to cut `messages` so that at most `keep_tokens` of the newest stay
/// whole: the index of the first kept message, or `None` when nothing before
/// it could be summarised.
///
/// Cuts fall only where no tool call is separated from its results: before
/// a user message (a turn boundary, preferred, so the newest turns stay
/// whole) or, when even the newest turn is too big, before an assistant
/// message inside it. Indexes below `min_cut` are never cut at (1 normally;
/// 2 when the first message is an earlier summary, which alone is not worth
/// re-summarising). When no boundary keeps the tail under the budget, the
/// newest boundary is used: the summary takes all it can and the caller
/// checks what is left.
pub fn choose_cut(messages: &[Message], keep_tokens: u64, min_cut: usize) -> Option<usize> {
    let min_cut = min_cut.max(1);
    if messages.len() <= min_cut {
        return None;
    }
    let mut suffix = vec![0_usize; messages.len() + 1];
    for i in (0..messages.len()).rev() {
        suffix[i] = suffix[i + 1] + message_chars(&messages[i]);
    }
    let fits = |i: usize| tokens(suffix[i]) <= keep_tokens;
    let turn = |i: usize| matches!(messages[i], Message::User(_));
    let pair = |i: usize| matches!(messages[i], Message::User(_) | Message::Assistant(_));
    let range = || min_cut..messages.len();
    range()
        .find(|&i| turn(i) && fits(i))
        .or_else(|| range().find(|&i| pair(i) && fits(i)))
        .or_else(|| range().rev().find(|&i| pair(i)))
}

/// Keeps the head and tail of `text` within `max_chars`, with a marker
/// saying how much was left out.
pub fn shorten_middle(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head = max_chars * 3 / 4;
    let tail = max_chars - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(total - tail).collect();
    format!(
        "{start}\n[… {} of {total} characters left out …]\n{end}",
        total - head - tail
    )
}

/// One message as the summariser reads it: a role line, then the text.
/// Thinking is left out; tool arguments and results are shortened.
pub fn render_for_summary(message: &Message) -> String {
    match message {
        Message::User(user) => {
            let text = match &user.content {
                UserContent::Text(text) => text.clone(),
                UserContent::Blocks(blocks) => blocks_text(blocks),
            };
            format!("[user]\n{text}")
        }
        Message::Assistant(a) => {
            let mut out = String::from("[assistant]");
            for block in &a.content {
                match block {
                    ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                        out.push('\n');
                        out.push_str(&t.text);
                    }
                    ContentBlock::ToolCall(call) => {
                        out.push_str(&format!(
                            "\n(calls tool {} [{}] with {})",
                            call.name,
                            call.id,
                            shorten_middle(&call.arguments.to_string(), SUMMARY_TOOL_ARGS_CHARS)
                        ));
                    }
                    _ => {}
                }
            }
            out
        }
        Message::ToolResult(r) => format!(
            "[tool result of {} [{}]{}]\n{}",
            r.tool_name,
            r.tool_call_id,
            if r.is_error { ", an error" } else { "" },
            shorten_middle(&blocks_text(&r.content), SUMMARY_TOOL_RESULT_CHARS)
        ),
        Message::Other(map) => format!("[other]\n{}", serde_json::Value::Object(map.clone())),
    }
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(_) => "(an image)".to_owned(),
            _ => String::new(),
        })
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Splits the rendered messages into chunks of about `max_chars` each,
/// breaking only before a user or assistant message, so a tool call stays
/// with its results (a chunk may pass the limit by those results, which are
/// short already). A single message longer than the limit is shortened in
/// the middle.
pub fn summary_chunks(messages: &[Message], max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1_000);
    let mut chunks = Vec::new();
    let mut current = String::new();
    let mut current_chars = 0;
    for message in messages {
        let mut part = render_for_summary(message);
        let mut chars = part.chars().count();
        if chars > max_chars {
            part = shorten_middle(&part, max_chars - 100);
            chars = part.chars().count();
        }
        let breakable = !matches!(message, Message::ToolResult(_));
        if current_chars > 0 && current_chars + chars + 2 > max_chars && breakable {
            chunks.push(std::mem::take(&mut current));
            current_chars = 0;
        }
        if current_chars > 0 {
            current.push_str("\n\n");
            current_chars += 2;
        }
        current.push_str(&part);
        current_chars += chars;
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// One part of a request, for the "still too big" report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// What it is.
    pub name: String,
    /// Its size.
    pub chars: usize,
}

/// The largest parts of a request, biggest first: system prompt sections,
/// the tool schemas, and the messages left after compaction.
pub fn largest_parts<M: Borrow<Message>>(
    sections: &[(String, usize)],
    tool_chars: usize,
    messages: &[M],
    count: usize,
) -> Vec<Part> {
    let mut parts: Vec<Part> = sections
        .iter()
        .map(|(name, chars)| Part {
            name: format!("system prompt section {name:?}"),
            chars: *chars,
        })
        .collect();
    parts.push(Part {
        name: "tool schemas".to_owned(),
        chars: tool_chars,
    });
    let total = messages.len();
    for (i, message) in messages.iter().enumerate() {
        let message = message.borrow();
        let what = match message {
            Message::User(_) => "user message".to_owned(),
            Message::Assistant(_) => "assistant message".to_owned(),
            Message::ToolResult(r) => {
                format!("result of tool {} [{}]", r.tool_name, r.tool_call_id)
            }
            Message::Other(_) => "message".to_owned(),
        };
        parts.push(Part {
            name: format!("{what} ({} of {total} kept)", i + 1),
            chars: message_chars(message),
        });
    }
    parts.sort_by(|a, b| b.chars.cmp(&a.chars).then_with(|| a.name.cmp(&b.name)));
    parts.truncate(count);
    parts
}

/// The error text for a context that does not fit even after compaction.
pub fn too_big_message(estimate: &Estimate, budget: &Budget, parts: &[Part], why: &str) -> String {
    let listed = parts
        .iter()
        .map(|p| format!("{} {} chars (~{} tokens)", p.name, p.chars, tokens(p.chars)))
        .collect::<Vec<_>>()
        .join("; ");
    format!(
        "the context is too big for the model: about {} tokens (system prompt {} chars, tool schemas {} chars, \
         messages {} chars) against a context window of {} tokens; {why}. Largest parts: {listed}. \
         Shorten the workspace files or tool set, raise contextWindow, or start a new session",
        estimate.tokens(),
        estimate.system_chars,
        estimate.tool_chars,
        estimate.message_chars,
        budget.window
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_transcript::{
        AssistantMessage, StopReason, ToolCall, ToolResultMessage, UserMessage,
    };

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: 0,
        })
    }

    fn say(text: &str) -> Message {
        assistant(vec![ContentBlock::text(text)])
    }

    fn call(id: &str) -> Message {
        assistant(vec![ContentBlock::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: serde_json::json!({ "path": "a.txt" }),
        })])
    }

    fn assistant(content: Vec<ContentBlock>) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            provider: "p".into(),
            model: "m".into(),
            api: None,
            usage: None,
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: 0,
        })
    }

    fn result(id: &str, text: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text(text)],
            details: None,
            is_error: false,
            timestamp: 0,
        })
    }

    fn config(value: serde_json::Value) -> RawConfig {
        serde_json::from_value(value).expect("config")
    }

    #[test]
    fn the_budget_follows_the_catalog_then_the_defaults() {
        let c = config(serde_json::json!({
            "agents": { "defaults": { "contextWindow": 50000, "compaction": {
                "reserveTokens": 8000, "reserveTokensFloor": 1000,
                "memoryFlush": { "softThresholdTokens": 500 } } } },
            "models": { "providers": { "fake": { "baseUrl": "http://x", "api": "openai-responses",
                "models": [{ "id": "m", "contextWindow": 30000 }] } } }
        }));
        let b = Budget::resolve(&c, "fake", "m");
        assert_eq!(
            (b.window, b.reserve, b.threshold(), b.flush_at()),
            (30_000, 8_000, 22_000, 21_500)
        );
        assert!(b.flush_enabled);
        // Another model of the provider falls back to agents.defaults.contextWindow.
        assert_eq!(Budget::resolve(&c, "fake", "other").window, 50_000);
        // Nothing configured: 200k window, the 20k floor, flush on.
        let b = Budget::resolve(&RawConfig::default(), "x", "y");
        assert_eq!((b.window, b.reserve, b.soft), (200_000, 20_000, 4_000));
        // The floor raises a smaller reserve; the reserve never takes more than half the window.
        let c = config(serde_json::json!({
            "agents": { "defaults": { "contextWindow": 30000, "compaction": { "reserveTokens": 100 } } }
        }));
        assert_eq!(Budget::resolve(&c, "a", "b").reserve, 15_000);
        let c = config(serde_json::json!({
            "agents": { "defaults": { "compaction": { "memoryFlush": { "enabled": false } } } }
        }));
        assert!(!Budget::resolve(&c, "a", "b").flush_enabled);
    }

    /// Counting as it is written gives what counting the written text gives, multi-byte
    /// characters and escapes included.
    #[test]
    fn json_characters_are_counted_without_the_text() {
        let values = [
            serde_json::json!({}),
            serde_json::json!({ "path": "AGENTS.md", "limit": 20 }),
            serde_json::json!({ "text": "héllo → wörld ✓ 🎉", "quote": "a\"b\\c\n" }),
            serde_json::json!(["ж", 1.5, null, true, { "nested": ["ß", "\u{1}"] }]),
        ];
        for value in &values {
            assert_eq!(
                json_chars(value),
                value.to_string().chars().count(),
                "{value}"
            );
        }
    }

    #[test]
    fn estimates_count_every_part() {
        let messages = [user("abcd"), call("c1"), result("c1", "12345678")];
        let e = Estimate::of(40, 8, &messages);
        assert_eq!(e.message_chars, 4 + (2 + 4 + 16) + (4 + 8));
        assert_eq!(e.tokens(), tokens(40 + 8 + e.message_chars));
        assert_eq!(e.fixed_tokens(), 12);
        assert_eq!(tokens(0), 0);
        assert_eq!(tokens(5), 2);
    }

    #[test]
    fn cuts_keep_the_newest_turns_whole() {
        let big = "x".repeat(400);
        let messages = vec![
            user(&big),         // 0
            say(&big),          // 1
            user(&big),         // 2
            call("c1"),         // 3
            result("c1", &big), // 4
            say("done"),        // 5
            user("short"),      // 6
            say("ok"),          // 7
        ];
        // Room for the last turn only: cut before message 6.
        assert_eq!(choose_cut(&messages, 10, 1), Some(6));
        // Room for the last two turns: cut before message 2, never inside a pair.
        assert_eq!(choose_cut(&messages, 250, 1), Some(2));
        // Everything fits: the earliest boundary still summarises the first message.
        assert_eq!(choose_cut(&messages, 10_000, 1), Some(2));
        // Nothing compactable in a single message or below min_cut.
        assert_eq!(choose_cut(&messages[..1], 0, 1), None);
        assert_eq!(choose_cut(&messages[..2], 0, 2), None);
    }

    #[test]
    fn an_oversized_newest_turn_is_cut_between_pairs_never_inside_one() {
        let big = "y".repeat(4_000);
        let messages = vec![
            user("old"),          // 0
            user("do the thing"), // 1: the newest turn starts here
            call("a"),            // 2
            result("a", &big),    // 3
            call("b"),            // 4
            result("b", "small"), // 5
        ];
        // The newest turn is ~1,000 tokens; with 100 to keep, cut before call b.
        assert_eq!(choose_cut(&messages, 100, 1), Some(4));
        // With nothing to keep, the newest boundary: still before call b.
        assert_eq!(choose_cut(&messages, 0, 1), Some(4));
        for keep in [0, 5, 100, 1_000, 5_000] {
            let cut = choose_cut(&messages, keep, 1).expect("cut");
            assert!(
                !matches!(messages[cut], Message::ToolResult(_)),
                "keep {keep} cut {cut}"
            );
        }
    }

    #[test]
    fn the_summariser_reads_shortened_tool_output() {
        let long = format!("{}{}", "h".repeat(5_000), "TAIL");
        let text = render_for_summary(&result("c9", &long));
        assert!(text.starts_with("[tool result of read [c9]]\n"));
        assert!(text.contains("characters left out"));
        assert!(text.ends_with("TAIL"));
        assert!(text.chars().count() < SUMMARY_TOOL_RESULT_CHARS + 200);
        let called = render_for_summary(&call("c9"));
        assert!(called.contains("calls tool read [c9]"), "{called}");
    }

    #[test]
    fn chunks_respect_the_limit_and_keep_results_with_their_calls() {
        let messages = vec![
            user(&"a".repeat(900)),
            call("c1"),
            result("c1", &"r".repeat(900)),
            user(&"b".repeat(900)),
            user(&"z".repeat(50_000)),
        ];
        let chunks = summary_chunks(&messages, 2_500);
        assert!(
            chunks.iter().all(|c| c.chars().count() <= 2_500),
            "{:?}",
            chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
        );
        // The call and its result are in the same chunk.
        let with_call = chunks
            .iter()
            .find(|c| c.contains("calls tool read [c1]"))
            .unwrap();
        assert!(with_call.contains("[tool result of read [c1]]"));
        // The huge message is shortened, not dropped.
        assert!(chunks.last().unwrap().contains("characters left out"));
    }

    #[test]
    fn the_too_big_report_names_the_largest_parts() {
        let sections = vec![
            ("Project Context".to_owned(), 90_000),
            ("Tooling".to_owned(), 3_000),
        ];
        let kept = [user("hello"), result("c1", &"q".repeat(20_000))];
        let parts = largest_parts(&sections, 12_000, &kept, 3);
        let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "system prompt section \"Project Context\"",
                "result of tool read [c1] (2 of 2 kept)",
                "tool schemas"
            ]
        );
        let e = Estimate::of(93_000, 12_000, &kept);
        let b = Budget {
            window: 8_000,
            reserve: 2_000,
            soft: 0,
            flush_enabled: false,
        };
        let text = too_big_message(&e, &b, &parts, "nothing older is left to summarise");
        assert!(text.contains("context window of 8000 tokens"), "{text}");
        assert!(text.contains("\"Project Context\" 90000 chars"), "{text}");
        assert!(
            text.contains("nothing older is left to summarise"),
            "{text}"
        );
    }
}

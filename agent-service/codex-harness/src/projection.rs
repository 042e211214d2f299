//! A compact text rendering of our transcript, placed in the turn input of
//! a new Codex thread when the session's stored thread cannot be resumed
//! (lesson L13: the thread is a cache, our transcript is the truth).
//!
//! The newest messages are kept within a character budget, each shortened
//! on its own; older ones are counted, not shown. The output is a pure
//! function of the messages and the budget.

use openclaw_transcript::{ContentBlock, Message, UserContent};

/// Characters of projection placed in the turn input by default.
pub const DEFAULT_PROJECTION_CHARS: usize = 12_000;
/// Characters one message may take.
const MESSAGE_CHARS: usize = 1_500;
/// How the end marker of a fenced untrusted text begins (see `openclaw_tools::Fence`).
const FENCE_END: &str = "<<<END_UNTRUSTED_DATA ";

/// The projection of `history` (oldest first), or `None` when there is
/// nothing to project.
pub fn project(history: &[Message], budget: usize) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    let mut omitted = 0;
    for (shown, message) in history.iter().rev().enumerate() {
        let rendered = render(message);
        if rendered.is_empty() {
            continue;
        }
        let size = rendered.chars().count() + 1;
        if used + size > budget {
            // No gaps: once one message does not fit, everything older is left out.
            omitted = history.len() - shown;
            break;
        }
        used += size;
        lines.push(rendered);
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    let mut out = vec![
        "[OpenClaw: this session's earlier Codex thread could not be resumed, so this is a new thread. The conversation so far, oldest first, is shown below as a compact transcript; tool output is shortened.]".to_owned(),
    ];
    if omitted > 0 {
        out.push(format!("[{omitted} earlier messages are not shown.]"));
    }
    out.extend(lines);
    out.push("[End of the earlier conversation. The new message follows.]".to_owned());
    Some(out.join("\n"))
}

/// The turn input text with the projection in front.
pub(crate) fn with_projection(projection: &str, text: &str) -> String {
    format!("{projection}\n\n{text}")
}

fn render(message: &Message) -> String {
    match message {
        Message::User(user) => {
            let text = match &user.content {
                UserContent::Text(text) => text.clone(),
                UserContent::Blocks(blocks) => blocks_text(blocks),
            };
            labelled("User", &text)
        }
        Message::Assistant(assistant) => {
            let mut parts = Vec::new();
            let text = blocks_text(&assistant.content);
            if !text.is_empty() {
                parts.push(labelled("Assistant", &text));
            }
            for block in &assistant.content {
                if let ContentBlock::ToolCall(call) = block {
                    parts.push(labelled(
                        &format!("Tool call {} ({})", call.name, call.id),
                        &call.arguments.to_string(),
                    ));
                }
            }
            parts.join("\n")
        }
        Message::ToolResult(result) => {
            let label = if result.is_error {
                format!(
                    "Tool result {} ({}, error)",
                    result.tool_name, result.tool_call_id
                )
            } else {
                format!("Tool result {} ({})", result.tool_name, result.tool_call_id)
            };
            labelled(&label, &blocks_text(&result.content))
        }
        Message::Other(_) => String::new(),
    }
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            ContentBlock::Image(_) => Some("[image]"),
            ContentBlock::Thinking(_) | ContentBlock::ToolCall(_) | ContentBlock::Other(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn labelled(label: &str, text: &str) -> String {
    let text = text.trim();
    let count = text.chars().count();
    let body = if count > MESSAGE_CHARS {
        let head: String = text.chars().take(MESSAGE_CHARS).collect();
        // A fenced text keeps its end marker: what follows it is not the fenced data.
        let end = text
            .rsplit_once('\n')
            .map(|(_, last)| last)
            .filter(|last| last.starts_with(FENCE_END) && !head.ends_with(last));
        match end {
            Some(end) => format!("{head}… [{} more characters]\n{end}", count - MESSAGE_CHARS),
            None => format!("{head}… [{} more characters]", count - MESSAGE_CHARS),
        }
    } else {
        text.to_owned()
    };
    format!("{label}: {body}")
}

#[cfg(test)]
mod tests {
    use openclaw_transcript::{
        AssistantMessage, StopReason, ToolCall, ToolResultMessage, UserMessage,
    };
    use serde_json::json;

    use super::*;

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Text(text.to_owned()),
            timestamp: 0,
        })
    }

    fn assistant(blocks: Vec<ContentBlock>) -> Message {
        Message::Assistant(AssistantMessage {
            content: blocks,
            provider: "codex".to_owned(),
            model: "m".to_owned(),
            api: None,
            usage: None,
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: 0,
        })
    }

    #[test]
    fn a_conversation_renders_oldest_first_with_tools() {
        let history = vec![
            user("remember PLUM"),
            assistant(vec![
                ContentBlock::text("Looking it up."),
                ContentBlock::ToolCall(ToolCall {
                    id: "c1".to_owned(),
                    name: "lookup".to_owned(),
                    arguments: json!({"q": "plum"}),
                }),
            ]),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c1".to_owned(),
                tool_name: "lookup".to_owned(),
                content: vec![ContentBlock::text("a fruit")],
                is_error: false,
                details: None,
                timestamp: 0,
            }),
            assistant(vec![ContentBlock::text("Noted: PLUM.")]),
        ];
        let text = project(&history, DEFAULT_PROJECTION_CHARS).expect("projection");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "User: remember PLUM",
                "Assistant: Looking it up.",
                "Tool call lookup (c1): {\"q\":\"plum\"}",
                "Tool result lookup (c1): a fruit",
                "Assistant: Noted: PLUM.",
                "[End of the earlier conversation. The new message follows.]",
            ]
        );
        assert_eq!(project(&[], 1000), None);
    }

    #[test]
    fn the_newest_messages_win_the_budget() {
        let history: Vec<Message> = (0..50).map(|i| user(&format!("message {i}"))).collect();
        let text = project(&history, 200).expect("projection");
        assert!(text.contains("message 49"), "{text}");
        assert!(!text.contains("message 0\n"), "{text}");
        assert!(text.contains("earlier messages are not shown"), "{text}");
        let long = vec![user(&"x".repeat(5_000))];
        let text = project(&long, DEFAULT_PROJECTION_CHARS).expect("projection");
        assert!(text.contains("[3500 more characters]"), "{text}");
        let fenced = format!(
            "<<<UNTRUSTED_DATA id=\"ab\" source=\"tool:exec\">>>\n{}\n<<<END_UNTRUSTED_DATA id=\"ab\">>>",
            "y".repeat(5_000)
        );
        let text = project(&[user(&fenced)], DEFAULT_PROJECTION_CHARS).expect("projection");
        assert!(
            text.contains("more characters]\n<<<END_UNTRUSTED_DATA id=\"ab\">>>\n"),
            "a cut fenced text keeps its end marker: {text}"
        );
    }
}

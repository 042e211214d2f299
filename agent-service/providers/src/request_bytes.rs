//! The exact bytes of the request body each wire format sends, for a corpus of requests that
//! exercises every rule of the three formats: the system split, merged user messages, images,
//! tool calls with JSON and with raw arguments, tool results (errors and images included),
//! reasoning replayed from the same API and dropped from another, cache-control markers, the
//! output-limit and reasoning fields, and strings that need escaping.
//!
//! The snapshots pin bytes, not JSON values: key order, escaping and number formatting are what
//! a provider's prompt cache and its request signature see. A change to any of them shows here.

use std::fmt::Write as _;

use openclaw_transcript::{
    AssistantMessage, ContentBlock, ImageContent, Message, StopReason, ThinkingContent, ToolCall,
    ToolResultMessage, UserContent, UserMessage,
};
use serde_json::{Map, Value, json};

use crate::anthropic::AnthropicWire;
use crate::chat_completions::ChatWire;
use crate::http_provider::Wire;
use crate::openai_responses::ResponsesWire;
use crate::request::{ModelRequest, SystemPrompt, ToolSpec};
use crate::timeouts::HttpSettings;
use crate::transport::{Endpoint, HttpClient};

/// Text with every character class JSON escapes or keeps: quotes, backslashes, control
/// characters, line and paragraph separators, non-ASCII and astral characters, and markup.
const AWKWARD: &str =
    "q\"uote\\ back\nline\ttab\r\u{1}\u{1f} \u{7f} é € 😀 \u{2028}\u{2029} </script> &<>'";

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.to_owned()),
        timestamp: 1,
    })
}

fn user_blocks(blocks: Vec<ContentBlock>) -> Message {
    Message::User(UserMessage {
        content: UserContent::Blocks(blocks),
        timestamp: 1,
    })
}

fn image(data: &str) -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: data.to_owned(),
        mime_type: "image/png".to_owned(),
    })
}

fn thinking(text: &str, signature: Option<&str>, redacted: bool) -> ContentBlock {
    ContentBlock::Thinking(ThinkingContent {
        thinking: text.to_owned(),
        thinking_signature: signature.map(str::to_owned),
        redacted,
    })
}

fn call(id: &str, name: &str, arguments: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments,
    })
}

fn assistant(api: Option<&str>, content: Vec<ContentBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        provider: "p".to_owned(),
        model: "m".to_owned(),
        api: api.map(str::to_owned),
        usage: None,
        stop_reason: StopReason::ToolUse,
        error_message: None,
        timestamp: 1,
    })
}

fn result(id: &str, content: Vec<ContentBlock>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.to_owned(),
        tool_name: "read".to_owned(),
        content,
        is_error,
        details: None,
        timestamp: 1,
    })
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read".into(),
            description: "Read a file.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "from": {"type": "integer", "minimum": 1}},
                "required": ["path"],
                "additionalProperties": false,
            })
            .into(),
        },
        ToolSpec {
            name: "zeta".into(),
            description: AWKWARD.into(),
            // Keys out of alphabetical order: the schema's own order is kept.
            parameters: json!({"z": 1.5, "a": [true, null, -3, 1e100], "m": {"é": AWKWARD}})
                .into(),
        },
    ]
}

/// A reasoning item as the Responses API returns it, kept in a thinking block's signature.
fn reasoning_item() -> String {
    json!({
        "type": "reasoning", "id": "rs_1", "encrypted_content": "enc==",
        "summary": [{"type": "summary_text", "text": "plan"}],
    })
    .to_string()
}

/// A conversation touching every message rule.
fn history() -> Vec<Message> {
    let reasoning = reasoning_item();
    vec![
        user(AWKWARD),
        assistant(
            Some("anthropic-messages"),
            vec![
                thinking("weighing", Some("sig-a"), false),
                thinking("[Reasoning redacted]", Some("redacted-data"), true),
                thinking("no signature", None, false),
                thinking("empty signature", Some(""), false),
                ContentBlock::text("Let me look."),
                ContentBlock::text(""),
                ContentBlock::text(" Part two."),
                call("call_1|fc.2", "read", json!({"path": "a.txt", "from": 2})),
            ],
        ),
        result(
            "call_1|fc.2",
            vec![ContentBlock::text("line 1"), ContentBlock::text("line 2")],
            false,
        ),
        assistant(
            Some("openai-responses"),
            vec![
                thinking("plan", Some(&reasoning), false),
                thinking("not json", Some("{oops"), false),
                thinking(
                    "not reasoning",
                    Some(r#"{"type":"message","encrypted_content":"x"}"#),
                    false,
                ),
                call("fc_2", "read", Value::String("{\"path\": \"b".to_owned())),
                call("fc_3", "zeta", json!("not an object")),
                call("fc_4", "zeta", json!([1, 2])),
            ],
        ),
        result("fc_2", vec![ContentBlock::text("bad arguments")], true),
        result(
            "fc_3",
            vec![
                ContentBlock::text("shot:"),
                image("AAAA"),
                ContentBlock::text(""),
            ],
            false,
        ),
        result("fc_4", vec![], false),
        // Users in a row: text, text, then an image, then text-only blocks.
        user("first"),
        user("second"),
        user_blocks(vec![ContentBlock::text("look"), image("BBBB")]),
        user_blocks(vec![
            ContentBlock::text("a"),
            ContentBlock::text(""),
            ContentBlock::text("b"),
        ]),
        // Nothing to send: no blocks, no text block, an empty assistant, an unknown role.
        user_blocks(vec![]),
        user_blocks(vec![ContentBlock::Other(Map::new())]),
        assistant(Some("anthropic-messages"), vec![ContentBlock::text("")]),
        Message::Other(Map::from_iter([("role".to_owned(), json!("custom"))])),
        assistant(None, vec![ContentBlock::text("Done.")]),
        user(""),
        user_blocks(vec![image("CCCC"), ContentBlock::text(AWKWARD)]),
    ]
}

/// Named requests: the system split, tools or none, limits and efforts.
fn corpus() -> Vec<(&'static str, ModelRequest)> {
    let base = ModelRequest {
        model: "model-1".into(),
        system: SystemPrompt {
            stable: format!("STABLE {AWKWARD}").into(),
            dynamic: "DYNAMIC".into(),
        },
        messages: history().into(),
        tools: tools().into(),
        max_output_tokens: None,
        reasoning_effort: None,
    };
    let with = |change: &dyn Fn(&mut ModelRequest)| {
        let mut request = base.clone();
        change(&mut request);
        request
    };
    vec![
        ("full", base.clone()),
        (
            "stable only, limit, high effort",
            with(&|r| {
                r.system.dynamic = "".into();
                r.max_output_tokens = Some(6000);
                r.reasoning_effort = Some("high".into());
            }),
        ),
        (
            "dynamic only, no tools, minimal effort",
            with(&|r| {
                r.system.stable = "".into();
                r.tools = Vec::new().into();
                r.reasoning_effort = Some("minimal".into());
            }),
        ),
        (
            "no system, small limit, off",
            with(&|r| {
                r.system = SystemPrompt::default();
                r.max_output_tokens = Some(2000);
                r.reasoning_effort = Some("off".into());
            }),
        ),
        (
            "empty effort, ends with assistant",
            with(&|r| {
                r.reasoning_effort = Some(String::new());
                std::sync::Arc::make_mut(&mut r.messages).truncate(2);
            }),
        ),
        (
            "none effort, ends with a tool result",
            with(&|r| {
                r.reasoning_effort = Some("none".into());
                std::sync::Arc::make_mut(&mut r.messages).truncate(3);
            }),
        ),
        (
            "nothing at all",
            ModelRequest {
                model: String::new(),
                ..ModelRequest::default()
            },
        ),
    ]
}

/// Every corpus request's body as `W` sends it to `base_url`, one per line after its name.
fn bodies<W: Wire>(base_url: &str) -> String {
    let client = HttpClient::new(&HttpSettings::default()).unwrap();
    let endpoint = Endpoint::new("p", base_url, client);
    let mut out = String::new();
    for (name, request) in corpus() {
        let body = String::from_utf8(W::post(&endpoint, &request).unwrap().body).unwrap();
        writeln!(out, "{name}:\n{body}").unwrap();
    }
    out
}

#[test]
fn anthropic_bodies() {
    insta::assert_snapshot!(bodies::<AnthropicWire>("https://api.anthropic.com"));
}

#[test]
fn chat_completions_bodies() {
    insta::assert_snapshot!(bodies::<ChatWire>("http://127.0.0.1:11434/v1"));
}

#[test]
fn chat_completions_bodies_for_openai() {
    insta::assert_snapshot!(bodies::<ChatWire>("https://api.openai.com/v1"));
}

#[test]
fn responses_bodies() {
    insta::assert_snapshot!(bodies::<ResponsesWire>("https://api.openai.com/v1"));
}

/// The capacity a body starts with covers the body each format writes, for every corpus request
/// and for a long conversation of them, so encoding it never grows the buffer.
#[test]
fn bodies_fit_the_capacity_they_start_with() {
    let client = HttpClient::new(&HttpSettings::default()).unwrap();
    let endpoint = Endpoint::new("p", "https://api.openai.com/v1", client);
    let mut long = corpus()[0].1.clone();
    long.messages = (0..40).flat_map(|_| history()).collect::<Vec<_>>().into();
    for (name, request) in corpus().into_iter().chain([("long", long)]) {
        let hint = request.body_size_hint();
        for (format, len) in [
            (
                "anthropic",
                AnthropicWire::post(&endpoint, &request).unwrap().body.len(),
            ),
            (
                "chat",
                ChatWire::post(&endpoint, &request).unwrap().body.len(),
            ),
            (
                "responses",
                ResponsesWire::post(&endpoint, &request).unwrap().body.len(),
            ),
        ] {
            assert!(len <= hint, "{name} as {format}: {len} bytes, hint {hint}");
        }
    }
}

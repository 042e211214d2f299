//! The Anthropic Messages stream: `message_start` (input and cache usage), a `ping`, per content
//! block `content_block_start` / `content_block_delta`... / `content_block_stop`, then
//! `message_delta` (stop reason, output tokens) and `message_stop`; every frame with its
//! `event:` line.

use serde_json::{Value, json};

use crate::frames::{Frame, Role};
use crate::reply::{FakeTurn, split};

/// The frames for `turn`; `n` numbers the message so ids differ between requests.
pub(crate) fn frames(turn: &FakeTurn, model: &str, n: u64) -> Vec<Frame> {
    let usage = &turn.usage;
    let mut frames = vec![
        Frame::named(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input,
                    "cache_creation_input_tokens": usage.cache_write,
                    "cache_read_input_tokens": usage.cache_read,
                    "output_tokens": 1,
                },
            }}),
            Role::Open,
        ),
        Frame::named("ping", &json!({"type": "ping"}), Role::Open),
    ];
    let mut index = 0;
    let mut block = |frames: &mut Vec<Frame>, start: Value, deltas: Vec<Value>| {
        frames.push(Frame::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
            Role::Open,
        ));
        for delta in deltas {
            let role = if delta["type"] == "signature_delta" {
                Role::Close
            } else {
                Role::Delta
            };
            frames.push(Frame::named(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                role,
            ));
        }
        frames.push(Frame::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
            Role::Close,
        ));
        index += 1;
    };
    if let Some(thinking) = &turn.thinking {
        let mut deltas: Vec<Value> = split(thinking, turn.deltas)
            .into_iter()
            .map(|piece| json!({"type": "thinking_delta", "thinking": piece}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": format!("fake-signature-{n}")}));
        block(
            &mut frames,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if let Some(text) = &turn.text {
        let deltas = split(text, turn.deltas)
            .into_iter()
            .map(|piece| json!({"type": "text_delta", "text": piece}))
            .collect();
        block(&mut frames, json!({"type": "text", "text": ""}), deltas);
    }
    for call in &turn.tool_calls {
        let deltas = split(&call.arguments.to_string(), call.chunks)
            .into_iter()
            .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
            .collect();
        block(
            &mut frames,
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
            deltas,
        );
    }
    frames.push(Frame::named(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
                "usage": {"output_tokens": usage.output}}),
        Role::Terminal,
    ));
    frames.push(Frame::named(
        "message_stop",
        &json!({"type": "message_stop"}),
        Role::Close,
    ));
    frames
}

/// The non-streaming response: one `message` with every content block whole.
pub(crate) fn whole(turn: &FakeTurn, model: &str, n: u64) -> Value {
    let usage = &turn.usage;
    let mut content = Vec::new();
    if let Some(thinking) = &turn.thinking {
        content.push(json!({"type": "thinking", "thinking": thinking,
                            "signature": format!("fake-signature-{n}")}));
    }
    if let Some(text) = &turn.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in &turn.tool_calls {
        content.push(
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}),
        );
    }
    json!({
        "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop_reason(turn), "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input,
            "cache_creation_input_tokens": usage.cache_write,
            "cache_read_input_tokens": usage.cache_read,
            "output_tokens": usage.output,
        },
    })
}

fn stop_reason(turn: &FakeTurn) -> &'static str {
    match (turn.truncated, turn.tool_calls.is_empty()) {
        (true, _) => "max_tokens",
        (false, false) => "tool_use",
        (false, true) => "end_turn",
    }
}

/// Whether the request answers a tool call: its last message is a user message holding a
/// `tool_result` block.
pub(crate) fn after_tool_result(body: &Value) -> bool {
    let Some(last) = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
    else {
        return false;
    };
    last.get("role").and_then(Value::as_str) == Some("user")
        && last
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            })
}

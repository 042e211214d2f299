//! The OpenAI Chat Completions stream: `data:` lines only (no `event:`), a role chunk, content
//! and `tool_calls` fragments by `index`, a `finish_reason` chunk, a usage chunk with empty
//! `choices` (because the request asked `stream_options.include_usage`), and `data: [DONE]`.

use serde_json::{Value, json};

use crate::frames::{Frame, Role};
use crate::reply::{FakeTurn, split};

/// The frames for `turn`; `n` numbers the completion so ids differ between requests.
pub(crate) fn frames(turn: &FakeTurn, model: &str, n: u64) -> Vec<Frame> {
    let id = format!("chatcmpl-fake-{n}");
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        })
    };
    let mut frames = vec![Frame::data(
        &chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            Value::Null,
        ),
        Role::Open,
    )];
    if let Some(thinking) = &turn.thinking {
        for piece in split(thinking, turn.deltas) {
            frames.push(Frame::data(
                &chunk(json!({"reasoning_content": piece}), Value::Null),
                Role::Delta,
            ));
        }
    }
    if let Some(text) = &turn.text {
        for piece in split(text, turn.deltas) {
            frames.push(Frame::data(
                &chunk(json!({"content": piece}), Value::Null),
                Role::Delta,
            ));
        }
    }
    for (index, call) in turn.tool_calls.iter().enumerate() {
        let opening = json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                             "function": {"name": call.name, "arguments": ""}}]});
        frames.push(Frame::data(&chunk(opening, Value::Null), Role::Open));
        for piece in split(&call.arguments.to_string(), call.chunks) {
            let fragment =
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
            frames.push(Frame::data(&chunk(fragment, Value::Null), Role::Delta));
        }
    }
    let finish = match (turn.truncated, turn.tool_calls.is_empty()) {
        (true, _) => "length",
        (false, false) => "tool_calls",
        (false, true) => "stop",
    };
    frames.push(Frame::data(
        &chunk(json!({}), json!(finish)),
        Role::Terminal,
    ));
    let usage = &turn.usage;
    let prompt = usage.input + usage.cache_read;
    frames.push(Frame::data(
        &json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "system_fingerprint": "fp_fake", "choices": [],
            "usage": {
                "prompt_tokens": prompt, "completion_tokens": usage.output,
                "total_tokens": prompt + usage.output,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
            },
        }),
        Role::Close,
    ));
    frames.push(Frame::raw("[DONE]", Role::Close));
    frames
}

/// Whether the request answers a tool call: its last message has role `tool`.
pub(crate) fn after_tool_result(body: &Value) -> bool {
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|messages| messages.last())
        .and_then(|message| message.get("role"))
        .and_then(Value::as_str)
        == Some("tool")
}

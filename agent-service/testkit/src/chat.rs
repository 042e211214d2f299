//! The OpenAI Chat Completions stream: `data:` lines only (no `event:`), a role chunk, content
//! and `tool_calls` fragments by `index`, a `finish_reason` chunk, a usage chunk with empty
//! `choices` (because the request asked `stream_options.include_usage`), and `data: [DONE]`.

use serde_json::{Value, json};

use crate::frames::{Frame, Role};
use crate::reply::{CacheWriteField, FakeTurn, split};

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
    frames.push(Frame::data(
        &chunk(json!({}), json!(finish_reason(turn))),
        Role::Terminal,
    ));
    frames.push(Frame::data(
        &json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "system_fingerprint": "fp_fake", "choices": [], "usage": usage(turn),
        }),
        Role::Close,
    ));
    frames.push(Frame::raw("[DONE]", Role::Close));
    frames
}

fn finish_reason(turn: &FakeTurn) -> &'static str {
    match (turn.truncated, turn.tool_calls.is_empty()) {
        (true, _) => "length",
        (false, false) => "tool_calls",
        (false, true) => "stop",
    }
}

/// The usage object, with cache writes where [`FakeTurn::cache_write_field`] says.
fn usage(turn: &FakeTurn) -> Value {
    let usage = &turn.usage;
    let written = match turn.cache_write_field {
        CacheWriteField::Unreported => 0,
        CacheWriteField::Details | CacheWriteField::AnthropicNames => usage.cache_write,
    };
    let prompt = usage.input + usage.cache_read + written;
    let mut out = json!({
        "prompt_tokens": prompt, "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    });
    match turn.cache_write_field {
        CacheWriteField::Unreported => {}
        CacheWriteField::Details => {
            out["prompt_tokens_details"]["cache_write_tokens"] = json!(written);
        }
        CacheWriteField::AnthropicNames => {
            out["cache_creation_input_tokens"] = json!(written);
            out["cache_read_input_tokens"] = json!(usage.cache_read);
        }
    }
    out
}

/// The non-streaming response: one `chat.completion` with the whole message.
pub(crate) fn whole(turn: &FakeTurn, model: &str, n: u64) -> Value {
    let mut message = json!({"role": "assistant", "content": turn.text, "refusal": null});
    if let Some(thinking) = &turn.thinking {
        message["reasoning_content"] = json!(thinking);
    }
    if !turn.tool_calls.is_empty() {
        let calls: Vec<Value> = turn
            .tool_calls
            .iter()
            .map(|call| {
                json!({"id": call.id, "type": "function",
                       "function": {"name": call.name, "arguments": call.arguments.to_string()}})
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": format!("chatcmpl-fake-{n}"), "object": "chat.completion",
        "created": 1_700_000_000, "model": model, "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "logprobs": null,
                     "finish_reason": finish_reason(turn)}],
        "usage": usage(turn),
    })
}

/// The first pair of same-role neighbours among the user and assistant messages, which chat
/// templates that require alternating roles refuse (the message they would raise).
pub(crate) fn roles_not_alternating(body: &Value) -> Option<String> {
    let roles: Vec<&str> = body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("role").and_then(Value::as_str))
        .filter(|role| matches!(*role, "user" | "assistant"))
        .collect();
    roles
        .windows(2)
        .any(|pair| pair[0] == pair[1])
        .then(|| "Conversation roles must alternate user/assistant/user/assistant/...".to_owned())
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

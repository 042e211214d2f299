//! The OpenAI Responses API stream, event for event as OpenAI sends it (and Codex accepts it):
//! `response.created`, then per output item `response.output_item.added`, its parts and deltas,
//! `response.output_item.done`, and finally `response.completed` with usage.

use serde_json::{Value, json};

use crate::frames::{Frame, Role};
use crate::reply::{CacheWriteField, FakeTurn, split};

struct Writer {
    frames: Vec<Frame>,
    sequence: u64,
}

impl Writer {
    fn push(&mut self, kind: &str, mut data: Value, role: Role) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        self.frames.push(Frame::named(kind, &data, role));
    }

    /// An event about output item `index` (`item_id`, `output_index` plus `fields`).
    fn on_item(&mut self, kind: &str, item: (&str, usize), mut fields: Value, role: Role) {
        fields["item_id"] = json!(item.0);
        fields["output_index"] = json!(item.1);
        self.push(kind, fields, role);
    }

    /// `response.output_item.added` / `.done` carrying the whole item.
    fn item(&mut self, kind: &str, index: usize, item: &Value, role: Role) {
        self.push(kind, json!({"output_index": index, "item": item}), role);
    }
}

/// The frames for `turn`; `n` numbers the response so ids differ between requests.
pub(crate) fn frames(turn: &FakeTurn, model: &str, n: u64) -> Vec<Frame> {
    let id = format!("resp_fake_{n}");
    let mut out = Writer {
        frames: Vec::new(),
        sequence: 0,
    };
    let response = |status: &str, output: &[Value], usage: Value| {
        json!({
            "id": id, "object": "response", "created_at": 1_700_000_000, "status": status,
            "model": model, "output": output, "usage": usage,
        })
    };
    let created = json!({"response": response("in_progress", &[], Value::Null)});
    out.push("response.created", created, Role::Open);
    let mut items = Vec::new();
    if let Some(thinking) = &turn.thinking {
        let index = items.len();
        let item_id = format!("rs_fake_{n}_{index}");
        let at = (item_id.as_str(), index);
        let opened = json!({"id": item_id, "type": "reasoning", "summary": []});
        out.item("response.output_item.added", index, &opened, Role::Open);
        let part = json!({"summary_index": 0, "part": {"type": "summary_text", "text": ""}});
        out.on_item(
            "response.reasoning_summary_part.added",
            at,
            part,
            Role::Open,
        );
        for piece in split(thinking, turn.deltas) {
            let delta = json!({"summary_index": 0, "delta": piece});
            out.on_item(
                "response.reasoning_summary_text.delta",
                at,
                delta,
                Role::Delta,
            );
        }
        let done = json!({"summary_index": 0, "text": thinking});
        out.on_item(
            "response.reasoning_summary_text.done",
            at,
            done,
            Role::Close,
        );
        let item = json!({
            "id": item_id, "type": "reasoning",
            "summary": [{"type": "summary_text", "text": thinking}],
            "encrypted_content": format!("fake-encrypted-{n}"),
        });
        out.item("response.output_item.done", index, &item, Role::Close);
        items.push(item);
    }
    if let Some(text) = &turn.text {
        let index = items.len();
        let item_id = format!("msg_fake_{n}_{index}");
        let at = (item_id.as_str(), index);
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        let message = |status: &str, content: Value| {
            json!({
                "id": item_id, "type": "message", "status": status, "role": "assistant",
                "content": content,
            })
        };
        out.item(
            "response.output_item.added",
            index,
            &message("in_progress", json!([])),
            Role::Open,
        );
        let added = json!({"content_index": 0, "part": part("")});
        out.on_item("response.content_part.added", at, added, Role::Open);
        for piece in split(text, turn.deltas) {
            let delta = json!({"content_index": 0, "delta": piece, "logprobs": []});
            out.on_item("response.output_text.delta", at, delta, Role::Delta);
        }
        let done = json!({"content_index": 0, "text": text});
        out.on_item("response.output_text.done", at, done, Role::Close);
        let done = json!({"content_index": 0, "part": part(text)});
        out.on_item("response.content_part.done", at, done, Role::Close);
        let item = message("completed", json!([part(text)]));
        out.item("response.output_item.done", index, &item, Role::Close);
        items.push(item);
    }
    for call in &turn.tool_calls {
        let index = items.len();
        if call.freeform {
            let item = json!({
                "id": format!("ctc_fake_{n}_{index}"), "type": "custom_tool_call",
                "status": "completed", "call_id": call.id, "name": call.name,
                "input": call.arguments.as_str().unwrap_or_default(),
            });
            out.item("response.output_item.added", index, &item, Role::Open);
            out.item("response.output_item.done", index, &item, Role::Close);
            items.push(item);
            continue;
        }
        let item_id = format!("fc_fake_{n}_{index}");
        let at = (item_id.as_str(), index);
        let arguments = call.arguments.to_string();
        let function_call = |status: &str, arguments: &str| {
            json!({
                "id": item_id, "type": "function_call", "status": status, "arguments": arguments,
                "call_id": call.id, "name": call.name,
            })
        };
        out.item(
            "response.output_item.added",
            index,
            &function_call("in_progress", ""),
            Role::Open,
        );
        for piece in split(&arguments, call.chunks) {
            let delta = json!({"delta": piece});
            out.on_item(
                "response.function_call_arguments.delta",
                at,
                delta,
                Role::Delta,
            );
        }
        let done = json!({"arguments": arguments});
        out.on_item(
            "response.function_call_arguments.done",
            at,
            done,
            Role::Close,
        );
        let item = function_call("completed", &arguments);
        out.item("response.output_item.done", index, &item, Role::Close);
        items.push(item);
    }
    let usage = usage(turn);
    if turn.truncated {
        let mut done = response("incomplete", &items, usage);
        done["incomplete_details"] = json!({"reason": "max_output_tokens"});
        out.push(
            "response.incomplete",
            json!({"response": done}),
            Role::Terminal,
        );
    } else {
        let done = json!({"response": response("completed", &items, usage)});
        out.push("response.completed", done, Role::Terminal);
    }
    out.frames
}

/// The usage object, with cache writes where [`FakeTurn::cache_write_field`] says.
fn usage(turn: &FakeTurn) -> Value {
    let usage = &turn.usage;
    let written = match turn.cache_write_field {
        CacheWriteField::Unreported => 0,
        CacheWriteField::Details | CacheWriteField::AnthropicNames => usage.cache_write,
    };
    let input = usage.input + usage.cache_read + written;
    let mut out = json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + usage.output,
    });
    match turn.cache_write_field {
        CacheWriteField::Unreported => {}
        CacheWriteField::Details => {
            out["input_tokens_details"]["cache_write_tokens"] = json!(written);
        }
        CacheWriteField::AnthropicNames => {
            out["cache_creation_input_tokens"] = json!(written);
            out["cache_read_input_tokens"] = json!(usage.cache_read);
        }
    }
    out
}

/// The non-streaming response: the `response` object the stream's terminal event carries.
pub(crate) fn whole(turn: &FakeTurn, model: &str, n: u64) -> Value {
    frames(turn, model, n)
        .iter()
        .rev()
        .find_map(|frame| {
            let data: Value = serde_json::from_str(&frame.data).ok()?;
            data.get("response").cloned()
        })
        .unwrap_or(Value::Null)
}

/// Whether the request answers a tool call: its last input item is a `function_call_output`.
pub(crate) fn after_tool_result(body: &Value) -> bool {
    body.get("input")
        .and_then(Value::as_array)
        .and_then(|items| items.last())
        .and_then(|item| item.get("type"))
        .and_then(Value::as_str)
        == Some("function_call_output")
}

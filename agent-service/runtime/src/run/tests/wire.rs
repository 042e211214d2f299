//! What the model receives, per wire format: one fixed turn (a user message, a `read` tool
//! call and its result, then the final answer) run through the real loop against the test
//! kit's model server, and the second request's body snapshotted whole: the system split, the
//! tools in order, the messages with the tool call and its fenced result.
//!
//! Values that differ between runs are replaced before the snapshot: the temporary directory,
//! fence nonces, and long texts (the system prompt, tool descriptions and the workspace file)
//! by their first line, so the renderer's own snapshots own the prompt's words and these own
//! its shape.

use serde_json::Value;

use super::{Loop, WireFormat, final_of};

/// Longer strings are cut to their first line (at most [`KEPT_CHARS`] characters).
const LONG_TEXT: usize = 160;
const KEPT_CHARS: usize = 100;

/// Runs the fixed turn on `format` and returns the body of its second model request.
async fn second_request(format: WireFormat) -> Value {
    let l = Loop::start_on(format, "").await;
    let events = l.run_reading_notes().await;
    assert_eq!(final_of(&events).1, 2, "{events:#?}");
    let requests = l.model.requests();
    assert_eq!(requests.len(), 2, "one request per model call");
    let body = &requests[1].body;
    assert_eq!(
        tooling_listing(body),
        request_tools(body),
        "the prompt lists the tools in the order the request sends them"
    );
    let dir = l.dir.path().display().to_string();
    normalize(body.clone(), &dir)
}

/// The tool names of a request body, in the order it sends them (every format puts them
/// in `tools`, Chat Completions under `function`).
fn request_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|t| {
            t.get("name")
                .or_else(|| t["function"].get("name"))
                .and_then(Value::as_str)
                .expect("a tool name")
                .to_owned()
        })
        .collect()
}

/// The tool names of the system prompt's `## Tooling` list, in the order it lists them.
fn tooling_listing(body: &Value) -> Vec<String> {
    fn texts<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
        match value {
            Value::String(text) => out.push(text),
            Value::Array(items) => items.iter().for_each(|v| texts(v, out)),
            Value::Object(map) => map.values().for_each(|v| texts(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    texts(body, &mut all);
    let prompt = all
        .into_iter()
        .find(|t| t.contains("## Tooling"))
        .expect("the system prompt");
    prompt
        .lines()
        .skip_while(|l| *l != "Available tools:")
        .skip(1)
        .map_while(|l| l.strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap_or(l).to_owned())
        .collect()
}

fn normalize(value: Value, dir: &str) -> Value {
    match value {
        Value::String(text) => Value::String(normalize_text(&text, dir)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| normalize(v, dir)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, normalize(v, dir)))
                .collect(),
        ),
        other => other,
    }
}

fn normalize_text(text: &str, dir: &str) -> String {
    let text = without_nonces(&text.replace(dir, "[dir]"));
    let chars = text.chars().count();
    if chars <= LONG_TEXT {
        return text;
    }
    let first: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(KEPT_CHARS)
        .collect();
    format!("{first} […]")
}

/// Fence markers carry a per-message nonce: `id="…"` becomes `id="[nonce]"`.
fn without_nonces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("id=\"") {
        let (head, tail) = rest.split_at(at + "id=\"".len());
        out.push_str(head);
        match tail.find('"') {
            Some(end) => {
                out.push_str("[nonce]");
                rest = &tail[end..];
            }
            None => {
                rest = tail;
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn anthropic_messages_request() {
    insta::assert_json_snapshot!(second_request(WireFormat::AnthropicMessages).await);
}

#[tokio::test]
async fn openai_chat_completions_request() {
    insta::assert_json_snapshot!(second_request(WireFormat::ChatCompletions).await);
}

#[tokio::test]
async fn openai_responses_request() {
    insta::assert_json_snapshot!(second_request(WireFormat::OpenAiResponses).await);
}

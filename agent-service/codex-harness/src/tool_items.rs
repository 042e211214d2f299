//! How Codex's tool-like items read in our transcript: the call's name and
//! arguments, and the result's text and error flag (see `items` for the
//! naming rules).

use serde_json::{Value, json};

pub(crate) fn kind(item: &Value) -> &str {
    str_field(item, "type")
}

pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The transcript name and arguments of a tool-like item.
pub(crate) fn tool_call(item: &Value) -> Option<(String, Value)> {
    Some(match kind(item) {
        "dynamicToolCall" => {
            let tool = str_field(item, "tool");
            let name = match item.get("namespace").and_then(Value::as_str) {
                Some(ns) if !ns.is_empty() => format!("{ns}__{tool}"),
                _ => tool.to_owned(),
            };
            (name, item.get("arguments").cloned().unwrap_or(Value::Null))
        }
        "commandExecution" => (
            "codex_exec".to_owned(),
            json!({"command": str_field(item, "command"), "cwd": str_field(item, "cwd")}),
        ),
        "fileChange" => (
            "codex_apply_patch".to_owned(),
            json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)}),
        ),
        "mcpToolCall" => (
            format!(
                "mcp__{}__{}",
                str_field(item, "server"),
                str_field(item, "tool")
            ),
            item.get("arguments").cloned().unwrap_or(Value::Null),
        ),
        "webSearch" => (
            "codex_web_search".to_owned(),
            json!({"query": str_field(item, "query")}),
        ),
        // Written by us (user messages) or read as text (the others).
        "" | "userMessage" | "agentMessage" | "reasoning" => return None,
        // Every other item Codex reports (plans, image views, compactions,
        // sub-agent activity ...): the item itself, under Codex's name.
        other => (codex_name(other), without_ids(item)),
    })
}

/// `codex_<name>` in snake case with only `[A-Za-z0-9_-]`: the transcript
/// name of something Codex did itself (`imageView` → `codex_image_view`).
pub(crate) fn codex_name(name: &str) -> String {
    let mut out = String::from("codex_");
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out
}

/// The item without its `id` and `type` (which the call already names).
fn without_ids(item: &Value) -> Value {
    match item {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "id" && *k != "type")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether Codex itself did what the item reports (everything but our
/// dynamic tools).
pub(crate) fn codex_owned(item: &Value) -> bool {
    kind(item) != "dynamicToolCall"
}

/// The result text and error flag of a completed tool-like item.
pub(crate) fn tool_result(item: &Value) -> (String, bool) {
    let status = str_field(item, "status");
    match kind(item) {
        "dynamicToolCall" => {
            let text = item
                .get("contentItems")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .map(|c| match c.get("text").and_then(Value::as_str) {
                            Some(text) => text.to_owned(),
                            None => format!("[{}]", str_field(c, "type")),
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            let ok = item.get("success").and_then(Value::as_bool) == Some(true);
            (text, !ok || status != "completed")
        }
        "commandExecution" => {
            let output = str_field(item, "aggregatedOutput");
            let code = item.get("exitCode").and_then(Value::as_i64);
            match (status, code) {
                ("declined", _) => (
                    "The command was declined by the approval policy and did not run.".to_owned(),
                    true,
                ),
                (_, Some(code)) => (format!("Exit code: {code}\n{output}"), code != 0),
                (status, None) => (format!("Command {status}\n{output}"), true),
            }
        }
        "fileChange" => {
            let paths: Vec<&str> = item
                .get("changes")
                .and_then(Value::as_array)
                .map(|c| c.iter().map(|c| str_field(c, "path")).collect())
                .unwrap_or_default();
            let text = match status {
                "completed" => format!("Applied changes to: {}", paths.join(", ")),
                "declined" => {
                    "The file change was declined by the approval policy and was not applied."
                        .to_owned()
                }
                other => format!("The file change {other}: {}", paths.join(", ")),
            };
            (text, status != "completed")
        }
        "mcpToolCall" => match item.get("error").filter(|e| !e.is_null()) {
            Some(error) => (str_field(error, "message").to_owned(), true),
            None => (
                item.get("result").map(Value::to_string).unwrap_or_default(),
                status != "completed",
            ),
        },
        _ if status.is_empty() => (shorten(&without_ids(item).to_string(), 4096), false),
        _ => (
            format!("Status: {status}"),
            matches!(status, "failed" | "declined" | "interrupted"),
        ),
    }
}

/// A one-line description for the stream.
pub(crate) fn summarize(name: &str, arguments: &Value) -> String {
    let first = ["command", "path", "query", "url", "action", "task"]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(Value::as_str));
    match first {
        Some(value) => format!("{name}: {}", shorten(&value.replace('\n', " "), 120)),
        None => name.to_owned(),
    }
}

pub(crate) fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max_chars).collect();
    format!("{cut}…")
}

//! Exactly what the Chat Completions provider sends.

use agent_testkit::{FakeReply, WireFormat};
use serde_json::json;

use super::support::{KEY, fake, request, run, tool_round, user};

#[tokio::test]
async fn request_carries_one_system_message_tools_and_the_tool_round() {
    let requests = tool_round(WireFormat::ChatCompletions).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("x-extra"), Some("yes"));
    let system = json!({"role": "system", "content": "STABLE\n\nDYNAMIC"});
    let user = json!({"role": "user", "content": "hi"});
    assert_eq!(
        sent.body,
        json!({
            "model": "m1",
            "messages": [system, user],
            "tools": [{"type": "function", "function": {
                "name": "read", "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
    assert_eq!(
        requests[1].body["messages"],
        json!([
            system,
            user,
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"AGENTS.md\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "# Agents"},
        ])
    );
}

#[tokio::test]
async fn limits_and_reasoning_use_the_compatible_field_names() {
    let (fake, provider) = fake(WireFormat::ChatCompletions).await;
    fake.push(FakeReply::text("ok"));
    let mut limited = request();
    limited.max_output_tokens = Some(256);
    limited.reasoning_effort = Some("low".into());
    run(provider.as_ref(), limited).await.0.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        (&body["max_tokens"], &body["reasoning_effort"]),
        (&json!(256), &json!("low"))
    );
}

/// Two user messages in a row (a run failed before the model answered, then another message
/// came) go as one, since many chat templates refuse roles that do not alternate.
#[tokio::test]
async fn user_messages_in_a_row_go_as_one() {
    let (fake, provider) = fake(WireFormat::ChatCompletions).await;
    // A server whose template refuses two user messages in a row.
    fake.require_alternating_roles();
    fake.push(FakeReply::text("Both read."));
    let mut both = request();
    both.messages = vec![user("first"), user("second")].into();
    run(provider.as_ref(), both).await.0.unwrap();
    assert_eq!(
        fake.requests()[0].body["messages"],
        json!([
            {"role": "system", "content": "STABLE\n\nDYNAMIC"},
            {"role": "user", "content": "first\n\nsecond"},
        ])
    );
}

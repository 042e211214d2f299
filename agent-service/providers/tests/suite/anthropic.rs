//! Exactly what the Anthropic provider sends: P-24's cached stable system block first.

use agent_testkit::{FakeReply, WireFormat};
use openclaw_transcript::Message;
use serde_json::json;

use super::support::{KEY, fake, request, run, tool_result, user};

#[tokio::test]
async fn stable_prefix_is_its_own_cached_system_block_and_dynamic_follows() {
    let (fake, provider) = fake(WireFormat::AnthropicMessages).await;
    fake.push(FakeReply::text("ok"));
    run(provider.as_ref(), request()).await.0.unwrap();
    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(sent.header("x-extra"), Some("yes"));
    assert_eq!(
        sent.body,
        json!({
            "model": "m1",
            "max_tokens": 32_000,
            "system": [
                {"type": "text", "text": "STABLE", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "DYNAMIC"},
            ],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
            ],
            "tools": [{
                "name": "read", "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn tool_use_and_results_pair_up_and_thinking_is_replayed_with_its_signature() {
    let (fake, provider) = fake(WireFormat::AnthropicMessages).await;
    fake.push(
        FakeReply::tool_call("toolu_1", "read", json!({"path": "AGENTS.md"}))
            .with_tool_call("toolu_2", "read", json!({"path": "SOUL.md"}))
            .with_thinking("Two files.")
            .with_text("Reading both."),
    );
    fake.push(FakeReply::text("Done."));
    let mut first = request();
    first.reasoning_effort = Some("medium".into());
    let reply = run(provider.as_ref(), first.clone()).await.0.unwrap();
    let mut second = first;
    std::sync::Arc::make_mut(&mut second.messages).push(Message::Assistant(reply));
    std::sync::Arc::make_mut(&mut second.messages).push(tool_result("toolu_1", "read", "# Agents"));
    std::sync::Arc::make_mut(&mut second.messages).push(tool_result("toolu_2", "read", "# Soul"));
    run(provider.as_ref(), second).await.0.unwrap();

    let requests = fake.requests();
    assert_eq!(
        requests[0].body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    assert_eq!(requests[0].body["max_tokens"], json!(32_000));
    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two files.", "signature": "fake-signature-1"},
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "AGENTS.md"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "SOUL.md"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "# Agents"}]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "# Soul"}],
                 "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

#[tokio::test]
async fn empty_parts_are_left_out() {
    let (fake, provider) = fake(WireFormat::AnthropicMessages).await;
    fake.push(FakeReply::text("ok"));
    let mut bare = request();
    bare.system.dynamic = "".into();
    bare.tools = Vec::new().into();
    bare.messages = vec![user(""), user("real")].into();
    run(provider.as_ref(), bare).await.0.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "STABLE", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "real", "cache_control": {"type": "ephemeral"}}]}])
    );
    assert!(body.get("tools").is_none());
}

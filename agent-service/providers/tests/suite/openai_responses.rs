//! Exactly what the Responses provider sends.

use agent_testkit::{FakeReply, WireFormat};
use openclaw_transcript::Message;
use serde_json::json;

use super::support::{KEY, fake, request, run, tool_round};

#[tokio::test]
async fn request_carries_instructions_function_tools_and_the_tool_round() {
    let requests = tool_round(WireFormat::OpenAiResponses).await;
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("x-extra"), Some("yes"));
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]});
    assert_eq!(
        sent.body,
        json!({
            "model": "m1",
            "instructions": "STABLE\n\nDYNAMIC",
            "input": [user],
            "tools": [{
                "type": "function", "name": "read", "description": "Read a file.", "strict": false,
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "store": false,
            "stream": true,
        })
    );
    assert_eq!(
        requests[1].body["input"],
        json!([
            user,
            {"type": "message", "role": "assistant", "content": "Let me look."},
            {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"AGENTS.md\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "# Agents"},
        ])
    );
}

#[tokio::test]
async fn reasoning_settings_are_sent_and_reasoning_items_replayed() {
    let (fake, provider) = fake(WireFormat::OpenAiResponses).await;
    fake.push(FakeReply::text("Answer.").with_thinking("Plan."));
    fake.push(FakeReply::text("Again."));
    let mut first = request();
    first.reasoning_effort = Some("high".into());
    first.max_output_tokens = Some(512);
    let reply = run(provider.as_ref(), first.clone()).await.0.unwrap();
    let mut second = first;
    std::sync::Arc::make_mut(&mut second.messages).push(Message::Assistant(reply));
    std::sync::Arc::make_mut(&mut second.messages).push(super::support::user("and?"));
    run(provider.as_ref(), second).await.0.unwrap();

    let requests = fake.requests();
    assert_eq!(
        requests[0].body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(
        requests[0].body["include"],
        json!(["reasoning.encrypted_content"])
    );
    assert_eq!(requests[0].body["max_output_tokens"], json!(512));
    let input = requests[1].body["input"].as_array().unwrap().clone();
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["encrypted_content"], "fake-encrypted-1");
    assert_eq!(input[2]["content"], "Answer.");
}

#[tokio::test]
async fn a_system_prompt_without_dynamic_part_is_sent_alone() {
    let (fake, provider) = fake(WireFormat::OpenAiResponses).await;
    fake.push(FakeReply::text("ok"));
    let mut only_stable = request();
    only_stable.system.dynamic = "".into();
    only_stable.tools = Vec::new().into();
    run(provider.as_ref(), only_stable).await.0.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(body["instructions"], "STABLE");
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

/// Whether `items` validate as the official `openai` Python SDK's `ResponseInputParam` (the
/// type of a request's `input`), the SDK installed with pip first when missing. `Err` holds
/// the SDK's complaint.
fn sdk_accepts_input(items: &serde_json::Value) -> Result<(), String> {
    use std::process::Command;
    // The interpreter itself rather than a version manager's `python3` wrapper (pyenv's
    // re-indexes its wrappers after every pip install, under a lock a killed run can leave
    // behind).
    let found = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(found.status.success(), "python3 cannot name itself");
    let python = String::from_utf8_lossy(&found.stdout).trim().to_owned();
    let has_sdk = |_: ()| {
        Command::new(&python)
            .args(["-c", "import openai.types.responses"])
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !has_sdk(()) {
        let installed = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "openai"])
            .output()
            .expect("python3 runs");
        assert!(
            installed.status.success(),
            "pip install openai failed: {}",
            String::from_utf8_lossy(&installed.stderr)
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("input.json");
    std::fs::write(&file, items.to_string()).unwrap();
    let script = "import json, sys\n\
        from pydantic import TypeAdapter\n\
        from openai.types.responses import ResponseInputParam\n\
        TypeAdapter(ResponseInputParam).validate_python(json.load(open(sys.argv[1])))\n";
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(&file)
        .output()
        .expect("python3 runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[tokio::test]
async fn replayed_input_is_what_the_official_sdk_accepts() {
    let (fake, provider) = fake(WireFormat::OpenAiResponses).await;
    fake.push(
        FakeReply::tool_call("call_1", "read", json!({"path": "AGENTS.md"}))
            .with_thinking("Plan.")
            .with_text("Let me look."),
    );
    fake.push(FakeReply::text("Done."));
    let mut first = request();
    first.reasoning_effort = Some("low".into());
    let reply = run(provider.as_ref(), first.clone()).await.0.unwrap();
    let mut second = first;
    std::sync::Arc::make_mut(&mut second.messages).push(Message::Assistant(reply));
    std::sync::Arc::make_mut(&mut second.messages)
        .push(super::support::tool_result("call_1", "read", "# Agents"));
    run(provider.as_ref(), second).await.0.unwrap();
    let input = fake.requests()[1].body["input"].clone();
    let kinds: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output"
        ]
    );
    sdk_accepts_input(&input).unwrap();
    // The shape sent before: an output_text message without id or status, which no input
    // type of the SDK takes. Kept here so the check itself is known to refuse it.
    let before = json!([{"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "Let me look."}]}]);
    assert!(sdk_accepts_input(&before).is_err());
}

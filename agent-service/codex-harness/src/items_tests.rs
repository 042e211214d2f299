use serde_json::json;

use super::*;

fn started(item: Value) -> Value {
    json!({"threadId": "t", "turnId": "u", "item": item, "startedAtMs": 1000})
}

fn completed(item: Value) -> Value {
    json!({"threadId": "t", "turnId": "u", "item": item, "completedAtMs": 2000})
}

fn usage(input: u64, cached: u64, output: u64) -> Value {
    json!({"tokenUsage": {"last": {
        "inputTokens": input, "cachedInputTokens": cached, "outputTokens": output,
        "totalTokens": input + output, "cacheWriteInputTokens": 0, "reasoningOutputTokens": 0,
    }, "total": {}}})
}

fn text_of(message: &Message) -> Vec<String> {
    let blocks = match message {
        Message::Assistant(a) => &a.content,
        Message::ToolResult(r) => &r.content,
        _ => return Vec::new(),
    };
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => format!("text:{}", t.text),
            ContentBlock::Thinking(t) => format!("thinking:{}", t.thinking),
            ContentBlock::ToolCall(c) => format!("call:{}:{}:{}", c.id, c.name, c.arguments),
            _ => "other".to_owned(),
        })
        .collect()
}

#[test]
fn a_text_turn_is_one_assistant_message_with_its_usage() {
    let mut t = ItemTracker::new("codex", "m");
    t.started(&started(
        json!({"type": "userMessage", "id": "u1", "content": []}),
    ));
    t.completed(&completed(
        json!({"type": "userMessage", "id": "u1", "content": []}),
    ));
    t.started(&started(
        json!({"type": "agentMessage", "id": "msg", "text": ""}),
    ));
    let delta = json!({"itemId": "msg", "delta": "Hel"});
    assert_eq!(
        t.agent_delta(&delta),
        Some(HarnessEvent::TextDelta("Hel".to_owned()))
    );
    t.agent_delta(&json!({"itemId": "msg", "delta": "lo"}));
    t.completed(&completed(
        json!({"type": "agentMessage", "id": "msg", "text": "Hello"}),
    ));
    t.usage(&usage(100, 40, 5));
    let done = t.finish(&TurnStatus::Completed);
    assert_eq!(done.final_text, "Hello");
    assert_eq!(done.entries.len(), 1);
    let Message::Assistant(message) = &done.entries[0] else {
        panic!("assistant expected: {:?}", done.entries);
    };
    assert_eq!(text_of(&done.entries[0]), ["text:Hello"]);
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.timestamp, 2000);
    assert_eq!(message.api.as_deref(), Some(CODEX_API));
    let expected = Usage {
        input: 60,
        output: 5,
        cache_read: 40,
        cache_write: 0,
        total_tokens: 105,
        cost: None,
    };
    assert_eq!(message.usage.as_ref(), Some(&expected));
    assert_eq!(done.usage, expected);
}

#[test]
fn tool_items_become_call_and_result_pairs() {
    let mut t = ItemTracker::new("codex", "m");
    t.completed(&completed(
        json!({"type": "reasoning", "id": "r", "summary": ["Think."], "content": []}),
    ));
    t.completed(&completed(
        json!({"type": "agentMessage", "id": "a", "text": "Checking."}),
    ));
    let dynamic = json!({"type": "dynamicToolCall", "id": "call_1", "namespace": null,
        "tool": "lookup", "arguments": {"query": "plum"}, "status": "inProgress"});
    let events = t.started(&started(dynamic));
    assert_eq!(
        events,
        [HarnessEvent::ToolStarted {
            call_id: "call_1".to_owned(),
            name: "lookup".to_owned(),
            summary: "lookup: plum".to_owned(),
        }]
    );
    let exec = json!({"type": "commandExecution", "id": "call_2", "command": "touch x",
        "cwd": "/ws", "status": "inProgress"});
    t.started(&started(exec));
    assert!(t.tool_in_flight());
    t.completed(&completed(
        json!({"type": "dynamicToolCall", "id": "call_1",
        "namespace": null, "tool": "lookup", "arguments": {"query": "plum"},
        "status": "completed", "success": true, "durationMs": 3,
        "contentItems": [{"type": "inputText", "text": "a fruit"}]}),
    ));
    let events = t.completed(&completed(
        json!({"type": "commandExecution", "id": "call_2",
        "command": "touch x", "cwd": "/ws", "status": "declined", "exitCode": null,
        "aggregatedOutput": null}),
    ));
    assert!(
        matches!(&events[..], [HarnessEvent::ToolFinished { is_error: true, name, .. }] if name == "codex_exec")
    );
    assert!(!t.tool_in_flight());
    t.completed(&completed(
        json!({"type": "agentMessage", "id": "b", "text": "Done."}),
    ));
    let done = t.finish(&TurnStatus::Completed);
    let rendered: Vec<Vec<String>> = done.entries.iter().map(text_of).collect();
    assert_eq!(
        rendered,
        [
            vec![
                "thinking:Think.".to_owned(),
                "text:Checking.".to_owned(),
                "call:call_1:lookup:{\"query\":\"plum\"}".to_owned(),
                "call:call_2:codex_exec:{\"command\":\"touch x\",\"cwd\":\"/ws\"}".to_owned(),
            ],
            vec!["text:a fruit".to_owned()],
            vec![
                "text:The command was declined by the approval policy and did not run.".to_owned()
            ],
            vec!["text:Done.".to_owned()],
        ]
    );
    assert!(
        matches!(&done.entries[0], Message::Assistant(a) if a.stop_reason == StopReason::ToolUse)
    );
    assert!(
        matches!(&done.entries[2], Message::ToolResult(r) if r.is_error && r.tool_name == "codex_exec")
    );
    assert_eq!(done.final_text, "Done.");
}

#[test]
fn dangling_items_are_closed_at_the_end_of_the_turn() {
    let mut t = ItemTracker::new("codex", "m");
    let exec = json!({"type": "commandExecution", "id": "c", "command": "sleep 9",
        "cwd": "/ws", "status": "inProgress"});
    t.started(&started(exec));
    t.started(&started(
        json!({"type": "agentMessage", "id": "a", "text": ""}),
    ));
    t.agent_delta(&json!({"itemId": "a", "delta": "partial"}));
    let detail = "signal: 9 (SIGKILL)".to_owned();
    let done = t.finish(&TurnStatus::ProcessExited { detail });
    assert_eq!(done.final_text, "partial");
    assert!(matches!(
        &done.events[..],
        [HarnessEvent::ToolFinished { is_error: true, .. }]
    ));
    let rendered: Vec<Vec<String>> = done.entries.iter().map(text_of).collect();
    assert_eq!(rendered.len(), 3, "{rendered:?}");
    assert!(rendered[1][0].contains("exited before this call finished"));
    assert_eq!(rendered[2], ["text:partial"]);
    assert!(
        matches!(&done.entries[2], Message::Assistant(a) if a.stop_reason == StopReason::Aborted
            && a.error_message.as_deref().is_some_and(|m| m.contains("SIGKILL")))
    );
}

#[test]
fn a_turn_whose_process_died_before_any_output_is_still_marked() {
    let t = ItemTracker::new("codex", "m");
    let done = t.finish(&TurnStatus::ProcessExited {
        detail: "signal: 9 (SIGKILL)".to_owned(),
    });
    assert!(matches!(&done.entries[..], [Message::Assistant(a)]
        if a.stop_reason == StopReason::Aborted && a.content.is_empty()
            && a.error_message.as_deref().is_some_and(|m| m.contains("exited during this turn"))));
}

#[test]
fn a_failed_turn_ends_with_an_error_message() {
    let t = ItemTracker::new("codex", "m");
    let done = t.finish(&TurnStatus::Failed {
        message: "boom".to_owned(),
        kind: String::new(),
        http_status: None,
    });
    assert!(matches!(&done.entries[..], [Message::Assistant(a)]
        if a.stop_reason == StopReason::Error && a.error_message.as_deref() == Some("boom")));
}

fn raw(item: Value) -> Value {
    json!({"threadId": "t", "turnId": "u", "item": item})
}

#[test]
fn raw_calls_nobody_claims_are_codex_owned_and_claimed_ones_are_written_once() {
    let mut t = ItemTracker::new("codex", "m");
    t.raw_item(&raw(
        json!({"type": "function_call", "call_id": "b1", "name": "browser",
        "arguments": "{\"url\":\"https://example.com\"}"}),
    ));
    t.raw_item(&raw(
        json!({"type": "function_call", "call_id": "d1", "name": "lookup",
        "arguments": "{}"}),
    ));
    t.started(&started(
        json!({"type": "dynamicToolCall", "id": "d1", "tool": "lookup",
        "arguments": {}, "status": "inProgress"}),
    ));
    t.completed(&completed(
        json!({"type": "dynamicToolCall", "id": "d1", "tool": "lookup",
        "arguments": {}, "status": "completed", "success": true,
        "contentItems": [{"type": "inputText", "text": "found"}]}),
    ));
    // Codex's answers: the dynamic one is covered by its item.
    assert!(
        t.raw_item(&raw(
            json!({"type": "function_call_output", "call_id": "d1",
        "output": "found"})
        ))
        .is_empty()
    );
    let events = t.raw_item(&raw(
        json!({"type": "function_call_output", "call_id": "b1",
        "output": "unsupported call: browser"}),
    ));
    assert!(
        matches!(&events[..], [
        HarnessEvent::ToolStarted { name, .. },
        HarnessEvent::ToolFinished { output, is_error: false, .. },
    ] if name == "codex_browser" && output == "unsupported call: browser"),
        "{events:?}"
    );
    t.completed(&completed(
        json!({"type": "plan", "id": "p1", "text": "1. look"}),
    ));
    t.usage(&usage(10, 0, 2));
    let done = t.finish(&TurnStatus::Completed);
    assert_eq!(
        text_of(&done.entries[0]),
        [
            "call:b1:codex_browser:{\"url\":\"https://example.com\"}",
            "call:d1:lookup:{}",
            "call:p1:codex_plan:{\"text\":\"1. look\"}",
        ]
    );
    let details: Vec<Option<Value>> = done.entries[1..]
        .iter()
        .map(|m| match m {
            Message::ToolResult(r) => r.details.clone(),
            other => panic!("a result: {other:?}"),
        })
        .collect();
    assert_eq!(
        details,
        [
            None,
            Some(json!({"codexOwned": true, "codexItem": "function_call"})),
            Some(json!({"codexOwned": true, "codexItem": "plan"})),
        ]
    );
}

#[test]
fn a_raw_call_left_unanswered_is_closed_with_the_turn() {
    let mut t = ItemTracker::new("codex", "m");
    t.raw_item(&raw(
        json!({"type": "custom_tool_call", "call_id": "x1", "name": "shell.run",
        "input": "ls"}),
    ));
    let done = t.finish(&TurnStatus::Interrupted);
    assert_eq!(
        text_of(&done.entries[0]),
        ["call:x1:codex_shell_run:{\"input\":\"ls\"}"]
    );
    assert!(matches!(&done.entries[1], Message::ToolResult(r) if r.is_error));
    assert!(matches!(
        &done.events[..],
        [HarnessEvent::ToolFinished { is_error: true, .. }]
    ));
}

#[test]
fn a_dynamic_tool_keeps_its_own_text_and_an_unanswered_call_reads_interrupted() {
    let mut t = ItemTracker::new("codex", "m");
    for id in ["d1", "d2"] {
        t.started(&started(
            json!({"type": "dynamicToolCall", "id": id, "tool": "lookup",
            "arguments": {}, "status": "inProgress"}),
        ));
    }
    // What Codex got was fenced; the transcript keeps what the tool returned.
    t.answers()
        .lock()
        .unwrap()
        .insert("d1".to_owned(), "found".to_owned());
    t.completed(&completed(
        json!({"type": "dynamicToolCall", "id": "d1", "tool": "lookup",
        "arguments": {}, "status": "completed", "success": true,
        "contentItems": [{"type": "inputText", "text": "<<<UNTRUSTED_DATA id=\"x\">>>\nfound"}]}),
    ));
    // Interrupted before the tool answered: Codex reports no content at all.
    let events = t.completed(&completed(
        json!({"type": "dynamicToolCall", "id": "d2", "tool": "lookup",
        "arguments": {}, "status": "failed", "success": false, "contentItems": null}),
    ));
    assert!(
        matches!(&events[..], [HarnessEvent::ToolFinished { output, is_error: true, .. }]
            if output == UNANSWERED),
        "{events:?}"
    );
    let done = t.finish(&TurnStatus::Interrupted);
    let results: Vec<Vec<String>> = done
        .entries
        .iter()
        .filter(|m| matches!(m, Message::ToolResult(_)))
        .map(text_of)
        .collect();
    assert_eq!(
        results,
        [
            vec!["text:found".to_owned()],
            vec![format!("text:{UNANSWERED}")]
        ]
    );
    assert!(UNANSWERED.starts_with("interrupted: "));
}

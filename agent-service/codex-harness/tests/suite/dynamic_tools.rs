//! Our tools as Codex dynamic tools: declared on thread/start, called back
//! with `item/tool/call`, run under our policy and workspace confinement.

use agent_testkit::FakeReply;
use openclaw_codex_harness::{HarnessEvent, TurnStatus};
use openclaw_transcript::{ContentBlock, Message};
use serde_json::{Value, json};

use super::fixture::{Fixture, LOOKUP, Turn, input_items, tool_names};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_our_tools_and_gets_their_results() {
    let f = Fixture::start().await;
    f.fake.push(
        FakeReply::tool_call("call_lookup", LOOKUP, json!({"key": "plum"}))
            .with_tool_call("call_read", "read", json!({"path": "../outside.txt"}))
            .argument_chunks(3),
    );
    f.fake.push(FakeReply::text("Plums are purple."));
    let (outcome, events) = f.run(&Turn::new("What colour are plums?")).await;

    assert_eq!(outcome.status, TurnStatus::Completed);
    assert_eq!(outcome.final_text, "Plums are purple.");
    // Our tool ran, once, with the model's arguments.
    assert_eq!(*f.lookup.calls.lock().unwrap(), [json!({"key": "plum"})]);

    // The model saw both tools, declared as ordinary function tools.
    let requests = f.requests();
    assert_eq!(requests.len(), 2);
    let tool_names = tool_names(&requests[0]);
    assert!(
        tool_names.contains(&LOOKUP) && tool_names.contains(&"read"),
        "{tool_names:?}"
    );
    assert!(
        tool_names.contains(&"exec_command"),
        "Codex's own shell is offered too"
    );

    // The next model request carried both results as function_call_output.
    let outputs: Vec<(String, String)> = input_items(&requests[1])
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| {
            let output = match &item["output"] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (item["call_id"].as_str().unwrap().to_owned(), output)
        })
        .collect();
    assert_eq!(outputs.len(), 2, "{outputs:#?}");
    // Fenced as untrusted data, as an embedded model gets a tool's result.
    let (_, lookup) = outputs.iter().find(|(id, _)| id == "call_lookup").unwrap();
    assert!(
        lookup.starts_with("<<<UNTRUSTED_DATA id=\"")
            && lookup.contains(&format!("source=\"tool:{LOOKUP}\""))
            && lookup.contains("\nfact for plum: plums are purple\n<<<END_UNTRUSTED_DATA id=\""),
        "{lookup}"
    );
    let (_, read) = outputs.iter().find(|(id, _)| id == "call_read").unwrap();
    assert!(
        read.contains("permission denied"),
        "confined to the workspace: {read}"
    );

    // Our transcript: the calls, their results, the answer.
    let [
        Message::Assistant(calls),
        Message::ToolResult(first),
        Message::ToolResult(second),
        Message::Assistant(answer),
    ] = &outcome.entries[..]
    else {
        panic!("unexpected entries: {:#?}", outcome.entries);
    };
    let mut call_ids: Vec<&str> = calls
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolCall(c) => Some(c.id.as_str()),
            _ => None,
        })
        .collect();
    // Codex runs the calls of one response in parallel and reports each as
    // it starts, so their order in the message is not the model's.
    call_ids.sort_unstable();
    assert_eq!(call_ids, ["call_lookup", "call_read"]);
    let mut results = [first, second];
    results.sort_by_key(|r| r.tool_call_id.clone());
    assert_eq!(results[0].tool_call_id, "call_lookup");
    assert!(!results[0].is_error);
    assert_eq!(
        results[0].content,
        [ContentBlock::text("fact for plum: plums are purple")],
        "our transcript keeps the tool's own text"
    );
    assert_eq!(results[1].tool_name, "read");
    assert!(results[1].is_error);
    assert_eq!(answer.content, [ContentBlock::text("Plums are purple.")]);

    let started = events
        .iter()
        .filter(|e| matches!(e, HarnessEvent::ToolStarted { .. }))
        .count();
    let finished: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|e| match e {
            HarnessEvent::ToolFinished {
                call_id, is_error, ..
            } => Some((call_id.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(started, 2);
    assert_eq!(finished.len(), 2);
    assert!(finished.contains(&("call_lookup", false)) && finished.contains(&("call_read", true)));
}

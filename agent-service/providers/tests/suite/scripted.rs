//! The offline scripted model: script parsing, deltas, tool calls, `when` matching, what
//! happens past the last turn.

use std::time::Duration;

use openclaw_providers::{
    DEMO_SCRIPT, ModelProvider, ModelRequest, ProviderError, ScriptedProvider, StreamEvent,
};
use openclaw_transcript::{ContentBlock, Message, StopReason, ToolCall};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::support::{NOW_MS, clock, registry, request, run, streamed_text, tool_result, user};

fn scripted(text: &str) -> ScriptedProvider {
    ScriptedProvider::from_json5("scripted", text, clock()).unwrap()
}

fn conversation(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: "demo".into(),
        messages: messages.into(),
        ..request()
    }
}

#[tokio::test(start_paused = true)]
async fn demo_script_reads_agents_md_then_answers_quoting_it() {
    let provider = scripted(DEMO_SCRIPT);
    let (first, events) = run(&provider, conversation(vec![user("hello")])).await;
    let first = first.unwrap();
    let read = ToolCall {
        id: "scripted_0_0".into(),
        name: "read".into(),
        arguments: json!({"path": "AGENTS.md"}),
    };
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count()
            > 3,
        "text streams in small deltas"
    );
    assert!(events.contains(&StreamEvent::ToolCallFinished(read.clone())));
    assert_eq!(first.content.last(), Some(&ContentBlock::ToolCall(read)));
    assert_eq!(
        (
            first.stop_reason.clone(),
            first.api.as_deref(),
            first.timestamp
        ),
        (StopReason::ToolUse, Some("scripted"), NOW_MS)
    );
    assert_eq!(
        (first.provider.as_str(), first.model.as_str()),
        ("scripted", "demo")
    );

    let history = vec![
        user("hello"),
        Message::Assistant(first),
        tool_result("scripted_0_0", "read", "# My agent rules"),
    ];
    let (second, events) = run(&provider, conversation(history)).await;
    let second = second.unwrap();
    assert_eq!(second.stop_reason, StopReason::Stop);
    assert!(
        streamed_text(&events).contains("# My agent rules"),
        "{events:?}"
    );
    assert!(second.usage.unwrap().output > 0);
}

#[tokio::test]
async fn when_picks_the_turn_and_the_tool_round_continues_after_it() {
    let provider = scripted(
        r#"{ chunkChars: 2, turns: [
            { when: "weather", toolCalls: [{ id: "w1", name: "get_weather", arguments: { city: "Paris" } }] },
            { text: "Sunny in {{lastToolResult}}." },
            { when: "HELLO", thinking: "greet", text: "Hi {{lastUserMessage}}" },
        ] }"#,
    );
    let (reply, events) = run(&provider, conversation(vec![user("hello there")])).await;
    assert_eq!(reply.unwrap().content.len(), 2);
    assert_eq!(events[0], StreamEvent::ThinkingDelta("gr".into()));
    assert_eq!(streamed_text(&events), "Hi hello there");

    let (call, _) = run(
        &provider,
        conversation(vec![user("what's the Weather like?")]),
    )
    .await;
    let call = call.unwrap();
    assert_eq!(call.stop_reason, StopReason::ToolUse);
    let history = vec![
        user("what's the Weather like?"),
        Message::Assistant(call),
        tool_result("w1", "get_weather", "Paris"),
    ];
    let (answer, _) = run(&provider, conversation(history)).await;
    assert_eq!(
        answer.unwrap().content,
        vec![ContentBlock::text("Sunny in Paris.")]
    );
}

#[tokio::test]
async fn past_the_last_turn_it_cycles_repeats_or_gives_the_fixed_reply() {
    let assistant = |text: &str| Message::Assistant(scripted_reply(text));
    let history = vec![
        user("a"),
        assistant("one"),
        user("b"),
        assistant("two"),
        user("c"),
    ];
    for (exhausted, expected) in [
        (r#""cycle""#, "one"),
        (r#""repeatLast""#, "two"),
        (r#"{ text: "the end" }"#, "the end"),
    ] {
        let provider = scripted(&format!(
            r#"{{ exhausted: {exhausted}, turns: [{{ text: "one" }}, {{ text: "two" }}] }}"#
        ));
        let (reply, _) = run(&provider, conversation(history.clone())).await;
        assert_eq!(
            reply.unwrap().content,
            vec![ContentBlock::text(expected)],
            "{exhausted}"
        );
    }
}

fn scripted_reply(text: &str) -> openclaw_transcript::AssistantMessage {
    openclaw_transcript::AssistantMessage {
        content: vec![ContentBlock::text(text)],
        provider: "scripted".into(),
        model: "demo".into(),
        api: Some("scripted".into()),
        usage: None,
        stop_reason: StopReason::Stop,
        error_message: None,
        timestamp: 0,
    }
}

#[test]
fn bad_scripts_are_config_errors() {
    for (script, expected) in [
        ("{ turns: [] }", "the script has no turns"),
        ("{ turns: [{ txt: 'typo' }] }", "txt"),
        ("{ turns: [ ", "models.providers.scripted.script"),
    ] {
        let error = ScriptedProvider::from_json5("scripted", script, clock()).unwrap_err();
        assert!(
            matches!(&error, ProviderError::Config { message } if message.contains(expected)),
            "{script}: {error}"
        );
    }
}

#[tokio::test]
async fn registry_loads_the_script_relative_to_the_config_directory() {
    let directory = std::env::temp_dir().join(format!("providers-script-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(
        directory.join("script.json5"),
        "{ turns: [{ text: 'from the file' }] }",
    )
    .unwrap();
    let config = r#"{ models: { providers: { scripted: { api: "scripted", script: "script.json5", models: [{ id: "demo" }] } } } }"#;
    let registry = registry(config, &[], &directory).unwrap();
    std::fs::remove_dir_all(&directory).unwrap();
    let resolved = registry.resolve("scripted/demo").unwrap();
    assert_eq!(
        (resolved.provider.api(), resolved.wire_model.as_str()),
        ("scripted", "demo")
    );
    let (reply, _) = run(resolved.provider.as_ref(), conversation(vec![user("hi")])).await;
    assert_eq!(
        reply.unwrap().content,
        vec![ContentBlock::text("from the file")]
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_stops_a_slow_script() {
    let provider = scripted("{ delayMs: 1000, chunkChars: 1, turns: [{ text: 'slowly' }] }");
    let (sender, mut receiver) = mpsc::channel(16);
    let cancel = CancellationToken::new();
    let request = conversation(vec![user("hi")]);
    let call = provider.complete(&request, sender, cancel.clone());
    let cancel_after_first = async {
        let first = receiver.recv().await;
        cancel.cancel();
        first
    };
    let started = tokio::time::Instant::now();
    let (result, first) = tokio::join!(call, cancel_after_first);
    assert_eq!(
        (result, first),
        (
            Err(ProviderError::Cancelled),
            Some(StreamEvent::TextDelta("s".into()))
        )
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

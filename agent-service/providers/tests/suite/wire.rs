//! Scenarios every wire format must pass, each run against each format's fake server.

use std::time::{Duration, Instant};

use agent_testkit::{CacheWriteField, FakeReply, FakeUsage, WireFormat};
use openclaw_providers::{ProviderError, RetryPolicy, StreamEvent};
use openclaw_transcript::{ContentBlock, Message, StopReason, TextContent, ToolCall, Usage};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::support::{
    NOW_MS, fake, quick_retries, request, run, run_with_retry, streamed_text, tool_result,
};

macro_rules! per_format {
    ($($scenario:ident),* $(,)?) => {
        mod responses {
            use agent_testkit::WireFormat;
            $( #[tokio::test] async fn $scenario() { super::$scenario(WireFormat::OpenAiResponses).await } )*
        }
        mod chat_completions {
            use agent_testkit::WireFormat;
            $( #[tokio::test] async fn $scenario() { super::$scenario(WireFormat::ChatCompletions).await } )*
        }
        mod anthropic {
            use agent_testkit::WireFormat;
            $( #[tokio::test] async fn $scenario() { super::$scenario(WireFormat::AnthropicMessages).await } )*
        }
    };
}

per_format!(
    text_deltas_stream_in_order,
    tool_call_split_across_chunks_is_assembled_once,
    usage_maps_cache_reads,
    thinking_streams_before_text,
    truncated_reply_stops_for_length,
    rate_limit_is_retried_after_retry_after,
    nothing_is_retried_after_partial_output,
    server_error_is_reported_and_retried,
    malformed_chunk_fails_the_call,
    cut_connection_fails_the_call,
    text_streamed_before_a_failure_comes_back_in_the_error,
    cancellation_aborts_the_stream,
    context_overflow_is_recognised,
    wrong_key_is_a_client_error,
    instant_mode_answers_the_tool_round,
    gateway_cache_writes_are_kept,
    an_error_sent_as_an_event_stream_reads_as_its_message,
    an_unstreamed_answer_is_read_like_a_stream,
);

async fn text_deltas_stream_in_order(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::text("Hello, streaming world!").deltas(4));
    let (result, events) = run(provider.as_ref(), request()).await;
    let message = result.unwrap();
    let deltas: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .collect();
    assert_eq!(deltas.len(), 4, "{events:?}");
    assert_eq!(streamed_text(&events), "Hello, streaming world!");
    assert!(
        matches!(events.last(), Some(StreamEvent::Usage(_))),
        "usage comes last: {events:?}"
    );
    assert_eq!(
        message.content,
        vec![ContentBlock::text("Hello, streaming world!")]
    );
    assert_eq!(
        (message.provider.as_str(), message.model.as_str()),
        ("fake", "m1")
    );
    assert_eq!(message.api.as_deref(), Some(format.api()));
    assert_eq!(
        (message.stop_reason, message.timestamp),
        (StopReason::Stop, NOW_MS)
    );
}

async fn tool_call_split_across_chunks_is_assembled_once(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    let arguments = json!({"path": "AGENTS.md", "limit": 20, "note": "ünïcode \"quoted\""});
    fake.push(
        FakeReply::tool_call("call_1", "read", arguments.clone())
            .with_text("Reading it.")
            .with_tool_call("call_2", "read", json!({"path": "README.md"}))
            .argument_chunks(7),
    );
    let (result, events) = run(provider.as_ref(), request()).await;
    let message = result.unwrap();
    let call = |id: &str, args: &serde_json::Value| ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: args.clone(),
    };
    let calls: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| !matches!(e, StreamEvent::TextDelta(_) | StreamEvent::Usage(_)))
        .collect();
    assert_eq!(
        calls,
        vec![
            &StreamEvent::ToolCallStarted {
                id: "call_1".into(),
                name: "read".into()
            },
            &StreamEvent::ToolCallFinished(call("call_1", &arguments)),
            &StreamEvent::ToolCallStarted {
                id: "call_2".into(),
                name: "read".into()
            },
            &StreamEvent::ToolCallFinished(call("call_2", &json!({"path": "README.md"}))),
        ],
        "{format:?}"
    );
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Text(TextContent {
                text: "Reading it.".into()
            }),
            ContentBlock::ToolCall(call("call_1", &arguments)),
            ContentBlock::ToolCall(call("call_2", &json!({"path": "README.md"}))),
        ]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

/// A reply's usage with tokens read from and written to the prompt cache.
const CACHED: FakeUsage = FakeUsage {
    input: 100,
    output: 20,
    cache_read: 900,
    cache_write: 50,
};

/// [`CACHED`] as read back, with `cache_write` of its writes kept (the total counts them).
fn cached_read_back(cache_write: u64) -> Usage {
    Usage {
        input: 100,
        output: 20,
        cache_read: 900,
        cache_write,
        total_tokens: 1020 + cache_write,
        cost: None,
    }
}

async fn usage_maps_cache_reads(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::text("ok").usage(CACHED));
    let (result, events) = run(provider.as_ref(), request()).await;
    // OpenAI formats have no cache-write count; Anthropic's total is the sum of its parts.
    let expected = match format {
        WireFormat::AnthropicMessages => cached_read_back(50),
        _ => cached_read_back(0),
    };
    assert_eq!(result.unwrap().usage, Some(expected.clone()));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Usage(_)))
            .count(),
        1
    );
    assert_eq!(events.last(), Some(&StreamEvent::Usage(expected)));
}

async fn thinking_streams_before_text(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(
        FakeReply::text("Answer.")
            .with_thinking("Let me think.")
            .deltas(2),
    );
    let (result, events) = run(provider.as_ref(), request()).await;
    let message = result.unwrap();
    assert_eq!(
        &events[..4],
        &[
            StreamEvent::ThinkingDelta("Let me ".into()),
            StreamEvent::ThinkingDelta("think.".into()),
            StreamEvent::TextDelta("Answ".into()),
            StreamEvent::TextDelta("er.".into()),
        ]
    );
    let ContentBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert_eq!(thinking.thinking, "Let me think.");
    // Anthropic signs thinking; Responses keeps the encrypted reasoning item; chat has neither.
    match format {
        WireFormat::AnthropicMessages => assert_eq!(
            thinking.thinking_signature.as_deref(),
            Some("fake-signature-1")
        ),
        WireFormat::OpenAiResponses => assert!(
            thinking
                .thinking_signature
                .as_deref()
                .unwrap()
                .contains("fake-encrypted-1")
        ),
        WireFormat::ChatCompletions => assert_eq!(thinking.thinking_signature, None),
    }
    assert_eq!(message.content[1], ContentBlock::text("Answer."));
}

async fn truncated_reply_stops_for_length(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::text("cut sh").truncated());
    let message = run(provider.as_ref(), request()).await.0.unwrap();
    assert_eq!(
        (message.stop_reason, message.content),
        (StopReason::Length, vec![ContentBlock::text("cut sh")])
    );
}

async fn rate_limit_is_retried_after_retry_after(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::rate_limited(Some(1)));
    let (plain, _) = run(provider.as_ref(), request()).await;
    assert!(
        matches!(&plain, Err(ProviderError::RateLimited { retry_after: Some(wait), .. }) if *wait == Duration::from_secs(1)),
        "{plain:?}"
    );
    fake.push(FakeReply::rate_limited(Some(1)));
    fake.push(FakeReply::text("after the wait"));
    let started = Instant::now();
    let (result, events) = run_with_retry(provider.as_ref(), request(), &quick_retries()).await;
    assert_eq!(
        result.unwrap().content,
        vec![ContentBlock::text("after the wait")]
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retry-after was honoured"
    );
    assert_eq!(streamed_text(&events), "after the wait");
    assert_eq!(fake.request_count(), 3);
}

async fn nothing_is_retried_after_partial_output(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::text("half a reply").deltas(4).cut_after(1));
    fake.push(FakeReply::text("a duplicate"));
    let (result, events) = run_with_retry(provider.as_ref(), request(), &quick_retries()).await;
    assert!(
        matches!(result, Err(ProviderError::Connection { .. })),
        "{result:?}"
    );
    assert_eq!(streamed_text(&events), "hal");
    assert_eq!(
        fake.request_count(),
        1,
        "no second request once output reached the caller"
    );
}

async fn server_error_is_reported_and_retried(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::server_error(500));
    let (result, _) = run(provider.as_ref(), request()).await;
    assert!(
        matches!(result, Err(ProviderError::Server { status: 500, .. })),
        "{result:?}"
    );
    fake.push_all([
        FakeReply::server_error(503),
        FakeReply::text("x").cut_after(0),
        FakeReply::text("third time"),
    ]);
    let (result, _) = run_with_retry(provider.as_ref(), request(), &quick_retries()).await;
    assert_eq!(
        result.unwrap().content,
        vec![ContentBlock::text("third time")]
    );
    fake.push_all([FakeReply::server_error(500), FakeReply::server_error(500)]);
    let policy = RetryPolicy {
        max_attempts: 2,
        ..quick_retries()
    };
    let (result, _) = run_with_retry(provider.as_ref(), request(), &policy).await;
    assert!(
        matches!(result, Err(ProviderError::Server { .. })),
        "attempts are bounded: {result:?}"
    );
    assert_eq!(fake.request_count(), 6);
}

async fn malformed_chunk_fails_the_call(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::text("never whole").deltas(3).malformed_after(1));
    let (result, events) = run(provider.as_ref(), request()).await;
    assert!(
        matches!(result, Err(ProviderError::Malformed { .. })),
        "{result:?}"
    );
    assert_eq!(streamed_text(&events), "neve");
}

async fn cut_connection_fails_the_call(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(
        FakeReply::tool_call("call_1", "read", json!({"path": "a"}))
            .argument_chunks(3)
            .cut_after(2),
    );
    let (result, events) = run(provider.as_ref(), request()).await;
    assert!(
        matches!(result, Err(ProviderError::Connection { .. })),
        "{result:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallFinished(_))),
        "a partial tool call never leaks: {events:?}"
    );
}

async fn text_streamed_before_a_failure_comes_back_in_the_error(format: WireFormat) {
    // A cut connection, then a chunk that is not JSON: both after two of four deltas.
    for reply in [
        FakeReply::text("one two three four").deltas(4).cut_after(2),
        FakeReply::text("one two three four")
            .deltas(4)
            .malformed_after(2),
    ] {
        let (fake, provider) = fake(format).await;
        fake.push(reply);
        let (result, events) = run(provider.as_ref(), request()).await;
        let error = result.unwrap_err();
        assert!(
            matches!(
                error,
                ProviderError::Connection { .. } | ProviderError::Malformed { .. }
            ),
            "{error:?}"
        );
        let streamed = streamed_text(&events);
        assert!(!streamed.is_empty(), "{events:?}");
        assert_eq!(error.partial_text(), streamed, "{format:?}");
    }
    // Nothing streamed, nothing carried.
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::server_error(500));
    let (result, _) = run(provider.as_ref(), request()).await;
    assert_eq!(result.unwrap_err().partial_text(), "");
}

async fn cancellation_aborts_the_stream(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::text("one two three").deltas(3).stall_after(1));
    let (sender, mut receiver) = mpsc::channel(16);
    let cancel = CancellationToken::new();
    let request = request();
    let call = provider.complete(&request, sender, cancel.clone());
    let cancel_after_first = async {
        let first = receiver.recv().await;
        cancel.cancel();
        first
    };
    let (result, first) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(call, cancel_after_first)
    })
    .await
    .expect("cancellation is prompt");
    assert_eq!(first, Some(StreamEvent::TextDelta("one t".into())));
    assert_eq!(result, Err(ProviderError::Cancelled));
}

async fn context_overflow_is_recognised(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::context_overflow());
    fake.push(FakeReply::text("unused"));
    let (result, _) = run_with_retry(provider.as_ref(), request(), &quick_retries()).await;
    assert!(
        matches!(result, Err(ProviderError::ContextOverflow { .. })),
        "{result:?}"
    );
    assert_eq!(fake.request_count(), 1, "overflow is not retried");
}

async fn wrong_key_is_a_client_error(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.require_api_key("another-key");
    fake.push(FakeReply::text("unused"));
    let (result, _) = run_with_retry(provider.as_ref(), request(), &quick_retries()).await;
    assert!(
        matches!(result, Err(ProviderError::Client { status: 401, .. })),
        "{result:?}"
    );
    assert_eq!(fake.request_count(), 1);
}

async fn instant_mode_answers_the_tool_round(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    let read = json!({"path": "AGENTS.md"});
    fake.set_instant(
        FakeReply::tool_call("call_1", "read", read.clone()),
        FakeReply::text("done"),
    );
    let first = run(provider.as_ref(), request()).await.0.unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let mut second = request();
    std::sync::Arc::make_mut(&mut second.messages).push(Message::Assistant(first));
    std::sync::Arc::make_mut(&mut second.messages).push(tool_result("call_1", "read", "# Agents"));
    let answer = run(provider.as_ref(), second).await.0.unwrap();
    assert_eq!(answer.content, vec![ContentBlock::text("done")]);
    assert_eq!(
        (fake.request_count(), fake.requests().len()),
        (2, 0),
        "counted, not recorded"
    );
}

/// Gateways report cache writes in their own fields (OpenRouter in the details, proxies of
/// Anthropic's API under Anthropic's names) and count them in the input total; they are kept
/// as writes, not counted as plain input. Anthropic reports its own.
async fn gateway_cache_writes_are_kept(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    let expected = cached_read_back(50);
    for field in [CacheWriteField::Details, CacheWriteField::AnthropicNames] {
        fake.push(FakeReply::text("ok").usage(CACHED).cache_write_as(field));
        let (result, _) = run(provider.as_ref(), request()).await;
        assert_eq!(result.unwrap().usage, Some(expected.clone()), "{field:?}");
    }
}

/// An HTTP error whose body is an event stream (`data: {...}`) reads as the error's own
/// message and kind, not as the raw stream text.
async fn an_error_sent_as_an_event_stream_reads_as_its_message(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    fake.push(FakeReply::rate_limited(Some(2)).as_event_stream());
    let (result, _) = run(provider.as_ref(), request()).await;
    let Err(ProviderError::RateLimited {
        retry_after,
        message,
        ..
    }) = result
    else {
        panic!("{result:?}")
    };
    assert_eq!(retry_after, Some(Duration::from_secs(2)));
    assert!(
        !message.contains("data:") && !message.contains("event:") && !message.contains('{'),
        "{message}"
    );
    assert!(message.to_lowercase().contains("rate limit"), "{message}");
    fake.push(FakeReply::context_overflow().as_event_stream());
    let (result, _) = run(provider.as_ref(), request()).await;
    assert!(
        matches!(result, Err(ProviderError::ContextOverflow { .. })),
        "{result:?}"
    );
}

/// A server that ignores `stream: true` and answers with the API's whole JSON response is
/// read as if it had streamed: the same message, one delta per block, usage.
async fn an_unstreamed_answer_is_read_like_a_stream(format: WireFormat) {
    let (fake, provider) = fake(format).await;
    let usage = FakeUsage {
        cache_read: 0,
        cache_write: 0,
        ..CACHED
    };
    fake.push(
        FakeReply::tool_call("call_1", "read", json!({"path": "AGENTS.md"}))
            .with_text("Let me look.")
            .with_thinking("A file first.")
            .usage(usage)
            .unstreamed(),
    );
    let (result, events) = run(provider.as_ref(), request()).await;
    let message = result.unwrap();
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(streamed_text(&events), "Let me look.");
    let calls: Vec<&ToolCall> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "{message:?}");
    assert_eq!(
        (calls[0].name.as_str(), &calls[0].arguments),
        ("read", &json!({"path": "AGENTS.md"}))
    );
    assert!(
        message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Thinking(t) if t.thinking == "A file first.")),
        "{message:?}"
    );
    let usage = message.usage.expect("usage");
    assert_eq!((usage.input, usage.output), (100, 20));

    fake.push(FakeReply::text("Whole answer.").unstreamed());
    let (result, _) = run(provider.as_ref(), request()).await;
    let message = result.unwrap();
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.content, vec![ContentBlock::text("Whole answer.")]);
}

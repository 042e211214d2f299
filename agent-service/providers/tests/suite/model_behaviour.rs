//! What real models and servers do that a well-behaved fake does not: a server that accepts a
//! request and hangs, tool arguments that are not JSON, the output limit striking inside a
//! tool call, a 200 answer that is an HTML page, a 429 whose wait is only in its body. Each
//! runs against [`RawServer`] over a real socket, in each API's own wire format.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use openclaw_providers::{ModelProvider, ProviderError, RetryPolicy, StreamEvent, tool_arguments};
use openclaw_transcript::{AssistantMessage, ContentBlock, StopReason, ToolCall};
use serde_json::{Value, json};
use tokio::time::timeout;

use super::raw_server::{Act, RawServer, Seen, response, sse, sse_head};
use super::support::{KEY, registry, request, run, run_with_retry};

/// No test here may take long: a call that ignored its timeouts would hang for minutes.
const GUARD: Duration = Duration::from_secs(20);

/// Provider `raw` speaking `api` to `server`, with `timeouts` (JSON5 object text) and model
/// `m1` limited to `max_tokens` output tokens when given.
fn raw_provider(
    api: &str,
    server: &RawServer,
    timeouts: &str,
    max_tokens: Option<u32>,
) -> Arc<dyn ModelProvider> {
    let limit = max_tokens.map_or(String::new(), |max| format!(", maxTokens: {max}"));
    let config = format!(
        r#"{{ models: {{ providers: {{ raw: {{
            api: "{api}", baseUrl: "{}", apiKey: "{KEY}", timeouts: {timeouts},
            models: [{{ id: "m1"{limit} }}],
        }} }} }} }}"#,
        server.base_url
    );
    registry(&config, &[], Path::new("."))
        .unwrap()
        .provider("raw")
        .unwrap()
}

const QUICK: &str = "{ firstByteSeconds: 0.3, idleSeconds: 0.3 }";
const SLOW: &str = "{ firstByteSeconds: 600, idleSeconds: 600 }";

/// The server saw one request, and its connection is closed once the call gave up.
async fn assert_one_request_let_go(server: &mut RawServer, what: &str) {
    assert_eq!(server.next_seen().await, Seen::Request(1), "{what}");
    assert_eq!(
        timeout(GUARD, server.next_seen()).await.unwrap(),
        Seen::Closed(1),
        "{what}: the connection is closed once the call gave up"
    );
}

/// A call of `provider` retried under the default policy ended by `deadline`; `late` says
/// what it means when the call outlives [`GUARD`].
async fn call_with_deadline(
    provider: &dyn ModelProvider,
    deadline: Duration,
    late: &str,
) -> Result<AssistantMessage, ProviderError> {
    let policy = RetryPolicy {
        deadline,
        ..RetryPolicy::default()
    };
    let (result, _) = timeout(GUARD, run_with_retry(provider, request(), &policy))
        .await
        .expect(late);
    result
}

fn connection_message(result: Result<AssistantMessage, ProviderError>) -> String {
    match result {
        Err(ProviderError::Connection { message, .. }) => message,
        other => panic!("expected a connection failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_never_sends_a_byte_fails_at_the_first_byte_timeout_and_is_let_go() {
    for api in [
        "openai-responses",
        "openai-completions",
        "anthropic-messages",
    ] {
        let mut server = RawServer::start(vec![Act::Hold(Vec::new())]).await;
        let provider = raw_provider(api, &server, QUICK, None);
        let (result, _) = timeout(GUARD, run(provider.as_ref(), request()))
            .await
            .expect("the call ignored its first-byte timeout");
        let message = connection_message(result);
        assert!(
            message.contains("no response within 0.3 s")
                && message.contains("models.providers.raw.timeouts.firstByteSeconds"),
            "{api}: {message}"
        );
        assert_one_request_let_go(&mut server, api).await;
    }
}

#[tokio::test]
async fn a_stream_that_goes_silent_after_its_first_chunk_fails_at_the_idle_timeout() {
    let first = json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}});
    let held = sse(&[("message_start", first)]);
    let mut server = RawServer::start(vec![Act::Hold(held)]).await;
    let provider = raw_provider("anthropic-messages", &server, QUICK, None);
    let (result, _) = timeout(GUARD, run(provider.as_ref(), request()))
        .await
        .expect("the call ignored its idle timeout");
    let message = connection_message(result);
    assert!(
        message.contains("silent for 0.3 s")
            && message.contains("models.providers.raw.timeouts.idleSeconds"),
        "{message}"
    );
    assert_one_request_let_go(&mut server, "idle").await;
}

#[tokio::test]
async fn the_call_deadline_is_hard_across_attempts_and_retries() {
    // Timeouts far longer than the deadline: only the deadline can end the call.
    let mut server = RawServer::start(vec![Act::Hold(Vec::new())]).await;
    let provider = raw_provider("openai-responses", &server, SLOW, None);
    let result = call_with_deadline(
        provider.as_ref(),
        Duration::from_millis(500),
        "the call ran past its deadline",
    )
    .await;
    let message = connection_message(result);
    assert!(message.contains("deadline of 0.5 s"), "{message}");
    assert_one_request_let_go(&mut server, "deadline").await;

    // Attempts that each time out are retried only while the deadline leaves room.
    let mut server = RawServer::start(vec![Act::Hold(Vec::new())]).await;
    let provider = raw_provider(
        "openai-responses",
        &server,
        "{ firstByteSeconds: 0.2 }",
        None,
    );
    let policy = RetryPolicy {
        max_attempts: 100,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(1),
        deadline: Duration::from_millis(900),
    };
    let (result, _) = timeout(GUARD, run_with_retry(provider.as_ref(), request(), &policy))
        .await
        .expect("the retries ran past the deadline");
    assert!(matches!(result, Err(ProviderError::Connection { .. })));
    let mut requests = 0;
    while let Ok(seen) = server.seen.try_recv() {
        requests += usize::from(matches!(seen, Seen::Request(_)));
    }
    assert!(
        (2..=5).contains(&requests),
        "0.2 s attempts within 0.9 s: {requests}"
    );
}

/// The class behind a hung provider: an upstream that holds a run's model call open without
/// ever finishing it. Silence is caught by the first-byte and idle timeouts; a stream that is
/// never silent (keep-alive comments, or an endless answer) only by the deadline, which must
/// hold whatever the stream does.
#[tokio::test]
async fn a_stream_that_never_goes_quiet_and_never_ends_stops_at_the_deadline() {
    let every = Duration::from_millis(50);
    let keep_alive = Act::Drip(sse_head(), b": keep-alive\n\n".to_vec(), every);
    let delta = json!({"type": "response.output_text.delta", "output_index": 0, "delta": "more "});
    let endless = Act::Drip(sse_head(), format!("data: {delta}\n\n").into_bytes(), every);
    for act in [keep_alive, endless] {
        let mut server = RawServer::start(vec![act]).await;
        // The idle timeout is longer than the gaps, so only the deadline can end the call.
        let provider = raw_provider("openai-responses", &server, QUICK, None);
        let result = call_with_deadline(
            provider.as_ref(),
            Duration::from_millis(800),
            "the stream outlived the deadline",
        )
        .await;
        let message = connection_message(result);
        assert!(message.contains("deadline of 0.8 s"), "{message}");
        assert_one_request_let_go(&mut server, "a stream that never ends").await;
    }
}

#[tokio::test]
async fn dropping_the_call_closes_its_connection() {
    let mut server = RawServer::start(vec![Act::Hold(sse_head())]).await;
    let provider = raw_provider("openai-completions", &server, SLOW, None);
    let call = run(provider.as_ref(), request());
    tokio::select! {
        _ = call => panic!("the held stream cannot complete"),
        seen = server.next_seen() => assert_eq!(seen, Seen::Request(1)),
    }
    // The call future is dropped here; nothing may keep its connection open.
    assert_eq!(
        timeout(GUARD, server.next_seen()).await.unwrap(),
        Seen::Closed(1)
    );
}

/// A stream in `api`'s format with one call of `read` whose argument text is `arguments`,
/// ending normally, or at the output limit when `cut`.
fn tool_stream(api: &str, arguments: &str, cut: bool) -> Vec<u8> {
    match api {
        "openai-responses" => {
            let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""});
            let mut events = vec![
                (
                    "",
                    json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
                ),
                (
                    "",
                    json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
                ),
                (
                    "",
                    json!({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": arguments}),
                ),
            ];
            let usage = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15});
            if cut {
                events.push(("", json!({"type": "response.incomplete", "response": {"id": "resp_1", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "usage": usage}})));
            } else {
                let mut done = item.clone();
                done["arguments"] = json!(arguments);
                events.push(("", json!({"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc_1", "arguments": arguments})));
                events.push((
                    "",
                    json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
                ));
                events.push(("", json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": usage}})));
            }
            sse(&events)
        }
        "openai-completions" => {
            let chunk = |delta: Value, finish: Value| json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            let mut bytes = sse(&[
                (
                    "",
                    chunk(
                        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
                        Value::Null,
                    ),
                ),
                (
                    "",
                    chunk(
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
                        Value::Null,
                    ),
                ),
                (
                    "",
                    chunk(json!({}), json!(if cut { "length" } else { "tool_calls" })),
                ),
                (
                    "",
                    json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
                ),
            ]);
            bytes.extend_from_slice(b"data: [DONE]\n\n");
            bytes
        }
        _ => sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": arguments}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": if cut { "max_tokens" } else { "tool_use" }}, "usage": {"output_tokens": 5}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
    }
}

fn only_call(message: &AssistantMessage) -> &ToolCall {
    match message.content.as_slice() {
        [ContentBlock::ToolCall(call)] => call,
        other => panic!("expected one tool call, got {other:?}"),
    }
}

#[tokio::test]
async fn tool_arguments_that_are_not_json_reach_the_caller_raw_with_the_parse_error() {
    let broken = r#"{"path": "AGENTS.md",}"#;
    for api in [
        "openai-responses",
        "openai-completions",
        "anthropic-messages",
    ] {
        let server = RawServer::start(vec![Act::Respond(tool_stream(api, broken, false))]).await;
        let provider = raw_provider(api, &server, QUICK, None);
        let (result, events) = run(provider.as_ref(), request()).await;
        let message = result.unwrap_or_else(|error| panic!("{api}: {error}"));
        assert_eq!(message.stop_reason, StopReason::ToolUse, "{api}");
        let call = only_call(&message);
        assert_eq!(call.name, "read");
        let invalid = tool_arguments(call).unwrap_err();
        assert_eq!(invalid.raw, broken, "{api}");
        assert!(
            invalid.error.contains("trailing comma"),
            "{api}: {invalid:?}"
        );
        assert!(
            events.contains(&StreamEvent::ToolCallFinished(call.clone())),
            "{api}: the loop hears of the call: {events:?}"
        );
    }
}

#[tokio::test]
async fn the_output_limit_inside_a_tool_call_is_a_length_stop_with_the_call_marked_incomplete() {
    let cut = r#"{"path": "notes.md", "content": "a long fi"#;
    for api in [
        "openai-responses",
        "openai-completions",
        "anthropic-messages",
    ] {
        let server = RawServer::start(vec![Act::Respond(tool_stream(api, cut, true))]).await;
        let provider = raw_provider(api, &server, QUICK, Some(4096));
        let (result, _) = run(provider.as_ref(), request()).await;
        let message = result.unwrap_or_else(|error| panic!("{api}: {error}"));
        assert_eq!(message.stop_reason, StopReason::Length, "{api}");
        let invalid = tool_arguments(only_call(&message)).unwrap_err();
        assert_eq!(invalid.raw, cut, "{api}");
        assert!(invalid.error.contains("EOF"), "{api}: {invalid:?}");
        // The model's configured maxTokens capped the request.
        let body = &server.bodies()[0];
        let sent = match api {
            "openai-responses" => &body["max_output_tokens"],
            "openai-completions" => body
                .get("max_completion_tokens")
                .unwrap_or(&body["max_tokens"]),
            _ => &body["max_tokens"],
        };
        assert_eq!(sent, &json!(4096), "{api}: {body}");
    }
}

#[tokio::test]
async fn a_success_status_with_an_html_page_is_reported_as_such_not_as_a_cut_stream() {
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>Sign in to the proxy</title></head>\n<body>token {KEY} \u{1b}[2J</body></html>"
    );
    for content_type in ["text/html; charset=utf-8", "text/event-stream"] {
        let server = RawServer::start(vec![Act::Respond(response(
            "200 OK",
            &[("content-type", content_type)],
            &page,
        ))])
        .await;
        let provider = raw_provider("openai-completions", &server, QUICK, None);
        let (result, _) = run(provider.as_ref(), request()).await;
        let message = match result {
            Err(ProviderError::Malformed { message, .. }) => message,
            other => panic!("{content_type}: {other:?}"),
        };
        assert!(
            message.contains("expected an event stream")
                && message.contains("<title>Sign in to the proxy</title>"),
            "{content_type}: {message}"
        );
        assert!(!message.contains(KEY), "the key is blanked: {message}");
        assert!(
            !message.contains('\u{1b}'),
            "control characters are left out: {message}"
        );
        if content_type.starts_with("text/html") {
            assert!(message.contains("text/html"), "{message}");
        }
    }
}

#[tokio::test]
async fn keep_alives_then_a_closed_connection_stay_a_cut_stream_worth_a_retry() {
    let mut bytes = sse_head();
    bytes.extend_from_slice(b": keep-alive\n\n: keep-alive\n\n");
    let server = RawServer::start(vec![Act::Respond(bytes)]).await;
    let provider = raw_provider("openai-responses", &server, QUICK, None);
    let (result, _) = run(provider.as_ref(), request()).await;
    let message = connection_message(result);
    assert!(message.contains("stream ended"), "{message}");
}

#[tokio::test]
async fn a_rate_limit_carries_its_wait_from_header_or_body_into_the_error() {
    let openai_body = r#"{"error":{"message":"Rate limit reached for requests. Please try again in 2.5s.","type":"requests","code":"rate_limit_exceeded"}}"#;
    let cases = [
        (
            vec![("retry-after-ms", "1500")],
            Duration::from_millis(1500),
            "retry after 2 s",
        ),
        (
            vec![("retry-after", "7")],
            Duration::from_secs(7),
            "retry after 7 s",
        ),
        (vec![], Duration::from_millis(2500), "retry after 3 s"),
    ];
    for (headers, wait, phrase) in cases {
        let mut all = headers.clone();
        all.push(("content-type", "application/json"));
        let server = RawServer::start(vec![Act::Respond(response(
            "429 Too Many Requests",
            &all,
            openai_body,
        ))])
        .await;
        let provider = raw_provider("openai-responses", &server, QUICK, None);
        let policy = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        let (result, _) = run_with_retry(provider.as_ref(), request(), &policy).await;
        let error = result.unwrap_err();
        assert_eq!(error.retry_after(), Some(wait), "{headers:?}");
        assert!(error.to_string().contains(phrase), "{headers:?}: {error}");
    }
}

#[tokio::test]
async fn thinking_is_requested_and_signed_and_redacted_thinking_is_replayed_as_sent() {
    let stream = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Check the file."}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-abc"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EnCrYpTeD=="}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Done."}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 30}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    let done = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_2", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    let server = RawServer::start(vec![Act::Respond(stream), Act::Respond(done)]).await;
    let provider = raw_provider("anthropic-messages", &server, QUICK, Some(8192));
    let mut first = request();
    first.reasoning_effort =
        openclaw_providers::reasoning_effort(Some(openclaw_config::raw::ThinkingLevel::High));
    let reply = run(provider.as_ref(), first.clone()).await.0.unwrap();
    assert_eq!(reply.content.len(), 3, "{reply:?}");
    let ContentBlock::Thinking(redacted) = &reply.content[1] else {
        panic!("{reply:?}");
    };
    assert!(redacted.redacted);
    assert_eq!(redacted.thinking_signature.as_deref(), Some("EnCrYpTeD=="));

    let mut second = first;
    std::sync::Arc::make_mut(&mut second.messages)
        .push(openclaw_transcript::Message::Assistant(reply));
    std::sync::Arc::make_mut(&mut second.messages).push(super::support::user("and?"));
    run(provider.as_ref(), second).await.0.unwrap();
    let bodies = server.bodies();
    // high asks for 16,384 tokens of thinking; the model's 8,192 cap leaves 1,024 to answer.
    assert_eq!(bodies[0]["max_tokens"], json!(8192));
    assert_eq!(
        bodies[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 7168})
    );
    assert_eq!(
        bodies[1]["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Check the file.", "signature": "sig-abc"},
            {"type": "redacted_thinking", "data": "EnCrYpTeD=="},
            {"type": "text", "text": "Done."},
        ]})
    );
}

#[tokio::test]
async fn a_model_configured_not_to_reason_gets_no_reasoning_settings() {
    let ok = response(
        "200 OK",
        &[("content-type", "text/event-stream")],
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    );
    let server = RawServer::start(vec![Act::Respond(ok)]).await;
    let config = format!(
        r#"{{ models: {{ providers: {{ raw: {{
            api: "openai-completions", baseUrl: "{}", apiKey: "{KEY}",
            models: [{{ id: "m1", reasoning: false }}, {{ id: "m2" }}],
        }} }} }} }}"#,
        server.base_url
    );
    let provider = registry(&config, &[], Path::new("."))
        .unwrap()
        .provider("raw")
        .unwrap();
    for model in ["m1", "m2"] {
        let mut asked = request();
        asked.model = model.into();
        asked.reasoning_effort = Some("high".into());
        run(provider.as_ref(), asked).await.0.unwrap();
    }
    let bodies = server.bodies();
    assert_eq!(bodies[0].get("reasoning_effort"), None, "{}", bodies[0]);
    assert_eq!(bodies[1]["reasoning_effort"], "high");
}

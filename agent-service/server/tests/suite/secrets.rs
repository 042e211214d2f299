//! No secret ever leaves agent-service: the provider key of the harness config (`test-key`,
//! an inline `apiKey`) is replaced wherever text goes out: a provider's error body in the
//! run error, the status and the logs; a command's output in the tool result, the transcript
//! and the next model request; a workspace file in the prompt and the preview. The gateway
//! tool cannot plant a `${VAR}` that would expand to a secret on the next load.

use agent_testkit::{FakeError, FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use serde_json::json;
use tracing_subscriber::prelude::*;

use super::calls::refusal;
use super::captured_logs::Captured;
use super::harness::Harness;
use super::run_events::{events_of, session_key};

const KEY: &str = "test-key";
const EXEC_FULL: &str = r#"tools: { exec: { security: "full", ask: "off" } },"#;

async fn run(h: &Harness, message: &str) -> Vec<pb::run_event::Event> {
    h.service.run_message(message).await
}

fn transcript_text(entries: &[pb::TranscriptEntry]) -> String {
    entries
        .iter()
        .map(|e| e.json.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

// A current-thread runtime: the server's tasks log on this thread, where the capturing
// subscriber is the default.
#[tokio::test]
async fn a_provider_error_echoing_the_key_is_redacted_in_the_run_error_logs_and_transcript() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new("debug"))
        .with(tracing_subscriber::fmt::layer().with_writer(
            openclaw_secrets::RedactingWriter::new(
                h.service.runtime.redactor().clone(),
                captured.clone(),
            ),
        ));
    let _default = tracing::subscriber::set_default(subscriber);
    h.fake.push(FakeReply::error(FakeError::Other {
        status: 401,
        message: format!("Incorrect API key provided: {KEY}. Check your key."),
    }));
    let events = run(&h, "Hello").await;
    let error = events_of!(&events, Error)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("an error event: {events:?}"));
    assert!(!error.message.contains(KEY), "{}", error.message);
    assert!(
        error
            .message
            .contains("[redacted models.providers.fake.apiKey]"),
        "the error still says what happened: {}",
        error.message
    );
    let logs = captured.text();
    assert!(logs.contains("[redacted"), "the failure was logged: {logs}");
    assert!(!logs.contains(KEY), "{logs}");
    let transcript = transcript_text(&h.service.transcript_entries().await);
    assert!(!transcript.contains(KEY), "{transcript}");
}

#[tokio::test]
async fn a_command_printing_the_key_reaches_neither_the_model_nor_the_transcript() {
    let h = Harness::start(WireFormat::ChatCompletions, "", EXEC_FULL).await;
    std::fs::write(
        h.service.path("state/workspace/leak.txt"),
        format!("the key is {KEY}\n"),
    )
    .expect("leak file");
    h.fake.push_all([
        FakeReply::tool_call("c1", "exec", json!({ "command": "cat leak.txt" })),
        FakeReply::tool_call("c2", "read", json!({ "path": "leak.txt" })),
        FakeReply::text("Done."),
    ]);
    let events = run(&h, "Show me leak.txt").await;
    let outputs: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            pb::run_event::Event::ToolFinished(t) => Some(t.output.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 2, "{events:?}");
    for output in &outputs {
        assert!(!output.contains(KEY), "{output}");
        assert!(output.contains("the key is [redacted"), "{output}");
    }
    let last = h.fake.requests().last().expect("request").body.to_string();
    assert!(!last.contains(KEY), "the model was sent the key: {last}");
    let transcript = transcript_text(&h.service.transcript_entries().await);
    assert!(!transcript.contains(KEY), "{transcript}");
    assert!(transcript.contains("[redacted"), "{transcript}");
}

#[tokio::test]
async fn a_secret_in_a_workspace_file_never_reaches_the_prompt_or_the_preview() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    std::fs::write(
        h.service.path("state/workspace/AGENTS.md"),
        format!("Use the key {KEY} when asked.\n"),
    )
    .expect("AGENTS.md");
    h.fake.push(FakeReply::text("Hi."));
    run(&h, "Hello").await;
    let system = h.fake.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(system.contains("Use the key [redacted"), "{system}");
    assert!(!system.contains(KEY), "{system}");
    let preview = h.service.preview(None, None).await;
    let text = preview.prompt.expect("prompt").text;
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("Use the key [redacted"), "{text}");
}

#[tokio::test]
async fn the_gateway_tool_cannot_plant_a_variable_reference() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let config_path = h.service.root().join("openclaw.json");
    let before = std::fs::read_to_string(&config_path).expect("config");
    h.fake.push_all([
        FakeReply::tool_call(
            "g1",
            "gateway",
            json!({ "action": "config.patch", "patch": { "agents": { "defaults": { "userTimezone": "${ANTHROPIC_API_KEY}" } } } }),
        ),
        FakeReply::tool_call(
            "g2",
            "gateway",
            json!({ "action": "config.patch", "patch": { "agents": { "defaults": { "userTimezone": "Europe/Paris" } } } }),
        ),
        FakeReply::text("Done."),
    ]);
    let events = run(&h, "Set my time zone.").await;
    let results: Vec<(bool, String)> = events
        .iter()
        .filter_map(|e| match e {
            pb::run_event::Event::ToolFinished(t) => Some((t.is_error, t.output.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    assert!(results[0].0, "{:?}", results[0]);
    assert!(
        results[0].1.contains("environment-variable reference")
            && results[0].1.contains("agents.defaults.userTimezone"),
        "{}",
        results[0].1
    );
    // A plain value is still accepted: the refusal is about the reference.
    assert!(!results[1].0, "{:?}", results[1]);
    let after = std::fs::read_to_string(&config_path).expect("config");
    assert!(!after.contains("ANTHROPIC_API_KEY"), "{after}");
    assert!(after.contains("Europe/Paris"), "{after}");
    assert_ne!(before, after);
}

#[tokio::test]
async fn status_messages_are_redacted_too() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    // Any error text that quotes a secret (here the caller's own session key) is redacted by
    // the outermost layer, in headers and in a stream's trailers alike.
    let status = refusal!(
        h.service,
        get_session,
        pb::GetSessionRequest {
            session: session_key(format!("nope-{KEY}")),
        }
    );
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    assert!(!status.message().contains(KEY), "{}", status.message());
    assert!(
        status.message().contains("[redacted"),
        "{}",
        status.message()
    );
    let mut stream = h
        .service
        .client()
        .await
        .get_transcript(pb::GetTranscriptRequest {
            session: session_key(format!("nope-{KEY}")),
        })
        .await;
    let status = match &mut stream {
        Err(status) => status.clone(),
        Ok(stream) => loop {
            match stream.get_mut().message().await {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the transcript of an unknown session streamed"),
                Err(status) => break status,
            }
        },
    };
    assert!(!status.message().contains(KEY), "{}", status.message());
}

/// What the model says is redacted before it is stored or sent: a tool call whose arguments
/// carry the key, and a reply that repeats it (in the stream, the final reply and the
/// transcript).
#[tokio::test]
async fn the_key_in_what_the_model_says_is_redacted_before_it_is_stored_or_sent() {
    let h = Harness::start(WireFormat::ChatCompletions, "", EXEC_FULL).await;
    h.fake.push_all([
        FakeReply::tool_call("c1", "exec", json!({ "command": format!("echo {KEY}") })),
        FakeReply::text(format!("The key is {KEY}.")),
    ]);
    let events = run(&h, "What is the key?").await;
    let mut deltas = String::new();
    let mut reply = String::new();
    for event in &events {
        match event {
            pb::run_event::Event::TextDelta(d) => deltas.push_str(d),
            pb::run_event::Event::Final(f) => reply = f.text.clone(),
            _ => {}
        }
    }
    assert_eq!(reply, "The key is [redacted models.providers.fake.apiKey].");
    assert_eq!(deltas, reply);
    let transcript = transcript_text(&h.service.transcript_entries().await);
    assert!(!transcript.contains(KEY), "{transcript}");
    assert!(
        transcript.contains("echo [redacted models.providers.fake.apiKey]"),
        "{transcript}"
    );
}

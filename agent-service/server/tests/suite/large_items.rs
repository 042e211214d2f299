//! Every streamed item fits a default gRPC client's 4 MiB receive limit: a
//! transcript with a 7 MB line and a run with a long answer are read back
//! whole by clients with tonic's default limits.

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;

use super::calls::{call, refusal};
use super::harness::{Harness, Service};
use super::run_events::{session_key, telegram};

/// Under the 4 MiB request limit; every `"` is stored escaped, as `\"`.
const QUOTES: usize = 3_500_000;

fn on(key: &str, message: String) -> pb::RunRequest {
    pb::RunRequest {
        session: session_key(key),
        message,
        channel: telegram(),
        ..Default::default()
    }
}

/// Every event of a run, read with a default-limit client.
async fn run_events(service: &Service, request: pb::RunRequest) -> Vec<pb::RunEvent> {
    let mut stream = service.open_run(request).await;
    let mut events = Vec::new();
    while let Some(event) = stream.message().await.expect("every event fits") {
        events.push(event);
    }
    events
}

/// The session's transcript lines, parts joined, read with a default-limit
/// client; also the largest item received.
async fn transcript_lines(service: &Service, key: &str) -> (Vec<pb::TranscriptEntry>, usize) {
    let mut stream = call!(
        service,
        get_transcript,
        pb::GetTranscriptRequest {
            session: on(key, String::new()).session,
        }
    );
    let mut lines: Vec<pb::TranscriptEntry> = Vec::new();
    let mut largest = 0;
    let mut continuing = false;
    while let Some(item) = stream.message().await.expect("every item fits") {
        largest = largest.max(prost::Message::encoded_len(&item));
        let Some(pb::transcript_item::Item::Entry(entry)) = item.item else {
            continue;
        };
        if continuing {
            let head = lines.last_mut().expect("a first part");
            assert_eq!(head.seq, entry.seq, "parts of one entry share its seq");
            assert_eq!(
                (entry.r#type.as_str(), entry.id.as_str()),
                ("", ""),
                "only seq and json on a later part"
            );
            head.json.push_str(&entry.json);
        } else {
            lines.push(entry.clone());
        }
        continuing = entry.json_continues;
    }
    assert!(!continuing, "the last part ends its entry");
    (lines, largest)
}

#[tokio::test]
async fn a_seven_megabyte_line_and_a_long_answer_reach_default_clients_whole() {
    let harness = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let service = &harness.service;

    // A message of quotes, stored as a line twice its size. What becomes of
    // the run does not matter here (its context is far past the window);
    // the message is in the transcript either way.
    let quotes = "\"".repeat(QUOTES);
    run_events(service, on("telegram:quotes", quotes.clone())).await;
    let (lines, largest) = transcript_lines(service, "telegram:quotes").await;
    assert!(
        largest <= 1024 * 1024 + 1024,
        "largest item {largest} bytes"
    );
    let user = lines
        .iter()
        .find(|e| e.role == "user")
        .expect("the user entry");
    assert!(user.json.len() > 2 * QUOTES, "{} bytes", user.json.len());
    let parsed: serde_json::Value = serde_json::from_str(&user.json).expect("whole JSON line");
    let text = parsed["message"]["content"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            parsed["message"]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .expect("the message text");
    assert!(
        text == quotes,
        "the text came back changed ({} bytes)",
        text.len()
    );

    // A long answer: one 2.5 MB delta, and a final event that would carry
    // it twice (text and reply).
    let answer: String = "Ünïcode ✓ answer. ".repeat(140_000);
    assert!(answer.len() > 2_500_000);
    harness.fake.push(FakeReply::text(answer.clone()));
    let events = run_events(service, on("telegram:long", "Tell me everything.".into())).await;
    let largest = events
        .iter()
        .map(prost::Message::encoded_len)
        .max()
        .unwrap_or(0);
    assert!(
        largest <= 1024 * 1024 + 1024,
        "largest event {largest} bytes"
    );
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    let (mut deltas, mut text, mut reply) = (String::new(), String::new(), String::new());
    for event in &events {
        match event.event.as_ref() {
            Some(pb::run_event::Event::TextDelta(d)) => deltas.push_str(d),
            Some(pb::run_event::Event::FinalPart(p)) => {
                text.push_str(&p.text);
                reply.push_str(&p.reply);
            }
            Some(pb::run_event::Event::Final(f)) => {
                text.push_str(&f.text);
                reply.push_str(&f.reply);
            }
            _ => {}
        }
    }
    // (Compared without printing megabytes on failure.)
    let same = |got: &str| got == answer;
    assert!(
        same(&deltas),
        "deltas: {} of {} bytes",
        deltas.len(),
        answer.len()
    );
    assert!(
        same(&text),
        "final text: {} of {} bytes",
        text.len(),
        answer.len()
    );
    assert!(
        same(&reply),
        "final reply: {} of {} bytes",
        reply.len(),
        answer.len()
    );
    assert!(matches!(
        events.last().and_then(|e| e.event.as_ref()),
        Some(pb::run_event::Event::Final(_))
    ));
    // The answer's transcript line comes back whole too.
    let (lines, _) = transcript_lines(service, "telegram:long").await;
    let assistant = lines
        .iter()
        .find(|e| e.role == "assistant")
        .expect("the answer");
    assert!(assistant.json.contains(&answer), "the answer's line is cut");
}

/// A message under the request limit that would escape past a transcript line (3.8 MiB of
/// control characters take 6 bytes each as JSON) is refused before it is acknowledged, naming
/// the limit; the session is not wedged: the next message runs and is the only one stored.
#[tokio::test]
async fn a_message_too_large_once_escaped_is_refused_before_it_is_acknowledged() {
    let harness = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let service = &harness.service;
    let poison = "\u{1}".repeat(3_800_000);
    let err = refusal!(
        service,
        send,
        pb::SendRequest {
            session: on("telegram:poison", String::new()).session,
            message: poison,
            ..Default::default()
        }
    );
    assert_eq!(err.code(), tonic::Code::ResourceExhausted, "{err:?}");
    assert!(
        err.message().contains("transcript line") && err.message().contains("22800000"),
        "{}",
        err.message()
    );
    harness.fake.push(FakeReply::text("still here".to_owned()));
    let events = run_events(service, on("telegram:poison", "hello".into())).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e.event, Some(pb::run_event::Event::Final(_)))),
        "{events:?}"
    );
    let (lines, _) = transcript_lines(service, "telegram:poison").await;
    assert_eq!(
        lines.iter().filter(|e| e.role == "user").count(),
        1,
        "only the message that fits was stored"
    );
}

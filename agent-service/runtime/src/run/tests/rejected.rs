//! A message the provider refuses for what it holds: marked rejected in the transcript,
//! left out of every later request, and the session keeps working; a refusal that is not the
//! newest content's (the request's own shape) drops nothing.

use agent_testkit::{FakeError, FakeReply};
use openclaw_transcript::Message;
use serde_json::json;

use super::{Loop, final_of};
use crate::context::REJECTED_ENTRY;
use crate::run::RunEvent;

const MARK: &str = "REFUSED-MARK-5804";

/// The provider's 400 for one piece of content, in its own words.
fn refusal() -> FakeError {
    FakeError::Other {
        status: 400,
        message: "messages.0.content.1.image.source: the image could not be processed".to_owned(),
    }
}

fn error_of(events: &[RunEvent]) -> (String, String) {
    match events.last() {
        Some(RunEvent::Error { code, message }) => ((*code).to_owned(), message.clone()),
        other => panic!("the run did not end with an error: {other:?}\n{events:#?}"),
    }
}

/// The transcript's `rejected` entries as JSON.
async fn rejected_entries(l: &Loop) -> Vec<serde_json::Value> {
    let path = l.transcript_path().await;
    std::fs::read_to_string(path)
        .expect("transcript")
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|e| e["type"] == "custom" && e["customType"] == REJECTED_ENTRY)
        .collect()
}

/// The entry id of the user message that contains `text`.
async fn user_entry_id(l: &Loop, text: &str) -> String {
    let path = l.transcript_path().await;
    std::fs::read_to_string(path)
        .expect("transcript")
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|e| e["message"]["role"] == "user" && e["message"].to_string().contains(text))
        .and_then(|e| e["id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no user message with {text}"))
}

#[tokio::test]
async fn a_refused_message_is_marked_and_the_next_message_gets_an_answer() {
    let l = Loop::start("").await;
    l.model.refuse_containing(MARK, refusal());
    // The first reply answers the check that the request is fine without the message.
    l.model.push_all([
        FakeReply::text("PROBE-ANSWER-never-shown"),
        FakeReply::text("Second answer."),
    ]);
    let first = l.run(&format!("Look at this picture {MARK}")).await;
    let (code, message) = error_of(&first);
    assert_eq!(code, "INVALID_ARGUMENT", "{message}");
    assert!(
        message.contains("rejected by the model provider"),
        "{message}"
    );
    assert!(message.contains("will not be sent again"), "{message}");
    assert!(
        message.contains("the image could not be processed"),
        "{message}"
    );

    let second = l.run("Hello again?").await;
    assert_eq!(final_of(&second).0, "Second answer.");
    let requests = l.model.requests();
    assert_eq!(requests.len(), 3, "the refused call, the check, the answer");
    assert!(requests[0].body.to_string().contains(MARK));
    let check = requests[1].body.to_string();
    assert!(!check.contains(MARK), "{check}");
    let last = requests[2].body.to_string();
    assert!(!last.contains(MARK), "{last}");
    assert!(last.contains("Hello again?"), "{last}");
    assert!(!last.contains("PROBE-ANSWER"), "{last}");

    // Kept for the record, marked with the provider's reason.
    let id = user_entry_id(&l, MARK).await;
    let rejected = rejected_entries(&l).await;
    assert_eq!(rejected.len(), 1, "{rejected:#?}");
    assert_eq!(rejected[0]["data"]["entryIds"], json!([id]));
    let reason = rejected[0]["data"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the image could not be processed"),
        "{reason}"
    );
    // What the model sees: the refused message is gone, the rest is there.
    let messages = l.messages().await;
    let users: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(format!("{:?}", u.content)),
            _ => None,
        })
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    assert!(users[0].contains("Hello again?"), "{users:?}");
    let transcript = std::fs::read_to_string(l.transcript_path().await).expect("transcript");
    assert!(!transcript.contains("PROBE-ANSWER"), "{transcript}");
}

/// A 400 the request gets even without its newest message is not that message's fault (our
/// request shape, a tool schema, the system prompt): nothing is marked, the error says so, and
/// the message is sent again with the next one.
#[tokio::test]
async fn a_refusal_of_the_request_itself_drops_nothing() {
    let l = Loop::start("").await;
    // Every request names the model: the provider refuses all of them.
    l.model.refuse_containing("test-model", refusal());
    let first = l.run("FIRST-KEPT-MARK question").await;
    let (code, message) = error_of(&first);
    assert_eq!(code, "FAILED_PRECONDITION", "{message}");
    assert!(
        message.contains("refused even without the newest message"),
        "{message}"
    );
    assert_eq!(l.model.request_count(), 2, "the call and the check");
    assert!(rejected_entries(&l).await.is_empty());

    l.model.clear_refusals();
    l.model.push(FakeReply::text("Both answered."));
    let second = l.run("SECOND-MARK question").await;
    assert_eq!(final_of(&second).0, "Both answered.");
    let last = l.model.requests().last().expect("request").body.to_string();
    assert!(last.contains("FIRST-KEPT-MARK"), "{last}");
    assert!(last.contains("SECOND-MARK"), "{last}");
}

/// Other refusals (authentication, permission, not found) are never judged as content: no
/// check request, nothing marked.
#[tokio::test]
async fn an_authentication_refusal_is_not_judged_as_content() {
    let l = Loop::start("").await;
    l.model.refuse_containing(
        MARK,
        FakeError::Other {
            status: 401,
            message: "invalid x-api-key".to_owned(),
        },
    );
    let events = l.run(&format!("Hello {MARK}")).await;
    let (code, message) = error_of(&events);
    assert_eq!(code, "FAILED_PRECONDITION", "{message}");
    assert_eq!(l.model.request_count(), 1, "no check request");
    assert!(rejected_entries(&l).await.is_empty());
}

/// A tool result the provider refuses (a file the model read holds what it will not take):
/// the result is marked and later requests carry a note in its place, so the call keeps its
/// result and the session goes on.
#[tokio::test]
async fn a_refused_tool_result_is_replaced_by_a_note() {
    let l = Loop::start("").await;
    let workspace = l.dir.path().join("state/workspace");
    std::fs::write(workspace.join("notes.txt"), format!("{MARK}\n")).expect("notes");
    l.model.refuse_containing(MARK, refusal());
    l.model.push_all([
        FakeReply::tool_call("c1", "read", json!({ "path": "notes.txt" })),
        FakeReply::text("PROBE-ANSWER-never-shown"),
        FakeReply::text("After the note."),
    ]);
    let first = l.run("USER-KEPT-MARK: what does notes.txt say?").await;
    let (code, message) = error_of(&first);
    assert_eq!(code, "FAILED_PRECONDITION", "{message}");
    assert!(message.contains("tool call c1"), "{message}");
    assert!(message.contains("will not be sent again"), "{message}");
    assert_eq!(rejected_entries(&l).await.len(), 1);

    let second = l.run("And now?").await;
    assert_eq!(final_of(&second).0, "After the note.");
    let last = l.model.requests().last().expect("request").body.to_string();
    assert!(!last.contains(MARK), "{last}");
    assert!(
        last.contains("USER-KEPT-MARK"),
        "the user's message stays: {last}"
    );
    assert!(last.contains("refused by the model provider"), "{last}");
}

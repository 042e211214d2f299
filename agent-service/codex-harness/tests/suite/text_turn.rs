//! Text turns, and where each instruction layer lands in the model request.

use agent_testkit::{FakeReply, FakeUsage};
use openclaw_codex_harness::{HarnessEvent, ThreadBinding, TurnStatus};
use openclaw_transcript::{ContentBlock, Message, StopReason};

use super::fixture::{AGENT, Fixture, MODEL, Turn, messages};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_turn_streams_deltas_and_writes_one_assistant_message() {
    let f = Fixture::start().await;
    let usage = FakeUsage {
        input: 60,
        output: 7,
        cache_read: 40,
        cache_write: 0,
    };
    f.fake.push(
        FakeReply::text("Hello from the fake.")
            .deltas(3)
            .usage(usage),
    );
    let (outcome, events) = f.run(&Turn::new("Say hello.")).await;

    assert_eq!(outcome.status, TurnStatus::Completed);
    assert_eq!(outcome.binding, ThreadBinding::Started);
    assert!(!outcome.thread_id.is_empty());
    assert_eq!(outcome.final_text, "Hello from the fake.");
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            HarnessEvent::TextDelta(d) => Some(d.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), "Hello from the fake.");
    assert_eq!(deltas.len(), 3);
    assert!(
        matches!(&events[0], HarnessEvent::ThreadReady { thread_id, binding: ThreadBinding::Started } if *thread_id == outcome.thread_id)
    );
    assert!(matches!(&events[1], HarnessEvent::TurnStarted { .. }));

    let [Message::Assistant(reply)] = &outcome.entries[..] else {
        panic!("one assistant message expected: {:#?}", outcome.entries);
    };
    assert_eq!(reply.content, [ContentBlock::text("Hello from the fake.")]);
    assert_eq!(reply.stop_reason, StopReason::Stop);
    assert_eq!(reply.model, MODEL);
    assert_eq!(reply.provider, "openclaw");
    // Codex counts cached tokens inside input; ours are uncached + cache_read.
    let usage = reply.usage.clone().expect("usage on the message");
    assert_eq!((usage.input, usage.cache_read, usage.output), (60, 40, 7));
    assert_eq!(outcome.usage, usage);

    let requests = f.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("originator"), Some("openclaw"));
    assert_eq!(
        requests[0].header("thread-id"),
        Some(outcome.thread_id.as_str())
    );
}

/// Codex 0.169.0, fallback model metadata (an unknown slug), our
/// `skills.include_instructions=false`, no AGENTS.md anywhere:
///
/// | # | role | content parts |
/// |---|---|---|
/// | 0 | developer | Codex's built-in base prompt (we send no `baseInstructions`) |
/// | 1 | developer | our `developerInstructions`, `<permissions instructions>`, `<collaboration_mode>` + our turn instructions |
/// | 2 | user | `<environment_context>` |
/// | 3 | user | the turn input |
///
/// On a later turn, changed turn instructions arrive as a new
/// `<collaboration_mode>` developer message right before that turn's user
/// message; unchanged ones are not repeated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instruction_layers_land_where_the_reference_says() {
    let f = Fixture::start().await;
    f.fake.push(FakeReply::text("First answer."));
    f.fake.push(FakeReply::text("Same answer."));
    f.fake.push(FakeReply::text("Second answer."));
    let (first, _) = f.run(&Turn::new("First question.")).await;
    let (same, _) = f
        .run(&Turn::new("Same instructions.").on(&first.thread_id))
        .await;
    let mut changed = Turn::new("Second question.").on(&first.thread_id);
    changed.extra_context = "The group is called Orchard.".to_owned();
    let (second, _) = f.run(&changed).await;
    assert_eq!(same.binding, ThreadBinding::Loaded);
    assert_eq!(second.binding, ThreadBinding::Loaded);
    assert_eq!(second.thread_id, first.thread_id);

    let requests = f.requests();
    assert!(
        requests[0].body.get("instructions").is_none(),
        "0.169 sends no `instructions` key"
    );
    let first_messages = messages(&requests[0]);
    let roles: Vec<&str> = first_messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["developer", "developer", "user", "user"]);
    assert!(
        first_messages[0].1[0].starts_with("You are a coding agent running in the Codex CLI"),
        "Codex keeps its own base prompt at input[0]"
    );
    let developer = &first_messages[1].1;
    assert_eq!(developer.len(), 3, "{developer:#?}");
    assert!(
        developer[0].starts_with(&format!(
            "# OpenClaw Runtime\nYou are {AGENT}, an OpenClaw agent."
        )),
        "developerInstructions are the first part of the second developer message"
    );
    assert!(developer[1].starts_with("<permissions instructions>"));
    assert!(
        developer[2].starts_with("<collaboration_mode># OpenClaw Turn Instructions"),
        "the collaboration mode carries our turn instructions: {}",
        developer[2]
    );
    assert!(developer[2].ends_with("</collaboration_mode>"));
    assert!(
        !developer
            .iter()
            .any(|p| p.contains("<skills_instructions>")),
        "skills.include_instructions=false removes Codex's skills block"
    );
    assert!(first_messages[2].1[0].starts_with("<environment_context>"));
    assert_eq!(first_messages[3].1, ["First question."]);

    // Turn two, same turn instructions: Codex does not repeat them; the
    // first turn's copy stays in the history.
    let same = messages(&requests[1]);
    let tail: Vec<(&str, &str)> = same[4..]
        .iter()
        .map(|(role, parts)| (role.as_str(), parts[0].as_str()))
        .collect();
    assert_eq!(
        tail,
        [
            ("assistant", "First answer."),
            ("user", "Same instructions.")
        ]
    );

    // Turn three, changed turn instructions: a new `<collaboration_mode>`
    // developer message right before the turn's input.
    let later = messages(&requests[2]);
    let tail: Vec<(&str, &str)> = later[6..]
        .iter()
        .map(|(role, parts)| (role.as_str(), parts[0].as_str()))
        .collect();
    assert_eq!(tail.len(), 3, "{tail:#?}");
    assert_eq!(tail[0], ("assistant", "Same answer."));
    assert_eq!(tail[1].0, "developer");
    assert!(
        tail[1]
            .1
            .starts_with("<collaboration_mode># OpenClaw Turn Instructions")
    );
    assert!(tail[1].1.contains("The group is called Orchard."));
    assert_eq!(tail[2], ("user", "Second question."));
}

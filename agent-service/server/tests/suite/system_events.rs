//! System events end to end over gRPC: a background command that ends on its own comes back
//! to its session as an `[Exec Finished]` message with its exit status and the end of its
//! output, starting a run when the session is idle or steered into the active run after its
//! tool batch; watchers see it queued with its origin; `tools.exec.notifyOnExit: false`
//! turns the wake-up and the prompt's promise of it off together.

use std::time::Duration;

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::run_event::Event;
use serde_json::{Value, json};

use super::harness::Harness;
use super::run_events::events_of;

const EXEC: &str = r#"tools: { exec: { security: "full", ask: "off" } },"#;
const EXEC_QUIET: &str =
    r#"tools: { exec: { security: "full", ask: "off", notifyOnExit: false } },"#;
/// The Tooling line that promises the wake-up.
const PROMISE: &str = "an [Exec Finished] message brings you its exit status";

/// The model's call `c1` of exec running `command` in the background.
fn background(command: &str) -> FakeReply {
    FakeReply::tool_call(
        "c1",
        "exec",
        json!({ "command": command, "background": true }),
    )
}

async fn run(h: &Harness, message: &str) -> Vec<Event> {
    let events = h.service.run_message(message).await;
    assert!(
        events.iter().any(|e| matches!(e, Event::Final(_))),
        "{events:?}"
    );
    events
}

/// Watch events until a final event of a run other than `after`; returns them all.
async fn watch_until_final(
    watch: &mut tonic::Streaming<pb::RunEvent>,
    after: u64,
) -> Vec<pb::RunEvent> {
    let mut seen = Vec::new();
    let deadline = Duration::from_secs(20);
    tokio::time::timeout(deadline, async {
        while let Some(event) = watch.message().await.expect("watch") {
            let done = event.run != after && matches!(event.event, Some(Event::Final(_)));
            seen.push(event);
            if done {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no second run within {deadline:?}: {seen:?}"));
    seen
}

fn system_prompt(request: &agent_testkit::RecordedRequest) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn user_texts(request: &agent_testkit::RecordedRequest) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The session is idle when the command ends: its exit starts a run of its own, which the
/// watcher sees queued as an exec-exit system event, and whose started event lists it
/// instead of a user message. The model reads the status and the output's end, the output
/// fenced as a tool's.
#[tokio::test]
async fn a_background_commands_end_starts_a_run_with_its_status_and_output() {
    let h = Harness::start(WireFormat::ChatCompletions, "", EXEC).await;
    h.fake.push_all([
        background("sleep 2; echo compiled 12 files; exit 2"),
        FakeReply::text("The build runs in the background."),
        FakeReply::text("The build failed with exit code 2."),
    ]);
    let first = run(&h, "Start the build.").await;
    // Opened once the session exists, well before the command ends.
    let mut watch = h.service.watch().await;
    let first_run = events_of!(&first, Started)
        .into_iter()
        .next()
        .expect("started")
        .run_id;
    assert_eq!(first_run, "run-1");
    assert!(
        system_prompt(&h.fake.requests()[0]).contains(PROMISE),
        "the prompt promises the wake-up"
    );

    let seen = watch_until_final(&mut watch, 1).await;
    let queued: Vec<&pb::SystemEventQueued> = seen
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::SystemEvent(q)) => Some(q),
            _ => None,
        })
        .collect();
    let [queued] = queued.as_slice() else {
        panic!("one system event: {seen:?}");
    };
    let event = queued.event.as_ref().expect("event");
    assert_eq!(event.kind(), pb::SystemEventKind::ExecExit);
    assert_eq!(event.source, "proc-1");
    let disposition = queued.disposition.as_ref().expect("disposition");
    assert_eq!(disposition.outcome(), pb::disposition::Outcome::Started);
    assert_eq!(disposition.run, 2);
    let started = seen
        .iter()
        .find_map(|e| match &e.event {
            Some(Event::Started(s)) if e.run == 2 => Some(s),
            _ => None,
        })
        .expect("the second run's start");
    assert!(started.message_seqs.is_empty(), "{started:?}");
    assert_eq!(started.system_events, vec![event.clone()]);

    let requests = h.fake.requests();
    assert_eq!(requests.len(), 3);
    let users = user_texts(&requests[2]);
    let report = users.last().expect("the report");
    assert!(
        report.starts_with(
            "[Exec Finished] Background process proc-1 (sleep 2; echo compiled 12 files; exit 2) exited with code 2. The end of its output:\n<<<UNTRUSTED_DATA id=\""
        ),
        "{report}"
    );
    assert!(report.contains("source=\"tool:exec\""), "{report}");
    assert!(
        report.contains("\ncompiled 12 files\n<<<END_UNTRUSTED_DATA"),
        "{report}"
    );
    // The transcript keeps the report once, as the runtime wrote it.
    let reports = h
        .service
        .transcript_json()
        .await
        .iter()
        .filter(|e| e.to_string().contains("[Exec Finished]"))
        .count();
    assert_eq!(reports, 1);
}

/// The session is busy when the command ends: the report is steered into the active run and
/// reaches the model on its next call, after the tool batch that was running.
#[tokio::test]
async fn a_command_that_ends_during_a_run_is_steered_into_it() {
    let h = Harness::start(WireFormat::ChatCompletions, "", EXEC).await;
    h.fake.push(FakeReply::text("Hello."));
    run(&h, "Hi.").await;
    let mut watch = h.service.watch().await;
    h.fake.push_all([
        background("echo quick"),
        // The foreground command keeps the run in its tool batch while the other ends.
        FakeReply::tool_call("c2", "exec", json!({ "command": "sleep 2; echo slow" })),
        FakeReply::text("Both are done."),
    ]);
    run(&h, "Run both.").await;
    let requests = h.fake.requests();
    assert_eq!(
        requests.len(),
        4,
        "a greeting, then one run of three model calls"
    );
    let users = user_texts(&requests[3]);
    assert_eq!(users.len(), 3, "{users:?}");
    assert!(
        users[2].starts_with(
            "[Exec Finished] Background process proc-1 (echo quick) exited with code 0."
        ),
        "{users:?}"
    );
    assert!(
        !user_texts(&requests[2])
            .iter()
            .any(|u| u.contains("[Exec Finished]"))
    );
    let queued = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = watch.message().await.expect("watch") {
            if let Some(Event::SystemEvent(q)) = event.event {
                return q;
            }
        }
        panic!("the watch ended");
    })
    .await
    .expect("a system event");
    let disposition = queued.disposition.expect("disposition");
    assert_eq!(disposition.outcome(), pb::disposition::Outcome::Steered);
    assert_eq!(disposition.run, 2);
}

/// With `notifyOnExit: false` the prompt promises no wake-up and none comes: the finished
/// command leaves the session alone until the user writes again.
#[tokio::test]
async fn with_notify_on_exit_off_there_is_no_wakeup_and_no_promise() {
    let h = Harness::start(WireFormat::ChatCompletions, "", EXEC_QUIET).await;
    h.fake.push_all([
        background("echo done > done.txt"),
        FakeReply::text("Started."),
        FakeReply::text("Anything else?"),
    ]);
    run(&h, "Start it.").await;
    let marker = h.service.path("state/workspace/done.txt");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command never ran"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Longer than a report takes to be queued (it waits at most half a second for output).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.fake.requests().len(), 2, "no run started by itself");
    run(&h, "Thanks.").await;
    let requests = h.fake.requests();
    assert!(!system_prompt(&requests[0]).contains(PROMISE));
    assert!(
        !user_texts(&requests[2])
            .iter()
            .any(|u| u.contains("[Exec Finished]")),
        "{:?}",
        user_texts(&requests[2])
    );
}

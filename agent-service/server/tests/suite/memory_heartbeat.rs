//! Memory tools and heartbeats end to end (P-19, P-33, P-40; lessons L2, L5):
//! agent-service + a real prompt-service over gRPC + a fake model server, checked on the bytes
//! the fake receives and the events clients see.

use std::time::Duration;

use agent_runtime::heartbeat::{
    DEFAULT_HEARTBEAT_PROMPT, HeartbeatEvent, HeartbeatOutcome, SkipReason,
};
use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::disposition::Outcome;
use pb::run_event::Event;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::calls::call;
use super::harness::Harness;
use super::model_json::tool_names;
use super::run_events::{events_of, final_of, read_until, session_key, telegram_in};

const CHECKLIST: &str = "# Heartbeat checklist\n- Check the inbox for urgent mail.\n";

type EventStream = tonic::Streaming<pb::RunEvent>;

async fn open_run(h: &Harness, key: &str, message: &str, chat: pb::ChatType) -> EventStream {
    h.service
        .open_run(pb::RunRequest {
            session: session_key(key),
            message: message.into(),
            channel: telegram_in(chat),
            ..Default::default()
        })
        .await
}

async fn run(h: &Harness, key: &str, message: &str, chat: pb::ChatType) -> Vec<pb::RunEvent> {
    let mut stream = open_run(h, key, message, chat).await;
    read_until(&mut stream, |_| false).await
}

async fn watch(h: &Harness) -> EventStream {
    h.service.watch().await
}

fn is_final_of(run: u64) -> impl Fn(&pb::RunEvent) -> bool {
    move |e| e.run == run && matches!(e.event, Some(Event::Final(_) | Event::Error(_)))
}

fn model_calls(events: &[pb::RunEvent], run: u64) -> Vec<pb::ModelCall> {
    events
        .iter()
        .filter(|e| e.run == run)
        .filter_map(|e| match &e.event {
            Some(Event::ModelCall(m)) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

fn system_text(body: &Value) -> String {
    body["system"].to_string()
}

/// The stable system block (above the cache boundary) as the fake received it.
fn stable_block(body: &Value) -> String {
    body["system"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Every transcript entry of the main session, as JSON.
async fn transcript(h: &Harness) -> Vec<Value> {
    h.service.transcript_json().await
}

fn heartbeat_verdicts(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e["type"] == "custom" && e["customType"] == "openclaw:heartbeat")
        .map(|e| e["data"].clone())
        .collect()
}

/// The next heartbeat outcome that `pick` accepts (others are returned too, for counting).
async fn next_outcome(
    events: &mut broadcast::Receiver<HeartbeatEvent>,
    pick: impl Fn(&HeartbeatOutcome) -> bool,
) -> (HeartbeatOutcome, Vec<HeartbeatOutcome>) {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("a heartbeat outcome within 30 s")
            .expect("heartbeat events");
        assert_eq!(event.agent_id, "main");
        if pick(&event.outcome) {
            return (event.outcome, seen);
        }
        seen.push(event.outcome);
    }
}

/// Whether the messages `request` sent to the model hold `text`.
fn messages_hold(request: &agent_testkit::RecordedRequest, text: &str) -> bool {
    request.body["messages"].to_string().contains(text)
}

/// A harness whose default agent has a heartbeat `every` (a duration such as "1h").
async fn heartbeat_every(format: WireFormat, every: &str) -> Harness {
    let defaults = format!(r#", heartbeat: {{ every: "{every}" }}"#);
    Harness::start(format, &defaults, "").await
}

/// A first user turn in the main session, answered "Warm-up.".
async fn warm_up(h: &Harness) {
    h.fake.push(FakeReply::text("Warm-up."));
    run(h, "", "Hi.", pb::ChatType::Direct).await;
}

/// Writes `text` to the workspace file `name`.
fn write_workspace(h: &Harness, name: &str, text: &str) {
    std::fs::write(workspace_file(h, name), text).expect("workspace file");
}

fn workspace_file(h: &Harness, name: &str) -> std::path::PathBuf {
    h.service.path(&format!("state/workspace/{name}"))
}

/// MEMORY.md reaches the private main session's prompt, with the memory tools; a group, a
/// channel and a direct chat on a channel get neither (lesson L5).
#[tokio::test]
async fn memory_reaches_only_the_private_main_session() {
    let h = Harness::start(WireFormat::AnthropicMessages, "", "").await;
    write_workspace(&h, "MEMORY.md", "The user likes green tea.\n");
    h.fake.push_all([
        FakeReply::text("Hi."),
        FakeReply::text("Hi group."),
        FakeReply::text("Hi channel."),
        FakeReply::text("Hi stranger."),
    ]);
    run(&h, "", "Hello.", pb::ChatType::Direct).await;
    run(&h, "telegram:group:7", "Hello all.", pb::ChatType::Group).await;
    run(
        &h,
        "telegram:channel:9",
        "Hello channel.",
        pb::ChatType::Channel,
    )
    .await;
    run(
        &h,
        "telegram:direct:42",
        "Hello there.",
        pb::ChatType::Direct,
    )
    .await;

    let requests = h.fake.requests();
    assert_eq!(requests.len(), 4);
    let main = &requests[0].body;
    assert!(system_text(main).contains("The user likes green tea."));
    assert!(system_text(main).contains("## Memory Recall"));
    let tools = tool_names(main);
    assert!(
        tools.contains(&"memory_search".to_owned()) && tools.contains(&"memory_get".to_owned()),
        "{tools:?}"
    );
    for shared in &requests[1..] {
        let system = system_text(&shared.body);
        assert!(!system.contains("green tea"), "{system}");
        assert!(!system.contains("## Memory Recall"), "{system}");
        let tools = tool_names(&shared.body);
        assert!(!tools.iter().any(|t| t.starts_with("memory_")), "{tools:?}");
    }
}

/// The model searches memory, reads the cited lines, and answers; the tool results carry file
/// and line references and stay within the excerpt budget.
#[tokio::test]
async fn memory_search_and_get_answer_from_the_workspace() {
    let h = Harness::start(WireFormat::AnthropicMessages, "", "").await;
    write_workspace(
        &h,
        "MEMORY.md",
        "# Preferences\nThe user likes green tea.\n\n# Work\nShips on Fridays.\n",
    );
    std::fs::create_dir_all(workspace_file(&h, "memory")).unwrap();
    write_workspace(
        &h,
        "memory/2026-03-01.md",
        "Ordered matcha green tea from Uji.\n",
    );
    h.fake.push_all([
        FakeReply::tool_call("c1", "memory_search", json!({ "query": "green tea" })),
        FakeReply::tool_call("c2", "memory_get", json!({ "path": "MEMORY.md#L1-L2" })),
        FakeReply::text("You like green tea (MEMORY.md#L1-L2)."),
    ]);
    let events = run(&h, "", "What do I like to drink?", pb::ChatType::Direct).await;
    let results: Vec<pb::ToolFinished> = events_of!(&events, ToolFinished);
    assert_eq!(results.len(), 2, "{events:?}");
    assert!(!results[0].is_error, "{:?}", results[0]);
    // The whole short MEMORY.md is one chunk of the memory index.
    assert!(
        results[0].output.contains("MEMORY.md#L1-L5"),
        "{}",
        results[0].output
    );
    assert!(
        results[0].output.contains("Ranked by keyword search"),
        "{}",
        results[0].output
    );
    assert!(
        results[0].output.contains("memory/2026-03-01.md#L1-L1"),
        "{}",
        results[0].output
    );
    assert_eq!(
        results[1].output,
        "# Preferences\nThe user likes green tea.\n[Showing lines 1-2 of 5. Continue with from=3.]"
    );
    assert_eq!(
        final_of(&events).text,
        "You like green tea (MEMORY.md#L1-L2)."
    );
    let requests = h.fake.requests();
    assert!(messages_hold(&requests[1], "MEMORY.md#L1-L5"));
}

/// A heartbeat answered with HEARTBEAT_OK: recorded in the transcript, not delivered (no text
/// or block events, an empty final reply); an alert is delivered without the token. The
/// heartbeat turns send the same stable prompt prefix as the user's turn, and HEARTBEAT.md.
#[tokio::test]
async fn heartbeat_acknowledgements_are_recorded_not_delivered() {
    let h = heartbeat_every(WireFormat::AnthropicMessages, "1h").await;
    h.fake.push(FakeReply::text("Hello!"));
    let user = run(&h, "", "Hi.", pb::ChatType::Direct).await;
    let user_prefix = model_calls(&user, 1)[0].stable_prefix_sha256.clone();

    let mut watcher = watch(&h).await;
    let mut outcomes = h.service.runtime.runs().heartbeat_events();
    write_workspace(&h, "HEARTBEAT.md", CHECKLIST);
    h.fake.push(FakeReply::text("HEARTBEAT_OK").deltas(3));
    let outcome = h.service.runtime.runs().heartbeat_now("").await;
    assert_eq!(
        outcome,
        HeartbeatOutcome::Ran {
            run: 2,
            delivered: false,
            reply: String::new()
        }
    );
    let (published, _) = next_outcome(&mut outcomes, |_| true).await;
    assert_eq!(published, outcome);

    let events = read_until(&mut watcher, is_final_of(2)).await;
    let started = events_of!(&events, Started)
        .into_iter()
        .next()
        .expect("started");
    assert_eq!(started.run_id, "heartbeat-2");
    assert!(started.message_seqs.is_empty());
    let calls = model_calls(&events, 2);
    assert_eq!(calls[0].stable_prefix_sha256, user_prefix);
    assert!(!calls[0].prefix_changed, "{:?}", calls[0]);
    assert!(
        !events.iter().any(|e| matches!(
            e.event,
            Some(Event::TextDelta(_) | Event::Block(_) | Event::ThinkingDelta(_))
        )),
        "nothing of an acknowledgement streams: {events:?}"
    );
    let last = final_of(&events);
    assert_eq!(
        (last.text.as_str(), last.reply.as_str()),
        ("HEARTBEAT_OK", "")
    );

    // The bytes the model received: same stable block and tools, HEARTBEAT.md and the
    // heartbeat prompt on the heartbeat turn.
    let requests = h.fake.requests();
    let (first, beat) = (&requests[0].body, &requests[1].body);
    assert_eq!(stable_block(first), stable_block(beat));
    assert_eq!(tool_names(first), tool_names(beat));
    assert!(system_text(beat).contains("Check the inbox for urgent mail."));
    assert!(system_text(beat).contains("## Heartbeats"));
    assert!(
        beat["messages"]
            .to_string()
            .contains(DEFAULT_HEARTBEAT_PROMPT)
    );

    // An alert goes out.
    h.fake
        .push(FakeReply::text("The landlord emailed about the leak."));
    let alert = h.service.runtime.runs().heartbeat_now("").await;
    assert_eq!(
        alert,
        HeartbeatOutcome::Ran {
            run: 3,
            delivered: true,
            reply: "The landlord emailed about the leak.".into()
        }
    );
    let events = read_until(&mut watcher, is_final_of(3)).await;
    assert_eq!(
        final_of(&events).reply,
        "The landlord emailed about the leak."
    );
    assert_eq!(model_calls(&events, 3)[0].stable_prefix_sha256, user_prefix);

    let entries = transcript(&h).await;
    let roles: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(
        heartbeat_verdicts(&entries),
        [
            json!({ "outcome": "ack", "delivered": false }),
            json!({ "outcome": "alert", "delivered": true })
        ]
    );
}

/// An empty, template-only or missing HEARTBEAT.md skips the turn: no model call, no session.
#[tokio::test]
async fn an_empty_or_missing_heartbeat_file_skips_the_turn() {
    let h = heartbeat_every(WireFormat::ChatCompletions, "100ms").await;
    let mut outcomes = h.service.runtime.runs().heartbeat_events();
    // The seeded template has nothing to do.
    for _ in 0..2 {
        let (outcome, _) = next_outcome(&mut outcomes, |_| true).await;
        assert_eq!(outcome, HeartbeatOutcome::Skipped(SkipReason::EmptyFile));
    }
    write_workspace(&h, "HEARTBEAT.md", "# Checklist\n\n<!-- nothing yet -->\n");
    next_outcome(&mut outcomes, |o| {
        *o == HeartbeatOutcome::Skipped(SkipReason::EmptyFile)
    })
    .await;
    std::fs::remove_file(workspace_file(&h, "HEARTBEAT.md")).unwrap();
    next_outcome(&mut outcomes, |o| {
        *o == HeartbeatOutcome::Skipped(SkipReason::MissingFile)
    })
    .await;

    assert_eq!(h.fake.request_count(), 0);
    let sessions = h.service.list_sessions().await;
    assert!(sessions.is_empty(), "{sessions:?}");
}

/// A heartbeat that falls due while a user run is active waits for its own run: the user's
/// stream sees none of it, and the heartbeat's model call starts after the user's run ended.
/// Heartbeats due meanwhile are skipped, not piled up.
#[tokio::test]
async fn a_heartbeat_due_during_a_user_run_waits_its_turn() {
    let h = heartbeat_every(WireFormat::AnthropicMessages, "200ms").await;
    warm_up(&h).await;

    let mut watcher = watch(&h).await;
    h.fake
        .push(FakeReply::text("Here is the report.").delay(Duration::from_millis(1500)));
    let mut user = open_run(&h, "", "Write the report.", pb::ChatType::Direct).await;
    read_until(&mut user, |e| matches!(e.event, Some(Event::ModelCall(_)))).await;

    let mut outcomes = h.service.runtime.runs().heartbeat_events();
    // Spare acknowledgements for heartbeats that fall due before the file is emptied again.
    h.fake
        .push_all((0..4).map(|_| FakeReply::text("HEARTBEAT_OK")));
    write_workspace(&h, "HEARTBEAT.md", CHECKLIST);
    let (ran, before) =
        next_outcome(&mut outcomes, |o| matches!(o, HeartbeatOutcome::Ran { .. })).await;
    write_workspace(&h, "HEARTBEAT.md", "");
    assert_eq!(
        ran,
        HeartbeatOutcome::Ran {
            run: 3,
            delivered: false,
            reply: String::new()
        }
    );
    assert!(
        before.contains(&HeartbeatOutcome::Skipped(SkipReason::StillRunning)),
        "heartbeats due while one waits are skipped: {before:?}"
    );

    let user_events = read_until(&mut user, |_| false).await;
    assert_eq!(final_of(&user_events).text, "Here is the report.");
    assert!(user_events.iter().all(|e| e.run == 2), "{user_events:?}");

    let events = read_until(&mut watcher, is_final_of(3)).await;
    let user_final = events.iter().position(is_final_of(2)).expect("user final");
    let beat_started = events
        .iter()
        .position(|e| e.run == 3 && matches!(e.event, Some(Event::Started(_))))
        .expect("heartbeat started");
    assert!(user_final < beat_started, "no interleaving: {events:?}");
    assert_eq!(
        model_calls(&events, 3)[0].stable_prefix_sha256,
        model_calls(&events, 2)[0].stable_prefix_sha256
    );
    let requests = h.fake.requests();
    assert!(messages_hold(&requests[1], "Write the report."));
    assert!(messages_hold(&requests[2], DEFAULT_HEARTBEAT_PROMPT));
}

/// A message that arrives while a heartbeat runs is not steered into it (its reply could be
/// held back): it waits for its own run, even in steer mode.
#[tokio::test]
async fn a_message_during_a_heartbeat_gets_its_own_run() {
    let h = heartbeat_every(WireFormat::ChatCompletions, "1h").await;
    warm_up(&h).await;
    write_workspace(&h, "HEARTBEAT.md", CHECKLIST);
    h.fake.push_all([
        FakeReply::text("HEARTBEAT_OK").delay(Duration::from_millis(800)),
        FakeReply::text("Nothing new since this morning."),
    ]);
    let mut watcher = watch(&h).await;
    let runtime = std::sync::Arc::clone(&h.service.runtime);
    let beat = tokio::spawn(async move { runtime.runs().heartbeat_now("").await });
    read_until(&mut watcher, |e| {
        matches!(e.event, Some(Event::ModelCall(_)))
    })
    .await;

    let disposition = call!(
        h.service,
        send,
        pb::SendRequest {
            message: "What's new?".into(),
            channel: telegram_in(pb::ChatType::Direct),
            queue_mode: pb::QueueMode::Steer as i32,
            ..Default::default()
        }
    )
    .disposition
    .expect("disposition");
    assert_eq!(disposition.outcome(), Outcome::Followup, "{disposition:?}");
    assert_eq!(disposition.run, 3);

    assert!(matches!(
        beat.await.expect("heartbeat task"),
        HeartbeatOutcome::Ran {
            run: 2,
            delivered: false,
            ..
        }
    ));
    let events = read_until(&mut watcher, is_final_of(3)).await;
    let answered: Vec<pb::RunEvent> = events.into_iter().filter(|e| e.run == 3).collect();
    assert_eq!(final_of(&answered).text, "Nothing new since this morning.");
    let requests = h.fake.requests();
    assert!(!messages_hold(&requests[1], "What's new?"));
    assert!(messages_hold(&requests[2], "What's new?"));
}

/// P-33, R-18 (for the default agent): with `includeSystemPromptSection: false` normal turns carry neither HEARTBEAT.md nor
/// the Heartbeats section, heartbeat turns still see HEARTBEAT.md, and the stable prefix is the
/// same on both. With heartbeats off there is neither, and no heartbeat runs.
#[tokio::test]
async fn heartbeat_prompt_section_follows_the_config() {
    let h = Harness::start(
        WireFormat::AnthropicMessages,
        r#", heartbeat: { every: "1h", includeSystemPromptSection: false }"#,
        "",
    )
    .await;
    write_workspace(&h, "HEARTBEAT.md", "- Water the plants.\n");
    h.fake
        .push_all([FakeReply::text("Hi."), FakeReply::text("HEARTBEAT_OK")]);
    run(&h, "", "Hi.", pb::ChatType::Direct).await;
    assert!(matches!(
        h.service.runtime.runs().heartbeat_now("").await,
        HeartbeatOutcome::Ran {
            delivered: false,
            ..
        }
    ));
    let requests = h.fake.requests();
    let (normal, beat) = (&requests[0].body, &requests[1].body);
    assert!(!system_text(normal).contains("Water the plants"));
    assert!(!system_text(normal).contains("## Heartbeats"));
    assert!(system_text(beat).contains("Water the plants"));
    assert!(!system_text(beat).contains("## Heartbeats"));
    assert_eq!(stable_block(normal), stable_block(beat));

    let off = heartbeat_every(WireFormat::AnthropicMessages, "0m").await;
    std::fs::write(
        workspace_file(&off, "HEARTBEAT.md"),
        "- Water the plants.\n",
    )
    .unwrap();
    off.fake.push(FakeReply::text("Hi."));
    run(&off, "", "Hi.", pb::ChatType::Direct).await;
    let system = system_text(&off.fake.requests()[0].body);
    assert!(!system.contains("Water the plants") && !system.contains("## Heartbeats"));
    assert_eq!(
        off.service.runtime.runs().heartbeat_now("").await,
        HeartbeatOutcome::Skipped(SkipReason::Disabled)
    );
    assert_eq!(off.fake.request_count(), 1);
}

/// The scheduler stops when shutdown begins.
#[tokio::test]
async fn the_scheduler_stops_at_shutdown() {
    let h = heartbeat_every(WireFormat::ChatCompletions, "100ms").await;
    let mut outcomes = h.service.runtime.runs().heartbeat_events();
    next_outcome(&mut outcomes, |_| true).await;
    h.service.runtime.begin_shutdown();
    // A beat already on its way may still report; after that, nothing.
    tokio::time::sleep(Duration::from_millis(400)).await;
    while outcomes.try_recv().is_ok() {}
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        matches!(
            outcomes.try_recv(),
            Err(broadcast::error::TryRecvError::Empty)
        ),
        "no heartbeats after shutdown began"
    );
    assert_eq!(
        h.service.runtime.runs().heartbeat_now("").await,
        HeartbeatOutcome::Skipped(SkipReason::ShuttingDown)
    );
}

//! Messages into busy sessions, block streaming and sender allowlists over
//! gRPC with concurrent clients (R-11, R-12, R-14, lesson L11).

use std::time::Duration;

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::disposition::Outcome;
use pb::run_event::Event;
use serde_json::{Value, json};
use tonic::Code;

use super::calls::{call, refusal};
use super::harness::{Harness, block_streaming};
use super::run_events::{self, assert_interrupts, events_of, find_error, find_final, telegram};

fn send_request(message: &str, mode: pb::QueueMode) -> pb::SendRequest {
    pb::SendRequest {
        message: message.into(),
        channel: telegram(),
        queue_mode: mode as i32,
        ..Default::default()
    }
}

async fn send(h: &Harness, message: &str, mode: pb::QueueMode) -> pb::Disposition {
    call!(h.service, send, send_request(message, mode))
        .disposition
        .expect("disposition")
}

fn run_request(message: &str, mode: pb::QueueMode) -> pb::RunRequest {
    pb::RunRequest {
        message: message.into(),
        channel: telegram(),
        queue_mode: mode as i32,
        ..Default::default()
    }
}

type EventStream = tonic::Streaming<pb::RunEvent>;

async fn open_run(h: &Harness, request: pb::RunRequest) -> EventStream {
    h.service.open_run(request).await
}

/// `reply` streamed in `deltas` parts 120 ms apart: slow enough for a message to arrive while
/// it streams.
fn streamed_slowly(reply: FakeReply, deltas: usize) -> FakeReply {
    reply.deltas(deltas).frame_delay(Duration::from_millis(120))
}

/// Opens a Run of `message` from the Telegram chat, queued as `mode` says.
async fn open(h: &Harness, message: &str, mode: pb::QueueMode) -> EventStream {
    open_run(h, run_request(message, mode)).await
}

/// Reads until `stop` matches an event (that one included) or the stream ends.
async fn read_until(stream: &mut EventStream, stop: impl Fn(&Event) -> bool) -> Vec<pb::RunEvent> {
    run_events::read_until(stream, |e| e.event.as_ref().is_some_and(&stop)).await
}

async fn read_all(stream: &mut EventStream) -> Vec<pb::RunEvent> {
    read_until(stream, |_| false).await
}

fn count(events: &[pb::RunEvent], pick: impl Fn(&Event) -> bool) -> usize {
    events
        .iter()
        .filter(|e| e.event.as_ref().is_some_and(&pick))
        .count()
}

/// The session's message entries as (role, message JSON).
async fn transcript(h: &Harness) -> Vec<(String, Value)> {
    h.service.transcript_messages().await
}

fn roles(entries: &[(String, Value)]) -> Vec<&str> {
    entries.iter().map(|(r, _)| r.as_str()).collect()
}

fn user_texts(entries: &[(String, Value)]) -> Vec<String> {
    entries
        .iter()
        .filter(|(r, _)| r == "user")
        .map(|(_, m)| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

async fn wait_idle(h: &Harness) {
    for _ in 0..1500 {
        if h.service.runtime.sessions().manager().all_idle() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the session never became idle");
}

/// Steer: the message waits for the whole tool batch, then goes in as a user
/// message before the next model call; the tool call is not skipped.
#[tokio::test]
async fn a_steer_joins_after_the_tool_batch_before_the_next_call() {
    let h = Harness::start(WireFormat::AnthropicMessages, "", "").await;
    h.fake.push_all([
        streamed_slowly(
            FakeReply::tool_call("call-1", "read", json!({ "path": "AGENTS.md" }))
                .with_text("Looking at the instructions."),
            5,
        ),
        FakeReply::text("Read them, and noted the milk."),
    ]);
    let mut first = open(&h, "Read your instructions.", pb::QueueMode::Unspecified).await;
    read_until(&mut first, |e| matches!(e, Event::ModelCall(_))).await;

    let steered = send(&h, "Also: remember the milk.", pb::QueueMode::Steer).await;
    assert_eq!(steered.outcome(), Outcome::Steered, "{steered:?}");
    assert_eq!((steered.run, steered.seq), (1, 2));

    let events = read_all(&mut first).await;
    assert_eq!(
        find_final(&events).map(|f| f.text).as_deref(),
        Some("Read them, and noted the milk.")
    );
    let finished = events_of!(&events, ToolFinished)
        .into_iter()
        .next()
        .expect("the tool call ran");
    assert!(!finished.is_error, "{finished:?}");

    // The second model request carries the tool result, then the steer.
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 2);
    let body = requests[1].body["messages"].to_string();
    let result_at = body.find("tool_result").expect("tool result sent");
    let steer_at = body.find("remember the milk").expect("steer sent");
    assert!(result_at < steer_at, "{body}");
    assert!(!requests[0].body["messages"].to_string().contains("milk"));

    let entries = transcript(&h).await;
    assert_eq!(
        roles(&entries),
        ["user", "assistant", "toolResult", "user", "assistant"]
    );
}

/// A steer that arrives while the last model call streams is not dropped:
/// the run makes another model turn for it.
#[tokio::test]
async fn a_late_steer_gets_another_model_turn() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push_all([
        streamed_slowly(
            FakeReply::text("Working on the summary, one moment please."),
            6,
        ),
        FakeReply::text("Added the addendum too."),
    ]);
    let mut first = open(&h, "Summarize.", pb::QueueMode::Unspecified).await;
    read_until(&mut first, |e| matches!(e, Event::TextDelta(_))).await;
    let steered = send(&h, "Addendum: include dates.", pb::QueueMode::Steer).await;
    assert_eq!(steered.outcome(), Outcome::Steered, "{steered:?}");

    let events = read_all(&mut first).await;
    let last = find_final(&events).expect("final");
    assert_eq!(last.text, "Added the addendum too.");
    assert_eq!(last.steps, 2, "one more model turn for the late steer");
    assert!(
        h.fake.requests()[1].body["messages"]
            .to_string()
            .contains("include dates")
    );
    let entries = transcript(&h).await;
    assert_eq!(roles(&entries), ["user", "assistant", "user", "assistant"]);
}

/// Follow-up: a separate later run, visible on WatchSession.
#[tokio::test]
async fn a_followup_runs_after_the_active_run() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push_all([
        streamed_slowly(FakeReply::text("First answer, slowly."), 4),
        FakeReply::text("Second answer."),
    ]);
    let mut first = open(&h, "First question.", pb::QueueMode::Unspecified).await;
    read_until(&mut first, |e| matches!(e, Event::Started(_))).await;
    let mut watch = h.service.watch().await;

    let queued = send(&h, "Second question.", pb::QueueMode::Followup).await;
    assert_eq!(queued.outcome(), Outcome::Followup, "{queued:?}");
    assert_eq!((queued.run, queued.ahead), (2, 1));

    let one = read_all(&mut first).await;
    assert_eq!(
        find_final(&one).map(|f| f.text).as_deref(),
        Some("First answer, slowly.")
    );
    assert!(
        one.iter().all(|e| e.run == 1),
        "the Run stream follows run 1 only"
    );

    let watched = read_until(
        &mut watch,
        |e| matches!(e, Event::Final(f) if f.text == "Second answer."),
    )
    .await;
    let started: Vec<(u64, Vec<u64>)> = watched
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::Started(s)) => Some((e.run, s.message_seqs.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(started, [(2, vec![2])]);
    let entries = transcript(&h).await;
    assert_eq!(
        user_texts(&entries),
        ["First question.", "Second question."]
    );
    assert_eq!(roles(&entries), ["user", "assistant", "user", "assistant"]);
}

/// Collect: messages within the quiet window become one run.
#[tokio::test]
async fn collected_messages_become_one_turn_after_the_quiet_window() {
    let quiet_window = "messages: { queue: { debounceMs: 300 } },";
    let h = Harness::start(WireFormat::ChatCompletions, "", quiet_window).await;
    h.fake.push(FakeReply::text("Three things noted."));
    let mut dispositions = Vec::new();
    for text in ["one: eggs", "two: flour", "three: sugar"] {
        dispositions.push(send(&h, text, pb::QueueMode::Collect).await);
    }
    assert!(
        dispositions
            .iter()
            .all(|d| d.outcome() == Outcome::Collected && d.run == 1),
        "{dispositions:?}"
    );
    wait_idle(&h).await;
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 1, "one coalesced model call");
    let body = requests[0].body["messages"].to_string();
    for text in ["eggs", "flour", "sugar"] {
        assert!(body.contains(text), "{body}");
    }
    let entries = transcript(&h).await;
    assert_eq!(roles(&entries), ["user", "user", "user", "assistant"]);
}

/// Collect overflow with `drop: "new"` rejects explicitly, and the rejected
/// message is written nowhere.
#[tokio::test]
async fn collect_overflow_rejects_when_drop_is_new() {
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        r#"messages: { queue: { debounceMs: 400, cap: 2, drop: "new" } },"#,
    )
    .await;
    h.fake.push(FakeReply::text("Two noted."));
    let a = send(&h, "alpha", pb::QueueMode::Collect).await;
    let b = send(&h, "bravo", pb::QueueMode::Collect).await;
    let c = send(&h, "charlie", pb::QueueMode::Collect).await;
    assert_eq!(
        [a.outcome(), b.outcome(), c.outcome()],
        [Outcome::Collected, Outcome::Collected, Outcome::Rejected]
    );
    assert!(c.reason.contains("cap"), "{}", c.reason);
    wait_idle(&h).await;
    assert_eq!(user_texts(&transcript(&h).await), ["alpha", "bravo"]);
}

/// Interrupt: the active run is aborted, its in-flight tool call gets an
/// interrupted result, and the newest message runs next.
#[tokio::test]
async fn an_interrupt_aborts_the_run_and_runs_the_newest_message() {
    // The sleep must really run: exec approvals refuse every command without a policy.
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        r#"tools: { exec: { security: "full", ask: "off" } },"#,
    )
    .await;
    h.fake.push_all([
        FakeReply::tool_call("call-1", "exec", json!({ "command": "sleep 30" })),
        FakeReply::text("Stopped. What next?"),
    ]);
    let began = std::time::Instant::now();
    let mut first = open(&h, "Wait half a minute.", pb::QueueMode::Unspecified).await;
    read_until(&mut first, |e| matches!(e, Event::ToolStarted(_))).await;

    let mut second = open(&h, "Stop that.", pb::QueueMode::Interrupt).await;
    assert_interrupts(&mut second, 2, 1).await;
    let one = read_all(&mut first).await;
    let finished = events_of!(&one, ToolFinished)
        .into_iter()
        .next()
        .expect("the in-flight call got a result");
    assert!(
        finished.is_error && finished.output.to_lowercase().contains("interrupted"),
        "{finished:?}"
    );
    assert_eq!(find_error(&one).map(|e| e.code).as_deref(), Some("ABORTED"));

    let two = read_all(&mut second).await;
    assert_eq!(
        find_final(&two).map(|f| f.text).as_deref(),
        Some("Stopped. What next?")
    );
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "the sleep was cut short"
    );

    let entries = transcript(&h).await;
    assert_eq!(
        roles(&entries),
        ["user", "assistant", "toolResult", "user", "assistant"]
    );
    assert_eq!(entries[2].1["isError"], true);
}

/// The queue mode comes from the message, then the session's `/queue`, then
/// `messages.queue.byChannel`, then `messages.queue.mode`, then steer.
#[tokio::test]
async fn queue_mode_precedence_and_the_queue_command() {
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        r#"messages: { queue: { mode: "followup", byChannel: { telegram: "collect" } } },"#,
    )
    .await;
    h.fake
        .set_instant(FakeReply::text("ok"), FakeReply::text("ok"));
    let mode = |d: &pb::Disposition| d.queue_mode();

    let by_channel = send(&h, "hello", pb::QueueMode::Unspecified).await;
    assert_eq!(mode(&by_channel), pb::QueueMode::Collect);
    let mut request = send_request("no channel", pb::QueueMode::Unspecified);
    request.channel = None;
    let default_mode = call!(h.service, send, request);
    assert_eq!(
        default_mode.disposition.map(|d| d.queue_mode()),
        Some(pb::QueueMode::Followup)
    );

    let command = send(&h, "/queue interrupt", pb::QueueMode::Unspecified).await;
    assert_eq!(command.outcome(), Outcome::Command);
    assert!(command.reason.contains("interrupt"), "{}", command.reason);
    let session_mode = send(&h, "now", pb::QueueMode::Unspecified).await;
    assert_eq!(mode(&session_mode), pb::QueueMode::Interrupt);
    let explicit = send(&h, "explicit", pb::QueueMode::Steer).await;
    assert_eq!(mode(&explicit), pb::QueueMode::Steer);

    let cleared = send(&h, "/queue default", pb::QueueMode::Unspecified).await;
    assert_eq!(cleared.outcome(), Outcome::Command);
    let again = send(&h, "after", pb::QueueMode::Unspecified).await;
    assert_eq!(mode(&again), pb::QueueMode::Collect);

    let bad = refusal!(
        h.service,
        send,
        send_request("/queue sideways", pb::QueueMode::Unspecified)
    );
    assert_eq!(bad.code(), Code::InvalidArgument);
    wait_idle(&h).await;
    // Commands are not messages for the model.
    assert!(
        user_texts(&transcript(&h).await)
            .iter()
            .all(|t| !t.starts_with("/queue"))
    );
}

/// Many clients at once into one session, in every mode but interrupt:
/// every message lands in the transcript exactly once.
#[tokio::test]
async fn concurrent_clients_each_message_lands_exactly_once() {
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        "messages: { queue: { debounceMs: 50 } },",
    )
    .await;
    h.fake.set_instant(
        FakeReply::text("ack")
            .deltas(3)
            .frame_delay(Duration::from_millis(5)),
        FakeReply::text("ack"),
    );
    let modes = [
        pb::QueueMode::Steer,
        pb::QueueMode::Followup,
        pb::QueueMode::Collect,
        pb::QueueMode::Unspecified,
    ];
    let mut tasks = Vec::new();
    for client_no in 0..8 {
        let mut client = h.service.client().await;
        tasks.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for i in 0..4 {
                let text = format!("[c{client_no}-{i}]");
                let response = client
                    .send(send_request(&text, modes[(client_no + i) % modes.len()]))
                    .await
                    .expect("send")
                    .into_inner();
                outcomes.push((text, response.disposition.expect("d").outcome()));
            }
            outcomes
        }));
    }
    let mut sent = Vec::new();
    for task in tasks {
        sent.extend(task.await.expect("client"));
    }
    assert!(
        sent.iter().all(|(_, o)| *o != Outcome::Rejected),
        "{sent:?}"
    );
    wait_idle(&h).await;
    let users = user_texts(&transcript(&h).await);
    for (text, _) in &sent {
        let n = users.iter().filter(|u| u.as_str() == text).count();
        assert_eq!(n, 1, "{text} appears {n} times in {users:?}");
    }
    assert_eq!(users.len(), sent.len());
}

fn long_reply() -> String {
    let mut text = String::new();
    for i in 0..6 {
        text.push_str(&format!(
            "Paragraph {i} explains one more step of the plan in plain words, so the reader can follow along without scrolling back. "
        ));
        text.push_str("It has a second sentence too, for good measure.\n\n");
    }
    text.push_str("```rust\n");
    for i in 0..14 {
        text.push_str(&format!(
            "let value_{i} = compute_something_long({i}, \"argument\");\n"
        ));
    }
    text.push_str("```\n\nSee https://example.com/docs/a/really/long/path/that/must/not/be/split?x=1 for more.\n\nThe end.");
    text
}

fn fence_lines(block: &str) -> usize {
    block
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count()
}

fn content(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect()
}

/// Block streaming on (Telegram follows `blockStreamingDefault: "on"`):
/// blocks within bounds, fences balanced, the link whole, nothing lost or
/// repeated, and the final reply carries nothing the blocks already did.
#[tokio::test]
async fn block_streaming_sends_readable_blocks_and_no_repeat() {
    let h = Harness::start(
        WireFormat::AnthropicMessages,
        &block_streaming(200, 400),
        "",
    )
    .await;
    let text = long_reply();
    h.fake.push(FakeReply::text(text.clone()).deltas(60));
    let mut stream = open(&h, "Explain the plan.", pb::QueueMode::Unspecified).await;
    let events = read_all(&mut stream).await;
    let blocks: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::Block(b)) => Some(b.text.clone()),
            _ => None,
        })
        .collect();
    assert!(blocks.len() >= 4, "{blocks:#?}");
    for block in &blocks {
        assert!(
            block.chars().count() <= 400,
            "{} chars: {block}",
            block.chars().count()
        );
        assert_eq!(fence_lines(block) % 2, 0, "unbalanced fence in {block}");
    }
    assert!(
        blocks.iter().any(|b| b
            .contains("https://example.com/docs/a/really/long/path/that/must/not/be/split?x=1")),
        "the link was split: {blocks:#?}"
    );
    let streamed: String = blocks.iter().map(|b| content(b)).collect();
    assert_eq!(streamed, content(&text), "nothing lost, nothing added");
    let last = find_final(&events).expect("final");
    assert_eq!(last.text, text);
    assert_eq!(last.reply, "", "the final reply repeats nothing");
    assert_eq!(last.blocks as usize, blocks.len());
    // Blocks are indexed in order.
    let indexes: Vec<u32> = events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::Block(b)) => Some(b.index),
            _ => None,
        })
        .collect();
    assert_eq!(indexes, (0..blocks.len() as u32).collect::<Vec<_>>());
}

/// Off by default, and off for a channel that did not enable it even when
/// the default is on: no blocks, the final reply is the whole text.
#[tokio::test]
async fn block_streaming_is_off_unless_enabled_for_the_channel() {
    for (defaults, channel) in [
        ("", "telegram"),
        (r#", blockStreamingDefault: "on""#, "discord"),
    ] {
        let h = Harness::start(WireFormat::ChatCompletions, defaults, "").await;
        let text = long_reply();
        h.fake.push(FakeReply::text(text.clone()).deltas(20));
        let mut request = run_request("Explain.", pb::QueueMode::Unspecified);
        if let Some(c) = request.channel.as_mut() {
            c.channel = channel.into();
        }
        let events = read_all(&mut open_run(&h, request).await).await;
        assert_eq!(
            count(&events, |e| matches!(e, Event::Block(_))),
            0,
            "{channel}"
        );
        let last = find_final(&events).expect("final");
        assert_eq!((last.reply.as_str(), last.blocks), (text.as_str(), 0));
    }
}

/// `text_end` flushes the text before a tool call starts (the summary comes
/// after the text it follows); `message_end` holds blocks until the message
/// is complete.
#[tokio::test]
async fn block_boundaries_follow_the_break_setting() {
    let h = Harness::start(
        WireFormat::AnthropicMessages,
        r#", blockStreamingDefault: "on""#,
        "",
    )
    .await;
    h.fake.push_all([
        FakeReply::tool_call("call-1", "read", json!({ "path": "AGENTS.md" }))
            .with_text("Short preface before the tool.")
            .deltas(3),
        FakeReply::text("Done."),
    ]);
    let events = read_all(&mut open(&h, "Go.", pb::QueueMode::Unspecified).await).await;
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::Block(_)) => Some("block"),
            Some(Event::ToolStarted(_)) => Some("tool"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["block", "tool", "block"], "{events:#?}");

    let h = Harness::start(
        WireFormat::AnthropicMessages,
        r#", blockStreamingDefault: "on", blockStreamingBreak: "message_end", blockStreamingChunk: { minChars: 100, maxChars: 300 }"#,
        "",
    )
    .await;
    h.fake.push(FakeReply::text(long_reply()).deltas(30));
    let events = read_all(&mut open(&h, "Go.", pb::QueueMode::Unspecified).await).await;
    let last_delta = events
        .iter()
        .rposition(|e| matches!(e.event, Some(Event::TextDelta(_))))
        .expect("deltas");
    let first_block = events
        .iter()
        .position(|e| matches!(e.event, Some(Event::Block(_))))
        .expect("blocks");
    assert!(
        first_block > last_delta,
        "message_end holds blocks until the message ends"
    );
    assert!(count(&events, |e| matches!(e, Event::Block(_))) >= 4);
}

/// R-14 through Send: PERMISSION_DENIED and nothing recorded.
#[tokio::test]
async fn send_from_a_sender_outside_the_allowlist_is_refused() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let mut request = send_request("let me in", pb::QueueMode::Followup);
    if let Some(c) = request.channel.as_mut() {
        c.sender_id = "7".into();
    }
    let status = refusal!(h.service, send, request);
    assert_eq!(status.code(), Code::PermissionDenied);
    let sessions = h.service.list_sessions().await;
    assert!(sessions.is_empty(), "{sessions:?}");
    assert_eq!(h.fake.request_count(), 0);
}

/// Shutdown with messages still queued: the active run finishes within the
/// drain window, the queued messages are saved in the transcript
/// (unanswered) and their clients get UNAVAILABLE, so nothing is lost.
#[tokio::test]
async fn shutdown_saves_queued_messages() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(
        FakeReply::text("Finishing this one.")
            .deltas(4)
            .frame_delay(Duration::from_millis(150)),
    );
    let mut first = open(&h, "First.", pb::QueueMode::Unspecified).await;
    read_until(&mut first, |e| matches!(e, Event::Started(_))).await;
    let mut waiting = open(&h, "Queued A.", pb::QueueMode::Followup).await;
    let queued = send(&h, "Queued B.", pb::QueueMode::Followup).await;
    assert_eq!(queued.outcome(), Outcome::Followup);

    let (one, two, (dir, fake, _prompt)) =
        tokio::join!(read_all(&mut first), read_all(&mut waiting), h.stop());
    assert!(
        find_final(&one).is_some(),
        "the active run finished: {one:?}"
    );
    let error = find_error(&two).expect("the queued client was told");
    assert_eq!(error.code, "UNAVAILABLE");
    assert!(error.message.contains("saved"), "{}", error.message);
    assert_eq!(fake.request_count(), 1);

    // Reopen the state: both queued messages are in the transcript.
    let service = super::harness::Service::start_in(dir, None).await;
    let users = recovered_user_texts(&service.transcript_entries().await);
    assert_eq!(users, ["First.", "Queued A.", "Queued B."]);
}

/// A run the stop cuts short (its reply outlasts the drain window) is not told it was
/// "interrupted by a newer message": if its client still hears, it gets UNAVAILABLE saying
/// the service is shutting down; either way the text it had streamed is kept in the
/// transcript, marked as cut short by the stop.
#[tokio::test]
async fn a_run_cut_by_a_stop_says_so_and_keeps_what_it_said() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(
        FakeReply::text(
            "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron.",
        )
        .deltas(30)
        .frame_delay(Duration::from_millis(1000)),
    );
    let mut first = open(&h, "Tell a long story.", pb::QueueMode::Unspecified).await;
    read_until(&mut first, |e| matches!(e, Event::TextDelta(_))).await;
    let (events, (dir, _fake, _prompt)) = tokio::join!(read_all(&mut first), h.stop());
    if let Some(error) = find_error(&events) {
        assert_eq!(error.code, "UNAVAILABLE", "{error:?}");
        assert!(error.message.contains("shutting down"), "{error:?}");
    }
    assert!(
        find_final(&events).is_none(),
        "the reply outlasts the drain: {events:?}"
    );

    let service = super::harness::Service::start_in(dir, None).await;
    let kept: Vec<Value> = service
        .transcript_entries()
        .await
        .into_iter()
        .filter(|e| e.role == "assistant")
        .map(|e| serde_json::from_str(&e.json).expect("json"))
        .collect();
    let last = kept.last().expect("the cut reply is kept");
    assert_eq!(last["message"]["stopReason"], "aborted", "{last}");
    let text = last["message"]["content"].to_string();
    assert!(text.contains("Alpha"), "{last}");
    assert!(
        last["message"]["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("agent-service began shutting down")),
        "{last}"
    );
}

/// A crash after messages were acknowledged but before they reached the
/// transcript (simulated: the journal holds them, as the killed process left
/// it, with a torn last line): the next start writes them into the
/// transcript, unanswered, and skips the one that did get written.
#[tokio::test]
async fn acknowledged_messages_survive_a_crash_through_the_journal() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(FakeReply::text("First answer."));
    let events =
        read_all(&mut open(&h, "Written before the crash.", pb::QueueMode::Unspecified).await)
            .await;
    assert!(find_final(&events).is_some());
    let session = h.service.session().await;
    let (dir, fake, _prompt) = h.stop().await;
    let journal = dir.path().join(format!(
        "state/agents/main/sessions/{}.queue",
        session.session_id
    ));
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis(),
    )
    .expect("ms");
    let lines = [
        // Acknowledged and written before the crash (its done mark was lost).
        json!({ "accepted": { "seq": 1, "text": "Written before the crash.", "at": now - 60_000 } }),
        json!({ "accepted": { "seq": 2, "text": "Queued follow-up A.", "at": now } }),
        json!({ "accepted": { "seq": 3, "text": "Queued follow-up B.", "at": now } }),
        json!({ "done": [3] }),
        json!({ "accepted": { "seq": 4, "text": "Queued follow-up C.", "at": now } }),
    ];
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.push_str("{\"accepted\":{\"seq\":5,\"te"); // torn: never acknowledged
    std::fs::write(&journal, text).expect("journal");

    let service = super::harness::Service::start_in(dir, None).await;
    let users = recovered_user_texts(&service.transcript_entries().await);
    assert_eq!(
        users,
        [
            "Written before the crash.",
            "Queued follow-up A.",
            "Queued follow-up C."
        ]
    );
    assert_eq!(
        std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(1),
        0,
        "journal emptied"
    );
    drop(fake);
}

fn recovered_user_texts(entries: &[pb::TranscriptEntry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.role == "user")
        .map(|e| {
            let entry: Value = serde_json::from_str(&e.json).expect("json");
            entry["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

async fn service_status(service: &super::harness::Service) -> pb::ServiceStatus {
    call!(service, get_service_status, pb::GetServiceStatusRequest {})
}

/// A service whose main session has answered one message ("Before."), and that session.
async fn answered_once() -> (Harness, pb::Session) {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(FakeReply::text("First answer."));
    let events = read_all(&mut open(&h, "Before.", pb::QueueMode::Unspecified).await).await;
    assert!(find_final(&events).is_some());
    let session = h.service.session().await;
    (h, session)
}

/// A journal holding an acknowledged message that no transcript line can hold (a process
/// from before the size check acknowledged it): recovery sets it aside in the quarantine
/// file with the reason, saves the others, reports the repair in GetServiceStatus, and the
/// session keeps running, instead of every later call on it failing RESOURCE_EXHAUSTED.
#[tokio::test]
async fn a_journaled_message_no_transcript_line_can_hold_is_quarantined_and_the_session_runs() {
    let (h, session) = answered_once().await;
    assert!(service_status(&h.service).await.repairs.is_empty());
    let (dir, fake, _prompt) = h.stop().await;
    let sessions = dir.path().join("state/agents/main/sessions");
    let journal = sessions.join(format!("{}.queue", session.session_id));
    let poison = "\u{1}".repeat(3 * 1024 * 1024);
    let now = super::harness::now_ms();
    let lines = [
        json!({ "accepted": { "seq": 1, "text": "Saved after the crash.", "at": now } }),
        json!({ "accepted": { "seq": 2, "text": poison, "at": now } }),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&journal, text).expect("journal");

    let service = super::harness::Service::start_in(dir, None).await;
    assert_eq!(
        recovered_user_texts(&service.transcript_entries().await),
        ["Before.", "Saved after the crash."]
    );
    let quarantine = sessions.join(format!("{}.queue.quarantined", session.session_id));
    let kept = std::fs::read_to_string(&quarantine).expect("quarantine file");
    let line: Value = serde_json::from_str(kept.trim_end()).expect("one JSON line");
    assert_eq!(line["accepted"]["seq"], 2);
    assert_eq!(
        line["accepted"]["text"].as_str().map(str::len),
        Some(poison.len())
    );
    assert!(
        line["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("transcript line"),
        "{}",
        line["reason"]
    );
    assert_eq!(
        std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(1),
        0,
        "journal emptied"
    );
    let status = service_status(&service).await;
    let repair = status
        .repairs
        .iter()
        .find(|r| r.kind() == pb::StateRepairKind::MessagesQuarantined)
        .unwrap_or_else(|| panic!("no quarantine reported: {status:?}"));
    assert_eq!(repair.session_id, session.session_id);
    assert_eq!(repair.file, quarantine.display().to_string());
    assert!(
        repair.detail.contains("1 acknowledged"),
        "{}",
        repair.detail
    );

    // The session is not wedged: the next message runs and is answered.
    fake.push(FakeReply::text("Still here."));
    let mut stream = service
        .open_run(run_request("Next.", pb::QueueMode::Unspecified))
        .await;
    let mut finished = None;
    while let Some(event) = stream.message().await.expect("event") {
        if let Some(Event::Final(f)) = event.event {
            finished = Some(f.text);
        }
    }
    assert_eq!(finished.as_deref(), Some("Still here."));
    drop(fake);
}

/// A crash that left both an unreadable session index and acknowledged messages in a
/// journal: the index is rebuilt first, then the journal's messages reach the transcript
/// of the same session (same id), and the rebuild is reported in GetServiceStatus.
#[tokio::test]
async fn journaled_messages_are_recovered_over_a_corrupt_index() {
    let (h, session) = answered_once().await;
    let (dir, fake, _prompt) = h.stop().await;
    let sessions = dir.path().join("state/agents/main/sessions");
    let now = super::harness::now_ms();
    let lines = [
        json!({ "accepted": { "seq": 1, "text": "Pending A.", "at": now } }),
        json!({ "accepted": { "seq": 2, "text": "Pending B.", "at": now } }),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(sessions.join(format!("{}.queue", session.session_id)), text).expect("journal");
    std::fs::write(sessions.join("sessions.json"), b"\x8f\x00\xffnot json").expect("corrupt");

    let service = super::harness::Service::start_in(dir, None).await;
    let now_session = call!(
        service,
        get_session,
        pb::GetSessionRequest { session: None }
    );
    assert_eq!(now_session.session_id, session.session_id);
    assert_eq!(
        recovered_user_texts(&service.transcript_entries().await),
        ["Before.", "Pending A.", "Pending B."]
    );
    let status = service_status(&service).await;
    let repair = status
        .repairs
        .iter()
        .find(|r| r.kind() == pb::StateRepairKind::IndexRebuilt)
        .unwrap_or_else(|| panic!("no rebuild reported: {status:?}"));
    assert_eq!(repair.agent_id, "main");
    assert!(
        repair.file.contains("sessions.json.corrupt."),
        "{}",
        repair.file
    );
    assert!(repair.detail.contains("1 sessions"), "{}", repair.detail);
    assert!(status.ready, "{status:?}");
    drop(fake);
}

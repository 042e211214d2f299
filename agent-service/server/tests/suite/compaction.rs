//! Compaction end to end (P-3, P-40; lessons L5, L10, L12): agent-service + a
//! real prompt-service over gRPC + a fake Anthropic Messages server, checked on the requests the
//! fake receives, the run events, the transcript and the session index.
//!
//! Sizes: the default agent's system prompt is about 10,500 characters and its tool schemas
//! about 8,500, so the fixed part of a request is about 4,800 estimated tokens (4 characters
//! each). The windows below leave several thousand tokens of margin on either side of every
//! threshold the tests cross or must not cross.

use std::time::Duration;

use agent_runtime::context::{AGENTS_REFRESH_HEADER, SUMMARY_HEADER};
use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::run_event::Event;
use serde_json::{Value, json};

use super::harness::{self, Harness, Service};
use super::model_json::tool_names;
use super::run_events::{events_of, final_of};
use super::status::assert_holds;

/// `agents.defaults` extras: a window of `window` tokens, a reserve of `reserve`, and the memory
/// flush on or off.
fn budget(window: u64, reserve: u64, flush: bool) -> String {
    format!(
        r#", contextWindow: {window}, compaction: {{ reserveTokens: {reserve}, reserveTokensFloor: 0,
             memoryFlush: {{ enabled: {flush} }} }}"#
    )
}

/// A harness on Anthropic Messages with a context window of 40 000 tokens, 10 000 of them
/// reserved, and the memory flush on.
async fn tight_with_flush() -> Harness {
    Harness::start(
        WireFormat::AnthropicMessages,
        &budget(40_000, 10_000, true),
        "",
    )
    .await
}

/// Text of about `chars` characters that starts with `mark`, in lines.
fn filler(mark: &str, chars: usize) -> String {
    let mut text = format!("{mark}\n");
    let line = "the quick brown fox jumps over the lazy dog again and again and again.\n";
    while text.len() < chars {
        text.push_str(line);
    }
    text
}

async fn run(h: &Harness, message: &str) -> Vec<pb::RunEvent> {
    run_on(&h.service, message).await
}

async fn run_on(service: &Service, message: &str) -> Vec<pb::RunEvent> {
    service
        .run_events(pb::RunRequest {
            message: message.into(),
            ..Default::default()
        })
        .await
}

fn final_text(events: &[pb::RunEvent]) -> String {
    final_of(events).text
}

/// Asserts the turn of `events` answered `text`, its compaction events in the `expected`
/// phases.
fn assert_answered(events: &[pb::RunEvent], text: &str, expected: &[pb::CompactionPhase]) {
    assert_eq!(final_text(events), text);
    assert_eq!(phases(events), expected, "{events:#?}");
}

fn run_error(events: &[pb::RunEvent]) -> pb::RunError {
    events_of!(&events, Error)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no error event in {events:#?}"))
}

fn compactions(events: &[pb::RunEvent]) -> Vec<pb::Compaction> {
    events_of!(&events, Compaction)
}

fn phases(events: &[pb::RunEvent]) -> Vec<pb::CompactionPhase> {
    compactions(events)
        .iter()
        .map(|c| pb::CompactionPhase::try_from(c.phase).expect("phase"))
        .collect()
}

async fn transcript(service: &Service) -> Vec<Value> {
    service.transcript_json().await
}

fn entries_of<'a>(entries: &'a [Value], kind: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["type"] == kind).collect()
}

/// The one compaction entry of `entries`, and the entry it keeps first.
fn the_compaction(entries: &[Value]) -> (&Value, &Value) {
    let compaction = entries_of(entries, "compaction");
    assert_eq!(compaction.len(), 1);
    let kept_id = compaction[0]["firstKeptEntryId"].as_str().unwrap();
    let kept = entries
        .iter()
        .find(|e| e["id"] == kept_id)
        .expect("kept entry");
    (compaction[0], kept)
}

/// The request's messages as one string (for "contains" checks).
fn messages_text(body: &Value) -> String {
    body["messages"].to_string()
}

/// Checks Anthropic pairing: every `tool_use` is answered by a `tool_result` in the next message.
fn assert_paired(body: &Value) {
    let messages = body["messages"].as_array().expect("messages");
    for (i, message) in messages.iter().enumerate() {
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
            let id = block["id"].as_str().expect("id");
            let answered = messages
                .get(i + 1)
                .and_then(|m| m["content"].as_array())
                .is_some_and(|next| {
                    next.iter()
                        .any(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
                });
            assert!(
                answered,
                "tool_use {id} has no result right after it: {body}"
            );
        }
        if i == 0 {
            assert!(
                !blocks.iter().any(|b| b["type"] == "tool_result"),
                "the first message is a tool result: {body}"
            );
        }
    }
}

/// Over the threshold at the start of a turn: the older turn (with its tool call) is summarised
/// through prompt-service's mode-none prompt, the newest turn is kept whole, the summary replaces
/// the old messages in the next request and after a restart, and the index counts it.
#[tokio::test]
async fn a_long_session_is_compacted_keeping_the_newest_turn_whole() {
    let extra = budget(40_000, 10_000, false);
    let h = Harness::start(WireFormat::AnthropicMessages, &extra, "").await;
    std::fs::write(
        h.service.path("state/workspace/notes.txt"),
        filler("NOTES-FILE-MARK", 18_000),
    )
    .unwrap();
    h.fake.push_all([
        FakeReply::tool_call("c1", "read", json!({ "path": "notes.txt" })),
        FakeReply::text("I read the notes."),
        FakeReply::text("SUMMARY-TEXT: the user shared a long brief; the notes were read."),
        FakeReply::text("Second answer."),
    ]);
    // Turn 1: ~15k tokens of message, ~4.5k of tool result: under the 30k threshold.
    let first = run(&h, &filler("ALPHA-OLD-TURN", 60_000)).await;
    assert_eq!(final_text(&first), "I read the notes.");
    assert!(compactions(&first).is_empty(), "{first:#?}");
    // Turn 2 adds ~8k tokens: past the threshold before its first call.
    let second = run(&h, &filler("BRAVO-NEW-TURN", 32_000)).await;
    assert_answered(
        &second,
        "Second answer.",
        &[pb::CompactionPhase::Started, pb::CompactionPhase::Finished],
    );
    let done = &compactions(&second)[1];
    assert_eq!(done.trigger, "threshold");
    assert_eq!((done.context_window, done.threshold), (40_000, 30_000));
    assert!(done.tokens_before >= 30_000, "{done:?}");
    assert!(done.tokens_after < 20_000, "{done:?}");
    assert_eq!((done.summarized_messages, done.kept_messages), (4, 1));

    let requests = h.fake.requests();
    assert_eq!(requests.len(), 4);
    // The summariser: prompt-service's mode-none prompt, no tools, the older turns fenced.
    let summariser = &requests[2].body;
    assert!(tool_names(summariser).is_empty(), "{summariser}");
    let system = summariser["system"].to_string();
    assert!(
        system.len() < 1_000,
        "mode none is the identity line: {system}"
    );
    assert!(!system.contains("## Tooling"), "{system}");
    let quoted = messages_text(summariser);
    assert!(
        quoted.contains("UNTRUSTED_DATA"),
        "the transcript is fenced"
    );
    assert!(quoted.contains("ALPHA-OLD-TURN"));
    assert!(quoted.contains("[tool result of read [c1]]"));
    assert!(quoted.contains("NOTES-FILE-MARK"));
    assert!(
        quoted.contains("characters left out"),
        "tool output is shortened"
    );
    assert!(
        !quoted.contains("BRAVO-NEW-TURN"),
        "the newest turn is kept, not summarised"
    );
    // The next call: summary first, then the newest turn whole; the old turn is gone.
    let after = &requests[3].body;
    let first_message = after["messages"][0].to_string();
    assert!(
        first_message.contains(SUMMARY_HEADER.trim_matches(['[', ']'])),
        "{first_message}"
    );
    assert!(first_message.contains("SUMMARY-TEXT"));
    // AGENTS.md is in the system prompt whole (contextInjection "always"): no refresh.
    assert!(!first_message.contains("re-read after the compaction"));
    let text = messages_text(after);
    assert!(text.contains("BRAVO-NEW-TURN"));
    assert!(!text.contains("ALPHA-OLD-TURN") && !text.contains("NOTES-FILE-MARK"));
    assert!(text.len() < messages_text(&requests[1].body).len());
    assert_paired(after);

    // The transcript keeps everything, with the compaction entry pointing at the kept turn.
    let entries = transcript(&h.service).await;
    let (compaction, kept) = the_compaction(&entries);
    assert_eq!(kept["message"]["role"], "user");
    assert!(
        kept["message"]["content"]
            .to_string()
            .contains("BRAVO-NEW-TURN")
    );
    assert!(compaction["tokensBefore"].as_u64().unwrap() >= 30_000);
    assert_eq!(compaction["details"]["summarizedMessages"], 4);
    assert!(
        compaction["summary"]
            .as_str()
            .unwrap()
            .starts_with("SUMMARY-TEXT")
    );
    assert_eq!(h.service.session().await.compactions, 1);

    // After a restart the conversation is rebuilt around the summary.
    let (dir, fake, prompt) = h.stop().await;
    let config = harness::config(fake.base_url(), WireFormat::AnthropicMessages, &extra, "");
    let service = Service::start_full(dir, Some(&config), prompt.client()).await;
    fake.push(FakeReply::text("Third answer."));
    let third = run_on(&service, "and now?").await;
    assert_eq!(final_text(&third), "Third answer.");
    let last = &fake.requests()[4].body;
    assert!(last["messages"][0].to_string().contains("SUMMARY-TEXT"));
    let text = messages_text(last);
    assert!(text.contains("BRAVO-NEW-TURN") && !text.contains("ALPHA-OLD-TURN"));
    assert_eq!(service.session().await.compactions, 1);
}

/// One run reads six files. Past the flush point the silent memory-flush turn runs (it may write
/// only memory files, and nothing of it enters the conversation); past the threshold the run
/// compacts mid-turn, cutting between tool call/result pairs, without a second flush.
#[tokio::test]
async fn a_run_with_many_tool_calls_flushes_memory_then_compacts_between_pairs() {
    let h = tight_with_flush().await;
    for n in 1..=6 {
        std::fs::write(
            h.service.path(&format!("state/workspace/f{n}.txt")),
            filler(&format!("FILE-{n}-MARK"), 19_000),
        )
        .unwrap();
    }
    let agents_before =
        std::fs::read_to_string(h.service.path("state/workspace/AGENTS.md")).unwrap();
    let read = |n: u32| {
        FakeReply::tool_call(
            format!("c{n}"),
            "read",
            json!({ "path": format!("f{n}.txt") }),
        )
    };
    h.fake.push_all([
        read(1),
        read(2),
        read(3),
        read(4),
        read(5),
        // The memory flush (before call 6): one allowed write, one refused.
        FakeReply::tool_call(
            "m1",
            "write",
            json!({ "path": "memory/flush-notes.md", "content": "The user is reading six files.\n" }),
        )
        .with_tool_call("m2", "write", json!({ "path": "AGENTS.md", "content": "overwritten" })),
        FakeReply::text("NO_REPLY"),
        read(6),
        // The compaction summary (before call 7).
        FakeReply::text("SUMMARY-TEXT: files 1 to 4 were read; they hold fox sentences."),
        FakeReply::text("All six files are read."),
    ]);
    let events = run(&h, "Read f1.txt to f6.txt, one at a time.").await;
    // One flush ahead of the threshold, no second flush in the same cycle.
    assert_answered(
        &events,
        "All six files are read.",
        &[
            pb::CompactionPhase::MemoryFlushed,
            pb::CompactionPhase::Started,
            pb::CompactionPhase::Finished,
        ],
    );
    let flush = &compactions(&events)[0];
    assert!(flush.detail.contains("memory/flush-notes.md"), "{flush:?}");
    let done = &compactions(&events)[2];
    assert_eq!((done.summarized_messages, done.kept_messages), (9, 4));

    // The flush wrote the memory file and nothing else.
    assert_eq!(
        std::fs::read_to_string(h.service.path("state/workspace/memory/flush-notes.md")).unwrap(),
        "The user is reading six files.\n"
    );
    assert_eq!(
        std::fs::read_to_string(h.service.path("state/workspace/AGENTS.md")).unwrap(),
        agents_before
    );
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 10);
    let flush_request = &requests[5].body;
    assert!(messages_text(flush_request).contains("[Memory flush before compaction]"));
    let offered = tool_names(flush_request);
    assert!(offered.iter().all(|t| ["read", "write", "edit", "memory_search", "memory_get"]
        .contains(&t.as_str())), "{offered:?}");
    assert!(offered.contains(&"write".to_owned()));
    let refused = messages_text(&requests[6].body);
    assert!(
        refused.contains("only MEMORY.md and files under memory/"),
        "{refused}"
    );
    // The flush turn left no trace in the conversation.
    let next = messages_text(&requests[7].body);
    assert!(!next.contains("Memory flush before compaction") && !next.contains("flush-notes"));

    // The summary covers calls 1-4; the cut falls before call 5 (a pair boundary).
    let quoted = messages_text(&requests[8].body);
    assert!(quoted.contains("FILE-1-MARK") && quoted.contains("FILE-4-MARK"));
    assert!(!quoted.contains("FILE-5-MARK") && !quoted.contains("FILE-6-MARK"));
    let last = &requests[9].body;
    assert_paired(last);
    let text = messages_text(last);
    assert!(text.contains("SUMMARY-TEXT"));
    assert!(text.contains("FILE-5-MARK") && text.contains("FILE-6-MARK"));
    assert!(!text.contains("FILE-1-MARK"));

    let entries = transcript(&h.service).await;
    let (_, kept) = the_compaction(&entries);
    assert_eq!(kept["message"]["role"], "assistant");
    assert_eq!(kept["message"]["content"][0]["id"], "c5");
    let flushes: Vec<&Value> = entries_of(&entries, "custom")
        .into_iter()
        .filter(|e| e["customType"] == "openclaw:memory-flush")
        .collect();
    assert_eq!(flushes.len(), 1);
    assert_eq!(
        flushes[0]["data"]["files"],
        json!(["memory/flush-notes.md"])
    );
    // The flush's own messages are not in the transcript.
    assert!(
        !serde_json::to_string(&entries)
            .unwrap()
            .contains("Memory flush before compaction")
    );
}

/// The provider refuses a request as too long although the estimate fit: the run flushes
/// memory, compacts and retries the call once. With contextInjection "continuation-skip" the
/// system prompt lacks AGENTS.md on this turn, so an AGENTS.md excerpt follows the summary.
#[tokio::test]
async fn a_context_overflow_from_the_provider_compacts_and_retries_once() {
    let h = Harness::start(
        WireFormat::AnthropicMessages,
        r#", contextInjection: "continuation-skip""#,
        "",
    )
    .await;
    let agents = std::fs::read_to_string(h.service.path("state/workspace/AGENTS.md")).unwrap();
    let agents_line = agents
        .lines()
        .find(|l| l.len() > 20)
        .expect("a line of AGENTS.md")
        .to_owned();
    h.fake.push_all([
        FakeReply::text("First answer."),
        FakeReply::context_overflow(),
        FakeReply::text("NO_REPLY"),
        FakeReply::text("SUMMARY-TEXT: the user said hello."),
        FakeReply::text("Second answer."),
    ]);
    // Longer than its summary will be: a summary is kept only when it is the smaller.
    let hello = format!("hello there. {}", filler("SOME-CONTEXT", 400));
    assert_eq!(final_text(&run(&h, &hello).await), "First answer.");
    let events = run(&h, "what did I say?").await;
    assert_answered(
        &events,
        "Second answer.",
        &[
            pb::CompactionPhase::Started,
            pb::CompactionPhase::MemoryFlushed,
            pb::CompactionPhase::Finished,
        ],
    );
    assert!(compactions(&events).iter().all(|c| c.trigger == "overflow"));
    let model_calls = events
        .iter()
        .filter(|e| matches!(e.event, Some(Event::ModelCall(_))))
        .count();
    assert_eq!(model_calls, 2, "the refused call and its one retry");

    let requests = h.fake.requests();
    assert_eq!(requests.len(), 5);
    // The flush ran on the intact history.
    let flush = messages_text(&requests[2].body);
    assert!(flush.contains("hello there") && flush.contains("Memory flush before compaction"));
    // The retry starts with the summary and the AGENTS.md refresh, then the newest message.
    let retry = &requests[4].body;
    let first = retry["messages"][0].to_string();
    assert!(first.contains("SUMMARY-TEXT"), "{first}");
    assert!(
        first.contains(AGENTS_REFRESH_HEADER.trim_matches(['[', ']'])),
        "{first}"
    );
    let escaped = serde_json::to_string(&agents_line).unwrap();
    assert!(first.contains(escaped.trim_matches('"')), "{first}");
    let text = messages_text(retry);
    assert!(text.contains("what did I say?") && !text.contains("hello there"));
    // The refresh lives in the transcript, so it survives restarts.
    let entries = transcript(&h.service).await;
    let compaction = entries_of(&entries, "compaction");
    assert!(
        compaction[0]["details"]["agentsRefresh"]
            .as_str()
            .unwrap()
            .contains(&agents_line)
    );
    assert_eq!(compaction[0]["details"]["trigger"], "overflow");
}

/// A system prompt alone bigger than the window: nothing can be compacted, no model call is
/// made, and the error names the largest sections.
#[tokio::test]
async fn a_prompt_too_big_for_the_window_is_a_clear_error_naming_sections() {
    let h = Harness::start(WireFormat::AnthropicMessages, &budget(3_000, 500, true), "").await;
    let events = run(&h, "hello").await;
    let error = run_error(&events);
    assert_eq!(error.code, "RESOURCE_EXHAUSTED", "{error:?}");
    assert_holds(
        &error.message,
        &[
            "context window of 3000 tokens",
            "system prompt section",
            "tool schemas",
            "nothing older",
        ],
    );
    assert_eq!(
        phases(&events),
        [pb::CompactionPhase::Started, pb::CompactionPhase::Skipped]
    );
    assert_eq!(h.fake.request_count(), 0, "no model call");
    // The message is recorded and the transcript is whole.
    let entries = transcript(&h.service).await;
    assert_eq!(entries_of(&entries, "message").len(), 1);
    assert!(entries_of(&entries, "compaction").is_empty());
}

/// One message bigger than the window fails with an error naming it, and the session stays
/// usable: the next message compacts it away (shortened for the summariser) and is answered.
#[tokio::test]
async fn an_oversized_message_fails_clearly_and_the_session_recovers() {
    let h = tight_with_flush().await;
    let events = run(&h, &filler("HUGE-PASTE", 200_000)).await;
    let error = run_error(&events);
    assert_eq!(error.code, "RESOURCE_EXHAUSTED");
    assert!(
        error.message.contains("user message (1 of 1 kept)"),
        "{}",
        error.message
    );
    assert_eq!(h.fake.request_count(), 0);

    h.fake.push_all([
        FakeReply::text("SUMMARY-TEXT: the user pasted a very long text of fox sentences."),
        FakeReply::text("It was a long list of fox sentences."),
    ]);
    let events = run(&h, "What was that paste about?").await;
    assert_eq!(final_text(&events), "It was a long list of fox sentences.");
    let phases = phases(&events);
    assert_eq!(phases.first(), Some(&pb::CompactionPhase::Started));
    assert_eq!(phases.last(), Some(&pb::CompactionPhase::Finished));
    let requests = h.fake.requests();
    assert_eq!(
        requests.len(),
        2,
        "the flush is skipped: the history is past the window"
    );
    let quoted = messages_text(&requests[0].body);
    assert!(quoted.contains("HUGE-PASTE") && quoted.contains("characters left out"));
    assert!(
        quoted.len() < 150_000,
        "the paste is shortened for the summariser"
    );
    let text = messages_text(&requests[1].body);
    assert!(!text.contains("HUGE-PASTE") && text.contains("What was that paste about?"));
    let entries = transcript(&h.service).await;
    let flush = entries_of(&entries, "custom");
    assert!(
        flush
            .iter()
            .any(|e| e["customType"] == "openclaw:memory-flush"
                && e["data"]["outcome"]
                    .as_str()
                    .unwrap()
                    .starts_with("skipped")),
        "{flush:?}"
    );
}

/// Compaction is bounded by the run's deadline: a summariser that never answers in time fails
/// the run with RESOURCE_EXHAUSTED, writes nothing, and the next message compacts normally, in
/// two summary calls (the older part is longer than one call may read).
#[tokio::test]
async fn a_compaction_past_its_deadline_leaves_the_transcript_unchanged() {
    let h = Harness::start(
        WireFormat::AnthropicMessages,
        &format!("{}, timeoutSeconds: 3", budget(30_000, 5_000, false)),
        "",
    )
    .await;
    h.fake.push_all([
        FakeReply::text("First answer."),
        FakeReply::text("SUMMARY-TOO-LATE").delay(Duration::from_secs(8)),
        FakeReply::text("SUMMARY-PART-ONE: a brief came first."),
        FakeReply::text("SUMMARY-TEXT: a brief, then a longer brief."),
        FakeReply::text("Third answer."),
    ]);
    assert_eq!(
        final_text(&run(&h, &filler("ALPHA-OLD-TURN", 40_000)).await),
        "First answer."
    );
    // ~20k more tokens: past the 30k window, so compaction must succeed for the run to go on.
    let began = std::time::Instant::now();
    let events = run(&h, &filler("BRAVO-NEW-TURN", 80_000)).await;
    let error = run_error(&events);
    assert!(
        began.elapsed() < Duration::from_secs(7),
        "bounded by the 3 s run limit"
    );
    assert_eq!(error.code, "RESOURCE_EXHAUSTED", "{error:?}");
    assert!(
        error.message.contains("compaction did not finish"),
        "{}",
        error.message
    );
    assert!(error.message.contains("unchanged"), "{}", error.message);
    assert_eq!(
        phases(&events),
        [pb::CompactionPhase::Started, pb::CompactionPhase::Failed]
    );
    let entries = transcript(&h.service).await;
    assert!(entries_of(&entries, "compaction").is_empty());
    assert_eq!(h.service.session().await.compactions, 0);

    // Usable: the next message compacts (the timed-out reply is never used) and is answered.
    let events = run(&h, "short follow-up").await;
    assert_eq!(final_text(&events), "Third answer.");
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 5);
    let part_two = messages_text(&requests[3].body);
    assert!(part_two.contains("part 2 of 2") && part_two.contains("SUMMARY-PART-ONE"));
    assert!(part_two.contains("BRAVO-NEW-TURN") && !part_two.contains("ALPHA-OLD-TURN"));
    let last = messages_text(&requests[4].body);
    assert!(last.contains("SUMMARY-TEXT") && !last.contains("SUMMARY-TOO-LATE"));
    assert!(last.contains("short follow-up") && !last.contains("BRAVO-NEW-TURN"));
    let entries = transcript(&h.service).await;
    let compaction = entries_of(&entries, "compaction");
    assert_eq!(compaction.len(), 1);
    assert!(
        compaction[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("SUMMARY-TEXT")
    );
}

/// A summary no smaller than what it would replace is not kept: the older messages are
/// dropped with a note saying so, the compaction entry records the fallback, and the history
/// the next call sends is smaller than before.
#[tokio::test]
async fn a_summary_larger_than_what_it_replaces_falls_back_to_dropping() {
    let extra = budget(40_000, 10_000, false);
    let h = Harness::start(WireFormat::AnthropicMessages, &extra, "").await;
    h.fake.push_all([
        FakeReply::text("First answer."),
        FakeReply::text(filler("HUGE-SUMMARY", 100_000)),
        FakeReply::text("Second answer."),
    ]);
    // Turn 1: ~20k tokens, under the 30k threshold; turn 2 adds ~8k: past it.
    let first = run(&h, &filler("ALPHA-OLD-TURN", 80_000)).await;
    assert_eq!(final_text(&first), "First answer.");
    let second = run(&h, &filler("BRAVO-NEW-TURN", 32_000)).await;
    assert_eq!(final_text(&second), "Second answer.");
    let entries = transcript(&h.service).await;
    let compaction = entries_of(&entries, "compaction");
    let compaction = compaction.last().expect("a compaction entry");
    assert_eq!(
        compaction["details"]["fallback"], "truncated",
        "{compaction}"
    );
    let summary = compaction["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("dropped without a summary"), "{summary}");
    assert!(!summary.contains("HUGE-SUMMARY"), "{summary}");
    let requests = h.fake.requests();
    let after = requests.last().expect("the next call").body["messages"].to_string();
    assert!(!after.contains("HUGE-SUMMARY") && !after.contains("ALPHA-OLD-TURN"));
    assert!(after.contains("BRAVO-NEW-TURN"));
}

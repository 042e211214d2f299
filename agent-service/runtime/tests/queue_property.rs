//! Property test of the message queue (R-11, lesson L11): messages
//! arrive at random times and in random queue modes against runs that make
//! tool calls; whatever the interleaving, every accepted message appears
//! exactly once in the transcript or has an explicit rejection, none
//! appears twice, every tool call has exactly one result, and the session
//! ends idle.
//!
//! Time is tokio's paused clock, so the model's streaming pauses and the
//! collect debounce cost nothing and a case takes milliseconds. Cases:
//! `PROPTEST_CASES` (default 96).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed expectation is the test failing"
)]

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use agent_runtime::{
    run::{RunEvent, RunSpec},
    sessions::{
        SessionTarget,
        queue::{Disposition, QueueMode},
    },
};
use openclaw_transcript::{ContentBlock, Message, UserContent};
use proptest::prelude::*;

mod property_support;
use property_support::{runner, start_runtime, transcript};

/// Two tool calls, then an answer; cycles. Streams in small paced deltas so
/// messages land mid-call, mid-batch and between runs.
const SCRIPT: &str = r#"{
  chunkChars: 3,
  delayMs: 2,
  turns: [
    { text: "Reading.", toolCalls: [
        { name: "read", arguments: { path: "AGENTS.md" } },
        { name: "read", arguments: { path: "SOUL.md" } },
    ] },
    { text: "Done reading; here is my answer." },
  ],
}"#;

fn config(drop: &str) -> String {
    format!(
        r#"{{
  agents: {{ defaults: {{ model: "fake/m" }} }},
  models: {{ providers: {{ fake: {{ api: "scripted", script: "script.json5", models: [{{ id: "m" }}] }} }} }},
  messages: {{ queue: {{ debounceMs: 15, cap: 3, drop: "{drop}" }} }},
}}"#
    )
}

#[derive(Debug, Clone)]
struct Arrival {
    gap_ms: u64,
    mode: Option<QueueMode>,
}

fn arrival() -> impl Strategy<Value = Arrival> {
    let mode = prop_oneof![
        1 => Just(None),
        2 => Just(Some(QueueMode::Steer)),
        1 => Just(Some(QueueMode::Followup)),
        3 => Just(Some(QueueMode::Collect)),
        1 => Just(Some(QueueMode::Interrupt)),
    ];
    (prop_oneof![0u64..4, 0u64..40], mode).prop_map(|(gap_ms, mode)| Arrival { gap_ms, mode })
}

/// Totals over all cases, printed at the end for the record.
static CASES: AtomicU64 = AtomicU64::new(0);
static MESSAGES: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);
static STEERED: AtomicU64 = AtomicU64::new(0);
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);
static TOOL_PAIRS: AtomicU64 = AtomicU64::new(0);
static COLLECTED: AtomicU64 = AtomicU64::new(0);

fn marker(i: usize) -> String {
    format!("<m{i}>")
}

async fn one_case(arrivals: Vec<Arrival>, drop: &'static str) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let runtime = start_runtime(dir.path(), &config(drop), SCRIPT, &[]);

    // Each message is followed as a Run client would; rejections arrive
    // either as the disposition or as a MessageRejected event.
    let mut rejected = BTreeSet::new();
    let mut followers = Vec::new();
    for (i, a) in arrivals.iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(a.gap_ms)).await;
        let submitted = runtime
            .runs()
            .submit(RunSpec {
                session_key: "prop".into(),
                message: format!("{} please check the files", marker(i)),
                queue_mode: a.mode,
                ..RunSpec::default()
            })
            .await
            .unwrap();
        match &submitted.acceptance.disposition {
            Disposition::Rejected { .. } => {
                rejected.insert(i);
            }
            Disposition::Steered { .. } => {
                STEERED.fetch_add(1, Ordering::Relaxed);
            }
            Disposition::Interrupted { .. } => {
                INTERRUPTS.fetch_add(1, Ordering::Relaxed);
            }
            Disposition::Collected { .. } => {
                COLLECTED.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        let seq = submitted.acceptance.seq;
        let mut events = submitted.follow();
        followers.push(tokio::spawn(async move {
            let mut terminal = None;
            while let Some(e) = events.recv().await {
                match e.event {
                    RunEvent::MessageRejected { seq: s, .. } if s == seq => return (i, true, None),
                    RunEvent::Final { .. } | RunEvent::Error { .. } => terminal = Some(e.event),
                    _ => {}
                }
            }
            (i, false, terminal)
        }));
    }
    // Every follower ends: its message was answered, failed visibly, or was rejected.
    for follower in followers {
        let (i, was_rejected, terminal) = tokio::time::timeout(Duration::from_secs(600), follower)
            .await
            .expect("a follower never saw its run end")
            .unwrap();
        if was_rejected {
            rejected.insert(i);
        } else if !rejected.contains(&i) {
            prop_assert!(terminal.is_some(), "message {i} never saw a terminal event");
        }
    }
    let mut idle = false;
    for _ in 0..10_000 {
        if runtime.sessions().manager().all_idle() {
            idle = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    prop_assert!(idle, "the session never became idle");

    // Read the transcript back.
    let messages = transcript(&runtime, &SessionTarget::Key("prop".into())).await;
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    let mut open_calls: Vec<String> = Vec::new();
    let mut results: BTreeSet<String> = BTreeSet::new();
    for message in &messages {
        match message {
            Message::User(user) => {
                let text = match &user.content {
                    UserContent::Text(t) => t.clone(),
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Text(t) => Some(t.text.clone()),
                            _ => None,
                        })
                        .collect(),
                };
                for i in 0..arrivals.len() {
                    let n = text.matches(&marker(i)).count();
                    if n > 0 {
                        *seen.entry(i).or_default() += n;
                    }
                }
                prop_assert!(
                    open_calls.is_empty(),
                    "a user message came between tool calls and their results: {open_calls:?}"
                );
            }
            Message::Assistant(reply) => {
                prop_assert!(
                    open_calls.is_empty(),
                    "unanswered tool calls before a new reply: {open_calls:?}"
                );
                for block in &reply.content {
                    if let ContentBlock::ToolCall(call) = block {
                        open_calls.push(call.id.clone());
                    }
                }
            }
            Message::ToolResult(result) => {
                let at = open_calls.iter().position(|id| *id == result.tool_call_id);
                prop_assert!(
                    at.is_some(),
                    "a result without its call: {}",
                    result.tool_call_id
                );
                open_calls.retain(|id| *id != result.tool_call_id);
                prop_assert!(
                    results.insert(result.tool_call_id.clone()),
                    "two results for one call"
                );
                TOOL_PAIRS.fetch_add(1, Ordering::Relaxed);
            }
            Message::Other(other) => prop_assert!(false, "unexpected message {other:?}"),
        }
    }
    prop_assert!(
        open_calls.is_empty(),
        "calls left without results: {open_calls:?}"
    );
    for i in 0..arrivals.len() {
        let count = seen.get(&i).copied().unwrap_or(0);
        if rejected.contains(&i) {
            prop_assert_eq!(
                count,
                0,
                "message {} was rejected yet is in the transcript",
                i
            );
        } else {
            prop_assert_eq!(
                count,
                1,
                "message {} appears {} times (want exactly once)",
                i,
                count
            );
        }
    }
    CASES.fetch_add(1, Ordering::Relaxed);
    MESSAGES.fetch_add(arrivals.len() as u64, Ordering::Relaxed);
    REJECTED.fetch_add(rejected.len() as u64, Ordering::Relaxed);
    runtime.shutdown(Duration::from_secs(5)).await;
    Ok(())
}

#[test]
fn every_message_lands_exactly_once_or_is_rejected() {
    let (mut runner, cases) = runner(96);
    let strategy = (
        prop::collection::vec(arrival(), 1..16),
        prop_oneof![Just("summarize"), Just("old"), Just("new")],
    );
    let outcome = runner.run(&strategy, |(arrivals, drop)| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(one_case(arrivals, drop))
    });
    eprintln!(
        "queue property: {} cases passed, {} messages ({} steered, {} collected, {} interrupts, {} rejected), {} tool call/result pairs checked",
        CASES.load(Ordering::Relaxed),
        MESSAGES.load(Ordering::Relaxed),
        STEERED.load(Ordering::Relaxed),
        COLLECTED.load(Ordering::Relaxed),
        INTERRUPTS.load(Ordering::Relaxed),
        REJECTED.load(Ordering::Relaxed),
        TOOL_PAIRS.load(Ordering::Relaxed),
    );
    if let Err(error) = outcome {
        panic!("{error}");
    }
    assert!(CASES.load(Ordering::Relaxed) >= u64::from(cases));
}

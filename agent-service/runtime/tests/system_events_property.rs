//! Property test of system events sharing a session with its user: user messages (follow-up
//! or steer), cron jobs due in the main session (follow-up system events) and the exits of
//! background commands the model started (steered system events) arrive in random order and
//! at random times. Whatever the interleaving, every message and every event is in the
//! transcript exactly once, in the order the queue accepted them (a steer may overtake a
//! follow-up still waiting, by design; nothing else moves), every run ends with an answer,
//! and each background command's exit is reported once.
//!
//! Real time (the background commands are real processes); each case takes a fraction of a
//! second. Cases: `PROPTEST_CASES` (default 24).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed expectation is the test failing"
)]

use std::{
    collections::BTreeMap,
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use agent_runtime::{
    origin::Origin,
    run::{RunEvent, RunSpec},
    sessions::{
        NewSession, SessionTarget,
        queue::{Disposition, QueueMode},
    },
};
use openclaw_cron::{Delivery, JobSpec, RunStatus, Schedule, Target};
use openclaw_transcript::{Message, UserContent};
use proptest::prelude::*;

mod property_support;
use property_support::{runner, start_runtime, transcript};

/// Answers each kind of message by what it says: an exit report, a cron job, a request to
/// start a background command (an `exec` call, then a line), anything else.
const SCRIPT: &str = r#"{
  chunkChars: 400,
  delayMs: 1,
  turns: [
    { when: "[exec finished]", text: "Noted the exit." },
    { when: "[cron job due]", text: "Handled the job." },
    { when: "<bg", toolCalls: [{ name: "exec", arguments: { command: "sleep 0.05", background: true } }] },
    { text: "Started it in the background." },
    { when: "<u", text: "Answered." },
  ],
}"#;

const CONFIG: &str = r#"{
  agents: { defaults: { model: "fake/m", skipBootstrap: true } },
  models: { providers: { fake: { api: "scripted", script: "script.json5", models: [{ id: "m" }] } } },
  tools: { exec: { security: "full", ask: "off" } },
}"#;

#[derive(Debug, Clone)]
enum Action {
    /// A user message (`background`: it asks for a background command).
    User { steer: bool, background: bool },
    /// A main-session cron job that becomes due (run now).
    Cron,
}

#[derive(Debug, Clone)]
struct Arrival {
    gap_ms: u64,
    action: Action,
}

fn arrival() -> impl Strategy<Value = Arrival> {
    let action = prop_oneof![
        3 => (any::<bool>(), Just(false)).prop_map(|(steer, background)| Action::User { steer, background }),
        2 => any::<bool>().prop_map(|steer| Action::User { steer, background: true }),
        2 => Just(Action::Cron),
    ];
    (prop_oneof![0u64..3, 0u64..40], action).prop_map(|(gap_ms, action)| Arrival { gap_ms, action })
}

static CASES: AtomicU64 = AtomicU64::new(0);
static USERS: AtomicU64 = AtomicU64::new(0);
static CRONS: AtomicU64 = AtomicU64::new(0);
static EXITS: AtomicU64 = AtomicU64::new(0);
static STEERED: AtomicU64 = AtomicU64::new(0);
static OVERTAKES: AtomicU64 = AtomicU64::new(0);

/// What a transcript user message is, by its text.
fn key_of(text: &str) -> Option<String> {
    if let Some(rest) = text.strip_prefix("[Exec Finished] Background process ") {
        return rest.split_whitespace().next().map(|p| format!("exit:{p}"));
    }
    let start = text.find('<')?;
    let end = start + text[start..].find('>')?;
    Some(text[start..=end].to_owned())
}

async fn one_case(arrivals: Vec<Arrival>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let runtime = start_runtime(dir.path(), CONFIG, SCRIPT, &[("PATH", path)]);
    runtime
        .sessions()
        .create("", "main", NewSession::default())
        .await
        .unwrap();
    let main = SessionTarget::Key("main".into());
    let mut watch = runtime.sessions().watch("", &main).await.unwrap();
    let cron = runtime.cron("").unwrap();

    // key -> (seq, disposition) as the queue accepted it; users are known at once, system
    // events from the session's events.
    let mut accepted: BTreeMap<String, (u64, Disposition)> = BTreeMap::new();
    let mut job_keys: BTreeMap<String, String> = BTreeMap::new();
    let mut followers = Vec::new();
    let mut crons = Vec::new();
    for (i, a) in arrivals.iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(a.gap_ms)).await;
        match a.action {
            Action::User { steer, background } => {
                let key = if background {
                    format!("<bg{i}>")
                } else {
                    format!("<u{i}>")
                };
                let mode = if steer {
                    QueueMode::Steer
                } else {
                    QueueMode::Followup
                };
                let submitted = runtime
                    .runs()
                    .submit(RunSpec {
                        session_key: "main".into(),
                        message: format!("{key} please"),
                        queue_mode: Some(mode),
                        ..RunSpec::default()
                    })
                    .await
                    .unwrap();
                if matches!(
                    submitted.acceptance.disposition,
                    Disposition::Steered { .. }
                ) {
                    STEERED.fetch_add(1, Ordering::Relaxed);
                }
                accepted.insert(
                    key.clone(),
                    (
                        submitted.acceptance.seq,
                        submitted.acceptance.disposition.clone(),
                    ),
                );
                let mut events = submitted.follow();
                followers.push(tokio::spawn(async move {
                    let mut terminal = None;
                    while let Some(e) = events.recv().await {
                        if matches!(e.event, RunEvent::Final { .. } | RunEvent::Error { .. }) {
                            terminal = Some(e.event);
                        }
                    }
                    (key, terminal)
                }));
            }
            Action::Cron => {
                let key = format!("<c{i}>");
                let job = cron
                    .add(JobSpec {
                        name: format!("job {i}"),
                        schedule: Schedule::Every {
                            every_ms: 3_600_000,
                            anchor: None,
                        },
                        prompt: format!("{key} tidy the inbox"),
                        target: Target::Main,
                        lightweight: false,
                        delivery: Delivery::None,
                        delete_after_run: None,
                        enabled: true,
                    })
                    .unwrap();
                job_keys.insert(job.id.clone(), key);
                let cron = cron.clone();
                crons.push(tokio::spawn(async move { cron.run_now(&job.id).await }));
            }
        }
    }
    for follower in followers {
        let (key, terminal) = tokio::time::timeout(Duration::from_secs(60), follower)
            .await
            .expect("a follower never saw its run end")
            .unwrap();
        prop_assert!(
            matches!(terminal, Some(RunEvent::Final { .. })),
            "{key}: {terminal:?}"
        );
    }
    for run in crons {
        let outcome = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("a cron run never ended")
            .unwrap()
            .unwrap();
        prop_assert_eq!(outcome.status, RunStatus::Ok, "{:?}", outcome);
    }

    // Background commands end on their own: wait until each one's exit is answered.
    let mut messages = Vec::new();
    let mut settled = false;
    for _ in 0..400 {
        // Idle before and after the read: the transcript read is the session at rest.
        let idle = runtime.sessions().manager().all_idle();
        messages = transcript(&runtime, &main).await;
        let started = started_processes(&messages);
        let reported = messages
            .iter()
            .filter(|m| user_text(m).is_some_and(|t| t.starts_with("[Exec Finished]")))
            .count();
        if idle && reported >= started.len() && runtime.sessions().manager().all_idle() {
            settled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    prop_assert!(settled, "background exits were not all answered");
    while let Some(Ok(event)) = watch.try_recv() {
        if let RunEvent::SystemEvent { acceptance, origin } = &event.event {
            let key = match origin {
                Origin::Cron { job_id } => job_keys.get(job_id).cloned(),
                Origin::ExecExit { process_id } => Some(format!("exit:{process_id}")),
                _ => None,
            };
            let key = key.unwrap_or_else(|| panic!("a system event from {origin:?}"));
            let before = accepted.insert(
                key.clone(),
                (acceptance.seq, acceptance.disposition.clone()),
            );
            prop_assert!(before.is_none(), "{key} was accepted twice");
        }
    }

    // Exactly once: every accepted message or event is in the transcript once, and the
    // transcript holds nothing else.
    let mut position: BTreeMap<String, usize> = BTreeMap::new();
    for (at, message) in messages.iter().enumerate() {
        let Some(text) = user_text(message) else {
            continue;
        };
        let key = key_of(text).unwrap_or_else(|| panic!("an unknown user message {text:?}"));
        prop_assert!(
            accepted.contains_key(&key),
            "{key} is in the transcript, never accepted"
        );
        prop_assert!(
            position.insert(key.clone(), at).is_none(),
            "{key} is in the transcript twice"
        );
    }
    for key in accepted.keys() {
        prop_assert!(
            position.contains_key(key),
            "{key} was accepted and is not in the transcript"
        );
    }
    let started = started_processes(&messages);
    for process in &started {
        prop_assert!(
            position.contains_key(&format!("exit:{process}")),
            "{process} started and its exit was never reported"
        );
    }
    // In acceptance order: of two accepted messages, the earlier comes first, except that a
    // message steered into the active run may overtake one still waiting for a run of its
    // own (a follow-up, or a steer that came while no run could take it).
    for (a, (seq_a, got_a)) in &accepted {
        for (b, (seq_b, got_b)) in &accepted {
            if seq_a >= seq_b {
                continue;
            }
            let (pa, pb) = (position[a], position[b]);
            if pa > pb {
                prop_assert!(
                    matches!(got_a, Disposition::Followup { .. })
                        && matches!(got_b, Disposition::Steered { .. }),
                    "{a} (seq {seq_a}, {got_a:?}) came after {b} (seq {seq_b}, {got_b:?})"
                );
                OVERTAKES.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    // Answered: the last word is the model's.
    prop_assert!(
        matches!(messages.last(), Some(Message::Assistant(_))),
        "the transcript does not end with an answer"
    );
    CASES.fetch_add(1, Ordering::Relaxed);
    USERS.fetch_add(
        accepted
            .keys()
            .filter(|k| k.starts_with("<u") || k.starts_with("<bg"))
            .count() as u64,
        Ordering::Relaxed,
    );
    CRONS.fetch_add(job_keys.len() as u64, Ordering::Relaxed);
    EXITS.fetch_add(started.len() as u64, Ordering::Relaxed);
    runtime.shutdown(Duration::from_secs(5)).await;
    Ok(())
}

fn user_text(message: &Message) -> Option<&str> {
    match message {
        Message::User(user) => match &user.content {
            UserContent::Text(text) => Some(text),
            UserContent::Blocks(_) => None,
        },
        _ => None,
    }
}

/// The process ids the exec tool reported starting in the background.
fn started_processes(messages: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for message in messages {
        if let Message::ToolResult(result) = message {
            let text = serde_json::to_string(&result.content).unwrap_or_default();
            if let Some(at) = text.find("proc-") {
                let id: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
    }
    out
}

#[test]
fn user_messages_cron_events_and_exec_exits_land_once_in_acceptance_order() {
    let (mut runner, cases) = runner(24);
    let outcome = runner.run(&prop::collection::vec(arrival(), 1..12), |arrivals| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(one_case(arrivals))
    });
    eprintln!(
        "system events property: {} cases passed, {} user messages ({} steered into a run), {} cron events, {} background exits, {} steer overtakes",
        CASES.load(Ordering::Relaxed),
        USERS.load(Ordering::Relaxed),
        STEERED.load(Ordering::Relaxed),
        CRONS.load(Ordering::Relaxed),
        EXITS.load(Ordering::Relaxed),
        OVERTAKES.load(Ordering::Relaxed),
    );
    if let Err(error) = outcome {
        panic!("{error}");
    }
    assert!(CASES.load(Ordering::Relaxed) >= u64::from(cases));
}

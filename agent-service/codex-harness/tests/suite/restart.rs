//! Threads across processes: resume after a restart of the service, the
//! projection fallback when resume fails, and a child killed mid-turn.

use std::sync::Arc;

use agent_testkit::FakeReply;
use nix::{sys::signal::Signal, unistd::Pid};
use openclaw_codex_harness::{HarnessEvent, ThreadBinding, TurnStatus};
use openclaw_transcript::{
    AssistantMessage, ContentBlock, Message, StopReason, UserContent, UserMessage,
};

use super::fixture::{
    Fixture, Stalled, Turn, messages, outcome_of, run_on, stalled_turn, tool_names,
};

fn user_and_assistant_texts(f: &Fixture, request: usize) -> Vec<(String, String)> {
    messages(&f.requests()[request])
        .into_iter()
        .filter(|(role, _)| role == "user" || role == "assistant")
        .map(|(role, parts)| (role, parts.join("|")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_service_resumes_the_stored_thread_with_its_history() {
    let f = Fixture::start().await;
    f.fake.push(FakeReply::text("Noted: PLUM."));
    let (first, _) = f.run(&Turn::new("Remember the word PLUM.")).await;
    let first_pid = f.runner.child_pid().await;
    f.runner.shutdown().await;
    assert_eq!(f.runner.child_pid().await, None);

    // A new agent-service: new runner, new app-server, same CODEX_HOME.
    let runner = f.restarted_runner();
    f.fake.push(FakeReply::text("The word was PLUM."));
    let input = f.input(&Turn::new("Which word?").on(&first.thread_id));
    let (second, events) = run_on(&runner, input).await;
    assert_ne!(runner.child_pid().await, first_pid);
    assert_eq!(second.binding, ThreadBinding::Resumed);
    assert_eq!(second.thread_id, first.thread_id);
    assert_eq!(second.status, TurnStatus::Completed);
    assert!(events.contains(&HarnessEvent::ThreadReady {
        thread_id: first.thread_id.clone(),
        binding: ThreadBinding::Resumed,
    }));

    // The model request after the resume carries the earlier turn.
    let texts = user_and_assistant_texts(&f, 1);
    let position = |role: &str, text: &str| {
        texts
            .iter()
            .position(|(r, t)| r == role && t == text)
            .unwrap_or_else(|| panic!("{role} {text:?} missing from {texts:#?}"))
    };
    let asked = position("user", "Remember the word PLUM.");
    let answered = position("assistant", "Noted: PLUM.");
    let now = position("user", "Which word?");
    assert!(asked < answered && answered < now, "{texts:#?}");
    // Dynamic tools are part of the thread: a cold resume keeps them.
    let requests = f.requests();
    let tools = tool_names(&requests[1]);
    assert!(tools.contains(&super::fixture::LOOKUP), "{tools:?}");
    runner.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unresumable_thread_is_replaced_and_our_transcript_projected() {
    let f = Fixture::start().await;
    let gone = "01a22c1a-0000-7000-8000-000000000000";
    let mut turn = Turn::new("Which word?").on(gone);
    turn.history = vec![
        Message::User(UserMessage {
            content: UserContent::Text("Remember the word PLUM.".to_owned()),
            timestamp: 1,
        }),
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::text("Noted: PLUM.")],
            provider: "openclaw".to_owned(),
            model: "fake-model".to_owned(),
            api: None,
            usage: None,
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: 2,
        }),
    ];
    f.fake.push(FakeReply::text("The word was PLUM."));
    let (outcome, _) = f.run(&turn).await;

    let ThreadBinding::Replaced { previous, reason } = &outcome.binding else {
        panic!("replaced expected: {:?}", outcome.binding);
    };
    assert_eq!(previous, gone);
    assert!(!reason.is_empty());
    assert_ne!(outcome.thread_id, gone);
    assert_eq!(outcome.status, TurnStatus::Completed);
    let texts = user_and_assistant_texts(&f, 0);
    let (role, input) = texts.last().expect("the turn input");
    assert_eq!(role, "user");
    assert!(
        input.starts_with("[OpenClaw: this session's earlier Codex thread could not be resumed"),
        "{input}"
    );
    assert!(
        input.contains("\nUser: Remember the word PLUM.\nAssistant: Noted: PLUM.\n"),
        "{input}"
    );
    assert!(input.ends_with("\n\nWhich word?"), "{input}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_killed_mid_turn_interrupts_the_turn_and_restarts() {
    let f = Fixture::start().await;
    let input = f.input(&Turn::new("Tell me about fruit."));
    let Stalled {
        thread_id, turn, ..
    } = stalled_turn(&f, &f.runner, "Streaming until killed.", input).await;
    let pid = f.runner.child_pid().await.expect("a running child");
    nix::sys::signal::kill(Pid::from_raw(i32::try_from(pid).unwrap()), Signal::SIGKILL)
        .expect("SIGKILL");

    let outcome = outcome_of(turn).await;
    let TurnStatus::ProcessExited { detail } = &outcome.status else {
        panic!("process exit expected: {:?}", outcome.status);
    };
    assert!(detail.contains("signal: 9"), "{detail}");
    assert!(outcome.status.is_interrupted());
    assert_eq!(outcome.thread_id, thread_id);
    let [Message::Assistant(partial)] = &outcome.entries[..] else {
        panic!("the partial reply only: {:#?}", outcome.entries);
    };
    assert_eq!(partial.stop_reason, StopReason::Aborted);

    // The next turn restarts the app-server and resumes the thread.
    f.fake.push(FakeReply::text("Recovered."));
    let (next, _) = f.run(&Turn::new("Still there?").on(&thread_id)).await;
    assert_eq!(f.runner.spawns(), 2);
    assert_ne!(f.runner.child_pid().await, Some(pid));
    assert_eq!(next.binding, ThreadBinding::Resumed);
    assert_eq!(next.thread_id, thread_id);
    assert_eq!(next.status, TurnStatus::Completed);
    assert_eq!(next.final_text, "Recovered.");
}

/// The watchdog: an app-server stopped mid-turn (SIGSTOP: alive, silent) is found by the
/// liveness check with no interrupt asked for, killed with its process group, and the turn
/// ends `Unresponsive`; the next turn starts a new app-server and resumes the thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_app_server_is_found_killed_and_replaced() {
    let f = Fixture::start().await;
    let mut settings = f.settings.clone();
    settings.liveness_interval = std::time::Duration::from_millis(500);
    let runner = Arc::new(openclaw_codex_harness::CodexRunner::new(settings));
    let input = f.input(&Turn::new("Tell me about fruit."));
    let Stalled {
        thread_id, turn, ..
    } = stalled_turn(&f, &runner, "Streaming until stopped.", input).await;
    let pid = runner.child_pid().await.expect("a running child");
    let group = Pid::from_raw(i32::try_from(pid).unwrap());
    nix::sys::signal::killpg(group, Signal::SIGSTOP).expect("SIGSTOP");

    let outcome = outcome_of(turn).await;
    let TurnStatus::Unresponsive { detail } = &outcome.status else {
        panic!("an unresponsive app-server expected: {:?}", outcome.status);
    };
    assert!(
        detail.contains("stopped answering") && detail.contains("thread/loaded/list"),
        "{detail}"
    );
    assert!(outcome.status.is_interrupted());
    let [Message::Assistant(partial)] = &outcome.entries[..] else {
        panic!("the partial reply only: {:#?}", outcome.entries);
    };
    assert_eq!(partial.stop_reason, StopReason::Aborted);
    assert!(
        partial
            .error_message
            .as_deref()
            .is_some_and(|m| m.contains("stopped answering")),
        "{partial:?}"
    );
    // Killed, stopped as it was: gone, or a zombie until its parent reaps it. The signal is
    // sent before the turn ends; the kernel finishes the process a moment later (longer on
    // a loaded machine), so the check allows a few seconds.
    assert!(
        dies_within(pid, std::time::Duration::from_secs(5)).await,
        "the stopped app-server was killed"
    );

    f.fake.push(FakeReply::text("Back."));
    let (next, _) = run_on(&runner, f.input(&Turn::new("Still there?").on(&thread_id))).await;
    assert_eq!(runner.spawns(), 2);
    assert_eq!(next.binding, ThreadBinding::Resumed);
    assert_eq!(next.status, TurnStatus::Completed);
    assert_eq!(next.final_text, "Back.");
}

/// Whether process `pid` is gone (or a zombie) within `limit`.
async fn dies_within(pid: u32, limit: std::time::Duration) -> bool {
    let began = std::time::Instant::now();
    loop {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "));
        if !alive {
            return true;
        }
        if began.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

//! Steering a running turn (one `turn/steer` per debounce window) and
//! interrupting it (`turn/interrupt`, or the run's cancel token).

use agent_testkit::FakeReply;
use openclaw_codex_harness::{HarnessError, HarnessEvent, TurnOutcome, TurnStatus};
use openclaw_transcript::{ContentBlock, Message, StopReason, UserContent};
use tokio::{sync::mpsc, task::JoinHandle};

use super::fixture::{Fixture, Turn, messages, outcome_of, stalled_turn};

/// A turn about fruit whose model reply streamed one delta and then stalled.
async fn stalled(
    f: &Fixture,
) -> (
    String,
    JoinHandle<Result<TurnOutcome, HarnessError>>,
    mpsc::Receiver<HarnessEvent>,
    Vec<HarnessEvent>,
) {
    let input = f.input(&Turn::new("Tell me about fruit."));
    let s = stalled_turn(f, &f.runner, "Let me think about fruit for a while.", input).await;
    (s.thread_id, s.turn, s.rx, s.seen)
}

async fn finish(
    turn: JoinHandle<Result<TurnOutcome, HarnessError>>,
    mut rx: mpsc::Receiver<HarnessEvent>,
    seen: &mut Vec<HarnessEvent>,
) -> TurnOutcome {
    let outcome = outcome_of(turn).await;
    while let Some(event) = rx.recv().await {
        seen.push(event);
    }
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_messages_go_out_as_one_turn_steer() {
    let f = Fixture::start().await;
    let (thread_id, turn, rx, mut seen) = stalled(&f).await;
    f.fake.push(FakeReply::text("Pears and apples, then."));
    f.runner
        .steer(&thread_id, "Also mention pears.")
        .await
        .expect("queued");
    f.runner
        .steer(&thread_id, "And apples.")
        .await
        .expect("queued");
    let outcome = finish(turn, rx, &mut seen).await;

    assert_eq!(outcome.status, TurnStatus::Completed);
    assert_eq!(outcome.final_text, "Pears and apples, then.");
    let steers: Vec<&Vec<String>> = seen
        .iter()
        .filter_map(|e| match e {
            HarnessEvent::Steered { messages } => Some(messages),
            _ => None,
        })
        .collect();
    assert_eq!(
        steers,
        [&vec![
            "Also mention pears.".to_owned(),
            "And apples.".to_owned()
        ]],
        "both messages went out in one turn/steer"
    );
    assert!(outcome.undelivered_steers.is_empty());

    // The model was called again with the steer messages after the input.
    let requests = f.requests();
    assert_eq!(requests.len(), 2);
    let user_texts: Vec<String> = messages(&requests[1])
        .into_iter()
        .filter(|(role, _)| role == "user")
        .flat_map(|(_, parts)| parts)
        .collect();
    let tail = &user_texts[user_texts.len() - 3..];
    assert_eq!(
        tail,
        ["Tell me about fruit.", "Also mention pears.", "And apples."]
    );

    // Our transcript: the abandoned partial reply, the steered messages, the answer.
    let shape: Vec<String> = outcome
        .entries
        .iter()
        .map(|m| match m {
            Message::Assistant(a) => format!(
                "assistant:{}:{:?}",
                a.stop_reason.as_str(),
                a.content.first().map(|b| match b {
                    ContentBlock::Text(t) => t.text.clone(),
                    _ => String::new(),
                })
            ),
            Message::User(u) => match &u.content {
                UserContent::Text(t) => format!("user:{t}"),
                UserContent::Blocks(_) => "user:blocks".to_owned(),
            },
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(shape.len(), 4, "{shape:#?}");
    assert!(
        shape[0].starts_with("assistant:aborted:Some(\"Let me"),
        "{shape:#?}"
    );
    assert_eq!(shape[1], "user:Also mention pears.");
    assert_eq!(shape[2], "user:And apples.");
    assert_eq!(shape[3], "assistant:stop:Some(\"Pears and apples, then.\")");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_ends_the_turn_and_closes_the_open_reply() {
    let f = Fixture::start().await;
    let (thread_id, turn, rx, mut seen) = stalled(&f).await;
    assert!(f.runner.is_running(&thread_id));
    f.runner
        .interrupt(&thread_id)
        .await
        .expect("interrupt sent");
    let outcome = finish(turn, rx, &mut seen).await;

    assert_eq!(outcome.status, TurnStatus::Interrupted);
    assert!(outcome.status.is_interrupted());
    let [Message::Assistant(partial)] = &outcome.entries[..] else {
        panic!("the partial reply only: {:#?}", outcome.entries);
    };
    assert_eq!(partial.stop_reason, StopReason::Aborted);
    assert_eq!(f.requests().len(), 1, "no model call after the interrupt");
    assert!(!f.runner.is_running(&thread_id));
    let late = f.runner.steer(&thread_id, "too late").await;
    assert!(
        matches!(late, Err(HarnessError::NoActiveTurn { .. })),
        "{late:?}"
    );

    // The thread is still usable.
    f.fake.push(FakeReply::text("Back again."));
    let (next, _) = f.run(&Turn::new("Hello?").on(&thread_id)).await;
    assert_eq!(next.status, TurnStatus::Completed);
    assert_eq!(next.final_text, "Back again.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_run_interrupts_the_turn() {
    let f = Fixture::start().await;
    let input = f.input(&Turn::new("Go."));
    let cancel = input.tool_ctx.cancel.clone();
    let stalled = stalled_turn(&f, &f.runner, "Streaming slowly.", input).await;
    cancel.cancel();
    let outcome = outcome_of(stalled.turn).await;
    assert_eq!(outcome.status, TurnStatus::Interrupted);
}

//! The queue decisions of every mode, message by message.

use super::*;

fn msg(q: &mut QueueState, text: &str) -> Inbound {
    Inbound {
        seq: q.next_seq(),
        text: text.into(),
        channel: TurnChannel::default(),
        options: RunOptions::default(),
        folded: Vec::new(),
        origin: Default::default(),
    }
}

const L: CollectLimits = CollectLimits {
    debounce_ms: 500,
    cap: 3,
    drop: DropPolicy::Summarize,
};

#[test]
fn steer_goes_into_the_active_run_and_a_late_steer_continues_it() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    let (d, start) = q.submit(m, QueueMode::Steer, 0, L);
    assert_eq!(d, Disposition::Started { run: 1 });
    assert!(start.is_some());
    let m = msg(&mut q, "b");
    assert_eq!(
        q.submit(m, QueueMode::Steer, 1, L).0,
        Disposition::Steered { run: 1 }
    );
    // The run would finish, but a steer is waiting: it continues.
    let more = q.finish_or_continue(1);
    assert_eq!(more.map(|v| v.len()), Some(1));
    assert!(q.is_running());
    assert_eq!(q.finish_or_continue(1), None);
    assert!(!q.is_running());
    // With no run active, a steer starts a new run.
    let m = msg(&mut q, "c");
    assert_eq!(
        q.submit(m, QueueMode::Steer, 2, L).0,
        Disposition::Started { run: 2 }
    );
}

#[test]
fn followups_run_one_by_one_in_order() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    q.submit(m, QueueMode::Followup, 0, L);
    let m = msg(&mut q, "b");
    assert_eq!(
        q.submit(m, QueueMode::Followup, 0, L).0,
        Disposition::Followup { run: 2, ahead: 1 }
    );
    let m = msg(&mut q, "c");
    assert_eq!(
        q.submit(m, QueueMode::Followup, 0, L).0,
        Disposition::Followup { run: 3, ahead: 2 }
    );
    assert_eq!(q.finish_or_continue(1), None);
    let next = q.run_ended(1).next;
    assert_eq!(
        next.as_ref().map(|s| (s.run, s.messages[0].text.as_str())),
        Some((2, "b"))
    );
    q.finish_or_continue(2);
    assert_eq!(q.run_ended(2).next.map(|s| s.run), Some(3));
}

#[test]
fn interrupt_cancels_and_runs_the_newest_first() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    let (_, start) = q.submit(m, QueueMode::Steer, 0, L);
    let cancel = start.map(|s| s.cancel).unwrap_or_default();
    let m = msg(&mut q, "queued");
    q.submit(m, QueueMode::Followup, 0, L);
    let m = msg(&mut q, "stop!");
    assert_eq!(
        q.submit(m, QueueMode::Interrupt, 0, L).0,
        Disposition::Interrupted {
            run: 3,
            interrupted: 1
        }
    );
    assert!(cancel.is_cancelled());
    let next = q.run_ended(1).next;
    assert_eq!(
        next.map(|s| s.messages[0].text.clone()),
        Some("stop!".to_owned())
    );
}

#[test]
fn an_interrupt_takes_the_steers_the_aborted_run_never_took() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    q.submit(m, QueueMode::Steer, 0, L);
    let m = msg(&mut q, "steer");
    q.submit(m, QueueMode::Steer, 0, L);
    let m = msg(&mut q, "stop!");
    q.submit(m, QueueMode::Interrupt, 0, L);
    let ended = q.run_ended(1);
    assert_eq!(ended.handoff, Some((2, 1)));
    let texts: Vec<String> = ended
        .next
        .map(|s| s.messages.into_iter().map(|m| m.text).collect())
        .unwrap_or_default();
    assert_eq!(
        texts,
        ["steer", "stop!"],
        "arrival order, and the interrupt still runs next"
    );
}

#[test]
fn steer_never_taken_by_an_aborted_run_becomes_the_next_run() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    q.submit(m, QueueMode::Steer, 0, L);
    let m = msg(&mut q, "late");
    q.submit(m, QueueMode::Steer, 0, L);
    // The run failed before draining.
    let ended = q.run_ended(1);
    assert_eq!(ended.handoff, Some((2, 1)));
    assert_eq!(
        ended.next.map(|s| (s.run, s.messages[0].text.clone())),
        Some((2, "late".to_owned()))
    );
}

#[test]
fn a_handed_off_steer_runs_after_an_earlier_follow_up() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    q.submit(m, QueueMode::Steer, 0, L);
    let m = msg(&mut q, "follow-up");
    q.submit(m, QueueMode::Followup, 0, L);
    let m = msg(&mut q, "late steer");
    q.submit(m, QueueMode::Steer, 0, L);
    let ended = q.run_ended(1);
    assert_eq!(ended.handoff, Some((3, 1)));
    let texts = |start: Option<RunStart>| start.map(|s| (s.run, s.messages[0].text.clone()));
    assert_eq!(texts(ended.next), Some((2, "follow-up".to_owned())));
    let after = q.run_ended(2);
    assert_eq!(texts(after.next), Some((3, "late steer".to_owned())));
}

#[test]
fn collect_coalesces_after_the_quiet_window_and_summarizes_overflow() {
    let mut q = QueueState::default();
    for (i, t) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        let m = msg(&mut q, t);
        assert_eq!(
            q.submit(m, QueueMode::Collect, i as u64 * 100, L).0,
            Disposition::Collected { run: 1 }
        );
    }
    assert!(q.flush_collect(600, L).is_none(), "not quiet yet");
    let start = q.flush_collect(900, L);
    let texts: Vec<String> = start
        .map(|s| s.messages.into_iter().map(|m| m.text).collect())
        .unwrap_or_default();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(
        texts[0].contains("2 earlier messages")
            && texts[0].contains("- a")
            && texts[0].contains("- b")
    );
    assert_eq!(&texts[1..], ["c", "d", "e"]);
}

#[test]
fn collect_drop_new_rejects_explicitly() {
    let mut q = QueueState::default();
    let limits = CollectLimits {
        drop: DropPolicy::New,
        ..L
    };
    for t in ["a", "b", "c"] {
        let m = msg(&mut q, t);
        q.submit(m, QueueMode::Collect, 0, limits);
    }
    let m = msg(&mut q, "d");
    assert!(matches!(
        q.submit(m, QueueMode::Collect, 0, limits).0,
        Disposition::Rejected { .. }
    ));
    assert_eq!(q.rejected().len(), 1);
    assert!(
        q.take_displaced().is_empty(),
        "a rejected new message is answered by its disposition"
    );
}

#[test]
fn collect_drop_old_displaces_the_oldest_and_reports_it() {
    let mut q = QueueState::default();
    let limits = CollectLimits {
        drop: DropPolicy::Old,
        ..L
    };
    for t in ["a", "b", "c", "d"] {
        let m = msg(&mut q, t);
        assert_eq!(
            q.submit(m, QueueMode::Collect, 0, limits).0,
            Disposition::Collected { run: 1 }
        );
    }
    let displaced = q.take_displaced();
    assert_eq!(displaced.len(), 1);
    assert_eq!(displaced[0].0.text, "a");
    let texts: Vec<String> = q
        .flush_collect(1_000, limits)
        .map(|s| s.messages.into_iter().map(|m| m.text).collect())
        .unwrap_or_default();
    assert_eq!(texts, ["b", "c", "d"]);
}

#[test]
fn a_heartbeat_run_takes_no_steering_and_waits_behind_a_user_run() {
    let mut q = QueueState::default();
    let user = msg(&mut q, "user");
    q.submit(user, QueueMode::Steer, 0, L);
    let mut beat = msg(&mut q, "heartbeat");
    beat.options.heartbeat = true;
    // Due while the user's run is active: it waits for its own run.
    assert_eq!(
        q.submit(beat, QueueMode::Followup, 0, L).0,
        Disposition::Followup { run: 2, ahead: 1 }
    );
    assert_eq!(q.finish_or_continue(1), None);
    let next = q.run_ended(1).next;
    assert_eq!(next.map(|s| s.run), Some(2));
    // A message that arrives during the heartbeat waits too.
    let later = msg(&mut q, "later");
    assert_eq!(
        q.submit(later, QueueMode::Steer, 0, L).0,
        Disposition::Followup { run: 3, ahead: 1 }
    );
    assert!(q.drain_steer(2).is_empty());
    assert_eq!(q.finish_or_continue(2), None);
    let next = q.run_ended(2);
    assert_eq!(next.handoff, None);
    assert_eq!(
        next.next.map(|s| (s.run, s.messages[0].text.clone())),
        Some((3, "later".to_owned()))
    );
}

#[test]
fn requeued_steer_keeps_its_order() {
    let mut q = QueueState::default();
    let m = msg(&mut q, "a");
    q.submit(m, QueueMode::Steer, 0, L);
    for t in ["b", "c"] {
        let m = msg(&mut q, t);
        q.submit(m, QueueMode::Steer, 0, L);
    }
    let drained = q.drain_steer(1);
    q.requeue_steer(1, drained);
    let again: Vec<String> = q.drain_steer(1).into_iter().map(|m| m.text).collect();
    assert_eq!(again, ["b", "c"]);
}

#[test]
fn dispositions_read_as_plain_text_in_logs() {
    assert_eq!(Disposition::Started { run: 1 }.to_string(), "started run 1");
    assert_eq!(
        Disposition::Followup { run: 4, ahead: 1 }.to_string(),
        "follow-up run 4 (1 ahead)"
    );
    assert_eq!(
        Disposition::Interrupted {
            run: 6,
            interrupted: 5
        }
        .to_string(),
        "started run 6 after interrupting run 5"
    );
    assert_eq!(
        Disposition::Rejected {
            reason: "queue full".into()
        }
        .to_string(),
        "rejected: queue full"
    );
}

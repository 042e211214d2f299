//! Due jobs, claims and the missed-run policy.

use openclaw_cron::{
    Delivery, Job, JobPatch, JobSpec, RunOutcome, RunStatus, Schedule, Target,
    plan::{self, After, Due},
};
use proptest::prelude::*;

use super::{ts, zone};

fn spec(schedule: Schedule) -> JobSpec {
    JobSpec {
        name: String::new(),
        schedule,
        prompt: "Summarise the overnight alerts".into(),
        target: Target::Isolated,
        lightweight: false,
        delivery: Delivery::None,
        delete_after_run: None,
        enabled: true,
    }
}

fn hourly() -> Schedule {
    Schedule::Cron {
        expr: "0 * * * *".into(),
        tz: None,
    }
}

fn job(id: &str, schedule: Schedule, now: &str) -> Job {
    Job::new(
        id.into(),
        "main".into(),
        spec(schedule),
        &zone("UTC"),
        ts(now),
    )
    .unwrap()
}

fn ok() -> RunOutcome {
    RunOutcome {
        status: RunStatus::Ok,
        error: None,
        session_key: None,
    }
}

#[test]
fn a_new_job_is_due_at_its_first_slot_and_named_after_its_prompt() {
    let j = job("a", hourly(), "2026-12-01T09:20:00Z");
    assert_eq!(j.spec.name, "Summarise the overnight alerts");
    assert_eq!(j.state.next_run_at, Some(ts("2026-12-01T10:00:00Z")));
    assert!(plan::due([&j], ts("2026-12-01T09:59:59Z")).is_empty());
    assert_eq!(
        plan::due([&j], ts("2026-12-01T10:00:00Z")),
        vec![Due {
            job_id: "a".into(),
            slot: ts("2026-12-01T10:00:00Z")
        }]
    );
    assert_eq!(j.isolated_session_key(), "agent:main:cron:a");
}

#[test]
fn due_jobs_come_oldest_slot_first() {
    let a = job("a", hourly(), "2026-12-01T09:20:00Z");
    let b = job(
        "b",
        Schedule::At {
            at: ts("2026-12-01T09:30:00Z"),
        },
        "2026-12-01T09:20:00Z",
    );
    let due = plan::due([&a, &b], ts("2026-12-01T11:00:00Z"));
    let ids: Vec<&str> = due.iter().map(|d| d.job_id.as_str()).collect();
    assert_eq!(ids, ["b", "a"]);
    assert_eq!(plan::next_wake([&a, &b]), Some(ts("2026-12-01T09:30:00Z")));
}

#[test]
fn a_claimed_run_is_not_due_again_until_released() {
    let mut j = job("a", hourly(), "2026-12-01T09:20:00Z");
    let slot = ts("2026-12-01T10:00:00Z");
    let claim = plan::claim(&mut j, slot, ts("2026-12-01T10:00:01Z"));
    assert_eq!(
        claim.event_id("a"),
        format!("cron:a:{}", slot.as_millisecond())
    );
    assert!(plan::due([&j], ts("2026-12-01T12:00:00Z")).is_empty());
    assert_eq!(plan::next_wake([&j]), None);
    plan::release(&mut j);
    assert_eq!(plan::due([&j], ts("2026-12-01T10:00:02Z"))[0].slot, slot);
}

#[test]
fn slots_missed_while_down_run_once_and_are_counted() {
    let mut j = job("a", hourly(), "2026-12-01T09:20:00Z");
    // Down from 09:30 to 13:30: the 10:00 slot is due once at start-up.
    let now = ts("2026-12-01T13:30:00Z");
    let due = plan::due([&j], now);
    assert_eq!(due.len(), 1);
    plan::claim(&mut j, due[0].slot, now);
    let after = plan::finish(&mut j, &ok(), &zone("UTC"), ts("2026-12-01T13:31:00Z")).unwrap();
    assert_eq!(after, After::Keep);
    assert_eq!(j.state.last_run_at, Some(ts("2026-12-01T10:00:00Z")));
    assert_eq!(
        j.state.missed_runs, 3,
        "11:00, 12:00 and 13:00 were folded in"
    );
    assert_eq!(j.state.next_run_at, Some(ts("2026-12-01T14:00:00Z")));
    assert_eq!(j.state.runs, 1);
    assert!(plan::due([&j], ts("2026-12-01T13:59:59Z")).is_empty());
}

#[test]
fn a_long_run_skips_the_slots_it_covered() {
    let mut j = job("a", hourly(), "2026-12-01T09:20:00Z");
    plan::claim(
        &mut j,
        ts("2026-12-01T10:00:00Z"),
        ts("2026-12-01T10:00:00Z"),
    );
    plan::finish(&mut j, &ok(), &zone("UTC"), ts("2026-12-01T11:00:00Z")).unwrap();
    // A run that ended exactly at 11:00 has covered it: the next slot is 12:00.
    assert_eq!(j.state.next_run_at, Some(ts("2026-12-01T12:00:00Z")));
    assert_eq!(j.state.missed_runs, 1);
}

#[test]
fn a_one_shot_is_removed_after_its_run_unless_asked_to_stay() {
    let at = Schedule::At {
        at: ts("2026-12-01T10:00:00Z"),
    };
    let mut j = job("a", at.clone(), "2026-12-01T09:00:00Z");
    plan::claim(
        &mut j,
        ts("2026-12-01T10:00:00Z"),
        ts("2026-12-01T10:00:00Z"),
    );
    assert_eq!(
        plan::finish(&mut j, &ok(), &zone("UTC"), ts("2026-12-01T10:00:05Z")).unwrap(),
        After::Remove
    );
    let mut keep = spec(at);
    keep.delete_after_run = Some(false);
    let mut j = Job::new(
        "b".into(),
        "main".into(),
        keep,
        &zone("UTC"),
        ts("2026-12-01T09:00:00Z"),
    )
    .unwrap();
    plan::claim(
        &mut j,
        ts("2026-12-01T10:00:00Z"),
        ts("2026-12-01T10:00:00Z"),
    );
    let failed = RunOutcome {
        status: RunStatus::Error,
        error: Some("provider unavailable".into()),
        session_key: None,
    };
    assert_eq!(
        plan::finish(&mut j, &failed, &zone("UTC"), ts("2026-12-01T10:00:05Z")).unwrap(),
        After::Keep
    );
    assert_eq!(j.state.next_run_at, None);
    assert_eq!(j.state.last_status, Some(RunStatus::Error));
    assert_eq!(j.state.last_error.as_deref(), Some("provider unavailable"));
    assert!(plan::due([&j], ts("2027-01-01T00:00:00Z")).is_empty());
}

#[test]
fn disabled_jobs_are_never_due_and_enabling_starts_from_now() {
    let mut j = job("a", hourly(), "2026-12-01T09:20:00Z");
    let utc = zone("UTC");
    j.apply(
        JobPatch {
            enabled: Some(false),
            ..JobPatch::default()
        },
        &utc,
        ts("2026-12-01T09:30:00Z"),
    )
    .unwrap();
    assert!(plan::due([&j], ts("2026-12-02T00:00:00Z")).is_empty());
    j.apply(
        JobPatch {
            enabled: Some(true),
            ..JobPatch::default()
        },
        &utc,
        ts("2026-12-02T07:10:00Z"),
    )
    .unwrap();
    assert_eq!(j.state.next_run_at, Some(ts("2026-12-02T08:00:00Z")));
}

#[test]
fn specs_that_cannot_run_are_refused_with_the_field() {
    let utc = zone("UTC");
    let mut s = spec(hourly());
    s.prompt = "  ".into();
    let err = Job::new(
        "a".into(),
        "main".into(),
        s,
        &utc,
        ts("2026-12-01T00:00:00Z"),
    )
    .unwrap_err();
    assert_eq!(err.field, "prompt");
    let mut s = spec(hourly());
    s.target = Target::Main;
    s.lightweight = true;
    assert_eq!(
        Job::new(
            "a".into(),
            "main".into(),
            s,
            &utc,
            ts("2026-12-01T00:00:00Z")
        )
        .unwrap_err()
        .field,
        "lightweight"
    );
    let s = spec(Schedule::Cron {
        expr: "not cron".into(),
        tz: None,
    });
    let err = Job::new(
        "a".into(),
        "main".into(),
        s,
        &utc,
        ts("2026-12-01T00:00:00Z"),
    )
    .unwrap_err();
    assert_eq!(err.field, "schedule");
    assert!(err.to_string().contains("not cron"), "{err}");
    // A patch that would break the job leaves it as it was.
    let mut j = job("a", hourly(), "2026-12-01T09:20:00Z");
    let before = j.clone();
    assert!(
        j.apply(
            JobPatch {
                prompt: Some(String::new()),
                ..JobPatch::default()
            },
            &utc,
            ts("2026-12-01T09:30:00Z")
        )
        .is_err()
    );
    assert_eq!(j, before);
}

proptest! {
    /// However the scheduler's ticks fall, every slot of an interval job is either run once or
    /// counted as missed, never both and never twice.
    #[test]
    fn every_slot_is_run_or_counted_once(
        every_min in 1u64..90,
        ticks in proptest::collection::vec(1i64..400, 1..60),
    ) {
        let start = ts("2026-12-01T00:00:00Z");
        let mut j = Job::new(
            "a".into(),
            "main".into(),
            spec(Schedule::Every { every_ms: every_min * 60_000, anchor: Some(start) }),
            &zone("UTC"),
            start,
        ).unwrap();
        let mut now = start;
        let mut run_slots = Vec::new();
        for minutes in ticks {
            now = now.checked_add(jiff::SignedDuration::from_mins(minutes)).unwrap();
            for due in plan::due([&j], now) {
                run_slots.push(due.slot);
                plan::claim(&mut j, due.slot, now);
                plan::finish(&mut j, &ok(), &zone("UTC"), now).unwrap();
            }
        }
        let mut sorted = run_slots.clone();
        sorted.dedup();
        prop_assert_eq!(sorted.len(), run_slots.len(), "a slot ran twice");
        // Slots in (start, now]: the anchor itself is not a slot after creation.
        let elapsed_min = (now.as_second() - start.as_second()) / 60;
        let slots = u64::try_from(elapsed_min).unwrap() / every_min;
        let accounted = j.state.runs + j.state.missed_runs;
        prop_assert_eq!(accounted, slots, "runs {} missed {}", j.state.runs, j.state.missed_runs);
        prop_assert!(j.state.next_run_at.unwrap() > now);
    }
}

#[test]
fn a_run_on_demand_is_counted_and_leaves_the_schedule() {
    let mut j = job("a", hourly(), "2026-12-01T09:20:00Z");
    let next = j.state.next_run_at;
    let failed = RunOutcome {
        status: RunStatus::Error,
        error: Some("UNAVAILABLE: provider down".into()),
        ..ok()
    };
    plan::record_on_demand(&mut j, &failed, ts("2026-12-01T09:25:00Z"));
    plan::record_on_demand(&mut j, &ok(), ts("2026-12-01T09:40:00Z"));
    assert_eq!(j.state.runs, 2);
    assert_eq!(j.state.last_status, Some(RunStatus::Ok));
    assert_eq!(j.state.last_error, None);
    assert_eq!(j.state.last_run_at, Some(ts("2026-12-01T09:40:00Z")));
    assert_eq!(j.state.next_run_at, next, "the schedule is unchanged");
    assert_eq!(j.state.missed_runs, 0);
    // A scheduled run afterwards counts on from there.
    let due = plan::due([&j], ts("2026-12-01T10:00:00Z"));
    plan::claim(&mut j, due[0].slot, ts("2026-12-01T10:00:00Z"));
    plan::finish(&mut j, &ok(), &zone("UTC"), ts("2026-12-01T10:00:30Z")).unwrap();
    assert_eq!(j.state.runs, 3);
}

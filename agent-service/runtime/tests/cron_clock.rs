//! The cron scheduler on a clock the test moves: the runtime reads the time from the clock it
//! is given (a hand-set one here) and waits on tokio's paused clock, so days pass in
//! milliseconds. Missed runs after downtime: a service down across many slots runs each
//! job once when it is back (for its oldest missed slot, across a daylight-saving change) and
//! counts the rest as missed; the next slot then comes on time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed expectation is the test failing"
)]

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use agent_runtime::{
    MapEnv, Runtime, RuntimeOptions, Settings, TranscriptItem, sessions::SessionTarget,
};
use jiff::Timestamp;
use openclaw_cron::{Delivery, Job, JobSpec, RunStatus, Schedule, Target};
use openclaw_transcript::{Clock, EntryBody, Message, UserContent};

/// A clock that says what the test last set.
struct HandClock(Mutex<Timestamp>);

impl HandClock {
    fn set(&self, at: &str) {
        *self.0.lock().unwrap() = at.parse().unwrap();
    }
}

impl Clock for HandClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap()
    }
}

const CONFIG: &str = r#"{
  agents: { defaults: { model: "fake/m", userTimezone: "Europe/Berlin", skipBootstrap: true } },
  models: { providers: { fake: { api: "scripted", script: "script.json5", models: [{ id: "m" }] } } },
}"#;

fn start(dir: &std::path::Path, clock: &Arc<HandClock>) -> Arc<Runtime> {
    Runtime::start(RuntimeOptions::new(
        Settings {
            state_dir: dir.join("state"),
            config_path: dir.join("openclaw.json"),
            home_dir: dir.to_path_buf(),
        },
        Arc::new(MapEnv::of([("HOME", dir.display().to_string())])),
        Arc::clone(clock) as Arc<dyn Clock>,
        Arc::new(prompt_client::InProcessPromptSource::new().unwrap()),
    ))
    .unwrap()
}

fn spec(schedule: Schedule, prompt: &str) -> JobSpec {
    JobSpec {
        name: String::new(),
        schedule,
        prompt: prompt.into(),
        target: Target::Isolated,
        lightweight: false,
        delivery: Delivery::None,
        delete_after_run: None,
        enabled: true,
    }
}

fn ts(text: &str) -> Option<Timestamp> {
    Some(text.parse().unwrap())
}

/// Waits (on the paused clock: the scheduler's sleeps pass at once) until `id` has `runs`
/// finished runs.
async fn runs_reach(runtime: &Arc<Runtime>, id: &str, runs: u64) -> Job {
    for _ in 0..2_000 {
        let job = runtime.cron("main").unwrap().get(id).unwrap();
        if job.state.runs >= runs && job.state.running.is_none() {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("job {id} never reached {runs} runs");
}

/// The user and assistant texts of a session, in order.
async fn texts(runtime: &Arc<Runtime>, key: &str) -> Vec<(&'static str, String)> {
    let mut stream = runtime
        .sessions()
        .transcript("main", &SessionTarget::Key(key.to_owned()))
        .await
        .unwrap();
    let mut out = Vec::new();
    while let Some(item) = stream.recv().await {
        if let TranscriptItem::Entry(entry) = item.unwrap()
            && let EntryBody::Message { message } = entry.body
        {
            match message {
                Message::User(user) => {
                    if let UserContent::Text(text) = user.content {
                        out.push(("user", text));
                    }
                }
                Message::Assistant(_) => out.push(("assistant", String::new())),
                _ => {}
            }
        }
    }
    out
}

#[tokio::test(start_paused = true)]
async fn a_service_down_across_many_slots_runs_each_job_once_and_counts_the_missed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("openclaw.json"), CONFIG).unwrap();
    std::fs::write(
        dir.path().join("script.json5"),
        r#"{ turns: [{ text: "Done." }] }"#,
    )
    .unwrap();
    // Saturday 2026-03-28, 13:00 in Berlin (CET); clocks go forward that night.
    let clock = Arc::new(HandClock(Mutex::new(
        "2026-03-28T12:00:00Z".parse().unwrap(),
    )));

    let runtime = start(dir.path(), &clock);
    runtime.recover_journals().await;
    runtime.start_cron();
    let cron = runtime.cron("main").unwrap();
    let hourly = cron
        .add(spec(
            Schedule::Every {
                every_ms: 3_600_000,
                anchor: None,
            },
            "Check the queue depth.",
        ))
        .unwrap();
    let daily = cron
        .add(spec(
            Schedule::Cron {
                expr: "0 9 * * *".into(),
                tz: Some("Europe/Berlin".into()),
            },
            "Send the morning digest.",
        ))
        .unwrap();
    assert_eq!(hourly.state.next_run_at, ts("2026-03-28T13:00:00Z"));
    // 09:00 on Sunday is summer time already (CEST, UTC+2).
    assert_eq!(daily.state.next_run_at, ts("2026-03-29T07:00:00Z"));
    // An hour of paused time passes; the hand clock does not move, so nothing is due.
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    assert_eq!(cron.get(&hourly.id).unwrap().state.runs, 0);
    runtime.shutdown(Duration::from_secs(5)).await;
    drop(cron);
    drop(runtime);

    // Down until Tuesday 12:00 in Berlin: 70 hourly slots and 3 daily ones passed.
    clock.set("2026-03-31T10:00:00Z");
    let runtime = start(dir.path(), &clock);
    runtime.recover_journals().await;
    runtime.start_cron();
    let h = runs_reach(&runtime, &hourly.id, 1).await;
    let d = runs_reach(&runtime, &daily.id, 1).await;
    // One run each, for the oldest missed slot; the others counted, not run.
    assert_eq!(h.state.last_run_at, ts("2026-03-28T13:00:00Z"));
    assert_eq!(h.state.missed_runs, 69, "{h:?}");
    assert_eq!(h.state.next_run_at, ts("2026-03-31T11:00:00Z"));
    assert_eq!(h.state.last_status, Some(RunStatus::Ok));
    assert_eq!(d.state.last_run_at, ts("2026-03-29T07:00:00Z"));
    assert_eq!(d.state.missed_runs, 2, "{d:?}");
    assert_eq!(d.state.next_run_at, ts("2026-04-01T07:00:00Z"));
    assert_eq!(d.state.last_status, Some(RunStatus::Ok));
    for (job, prompt) in [
        (&hourly, "Check the queue depth."),
        (&daily, "Send the morning digest."),
    ] {
        assert_eq!(
            texts(&runtime, &job.isolated_session_key()).await,
            [("user", prompt.to_owned()), ("assistant", String::new())],
            "one run in {}",
            job.isolated_session_key()
        );
    }

    // Back on schedule: the next hourly slot comes, the scheduler (sleeping at most 30 s of
    // tokio time between looks) runs it once, and the missed count stays.
    clock.set("2026-03-31T11:00:00Z");
    tokio::time::sleep(Duration::from_secs(31)).await;
    let h = runs_reach(&runtime, &hourly.id, 2).await;
    assert_eq!(h.state.runs, 2);
    assert_eq!(h.state.missed_runs, 69);
    assert_eq!(h.state.last_run_at, ts("2026-03-31T11:00:00Z"));
    assert_eq!(h.state.next_run_at, ts("2026-03-31T12:00:00Z"));
    let d = runtime.cron("main").unwrap().get(&daily.id).unwrap();
    assert_eq!(d.state.runs, 1, "the daily job is not due: {d:?}");
    runtime.shutdown(Duration::from_secs(5)).await;
}

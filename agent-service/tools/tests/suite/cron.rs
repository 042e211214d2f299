//! cron: the tool's arguments become jobs (through a control backed by the real job store),
//! with errors that name the field.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use openclaw_cron::{Delivery, Job, JobPatch, JobSpec, JobStore, Schedule, Target};
use openclaw_tools::{CronControl, CronTool, NoCron};
use serde_json::json;

use super::{Fixture, NOW, error_text, ok_text};

/// The calling agent's jobs in a real store (in a temporary file), with the clock fixed.
struct StoreControl {
    store: Mutex<JobStore>,
    zone: jiff::tz::TimeZone,
    runs: Mutex<Vec<String>>,
    _dir: tempfile::TempDir,
}

impl StoreControl {
    fn new(zone: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = JobStore::open(dir.path().join("jobs.json"), now())
            .unwrap()
            .store;
        Self {
            store: Mutex::new(store),
            zone: jiff::tz::TimeZone::get(zone).unwrap(),
            runs: Mutex::new(Vec::new()),
            _dir: dir,
        }
    }
}

fn now() -> jiff::Timestamp {
    NOW.parse().unwrap()
}

#[async_trait]
impl CronControl for StoreControl {
    async fn add(&self, spec: JobSpec) -> Result<Job, String> {
        let mut store = self.store.lock().unwrap();
        let job = store
            .add("main", spec, &self.zone, now())
            .map_err(|e| e.to_string())?
            .clone();
        store.save().map_err(|e| e.to_string())?;
        Ok(job)
    }

    async fn list(&self) -> Result<Vec<Job>, String> {
        let store = self.store.lock().unwrap();
        Ok(store.list(Some("main")).into_iter().cloned().collect())
    }

    async fn update(&self, id: &str, patch: JobPatch) -> Result<Job, String> {
        let mut store = self.store.lock().unwrap();
        store
            .update(id, patch, &self.zone, now())
            .map_err(|e| e.to_string())?
            .cloned()
            .ok_or_else(|| format!("no job {id:?}"))
    }

    async fn remove(&self, id: &str) -> Result<Job, String> {
        let mut store = self.store.lock().unwrap();
        store.remove(id).ok_or_else(|| format!("no job {id:?}"))
    }

    async fn run_now(&self, id: &str, _caller_session: &str) -> Result<String, String> {
        self.runs.lock().unwrap().push(id.to_owned());
        Ok(format!("job {id} started"))
    }
}

fn fixture(zone: &str) -> (Fixture, Arc<StoreControl>) {
    let mut f = Fixture::new();
    let control = Arc::new(StoreControl::new(zone));
    f.ctx.cron = control.clone();
    f.ctx.timezone = Some(zone.to_owned());
    (f, control)
}

#[tokio::test]
async fn add_a_recurring_job_in_the_users_time_zone() {
    let (f, control) = fixture("Europe/Berlin");
    let out = f
        .call(
            &CronTool,
            json!({"action": "add", "schedule": "0 9 * * 1-5", "prompt": "Check the deploy queue"}),
        )
        .await;
    let text = ok_text(&out);
    // 2026-03-03 is a Tuesday, 14:05 in Berlin: the next run is Wednesday 09:00 local.
    assert!(text.contains("next run 2026-03-04 09:00 CET"), "{text}");
    assert!(text.contains("cron \"0 9 * * 1-5\""), "{text}");
    let jobs = control.list().await.expect("jobs");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].spec.target, Target::Isolated);
    assert_eq!(jobs[0].spec.delivery, Delivery::None);
    assert_eq!(jobs[0].spec.name, "Check the deploy queue");
    assert_eq!(
        jobs[0].state.next_run_at,
        Some("2026-03-04T08:00:00Z".parse().unwrap())
    );
    let details = out.details().unwrap();
    assert_eq!(details["id"], jobs[0].id.as_str());
}

#[tokio::test]
async fn one_shots_intervals_targets_and_delivery() {
    let (f, control) = fixture("UTC");
    ok_text(
        &f.call(
            &CronTool,
            json!({"action": "add", "schedule": "at 2026-03-03T18:00:00+01:00",
                   "prompt": "Remind the user about the call", "target": "main"}),
        )
        .await,
    );
    ok_text(
        &f.call(
            &CronTool,
            json!({"action": "add", "schedule": "every 2h", "prompt": "Poll the build",
                   "deliver": "session", "lightweight": true, "name": "build"}),
        )
        .await,
    );
    ok_text(
        &f.call(
            &CronTool,
            json!({"action": "add", "schedule": "30 6 * * *", "tz": "Asia/Tokyo",
                   "prompt": "Morning summary", "deliverTo": "agent:main:telegram:direct:42"}),
        )
        .await,
    );
    let jobs = control.list().await.expect("jobs");
    assert_eq!(jobs.len(), 3);
    let at = jobs.iter().find(|j| j.spec.target == Target::Main).unwrap();
    assert_eq!(
        at.state.next_run_at,
        Some("2026-03-03T17:00:00Z".parse().unwrap())
    );
    assert!(at.deletes_after_run());
    let every = jobs.iter().find(|j| j.spec.name == "build").unwrap();
    assert!(every.spec.lightweight);
    assert_eq!(every.spec.delivery, Delivery::Session { session_key: None });
    assert_eq!(
        every.state.next_run_at,
        Some("2026-03-03T15:05:00Z".parse().unwrap())
    );
    let tokyo = jobs
        .iter()
        .find(|j| j.spec.name == "Morning summary")
        .unwrap();
    assert_eq!(
        tokyo.spec.schedule,
        Schedule::Cron {
            expr: "30 6 * * *".into(),
            tz: Some("Asia/Tokyo".into())
        }
    );
    assert_eq!(
        tokyo.spec.delivery,
        Delivery::Session {
            session_key: Some("agent:main:telegram:direct:42".into())
        }
    );
    // 06:30 in Tokyo is 21:30Z the day before.
    assert_eq!(
        tokyo.state.next_run_at,
        Some("2026-03-03T21:30:00Z".parse().unwrap())
    );

    let listed = f.call(&CronTool, json!({"action": "list"})).await;
    let text = ok_text(&listed);
    assert!(text.starts_with("3 cron job(s):"), "{text}");
    assert!(text.contains("main session event"), "{text}");
    assert!(text.contains("own session, lightweight"), "{text}");
}

#[tokio::test]
async fn update_remove_and_run_by_id() {
    let (f, control) = fixture("UTC");
    f.call(
        &CronTool,
        json!({"action": "add", "schedule": "every 1h", "prompt": "Tidy the inbox"}),
    )
    .await;
    let id = control.list().await.expect("jobs")[0].id.clone();
    let out = f
        .call(
            &CronTool,
            json!({"action": "update", "id": id, "enabled": false}),
        )
        .await;
    assert!(ok_text(&out).contains("disabled"), "{}", ok_text(&out));
    assert!(!control.list().await.expect("jobs")[0].spec.enabled);
    let out = f.call(&CronTool, json!({"action": "run", "id": id})).await;
    assert_eq!(ok_text(&out), format!("job {id} started"));
    assert_eq!(*control.runs.lock().unwrap(), vec![id.clone()]);
    let out = f
        .call(&CronTool, json!({"action": "remove", "id": id}))
        .await;
    assert!(
        ok_text(&out).starts_with("Removed cron job"),
        "{}",
        ok_text(&out)
    );
    assert!(control.list().await.expect("jobs").is_empty());
    let out = f
        .call(&CronTool, json!({"action": "remove", "id": id}))
        .await;
    assert!(error_text(&out).contains("no job"), "{}", error_text(&out));
    let empty = f.call(&CronTool, json!({"action": "list"})).await;
    assert_eq!(ok_text(&empty), "No cron jobs.");
}

#[tokio::test]
async fn bad_arguments_name_the_field() {
    let (f, control) = fixture("UTC");
    let cases = [
        (
            json!({"action": "add", "prompt": "x"}),
            "schedule: required",
        ),
        (json!({"action": "add", "schedule": "every 1h"}), "prompt"),
        (
            json!({"action": "add", "schedule": "every 1h", "prompt": "  "}),
            "prompt",
        ),
        (
            json!({"action": "add", "schedule": "61 * * * *", "prompt": "x"}),
            "not a cron expression",
        ),
        (
            json!({"action": "add", "schedule": "0 0 30 2 *", "prompt": "x"}),
            "never matches",
        ),
        (
            json!({"action": "add", "schedule": "every 1h", "tz": "UTC", "prompt": "x"}),
            "tz",
        ),
        (
            json!({"action": "add", "schedule": "0 9 * * *", "tz": "Mars/Base", "prompt": "x"}),
            "Mars/Base",
        ),
        (
            json!({"action": "add", "schedule": "every 1h", "prompt": "x", "deliver": "email"}),
            "deliver",
        ),
        (
            json!({"action": "add", "schedule": "every 1h", "prompt": "x", "target": "main", "lightweight": true}),
            "lightweight",
        ),
        (
            json!({"action": "add", "schedule": "every 1h", "prompt": "x", "sudo": true}),
            "sudo",
        ),
        (json!({"action": "update", "schedule": "every 1h"}), "id"),
        (
            json!({"action": "update", "id": "abc"}),
            "at least one field",
        ),
        (json!({"action": "pause", "id": "abc"}), "action"),
    ];
    for (args, expected) in cases {
        let out = f.call(&CronTool, args.clone()).await;
        let text = error_text(&out);
        assert!(text.contains(expected), "{args}: {text}");
    }
    assert!(
        control.list().await.expect("jobs").is_empty(),
        "nothing was added by a bad call"
    );
}

#[tokio::test]
async fn a_session_without_a_scheduler_says_so() {
    let mut f = Fixture::new();
    f.ctx.cron = Arc::new(NoCron);
    let out = f
        .call(
            &CronTool,
            json!({"action": "add", "schedule": "every 1h", "prompt": "x"}),
        )
        .await;
    assert!(
        error_text(&out).contains("cannot schedule"),
        "{}",
        error_text(&out)
    );
}

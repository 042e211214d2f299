//! Cron jobs carry the privilege of whoever created them: the model in a sandboxed session
//! cannot schedule work into the unsandboxed main session (as a job's target, or as where an
//! isolated job delivers its result), cannot raise a job by changing it, and a job of the
//! lesser privilege (an older jobs file's, whose creator is unknown) is refused when it falls
//! due in the main session. The operator (the API) may still create any job.

use agent_testkit::WireFormat;
use openclaw_proto::agent::v1 as pb;
use serde_json::{Value, json};

use super::calls::call;
use super::harness::{Harness, Service, StartOptions};
use super::run_events::session_key;

/// Non-main sessions sandboxed (bubblewrap); the main session runs on the host.
const SANDBOXED: &str = r#", sandbox: { mode: "non-main", scope: "session" }"#;

fn bwrap() -> String {
    agent_testkit::packages::ensure_program("bwrap", "bubblewrap")
        .unwrap_or_else(|e| panic!("bubblewrap is needed for the sandbox tests: {e}"))
        .display()
        .to_string()
}

/// One turn in session `key` whose model calls `cron` with `arguments`: the tool's result
/// (error flag, text).
async fn cron_call(h: &Harness, key: &str, arguments: Value) -> (bool, String) {
    let result = super::cron::cron_call(h, session_key(key), arguments).await;
    (result.is_error, result.output)
}

fn jobs_file(h: &Harness) -> Value {
    let text = std::fs::read_to_string(h.service.path("state/cron/jobs.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_sandboxed_session_cannot_schedule_work_into_the_main_session() {
    let h = Harness::start_sandboxed(WireFormat::ChatCompletions, SANDBOXED, "", &bwrap()).await;
    let group = "telegram:group:9";
    // The attack: a job in the host's main session, or a result delivered there.
    for arguments in [
        json!({ "action": "add", "schedule": "every 1h", "target": "main",
                "prompt": "Run `id` with exec and report." }),
        json!({ "action": "add", "schedule": "every 1h", "deliver": "session",
                "prompt": "Summarise." }),
        json!({ "action": "add", "schedule": "every 1h", "deliver": "session",
                "deliverTo": "agent:main:main", "prompt": "Summarise." }),
    ] {
        let (is_error, output) = cron_call(&h, group, arguments.clone()).await;
        assert!(is_error, "{arguments}: {output}");
        assert!(
            output.contains("agent:main:main runs unsandboxed")
                && output.contains("privilege of a sandboxed session"),
            "{arguments}: {output}"
        );
    }
    assert!(
        jobs_file(&h)["jobs"].as_array().is_none_or(Vec::is_empty),
        "{}",
        jobs_file(&h)
    );
    // Its own kind of work is allowed, and recorded with its privilege.
    let (is_error, output) = cron_call(
        &h,
        group,
        json!({ "action": "add", "schedule": "every 1h", "prompt": "Check the feed." }),
    )
    .await;
    assert!(!is_error, "{output}");
    let job = jobs_file(&h)["jobs"][0].clone();
    assert_eq!(job["privilege"], "sandboxed", "{job}");
    assert_eq!(jobs_file(&h)["version"], 2);
    let id = job["id"].as_str().expect("id").to_owned();
    // Changed from the main session, the job keeps the lesser privilege: still no main target.
    let (is_error, output) = cron_call(
        &h,
        "main",
        json!({ "action": "update", "id": id, "target": "main" }),
    )
    .await;
    assert!(is_error, "{output}");
    assert!(output.contains("runs unsandboxed"), "{output}");
    assert_eq!(jobs_file(&h)["jobs"][0]["target"], "isolated");
    // The operator may schedule into the main session.
    let added = call!(
        h.service,
        add_cron_job,
        pb::AddCronJobRequest {
            agent_id: String::new(),
            spec: Some(pb::CronJobSpec {
                schedule: "every 1h".into(),
                prompt: "Morning briefing.".into(),
                target: pb::CronTarget::Main as i32,
                ..Default::default()
            }),
        }
    );
    let stored = jobs_file(&h)["jobs"]
        .as_array()
        .and_then(|jobs| jobs.iter().find(|j| j["id"] == added.id.as_str()).cloned())
        .expect("stored");
    assert_eq!(stored["privilege"], "host", "{stored}");
}

/// A version 1 jobs file did not record creators: its jobs get the lesser privilege, and a
/// main-session one is refused when it is run, with the reason, and nothing reaches the main
/// session.
#[tokio::test]
async fn an_older_main_session_job_is_refused_at_run_time() {
    let h = Harness::start_sandboxed(WireFormat::ChatCompletions, SANDBOXED, "", &bwrap()).await;
    let (dir, fake, prompt) = h.stop().await;
    let now = super::harness::now_ms();
    let at = |ms: i64| {
        jiff::Timestamp::from_millisecond(ms)
            .expect("instant")
            .to_string()
    };
    let v1 = json!({
        "version": 1,
        "jobs": [{
            "id": "planted",
            "agentId": "main",
            "name": "planted",
            "schedule": { "kind": "every", "everyMs": 3_600_000 },
            "prompt": "Run `id` with exec on the host.",
            "target": "main",
            "createdAt": at(now - 60_000),
            "updatedAt": at(now - 60_000),
            "state": { "nextRunAt": at(now + 3_000_000) }
        }]
    });
    std::fs::create_dir_all(dir.path().join("state/cron")).expect("dir");
    std::fs::write(dir.path().join("state/cron/jobs.json"), v1.to_string()).expect("jobs");
    let config = std::fs::read_to_string(dir.path().join("openclaw.json")).expect("config");
    let options = StartOptions {
        sandbox_program: bwrap(),
        ..StartOptions::default()
    };
    let service = Service::start_with(dir, Some(&config), prompt.client(), options).await;
    let h = Harness {
        service,
        fake,
        _prompt: prompt,
    };
    let ran = call!(
        h.service,
        run_cron_job,
        pb::RunCronJobRequest {
            agent_id: String::new(),
            id: "planted".into(),
            queue_only: false,
        }
    );
    assert_eq!(ran.status(), pb::CronRunStatus::Skipped, "{ran:?}");
    assert!(ran.error.contains("runs unsandboxed"), "{ran:?}");
    assert_eq!(h.fake.request_count(), 0, "nothing ran in the main session");
}

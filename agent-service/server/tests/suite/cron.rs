//! Cron jobs end to end over gRPC: the model schedules a job with the `cron` tool, the
//! scheduler runs it when it is due, in the job's own session or in the main one, and the
//! jobs file records the run.

use std::time::Duration;

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::{agent_service_client::AgentServiceClient, run_event::Event};
use serde_json::{Value, json};
use tonic::transport::Channel;

use super::calls::call;
use super::harness::{Harness, Service, StartOptions, instant_in};
use super::model_json::content_text;
use super::run_events::{events_of, session_key};
use super::status::{assert_status, assert_status_starts};

fn key_ref(key: &str) -> Option<pb::SessionRef> {
    session_key(key.to_owned())
}

/// (role, text) of a session's messages.
async fn messages(h: &Harness, key: &str) -> Vec<(String, String)> {
    let Ok(response) = h
        .service
        .client()
        .await
        .get_transcript(pb::GetTranscriptRequest {
            session: key_ref(key),
        })
        .await
    else {
        return Vec::new();
    };
    let mut stream = response.into_inner();
    let mut out = Vec::new();
    while let Ok(Some(item)) = stream.message().await {
        let Some(pb::transcript_item::Item::Entry(e)) = item.item else {
            continue;
        };
        if e.role.is_empty() || e.id.is_empty() {
            continue;
        }
        let entry: Value = serde_json::from_str(&e.json).unwrap_or_default();
        out.push((e.role.clone(), content_text(&entry["message"])));
    }
    out
}

/// One turn in `session` (None: the main session) whose model calls `cron` with `arguments`,
/// then says "Done."; the cron tool's result. The turn must end with its final reply.
pub(super) async fn cron_call(
    h: &Harness,
    session: Option<pb::SessionRef>,
    arguments: Value,
) -> pb::ToolFinished {
    h.fake.push_all([
        FakeReply::tool_call("call_cron", "cron", arguments),
        FakeReply::text("Done."),
    ]);
    let events = h
        .service
        .run_to_end(pb::RunRequest {
            session,
            message: "Schedule it.".into(),
            ..Default::default()
        })
        .await;
    assert!(
        events.iter().any(|e| matches!(e, Event::Final(_)))
            && !events.iter().any(|e| matches!(e, Event::Error(_))),
        "run failed: {events:?}"
    );
    events_of!(&events, ToolFinished)
        .into_iter()
        .find(|t| t.name == "cron")
        .expect("the cron tool ran")
}

/// [`cron_call`] in the main session, which must succeed; the tool's result text.
async fn schedule_through_the_model(h: &Harness, arguments: Value) -> String {
    let result = cron_call(h, None, arguments).await;
    assert!(!result.is_error, "{result:?}");
    result.output
}

/// The id in the tool's "Scheduled job <id> ..." line.
fn job_id_of(output: &str) -> String {
    output
        .strip_prefix("Scheduled job ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no job id in {output:?}"))
        .to_owned()
}

async fn wait_for<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Has the model schedule the main-session job "plants" (`schedule`, reminding to water the
/// plants) through the `cron` tool; the job's id.
async fn plants_job(h: &Harness, schedule: &str) -> String {
    let output = schedule_through_the_model(
        h,
        json!({ "action": "add", "name": "plants", "schedule": schedule,
                "prompt": "Remind me to water the plants.", "target": "main" }),
    )
    .await;
    job_id_of(&output)
}

/// The main session's messages once the plants reminder is answered there (`what` names
/// the wait).
async fn main_once_watered(h: &Harness, what: &str) -> Vec<(String, String)> {
    wait_for(what, async || {
        let got = messages(h, "main").await;
        got.iter()
            .any(|(_, t)| t == "Time to water the plants.")
            .then_some(got)
    })
    .await
}

fn jobs_file(h: &Harness) -> Value {
    let text = std::fs::read_to_string(h.service.path("state/cron/jobs.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A one-shot job the model schedules runs once, when due, in its own session
/// `agent:main:cron:<job>` with the scheduled prompt as the user message; then, being a
/// one-shot, it leaves the jobs file.
#[tokio::test]
async fn a_job_the_model_schedules_runs_in_its_own_session_when_due() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let output = schedule_through_the_model(
        &h,
        json!({ "action": "add", "name": "build check", "schedule": format!("at {}", instant_in(1500)),
                "prompt": "Check whether the nightly build is green." }),
    )
    .await;
    let id = job_id_of(&output);
    assert!(
        jobs_file(&h).to_string().contains(&id),
        "the job is saved before the tool answers"
    );
    h.fake.push(FakeReply::text("The build is green."));
    let key = format!("agent:main:cron:{id}");
    let got = wait_for("the cron run", async || {
        let got = messages(&h, &key).await;
        got.iter()
            .any(|(role, _)| role == "assistant")
            .then_some(got)
    })
    .await;
    assert_eq!(
        got,
        [
            (
                "user".to_owned(),
                "Check whether the nightly build is green.".to_owned()
            ),
            ("assistant".to_owned(), "The build is green.".to_owned()),
        ]
    );
    // The run's model request was the cron session's: minimal prompt, the scheduled prompt.
    let request = h.fake.requests().last().cloned().expect("a request");
    let body = request.body.to_string();
    assert!(
        body.contains("Check whether the nightly build is green."),
        "{body}"
    );
    // A one-shot that ran is removed.
    wait_for("the one-shot to be removed", async || {
        (!jobs_file(&h).to_string().contains(&id)).then_some(())
    })
    .await;
    // The main session was not touched by the run.
    let main = messages(&h, "main").await;
    assert!(
        main.iter()
            .all(|(_, t)| !t.contains("nightly build is green.\n"))
    );
}

/// A job with `target: "main"` joins the main session's conversation as a message naming
/// the job, and is answered there; an interval job stays in the jobs file with its run
/// counted and its next slot ahead.
#[tokio::test]
async fn a_main_session_job_is_answered_in_the_main_session() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let id = plants_job(&h, "every 2s").await;
    h.fake.push(FakeReply::text("Time to water the plants."));
    let got = main_once_watered(&h, "the main-session run").await;
    let cron_message = got
        .iter()
        .find(|(role, t)| role == "user" && t.contains("Remind me to water the plants."))
        .unwrap_or_else(|| panic!("no cron message in {got:?}"));
    assert!(cron_message.1.contains(&id), "{cron_message:?}");
    let recorded = wait_for("the run to be recorded", async || {
        let file = jobs_file(&h);
        let job = file["jobs"]
            .as_array()
            .and_then(|jobs| jobs.iter().find(|j| j["id"] == id.as_str()).cloned())?;
        (job["state"]["runs"].as_u64() >= Some(1)).then_some(job)
    })
    .await;
    assert_eq!(recorded["state"]["lastStatus"], "ok", "{recorded}");
}

fn instant(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .expect("instant")
        .to_string()
}

/// A jobs file as a process killed between claiming a run and recording it leaves it: one
/// interval job, claimed `claimed_ms_ago` ago for a slot just before.
fn claimed_jobs_file(id: &str, prompt: &str, claimed_ms_ago: i64) -> String {
    let now = super::harness::now_ms();
    json!({
        "version": 1,
        "jobs": [{
            "id": id,
            "agentId": "main",
            "name": "report",
            "schedule": { "kind": "every", "everyMs": 3_600_000 },
            "prompt": prompt,
            "target": "isolated",
            "createdAt": instant(now - 7_200_000),
            "updatedAt": instant(now - 7_200_000),
            "state": {
                "nextRunAt": instant(now - claimed_ms_ago - 100),
                "running": {
                    "slot": instant(now - claimed_ms_ago - 100),
                    "claimedAt": instant(now - claimed_ms_ago)
                }
            }
        }]
    })
    .to_string()
}

fn job_in(file: &Value, id: &str) -> Option<Value> {
    file["jobs"]
        .as_array()
        .and_then(|jobs| jobs.iter().find(|j| j["id"] == id).cloned())
}

/// A crash after a run was claimed but before its message reached the session: at start-up
/// the claim is released and the job runs once, for the same slot (not lost).
#[tokio::test]
async fn a_claimed_run_that_never_reached_its_session_runs_once_after_a_restart() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let (dir, fake, _prompt) = h.stop().await;
    std::fs::create_dir_all(dir.path().join("state/cron")).expect("dir");
    std::fs::write(
        dir.path().join("state/cron/jobs.json"),
        claimed_jobs_file("j1", "Write the daily report.", 5_000),
    )
    .expect("jobs file");
    fake.push(FakeReply::text("Report written."));
    let h = Harness::resume(dir, fake, _prompt).await;
    let job = wait_for("the run to be recorded", async || {
        job_in(&jobs_file(&h), "j1").filter(|j| j["state"]["runs"] == 1)
    })
    .await;
    assert_eq!(job["state"]["lastStatus"], "ok", "{job}");
    assert!(job["state"].get("running").is_none(), "{job}");
    assert_eq!(
        messages(&h, "agent:main:cron:j1").await,
        [
            ("user".to_owned(), "Write the daily report.".to_owned()),
            ("assistant".to_owned(), "Report written.".to_owned()),
        ]
    );
    assert_eq!(h.fake.requests().len(), 1, "run once");
}

/// A crash after a run's message was acknowledged by its session (it sits in the session's
/// journal) but before the run was recorded: at start-up the message is saved to the
/// transcript and the run counts as interrupted: it is not run a second time.
#[tokio::test]
async fn a_claimed_run_whose_message_reached_its_session_is_not_run_twice() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let session = h.service.create_session("agent:main:cron:j2").await;
    let (dir, fake, _prompt) = h.stop().await;
    let prompt = "Rotate the logs.";
    let journal = dir.path().join(format!(
        "state/agents/main/sessions/{}.queue",
        session.session_id
    ));
    let line =
        json!({ "accepted": { "seq": 1, "text": prompt, "at": super::harness::now_ms() - 4_000 } });
    std::fs::write(&journal, format!("{line}\n")).expect("journal");
    std::fs::create_dir_all(dir.path().join("state/cron")).expect("dir");
    std::fs::write(
        dir.path().join("state/cron/jobs.json"),
        claimed_jobs_file("j2", prompt, 5_000),
    )
    .expect("jobs file");
    let h = Harness::resume(dir, fake, _prompt).await;
    let job = wait_for("the claim to be resolved", async || {
        job_in(&jobs_file(&h), "j2").filter(|j| j["state"].get("running").is_none())
    })
    .await;
    assert_eq!(job["state"]["runs"], 1, "{job}");
    assert_eq!(job["state"]["lastStatus"], "error", "{job}");
    assert!(
        job["state"]["lastError"]
            .as_str()
            .unwrap_or_default()
            .contains("interrupted by a restart"),
        "{job}"
    );
    let next: jiff::Timestamp = job["state"]["nextRunAt"]
        .as_str()
        .expect("next run")
        .parse()
        .expect("instant");
    assert!(
        next.as_millisecond() > super::harness::now_ms(),
        "the next slot is ahead: {job}"
    );
    assert_eq!(
        messages(&h, "agent:main:cron:j2").await,
        [("user".to_owned(), prompt.to_owned())]
    );
    assert!(h.fake.requests().is_empty(), "not run a second time");
}

/// The cron RPCs: a job added over the API is listed with its next run and session; bad
/// input is INVALID_ARGUMENT naming the field (a lightweight main-session job included); an
/// unknown id or agent is NOT_FOUND.
#[tokio::test]
async fn the_cron_api_saves_validates_and_names_what_is_missing() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let mut client = h.service.client().await;
    let spec = |schedule: &str| pb::CronJobSpec {
        schedule: schedule.into(),
        prompt: "Tidy the inbox.".into(),
        ..Default::default()
    };
    let job = client
        .add_cron_job(pb::AddCronJobRequest {
            agent_id: String::new(),
            spec: Some(pb::CronJobSpec {
                tz: "Europe/Berlin".into(),
                ..spec("0 9 * * MON-FRI")
            }),
        })
        .await
        .expect("add")
        .into_inner();
    assert_eq!(job.agent_id, "main");
    assert_eq!(job.session_key, format!("agent:main:cron:{}", job.id));
    assert!(job.next_run_at_ms > super::harness::now_ms(), "{job:?}");
    let listed = list_jobs(&mut client).await;
    assert_eq!(listed, std::slice::from_ref(&job));
    assert!(jobs_file(&h).to_string().contains(&job.id));

    for (schedule, tz, target, field) in [
        (
            "every 5 fortnights",
            "",
            pb::CronTarget::Isolated,
            "spec.schedule",
        ),
        (
            "every 5m",
            "Europe/Berlin",
            pb::CronTarget::Isolated,
            "spec.tz",
        ),
        (
            "0 9 * * *",
            "Mars/Olympus",
            pb::CronTarget::Isolated,
            "job.schedule",
        ),
        // Lightweight runs are for a job's own session only.
        ("every 5m", "", pb::CronTarget::Main, "job.lightweight"),
    ] {
        let err = client
            .add_cron_job(pb::AddCronJobRequest {
                agent_id: String::new(),
                spec: Some(pb::CronJobSpec {
                    tz: tz.into(),
                    lightweight: target == pb::CronTarget::Main,
                    target: target as i32,
                    ..spec(schedule)
                }),
            })
            .await
            .expect_err(schedule);
        assert_eq!(
            err.code(),
            tonic::Code::InvalidArgument,
            "{schedule}: {err:?}"
        );
        assert!(
            err.message().starts_with(field),
            "{schedule}: {}",
            err.message()
        );
    }
    let err = client
        .remove_cron_job(pb::RemoveCronJobRequest {
            agent_id: String::new(),
            id: "nope".into(),
        })
        .await
        .expect_err("unknown id");
    assert_status(&err, tonic::Code::NotFound, &["\"nope\""]);
    let err = client
        .list_cron_jobs(pb::ListCronJobsRequest {
            agent_id: "ghost".into(),
        })
        .await
        .expect_err("unknown agent");
    assert_eq!(err.code(), tonic::Code::NotFound);

    let updated = client
        .update_cron_job(pb::UpdateCronJobRequest {
            agent_id: String::new(),
            id: job.id.clone(),
            patch: Some(pb::CronJobPatch {
                enabled: Some(false),
                ..Default::default()
            }),
        })
        .await
        .expect("disable")
        .into_inner();
    assert_eq!(updated.next_run_at_ms, 0);
    assert_eq!(updated.spec.and_then(|s| s.enabled), Some(false));
    // The lightweight flag changes over the API too, and the rule of the add holds: a
    // lightweight job cannot move to the main session.
    let patch = |patch: pb::CronJobPatch| pb::UpdateCronJobRequest {
        agent_id: String::new(),
        id: job.id.clone(),
        patch: Some(patch),
    };
    let updated = client
        .update_cron_job(patch(pb::CronJobPatch {
            lightweight: Some(true),
            ..Default::default()
        }))
        .await
        .expect("make it lightweight")
        .into_inner();
    assert_eq!(updated.spec.map(|s| s.lightweight), Some(true));
    assert!(jobs_file(&h).to_string().contains("\"lightweight\":true"));
    let err = client
        .update_cron_job(patch(pb::CronJobPatch {
            target: pb::CronTarget::Main as i32,
            ..Default::default()
        }))
        .await
        .expect_err("a lightweight job moved to main");
    assert_status_starts(&err, tonic::Code::InvalidArgument, "job.lightweight");
    let removed = client
        .remove_cron_job(pb::RemoveCronJobRequest {
            agent_id: String::new(),
            id: job.id.clone(),
        })
        .await
        .expect("remove")
        .into_inner();
    assert_eq!(removed.id, job.id);
    assert!(!jobs_file(&h).to_string().contains(&job.id));
}

/// The workspace files a cron session's prompt may carry, each with a marker to find it by.
const WORKSPACE_MARKS: [(&str, &str); 5] = [
    ("AGENTS.md", "AGENTS-MARK-3f1"),
    ("SOUL.md", "SOUL-MARK-8a0"),
    ("TOOLS.md", "TOOLS-MARK-c27"),
    ("IDENTITY.md", "IDENTITY-MARK-51d"),
    ("USER.md", "USER-MARK-e94"),
];

/// Adds a job of the default agent as `spec` says, over the API.
pub(super) async fn add_job(
    client: &mut AgentServiceClient<Channel>,
    spec: pb::CronJobSpec,
) -> pb::CronJob {
    let request = pb::AddCronJobRequest {
        agent_id: String::new(),
        spec: Some(spec),
    };
    client
        .add_cron_job(request)
        .await
        .expect("add")
        .into_inner()
}

/// The default agent's jobs, over the API.
pub(super) async fn list_jobs(client: &mut AgentServiceClient<Channel>) -> Vec<pb::CronJob> {
    let request = pb::ListCronJobsRequest::default();
    client
        .list_cron_jobs(request)
        .await
        .expect("list")
        .into_inner()
        .jobs
}

/// Adds an isolated job of `prompt` over the API, due every hour.
pub(super) async fn add_hourly_job(
    client: &mut AgentServiceClient<Channel>,
    prompt: &str,
    lightweight: bool,
) -> pb::CronJob {
    let spec = pb::CronJobSpec {
        schedule: "every 1h".into(),
        prompt: prompt.into(),
        lightweight,
        ..Default::default()
    };
    add_job(client, spec).await
}

/// Adds an isolated job over the API (due in an hour) and runs it at once with RunCronJob;
/// returns the model request the run sent.
async fn run_job_now(h: &Harness, prompt: &str, lightweight: bool, answer: &str) -> Value {
    let mut client = h.service.client().await;
    let job = add_hourly_job(&mut client, prompt, lightweight).await;
    assert_eq!(job.spec.as_ref().map(|s| s.lightweight), Some(lightweight));
    let before = h.fake.requests().len();
    h.fake.push(FakeReply::text(answer));
    let ran = client
        .run_cron_job(pb::RunCronJobRequest {
            agent_id: String::new(),
            id: job.id.clone(),
            queue_only: false,
        })
        .await
        .expect("run now")
        .into_inner();
    assert_eq!(ran.status(), pb::CronRunStatus::Ok, "{ran:?}");
    assert_eq!(ran.session_key, format!("agent:main:cron:{}", job.id));
    let requests = h.fake.requests();
    assert_eq!(requests.len(), before + 1, "one model call");
    requests[before].body.clone()
}

/// A lightweight job's run sends the scheduled prompt as the user message byte for byte
/// (spaces, blank lines, tabs and all) and no workspace file in the system prompt; the same
/// job without the flag, in the same workspace, carries the cron session's files.
#[tokio::test]
async fn a_lightweight_job_sends_the_scheduled_prompt_alone() {
    let h = Harness::start(WireFormat::ChatCompletions, ", skipBootstrap: true", "").await;
    let ws = h.service.path("state/workspace");
    std::fs::create_dir_all(&ws).expect("workspace");
    for (file, mark) in WORKSPACE_MARKS {
        std::fs::write(ws.join(file), format!("# {file}\n{mark}: read me.\n")).expect("write");
    }
    let prompt = "  Summarise the night's alerts.\n\n- at most three bullets ✓\n\tkeep the tab\n";
    let body = run_job_now(&h, prompt, true, "Nothing happened.").await;
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system", "{body}");
    let system = messages[0]["content"].as_str().expect("system prompt");
    for (file, mark) in WORKSPACE_MARKS {
        assert!(
            !system.contains(mark),
            "{file} reached a lightweight run: {system}"
        );
    }
    let users: Vec<&Value> = messages.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 1, "{body}");
    assert_eq!(users[0]["content"].as_str(), Some(prompt), "byte for byte");

    let full = run_job_now(&h, "Summarise the night's alerts.", false, "Quiet night.").await;
    let system = full["messages"][0]["content"]
        .as_str()
        .expect("system prompt");
    for (file, mark) in WORKSPACE_MARKS {
        assert!(
            system.contains(mark),
            "{file} is missing from a full cron run: {system}"
        );
    }
}

#[tokio::test]
async fn running_a_job_of_the_calling_session_queues_it_after_the_turn() {
    // A main-session job run from the main session would wait behind the very turn that
    // asked for it: the tool queues it instead and the turn ends.
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let id = plants_job(&h, "every 1h").await;
    h.fake.push(FakeReply::tool_call(
        "call_run",
        "cron",
        json!({ "action": "run", "id": id }),
    ));
    h.fake.push(FakeReply::text("It is queued."));
    h.fake.push(FakeReply::text("Time to water the plants."));
    let run = async {
        let mut stream = h
            .service
            .open_run(pb::RunRequest {
                message: "Run the plants job now.".into(),
                ..Default::default()
            })
            .await;
        let mut tool = None;
        while let Some(event) = stream.message().await.expect("event") {
            match event.event {
                Some(Event::ToolFinished(t)) if t.name == "cron" => tool = Some(t),
                Some(Event::Final(f)) => return (tool, f.text),
                Some(Event::Error(e)) => panic!("run failed: {e:?}"),
                _ => {}
            }
        }
        panic!("the stream ended without a final answer");
    };
    let (tool, text) = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the turn that ran the job ended (it did not wait for the job's run)");
    let tool = tool.expect("the cron tool ran");
    assert!(!tool.is_error, "{tool:?}");
    assert!(tool.output.contains("queued"), "{tool:?}");
    assert!(tool.output.contains("agent:main:main"), "{tool:?}");
    assert_eq!(text, "It is queued.");
    // ...and the job's run follows in the main session.
    let got = main_once_watered(&h, "the job's run in the main session").await;
    let due = got
        .iter()
        .position(|(role, t)| role == "user" && t.contains("[Cron Job Due]"))
        .unwrap_or_else(|| panic!("no cron message in {got:?}"));
    assert!(
        got[..due].iter().any(|(_, t)| t == "It is queued."),
        "the job ran after the turn that queued it: {got:?}"
    );
}

/// A due job of `agent` that is not claimed yet.
fn due_job(agent: &str, id: &str, prompt: &str) -> Value {
    let now = super::harness::now_ms();
    json!({
        "id": id,
        "agentId": agent,
        "name": id,
        "schedule": { "kind": "every", "everyMs": 3_600_000 },
        "prompt": prompt,
        "target": "isolated",
        "createdAt": instant(now - 7_200_000),
        "updatedAt": instant(now - 7_200_000),
        "state": { "nextRunAt": instant(now - 100) }
    })
}

/// Two replicas that share a schedule (the same jobs in both jobs files, as a copied state or
/// jobs made before the router leave them): each due job runs exactly once, on the replica
/// that owns its session, and the other neither runs nor claims it nor creates its session.
/// A cron session lives with its agent's main session, so the two jobs belong to two agents
/// whose main sessions live on different replicas: each replica's own run shows that its
/// scheduler has looked at every due job.
#[tokio::test]
async fn a_due_job_runs_once_on_the_replica_that_owns_its_session() {
    let format = WireFormat::ChatCompletions;
    let (base_url, fake) = agent_testkit::FakeServer::start(format)
        .await
        .expect("fake server");
    let prompt = super::harness::PromptService::start().await;
    let replicas: Vec<agent_server::Replica> = (0..2)
        .map(|ordinal| agent_server::Replica::new(ordinal, 2).expect("replica"))
        .collect();
    let owner = |agent: &str| replicas[0].owner_of(&format!("agent:{agent}:main")) as usize;
    // An agent whose main session lives on the other replica than main's.
    let other = (0..)
        .map(|n| format!("ops{n}"))
        .find(|agent| owner(agent) != owner("main"))
        .expect("an agent id");
    let mut agents = [
        ("main".to_owned(), "Report main."),
        (other.clone(), "Report ops."),
    ];
    agents.sort_by_key(|(agent, _)| owner(agent));
    let config = format!(
        r#"{{
  agents: {{
    defaults: {{ model: "fake/test-model", userTimezone: "Europe/Berlin" }},
    list: [{{ id: "main", default: true }}, {{ id: "{other}" }}],
  }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "{}", apiKey: "test-key", models: [{{ id: "test-model" }}] }} }} }},
}}"#,
        format.api()
    );
    let jobs = json!({
        "version": 1,
        "jobs": agents.iter().map(|(agent, prompt)| due_job(agent, &format!("daily-{agent}"), prompt)).collect::<Vec<_>>(),
    })
    .to_string();
    fake.push_all([FakeReply::text("Done."), FakeReply::text("Done.")]);
    let mut services = Vec::new();
    for replica in &replicas {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("state/cron")).expect("dir");
        std::fs::write(dir.path().join("state/cron/jobs.json"), &jobs).expect("jobs file");
        let options = StartOptions {
            serve_config: agent_server::ServeConfig {
                replica: *replica,
                ..agent_server::ServeConfig::default()
            },
            ..StartOptions::default()
        };
        services.push(Service::start_with(dir, Some(&config), prompt.client(), options).await);
    }
    let job_of = |service: &super::harness::Service, agent: &str| -> Option<Value> {
        let text =
            std::fs::read_to_string(service.path("state/cron/jobs.json")).unwrap_or_default();
        let file: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        file["jobs"]
            .as_array()
            .and_then(|jobs| jobs.iter().find(|j| j["agentId"] == agent).cloned())
    };
    for (ordinal, service) in services.iter().enumerate() {
        let agent = &agents[ordinal].0;
        let job = wait_for("each replica's own job to run", async || {
            job_of(service, agent).filter(|j| j["state"]["runs"] == 1)
        })
        .await;
        assert_eq!(job["state"]["lastStatus"], "ok", "{job}");
    }
    assert_eq!(fake.requests().len(), 2, "each job ran once");
    for (ordinal, service) in services.iter().enumerate() {
        let elsewhere = &agents[1 - ordinal].0;
        let job = job_of(service, elsewhere).expect("the other replica's job stays listed");
        assert!(job["state"].get("running").is_none(), "not claimed: {job}");
        assert_eq!(
            job["state"]["runs"].as_u64().unwrap_or(0),
            0,
            "not run: {job}"
        );
        for (agent, _) in &agents {
            let sessions: Vec<String> = call!(
                service,
                list_sessions,
                pb::ListSessionsRequest {
                    agent_id: agent.clone(),
                    ..Default::default()
                }
            )
            .sessions
            .into_iter()
            .map(|s| s.session_key)
            .collect();
            let expected: Vec<String> = if agent == &agents[ordinal].0 {
                vec![format!("agent:{agent}:cron:daily-{agent}")]
            } else {
                Vec::new()
            };
            assert_eq!(sessions, expected, "replica {ordinal}, agent {agent}");
        }
    }
}

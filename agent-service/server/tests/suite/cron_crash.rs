//! A real crash during a cron run: the agent-service binary is killed with SIGKILL between a
//! job becoming due (its run claimed in the jobs file) and the run being recorded, then
//! started again on the same state dir. The run is neither lost nor done twice: the
//! scheduled prompt reaches the job's session exactly once and the job counts one run.

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use agent_testkit::{FakeReply, FakeServer, FakeServerHandle, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::agent_service_client::AgentServiceClient;
use serde_json::Value;
use tokio::process::Child;
use tonic::transport::Channel;

use super::harness::{binary, instant_in};
use super::process::{answering, free_port, serving};
use super::run_events::session_key;

/// How long any one wait may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// One state dir and config, served by one agent-service process at a time.
struct Node {
    root: tempfile::TempDir,
    listen: String,
    child: Option<Child>,
    starts: u32,
}

impl Node {
    fn new(fake: &FakeServerHandle) -> Self {
        let root = tempfile::tempdir().expect("root");
        let config = super::harness::config(fake.base_url(), WireFormat::ChatCompletions, "", "");
        std::fs::write(root.path().join("openclaw.json"), config).expect("config");
        Self {
            root,
            listen: format!("127.0.0.1:{}", free_port()),
            child: None,
            starts: 0,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// Starts the binary and waits until it answers RPCs.
    async fn start(&mut self) -> AgentServiceClient<Channel> {
        self.starts += 1;
        let log = std::fs::File::create(self.log(self.starts)).expect("log file");
        let mut child = serving(&mut binary(), self.root.path(), &self.listen)
            .stderr(log)
            .spawn()
            .expect("spawn agent-service");
        let client = answering(&self.listen, &mut child, &|| self.logs()).await;
        self.child = Some(child);
        client
    }

    /// SIGKILL: no drain, no flush, nothing saved on the way out.
    async fn kill(&mut self) {
        let mut child = self.child.take().expect("running");
        child.start_kill().expect("SIGKILL");
        let status = child.wait().await.expect("wait");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "{status}"
        );
    }

    fn log(&self, n: u32) -> PathBuf {
        self.path(&format!("agent-service-{n}.log"))
    }

    fn logs(&self) -> String {
        (1..=self.starts)
            .map(|n| std::fs::read_to_string(self.log(n)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n--- restart ---\n")
    }

    fn job_in_file(&self, id: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.path("state/cron/jobs.json")).ok()?;
        let file: Value = serde_json::from_str(&text).ok()?;
        file["jobs"]
            .as_array()?
            .iter()
            .find(|j| j["id"] == id)
            .cloned()
    }
}

/// Adds a one-shot job due in `due_in_ms`, kept after its run so its record can be read.
async fn add_one_shot(
    client: &mut AgentServiceClient<Channel>,
    prompt: &str,
    due_in_ms: u64,
) -> pb::CronJob {
    let spec = pb::CronJobSpec {
        schedule: format!("at {}", instant_in(due_in_ms)),
        prompt: prompt.into(),
        delete_after_run: Some(false),
        ..Default::default()
    };
    super::cron::add_job(client, spec).await
}

/// The (role, text) of each message of a session.
async fn messages(client: &mut AgentServiceClient<Channel>, key: &str) -> Vec<(String, String)> {
    let mut stream = client
        .get_transcript(pb::GetTranscriptRequest {
            session: session_key(key.to_owned()),
        })
        .await
        .expect("transcript")
        .into_inner();
    let mut out = Vec::new();
    while let Some(item) = stream.message().await.expect("item") {
        let Some(pb::transcript_item::Item::Entry(e)) = item.item else {
            continue;
        };
        if e.role.is_empty() || e.id.is_empty() {
            continue;
        }
        let entry: Value = serde_json::from_str(&e.json).expect("entry json");
        let text = match &entry["message"]["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        };
        out.push((e.role.clone(), text));
    }
    out
}

/// Polls ListCronJobs until `id` is recorded as run and not running.
async fn recorded(client: &mut AgentServiceClient<Channel>, id: &str, node: &Node) -> pb::CronJob {
    let began = Instant::now();
    loop {
        let jobs = super::cron::list_jobs(client).await;
        let job = jobs
            .into_iter()
            .find(|j| j.id == id)
            .expect("the job is kept");
        if job.runs >= 1 && !job.running {
            return job;
        }
        assert!(
            began.elapsed() < PATIENCE,
            "never recorded: {job:?}\n{}",
            node.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The model holds its answer, so the run is in flight when the process is killed: the jobs
/// file still holds the claim. After the restart the claim is resolved from the session (the
/// message is there): the run is recorded once, as interrupted, and not sent again.
#[tokio::test]
async fn sigkill_during_a_cron_run_neither_loses_nor_repeats_it() {
    let (_, fake) = FakeServer::start(WireFormat::ChatCompletions)
        .await
        .expect("fake");
    fake.push(FakeReply::text("Report written.").delay(Duration::from_secs(120)));
    let mut node = Node::new(&fake);
    let mut client = node.start().await;
    let prompt = "Write the nightly report.";
    let job = add_one_shot(&mut client, prompt, 1_000).await;
    let began = Instant::now();
    while fake.request_count() == 0 {
        assert!(
            began.elapsed() < PATIENCE,
            "the job never ran: {}",
            node.logs()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let claimed = node.job_in_file(&job.id).expect("job in the file");
    assert!(
        claimed["state"]["running"]["slot"].is_string(),
        "the run is claimed while it is in flight: {claimed}"
    );
    node.kill().await;
    let left = node.job_in_file(&job.id).expect("job in the file");
    assert_eq!(
        left["state"]["running"], claimed["state"]["running"],
        "the crash left the claim open"
    );
    assert!(left["state"].get("lastStatus").is_none(), "{left}");

    let mut client = node.start().await;
    let job = recorded(&mut client, &job.id, &node).await;
    assert_eq!(job.runs, 1, "{job:?}");
    assert_eq!(job.last_status(), pb::CronRunStatus::Error, "{job:?}");
    assert!(
        job.last_error.contains("interrupted by a restart"),
        "{job:?}"
    );
    assert_eq!(
        job.next_run_at_ms, 0,
        "a one-shot has no further slot: {job:?}"
    );
    let key = format!("agent:main:cron:{}", job.id);
    assert_eq!(
        messages(&mut client, &key).await,
        [("user".to_owned(), prompt.to_owned())],
        "the prompt reached the session once"
    );
    // Nothing runs it again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fake.request_count(), 1, "{}", node.logs());
    assert_eq!(messages(&mut client, &key).await.len(), 1);
    node.kill().await;
}

/// How a run came through one kill, for the record.
fn outcome_of(requests_before_kill: u64, requests: u64, job: &pb::CronJob) -> &'static str {
    match (requests_before_kill, requests, job.last_status()) {
        (0, 1, pb::CronRunStatus::Ok) => "not yet handed over: ran once after the restart",
        (1, 1, pb::CronRunStatus::Ok) => "finished before the kill",
        (1, 1, pb::CronRunStatus::Error) => "in flight: recorded as interrupted",
        (0, 0, pb::CronRunStatus::Error) => "queued, not started: recorded as interrupted",
        _ => "unexpected",
    }
}

/// The kill lands at points around the slot (before it, while the run is claimed, queued,
/// asking the model, answered, recorded): whichever, after the restart the prompt is in the
/// job's session exactly once, the model was asked at most once, and the job counts one run.
#[tokio::test]
async fn sigkill_at_any_point_around_a_cron_slot_keeps_the_run_exactly_once() {
    let mut seen = Vec::new();
    for offset_ms in [-300_i64, 0, 10, 30, 60, 120, 250, 600] {
        let (_, fake) = FakeServer::start(WireFormat::ChatCompletions)
            .await
            .expect("fake");
        fake.push_all([
            FakeReply::text("Done.").delay(Duration::from_millis(150)),
            FakeReply::text("Done again."),
        ]);
        let mut node = Node::new(&fake);
        let mut client = node.start().await;
        let prompt = format!("Rotate the logs ({offset_ms} ms).");
        let due_in = 800;
        let job = add_one_shot(&mut client, &prompt, due_in).await;
        let added = Instant::now();
        let kill_at = added + Duration::from_millis(due_in.saturating_add_signed(offset_ms));
        tokio::time::sleep_until(kill_at.into()).await;
        node.kill().await;
        let before = fake.request_count();

        let mut client = node.start().await;
        let job = recorded(&mut client, &job.id, &node).await;
        // Long enough for a second run to show if one were coming.
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let key = format!("agent:main:cron:{}", job.id);
        let got = messages(&mut client, &key).await;
        let copies = got
            .iter()
            .filter(|(role, text)| role == "user" && *text == prompt)
            .count();
        let requests = fake.request_count();
        let outcome = outcome_of(before, requests, &job);
        assert_eq!(
            copies,
            1,
            "kill at {offset_ms} ms: {got:?}\n{}",
            node.logs()
        );
        assert!(
            requests <= 1,
            "kill at {offset_ms} ms: asked the model {requests} times"
        );
        assert_eq!(job.runs, 1, "kill at {offset_ms} ms: {job:?}");
        assert_ne!(
            outcome, "unexpected",
            "kill at {offset_ms} ms: {before}/{requests} {job:?}"
        );
        seen.push(format!("{offset_ms:+} ms: {outcome}"));
        node.kill().await;
    }
    eprintln!("cron kill points:\n  {}", seen.join("\n  "));
}

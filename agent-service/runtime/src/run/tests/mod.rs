//! The agent loop driven through [`Services`] alone: a real model client talking to the
//! scripted model server of the test kit over a local socket, prompts rendered in-process by
//! the prompt-service renderer, and a real state directory.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use agent_testkit::{FakeError, FakeReply, FakeServer, FakeServerHandle, WireFormat};
use openclaw_transcript::{Message, SystemClock};
use serde_json::json;

use super::{CompactionPhase, CompactionTrigger, RunEvent, RunSpec, submit};

use crate::{
    MapEnv, RuntimeOptions, Settings,
    error::{ErrorCode, RuntimeError},
    services::Services,
    sessions::{
        SessionTarget,
        queue::{Disposition, QueueMode},
    },
};

mod rejected;
mod think;
mod tool_specs;
mod wire;

/// How long a test waits for a run to end.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Services over a temporary state directory whose one provider is a scripted model server.
struct Loop {
    services: Arc<Services>,
    model: FakeServerHandle,
    dir: tempfile::TempDir,
    /// System-prompt renders asked of the prompt source so far.
    renders: Arc<AtomicUsize>,
    /// How many of the next renders panic instead of answering.
    panics: Arc<AtomicUsize>,
}

/// The in-process renderer, counting the system-prompt renders asked of it.
#[derive(Debug)]
struct CountingPrompt {
    inner: prompt_client::InProcessPromptSource,
    renders: Arc<AtomicUsize>,
    panics: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl prompt_client::PromptSource for CountingPrompt {
    async fn render(
        &self,
        request: openclaw_proto::prompt::v1::RenderSystemPromptRequest,
        deadline: std::time::Instant,
    ) -> Result<openclaw_proto::prompt::v1::RenderSystemPromptResponse, prompt_client::PromptError>
    {
        self.renders.fetch_add(1, Ordering::SeqCst);
        let panic_now = self
            .panics
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        assert!(!panic_now, "the renderer was told to panic");
        self.inner.render(request, deadline).await
    }

    async fn contribution(
        &self,
        request: openclaw_proto::prompt::v1::ResolveProviderContributionRequest,
        deadline: std::time::Instant,
    ) -> Result<
        openclaw_proto::prompt::v1::ResolveProviderContributionResponse,
        prompt_client::PromptError,
    > {
        self.inner.contribution(request, deadline).await
    }

    async fn render_codex(
        &self,
        request: openclaw_proto::prompt::v1::RenderCodexTurnRequest,
        deadline: std::time::Instant,
    ) -> Result<openclaw_proto::prompt::v1::RenderCodexTurnResponse, prompt_client::PromptError>
    {
        self.inner.render_codex(request, deadline).await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

impl Loop {
    /// `defaults_extra` goes into `agents.defaults` (after a comma).
    async fn start(defaults_extra: &str) -> Self {
        Self::start_on(WireFormat::ChatCompletions, defaults_extra).await
    }

    /// [`Loop::start`] with a model server speaking `format`.
    async fn start_on(format: WireFormat, defaults_extra: &str) -> Self {
        Self::start_with(format, defaults_extra, None).await
    }

    /// [`Loop::start_on`] for a replica that owns the sessions `owns` says it does.
    async fn start_with(
        format: WireFormat,
        defaults_extra: &str,
        owns: Option<crate::services::SessionOwner>,
    ) -> Self {
        let (base_url, model) = FakeServer::start(format).await.expect("model server");
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            r#"{{
  agents: {{ defaults: {{ model: "fake/test-model" {defaults_extra} }} }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "{}", apiKey: "k",
    models: [{{ id: "test-model" }}] }} }} }},
}}"#,
            format.api()
        );
        std::fs::write(dir.path().join("openclaw.json"), config).expect("config");
        let renders = Arc::new(AtomicUsize::new(0));
        let panics = Arc::new(AtomicUsize::new(0));
        Self {
            services: services_in(dir.path(), owns, &renders, &panics),
            model,
            dir,
            renders,
            panics,
        }
    }

    /// System-prompt renders asked of the prompt source so far.
    fn renders(&self) -> usize {
        self.renders.load(Ordering::SeqCst)
    }

    /// Closes every session and starts the services again over the same state directory and
    /// model server, as a restarted agent-service would.
    async fn restarted(self) -> Self {
        self.services.sessions().close_all().await;
        let Self {
            model,
            dir,
            renders,
            panics,
            ..
        } = self;
        Self {
            services: services_in(dir.path(), None, &renders, &panics),
            model,
            dir,
            renders,
            panics,
        }
    }

    fn spec(message: &str) -> RunSpec {
        RunSpec {
            message: message.to_owned(),
            ..RunSpec::default()
        }
    }

    /// Submits `message` to the main session and collects its run's events to the end.
    async fn run(&self, message: &str) -> Vec<RunEvent> {
        let submitted = submit(&self.services, Self::spec(message))
            .await
            .expect("accepted");
        collect(submitted.follow()).await
    }

    /// One turn with a tool call: the user asks what notes.txt says, the model reads it
    /// (call `c1`), then answers. Returns the run's events.
    async fn run_reading_notes(&self) -> Vec<RunEvent> {
        let workspace = self.dir.path().join("state/workspace");
        std::fs::write(workspace.join("notes.txt"), "NOTE-MARK-7731\n").expect("notes");
        self.model.push_all([
            FakeReply::tool_call("c1", "read", json!({ "path": "notes.txt" })),
            FakeReply::text("The note says 7731."),
        ]);
        self.run("What does notes.txt say?").await
    }

    /// The main session's transcript file.
    async fn transcript_path(&self) -> std::path::PathBuf {
        let agent = self.services.agent_view("").expect("agent");
        let info = self
            .services
            .sessions()
            .get(&agent, &SessionTarget::Key(String::new()))
            .await
            .expect("session");
        self.services
            .sessions()
            .transcript_path(&agent, &info.entry.session_id)
            .expect("path")
    }

    /// The main session's transcript messages.
    async fn messages(&self) -> Vec<Message> {
        let agent = self.services.agent_view("").expect("agent");
        let info = self
            .services
            .sessions()
            .get(&agent, &SessionTarget::Key(String::new()))
            .await
            .expect("session");
        let cwd = self
            .services
            .session_workspace(&agent, &info.key)
            .await
            .expect("workspace");
        self.services
            .sessions()
            .writable(&agent, &info, &cwd)
            .expect("live session")
            .messages()
            .await
            .expect("messages")
    }
}

/// Services over the state directory and `openclaw.json` under `dir`.
fn services_in(
    dir: &std::path::Path,
    owns: Option<crate::services::SessionOwner>,
    renders: &Arc<AtomicUsize>,
    panics: &Arc<AtomicUsize>,
) -> Arc<Services> {
    let settings = Settings {
        state_dir: dir.join("state"),
        config_path: dir.join("openclaw.json"),
        home_dir: dir.to_path_buf(),
    };
    let prompt: Arc<dyn prompt_client::PromptSource> = Arc::new(CountingPrompt {
        inner: prompt_client::InProcessPromptSource::new().expect("prompt source"),
        renders: Arc::clone(renders),
        panics: Arc::clone(panics),
    });
    Services::start(RuntimeOptions {
        owns,
        ..RuntimeOptions::new(
            settings,
            Arc::new(MapEnv::of([("HOME", dir.display().to_string())])),
            Arc::new(SystemClock),
            prompt,
        )
    })
    .expect("services")
}

async fn collect(mut events: super::RunFollower) -> Vec<RunEvent> {
    let mut out = Vec::new();
    let all = async {
        while let Some(event) = events.recv().await {
            out.push(event.event);
        }
    };
    tokio::time::timeout(RUN_LIMIT, all)
        .await
        .expect("the run ended in time");
    out
}

fn final_of(events: &[RunEvent]) -> (String, u32) {
    match events.last() {
        Some(RunEvent::Final { text, steps, .. }) => (text.clone(), *steps),
        other => panic!("the run did not end with a final event: {other:?}\n{events:#?}"),
    }
}

fn assistant_texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(super::reply::assistant_text(a)),
            _ => None,
        })
        .collect()
}

/// A panic in a run fails that run alone: it ends with an internal error that says so, and the
/// session's queue goes on to answer the next message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_panics_fails_alone() {
    let l = Loop::start("").await;
    l.panics.store(1, Ordering::SeqCst);
    let events = l.run("This one meets a broken renderer.").await;
    match events.last() {
        Some(RunEvent::Error { code, message }) => {
            assert_eq!(*code, ErrorCode::Internal.as_str(), "{events:#?}");
            assert!(
                message.contains("panicked") && message.contains("told to panic"),
                "{message}"
            );
        }
        other => panic!("the run did not end with an error: {other:?}\n{events:#?}"),
    }
    l.model.push(FakeReply::text("Still here."));
    let events = l.run("And this one?").await;
    assert_eq!(final_of(&events), ("Still here.".to_owned(), 1));
    assert_eq!(
        l.model.request_count(),
        1,
        "the panicked run never called the model"
    );
}

#[tokio::test]
async fn a_plain_turn_streams_the_reply_and_writes_it() {
    let l = Loop::start("").await;
    l.model
        .push(FakeReply::text("Hello from the model.").deltas(3));
    let events = l.run("Say hello.").await;

    assert!(
        matches!(&events[0], RunEvent::Started { message_seqs, .. } if message_seqs == &[1]),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::ModelCall { step: 1, .. })),
        "{events:#?}"
    );
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Hello from the model.");
    assert_eq!(final_of(&events), ("Hello from the model.".to_owned(), 1));
    assert_eq!(l.model.request_count(), 1);
    let request = &l.model.requests()[0].body;
    assert!(request.to_string().contains("Say hello."), "{request}");
    assert_eq!(
        assistant_texts(&l.messages().await),
        ["Hello from the model."]
    );
}

#[tokio::test]
async fn a_tool_call_runs_and_its_result_goes_back_to_the_model() {
    let l = Loop::start("").await;
    let events = l.run_reading_notes().await;

    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolStarted { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(started, [("c1", "read")], "{events:#?}");
    let finished = events.iter().find_map(|e| match e {
        RunEvent::ToolFinished {
            is_error, output, ..
        } => Some((*is_error, output.clone())),
        _ => None,
    });
    let (is_error, output) = finished.expect("a tool result event");
    assert!(!is_error, "{output}");
    assert!(output.contains("NOTE-MARK-7731"), "{output}");
    assert_eq!(final_of(&events), ("The note says 7731.".to_owned(), 2));
    let second = l.model.requests()[1].body.to_string();
    assert!(second.contains("NOTE-MARK-7731"), "{second}");
    let results = l
        .messages()
        .await
        .into_iter()
        .filter(|m| matches!(m, Message::ToolResult(r) if r.tool_call_id == "c1" && !r.is_error))
        .count();
    assert_eq!(results, 1);
}

/// A run's model calls share one render while nothing its prompt says changes, and a tool
/// that changes a workspace file the prompt injects gets the next call a fresh render.
#[tokio::test]
async fn a_runs_model_calls_share_a_render_until_its_facts_change() {
    let l = Loop::start("").await;
    let system = |at: usize| l.model.requests()[at].body["messages"][0]["content"].to_string();

    l.run_reading_notes().await;
    assert_eq!(l.model.request_count(), 2);
    assert_eq!(l.renders(), 1, "one render for the run's two model calls");
    assert_eq!(system(0), system(1));
    assert!(system(0).contains("AGENTS.md"), "{}", system(0));

    // The tool rewrites AGENTS.md between the calls: the second call's prompt says the new
    // text, rendered again; the first did not.
    l.model.push_all([
        FakeReply::tool_call(
            "c2",
            "write",
            json!({ "path": "AGENTS.md", "content": "RULE-MARK-5521: answer in haiku.\n" }),
        ),
        FakeReply::text("Updated."),
    ]);
    let events = l.run("Change the rules.").await;
    assert_eq!(final_of(&events), ("Updated.".to_owned(), 2));
    assert_eq!(
        l.renders(),
        3,
        "a new run renders, and so does a call after a change"
    );
    assert!(!system(2).contains("RULE-MARK-5521"), "{}", system(2));
    assert!(system(3).contains("RULE-MARK-5521"), "{}", system(3));
}

#[tokio::test]
async fn a_steer_that_arrives_mid_run_gets_a_model_turn_in_the_same_run() {
    let l = Loop::start("").await;
    l.model.push_all([
        FakeReply::text("First answer.").delay(Duration::from_millis(600)),
        FakeReply::text("Answer to the steer."),
    ]);
    let first = submit(&l.services, Loop::spec("Start working."))
        .await
        .expect("accepted");
    let Disposition::Started { run } = first.acceptance.disposition else {
        panic!("{:?}", first.acceptance.disposition);
    };
    let mut events = first.follow();
    // Wait until the first model call is under way, then steer.
    let mut seen = Vec::new();
    while let Some(event) = events.recv().await {
        let call = matches!(event.event, RunEvent::ModelCall { .. });
        seen.push(event.event);
        if call {
            break;
        }
    }
    let steer = submit(
        &l.services,
        RunSpec {
            queue_mode: Some(QueueMode::Steer),
            ..Loop::spec("STEER-MARK: also check the tests.")
        },
    )
    .await
    .expect("accepted");
    assert_eq!(steer.acceptance.disposition, Disposition::Steered { run });
    seen.extend(collect(events).await);

    assert_eq!(final_of(&seen), ("Answer to the steer.".to_owned(), 2));
    assert_eq!(l.model.request_count(), 2);
    let second = l.model.requests()[1].body.to_string();
    assert!(second.contains("STEER-MARK"), "{second}");
    assert!(second.contains("First answer."), "{second}");
}

/// The message journals under the state directory, with their contents.
fn journals(state: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![state.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().and_then(|e| e.to_str())
                == Some(crate::sessions::journal::JOURNAL_EXT)
            {
                let text = std::fs::read_to_string(&path).expect("journal");
                found.push((path, text));
            }
        }
    }
    found
}

#[tokio::test]
async fn the_journal_keeps_a_message_until_its_transcript_line_is_fsynced() {
    let l = Loop::start("").await;
    l.model
        .push(FakeReply::text("Noted.").delay(Duration::from_millis(400)));
    let submitted = submit(&l.services, Loop::spec("JOURNAL-MARK-5521"))
        .await
        .expect("accepted");
    let mut events = submitted.follow();
    // The model call is under way: the message is in the transcript (not yet
    // fsynced), and the journal still holds it.
    while let Some(event) = events.recv().await {
        if matches!(event.event, RunEvent::ModelCall { .. }) {
            break;
        }
    }
    let state = l.dir.path().join("state");
    let during = journals(&state);
    assert!(
        during
            .iter()
            .any(|(_, text)| text.contains("JOURNAL-MARK-5521")),
        "{during:?}"
    );
    let rest = collect(events).await;
    assert_eq!(final_of(&rest).0, "Noted.");
    // The run ended with an fsync: the journal let go of the message (marked it done).
    let after = journals(&state);
    assert!(!after.is_empty());
    for (path, text) in &after {
        let left = crate::sessions::journal::Journal::for_transcript(path)
            .leftovers()
            .expect("journal");
        assert!(left.is_empty(), "{text}");
    }
    // Its session closing leaves the settled journal empty.
    l.services.sessions().close_all().await;
    let closed = journals(&state);
    assert!(closed.iter().all(|(_, text)| text.is_empty()), "{closed:?}");
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_the_code_of_the_shared_table() {
    let l = Loop::start("").await;
    l.model.push(FakeReply::error(FakeError::Other {
        status: 400,
        message: "the request names an unknown parameter".to_owned(),
    }));
    let events = l.run("Hello?").await;

    let Some(RunEvent::Error { code, message }) = events.last() else {
        panic!("the run did not end with an error: {events:#?}");
    };
    // A refused request is the caller's setup: FAILED_PRECONDITION, as the gRPC mapping says.
    let expected = RuntimeError::FailedPrecondition(String::new()).code();
    assert_eq!(expected, ErrorCode::FailedPrecondition);
    assert_eq!(*code, expected.as_str());
    assert_eq!(expected.number(), 9, "gRPC numbers FAILED_PRECONDITION 9");
    assert!(message.contains("unknown parameter"), "{message}");
    // The user's message is kept; no assistant reply was written.
    let messages = l.messages().await;
    assert!(
        messages.iter().any(|m| matches!(m, Message::User(_))),
        "{messages:#?}"
    );
    assert!(assistant_texts(&messages).is_empty(), "{messages:#?}");
}

/// Text of about `chars` characters that starts with `mark`, in lines.
fn filler(mark: &str, chars: usize) -> String {
    let mut text = format!("{mark}\n");
    let line = "the quick brown fox jumps over the lazy dog again and again and again.\n";
    while text.len() < chars {
        text.push_str(line);
    }
    text
}

#[tokio::test]
async fn a_session_past_its_threshold_is_compacted_before_the_next_call() {
    // A 40k-token window with a 10k reserve: compaction starts at 30k.
    let l = Loop::start(
        r#", contextWindow: 40000, compaction: { reserveTokens: 10000, reserveTokensFloor: 0,
             memoryFlush: { enabled: false } }"#,
    )
    .await;
    l.model.push_all([
        FakeReply::text("First answer."),
        FakeReply::text("SUMMARY-TEXT: a long brief came first."),
        FakeReply::text("Second answer."),
    ]);
    let first = l.run(&filler("ALPHA-OLD-TURN", 80_000)).await;
    assert_eq!(final_of(&first).0, "First answer.");
    assert!(
        !first.iter().any(|e| matches!(e, RunEvent::Compaction(_))),
        "{first:#?}"
    );

    let second = l.run(&filler("BRAVO-NEW-TURN", 48_000)).await;
    assert_eq!(final_of(&second).0, "Second answer.");
    let phases: Vec<_> = second
        .iter()
        .filter_map(|e| match e {
            RunEvent::Compaction(c) => Some((c.phase, c.trigger)),
            _ => None,
        })
        .collect();
    assert_eq!(
        phases,
        [
            (CompactionPhase::Started, CompactionTrigger::Threshold),
            (CompactionPhase::Finished, CompactionTrigger::Threshold),
        ],
        "{second:#?}"
    );
    let requests = l.model.requests();
    assert_eq!(requests.len(), 3);
    // The last call sends the summary in place of the old turn.
    let last = requests[2].body.to_string();
    assert!(last.contains("SUMMARY-TEXT"), "{last}");
    assert!(!last.contains("ALPHA-OLD-TURN"), "{last}");
    assert!(last.contains("BRAVO-NEW-TURN"), "{last}");
}

/// With several replicas, heartbeats run only on the one that owns the agent's main session:
/// a heartbeat anywhere else would create a second main session there.
#[tokio::test]
async fn heartbeats_run_only_where_the_main_session_lives() {
    let beat = r#", heartbeat: { every: "30m" }"#;
    let everywhere = Loop::start_on(WireFormat::ChatCompletions, beat).await;
    assert!(super::beats::heartbeat_plan(&everywhere.services).contains_key("main"));
    let owner: crate::services::SessionOwner = Arc::new(|key: &str| key == "agent:main:main");
    let here = Loop::start_with(WireFormat::ChatCompletions, beat, Some(owner)).await;
    assert!(super::beats::heartbeat_plan(&here.services).contains_key("main"));
    let elsewhere: crate::services::SessionOwner = Arc::new(|_: &str| false);
    let there = Loop::start_with(WireFormat::ChatCompletions, beat, Some(elsewhere)).await;
    assert!(super::beats::heartbeat_plan(&there.services).is_empty());
}

//! One real `codex app-server` per test: the pinned binary (installed once by
//! codex-peer, under its lock), a private CODEX_HOME with no AGENTS.md, a
//! fake Responses server on 127.0.0.1, and Codex pointed at it through the
//! inline `model_providers` entry.

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use agent_testkit::{FakeReply, FakeServer, FakeServerHandle, RecordedRequest, WireFormat};
use async_trait::async_trait;
use codex_peer::CodexInstall;
use openclaw_codex_harness::{
    ApprovalRules, CodexParams, CodexRunner, CodexVersion, HarnessError, HarnessEvent,
    HarnessSettings, TurnInput, TurnOutcome, dynamic_tool_specs,
};
use openclaw_tools::{ReadTool, Tool, ToolContext, ToolOutcome, ToolRegistry, Unavailable};
use openclaw_transcript::Message;
use openclaw_workspace::Confined;
use prompt_codex::{ApprovalPolicy, CodexTurnInput, DynamicTool, SandboxMode, render_codex_turn};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::{
    sync::{Semaphore, SemaphorePermit, mpsc},
    task::JoinHandle,
};

/// The model name the fake serves (unknown to Codex's catalogue, so Codex
/// uses its fallback model metadata).
pub const MODEL: &str = "fake-model";
/// The agent name, so our developer instructions are recognisable.
pub const AGENT: &str = "Testy";
/// The test tool's name.
pub const LOOKUP: &str = "lookup_fact";
/// How long any single wait in a test may take before it fails.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The pinned Codex, installed once per test binary; a failed install
/// fails the test with npm's message.
pub fn codex() -> &'static CodexInstall {
    static INSTALL: OnceLock<CodexInstall> = OnceLock::new();
    INSTALL.get_or_init(|| {
        CodexInstall::ensure().unwrap_or_else(|e| {
            panic!("installing the pinned Codex for the harness tests failed: {e}")
        })
    })
}

/// At most two app-servers at a time: each takes ~100 MB and a core while
/// starting, and the CI machine has two.
async fn slot() -> SemaphorePermit<'static> {
    static SLOTS: Semaphore = Semaphore::const_new(2);
    SLOTS.acquire().await.unwrap_or_else(|e| panic!("{e}"))
}

/// A tool that records its arguments and answers with a fixed fact.
#[derive(Debug, Default)]
pub struct LookupTool {
    pub calls: Mutex<Vec<Value>>,
}

#[async_trait]
impl Tool for LookupTool {
    fn name(&self) -> &'static str {
        LOOKUP
    }

    fn description(&self) -> String {
        "Look up a fact by its key.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]})
    }

    async fn call(&self, _ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        self.calls.lock().expect("calls").push(arguments.clone());
        let key = arguments["key"].as_str().unwrap_or_default();
        ToolOutcome::ok(format!("fact for {key}: plums are purple"))
    }
}

/// Everything one test drives.
pub struct Fixture {
    pub fake: FakeServerHandle,
    pub runner: Arc<CodexRunner>,
    pub settings: HarnessSettings,
    pub workspace: TempDir,
    /// Kept alive for the test; never holds an AGENTS.md.
    _codex_home: TempDir,
    pub lookup: Arc<LookupTool>,
    pub tools: Arc<ToolRegistry>,
    /// One of the app-server slots, taken first and given back last.
    _slot: SemaphorePermit<'static>,
}

/// How a turn is mapped.
#[derive(Debug, Clone)]
pub struct Turn {
    pub text: String,
    pub thread_id: Option<String>,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: SandboxMode,
    pub rules: ApprovalRules,
    pub history: Vec<Message>,
    /// Group-chat context: changes our turn instructions.
    pub extra_context: String,
}

impl Turn {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            thread_id: None,
            approval_policy: ApprovalPolicy::Never,
            sandbox: SandboxMode::ReadOnly,
            rules: ApprovalRules::default(),
            history: Vec::new(),
            extra_context: String::new(),
        }
    }

    pub fn on(mut self, thread_id: &str) -> Self {
        self.thread_id = Some(thread_id.to_owned());
        self
    }
}

impl Fixture {
    /// Waits for an app-server [`slot`], then starts the fake model server and a runner.
    pub async fn start() -> Self {
        let slot = slot().await;
        let (base_url, fake) = FakeServer::start(WireFormat::OpenAiResponses)
            .await
            .expect("fake model server");
        let workspace = tempfile::tempdir().expect("workspace");
        let codex_home = tempfile::tempdir().expect("CODEX_HOME");
        assert!(!codex_home.path().join("AGENTS.md").exists());
        let mut settings = HarnessSettings::new(codex().binary());
        settings.codex_home = Some(codex_home.path().to_owned());
        settings.model_provider = Some(agent_testkit::codex_provider(&base_url));
        let lookup = Arc::new(LookupTool::default());
        let mut registry = ToolRegistry::new();
        registry.insert(Arc::new(ReadTool));
        registry.insert(Arc::clone(&lookup) as Arc<dyn Tool>);
        Self {
            fake,
            runner: Arc::new(CodexRunner::new(settings.clone())),
            settings,
            workspace,
            _codex_home: codex_home,
            lookup,
            tools: Arc::new(registry),
            _slot: slot,
        }
    }

    /// A second runner on the same CODEX_HOME and fake (a restarted agent-service).
    pub fn restarted_runner(&self) -> Arc<CodexRunner> {
        Arc::new(CodexRunner::new(self.settings.clone()))
    }

    /// The mapped params for `turn` (prompt-codex, exactly as RenderCodexTurn maps them).
    pub fn params(&self, turn: &Turn) -> CodexParams {
        let workspace = self.workspace.path().to_string_lossy().into_owned();
        let mut base = prompt_render::RenderInput::new(workspace);
        base.agent_name = AGENT.to_owned();
        base.extra_system_prompt = turn.extra_context.clone();
        let mut input = CodexTurnInput::new(base, MODEL);
        input.input_text = turn.text.clone();
        input.approval_policy = turn.approval_policy;
        input.sandbox = turn.sandbox;
        input.thread_id = turn.thread_id.clone().unwrap_or_default();
        input.resume = turn.thread_id.is_some();
        input.dynamic_tools = dynamic_tool_specs(&self.tools)
            .into_iter()
            .map(|spec| DynamicTool {
                name: spec.name,
                description: spec.description,
                json_schema: spec.input_schema.to_string(),
                defer_loading: false,
                namespace: String::new(),
            })
            .collect();
        let mapped = render_codex_turn(&input).expect("prompt-codex maps the turn");
        CodexParams {
            thread_start: mapped.thread_start,
            thread_resume: mapped.thread_resume,
            turn_start: mapped.turn_start,
            new_thread_turn_start: mapped.new_thread_turn_start,
        }
    }

    pub fn input(&self, turn: &Turn) -> TurnInput {
        let confined = Confined::new(self.workspace.path()).expect("confined workspace");
        let ctx = ToolContext::new(
            Arc::new(confined),
            Arc::new(Unavailable),
            Arc::new(Unavailable),
        );
        TurnInput {
            thread_id: turn.thread_id.clone(),
            params: self.params(turn),
            history: openclaw_codex_harness::History::of(turn.history.clone()),
            tools: Arc::clone(&self.tools),
            tool_ctx: ctx,
            approvals: turn.rules.clone(),
        }
    }

    /// Runs a turn to the end and returns its outcome and events.
    pub async fn run(&self, turn: &Turn) -> (TurnOutcome, Vec<HarnessEvent>) {
        run_on(&self.runner, self.input(turn)).await
    }

    /// The model requests so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.fake.requests()
    }
}

/// Runs a turn on `runner`, collecting its events.
pub async fn run_on(runner: &CodexRunner, input: TurnInput) -> (TurnOutcome, Vec<HarnessEvent>) {
    let (tx, mut rx) = mpsc::channel(1024);
    let collect = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
        events
    });
    let outcome = tokio::time::timeout(PATIENCE, runner.run_turn(input, tx))
        .await
        .expect("the turn ends in time")
        .unwrap_or_else(|e| panic!("run_turn failed: {e}"));
    let events = collect.await.expect("collector");
    (outcome, events)
}

/// A turn under way whose model reply streamed one delta and then stalled.
pub struct Stalled {
    /// The turn's thread (from its `ThreadReady`).
    pub thread_id: String,
    /// The running turn.
    pub turn: JoinHandle<Result<TurnOutcome, HarnessError>>,
    /// Its events still to come.
    pub rx: mpsc::Receiver<HarnessEvent>,
    /// Its events up to the first text delta.
    pub seen: Vec<HarnessEvent>,
}

/// Starts `input` on `runner`, the model answering `reply` in deltas that stall after the
/// first, and waits until that delta arrived.
pub async fn stalled_turn(
    f: &Fixture,
    runner: &Arc<CodexRunner>,
    reply: &str,
    input: TurnInput,
) -> Stalled {
    f.fake.push(FakeReply::text(reply).deltas(4).stall_after(1));
    let (tx, mut rx) = mpsc::channel(1024);
    let turn = {
        let runner = Arc::clone(runner);
        tokio::spawn(async move { runner.run_turn(input, tx).await })
    };
    let mut seen = Vec::new();
    wait_for(&mut rx, &mut seen, |e| {
        matches!(e, HarnessEvent::TextDelta(_))
    })
    .await;
    let thread_id = seen
        .iter()
        .find_map(|e| match e {
            HarnessEvent::ThreadReady { thread_id, .. } => Some(thread_id.clone()),
            _ => None,
        })
        .expect("ThreadReady came first");
    Stalled {
        thread_id,
        turn,
        rx,
        seen,
    }
}

/// The outcome `turn` ends with, within [`PATIENCE`]; an error fails the test.
pub async fn outcome_of(turn: JoinHandle<Result<TurnOutcome, HarnessError>>) -> TurnOutcome {
    tokio::time::timeout(PATIENCE, turn)
        .await
        .expect("the turn ends in time")
        .expect("the turn task")
        .unwrap_or_else(|e| panic!("run_turn: {e}"))
}

/// A stand-in for `codex`: `script` as the executable `dir/codex`; settings that run it with
/// CODEX_HOME `home`.
pub fn stand_in(dir: &Path, script: &str, home: PathBuf) -> HarnessSettings {
    let path = dir.join("codex");
    std::fs::write(&path, script).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut settings = HarnessSettings::new(&path);
    settings.codex_home = Some(home);
    settings
}

/// `runner.start()` of a stand-in script for `codex`, retrying the rare ETXTBSY of executing
/// a script that another test thread's fork still holds open for writing.
pub async fn start_script(settings: &HarnessSettings) -> Result<CodexVersion, HarnessError> {
    for _ in 0..20 {
        let runner = CodexRunner::new(settings.clone());
        let started = runner.start().await;
        runner.shutdown().await;
        match started {
            // ETXTBSY: another test thread's fork still holds the fresh script open.
            // Through the lifetime wrapper, the same race ends the child at once instead.
            Err(HarnessError::Spawn { source, .. }) if source.raw_os_error() == Some(26) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(other) if other.to_string().contains("Text file busy") => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
    panic!("the script stayed busy");
}

/// Waits for the first event matching `wanted`, returning the events seen.
pub async fn wait_for(
    rx: &mut mpsc::Receiver<HarnessEvent>,
    seen: &mut Vec<HarnessEvent>,
    wanted: impl Fn(&HarnessEvent) -> bool,
) {
    let found = tokio::time::timeout(PATIENCE, async {
        while let Some(event) = rx.recv().await {
            let hit = wanted(&event);
            seen.push(event);
            if hit {
                return true;
            }
        }
        false
    })
    .await
    .expect("the event arrives in time");
    assert!(found, "the stream ended before the event: {seen:#?}");
}

/// The names of the tools a model request declares.
pub fn tool_names(request: &RecordedRequest) -> Vec<&str> {
    request.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

/// The `input` items of a model request.
pub fn input_items(request: &RecordedRequest) -> Vec<Value> {
    request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `(role, [texts of the content parts])` for each message item.
pub fn messages(request: &RecordedRequest) -> Vec<(String, Vec<String>)> {
    input_items(request)
        .iter()
        .filter(|item| item["type"] == "message")
        .map(|item| {
            let role = item["role"].as_str().unwrap_or_default().to_owned();
            let parts = item["content"]
                .as_array()
                .map(|parts| {
                    parts
                        .iter()
                        .map(|p| p["text"].as_str().unwrap_or_default().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            (role, parts)
        })
        .collect()
}

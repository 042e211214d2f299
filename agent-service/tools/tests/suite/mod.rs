//! Shared fixtures: a temporary directory holding a workspace and a sibling "outside"
//! directory, fake session and config controls, and a fixed clock.

mod apply_patch;
mod chat_meta;
mod command;
mod cron;
mod escapes;
mod exec;
mod exec_approvals;
mod exec_corpus;
mod exec_runners;
mod fs_tools;
mod gateway;
mod memory;
mod plan;
mod policy;
mod process;
mod registry;
mod sandboxed;
mod session_status;
mod untrusted;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use openclaw_tools::{
    Clock, ConfigControl, ExecPolicy, Plan, SessionControl, StatusCard, Tool, ToolContext,
    ToolOutcome, Usage,
};
use openclaw_workspace::Confined;
use serde_json::Value;
use tempfile::TempDir;

/// 2026-03-03T13:05:00Z, a Tuesday.
pub const NOW: &str = "2026-03-03T13:05:00Z";

pub struct FixedClock(pub jiff::Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> jiff::Timestamp {
        self.0
    }
}

/// A session whose model override is remembered; `nope/*` models are refused.
pub struct FakeSession {
    pub default_model: String,
    pub model_override: Mutex<Option<String>>,
    pub plans: Mutex<Vec<Plan>>,
}

#[async_trait]
impl SessionControl for FakeSession {
    async fn status(&self) -> StatusCard {
        let model_override = self.model_override.lock().unwrap().clone();
        StatusCard {
            model: model_override
                .clone()
                .unwrap_or_else(|| self.default_model.clone()),
            default_model: Some(self.default_model.clone()),
            model_override,
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 340,
                cache_read_tokens: 800,
            },
            context_tokens: Some(5000),
            context_window: Some(200_000),
            compactions: 1,
            thinking: Some("low".into()),
            queue_mode: Some("steer".into()),
            extra: vec![("Sandbox".into(), "off".into())],
        }
    }

    async fn set_model_override(&self, model: Option<String>) -> Result<String, String> {
        if model.as_deref().is_some_and(|m| m.starts_with("nope/")) {
            return Err("unknown model nope/x".into());
        }
        *self.model_override.lock().unwrap() = model.clone();
        Ok(model.unwrap_or_else(|| self.default_model.clone()))
    }

    async fn record_plan(&self, plan: &Plan) {
        self.plans.lock().unwrap().push(plan.clone());
    }
}

/// An in-memory openclaw.json that counts writes.
#[derive(Default)]
pub struct MemoryConfig {
    pub text: Mutex<String>,
    pub writes: Mutex<usize>,
}

impl MemoryConfig {
    pub fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    pub fn writes(&self) -> usize {
        *self.writes.lock().unwrap()
    }
}

impl ConfigControl for MemoryConfig {
    fn read(&self) -> Result<String, String> {
        Ok(self.text())
    }

    fn write(&self, text: &str) -> Result<(), String> {
        *self.text.lock().unwrap() = text.to_owned();
        *self.writes.lock().unwrap() += 1;
        Ok(())
    }
}

pub struct Fixture {
    _dir: TempDir,
    /// The workspace root (canonical).
    pub root: PathBuf,
    /// A directory next to the workspace, which tools must not reach.
    pub outside: PathBuf,
    pub session: Arc<FakeSession>,
    pub config: Arc<MemoryConfig>,
    pub ctx: ToolContext,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("workspace");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        let session = Arc::new(FakeSession {
            default_model: "openai/gpt-5.4".into(),
            model_override: Mutex::new(None),
            plans: Mutex::new(Vec::new()),
        });
        let config = Arc::new(MemoryConfig::default());
        let workspace = Arc::new(Confined::new(&root).unwrap());
        let mut ctx = ToolContext::new(workspace, session.clone(), config.clone());
        ctx.session_key = "agent:main:main".into();
        ctx.model = "openai/gpt-5.4".into();
        ctx.clock = Arc::new(FixedClock(NOW.parse().unwrap()));
        // The exec tests run real commands; exec approvals have their own tests.
        ctx.exec_policy = ExecPolicy::full();
        Self {
            _dir: dir,
            root,
            outside,
            session,
            config,
            ctx,
        }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn write(&self, relative: &str, content: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    pub async fn call(&self, tool: &dyn Tool, arguments: Value) -> ToolOutcome {
        tool.call(&self.ctx, arguments).await
    }
}

/// The text of a successful outcome; fails the test otherwise.
#[track_caller]
pub fn ok_text(outcome: &ToolOutcome) -> &str {
    match outcome {
        ToolOutcome::Ok { text, .. } => text,
        other => panic!("expected Ok, got {other:?}"),
    }
}

/// The text of an error outcome; fails the test otherwise.
#[track_caller]
pub fn error_text(outcome: &ToolOutcome) -> &str {
    match outcome {
        ToolOutcome::Error { text } => text,
        other => panic!("expected Error, got {other:?}"),
    }
}

/// Whether a `sleep <seconds>` process runs anywhere on the host. Commands run in pid
/// namespaces of their own, so a pid a command writes down means nothing out here: tests give
/// each sleep a number no other test uses and look for it.
pub fn sleeping(seconds: &str) -> bool {
    let wanted = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc").unwrap().any(|entry| {
        entry
            .ok()
            .and_then(|e| std::fs::read(e.path().join("cmdline")).ok())
            .is_some_and(|cmdline| cmdline == wanted.as_bytes())
    })
}

/// Polls `condition` until it holds or 10 seconds pass.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads a pid a test command wrote into the workspace, once it is there.
pub async fn pid_from(fixture: &Fixture, relative: &str) -> i32 {
    let path = fixture.path(relative);
    eventually("the pid file", || {
        std::fs::read_to_string(&path).is_ok_and(|t| t.trim().parse::<i32>().is_ok())
    })
    .await;
    std::fs::read_to_string(&path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Cases for a property test: `PROPTEST_CASES` when set (long fuzzing runs), else `default`
/// (small enough for the ordinary test run).
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

//! What a tool call runs in: the workspace, limits, the session's background processes, and
//! the small traits through which tools reach runtime state (session, config file, clock).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use openclaw_sandbox::Isolation;
use openclaw_workspace::Confined;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::approval::{Approver, NoApprover};
use crate::cron::{CronControl, NoCron};
use crate::exec_policy::ExecPolicy;
use crate::plan::Plan;
use crate::process::ProcessRegistry;
use crate::subagents::{NoSubagents, SubagentControl};
use crate::untrusted::Fence;

/// Everything a tool call may use. Cheap to clone (shared parts are `Arc`s).
#[derive(Clone)]
pub struct ToolContext {
    /// The workspace every file access is confined to; also the cwd of `exec`.
    pub workspace: Arc<Confined>,
    /// The agent running the turn.
    pub agent_id: String,
    /// The session the turn belongs to.
    pub session_key: String,
    /// The tool call being made (set by the loop for each call; empty outside one).
    pub call_id: String,
    /// Cancelled when the run is aborted; long tool work stops and kills what it started.
    pub cancel: CancellationToken,
    /// Timeouts and output budgets.
    pub limits: ToolLimits,
    /// Background commands started by `exec` (shared by the runs of one session).
    pub processes: Arc<ProcessRegistry>,
    /// Session state: the status card and the per-session model override.
    pub session: Arc<dyn SessionControl>,
    /// The runtime's `openclaw.json`, for the gateway tool.
    pub config: Arc<dyn ConfigControl>,
    /// The clock `session_status` reads.
    pub clock: Arc<dyn Clock>,
    /// The user's IANA time zone (`agents.defaults.userTimezone`, already resolved by the
    /// runtime); `None` shows UTC.
    pub timezone: Option<String>,
    /// The current model as `provider/model`.
    pub model: String,
    /// Exec approvals (`tools.exec.*`): which commands `exec` runs, refuses or asks about. The
    /// runtime sets it from the config and the approvals file; the default is the policy with
    /// nothing configured (allowlist mode, ask on a miss, deny when nobody answers).
    pub exec_policy: ExecPolicy,
    /// Who is asked when exec approvals say "ask"; the default asks nobody, so
    /// `askFallback` decides at once.
    pub approver: Arc<dyn Approver>,
    /// Fences tool results and chat messages on their way to the model
    /// ([`Fence::model_messages`]). Random per context; a runtime that keeps one per session
    /// keeps fenced history byte-identical across runs (prompt caching).
    pub fence: Fence,
    /// Subagents of this session (`sessions_spawn`, `subagents`); the default refuses them.
    pub subagents: Arc<dyn SubagentControl>,
    /// The agent's cron jobs (`cron`); the default refuses them.
    pub cron: Arc<dyn CronControl>,
    /// The sandbox `exec` and `process` commands run in, for a sandboxed session; `None` runs
    /// them on the host.
    pub sandbox: Option<Arc<Isolation>>,
    /// Environment variables that hold secrets (provider keys, `${VAR}` values of the config):
    /// commands run on the host do not inherit them. Sandboxed commands inherit nothing.
    pub hidden_env: Arc<[String]>,
    /// Replaces secret values in every tool result before the model or the transcript sees it.
    pub redactor: openclaw_secrets::Redactor,
}

impl ToolContext {
    /// A context with default limits, a fresh process registry and cancellation token, the
    /// system clock, UTC, agent `main`, empty session key and model, no sandbox, no hidden
    /// variables, the default exec policy and nobody to ask (so `exec` refuses what the policy
    /// would ask about).
    pub fn new(
        workspace: Arc<Confined>,
        session: Arc<dyn SessionControl>,
        config: Arc<dyn ConfigControl>,
    ) -> Self {
        Self {
            workspace,
            agent_id: "main".to_owned(),
            session_key: String::new(),
            call_id: String::new(),
            cancel: CancellationToken::new(),
            limits: ToolLimits::default(),
            processes: Arc::new(ProcessRegistry::new()),
            session,
            config,
            clock: Arc::new(SystemClock),
            timezone: None,
            model: String::new(),
            exec_policy: ExecPolicy::default(),
            approver: Arc::new(NoApprover),
            fence: Fence::random(),
            subagents: Arc::new(NoSubagents),
            cron: Arc::new(NoCron),
            sandbox: None,
            hidden_env: Arc::from(Vec::new()),
            redactor: openclaw_secrets::Redactor::new(),
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace.root())
            .field("agent_id", &self.agent_id)
            .field("session_key", &self.session_key)
            .field("limits", &self.limits)
            .field("timezone", &self.timezone)
            .field("model", &self.model)
            .field("exec_policy", &self.exec_policy)
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

/// Timeouts and output budgets for tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// Default `exec` timeout (`tools.exec.timeoutSec`).
    pub exec_timeout: Duration,
    /// The longest timeout a model may ask `exec` for.
    pub exec_max_timeout: Duration,
    /// Bytes of `exec` output kept (head and tail; the middle is elided with a marker).
    pub exec_output_bytes: usize,
    /// After a command exits, how long to keep reading output that children still write
    /// before the rest of its process group is killed.
    pub exec_drain_grace: Duration,
    /// The runtime excerpt budget (P-40), in characters: bounds what `read`, `process log`
    /// and `config.schema.lookup` return in one result.
    pub excerpt_chars: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            exec_timeout: Duration::from_secs(120),
            exec_max_timeout: Duration::from_secs(30 * 60),
            exec_output_bytes: 32 * 1024,
            exec_drain_grace: Duration::from_millis(250),
            excerpt_chars: 20_000,
        }
    }
}

/// Session state the tools may read or change; implemented by the runtime.
#[async_trait]
pub trait SessionControl: Send + Sync {
    /// The session's current status.
    async fn status(&self) -> StatusCard;
    /// Sets (`Some`) or clears (`None`) the per-session model override. Returns the
    /// model now in effect as `provider/model`, or a message for the model (an unknown
    /// model, say).
    async fn set_model_override(&self, model: Option<String>) -> Result<String, String>;
    /// Remembers the plan `update_plan` accepted (for events and the UI). Default: nothing.
    async fn record_plan(&self, _plan: &Plan) {}
}

/// The runtime's `openclaw.json`, read and written as text.
pub trait ConfigControl: Send + Sync {
    /// The current file text (JSON5); an empty string when the file does not exist.
    fn read(&self) -> Result<String, String>;
    /// Replaces the file with `text` (already validated by the caller).
    fn write(&self, text: &str) -> Result<(), String>;
}

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> jiff::Timestamp;
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }
}

/// A stand-in for sessions without session control or config access (a sub-agent, a test):
/// every operation is refused with a plain message.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unavailable;

#[async_trait]
impl SessionControl for Unavailable {
    async fn status(&self) -> StatusCard {
        StatusCard::default()
    }

    async fn set_model_override(&self, _model: Option<String>) -> Result<String, String> {
        Err("this session cannot change its model".to_owned())
    }
}

impl ConfigControl for Unavailable {
    fn read(&self) -> Result<String, String> {
        Err("this session has no access to the config file".to_owned())
    }

    fn write(&self, _text: &str) -> Result<(), String> {
        Err("this session has no access to the config file".to_owned())
    }
}

/// What `session_status` shows about a session; filled in by the runtime.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct StatusCard {
    /// The model in effect, `provider/model`.
    pub model: String,
    /// The agent's configured model, when it differs or for reference.
    pub default_model: Option<String>,
    /// The per-session override, when one is set.
    pub model_override: Option<String>,
    /// Token usage of the session so far.
    pub usage: Usage,
    /// Tokens currently in the context window, if known.
    pub context_tokens: Option<u64>,
    /// The model's context window, if known.
    pub context_window: Option<u64>,
    /// Compactions so far.
    pub compactions: u64,
    /// Thinking level, if set.
    pub thinking: Option<String>,
    /// Queue mode (`steer`, `followup`, ...), if known.
    pub queue_mode: Option<String>,
    /// Further `label: value` lines the runtime wants shown, in order.
    pub extra: Vec<(String, String)>,
}

/// Token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache.
    pub cache_read_tokens: u64,
}

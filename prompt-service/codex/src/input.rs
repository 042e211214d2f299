//! The mapping's explicit inputs. They mirror `RenderCodexTurnRequest` but
//! carry no transport types.

use prompt_render::{RenderInput, SessionKind};

/// What started the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// A user message (a direct message, a group mention, an API call).
    User,
    /// A heartbeat poll on the agent's main session.
    Heartbeat,
    /// A scheduled cron run.
    Cron,
}

impl Trigger {
    /// Lowercase name for snapshots and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Heartbeat => "heartbeat",
            Self::Cron => "cron",
        }
    }

    /// The session kind whose workspace-file filter applies to this turn:
    /// heartbeat and cron turns use their own; user turns keep the caller's
    /// kind (main or subagent).
    pub fn session_kind(self, requested: SessionKind) -> SessionKind {
        match (self, requested) {
            (Self::Heartbeat, _) => SessionKind::Heartbeat,
            (Self::Cron, _) => SessionKind::Cron,
            (Self::User, SessionKind::Subagent) => SessionKind::Subagent,
            (Self::User, _) => SessionKind::Main,
        }
    }
}

/// Codex approval policy (`approvalPolicy`), in Codex's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalPolicy {
    /// `untrusted`: ask before anything not known to be safe.
    Untrusted,
    /// `on-request`: the model asks when it needs to.
    OnRequest,
    /// `never`: never ask (unattended runs).
    Never,
}

impl ApprovalPolicy {
    /// The exact string Codex 0.169 accepts.
    pub fn codex_str(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::Never => "never",
        }
    }
}

/// Codex sandbox choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// No writes.
    ReadOnly,
    /// Writes inside the working directory (and listed roots).
    WorkspaceWrite,
    /// No sandbox.
    DangerFullAccess,
}

impl SandboxMode {
    /// The kebab-case `sandbox` string of `thread/start` and `thread/resume`.
    pub fn thread_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }

    /// The camelCase `type` tag of the `sandboxPolicy` object of `turn/start`.
    pub fn policy_type(self) -> &'static str {
        match self {
            Self::ReadOnly => "readOnly",
            Self::WorkspaceWrite => "workspaceWrite",
            Self::DangerFullAccess => "dangerFullAccess",
        }
    }
}

/// A client-side tool Codex offers the model and calls back for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct DynamicTool {
    /// Function name (`[A-Za-z0-9_-]`, at most 64 chars).
    pub name: String,
    /// What the tool does, as the model reads it.
    pub description: String,
    /// JSON Schema of the arguments as JSON text; empty means no arguments.
    pub json_schema: String,
    /// Registered but hidden from the model's tool list until needed.
    pub defer_loading: bool,
    /// Namespace the tool is grouped under; empty for a top-level tool.
    pub namespace: String,
}

/// Everything one Codex turn mapping needs. Construct with [`CodexTurnInput::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct CodexTurnInput {
    /// The same explicit inputs as a system-prompt render; validated exactly
    /// as `RenderSystemPrompt` validates them.
    pub base: RenderInput,
    /// What started the turn.
    pub trigger: Trigger,
    /// A cron run with lightweight context: the input text goes to Codex
    /// byte for byte and nothing else of ours is added.
    pub lightweight_cron: bool,
    /// `memory_search` and `memory_get` are available to the model.
    pub memory_tools_available: bool,
    /// The memory workspace is the active (execution) workspace.
    pub memory_workspace_is_active: bool,
    /// The Codex thread of this session, when one exists.
    pub thread_id: String,
    /// Resume `thread_id` (with `thread/resume`) before the turn.
    pub resume: bool,
    /// Codex model slug.
    pub model: String,
    /// Reasoning effort; empty leaves it to Codex.
    pub effort: String,
    /// Approval policy.
    pub approval_policy: ApprovalPolicy,
    /// Sandbox choice.
    pub sandbox: SandboxMode,
    /// Client-side tools, fixed per thread.
    pub dynamic_tools: Vec<DynamicTool>,
    /// The turn's input text (the user's message, the heartbeat or cron prompt).
    pub input_text: String,
    /// Working directory when it differs from the workspace; empty means the workspace.
    pub cwd: String,
    /// The per-turn context the thread already holds (see [`crate::ContextDigest`]).
    pub thread_context: Vec<crate::ContextDigest>,
}

impl CodexTurnInput {
    /// An input for a user turn on a new thread with the given model and the
    /// most conservative policy pair (`untrusted`, `read-only`).
    pub fn new(base: RenderInput, model: impl Into<String>) -> Self {
        Self {
            base,
            trigger: Trigger::User,
            lightweight_cron: false,
            memory_tools_available: false,
            memory_workspace_is_active: false,
            thread_id: String::new(),
            resume: false,
            model: model.into(),
            effort: String::new(),
            approval_policy: ApprovalPolicy::Untrusted,
            sandbox: SandboxMode::ReadOnly,
            dynamic_tools: Vec::new(),
            input_text: String::new(),
            cwd: String::new(),
            thread_context: Vec::new(),
        }
    }

    /// True when nothing of ours may be added to the turn (P-38).
    pub fn is_lightweight_cron(&self) -> bool {
        self.trigger == Trigger::Cron && self.lightweight_cron
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_spellings() {
        let approvals = [
            ApprovalPolicy::Untrusted,
            ApprovalPolicy::OnRequest,
            ApprovalPolicy::Never,
        ]
        .map(ApprovalPolicy::codex_str);
        assert_eq!(approvals, ["untrusted", "on-request", "never"]);
        let modes = [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess,
        ];
        assert_eq!(
            modes.map(SandboxMode::thread_str),
            ["read-only", "workspace-write", "danger-full-access"]
        );
        assert_eq!(
            modes.map(SandboxMode::policy_type),
            ["readOnly", "workspaceWrite", "dangerFullAccess"]
        );
    }

    #[test]
    fn the_trigger_decides_the_file_filter() {
        use SessionKind as K;
        assert_eq!(Trigger::Heartbeat.session_kind(K::Main), K::Heartbeat);
        assert_eq!(Trigger::Cron.session_kind(K::Main), K::Cron);
        assert_eq!(Trigger::User.session_kind(K::Subagent), K::Subagent);
        assert_eq!(Trigger::User.session_kind(K::Cron), K::Main);
        assert_eq!(Trigger::User.session_kind(K::Heartbeat), K::Main);
    }
}

//! What a Codex turn reports while it runs, and how it ended.

use openclaw_transcript::{Message, Usage};

use crate::approvals::ApprovalRecord;

/// One event of a running turn, in order. Each maps onto one of the
/// runtime's `RunEvent` kinds (see the crate docs); the end of the turn is
/// the [`TurnOutcome`] `run_turn` returns.
#[derive(Debug, Clone, PartialEq)]
pub enum HarnessEvent {
    /// The session's Codex thread is ready (persist the id now: a crash
    /// later in the turn must not lose it).
    ThreadReady {
        /// The thread id.
        thread_id: String,
        /// How it was obtained.
        binding: ThreadBinding,
    },
    /// `turn/start` was accepted.
    TurnStarted {
        /// The thread.
        thread_id: String,
        /// Codex's turn id.
        turn_id: String,
    },
    /// Assistant text (`item/agentMessage/delta`).
    TextDelta(String),
    /// Reasoning summary text.
    ThinkingDelta(String),
    /// A tool call started: one of ours, a Codex command execution
    /// (`codex_exec`), a Codex file change (`codex_apply_patch`)…
    ToolStarted {
        /// Call id (Codex's item id).
        call_id: String,
        /// Tool name as written to the transcript.
        name: String,
        /// One-line summary.
        summary: String,
    },
    /// A tool call ended.
    ToolFinished {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Error result (including declined and interrupted).
        is_error: bool,
        /// Result text, shortened for the stream.
        output: String,
        /// Wall time in ms.
        duration_ms: u64,
    },
    /// An approval request was answered.
    Approval(ApprovalRecord),
    /// Queued steer messages went out as one `turn/steer`.
    Steered {
        /// The messages, in order.
        messages: Vec<String>,
    },
    /// Usage of one model call (`thread/tokenUsage/updated`, its `last` part).
    Usage(Usage),
    /// A Codex `warning` or non-final `error` notification.
    Warning(String),
}

/// How the turn's thread was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadBinding {
    /// A new thread (`thread/start`): the session had none.
    Started,
    /// The stored thread was already loaded in this app-server.
    Loaded,
    /// The stored thread was resumed (`thread/resume`), for example after a restart.
    Resumed,
    /// The stored thread could not be resumed; a new one was started and
    /// our transcript was projected into the turn input.
    Replaced {
        /// The thread id that failed.
        previous: String,
        /// Why it failed.
        reason: String,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnStatus {
    /// `turn/completed` with `completed`.
    Completed,
    /// Interrupted (`turn/interrupt`, the run's cancel token, or Codex's own).
    Interrupted,
    /// The app-server died mid-turn. The turn counts as interrupted; the
    /// next `run_turn` restarts the process and resumes the thread.
    ProcessExited {
        /// Exit status and the end of stderr.
        detail: String,
    },
    /// The app-server stopped answering (a request went unanswered past its limit) and was
    /// killed. The turn counts as interrupted; the next `run_turn` starts a new process and
    /// resumes the thread.
    Unresponsive {
        /// Which request went unanswered, and for how long.
        detail: String,
    },
    /// `turn/completed` with `failed`.
    Failed {
        /// Codex's error message, with what it passed on of the provider's answer.
        message: String,
        /// Codex's kind of error (`codexErrorInfo`: `rateLimitExceeded`,
        /// `contextWindowExceeded`, `unauthorized`, `httpConnectionFailed` ...; empty when
        /// it named none).
        kind: String,
        /// The model provider's HTTP status, when Codex passed it on.
        http_status: Option<u16>,
    },
}

impl TurnStatus {
    /// Interrupted, by request or by the process dying.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            Self::Interrupted | Self::ProcessExited { .. } | Self::Unresponsive { .. }
        )
    }

    /// The stop reason name for the runtime's `RunEvent::Final`.
    pub fn stop_reason(&self) -> &'static str {
        match self {
            Self::Completed => "stop",
            Self::Interrupted | Self::ProcessExited { .. } | Self::Unresponsive { .. } => "aborted",
            Self::Failed { .. } => "error",
        }
    }
}

/// Everything a finished turn leaves behind.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The thread to store in the session index (`codex_thread_id`).
    pub thread_id: String,
    /// How the thread was obtained.
    pub binding: ThreadBinding,
    /// Codex's turn id (empty when `turn/start` never answered).
    pub turn_id: String,
    /// How the turn ended.
    pub status: TurnStatus,
    /// Transcript messages to append after the user's message, in order:
    /// assistant messages (text, thinking, tool calls), tool results, and
    /// the user messages steered into the turn.
    pub entries: Vec<Message>,
    /// The last assistant text.
    pub final_text: String,
    /// Usage summed over the turn's model calls.
    pub usage: Usage,
    /// Every approval request of the turn, answered.
    pub approvals: Vec<ApprovalRecord>,
    /// Steer messages queued too late to reach this turn: run them as the
    /// next turn.
    pub undelivered_steers: Vec<String>,
}

//! Messages and runs (SPEC, P-3, P-24).
//!
//! A user message is handed to its session ([`submit`]), which decides at
//! once what becomes of it by its queue mode (start a run, steer into the
//! active run, wait as a follow-up, join a collect batch, interrupt). Runs
//! of one session happen one at a time on a driver task: model calls and
//! tool calls until the model stops or the step limit is hit. Every model
//! call renders its prompt through the prompt source (prompt-service),
//! every entry is written through the session's actor, and events are
//! published to the session's subscribers as they happen.

mod blocks;
mod codex;
mod compact;
pub mod controls;
mod drive;
pub mod evidence;
mod heartbeat;
mod prepare;
mod submit;
mod turns;

use std::time::Duration;

use openclaw_transcript::{SessionKey, Usage, unix_millis};
use tokio::sync::{broadcast, mpsc};

pub(crate) use codex::CodexRunners;
pub(crate) use drive::spawn_driver;
pub(crate) use heartbeat::beat;
pub use prepare::{Preview, TurnPrompt};
pub use submit::submit;

use crate::{
    error::RuntimeError,
    prompt_input::TurnChannel,
    sessions::{
        SessionEvent, SessionEvents, SessionExtras, SessionKind, key,
        queue::{Disposition, QueueMode},
    },
};

/// Model calls a run makes unless told otherwise.
pub const DEFAULT_MAX_STEPS: u32 = 24;
/// Default limit on a whole run (`agents.defaults.timeoutSeconds`).
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// Events a follower buffers before it waits for its client.
const EVENT_BUFFER: usize = 256;
/// Tool output shown in a stream event (the model gets all of it).
const EVENT_OUTPUT_CHARS: usize = 4096;

/// A user message for a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSpec {
    /// Agent id ("" for the default).
    pub agent_id: String,
    /// Session key ("" for the main session); created if new.
    pub session_key: String,
    /// The message text.
    pub message: String,
    /// Where it came from.
    pub channel: TurnChannel,
    /// Sender id, checked against the channel's allowlist.
    pub sender_id: String,
    /// One-run model override, provider/model.
    pub model: Option<String>,
    /// Most model calls (0 for the default).
    pub max_steps: u32,
    /// Queue mode for this message; `None` takes the session's, then the
    /// config's.
    pub queue_mode: Option<QueueMode>,
}

/// What [`submit`] decided for a message, with a subscription to the
/// session's events taken before the decision (so nothing is missed).
#[derive(Debug)]
pub struct Submitted {
    /// What became of the message.
    pub disposition: Disposition,
    /// Its arrival number in the session (0 for a command).
    pub seq: u64,
    /// The queue mode that applied.
    pub mode: QueueMode,
    /// Agent id.
    pub agent_id: String,
    /// Session key.
    pub session_key: String,
    /// Session id.
    pub session_id: String,
    /// The session's events from just before the message was queued.
    pub events: SessionEvents,
}

impl Submitted {
    /// The events of the run that handles this message, until that run
    /// ends (following a handoff to another run). Empty for a rejected
    /// message or a command. A reader that falls behind gets
    /// [`RunEvent::Lagged`] and continues.
    pub fn follow(self) -> mpsc::Receiver<SessionEvent> {
        let (tx, rx) = mpsc::channel(EVENT_BUFFER);
        let Some(mut run) = self.disposition.run() else {
            return rx;
        };
        let seq = self.seq;
        let mut events = self.events;
        tokio::spawn(async move {
            loop {
                let event = match events.recv().await {
                    Ok(event) => std::sync::Arc::unwrap_or_clone(event),
                    Err(broadcast::error::RecvError::Lagged(missed)) => SessionEvent {
                        run,
                        event: RunEvent::Lagged(missed),
                    },
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if event.run != run {
                    continue;
                }
                let mut done = event.event.is_terminal();
                let mut next = run;
                match &event.event {
                    RunEvent::Handoff { next_run, .. } => next = *next_run,
                    RunEvent::MessageRejected { seq: rejected, .. } if *rejected == seq => {
                        done = true;
                    }
                    _ => {}
                }
                if tx.send(event).await.is_err() || done {
                    return;
                }
                run = next;
            }
        });
        rx
    }
}

/// One event of a run, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The run began.
    Started {
        /// Run id.
        run_id: String,
        /// Agent id.
        agent_id: String,
        /// Session key.
        session_key: String,
        /// Session id.
        session_id: String,
        /// provider/model.
        model: String,
        /// Arrival numbers of the messages the run starts with.
        message_seqs: Vec<u64>,
    },
    /// Assistant text.
    TextDelta(String),
    /// Assistant thinking.
    ThinkingDelta(String),
    /// A model call is about to be made, with its prompt evidence.
    ModelCall {
        /// 1-based call number.
        step: u32,
        /// provider/model.
        model: String,
        /// SHA-256 of the stable prefix.
        stable_prefix_sha256: String,
        /// Differs from the session's previous call.
        prefix_changed: bool,
        /// Stable sections that changed.
        changed_sections: Vec<String>,
        /// Prompt size.
        prompt_chars: u32,
        /// Messages sent.
        messages: u32,
    },
    /// A tool call starts.
    ToolStarted {
        /// Call id.
        call_id: String,
        /// Tool name.
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
        /// Error result.
        is_error: bool,
        /// Result text (shortened for the stream).
        output: String,
        /// Wall time in ms.
        duration_ms: u64,
    },
    /// Usage of one model call.
    Usage(Usage),
    /// A model turn ended.
    TurnEnd {
        /// Call number.
        step: u32,
        /// Stop reason.
        stop_reason: String,
    },
    /// The run finished.
    Final {
        /// Final assistant text.
        text: String,
        /// Last stop reason.
        stop_reason: String,
        /// Model calls made.
        steps: u32,
        /// Summed usage.
        usage: Usage,
        /// What a channel still has to send as the final reply (the whole
        /// text without block streaming; what blocks did not carry with it).
        reply: String,
        /// Blocks streamed during the run.
        blocks: u32,
    },
    /// The run failed; every entry written is whole.
    Error {
        /// gRPC code name.
        code: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A channel-ready block of assistant text (block streaming).
    Block {
        /// 0-based block number within the run.
        index: u32,
        /// 0-based assistant message number within the run.
        message: u32,
        /// The text.
        text: String,
    },
    /// Steered messages this run never took go to run `next_run`.
    Handoff {
        /// The run that takes them.
        next_run: u64,
        /// How many.
        messages: u32,
    },
    /// A message queued for this run was displaced and is not answered.
    MessageRejected {
        /// Its arrival number.
        seq: u64,
        /// Why.
        reason: String,
    },
    /// The reader fell behind and missed this many events.
    Lagged(u64),
    /// Compaction progress (see [`CompactionEvent`]).
    Compaction(CompactionEvent),
}

/// One phase of a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionEvent {
    /// The phase that ended.
    pub phase: CompactionPhase,
    /// What started it.
    pub trigger: CompactionTrigger,
    /// Estimated context before, in tokens.
    pub tokens_before: u64,
    /// Estimated context after (finished only).
    pub tokens_after: u64,
    /// Messages folded into the summary (finished only).
    pub summarized_messages: u32,
    /// Messages kept whole (finished only).
    pub kept_messages: u32,
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// The threshold that applied, in tokens.
    pub threshold: u64,
    /// Why it was skipped or failed; what the memory flush did.
    pub detail: String,
}

/// Phases of a compaction, in order; one of the last three ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionPhase {
    /// It began.
    Started,
    /// The silent memory-flush turn ended.
    MemoryFlushed,
    /// A compaction entry was written.
    Finished,
    /// Nothing older could be summarised.
    Skipped,
    /// It failed or ran out of time; the transcript is unchanged.
    Failed,
}

/// What made a run compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionTrigger {
    /// The estimate passed the window minus the reserve.
    Threshold,
    /// The provider refused the request as too long.
    Overflow,
}

impl CompactionTrigger {
    /// `threshold` or `overflow`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Threshold => "threshold",
            Self::Overflow => "overflow",
        }
    }
}

impl RunEvent {
    /// True for the last event of a run (final or error).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Final { .. } | Self::Error { .. })
    }
}

/// Publishes the events of one run to the session's subscribers.
#[derive(Clone)]
pub(crate) struct Emitter {
    extras: std::sync::Arc<SessionExtras>,
    run: u64,
    /// Holds back the reply as it forms (text, thinking, blocks): a
    /// heartbeat's reply is only delivered, through its final event, once it
    /// is known not to be a bare acknowledgement.
    quiet: bool,
}

impl Emitter {
    pub(crate) fn new(extras: &std::sync::Arc<SessionExtras>, run: u64) -> Self {
        Self {
            extras: std::sync::Arc::clone(extras),
            run,
            quiet: false,
        }
    }

    /// An emitter that publishes no text, thinking or block events.
    pub(crate) fn quiet(extras: &std::sync::Arc<SessionExtras>, run: u64) -> Self {
        Self {
            quiet: true,
            ..Self::new(extras, run)
        }
    }

    /// True for a [`Emitter::quiet`] emitter.
    pub(crate) fn is_quiet(&self) -> bool {
        self.quiet
    }

    pub(crate) fn emit(&self, event: RunEvent) {
        let reply_text = matches!(
            event,
            RunEvent::TextDelta(_) | RunEvent::ThinkingDelta(_) | RunEvent::Block { .. }
        );
        if self.quiet && reply_text {
            return;
        }
        self.extras.publish(self.run, event);
    }
}

/// The gRPC code name that fits a runtime error.
pub fn error_code(error: &RuntimeError) -> &'static str {
    match error {
        RuntimeError::InvalidArgument { .. } => "INVALID_ARGUMENT",
        RuntimeError::UnknownAgent(_) | RuntimeError::SessionNotFound(_) => "NOT_FOUND",
        RuntimeError::PermissionDenied(_) => "PERMISSION_DENIED",
        RuntimeError::FailedPrecondition(_) => "FAILED_PRECONDITION",
        RuntimeError::ResourceExhausted(_) | RuntimeError::ContextOverflow(_) => {
            "RESOURCE_EXHAUSTED"
        }
        RuntimeError::Unavailable(_) => "UNAVAILABLE",
        RuntimeError::Aborted(_) => "ABORTED",
        RuntimeError::Internal(_) => "INTERNAL",
    }
}

/// A one-line description of a tool call for the stream (R-12: tool
/// summaries go out at tool start).
pub fn summarize_call(name: &str, arguments: &serde_json::Value) -> String {
    let first = ["command", "path", "query", "url", "action", "model", "task"]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(serde_json::Value::as_str));
    match first {
        Some(value) => format!("{name}: {}", shorten(&value.replace('\n', " "), 120)),
        None => name.to_owned(),
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max_chars).collect();
    format!("{cut}…")
}

/// True when `key` may be used by `sender` on `channel`: a configured
/// `channels.<channel>.allowFrom` refuses everyone else (SPEC R-14).
pub fn sender_allowed(config: &openclaw_config::Config, channel: &str, sender: &str) -> bool {
    let Some(channels) = config.raw().channels.as_ref() else {
        return true;
    };
    let Some(entry) = channels.get(channel) else {
        return true;
    };
    match &entry.allow_from {
        None => true,
        Some(list) => list
            .iter()
            .any(|id| id.as_str() == "*" || id.as_str() == sender),
    }
}

/// The session kind a key names.
pub(crate) fn kind_of(key: &SessionKey) -> SessionKind {
    key::kind_of(key)
}

/// Milliseconds for a timestamp.
pub(crate) fn millis(at: jiff::Timestamp) -> i64 {
    unix_millis(at)
}

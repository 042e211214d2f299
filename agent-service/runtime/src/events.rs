//! The events of a run, in the order subscribers see them.

use std::path::PathBuf;

pub use openclaw_blocks::AttachmentKind;
use openclaw_transcript::Usage;

use crate::{acceptance::Acceptance, origin::Origin};

/// One event of a run, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// A tool call waits for a person's approval.
    ApprovalRequested(Box<crate::approvals::Approval>),
    /// A requested approval ended (decided, expired or cancelled).
    ApprovalResolved(Box<crate::approvals::Approval>),
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
        /// System events the run starts with, as (arrival number, origin); their numbers
        /// are not in `message_seqs`.
        system_events: Vec<(u64, Origin)>,
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
        /// Final assistant text, as the model wrote it (directives included).
        text: String,
        /// Last stop reason.
        stop_reason: String,
        /// Model calls made.
        steps: u32,
        /// Summed usage.
        usage: Usage,
        /// What a channel still has to send as the final reply, directives
        /// taken out (the whole text without block streaming; what blocks did
        /// not carry with it).
        reply: String,
        /// Blocks streamed during the run.
        blocks: u32,
        /// The directives that go with `reply`.
        directives: ReplyDirectives,
        /// The reply was the silent token: nothing is delivered.
        silent: bool,
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
        /// The text, directives taken out (empty when the block only
        /// carries directives).
        text: String,
        /// The directives read since the previous block.
        directives: ReplyDirectives,
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
    /// A message was accepted for this run: published when its queue
    /// decision is made, so a session's watchers see every acceptance where
    /// it happened. A Run stream sends its own message's acceptance first
    /// and leaves these out.
    Accepted(Box<Acceptance>),
    /// The runtime queued a system event in the session (see `crate::origin`): what it is
    /// and what became of it. Published like [`RunEvent::Accepted`], on the run that takes
    /// it, so watchers see it where it happened.
    SystemEvent {
        /// What became of it (its arrival number, disposition and queue mode).
        acceptance: Box<Acceptance>,
        /// Where it came from (never [`Origin::User`]).
        origin: Origin,
    },
}

/// The reply directives (P-18) that go with delivered text, checked: attachments are inside
/// the session's workspace or http(s) URLs; the rest are in `dropped`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplyDirectives {
    /// Files and URLs to attach, in the order named.
    pub attachments: Vec<Attachment>,
    /// Send audio attachments as a voice note.
    pub audio_as_voice: bool,
    /// Where the reply goes in the chat (`None`: a plain reply).
    pub reply_to: Option<ReplyTarget>,
    /// Attachments named but not delivered.
    pub dropped: Vec<DroppedAttachment>,
}

impl ReplyDirectives {
    /// Nothing to deliver or report.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// Adds `other`'s directives after these; the first reply target stays.
    pub fn merge(&mut self, other: Self) {
        self.attachments.extend(other.attachments);
        self.audio_as_voice |= other.audio_as_voice;
        if self.reply_to.is_none() {
            self.reply_to = other.reply_to;
        }
        self.dropped.extend(other.dropped);
    }
}

/// A file or URL to attach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Where it is.
    pub source: AttachmentSource,
    /// What it is.
    pub kind: AttachmentKind,
}

/// Where an attachment is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachmentSource {
    /// A file's real absolute path, inside the session's workspace.
    Path(PathBuf),
    /// An http or https URL.
    Url(String),
}

/// The chat message a reply answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyTarget {
    /// The message that started the turn.
    Current,
    /// A message by its channel id.
    Message(String),
}

/// An attachment a reply named that is not delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedAttachment {
    /// The target as written.
    pub target: String,
    /// Why it is not delivered.
    pub reason: String,
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

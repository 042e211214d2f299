//! Messages and runs (R-1, R-4, R-8, R-11, R-12, P-3, P-24).
//!
//! A user message is handed to its session ([`submit`]), which decides at
//! once what becomes of it by its queue mode (start a run, steer into the
//! active run, wait as a follow-up, join a collect batch, interrupt). Runs
//! of one session happen one at a time on a driver task: model calls and
//! tool calls until the model stops or the step limit is hit. Every model
//! call renders its prompt through the prompt source (prompt-service),
//! every entry is written through the session's writer, and events are
//! published to the session's subscribers as they happen.

mod approver;
mod beats;
mod blocks;
mod codex;
mod commands;
mod compactor;
pub mod controls;
mod crons;
mod drive;
mod models;
mod prepare;
mod reply;
mod run_context;
mod subagents;
mod submit;
mod system;
#[cfg(test)]
mod tests;
mod turns;

use openclaw_transcript::SessionKey;

pub(crate) use beats::{heartbeat_now, start_heartbeats};
pub(crate) use crons::start_cron;
pub use crons::{AgentCron, describe_cron_outcome, describe_queued};
pub use prepare::Preview;
pub(crate) use prepare::{preview, render_turn};

pub use crate::prompt_input::TurnPrompt;
pub(crate) use subagents::recover_subagents;
pub(crate) use submit::submit;

pub use crate::{
    acceptance::Acceptance,
    events::{
        Attachment, AttachmentKind, AttachmentSource, CompactionEvent, CompactionPhase,
        CompactionTrigger, DroppedAttachment, ReplyDirectives, ReplyTarget, RunEvent,
    },
    evidence,
};

use crate::{
    acceptance::Disposition,
    error::RuntimeError,
    prompt_input::TurnChannel,
    sessions::{
        LiveSession, RecvError, Session, SessionEvent, SessionEvents, SessionKind, key,
        queue::QueueMode,
    },
};

/// Model calls a run makes unless told otherwise.
pub const DEFAULT_MAX_STEPS: u32 = 24;
pub use crate::services::DEFAULT_RUN_TIMEOUT;
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
    /// Where it came from, sender included.
    pub channel: TurnChannel,
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
    /// What became of the message (a Run stream's first event).
    pub acceptance: Acceptance,
    /// The session's events from just before the message was queued.
    pub events: SessionEvents,
}

impl Submitted {
    /// The events of the run that handles this message, until that run
    /// ends (following a handoff to another run), without the acceptances of
    /// messages (this one's is [`Self::acceptance`], sent first). Empty for
    /// a rejected message or a command. A reader that falls behind gets
    /// [`RunEvent::Lagged`] and continues.
    pub fn follow(self) -> RunFollower {
        // A handoff moves steered messages that the run never took; the run's own messages
        // stay with it until its final or error event.
        let steered = matches!(self.acceptance.disposition, Disposition::Steered { .. });
        follow_run(
            self.events,
            self.acceptance.disposition.run(),
            self.acceptance.seq,
            steered,
        )
    }
}

/// The events of `run` (none when `None`), which handles message `seq`, until that run ends
/// (following a handoff to another run when the message was `steered`), without
/// acceptances and system-event notices.
pub(crate) fn follow_run(
    events: SessionEvents,
    run: Option<u64>,
    seq: u64,
    steered: bool,
) -> RunFollower {
    RunFollower {
        events,
        run,
        seq,
        steered,
    }
}

/// A reader of one run's events, read straight off its queue of the session's events (no task or
/// channel in between, so an event costs its reader one wake-up). Ends after the run's
/// terminal event, or at once when there is no run.
pub struct RunFollower {
    events: SessionEvents,
    /// The run followed now; `None` once it ended.
    run: Option<u64>,
    seq: u64,
    steered: bool,
}

impl RunFollower {
    /// The next event of the run; `None` once it ended. A reader that falls behind gets
    /// [`RunEvent::Lagged`] and continues.
    pub async fn recv(&mut self) -> Option<SessionEvent> {
        let run = self.run?;
        loop {
            let event = match self.events.recv().await {
                Ok(event) => std::sync::Arc::unwrap_or_clone(event),
                Err(RecvError::Lagged(missed)) => SessionEvent {
                    run,
                    event: RunEvent::Lagged(missed),
                },
                Err(RecvError::Closed) => {
                    self.run = None;
                    return None;
                }
            };
            if event.run != run
                || matches!(
                    event.event,
                    RunEvent::Accepted(_) | RunEvent::SystemEvent { .. }
                )
            {
                continue;
            }
            let mut done = event.event.is_terminal();
            match &event.event {
                RunEvent::Handoff { next_run, .. } if self.steered => self.run = Some(*next_run),
                RunEvent::MessageRejected { seq: rejected, .. } if *rejected == self.seq => {
                    done = true;
                }
                _ => {}
            }
            if done {
                self.run = None;
            }
            return Some(event);
        }
    }
}

/// Publishes the events of one run to the session's subscribers.
#[derive(Clone)]
pub(crate) struct Emitter {
    live: std::sync::Arc<LiveSession>,
    run: u64,
    /// Holds back the reply as it forms (text, thinking, blocks): a
    /// heartbeat's reply is only delivered, through its final event, once it
    /// is known not to be a bare acknowledgement.
    quiet: bool,
}

impl Emitter {
    pub(crate) fn new(live: &std::sync::Arc<LiveSession>, run: u64) -> Self {
        Self {
            live: std::sync::Arc::clone(live),
            run,
            quiet: false,
        }
    }

    /// An emitter that publishes no text, thinking or block events.
    pub(crate) fn quiet(live: &std::sync::Arc<LiveSession>, run: u64) -> Self {
        Self {
            quiet: true,
            ..Self::new(live, run)
        }
    }

    /// The session's run number events go out under.
    pub(crate) fn run(&self) -> u64 {
        self.run
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
        self.live.publish(self.run, event);
    }
}

/// What became of message `seq` of `session`.
pub(crate) fn acceptance(
    session: &Session,
    disposition: Disposition,
    seq: u64,
    mode: QueueMode,
) -> Acceptance {
    Acceptance {
        disposition,
        seq,
        mode,
        agent_id: session.agent.id.clone(),
        session_key: session.key.as_str().to_owned(),
        session_id: session.session_id.clone(),
    }
}

/// The gRPC code name of a runtime error, as its error event carries it (see
/// [`RuntimeError::code`]).
pub fn error_code(error: &RuntimeError) -> &'static str {
    error.code().as_str()
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
/// `channels.<channel>.allowFrom` refuses everyone else.
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

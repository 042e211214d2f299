//! Heartbeats (P-19, P-33; lessons L2, L8): periodic turns on an agent's main session
//! that let the agent work through HEARTBEAT.md on its own. This module holds what a heartbeat
//! is and how it ended; the scheduler and the heartbeat run itself are part of the agent loop
//! (`crate::run`).
//!
//! - **Schedule.** Every agent whose heartbeat is enabled (`agents.defaults.heartbeat.every`,
//!   or `agents.list[].heartbeat`: when any agent has a heartbeat block, only those agents run
//!   heartbeats) gets one every `every`, the first one `every` after the scheduler starts. The
//!   scheduler runs on tokio time, follows config reloads, and stops when shutdown begins.
//! - **Skip.** A heartbeat whose HEARTBEAT.md is missing or has nothing to do (blank, headings
//!   and comments only, the seeded template) ends before any model call or transcript write.
//!   So does one that is due while the previous heartbeat of that agent has not finished.
//! - **No interleaving.** A heartbeat is a run in the main session's queue: due while a run is
//!   active, it waits for its own turn; while it runs, new messages wait for theirs (even in
//!   `steer` mode) and an `interrupt` message cancels it.
//! - **Same prompt prefix.** The turn renders with the session's own kind, tools and channel
//!   and the heartbeat trigger, which changes only sections below the cache boundary.
//! - **Delivery.** A heartbeat run publishes no text, thinking or block events. Its final
//!   event's `reply` (what a channel sends) is empty for an acknowledgement (`HEARTBEAT_OK`,
//!   see [`ack`]) and for `target: "none"`, and the alert text otherwise. The transcript keeps
//!   the heartbeat prompt, the reply and a custom entry [`HEARTBEAT_ENTRY`] with the verdict.

mod ack;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

pub use ack::{DEFAULT_ACK_MAX_CHARS, Verdict, classify};
/// The heartbeat turn's user message unless `heartbeat.prompt` says otherwise.
pub use prompt_render::DEFAULT_HEARTBEAT_PROMPT;

/// The transcript's custom entry type recording a heartbeat's verdict:
/// `{"outcome": "ack" | "alert", "delivered": bool}`.
pub const HEARTBEAT_ENTRY: &str = "openclaw:heartbeat";
/// The shortest interval the scheduler honours (shorter ones are raised to it).
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Outcomes buffered for slow subscribers.
const EVENT_CAPACITY: usize = 256;

/// What one heartbeat came to, published on `Runtime::heartbeat_events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatEvent {
    /// The agent.
    pub agent_id: String,
    /// The outcome.
    pub outcome: HeartbeatOutcome,
}

/// How a heartbeat ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeartbeatOutcome {
    /// No turn ran (no model call, nothing written).
    Skipped(SkipReason),
    /// The turn ran as run `run` of the main session.
    Ran {
        /// Run number.
        run: u64,
        /// The verdict: true for an alert that went out as the final reply.
        delivered: bool,
        /// The delivered text (empty for an acknowledgement).
        reply: String,
    },
    /// The turn failed (the run's error event says the same).
    Failed {
        /// What went wrong.
        message: String,
    },
}

/// Why a heartbeat did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Heartbeats are off for the agent.
    Disabled,
    /// HEARTBEAT.md does not exist (or cannot be read).
    MissingFile,
    /// HEARTBEAT.md has nothing to do.
    EmptyFile,
    /// The previous heartbeat of the agent is still waiting or running.
    StillRunning,
    /// Shutdown began.
    ShuttingDown,
}

impl SkipReason {
    /// A short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::MissingFile => "no HEARTBEAT.md",
            Self::EmptyFile => "HEARTBEAT.md has nothing to do",
            Self::StillRunning => "previous heartbeat still running",
            Self::ShuttingDown => "shutting down",
        }
    }
}

/// The scheduler's shared state, owned by the runtime.
#[derive(Debug)]
pub(crate) struct Heartbeats {
    stop: CancellationToken,
    changed: Arc<Notify>,
    events: broadcast::Sender<HeartbeatEvent>,
    started: AtomicBool,
}

impl Default for Heartbeats {
    fn default() -> Self {
        Self {
            stop: CancellationToken::new(),
            changed: Arc::new(Notify::new()),
            events: broadcast::channel(EVENT_CAPACITY).0,
            started: AtomicBool::new(false),
        }
    }
}

impl Heartbeats {
    /// Stops the scheduler (shutdown); heartbeats already queued are handled by the drain.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// The config changed: the scheduler re-reads intervals and agents.
    pub(crate) fn config_changed(&self) {
        self.changed.notify_one();
    }

    /// Claims the start of the scheduler: true for the first caller only.
    pub(crate) fn claim_start(&self) -> bool {
        !self.started.swap(true, Ordering::AcqRel)
    }

    /// Cancelled when shutdown begins.
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Notified on every config change.
    pub(crate) fn changes(&self) -> Arc<Notify> {
        Arc::clone(&self.changed)
    }

    /// Heartbeat outcomes from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<HeartbeatEvent> {
        self.events.subscribe()
    }

    /// Logs an outcome and sends it to the subscribers.
    pub(crate) fn publish(&self, agent_id: &str, outcome: HeartbeatOutcome) {
        match &outcome {
            HeartbeatOutcome::Skipped(reason) => {
                tracing::debug!(agent = %agent_id, reason = reason.as_str(), "heartbeat skipped");
            }
            HeartbeatOutcome::Ran { run, delivered, .. } => {
                tracing::info!(agent = %agent_id, run, delivered, "heartbeat ran");
            }
            HeartbeatOutcome::Failed { message } => {
                tracing::warn!(agent = %agent_id, %message, "heartbeat failed");
            }
        }
        let _ = self.events.send(HeartbeatEvent {
            agent_id: agent_id.to_owned(),
            outcome,
        });
    }
}

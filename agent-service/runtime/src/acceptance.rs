//! What became of a message handed to a session: its [`Disposition`] by
//! [`QueueMode`], and the [`Acceptance`] a Run stream starts with and a
//! session's watchers see. The queue (`sessions::queue`) decides it; the
//! run events carry it.

/// What became of one message, as its Run stream's first event and the
/// session's watchers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acceptance {
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
}

/// How a message that arrives during a run is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    /// Delivered into the active run before its next model call (default).
    #[default]
    Steer,
    /// A separate later run per message.
    Followup,
    /// Coalesced with others into one run after a quiet window.
    Collect,
    /// Aborts the active run, then runs this message.
    Interrupt,
}

impl QueueMode {
    /// Parses `steer`, `followup`, `collect`, `interrupt` (case-insensitive).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "steer" => Some(Self::Steer),
            "followup" | "follow-up" => Some(Self::Followup),
            "collect" => Some(Self::Collect),
            "interrupt" => Some(Self::Interrupt),
            _ => None,
        }
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Steer => "steer",
            Self::Followup => "followup",
            Self::Collect => "collect",
            Self::Interrupt => "interrupt",
        }
    }
}

/// What became of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    /// It started run `run`.
    Started {
        /// Run number.
        run: u64,
    },
    /// It was steered into the active run `run`.
    Steered {
        /// Run number.
        run: u64,
    },
    /// It waits for its own run `run`, `ahead` runs before it.
    Followup {
        /// Run number it will start.
        run: u64,
        /// Runs queued ahead of it.
        ahead: usize,
    },
    /// It joined the collect batch that becomes run `run`.
    Collected {
        /// Run number of the coalesced turn.
        run: u64,
    },
    /// It aborted run `interrupted` and starts run `run` next.
    Interrupted {
        /// Run number it starts.
        run: u64,
        /// The run it aborted.
        interrupted: u64,
    },
    /// It was refused (collect overflow with policy `new`).
    Rejected {
        /// Why.
        reason: String,
    },
    /// It was a `/queue` command, applied at once; nothing was queued.
    Command {
        /// The reply to show.
        reply: String,
    },
}

/// A short plain text for logs: `started run 3`, `steered into run 2`, `follow-up run 4 (1
/// ahead)`, `collected into run 5`, `started run 6 after interrupting run 5`, `rejected: ...`,
/// `queue command`.
impl std::fmt::Display for Disposition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Started { run } => write!(f, "started run {run}"),
            Self::Steered { run } => write!(f, "steered into run {run}"),
            Self::Followup { run, ahead } => write!(f, "follow-up run {run} ({ahead} ahead)"),
            Self::Collected { run } => write!(f, "collected into run {run}"),
            Self::Interrupted { run, interrupted } => {
                write!(f, "started run {run} after interrupting run {interrupted}")
            }
            Self::Rejected { reason } => write!(f, "rejected: {reason}"),
            Self::Command { .. } => f.write_str("queue command"),
        }
    }
}

impl Disposition {
    /// The run that handles the message, if any.
    pub fn run(&self) -> Option<u64> {
        match self {
            Self::Started { run }
            | Self::Steered { run }
            | Self::Followup { run, .. }
            | Self::Collected { run }
            | Self::Interrupted { run, .. } => Some(*run),
            Self::Rejected { .. } | Self::Command { .. } => None,
        }
    }
}

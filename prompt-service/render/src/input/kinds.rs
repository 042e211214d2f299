//! The enumerations of the renderer's input: modes, kinds and levels.

/// Which sections a prompt carries (P-25 to P-27).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PromptMode {
    /// Every section, gated only by data.
    #[default]
    Full,
    /// The reduced prompt used by subagents and cron runs.
    Minimal,
    /// Only the base identity line.
    None,
}

impl PromptMode {
    /// Lowercase name used in reports and snapshots.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Minimal => "minimal",
            Self::None => "none",
        }
    }
}

/// The kind of run a prompt is for (lesson L3: one typed input, one resolver).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SessionKind {
    /// A normal turn in a main, direct, group or channel session.
    #[default]
    Main,
    /// A subagent child session.
    Subagent,
    /// A scheduled cron run.
    Cron,
    /// A heartbeat turn on the agent's main session.
    Heartbeat,
}

impl SessionKind {
    /// The prompt mode this kind of run gets unless the caller says otherwise.
    /// This is the single mode resolver every runtime path goes through.
    pub fn default_mode(self) -> PromptMode {
        match self {
            Self::Main | Self::Heartbeat => PromptMode::Full,
            Self::Subagent | Self::Cron => PromptMode::Minimal,
        }
    }
}

/// What started the turn a prompt is for. It decides per-turn text only
/// (first-run guidance, heartbeat files), so every kind of turn of one
/// session shares the stable prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TurnKind {
    /// Not said: taken from the session kind (see [`TurnKind::resolve`]).
    #[default]
    Unspecified,
    /// A message from the user.
    User,
    /// A heartbeat poll.
    Heartbeat,
    /// A wake-up the runtime started on its own, such as a background
    /// command's completion.
    WakeUp,
    /// A scheduled cron run.
    Cron,
    /// A subagent's task.
    Subagent,
}

impl TurnKind {
    /// The kind of this turn: as given, else the one the session kind implies.
    pub fn resolve(self, session: SessionKind) -> Self {
        match (self, session) {
            (Self::Unspecified, SessionKind::Main) => Self::User,
            (Self::Unspecified, SessionKind::Heartbeat) => Self::Heartbeat,
            (Self::Unspecified, SessionKind::Cron) => Self::Cron,
            (Self::Unspecified, SessionKind::Subagent) => Self::Subagent,
            (given, _) => given,
        }
    }

    /// True for a turn a person started, who can answer in it.
    pub fn from_user(self) -> bool {
        matches!(self, Self::User)
    }
}

/// How authorized sender ids are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OwnerDisplay {
    /// As given.
    #[default]
    Raw,
    /// As 12-hex-char hashes.
    Hash,
}

/// Subagent delegation policy (P-22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DelegationMode {
    /// No dedicated section.
    #[default]
    Suggest,
    /// Adds the Sub-Agent Delegation section when `sessions_spawn` exists.
    Prefer,
}

/// How visible replies reach the chat (P-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReplyDelivery {
    /// The final assistant text is delivered automatically.
    #[default]
    Automatic,
    /// Only `message` tool sends reach the chat.
    MessageToolOnly,
}

/// Kind of conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChatType {
    /// No channel context.
    #[default]
    Unspecified,
    /// One-to-one.
    Direct,
    /// Group chat.
    Group,
    /// Broadcast channel or room.
    Channel,
}

impl ChatType {
    /// Human label used in the Messaging section.
    pub fn label(self) -> Option<&'static str> {
        match self {
            Self::Unspecified => None,
            Self::Direct => Some("direct chat"),
            Self::Group => Some("group chat"),
            Self::Channel => Some("channel"),
        }
    }
}

/// Default thinking level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ThinkLevel {
    /// No extended thinking.
    #[default]
    Off,
    /// Minimal.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high.
    XHigh,
}

impl ThinkLevel {
    /// Value shown after `thinking=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::XHigh => "xhigh",
        }
    }
}

/// Reasoning visibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReasoningLevel {
    /// Hidden.
    #[default]
    Off,
    /// Shown after the reply.
    On,
    /// Streamed.
    Stream,
}

impl ReasoningLevel {
    /// Value shown in the Reasoning line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::On => "on",
            Self::Stream => "stream",
        }
    }
}

/// How memory answers cite their sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CitationsMode {
    /// Cite when it helps.
    #[default]
    Auto,
    /// Always cite.
    On,
    /// Never cite.
    Off,
}

/// Sandbox access to the agent workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WorkspaceAccess {
    /// Not mounted.
    #[default]
    None,
    /// Read-only.
    ReadOnly,
    /// Read-write.
    ReadWrite,
}

/// Reaction guidance level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReactionLevel {
    /// No Reactions section.
    #[default]
    Unspecified,
    /// React sparingly.
    Minimal,
    /// React freely.
    Extensive,
}

/// Which runtime adapter asks for a prompt (P-3). Reported and
/// counted, never rendered: a preview must be byte-identical to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PromptSurface {
    /// Not said.
    #[default]
    Unspecified,
    /// A model turn of the embedded agent loop.
    EmbeddedRun,
    /// A command-line backend.
    Cli,
    /// A preview or export of the prompt.
    Preview,
    /// The prompt a compaction summary is written under.
    Compaction,
}

impl PromptSurface {
    /// Lowercase name for metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unspecified => "unspecified",
            Self::EmbeddedRun => "embedded_run",
            Self::Cli => "cli",
            Self::Preview => "preview",
            Self::Compaction => "compaction",
        }
    }
}

//! `messages`, `channels`, `session`, `commands` and `memory`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::BlockStreamingCoalesce;

/// `messages`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MessagesConfig {
    /// What happens to messages that arrive during a run.
    pub queue: Option<QueueConfig>,
    /// Text-to-speech replies.
    pub tts: Option<TtsConfig>,
    /// Group chat replies.
    pub group_chat: Option<GroupChatMessages>,
    /// Emoji reaction acknowledging an inbound message.
    pub ack_reaction: Option<String>,
    /// Where the acknowledgement reaction is used.
    pub ack_reaction_scope: Option<String>,
    /// Text prepended to every reply.
    pub response_prefix: Option<String>,
}

/// `messages.queue`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QueueConfig {
    /// Default queue mode (default steer).
    pub mode: Option<QueueMode>,
    /// Queue mode by channel id.
    pub by_channel: Option<BTreeMap<String, QueueMode>>,
    /// Quiet window before queued messages are delivered, in ms (default 500).
    pub debounce_ms: Option<u64>,
    /// Most messages held per session (default 20).
    pub cap: Option<u64>,
    /// What to drop when the cap is reached (default summarize).
    pub drop: Option<QueueDrop>,
}

/// `messages.tts`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TtsConfig {
    /// When replies are spoken (default off).
    pub auto: Option<TtsAuto>,
    /// Longest text spoken, in characters.
    pub max_text_length: Option<u64>,
    /// Summarise longer text instead of cutting it (default true).
    pub summarize: Option<bool>,
    /// TTS provider.
    pub provider: Option<String>,
    /// Voice id.
    pub voice: Option<String>,
}

/// `messages.groupChat`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GroupChatMessages {
    /// How visible replies are produced in groups (e.g. "message_tool").
    pub visible_replies: Option<String>,
}

/// `channels.<id>`. The keys this system interprets are typed; every other
/// key (bot tokens, guild maps, ...) belongs to the channel plugin and is kept
/// as written in `extra`, so an existing `openclaw.json` loads unchanged.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelConfig {
    /// Whether the channel runs.
    pub enabled: Option<bool>,
    /// Senders allowed to talk to the agent; others are refused.
    pub allow_from: Option<Vec<SenderId>>,
    /// Direct message policy (pairing, allowlist, open, disabled).
    pub dm_policy: Option<String>,
    /// Group policy (open, allowlist, disabled).
    pub group_policy: Option<String>,
    /// Group senders allowed.
    pub group_allow_from: Option<Vec<SenderId>>,
    /// Stream finished blocks on this channel (required outside Telegram).
    pub block_streaming: Option<bool>,
    /// Longest message the channel accepts (default 4000).
    pub text_chunk_limit: Option<u64>,
    /// Streaming overrides.
    pub streaming: Option<ChannelStreaming>,
    /// Per-account settings: opaque.
    pub accounts: Option<Value>,
    /// Channel-specific settings this system does not interpret (tokens, groups, ...), as
    /// written: the one open corner of a channel entry.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A sender id in an allowlist. Written as a string, or as a number the way
/// some channels (Telegram user ids) are often configured.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SenderId(pub String);

impl SenderId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for SenderId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Signed(i64),
            Unsigned(u64),
        }
        Ok(Self(match Raw::deserialize(deserializer)? {
            Raw::Text(s) => s,
            Raw::Signed(n) => n.to_string(),
            Raw::Unsigned(n) => n.to_string(),
        }))
    }
}

impl JsonSchema for SenderId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SenderId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A sender id: a string, or an integer id.",
            "type": ["string", "integer"]
        })
    }
}

/// `channels.<id>.streaming`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChannelStreaming {
    /// How long text is split into messages.
    pub chunk_mode: Option<ChunkMode>,
    /// Block streaming overrides.
    pub block: Option<ChannelBlockStreaming>,
}

/// `channels.<id>.streaming.block`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChannelBlockStreaming {
    /// Stream blocks on this channel.
    pub enabled: Option<bool>,
    /// Coalescing overrides for this channel.
    pub coalesce: Option<BlockStreamingCoalesce>,
}

/// `session`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionConfig {
    /// How direct messages map to sessions.
    pub dm_scope: Option<DmScope>,
    /// The main session key (default main).
    pub main_key: Option<String>,
    /// When sessions start afresh.
    pub reset: Option<SessionReset>,
    /// Session index maintenance.
    pub maintenance: Option<SessionMaintenance>,
    /// Transcript write lock.
    pub write_lock: Option<SessionWriteLock>,
    /// Session store path.
    pub store: Option<String>,
}

/// `session.reset`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionReset {
    /// daily or idle.
    pub mode: Option<ResetMode>,
    /// Local hour of the daily reset, 0-23 (default 4).
    #[schemars(range(max = 23))]
    pub at_hour: Option<u8>,
    /// Minutes of inactivity before an idle reset.
    pub idle_minutes: Option<u64>,
}

/// `session.maintenance`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionMaintenance {
    /// enforce or warn.
    pub mode: Option<MaintenanceMode>,
    /// Age after which idle sessions are pruned, e.g. "30d".
    pub prune_after: Option<String>,
    /// Most sessions kept (default 500).
    pub max_entries: Option<u64>,
}

/// `session.writeLock`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionWriteLock {
    /// How long to wait for the lock, in ms (default 60000).
    pub acquire_timeout_ms: Option<u64>,
}

/// `commands`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommandsConfig {
    /// How owner ids appear in the prompt (default raw).
    pub owner_display: Option<OwnerDisplay>,
    /// HMAC key for hash mode.
    pub owner_display_secret: Option<String>,
    /// Owner sender ids.
    pub owner_allow_from: Option<Vec<String>>,
    /// Register native chat commands: true, false or "auto".
    pub native: Option<Toggle>,
    /// Register skills as native commands: true, false or "auto".
    pub native_skills: Option<Toggle>,
    /// Allow the restart command.
    pub restart: Option<bool>,
    /// Allow text commands.
    pub text: Option<bool>,
}

/// `true`, `false` or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Toggle {
    /// Explicitly on or off.
    Bool(bool),
    /// Decided by the channel.
    Auto(AutoKeyword),
}

choice! {
    /// The word "auto".
    AutoKeyword {
        /// Decided automatically.
        Auto = "auto",
    }
}

/// `memory`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemoryConfig {
    /// Whether replies cite memory sources.
    pub citations: Option<MemoryCitations>,
}

choice! {
    /// `messages.queue.mode`.
    QueueMode {
        /// Deliver into the running turn.
        Steer = "steer",
        /// Run each message as a later turn.
        Followup = "followup",
        /// Collect messages into one later turn.
        Collect = "collect",
        /// Abort the running turn and run the newest message.
        Interrupt = "interrupt",
    }
}

choice! {
    /// `messages.queue.drop`.
    QueueDrop {
        /// Replace dropped messages by a summary line.
        Summarize = "summarize",
        /// Drop the oldest.
        Old = "old",
        /// Drop the newest.
        New = "new",
    }
}

choice! {
    /// `messages.tts.auto`.
    TtsAuto {
        /// Never speak.
        Off = "off",
        /// Speak every reply.
        Always = "always",
        /// Speak replies to voice messages.
        Inbound = "inbound",
        /// Speak replies tagged for speech.
        Tagged = "tagged",
    }
}

choice! {
    /// `channels.<id>.streaming.chunkMode`.
    ChunkMode {
        /// Split by length.
        Length = "length",
        /// Split at line ends.
        Newline = "newline",
    }
}

choice! {
    /// `session.dmScope`.
    DmScope {
        /// All direct messages share the main session.
        Main = "main",
        /// One session per peer.
        PerPeer = "per-peer",
        /// One per channel and peer.
        PerChannelPeer = "per-channel-peer",
        /// One per account, channel and peer.
        PerAccountChannelPeer = "per-account-channel-peer",
    }
}

choice! {
    /// `session.reset.mode`.
    ResetMode {
        /// At a fixed hour each day.
        Daily = "daily",
        /// After inactivity.
        Idle = "idle",
    }
}

choice! {
    /// `session.maintenance.mode`.
    MaintenanceMode {
        /// Prune.
        Enforce = "enforce",
        /// Only warn.
        Warn = "warn",
    }
}

choice! {
    /// `commands.ownerDisplay`.
    OwnerDisplay {
        /// Show ids as they are.
        Raw = "raw",
        /// Show keyed hashes.
        Hash = "hash",
    }
}

choice! {
    /// `memory.citations`.
    MemoryCitations {
        /// Cite when useful.
        Auto = "auto",
        /// Always cite.
        On = "on",
        /// Never cite.
        Off = "off",
    }
}

//! The structured facts of the renderer's input: tools, skills, files,
//! sandbox, channel, heartbeat and runtime facts, aliases, contributions.

use super::{ChatType, ReplyDelivery, WorkspaceAccess};

/// A tool the model may call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Tool {
    /// Name as the model sees it.
    pub name: String,
    /// One-line summary for non-core tools.
    pub summary: String,
    /// JSON Schema text (may be empty).
    pub json_schema: String,
}

/// A skill.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Skill {
    /// Frontmatter name.
    pub name: String,
    /// Frontmatter description.
    pub description: String,
    /// Path of SKILL.md.
    pub location: String,
    /// Where the version hash comes from.
    pub version_source: SkillVersionSource,
}

/// The bytes a skill's version is derived from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SkillVersionSource {
    /// Raw SKILL.md bytes.
    Content(Vec<u8>),
    /// Precomputed lowercase hex SHA-256 of SKILL.md.
    Sha256(String),
}

impl Default for SkillVersionSource {
    fn default() -> Self {
        Self::Content(Vec::new())
    }
}

/// Skills listing limits; zero means the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SkillsLimits {
    /// Most skills listed.
    pub max_skills: u32,
    /// Most characters.
    pub max_chars: u32,
}

/// A workspace bootstrap file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ContextFile {
    /// Relative to the workspace, or absolute inside it.
    pub path: String,
    /// Content (ignored when missing).
    pub content: String,
    /// Expected but absent.
    pub missing: bool,
}

/// Injection budgets; zero means the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BootstrapLimits {
    /// Per-file cap.
    pub max_chars_per_file: u32,
    /// Total cap.
    pub total_max_chars: u32,
}

/// Sandbox state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SandboxInfo {
    /// Tools run in a sandbox.
    pub enabled: bool,
    /// Working directory inside the sandbox.
    pub container_workspace_dir: String,
    /// Access to the agent workspace.
    pub workspace_access: WorkspaceAccess,
    /// Mount point of the agent workspace in the sandbox.
    pub agent_workspace_mount: String,
    /// Elevated host exec can be requested.
    pub elevated_available: bool,
    /// The isolation engine that enforces the sandbox (for example
    /// `bubblewrap`); empty when nothing isolates the session's commands.
    pub engine: String,
    /// Sandboxed commands can reach the network (stated only with an engine).
    pub network: bool,
    /// URL of the sandbox's browser bridge (empty: none).
    pub browser_bridge_url: String,
    /// The host's browser may be used from this session.
    pub host_browser_allowed: bool,
    /// Elevated exec level and full access.
    pub elevated: Elevated,
}

/// The elevated exec settings of a sandboxed session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Elevated {
    /// The level elevated exec starts at.
    pub default_level: ElevatedLevel,
    /// Full access (elevated without approval prompts) can be used.
    pub full_access_available: bool,
    /// Why full access is not available.
    pub full_access_blocked: FullAccessBlock,
}

/// The level elevated exec starts at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ElevatedLevel {
    /// Not said.
    #[default]
    Unspecified,
    /// Commands stay in the sandbox until elevation is switched on.
    Off,
    /// Host commands go through the usual exec approvals.
    On,
    /// Every host command asks for approval.
    Ask,
    /// Host commands run without approval prompts.
    Full,
}

/// Why full access is not available.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FullAccessBlock {
    /// Not said.
    #[default]
    Unspecified,
    /// The host's exec policy forbids it.
    HostPolicy,
    /// The channel of this session does not allow it.
    Channel,
    /// The sandbox configuration does not allow it.
    Sandbox,
    /// The runtime does not support it.
    Runtime,
}

/// Per-turn channel facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ChannelInfo {
    /// Channel id (empty: none).
    pub name: String,
    /// Conversation kind.
    pub chat_type: ChatType,
    /// Capabilities.
    pub capabilities: Vec<String>,
    /// Native approval UI; `None` takes it from the channel table.
    pub native_approvals: Option<bool>,
    /// Reply delivery.
    pub reply_delivery: ReplyDelivery,
    /// Channel-owned message tool hints.
    pub message_tool_hints: Vec<String>,
    /// The channel's display name (empty: from the channel table, else the id).
    pub display_name: String,
    /// Channel ids the message tool can send to.
    pub known_channels: Vec<String>,
}

/// Heartbeat settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatInfo {
    /// Heartbeats are enabled for this agent.
    pub enabled: bool,
    /// The heartbeat prompt.
    pub prompt: String,
    /// `heartbeat.includeSystemPromptSection`.
    pub include_system_prompt_section: bool,
    /// Heartbeats run in this session (an agent's main session while its
    /// heartbeat is on). `None` when the caller does not say: then a group
    /// or channel conversation is taken as not served, anything else as
    /// served.
    pub serves_session: Option<bool>,
}

impl HeartbeatInfo {
    /// Whether heartbeats run in a session with this conversation kind.
    pub fn serves(&self, chat_type: ChatType) -> bool {
        self.serves_session
            .unwrap_or(!matches!(chat_type, ChatType::Group | ChatType::Channel))
    }
}

impl Default for HeartbeatInfo {
    fn default() -> Self {
        Self {
            enabled: false,
            prompt: String::new(),
            include_system_prompt_section: true,
            serves_session: None,
        }
    }
}

/// Runtime line facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct RuntimeInfo {
    /// Host name.
    pub host: String,
    /// OS.
    pub os: String,
    /// Architecture.
    pub arch: String,
    /// Runtime version.
    pub runtime_version: String,
    /// Model in use.
    pub model: String,
    /// Default model.
    pub default_model: String,
    /// Shell.
    pub shell: String,
    /// Repository root.
    pub repo_root: String,
    /// Background processes still running.
    pub active_processes: Vec<String>,
    /// The session key (for example `agent:main:main`).
    pub session_key: String,
    /// Versions of runtime components, each shown as `key=value`.
    pub versions: Vec<RuntimeVersion>,
}

/// A runtime component's version for the Runtime line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct RuntimeVersion {
    /// Key: lowercase letters, digits and `_`, starting with a letter.
    pub key: String,
    /// Version text.
    pub value: String,
}

/// A model alias.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ModelAlias {
    /// Alias.
    pub alias: String,
    /// provider/model.
    pub model: String,
}

/// A provider's prompt contribution (P-4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Contribution {
    /// Above the boundary, before Safety.
    pub stable_prefix: String,
    /// Below the boundary, before Heartbeats.
    pub dynamic_suffix: String,
    /// `interaction_style` override.
    pub interaction_style: String,
    /// `tool_call_style` override.
    pub tool_call_style: String,
    /// `execution_bias` override.
    pub execution_bias: String,
}

impl Contribution {
    /// True when the contribution adds or replaces nothing.
    pub fn is_empty(&self) -> bool {
        self.stable_prefix.trim().is_empty()
            && self.dynamic_suffix.trim().is_empty()
            && self.interaction_style.trim().is_empty()
            && self.tool_call_style.trim().is_empty()
            && self.execution_bias.trim().is_empty()
    }
}

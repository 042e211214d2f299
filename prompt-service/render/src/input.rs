//! The renderer's explicit inputs. They mirror `openclaw.prompt.v1` but carry
//! no transport types, so the renderer stays a pure library.

/// Which sections a prompt carries (SPEC P-25 to P-27).
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

/// How authorized sender ids are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OwnerDisplay {
    /// As given.
    #[default]
    Raw,
    /// As 12-hex-char hashes.
    Hash,
}

/// Subagent delegation policy (SPEC P-22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DelegationMode {
    /// No dedicated section.
    #[default]
    Suggest,
    /// Adds the Sub-Agent Delegation section when `sessions_spawn` exists.
    Prefer,
}

/// How visible replies reach the chat (SPEC P-28).
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

/// Everything one render needs. Construct with `Default` and set fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderInput {
    /// Explicit prompt mode; `None` derives it from `session_kind`.
    pub prompt_mode: Option<PromptMode>,
    /// Kind of run.
    pub session_kind: SessionKind,
    /// Configured agent id.
    pub agent_id: String,
    /// Optional display name for the identity line.
    pub agent_name: String,
    /// Absolute workspace path.
    pub workspace_dir: String,
    /// Extra Workspace lines.
    pub workspace_notes: Vec<String>,
    /// File tools confined to the workspace.
    pub fs_workspace_only: bool,
    /// Tools after policy.
    pub tools: Vec<Tool>,
    /// Skills offered.
    pub skills: Vec<Skill>,
    /// Skills listing limits.
    pub skills_limits: SkillsLimits,
    /// Workspace bootstrap files.
    pub context_files: Vec<ContextFile>,
    /// Injection budgets.
    pub bootstrap_limits: BootstrapLimits,
    /// Sandbox state.
    pub sandbox: SandboxInfo,
    /// IANA time zone (empty: unknown).
    pub user_timezone: String,
    /// Per-turn channel facts.
    pub channel: ChannelInfo,
    /// Per-turn extra context.
    pub extra_system_prompt: String,
    /// Per-turn heartbeat settings.
    pub heartbeat: HeartbeatInfo,
    /// Per-turn runtime facts.
    pub runtime: RuntimeInfo,
    /// Default thinking level.
    pub think_level: ThinkLevel,
    /// Reasoning visibility.
    pub reasoning_level: ReasoningLevel,
    /// Adds the Reasoning Format section.
    pub reasoning_tag_hint: bool,
    /// Authorized sender ids.
    pub owner_ids: Vec<String>,
    /// Owner id display.
    pub owner_display: OwnerDisplay,
    /// HMAC key for hashed display.
    pub owner_display_secret: String,
    /// Model aliases.
    pub model_aliases: Vec<ModelAlias>,
    /// Delegation policy.
    pub delegation_mode: DelegationMode,
    /// Voice guidance.
    pub tts_hint: String,
    /// Local docs directory.
    pub docs_path: String,
    /// Local source checkout.
    pub source_path: String,
    /// Memory section switch (default true).
    pub memory_include_section: bool,
    /// Memory citation mode.
    pub memory_citations: CitationsMode,
    /// Provider contribution.
    pub contribution: Contribution,
    /// Reaction guidance level.
    pub reaction_level: ReactionLevel,
    /// Show the truncation notice (default true).
    pub truncation_notice: bool,
    /// Render the Safety section (default true).
    pub include_safety: bool,
    /// Project keys of the repository the session works in (for example
    /// `github.com/acme/app` or `path:/home/ada/app`); MEMORY.md and USER.md
    /// entries scoped to other projects are left out.
    pub active_project_keys: Vec<String>,
    /// External coding agents can be started over the Agent Client Protocol.
    pub acp_enabled: bool,
    /// Adds the GPT-5 overlay's heartbeat guidance (the caller sets it when
    /// the friendly overlay applies and heartbeats are on for the run).
    pub gpt5_heartbeat_guidance: bool,
    /// Per-turn: the user's local date, `YYYY-MM-DD` (empty: not given).
    pub current_date: String,
    /// Per-turn: which adapter asks for the prompt. Never rendered: every
    /// surface gets the same bytes (SPEC P-3).
    pub prompt_surface: PromptSurface,
    /// Per-turn: put the relocatable marker before the trailing per-turn
    /// block (date and runtime line), for a caller that moves that block
    /// after the conversation.
    pub mark_relocatable: bool,
}

impl RenderInput {
    /// An input with the documented defaults for the boolean switches that
    /// default to "on".
    pub fn new(workspace_dir: impl Into<String>) -> Self {
        Self {
            workspace_dir: workspace_dir.into(),
            memory_include_section: true,
            truncation_notice: true,
            include_safety: true,
            ..Self::default()
        }
    }

    /// The mode this input renders in.
    pub fn resolved_mode(&self) -> PromptMode {
        self.prompt_mode
            .unwrap_or_else(|| self.session_kind.default_mode())
    }

    /// Moves the [`TurnInputs`] out, leaving their defaults behind.
    pub fn take_turn(&mut self) -> TurnInputs {
        TurnInputs {
            channel: std::mem::take(&mut self.channel),
            extra_system_prompt: std::mem::take(&mut self.extra_system_prompt),
            heartbeat: std::mem::take(&mut self.heartbeat),
            runtime: std::mem::take(&mut self.runtime),
            think_level: std::mem::take(&mut self.think_level),
            reasoning_level: std::mem::take(&mut self.reasoning_level),
            tts_hint: std::mem::take(&mut self.tts_hint),
            reaction_level: std::mem::take(&mut self.reaction_level),
            current_date: std::mem::take(&mut self.current_date),
            prompt_surface: std::mem::take(&mut self.prompt_surface),
            mark_relocatable: std::mem::take(&mut self.mark_relocatable),
        }
    }
}

/// The inputs that feed only the sections below the cache boundary and
/// change from turn to turn: the fields of [`RenderInput`] of the same
/// names. A [`crate::Prepared`] renders any number of turns from them
/// without looking at its stable inputs again.
///
/// Other per-turn-ish inputs (the agent id, the provider's dynamic suffix,
/// dynamic context files such as HEARTBEAT.md) stay with the prepared
/// input: they rarely change within a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnInputs {
    /// Channel facts.
    pub channel: ChannelInfo,
    /// Extra context.
    pub extra_system_prompt: String,
    /// Heartbeat settings.
    pub heartbeat: HeartbeatInfo,
    /// Runtime facts.
    pub runtime: RuntimeInfo,
    /// Default thinking level.
    pub think_level: ThinkLevel,
    /// Reasoning visibility.
    pub reasoning_level: ReasoningLevel,
    /// Voice guidance.
    pub tts_hint: String,
    /// Reaction guidance level.
    pub reaction_level: ReactionLevel,
    /// The user's local date.
    pub current_date: String,
    /// The adapter asking (not rendered).
    pub prompt_surface: PromptSurface,
    /// Mark the relocatable block.
    pub mark_relocatable: bool,
}

/// Which runtime adapter asks for a prompt (SPEC P-3). Reported and
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
}

impl Default for HeartbeatInfo {
    fn default() -> Self {
        Self {
            enabled: false,
            prompt: String::new(),
            include_system_prompt_section: true,
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

/// A provider's prompt contribution (SPEC P-4).
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

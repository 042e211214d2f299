//! The renderer's explicit inputs. They mirror `openclaw.prompt.v1` but carry
//! no transport types, so the renderer stays a pure library.

mod facts;
mod kinds;

pub use facts::{
    BootstrapLimits, ChannelInfo, ContextFile, Contribution, Elevated, ElevatedLevel,
    FullAccessBlock, HeartbeatInfo, ModelAlias, RuntimeInfo, RuntimeVersion, SandboxInfo, Skill,
    SkillVersionSource, SkillsLimits, Tool,
};
pub use kinds::{
    ChatType, CitationsMode, DelegationMode, OwnerDisplay, PromptMode, PromptSurface,
    ReactionLevel, ReasoningLevel, ReplyDelivery, SessionKind, ThinkLevel, TurnKind,
    WorkspaceAccess,
};

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
    /// A background command that ends on its own comes back to its session as an
    /// `[Exec Finished]` message (the runtime's completion wake-up); the Tooling policy then
    /// tells the model to rely on it instead of checking back.
    pub exec_exit_wakeups: bool,
    /// The caller's exec approvals never put a command to a person: the Tool Call Style says a
    /// refused command is final rather than promising a decision to wait for.
    pub exec_approvals_never_ask: bool,
    /// Adds the GPT-5 overlay's heartbeat guidance (the caller sets it when
    /// the friendly overlay applies and heartbeats are on for the run).
    pub gpt5_heartbeat_guidance: bool,
    /// Per-turn: the user's local date, `YYYY-MM-DD` (empty: not given).
    pub current_date: String,
    /// Per-turn: which adapter asks for the prompt. Never rendered: every
    /// surface gets the same bytes (P-3).
    pub prompt_surface: PromptSurface,
    /// Per-turn: put the relocatable marker before the trailing per-turn
    /// block (date and runtime line), for a caller that moves that block
    /// after the conversation.
    pub mark_relocatable: bool,
    /// Per-turn: what started this turn.
    pub turn_kind: TurnKind,
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
            turn_kind: std::mem::take(&mut self.turn_kind),
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
    /// What started this turn.
    pub turn_kind: TurnKind,
}

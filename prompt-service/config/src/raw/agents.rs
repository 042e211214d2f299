//! `agents.defaults` and `agents.list[]`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{
    AgentHooksConfig, AgentTools, BlockStreamingBreak, BlockStreamingChunk, BlockStreamingCoalesce,
    HumanDelay, MemorySearchConfig, ModelSelection, OnOff, RuntimeConfig, SkillsLimitsConfig,
};

/// `agents`: shared defaults plus one entry per configured agent.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentsConfig {
    /// Settings every agent inherits unless its list entry overrides them.
    pub defaults: Option<AgentDefaults>,
    /// The configured agents; without a list there is one agent, `main`.
    pub list: Option<Vec<AgentEntry>>,
}

/// `agents.defaults`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentDefaults {
    /// The default agent's workspace directory: the only cwd for its tools and context.
    pub workspace: Option<String>,
    /// Repository root shown in the runtime line (when it exists).
    pub repo_root: Option<String>,
    /// A local copy of the OpenClaw documentation (absolute or `~/`): the prompt's
    /// Documentation section points there instead of the public site.
    pub docs_path: Option<String>,
    /// Do not create bootstrap files in new workspaces.
    pub skip_bootstrap: Option<bool>,
    /// Skip the optional templates (SOUL, USER, HEARTBEAT, IDENTITY) when seeding a workspace.
    pub skip_optional_bootstrap_files: Option<bool>,
    /// Per-file character budget for injected bootstrap files (default 20000).
    pub bootstrap_max_chars: Option<u64>,
    /// Total character budget for all injected bootstrap files (default 60000).
    pub bootstrap_total_max_chars: Option<u64>,
    /// When to show the bootstrap truncation notice (default always).
    pub bootstrap_prompt_truncation_warning: Option<TruncationWarning>,
    /// Whether bootstrap context is re-injected on continuation turns (default always).
    pub context_injection: Option<ContextInjection>,
    /// The user's IANA time zone; enables the date/time section.
    pub user_timezone: Option<String>,
    /// 12- or 24-hour clock for user-facing times (default auto).
    pub time_format: Option<TimeFormat>,
    /// Time zone of message envelopes: local, host, utc, gmt, user or an IANA name.
    pub envelope_timezone: Option<String>,
    /// Whether envelopes carry a timestamp.
    pub envelope_timestamp: Option<OnOff>,
    /// Whether envelopes carry the elapsed time since the previous message.
    pub envelope_elapsed: Option<OnOff>,
    /// The default model: a reference, or `{primary, fallbacks}`.
    pub model: Option<ModelSelection>,
    /// The model used for image input when the main one lacks vision.
    pub image_model: Option<ModelSelection>,
    /// Per-model settings keyed by `provider/model`; does not restrict which models run.
    pub models: Option<BTreeMap<String, ModelEntry>>,
    /// Which models may be selected.
    pub model_policy: Option<ModelPolicy>,
    /// Model-family prompt overlays.
    pub prompt_overlays: Option<PromptOverlays>,
    /// Periodic heartbeat turns.
    pub heartbeat: Option<HeartbeatConfig>,
    /// Sub-agent spawning and delegation.
    pub subagents: Option<SubagentsConfig>,
    /// Sandboxing of tool execution.
    pub sandbox: Option<SandboxConfig>,
    /// Send finished assistant blocks while the turn runs (default off).
    pub block_streaming_default: Option<OnOff>,
    /// Block boundary: end of each text block or end of the message (default text_end).
    pub block_streaming_break: Option<BlockStreamingBreak>,
    /// Soft chunking of streamed blocks (default 800-1200 chars, paragraph breaks).
    pub block_streaming_chunk: Option<BlockStreamingChunk>,
    /// Merging of small chunks on idle before sending.
    pub block_streaming_coalesce: Option<BlockStreamingCoalesce>,
    /// Pause between streamed blocks, to read like a person typing.
    pub human_delay: Option<HumanDelay>,
    /// Concurrent runs on the main lane (default 4).
    pub max_concurrent: Option<u64>,
    /// Transcript compaction.
    pub compaction: Option<CompactionConfig>,
    /// Skill allowlist for every agent; absent = all skills, `[]` = none.
    pub skills: Option<Vec<String>>,
    /// Default thinking level.
    pub thinking_default: Option<ThinkingLevel>,
    /// Default reasoning visibility.
    pub reasoning_default: Option<ReasoningLevel>,
    /// Context window to assume when the model catalog does not say.
    pub context_window: Option<u64>,
    /// Timeout of one agent run, in seconds.
    pub timeout_seconds: Option<u64>,
    /// How `memory_search` indexes and ranks the memory files.
    pub memory_search: Option<MemorySearchConfig>,
}

/// One entry of `agents.list`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentEntry {
    /// Agent id (letters, digits, `-`, `_`); used in session keys and state paths.
    pub id: String,
    /// Marks the default agent; the first entry wins when none or several are marked.
    pub default: Option<bool>,
    /// Display name.
    pub name: Option<String>,
    /// Workspace directory (default agent: agents.defaults.workspace; others: workspace-<id>).
    pub workspace: Option<String>,
    /// Agent state directory (auth profiles, model registry).
    pub agent_dir: Option<String>,
    /// This agent's model; the string form replaces only the primary.
    pub model: Option<ModelSelection>,
    /// Thinking level override.
    pub thinking_default: Option<ThinkingLevel>,
    /// Reasoning visibility override.
    pub reasoning_default: Option<ReasoningLevel>,
    /// Fast mode by default.
    pub fast_mode_default: Option<bool>,
    /// Model parameters for this agent's runs (provider-specific).
    pub params: Option<BTreeMap<String, Value>>,
    /// Skill allowlist; replaces agents.defaults.skills entirely, `[]` = none.
    pub skills: Option<Vec<String>>,
    /// Skill limits overriding skills.limits.
    pub skills_limits: Option<SkillsLimitsConfig>,
    /// Bootstrap re-injection override.
    pub context_injection: Option<ContextInjection>,
    /// Per-file bootstrap budget override.
    pub bootstrap_max_chars: Option<u64>,
    /// Total bootstrap budget override.
    pub bootstrap_total_max_chars: Option<u64>,
    /// How the agent presents itself.
    pub identity: Option<AgentIdentity>,
    /// Group chat behaviour.
    pub group_chat: Option<AgentGroupChat>,
    /// Sandbox override (merged key by key over agents.defaults.sandbox).
    pub sandbox: Option<SandboxConfig>,
    /// Sub-agent settings for this agent.
    pub subagents: Option<SubagentsConfig>,
    /// Tool policy for this agent.
    pub tools: Option<AgentTools>,
    /// Heartbeat for this agent (merged over agents.defaults.heartbeat); when any agent has
    /// one, only those agents run heartbeats.
    pub heartbeat: Option<HeartbeatConfig>,
    /// Which runtime runs this agent's turns.
    pub runtime: Option<RuntimeConfig>,
    /// This agent's hooks; each list replaces the top-level `hooks` list of the same name.
    pub hooks: Option<AgentHooksConfig>,
    /// This agent's memory search settings, key by key over `agents.defaults.memorySearch`.
    pub memory_search: Option<MemorySearchConfig>,
}

/// An entry of `agents.defaults.models`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelEntry {
    /// A short name usable wherever a model reference is (`/model opus`).
    pub alias: Option<String>,
    /// Provider-specific request parameters (temperature, maxTokens, ...).
    pub params: Option<BTreeMap<String, Value>>,
}

/// `agents.defaults.modelPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelPolicy {
    /// Allowed model references; `provider/*` globs allowed.
    pub allow: Option<Vec<String>>,
}

/// `agents.defaults.promptOverlays`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PromptOverlays {
    /// The GPT-5 family overlay.
    pub gpt5: Option<Gpt5Overlay>,
}

/// `agents.defaults.promptOverlays.gpt5`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Gpt5Overlay {
    /// Friendlier interaction style on top of the behaviour contract (default friendly).
    pub personality: Option<Gpt5Personality>,
}

/// Heartbeat settings (defaults or per agent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatConfig {
    /// Interval such as "30m" or "1h"; "0m" turns heartbeats off (default 30m).
    pub every: Option<String>,
    /// The heartbeat turn's prompt text.
    pub prompt: Option<String>,
    /// Whether HEARTBEAT.md and the heartbeat section reach the system prompt (default true).
    pub include_system_prompt_section: Option<bool>,
    /// Where heartbeat replies go: "last", "none" or a channel id.
    pub target: Option<String>,
    /// Model for heartbeat turns.
    pub model: Option<String>,
    /// Longest reply still treated as a plain acknowledgement.
    pub ack_max_chars: Option<u64>,
}

/// Sub-agent settings (defaults or per agent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubagentsConfig {
    /// "prefer" makes the main agent a coordinator that delegates (default suggest).
    pub delegation_mode: Option<DelegationMode>,
    /// Concurrent sub-agent runs (default 8).
    pub max_concurrent: Option<u64>,
    /// How deep sub-agents may spawn sub-agents.
    pub max_depth: Option<u64>,
    /// Agent ids this agent may spawn (`*` = any).
    pub allow_agents: Option<Vec<String>>,
    /// Require an explicit agent id when spawning.
    pub require_agent_id: Option<bool>,
    /// Model for sub-agent runs.
    pub model: Option<ModelSelection>,
}

/// Sandbox settings (defaults or per agent).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxConfig {
    /// Which sessions run sandboxed (default off).
    pub mode: Option<SandboxMode>,
    /// How sandboxes are shared (default agent).
    pub scope: Option<SandboxScope>,
    /// How the agent workspace is visible inside the sandbox (default none).
    pub workspace_access: Option<WorkspaceAccess>,
    /// Root of per-scope sandbox workspaces (default <stateDir>/sandboxes).
    pub workspace_root: Option<String>,
    /// Sandbox backend (default bubblewrap, the only one this runtime runs).
    pub backend: Option<SandboxBackend>,
    /// Whether sandboxed commands reach the network (default none).
    pub network: Option<SandboxNetwork>,
    /// Resource limits of every sandboxed process (each key defaults on its own).
    pub limits: Option<SandboxLimits>,
    /// The host uid (and gid) a root service's sandboxed commands run as (default 65532;
    /// never 0). A service that is not root runs them as itself and ignores it.
    #[schemars(range(min = 1, max = 4_294_967_294_u32))]
    pub uid: Option<u32>,
    /// Docker backend settings: opaque.
    pub docker: Option<Value>,
}

/// `agents.defaults.sandbox.limits`: resource limits of every process in a sandbox, which no
/// command can raise. 0 lifts a limit. An agent's keys override the defaults' one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxLimits {
    /// Processes and threads in one sandbox (default 512); a fork beyond it fails. A root
    /// service's sandboxes run as a non-root sandbox user, so it holds for them too.
    #[schemars(range(max = 4_194_304))]
    pub processes: Option<u64>,
    /// Address space of each process, in MiB (default 16384); a larger allocation fails.
    #[schemars(range(max = 1_073_741_824))]
    pub address_space_mb: Option<u64>,
    /// Largest file a process may write, in MiB (default 4096); a write beyond it fails.
    #[schemars(range(max = 1_073_741_824))]
    pub file_size_mb: Option<u64>,
    /// CPU time of each process, in seconds (default 3600); a process that uses more is
    /// killed.
    #[schemars(range(max = 1_073_741_824))]
    pub cpu_seconds: Option<u64>,
}

/// `agents.defaults.compaction`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactionConfig {
    /// Compaction strategy.
    pub mode: Option<CompactionMode>,
    /// Tokens kept free below the context window.
    pub reserve_tokens: Option<u64>,
    /// Lower bound of the reserve (default 20000).
    pub reserve_tokens_floor: Option<u64>,
    /// The silent memory-flush turn before compaction.
    pub memory_flush: Option<MemoryFlush>,
}

/// `agents.defaults.compaction.memoryFlush`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemoryFlush {
    /// Whether the flush turn runs.
    pub enabled: Option<bool>,
    /// Start flushing this many tokens before the compaction threshold (default 4000).
    pub soft_threshold_tokens: Option<u64>,
}

/// `agents.list[].identity`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentIdentity {
    /// Name the agent uses for itself.
    pub name: Option<String>,
    /// Persona theme.
    pub theme: Option<String>,
    /// Emoji used for acknowledgements.
    pub emoji: Option<String>,
    /// Avatar path or URL.
    pub avatar: Option<String>,
}

/// `agents.list[].groupChat`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentGroupChat {
    /// Regular expressions that count as mentioning the agent.
    pub mention_patterns: Option<Vec<String>>,
}

choice! {
    /// `bootstrapPromptTruncationWarning`.
    TruncationWarning {
        /// Never show the notice.
        Off = "off",
        /// Show each distinct truncation once per session.
        Once = "once",
        /// Show it on every turn.
        Always = "always",
    }
}

choice! {
    /// `contextInjection`.
    ContextInjection {
        /// Inject bootstrap context on every turn.
        Always = "always",
        /// Skip it on continuation turns after a full bootstrap turn.
        ContinuationSkip = "continuation-skip",
        /// Never inject it.
        Never = "never",
    }
}

choice! {
    /// `timeFormat`.
    TimeFormat {
        /// Detect from the host.
        Auto = "auto",
        /// 12-hour clock.
        H12 = "12",
        /// 24-hour clock.
        H24 = "24",
    }
}

choice! {
    /// `promptOverlays.gpt5.personality`.
    Gpt5Personality {
        /// Add the friendly interaction style.
        Friendly = "friendly",
        /// Same as friendly.
        On = "on",
        /// Behaviour contract only.
        Off = "off",
    }
}

choice! {
    /// `subagents.delegationMode`.
    DelegationMode {
        /// Mention delegation as an option.
        Suggest = "suggest",
        /// Make the main agent a coordinator that delegates non-trivial work.
        Prefer = "prefer",
    }
}

choice! {
    /// `sandbox.mode`.
    SandboxMode {
        /// No sandbox.
        Off = "off",
        /// Sandbox every session except the agent's main session.
        NonMain = "non-main",
        /// Sandbox every session.
        All = "all",
    }
}

choice! {
    /// `sandbox.scope`.
    SandboxScope {
        /// One sandbox per agent.
        Agent = "agent",
        /// One sandbox per session.
        Session = "session",
        /// One sandbox for everything.
        Shared = "shared",
    }
}

choice! {
    /// `sandbox.workspaceAccess`.
    WorkspaceAccess {
        /// The agent workspace is not mounted.
        None = "none",
        /// Mounted read-only (at its own path).
        Ro = "ro",
        /// Mounted read-write (at its own path).
        Rw = "rw",
    }
}

choice! {
    /// `sandbox.backend`.
    SandboxBackend {
        /// Linux namespaces with bubblewrap (`bwrap`): the backend this runtime runs.
        Bubblewrap = "bubblewrap",
        /// Docker containers.
        Docker = "docker",
        /// A remote host over SSH.
        Ssh = "ssh",
        /// OpenShell.
        Openshell = "openshell",
    }
}

choice! {
    /// `sandbox.network`.
    SandboxNetwork {
        /// No network at all (a private network namespace).
        None = "none",
        /// The host's network.
        Host = "host",
    }
}

choice! {
    /// `compaction.mode`.
    CompactionMode {
        /// Standard compaction.
        Default = "default",
        /// Summarise in chunks, keeping recent turns whole.
        Safeguard = "safeguard",
    }
}

choice! {
    /// Thinking levels.
    ThinkingLevel {
        /// No extended thinking.
        Off = "off",
        /// Minimal.
        Minimal = "minimal",
        /// Low.
        Low = "low",
        /// Medium.
        Medium = "medium",
        /// High.
        High = "high",
        /// Extra high.
        Xhigh = "xhigh",
        /// Chosen by the model.
        Adaptive = "adaptive",
    }
}

choice! {
    /// Reasoning visibility levels.
    ReasoningLevel {
        /// Hidden.
        Off = "off",
        /// Shown after the reply.
        On = "on",
        /// Streamed while generated.
        Stream = "stream",
    }
}

//! One agent's view: `agents.defaults` merged with its `agents.list[]` entry.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::settings::{BootstrapLimits, SkillsLimits};
use super::{Dirs, defaults};
use crate::duration::parse_duration;
use crate::error::ConfigError;
use crate::load::Config;
use crate::raw::{
    AgentEntry, AgentIdentity, CodexApprovalPolicy, CodexSandbox, ContextInjection, DelegationMode,
    ModelSelection, ReasoningLevel, RuntimeKind, SandboxBackend, SandboxConfig, SandboxLimits,
    SandboxMode, SandboxNetwork, SandboxScope, ThinkingLevel, ToolPolicyConfig, ToolProfile,
    WorkspaceAccess,
};

/// Everything the runtime needs to know about one agent, defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentView {
    /// The agent id as configured.
    pub id: String,
    /// Whether this is the default agent.
    pub is_default: bool,
    /// Display name.
    pub name: Option<String>,
    /// Self-presentation.
    pub identity: Option<AgentIdentity>,
    /// Group-chat mention patterns.
    pub mention_patterns: Vec<String>,
    /// The workspace: the only cwd for tools and context.
    pub workspace: PathBuf,
    /// Agent state directory (`<stateDir>/agents/<id>/agent` unless configured).
    pub agent_dir: PathBuf,
    /// Session transcripts directory, `<stateDir>/agents/<id>/sessions`.
    pub sessions_dir: PathBuf,
    /// Bootstrap budgets.
    pub bootstrap: BootstrapLimits,
    /// Bootstrap re-injection on continuation turns.
    pub context_injection: ContextInjection,
    /// Which skills this agent may use.
    pub skills: SkillAllowlist,
    /// Skill limits.
    pub skills_limits: SkillsLimits,
    /// Sub-agent delegation mode.
    pub delegation_mode: DelegationMode,
    /// Agent ids this agent may spawn.
    pub allow_agents: Vec<String>,
    /// Heartbeat settings.
    pub heartbeat: HeartbeatSettings,
    /// Sandbox settings.
    pub sandbox: SandboxSettings,
    /// Primary model reference, as written (resolve with [`Config::resolve_model`]).
    pub model: Option<String>,
    /// Fallback model references, as written.
    pub model_fallbacks: Vec<String>,
    /// Default thinking level.
    pub thinking_default: Option<ThinkingLevel>,
    /// Default reasoning visibility.
    pub reasoning_default: Option<ReasoningLevel>,
    /// Model parameters for this agent's runs.
    pub params: BTreeMap<String, Value>,
    /// Tool policy layers merged for this agent.
    pub tools: ToolPolicy,
    /// Which runtime runs the agent's turns.
    pub runtime: AgentRuntime,
}

/// The agent's skill allowlist (P-39): per-agent lists replace the default list entirely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillAllowlist {
    /// No allowlist: every available skill.
    All,
    /// Only these names; empty means no skills.
    Only(Vec<String>),
}

impl SkillAllowlist {
    /// Whether a skill name passes.
    pub fn allows(&self, skill: &str) -> bool {
        match self {
            SkillAllowlist::All => true,
            SkillAllowlist::Only(names) => names.iter().any(|n| n == skill),
        }
    }
}

/// Heartbeat settings for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatSettings {
    /// Whether this agent runs heartbeats: when any agent has a heartbeat block only those do,
    /// otherwise only the default agent; an interval of zero switches them off.
    pub enabled: bool,
    /// Interval.
    pub every: Duration,
    /// Heartbeat prompt text, if configured (the renderer owns the default wording).
    pub prompt: Option<String>,
    /// Whether the heartbeat section and HEARTBEAT.md reach the system prompt.
    pub include_system_prompt_section: bool,
    /// Delivery target.
    pub target: Option<String>,
    /// Model override for heartbeat turns.
    pub model: Option<String>,
    /// Longest reply still treated as an acknowledgement.
    pub ack_max_chars: Option<u64>,
}

/// Sandbox settings for one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSettings {
    /// Which sessions are sandboxed.
    pub mode: SandboxMode,
    /// How sandboxes are shared.
    pub scope: SandboxScope,
    /// How the agent workspace is mounted.
    pub workspace_access: WorkspaceAccess,
    /// Root of per-scope sandbox workspaces.
    pub workspace_root: PathBuf,
    /// Backend.
    pub backend: SandboxBackend,
    /// Network access of sandboxed commands.
    pub network: SandboxNetwork,
    /// Resource limits, merged key by key; an unset key takes the engine's default, 0 lifts
    /// the limit.
    pub limits: SandboxLimits,
    /// The host uid and gid of a root service's sandboxed commands; `None` is the engine's
    /// default.
    pub uid: Option<u32>,
    /// Docker settings, opaque.
    pub docker: Option<Value>,
}

/// Tool policy for one agent, layers merged: the agent's profile and allow list replace the
/// global ones; alsoAllow and deny lists add up (deny always wins when applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPolicy {
    /// Base profile; `None` = no restriction.
    pub profile: Option<ToolProfile>,
    /// Explicit allowlist, if any.
    pub allow: Option<Vec<String>>,
    /// Tools added to the profile.
    pub also_allow: Vec<String>,
    /// Tools removed.
    pub deny: Vec<String>,
    /// Policies by provider or `provider/model`, applied after the profile.
    pub by_provider: BTreeMap<String, ToolPolicyConfig>,
    /// Whether file tools are confined to the workspace.
    pub fs_workspace_only: bool,
    /// Whether elevated exec exists.
    pub elevated_enabled: bool,
}

/// The runtime that runs an agent's turns.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentRuntime {
    /// This system's own agent loop.
    Embedded,
    /// The Codex app-server harness.
    Codex(CodexSettings),
}

/// Codex harness settings with defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CodexSettings {
    /// Executable.
    pub command: String,
    /// CODEX_HOME, `~` expanded.
    pub codex_home: Option<PathBuf>,
    /// `-c key=value` overrides, in order.
    pub config_overrides: Vec<String>,
    /// Approval policy, when configured.
    pub approval_policy: Option<CodexApprovalPolicy>,
    /// Sandbox policy, when configured.
    pub sandbox: Option<CodexSandbox>,
    /// Inline `model_providers` entry.
    pub model_provider: Option<BTreeMap<String, Value>>,
}

impl Config {
    /// The configured agent ids in order, or `["main"]` without a list.
    pub fn agent_ids(&self) -> Vec<&str> {
        match self.agent_list() {
            [] => vec![defaults::AGENT_ID],
            list => list.iter().map(|a| a.id.as_str()).collect(),
        }
    }

    /// The default agent: the first entry marked `default: true`, else the first entry, else
    /// `main`.
    pub fn default_agent_id(&self) -> &str {
        let list = self.agent_list();
        list.iter()
            .find(|a| a.default == Some(true))
            .or_else(|| list.first())
            .map_or(defaults::AGENT_ID, |a| a.id.as_str())
    }

    /// One agent's merged view. Ids compare case-insensitively. Without `agents.list` the only
    /// agent is `main`.
    pub fn agent(&self, id: &str, dirs: &Dirs) -> Result<AgentView, ConfigError> {
        let entry = self.agent_entry(id);
        let known = entry.is_some()
            || (self.agent_list().is_empty() && id.eq_ignore_ascii_case(defaults::AGENT_ID));
        if !known {
            return Err(ConfigError::UnknownAgent(id.to_owned()));
        }
        let id = entry.map_or(defaults::AGENT_ID, |e| e.id.as_str());
        let d = self.agent_defaults();
        let is_default = id == self.default_agent_id();
        let state_agent = dirs.state_dir.join("agents").join(id);
        let workspace = match (entry.and_then(|e| e.workspace.as_deref()), is_default) {
            (Some(own), _) => dirs.expand(own),
            (None, true) => d
                .and_then(|d| d.workspace.as_deref())
                .map_or_else(|| dirs.state_dir.join("workspace"), |w| dirs.expand(w)),
            (None, false) => dirs.state_dir.join(format!("workspace-{id}")),
        };
        let skills = entry
            .and_then(|e| e.skills.clone())
            .or_else(|| d.and_then(|d| d.skills.clone()))
            .map_or(SkillAllowlist::All, SkillAllowlist::Only);
        let skills_defaults = self.raw.skills.as_ref().and_then(|s| s.limits.as_ref());
        let (model, model_fallbacks) = merged_model(
            entry.and_then(|e| e.model.as_ref()),
            d.and_then(|d| d.model.as_ref()),
        );
        Ok(AgentView {
            id: id.to_owned(),
            is_default,
            name: entry.and_then(|e| e.name.clone()),
            identity: entry.and_then(|e| e.identity.clone()),
            mention_patterns: entry
                .and_then(|e| e.group_chat.as_ref())
                .and_then(|g| g.mention_patterns.clone())
                .unwrap_or_default(),
            workspace,
            agent_dir: entry
                .and_then(|e| e.agent_dir.as_deref())
                .map_or_else(|| state_agent.join("agent"), |p| dirs.expand(p)),
            sessions_dir: state_agent.join("sessions"),
            bootstrap: BootstrapLimits::merged(
                [
                    entry.and_then(|e| e.bootstrap_max_chars),
                    d.and_then(|d| d.bootstrap_max_chars),
                ],
                [
                    entry.and_then(|e| e.bootstrap_total_max_chars),
                    d.and_then(|d| d.bootstrap_total_max_chars),
                ],
            ),
            context_injection: entry
                .and_then(|e| e.context_injection)
                .or_else(|| d.and_then(|d| d.context_injection))
                .unwrap_or(ContextInjection::Always),
            skills,
            skills_limits: SkillsLimits::merged(&[
                entry.and_then(|e| e.skills_limits.as_ref()),
                skills_defaults,
            ]),
            delegation_mode: self.delegation_mode(entry),
            allow_agents: entry
                .and_then(|e| e.subagents.as_ref())
                .and_then(|s| s.allow_agents.clone())
                .unwrap_or_default(),
            heartbeat: self.heartbeat(entry, is_default),
            sandbox: merged_sandbox(
                entry.and_then(|e| e.sandbox.as_ref()),
                d.and_then(|d| d.sandbox.as_ref()),
                dirs,
            ),
            model,
            model_fallbacks,
            thinking_default: entry
                .and_then(|e| e.thinking_default)
                .or_else(|| d.and_then(|d| d.thinking_default)),
            reasoning_default: entry
                .and_then(|e| e.reasoning_default)
                .or_else(|| d.and_then(|d| d.reasoning_default)),
            params: entry.and_then(|e| e.params.clone()).unwrap_or_default(),
            tools: self.tool_policy(entry),
            runtime: runtime(entry, dirs),
        })
    }

    pub(crate) fn agent_list(&self) -> &[AgentEntry] {
        self.raw
            .agents
            .as_ref()
            .and_then(|a| a.list.as_deref())
            .unwrap_or_default()
    }

    /// The list entry for `id`, compared case-insensitively.
    pub(crate) fn agent_entry(&self, id: &str) -> Option<&AgentEntry> {
        self.agent_list()
            .iter()
            .find(|a| a.id.eq_ignore_ascii_case(id))
    }

    /// An agent's exec settings as layers, most specific first: `agents.list[].tools.exec`,
    /// `tools.exec`, then the legacy `tools.bash`. Every exec setting is read key by key
    /// through these layers (the first layer that sets a key decides it).
    pub fn exec_layers(&self, agent_id: &str) -> Vec<&crate::raw::ExecConfig> {
        let tools = self.raw.tools.as_ref();
        [
            self.agent_entry(agent_id)
                .and_then(|e| e.tools.as_ref())
                .and_then(|t| t.exec.as_ref()),
            tools.and_then(|t| t.exec.as_ref()),
            tools.and_then(|t| t.bash.as_ref()),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Per agent, then defaults, then suggest (P-22).
    pub(crate) fn delegation_mode(&self, entry: Option<&AgentEntry>) -> DelegationMode {
        entry
            .and_then(|e| e.subagents.as_ref())
            .and_then(|s| s.delegation_mode)
            .or_else(|| {
                self.agent_defaults()
                    .and_then(|d| d.subagents.as_ref())
                    .and_then(|s| s.delegation_mode)
            })
            .unwrap_or(DelegationMode::Suggest)
    }

    fn heartbeat(&self, entry: Option<&AgentEntry>, is_default: bool) -> HeartbeatSettings {
        let own = entry.and_then(|e| e.heartbeat.as_ref());
        let base = self.agent_defaults().and_then(|d| d.heartbeat.as_ref());
        let layers = [own, base];
        // Validation already refused malformed intervals; the default covers the rest.
        let every = first_set(&layers, |h| h.every.as_ref())
            .and_then(|text| parse_duration(text).ok())
            .unwrap_or(defaults::HEARTBEAT_EVERY);
        let any_agent_has_one = self.agent_list().iter().any(|a| a.heartbeat.is_some());
        let selected = if any_agent_has_one {
            own.is_some()
        } else {
            is_default
        };
        HeartbeatSettings {
            enabled: selected && !every.is_zero(),
            every,
            prompt: first_set(&layers, |h| h.prompt.clone()),
            include_system_prompt_section: first_set(&layers, |h| h.include_system_prompt_section)
                .unwrap_or(true),
            target: first_set(&layers, |h| h.target.clone()),
            model: first_set(&layers, |h| h.model.clone()),
            ack_max_chars: first_set(&layers, |h| h.ack_max_chars),
        }
    }

    fn tool_policy(&self, entry: Option<&AgentEntry>) -> ToolPolicy {
        let global = self.raw.tools.as_ref();
        let own = entry.and_then(|e| e.tools.as_ref());
        let joined = |a: Option<&Vec<String>>, b: Option<&Vec<String>>| {
            let mut all: Vec<String> = Vec::new();
            for name in a.into_iter().chain(b).flatten() {
                if !all.contains(name) {
                    all.push(name.clone());
                }
            }
            all
        };
        ToolPolicy {
            profile: own
                .and_then(|t| t.profile)
                .or_else(|| global.and_then(|g| g.profile)),
            allow: own
                .and_then(|t| t.allow.clone())
                .or_else(|| global.and_then(|g| g.allow.clone())),
            also_allow: joined(
                global.and_then(|g| g.also_allow.as_ref()),
                own.and_then(|t| t.also_allow.as_ref()),
            ),
            deny: joined(
                global.and_then(|g| g.deny.as_ref()),
                own.and_then(|t| t.deny.as_ref()),
            ),
            by_provider: global
                .and_then(|g| g.by_provider.clone())
                .unwrap_or_default(),
            fs_workspace_only: own
                .and_then(|t| t.fs.as_ref())
                .and_then(|f| f.workspace_only)
                .or_else(|| {
                    global
                        .and_then(|g| g.fs.as_ref())
                        .and_then(|f| f.workspace_only)
                })
                .unwrap_or(false),
            elevated_enabled: own
                .and_then(|t| t.elevated.as_ref())
                .and_then(|e| e.enabled)
                .or_else(|| {
                    global
                        .and_then(|g| g.elevated.as_ref())
                        .and_then(|e| e.enabled)
                })
                .unwrap_or(false),
        }
    }
}

/// The agent's string form replaces only the primary (keeping default fallbacks); its object
/// form replaces both (`fallbacks: []` disables inherited ones).
fn merged_model(
    own: Option<&ModelSelection>,
    base: Option<&ModelSelection>,
) -> (Option<String>, Vec<String>) {
    let primary = own
        .and_then(ModelSelection::primary)
        .or_else(|| base.and_then(ModelSelection::primary))
        .map(str::to_owned);
    let fallbacks = own
        .and_then(ModelSelection::fallbacks)
        .or_else(|| base.and_then(ModelSelection::fallbacks))
        .map(<[String]>::to_vec)
        .unwrap_or_default();
    (primary, fallbacks)
}

/// The value of the first of `layers` (the agent's own, then the defaults') that sets it.
fn first_set<'a, C, T>(layers: &[Option<&'a C>], choose: impl Fn(&'a C) -> Option<T>) -> Option<T> {
    layers.iter().flatten().find_map(|s| choose(s))
}

/// Key-by-key merge of the agent's sandbox over the defaults.
fn merged_sandbox(
    own: Option<&SandboxConfig>,
    base: Option<&SandboxConfig>,
    dirs: &Dirs,
) -> SandboxSettings {
    let layers = [own, base];
    SandboxSettings {
        mode: first_set(&layers, |s| s.mode).unwrap_or(SandboxMode::Off),
        scope: first_set(&layers, |s| s.scope).unwrap_or(SandboxScope::Agent),
        workspace_access: first_set(&layers, |s| s.workspace_access)
            .unwrap_or(WorkspaceAccess::None),
        workspace_root: first_set(&layers, |s| s.workspace_root.as_ref()).map_or_else(
            || dirs.state_dir.join(defaults::SANDBOXES_DIR),
            |root| dirs.expand(root),
        ),
        backend: first_set(&layers, |s| s.backend).unwrap_or(SandboxBackend::Bubblewrap),
        network: first_set(&layers, |s| s.network).unwrap_or(SandboxNetwork::None),
        limits: merged_limits(layers.iter().flatten().filter_map(|s| s.limits.as_ref())),
        uid: first_set(&layers, |s| s.uid),
        docker: first_set(&layers, |s| s.docker.clone()),
    }
}

/// The first layer's value of each limit key (layers come most specific first).
fn merged_limits<'a>(layers: impl Iterator<Item = &'a SandboxLimits> + Clone) -> SandboxLimits {
    let first = |key: fn(&SandboxLimits) -> Option<u64>| layers.clone().find_map(key);
    SandboxLimits {
        processes: first(|l| l.processes),
        address_space_mb: first(|l| l.address_space_mb),
        file_size_mb: first(|l| l.file_size_mb),
        cpu_seconds: first(|l| l.cpu_seconds),
    }
}

fn runtime(entry: Option<&AgentEntry>, dirs: &Dirs) -> AgentRuntime {
    let Some(runtime) = entry.and_then(|e| e.runtime.as_ref()) else {
        return AgentRuntime::Embedded;
    };
    match runtime.kind {
        RuntimeKind::Embedded => AgentRuntime::Embedded,
        RuntimeKind::Codex => {
            let codex = runtime.codex.clone().unwrap_or_default();
            AgentRuntime::Codex(CodexSettings {
                command: codex
                    .command
                    .unwrap_or_else(|| defaults::CODEX_COMMAND.to_owned()),
                codex_home: codex.codex_home.as_deref().map(|p| dirs.expand(p)),
                config_overrides: codex.config_overrides.unwrap_or_default(),
                approval_policy: codex.approval_policy,
                sandbox: codex.sandbox,
                model_provider: codex.model_provider,
            })
        }
    }
}

//! `tools` and the per-agent `agents.list[].tools`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// `tools`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsConfig {
    /// Base allowlist (default: no restriction).
    pub profile: Option<ToolProfile>,
    /// Tools allowed (replaces the profile's list); `*` wildcards and `group:*` names.
    pub allow: Option<Vec<String>>,
    /// Tools added on top of the profile.
    pub also_allow: Option<Vec<String>>,
    /// Tools removed; deny always wins.
    pub deny: Option<Vec<String>>,
    /// Policies by provider id or `provider/model`.
    pub by_provider: Option<BTreeMap<String, ToolPolicyConfig>>,
    /// File tool settings.
    pub fs: Option<FsTools>,
    /// Exec tool settings.
    pub exec: Option<ExecConfig>,
    /// Legacy alias of `exec` (same shape); normalised onto `exec`.
    pub bash: Option<ExecConfig>,
    /// Experimental tools.
    pub experimental: Option<ExperimentalTools>,
    /// Elevated (host) exec.
    pub elevated: Option<ElevatedTools>,
    /// Tool policy inside sandboxes.
    pub sandbox: Option<SandboxTools>,
    /// Web search and fetch settings: opaque.
    pub web: Option<Value>,
    /// Media understanding settings: opaque.
    pub media: Option<Value>,
}

/// A tool policy layer (by provider, or inside sandboxes).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolPolicyConfig {
    /// Base allowlist.
    pub profile: Option<ToolProfile>,
    /// Tools allowed.
    pub allow: Option<Vec<String>>,
    /// Tools added on top of the profile.
    pub also_allow: Option<Vec<String>>,
    /// Tools removed.
    pub deny: Option<Vec<String>>,
}

/// `agents.list[].tools`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentTools {
    /// Base allowlist for this agent.
    pub profile: Option<ToolProfile>,
    /// Tools allowed for this agent (replaces tools.allow).
    pub allow: Option<Vec<String>>,
    /// Tools added for this agent.
    pub also_allow: Option<Vec<String>>,
    /// Tools removed for this agent (added to tools.deny).
    pub deny: Option<Vec<String>>,
    /// File tool settings for this agent.
    pub fs: Option<FsTools>,
    /// Elevated exec for this agent.
    pub elevated: Option<ElevatedTools>,
    /// Exec settings for this agent, merged key by key over `tools.exec`.
    pub exec: Option<ExecConfig>,
}

/// `tools.fs`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FsTools {
    /// Confine file tools to the workspace.
    pub workspace_only: Option<bool>,
}

/// `tools.exec` (and the legacy `tools.bash`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecConfig {
    /// When to ask for approval. Never changeable by the agent.
    pub ask: Option<ExecAsk>,
    /// What to do when approval cannot be asked.
    pub ask_fallback: Option<ExecSecurity>,
    /// What exec may run. Never changeable by the agent.
    pub security: Option<ExecSecurity>,
    /// Where commands run.
    pub host: Option<ExecHost>,
    /// Command timeout in seconds.
    pub timeout_sec: Option<u64>,
    /// Move a command to the background after this many milliseconds.
    pub background_ms: Option<u64>,
    /// Wake the agent when a background command exits.
    pub notify_on_exit: Option<bool>,
    /// Stdin-only stream filters that run in allowlist mode without an allowlist entry, by
    /// name (default `cut`, `uniq`, `head`, `tail`, `tr`, `wc`); a list replaces the default.
    pub safe_bins: Option<Vec<String>>,
    /// How long a command waits for a person's approval before `askFallback` decides, in
    /// seconds (default 120).
    pub approval_timeout_sec: Option<u64>,
    /// Argument profiles of safe bins by name; a safe bin without a built-in profile needs
    /// one here.
    pub safe_bin_profiles: Option<BTreeMap<String, SafeBinProfile>>,
    /// Allowlist entries kept in the config, next to those of the approvals file: globs over
    /// resolved absolute executable paths (`/usr/bin/git`, `/opt/tools/**`).
    pub allowlist: Option<Vec<String>>,
    /// Directories prepended to PATH.
    pub path_prepend: Option<Vec<String>>,
    /// The apply_patch tool.
    pub apply_patch: Option<ApplyPatchConfig>,
}

/// `tools.exec.safeBinProfiles.<bin>`: the argv shapes a safe bin accepts. Anything not listed
/// is refused: unknown flags, abbreviated long options, path-like operands.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SafeBinProfile {
    /// Fewest operands (default 0).
    pub min_positional: Option<u32>,
    /// Most operands (default 0: the program reads standard input only).
    pub max_positional: Option<u32>,
    /// Flags without a value (`-c`, `--count`).
    pub allowed_flags: Option<Vec<String>>,
    /// Flags that take a value, attached or as the next word (`-n`, `--lines`).
    pub allowed_value_flags: Option<Vec<String>>,
    /// Flags refused even when listed above.
    pub denied_flags: Option<Vec<String>>,
}

/// `tools.exec.applyPatch`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApplyPatchConfig {
    /// Offer apply_patch (default true).
    pub enabled: Option<bool>,
    /// Refuse paths outside the workspace (default true).
    pub workspace_only: Option<bool>,
    /// Models that get the tool (`gpt-5.4` or `openai/gpt-5.4`); empty = any.
    pub allow_models: Option<Vec<String>>,
}

/// `tools.experimental`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExperimentalTools {
    /// The structured plan tool.
    pub plan_tool: Option<bool>,
}

/// `tools.elevated`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ElevatedTools {
    /// Whether elevated exec exists.
    pub enabled: Option<bool>,
    /// Senders allowed to use it, by channel id.
    pub allow_from: Option<BTreeMap<String, Vec<String>>>,
}

/// `tools.sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxTools {
    /// Tool policy applied inside sandboxes.
    pub tools: Option<ToolPolicyConfig>,
}

choice! {
    /// `tools.profile`.
    ToolProfile {
        /// Status only.
        Minimal = "minimal",
        /// Files, runtime, sessions, memory.
        Coding = "coding",
        /// Messaging and sessions.
        Messaging = "messaging",
        /// Everything.
        Full = "full",
    }
}

choice! {
    /// `tools.exec.ask`.
    ExecAsk {
        /// Never ask.
        Off = "off",
        /// Ask when the allowlist does not cover the command.
        OnMiss = "on-miss",
        /// Always ask.
        Always = "always",
    }
}

choice! {
    /// `tools.exec.security` and `askFallback`.
    ExecSecurity {
        /// Run nothing.
        Deny = "deny",
        /// Run allowlisted commands only.
        Allowlist = "allowlist",
        /// Run anything.
        Full = "full",
    }
}

choice! {
    /// `tools.exec.host`.
    ExecHost {
        /// Inside the sandbox.
        Sandbox = "sandbox",
        /// On the gateway host.
        Gateway = "gateway",
        /// On a paired node.
        Node = "node",
    }
}

//! `hooks` and `agents.list[].hooks`: the bootstrap-file and prompt-build hooks (P-6, P-36).
//!
//! Each entry is one flat object; which keys it holds decides its form (a declarative rule or
//! an external command). The schema lists the keys; the cross-key rules (exactly one form,
//! workspace-relative paths, a non-empty argv) are in `checks`, so every error names its key.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// `hooks`: the hooks every agent runs, plus OpenClaw's webhook and internal-hook settings,
/// which are accepted as opaque JSON and not interpreted here.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HooksConfig {
    /// Changes to the injected bootstrap files, applied in order (the `agent:bootstrap` step).
    pub bootstrap: Option<Vec<BootstrapHookEntry>>,
    /// Text added to every prompt, applied in order (the legacy `before_prompt_build` step).
    pub before_prompt_build: Option<Vec<PromptBuildHookEntry>>,
    /// Webhook endpoint switch: opaque.
    pub enabled: Option<Value>,
    /// Webhook path: opaque.
    pub path: Option<Value>,
    /// Webhook token: opaque.
    pub token: Option<Value>,
    /// Webhook body limit: opaque.
    pub max_body_bytes: Option<Value>,
    /// Webhook presets: opaque.
    pub presets: Option<Value>,
    /// Webhook transforms directory: opaque.
    pub transforms_dir: Option<Value>,
    /// Webhook mappings: opaque.
    pub mappings: Option<Value>,
    /// Gmail watch settings: opaque.
    pub gmail: Option<Value>,
    /// OpenClaw's JavaScript internal hooks: opaque (this runtime hosts no JavaScript).
    pub internal: Option<Value>,
    /// Webhook default session key: opaque.
    pub default_session_key: Option<Value>,
    /// Webhook session-key override switch: opaque.
    pub allow_request_session_key: Option<Value>,
    /// Webhook session-key prefixes: opaque.
    pub allowed_session_key_prefixes: Option<Value>,
    /// Webhook agent allowlist: opaque.
    pub allowed_agent_ids: Option<Value>,
}

/// `agents.list[].hooks`: one agent's hooks. A list given here replaces the top-level list of
/// the same name for this agent (`[]` turns the shared hooks off).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentHooksConfig {
    /// This agent's bootstrap-file hooks.
    pub bootstrap: Option<Vec<BootstrapHookEntry>>,
    /// This agent's prompt-build hooks.
    pub before_prompt_build: Option<Vec<PromptBuildHookEntry>>,
}

/// One `hooks.bootstrap` entry: exactly one of `replace` (with `with`), `drop`, `add` (with
/// `from`) or `command`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BootstrapHookEntry {
    /// The injected file whose content is replaced (`SOUL.md`).
    pub replace: Option<String>,
    /// The workspace file whose content takes its place.
    pub with: Option<String>,
    /// The injected file left out.
    pub drop: Option<String>,
    /// The name a new injected file is shown under.
    pub add: Option<String>,
    /// The workspace file the new file's content is read from.
    pub from: Option<String>,
    /// An external command (argv, no shell) that receives the files as JSON on stdin and
    /// prints the new set.
    pub command: Option<Vec<String>>,
    /// How long the command may take, in milliseconds (default 5000).
    pub timeout_ms: Option<u64>,
    /// What a failed command does (default fail).
    pub on_error: Option<HookOnError>,
}

/// One `hooks.beforePromptBuild` entry: exactly one of `text`, `from` or `command`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PromptBuildHookEntry {
    /// Text added to the prompt.
    pub text: Option<String>,
    /// A workspace file whose content is added to the prompt.
    pub from: Option<String>,
    /// Where `text` or `from` goes (default dynamic, below the cache boundary).
    pub placement: Option<HookPlacement>,
    /// An external command (argv, no shell) that receives the session facts as JSON on stdin
    /// and prints the additions.
    pub command: Option<Vec<String>>,
    /// How long the command may take, in milliseconds (default 5000).
    pub timeout_ms: Option<u64>,
    /// What a failed command does (default fail).
    pub on_error: Option<HookOnError>,
}

choice! {
    /// What a failed hook command does.
    HookOnError {
        /// The turn fails with an error naming the hook.
        Fail = "fail",
        /// The hook is left out (the files or prompt stay as they were) and a warning is logged.
        Skip = "skip",
    }
}

choice! {
    /// Where a prompt-build addition goes.
    HookPlacement {
        /// Below the cache boundary, with the per-turn sections.
        Dynamic = "dynamic",
        /// Above the cache boundary, in the stable prefix.
        Stable = "stable",
    }
}

//! The typed shape of `openclaw.json`, exactly as written: every key optional unless OpenClaw
//! requires it, no defaults filled in (defaults live in [`crate::resolve`]). Unknown keys are
//! errors everywhere except where OpenClaw itself is open (plugin config, skill config and env,
//! model params, `gateway`, `bindings`, channel `extra`) and in top-level sections this system
//! does not interpret, which are accepted as opaque JSON so that real configs load.
//!
//! These types derive both `Deserialize` and `JsonSchema`; the generated schema is what
//! validation runs against, so the two can never disagree about a key.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Defines a closed set of string values with their wire spellings and an `as_str`.
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $wire:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Deserialize, serde::Serialize, schemars::JsonSchema,
        )]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $wire)] $variant, )+
        }

        impl $name {
            /// The value as written in openclaw.json.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $wire, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

mod agents;
mod hooks;
mod memory_search;
mod messages;
mod models;
mod runtime;
mod skills;
mod streaming;
mod tools;

pub use agents::*;
pub use hooks::*;
pub use memory_search::*;
pub use messages::*;
pub use models::*;
pub use runtime::*;
pub use skills::*;
pub use streaming::*;
pub use tools::*;

/// The whole of `openclaw.json`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "openclaw.json")]
pub struct RawConfig {
    /// JSON Schema reference for editors; ignored.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// Agents: shared defaults and the per-agent list.
    pub agents: Option<AgentsConfig>,
    /// Skill loading, gating and prompt limits.
    pub skills: Option<SkillsConfig>,
    /// Tool policy and tool settings.
    pub tools: Option<ToolsConfig>,
    /// Inbound queueing, TTS and group-chat reply settings.
    pub messages: Option<MessagesConfig>,
    /// Channel settings by channel id (`telegram`, `discord`, `whatsapp`, ...).
    pub channels: Option<BTreeMap<String, ChannelConfig>>,
    /// Session keys, resets, maintenance and locking.
    pub session: Option<SessionConfig>,
    /// Chat command settings, including how owners are shown in the prompt.
    pub commands: Option<CommandsConfig>,
    /// Memory settings.
    pub memory: Option<MemoryConfig>,
    /// Model providers and their catalogs.
    pub models: Option<ModelsConfig>,
    /// Plugin enablement and per-plugin config.
    pub plugins: Option<PluginsConfig>,
    /// Gateway settings (bind, auth, control UI): accepted as opaque JSON; not interpreted here.
    pub gateway: Option<Value>,
    /// Routing rules `{agentId, match{...}}`: accepted as opaque JSON; not interpreted here.
    pub bindings: Option<Vec<Value>>,
    /// OpenClaw bookkeeping (last touched version/time): opaque.
    pub meta: Option<Value>,
    /// Inline environment variables for the gateway process: opaque.
    pub env: Option<Value>,
    /// Onboarding wizard state: opaque.
    pub wizard: Option<Value>,
    /// Auth profiles: opaque.
    pub auth: Option<Value>,
    /// Secret providers: opaque.
    pub secrets: Option<Value>,
    /// Logging settings: opaque.
    pub logging: Option<Value>,
    /// Diagnostics settings: opaque.
    pub diagnostics: Option<Value>,
    /// Update channel settings: opaque.
    pub update: Option<Value>,
    /// Browser tool settings: opaque.
    pub browser: Option<Value>,
    /// Control UI settings: opaque.
    pub ui: Option<Value>,
    /// ACP settings: opaque.
    pub acp: Option<Value>,
    /// Node host settings: opaque.
    pub node_host: Option<Value>,
    /// Broadcast settings: opaque.
    pub broadcast: Option<Value>,
    /// Audio settings: opaque.
    pub audio: Option<Value>,
    /// Media settings: opaque.
    pub media: Option<Value>,
    /// Exec approval forwarding: opaque.
    pub approvals: Option<Value>,
    /// Cron scheduler settings: opaque.
    pub cron: Option<Value>,
    /// Bootstrap-file and prompt-build hooks for every agent; OpenClaw's webhook settings
    /// beside them are opaque.
    pub hooks: Option<HooksConfig>,
    /// Web (WhatsApp web) settings: opaque.
    pub web: Option<Value>,
    /// Discovery (mDNS, wide-area) settings: opaque.
    pub discovery: Option<Value>,
    /// Canvas host settings: opaque.
    pub canvas_host: Option<Value>,
    /// Talk mode settings: opaque.
    pub talk: Option<Value>,
    /// MCP server settings: opaque.
    pub mcp: Option<Value>,
}

/// A model choice: a reference string, or a primary with ordered fallbacks.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ModelSelection {
    /// `"provider/model"` or an alias.
    Reference(String),
    /// `{primary, fallbacks}`.
    Detailed(ModelSelectionDetail),
}

impl ModelSelection {
    /// The primary reference, if one is set.
    pub fn primary(&self) -> Option<&str> {
        match self {
            ModelSelection::Reference(reference) => Some(reference),
            ModelSelection::Detailed(detail) => detail.primary.as_deref(),
        }
    }

    /// The fallbacks written here; `None` for the string form, which sets only the primary.
    pub fn fallbacks(&self) -> Option<&[String]> {
        match self {
            ModelSelection::Reference(_) => None,
            ModelSelection::Detailed(detail) => detail.fallbacks.as_deref(),
        }
    }
}

/// The object form of a model choice.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelSelectionDetail {
    /// The model tried first.
    pub primary: Option<String>,
    /// Models tried in order when the primary fails; `[]` disables inherited fallbacks.
    pub fallbacks: Option<Vec<String>>,
}

/// A secret: a literal string (often a `${VAR}` reference) or a reference resolved at runtime.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SecretInput {
    /// The secret itself, usually written as `${ENV_VAR}`.
    Plain(String),
    /// Where to fetch the secret from.
    Ref(SecretRef),
}

/// A reference to a secret held elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecretRef {
    /// Kind of store.
    pub source: SecretSource,
    /// Named secret provider (`default` when absent).
    pub provider: Option<String>,
    /// Env var name, JSON pointer into a secrets file, or exec lookup key.
    pub id: String,
}

choice! {
    /// Where a [`SecretRef`] points.
    SecretSource {
        /// An environment variable.
        Env = "env",
        /// A secrets file.
        File = "file",
        /// A command that prints the secret.
        Exec = "exec",
    }
}

choice! {
    /// A plain on/off switch.
    OnOff {
        /// Enabled.
        On = "on",
        /// Disabled.
        Off = "off",
    }
}

//! `models` (providers and their catalogs) and `plugins`.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::SecretInput;

/// `models`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelsConfig {
    /// Merge these providers into the built-in catalog, or replace it.
    pub mode: Option<ModelsMode>,
    /// Providers by id, in file order (the first one is the last-resort default).
    pub providers: Option<IndexMap<String, ProviderConfig>>,
}

/// `models.providers.<id>`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderConfig {
    /// API base URL (required except for the scripted provider).
    pub base_url: Option<String>,
    /// API key, usually `${ENV_VAR}`.
    pub api_key: Option<SecretInput>,
    /// Absolute path of a file holding the API key (its first non-empty line), instead of
    /// `apiKey`: the key then need not be in the environment or the config.
    pub api_key_file: Option<String>,
    /// Wire format spoken to the provider.
    pub api: ProviderApi,
    /// Extra HTTP headers.
    pub headers: Option<BTreeMap<String, String>>,
    /// Models this provider exposes.
    pub models: Option<Vec<ProviderModel>>,
    /// Script file driving the offline scripted model (api "scripted").
    pub script: Option<String>,
    /// How long each step of an HTTP call may take before the attempt fails.
    pub timeouts: Option<ProviderTimeouts>,
}

/// `models.providers.<id>.timeouts`, in seconds (fractions allowed, from 0.001 to 86,400). A step
/// that takes longer fails the attempt as a connection failure, which is retried within the
/// run's `timeoutSeconds`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderTimeouts {
    /// Connecting, TCP and TLS (default 10).
    #[schemars(range(min = 0.001, max = 86_400))]
    pub connect_seconds: Option<f64>,
    /// From sending the request to the response headers (default 60).
    #[schemars(range(min = 0.001, max = 86_400))]
    pub first_byte_seconds: Option<f64>,
    /// Silence between two chunks of the streamed reply (default 60).
    #[schemars(range(min = 0.001, max = 86_400))]
    pub idle_seconds: Option<f64>,
}

/// `models.providers.<id>.models[]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderModel {
    /// The provider's model id.
    pub id: String,
    /// Display name.
    pub name: Option<String>,
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Output token limit, sent as the request's output cap (Anthropic's `max_tokens`,
    /// Responses' `max_output_tokens`, Chat Completions' `max_completion_tokens` at OpenAI, `max_tokens` elsewhere). Without it
    /// Anthropic gets 32,000 and the OpenAI formats send none.
    pub max_tokens: Option<u64>,
    /// Whether the model reasons. `false` keeps the thinking level's settings (Anthropic
    /// `thinking`, `reasoning`, `reasoning_effort`) out of its requests, for models that refuse
    /// them.
    pub reasoning: Option<bool>,
    /// Accepted input kinds.
    pub input: Option<Vec<ModelInput>>,
    /// Price per million tokens.
    pub cost: Option<ModelCost>,
}

/// `models.providers.<id>.models[].cost`, per million tokens.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelCost {
    /// Input tokens.
    pub input: Option<f64>,
    /// Output tokens.
    pub output: Option<f64>,
    /// Cached input tokens read.
    pub cache_read: Option<f64>,
    /// Cached input tokens written.
    pub cache_write: Option<f64>,
}

/// `plugins`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginsConfig {
    /// Master switch for plugins.
    pub enabled: Option<bool>,
    /// Plugins allowed to load.
    pub allow: Option<Vec<String>>,
    /// Plugins never loaded.
    pub deny: Option<Vec<String>>,
    /// Where plugins are loaded from.
    pub load: Option<PluginsLoad>,
    /// Exclusive slots (e.g. memory) and the plugin filling each.
    pub slots: Option<BTreeMap<String, String>>,
    /// Per-plugin settings by plugin id.
    pub entries: Option<BTreeMap<String, PluginEntry>>,
}

/// `plugins.load`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginsLoad {
    /// Extra plugin paths.
    pub paths: Option<Vec<String>>,
}

/// `plugins.entries.<id>`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginEntry {
    /// Turn the plugin on or off (default on).
    pub enabled: Option<bool>,
    /// The plugin's skills folder: an absolute path or one starting with `~/`. Its skills are
    /// offered only while the plugin is enabled, and each agent's allowlist still applies.
    pub skills: Option<String>,
    /// Plugin-defined settings: opaque.
    pub config: Option<Value>,
}

choice! {
    /// `models.mode`.
    ModelsMode {
        /// Add to the built-in catalog.
        Merge = "merge",
        /// Use only these providers.
        Replace = "replace",
    }
}

choice! {
    /// `models.providers.<id>.api`.
    ProviderApi {
        /// OpenAI Responses API.
        OpenaiResponses = "openai-responses",
        /// OpenAI Chat Completions API.
        OpenaiCompletions = "openai-completions",
        /// Anthropic Messages API.
        AnthropicMessages = "anthropic-messages",
        /// The offline scripted model (tests and demos).
        Scripted = "scripted",
    }
}

choice! {
    /// `models.providers.<id>.models[].input`.
    ModelInput {
        /// Text.
        Text = "text",
        /// Images.
        Image = "image",
    }
}

//! Every configured provider by id, and model references resolved to a provider and the model
//! id it expects on the wire (R-13, L14).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use openclaw_config::model_ref::normalize_provider;
use openclaw_config::raw::{ProviderApi, ProviderConfig};
use openclaw_config::{Config, EnvSource, ModelCatalog, ModelRef};
use openclaw_transcript::Clock;

use crate::anthropic::AnthropicMessages;
use crate::chat_completions::ChatCompletions;
use crate::credentials::resolve_provider_key;
use crate::error::ProviderError;
use crate::openai_responses::OpenAiResponses;
use crate::provider::ModelProvider;
use crate::scripted::ScriptedProvider;
use crate::timeouts::HttpSettings;
use crate::transport::{Endpoint, HttpClient};

/// What building providers from config needs besides the config itself.
pub struct RegistryContext<'a> {
    /// Environment for `{source: "env"}` API keys and the `<ID>_API_KEY` fallback.
    pub env: &'a dyn EnvSource,
    /// Directory that relative `script` paths are relative to (the config file's).
    pub base_dir: &'a Path,
    /// Where reply timestamps come from.
    pub clock: Arc<dyn Clock>,
    /// HTTP timeouts of providers that set none (`models.providers.<id>.timeouts` overrides
    /// each one).
    pub http: HttpSettings,
}

/// How a provider turns the model part of a reference into its wire model id (L14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireIdRule {
    /// The model id is sent as written: `ollama/qwen3:8b` sends `qwen3:8b`,
    /// `anthropic/claude-sonnet-4@20250514` sends `claude-sonnet-4@20250514`.
    Verbatim,
    /// A catalog whose ids are all `vendor/model` (OpenRouter, NVIDIA): an id that already has
    /// a vendor is sent as written (`openrouter/moonshotai/kimi-k2` sends `moonshotai/kimi-k2`),
    /// a bare id is the provider's own and gets its namespace back (`openrouter/auto` sends
    /// `openrouter/auto`, `nvidia/nemotron` sends `nvidia/nemotron`). Never twice.
    Namespaced {
        /// The catalog's own namespace, e.g. `openrouter`.
        namespace: String,
    },
}

impl WireIdRule {
    /// The rule for provider `id`: OpenRouter and NVIDIA (by id or by base URL host) are
    /// namespaced, everything else verbatim.
    pub fn for_provider(id: &str, base_url: Option<&str>) -> Self {
        let host = base_url.unwrap_or_default().to_ascii_lowercase();
        let namespace = if id == "openrouter" || host.contains("openrouter.ai") {
            Some("openrouter")
        } else if id == "nvidia" || host.contains("api.nvidia.com") {
            Some("nvidia")
        } else {
            None
        };
        match namespace {
            Some(namespace) => Self::Namespaced {
                namespace: namespace.to_owned(),
            },
            None => Self::Verbatim,
        }
    }

    /// The wire model id for the model part of a reference.
    pub fn wire_id(&self, model: &str) -> String {
        match self {
            Self::Namespaced { namespace } if !model.contains('/') => {
                format!("{namespace}/{model}")
            }
            Self::Verbatim | Self::Namespaced { .. } => model.to_owned(),
        }
    }
}

/// A model reference resolved to its provider.
#[derive(Clone)]
pub struct ResolvedModel {
    /// The provider that serves it.
    pub provider: Arc<dyn ModelProvider>,
    /// The parsed reference (`provider/model[@profile]`).
    pub reference: ModelRef,
    /// What goes in the request's `model` field ([`crate::ModelRequest::model`]).
    pub wire_model: String,
}

impl std::fmt::Debug for ResolvedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedModel")
            .field("provider", &self.provider.id())
            .field("reference", &self.reference)
            .field("wire_model", &self.wire_model)
            .finish()
    }
}

#[derive(Clone)]
struct Entry {
    provider: Arc<dyn ModelProvider>,
    rule: WireIdRule,
}

/// Providers by (lowercase) id, with the catalog that resolves model references.
#[derive(Clone, Default)]
pub struct ProviderRegistry {
    entries: BTreeMap<String, Entry>,
    catalog: ModelCatalog,
}

impl std::fmt::Debug for ProviderRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderRegistry")
            .field("providers", &self.entries.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ProviderRegistry {
    /// An empty registry resolving references with `catalog`.
    pub fn new(catalog: ModelCatalog) -> Self {
        Self {
            entries: BTreeMap::new(),
            catalog,
        }
    }

    /// Builds every provider in `models.providers`, reporting every broken one at once.
    pub fn from_config(
        config: &Config,
        context: &RegistryContext<'_>,
    ) -> Result<Self, ProviderError> {
        let mut registry = Self::new(config.model_catalog());
        let mut clients = Clients::default();
        let mut problems = Vec::new();
        for (id, settings) in config.model_providers() {
            let id = normalize_provider(id);
            match build(&id, settings, context, &mut clients) {
                Ok(provider) => {
                    let rule = WireIdRule::for_provider(&id, settings.base_url.as_deref());
                    registry.entries.insert(id, Entry { provider, rule });
                }
                Err(ProviderError::Config { message }) => problems.push(message),
                Err(other) => problems.push(other.to_string()),
            }
        }
        if problems.is_empty() {
            Ok(registry)
        } else {
            Err(ProviderError::config(problems.join("; ")))
        }
    }

    /// Adds (or replaces) a provider under its own id.
    pub fn with_provider(mut self, provider: Arc<dyn ModelProvider>, rule: WireIdRule) -> Self {
        self.entries
            .insert(normalize_provider(provider.id()), Entry { provider, rule });
        self
    }

    /// The provider with this id (case-insensitive).
    pub fn provider(&self, id: &str) -> Option<Arc<dyn ModelProvider>> {
        self.entries
            .get(&normalize_provider(id))
            .map(|entry| entry.provider.clone())
    }

    /// The provider ids, sorted.
    pub fn ids(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// Resolves user text (`opus`, `gpt-5.5`, `openrouter/moonshotai/kimi-k2@work`) through the
    /// config crate's parser and catalog, then to the provider and wire id.
    pub fn resolve(&self, input: &str) -> Result<ResolvedModel, ProviderError> {
        let reference = self
            .catalog
            .resolve(input)
            .map_err(|error| ProviderError::config(error.to_string()))?;
        self.resolve_ref(reference)
    }

    /// Resolves an already parsed reference to the provider and wire id.
    pub fn resolve_ref(&self, reference: ModelRef) -> Result<ResolvedModel, ProviderError> {
        let Some(entry) = self.entries.get(&reference.provider) else {
            return Err(ProviderError::config(format!(
                "model \"{reference}\": no provider \"{}\" is configured (configured: {})",
                reference.provider,
                self.ids().join(", ")
            )));
        };
        Ok(ResolvedModel {
            provider: entry.provider.clone(),
            wire_model: entry.rule.wire_id(&reference.model),
            reference,
        })
    }
}

fn build(
    id: &str,
    settings: &ProviderConfig,
    context: &RegistryContext<'_>,
    clients: &mut Clients,
) -> Result<Arc<dyn ModelProvider>, ProviderError> {
    let clock = context.clock.clone();
    Ok(match settings.api {
        ProviderApi::Scripted => {
            let Some(script) = settings.script.as_deref() else {
                return Err(ProviderError::config(format!(
                    "models.providers.{id}.script is required for api \"scripted\""
                )));
            };
            let path = context.base_dir.join(script);
            Arc::new(ScriptedProvider::from_file(id, &path, clock)?)
        }
        ProviderApi::OpenaiResponses => Arc::new(OpenAiResponses::new(
            endpoint(id, settings, context, clients)?,
            clock,
        )),
        ProviderApi::OpenaiCompletions => Arc::new(ChatCompletions::new(
            endpoint(id, settings, context, clients)?,
            clock,
        )),
        ProviderApi::AnthropicMessages => Arc::new(AnthropicMessages::new(
            endpoint(id, settings, context, clients)?,
            clock,
        )),
    })
}

/// HTTP clients by timeouts: providers with the same timeouts share one connection pool.
#[derive(Default)]
struct Clients(Vec<HttpClient>);

impl Clients {
    fn get(&mut self, settings: &HttpSettings) -> Result<HttpClient, ProviderError> {
        if let Some(client) = self.0.iter().find(|c| c.settings() == settings) {
            return Ok(client.clone());
        }
        let client = HttpClient::new(settings)?;
        self.0.push(client.clone());
        Ok(client)
    }
}

/// The provider's timeouts: `models.providers.<id>.timeouts` over the context's defaults.
fn timeouts(
    id: &str,
    settings: &ProviderConfig,
    defaults: HttpSettings,
) -> Result<HttpSettings, ProviderError> {
    let Some(set) = settings.timeouts else {
        return Ok(defaults);
    };
    let pick = |value: Option<f64>, key: &str, default: Duration| match value {
        None => Ok(default),
        Some(secs) if secs.is_finite() && (0.001..=86_400.0).contains(&secs) => {
            Ok(Duration::from_secs_f64(secs))
        }
        Some(_) => Err(ProviderError::config(format!(
            "models.providers.{id}.timeouts.{key} must be between 0.001 and 86400 seconds"
        ))),
    };
    Ok(HttpSettings {
        connect_timeout: pick(
            set.connect_seconds,
            "connectSeconds",
            defaults.connect_timeout,
        )?,
        first_byte_timeout: pick(
            set.first_byte_seconds,
            "firstByteSeconds",
            defaults.first_byte_timeout,
        )?,
        idle_timeout: pick(set.idle_seconds, "idleSeconds", defaults.idle_timeout)?,
    })
}

/// `models.providers.<id>.models[].maxTokens` by model id.
fn output_limits(
    id: &str,
    settings: &ProviderConfig,
) -> Result<BTreeMap<String, u32>, ProviderError> {
    let mut limits = BTreeMap::new();
    for (at, model) in settings.models.iter().flatten().enumerate() {
        let Some(max) = model.max_tokens else {
            continue;
        };
        let max = u32::try_from(max)
            .ok()
            .filter(|max| *max > 0)
            .ok_or_else(|| {
                ProviderError::config(format!(
                    "models.providers.{id}.models[{at}].maxTokens must be between 1 and {}",
                    u32::MAX
                ))
            })?;
        limits.insert(model.id.clone(), max);
    }
    Ok(limits)
}

/// The endpoint of an HTTP provider, on the shared client for its timeouts.
fn endpoint(
    id: &str,
    settings: &ProviderConfig,
    context: &RegistryContext<'_>,
    clients: &mut Clients,
) -> Result<Endpoint, ProviderError> {
    let base_url = settings
        .base_url
        .as_deref()
        .map(str::trim)
        .unwrap_or_default();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(ProviderError::config(format!(
            "models.providers.{id}.baseUrl must be an http:// or https:// URL for api \"{}\"",
            settings.api
        )));
    }
    let api_key = resolve_provider_key(id, settings, context.env)?;
    let client = clients.get(&timeouts(id, settings, context.http)?)?;
    Ok(Endpoint::new(id, base_url, client)
        .with_api_key(api_key)
        .with_headers(&settings.headers.clone().unwrap_or_default())?
        .with_output_limits(output_limits(id, settings)?)
        .with_models_without_reasoning(
            settings
                .models
                .iter()
                .flatten()
                .filter(|model| model.reasoning == Some(false))
                .map(|model| model.id.clone())
                .collect(),
        ))
}

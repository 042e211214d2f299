//! `memorySearch` resolved for one agent: the defaults' keys, each overridden by the agent's
//! own, with OpenClaw's defaults filled in and the API key found.

use std::collections::BTreeMap;

use openclaw_config::raw::{MemoryEmbeddingProvider, MemorySearchConfig};
use openclaw_config::{Config, EnvSource};
use openclaw_providers::ApiKey;

use crate::error::MemoryError;

/// Chunk size and overlap, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    /// Tokens per chunk.
    pub tokens: usize,
    /// Tokens shared by consecutive chunks.
    pub overlap: usize,
}

impl Default for Chunking {
    fn default() -> Self {
        Self {
            tokens: 400,
            overlap: 80,
        }
    }
}

/// How keyword and vector scores combine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hybrid {
    /// Whether keyword scores take part when embeddings are configured.
    pub enabled: bool,
    /// Weight of the cosine similarity.
    pub vector_weight: f64,
    /// Weight of the keyword score (divided by the best keyword score of the query).
    pub text_weight: f64,
    /// Candidates taken from each search, as a multiple of the results wanted.
    pub candidate_multiplier: usize,
    /// Lowest combined score shown when embeddings ranked.
    pub min_score: f64,
}

impl Default for Hybrid {
    fn default() -> Self {
        Self {
            enabled: true,
            vector_weight: 0.7,
            text_weight: 0.3,
            candidate_multiplier: 4,
            min_score: 0.35,
        }
    }
}

/// Which wire format embeddings are requested in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingProvider {
    /// OpenAI's `POST <baseUrl>/embeddings` (OpenAI, Voyage, Mistral, Ollama, compatibles).
    OpenAiCompatible,
    /// Gemini's `POST <baseUrl>/models/<model>:batchEmbedContents`.
    Gemini,
}

/// Where and how embeddings are requested.
#[derive(Clone, PartialEq)]
pub struct EmbeddingSpec {
    /// The provider id as configured (`openai`, `voyage`, ...), for messages.
    pub id: String,
    /// The wire format.
    pub wire: EmbeddingProvider,
    /// The embedding model.
    pub model: String,
    /// The API base URL without a trailing `/`.
    pub base_url: String,
    /// The key, if any (local servers need none). Never printed.
    pub api_key: Option<ApiKey>,
    /// Extra headers.
    pub headers: BTreeMap<String, String>,
}

impl std::fmt::Debug for EmbeddingSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingSpec")
            .field("id", &self.id)
            .field("wire", &self.wire)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// One agent's memory search settings.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySettings {
    /// Whether the memory tools are offered.
    pub enabled: bool,
    /// Chunk size and overlap.
    pub chunking: Chunking,
    /// Results when the model does not ask for a number.
    pub default_results: usize,
    /// Score combination.
    pub hybrid: Hybrid,
    /// The embedding endpoint; `None` = keyword search only.
    pub embeddings: Option<EmbeddingSpec>,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self {
            enabled: true,
            chunking: Chunking::default(),
            default_results: 6,
            hybrid: Hybrid::default(),
            embeddings: None,
        }
    }
}

/// The provider's API base URL and embedding model when the config names none.
fn provider_defaults(provider: MemoryEmbeddingProvider) -> Option<(&'static str, &'static str)> {
    use MemoryEmbeddingProvider as P;
    match provider {
        P::Openai => Some(("https://api.openai.com/v1", "text-embedding-3-small")),
        P::Voyage => Some(("https://api.voyageai.com/v1", "voyage-3.5-lite")),
        P::Mistral => Some(("https://api.mistral.ai/v1", "mistral-embed")),
        P::Ollama => Some(("http://127.0.0.1:11434/v1", "nomic-embed-text")),
        P::Gemini => Some((
            "https://generativelanguage.googleapis.com/v1beta",
            "gemini-embedding-001",
        )),
        P::None | P::Local | P::OpenaiCompatible => None,
    }
}

impl MemorySettings {
    /// The settings of agent `agent_id`: `agents.defaults.memorySearch`, key by key under the
    /// agent's `agents.list[].memorySearch`. The key comes from `remote.apiKey`, else from
    /// `models.providers.<provider>` (its `apiKey`, `apiKeyFile` or `<ID>_API_KEY`); a key is
    /// never read from a variable the config does not name, so every key in use is one the
    /// runtime redacts and hides from commands.
    pub fn resolve(
        config: &Config,
        agent_id: &str,
        env: &dyn EnvSource,
    ) -> Result<Self, MemoryError> {
        let agents = config.raw().agents.as_ref();
        let defaults = agents
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.memory_search.clone())
            .unwrap_or_default();
        let own = agents
            .and_then(|a| a.list.as_ref())
            .and_then(|list| list.iter().find(|e| e.id.eq_ignore_ascii_case(agent_id)))
            .and_then(|e| e.memory_search.clone());
        let (merged, prefix) = match own {
            Some(own) => (
                merge(defaults, own),
                format!("agents.list[{agent_id}].memorySearch"),
            ),
            None => (defaults, "agents.defaults.memorySearch".to_owned()),
        };
        Self::from_raw(&merged, &prefix, config, env)
    }

    fn from_raw(
        raw: &MemorySearchConfig,
        prefix: &str,
        config: &Config,
        env: &dyn EnvSource,
    ) -> Result<Self, MemoryError> {
        let d = Self::default();
        let chunking = raw.chunking.unwrap_or_default();
        let as_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        let chunking = Chunking {
            tokens: chunking.tokens.map_or(d.chunking.tokens, as_usize),
            overlap: chunking.overlap.map_or(d.chunking.overlap, as_usize),
        };
        if chunking.overlap >= chunking.tokens {
            return Err(MemoryError::Config(format!(
                "{prefix}.chunking.overlap: {} must be less than chunking.tokens ({})",
                chunking.overlap, chunking.tokens
            )));
        }
        let query = raw.query.clone().unwrap_or_default();
        let hybrid = query.hybrid.unwrap_or_default();
        let hybrid = Hybrid {
            enabled: hybrid.enabled.unwrap_or(d.hybrid.enabled),
            vector_weight: hybrid.vector_weight.unwrap_or(d.hybrid.vector_weight),
            text_weight: hybrid.text_weight.unwrap_or(d.hybrid.text_weight),
            candidate_multiplier: hybrid
                .candidate_multiplier
                .map_or(d.hybrid.candidate_multiplier, as_usize),
            min_score: query.min_score.unwrap_or(d.hybrid.min_score),
        };
        let embeddings = match raw.provider {
            None | Some(MemoryEmbeddingProvider::None) => None,
            Some(provider) => Some(embedding_spec(provider, raw, prefix, config, env)?),
        };
        Ok(Self {
            enabled: raw.enabled.unwrap_or(true),
            chunking,
            default_results: query.max_results.map_or(d.default_results, as_usize),
            hybrid,
            embeddings,
        })
    }

    /// What the index depends on beyond the files: a change rebuilds it.
    pub fn identity(&self) -> String {
        let embeddings = self
            .embeddings
            .as_ref()
            .map(|e| format!("{}|{}|{}", e.id, e.model, e.base_url))
            .unwrap_or_default();
        format!(
            "chunking={}/{};embeddings={embeddings}",
            self.chunking.tokens, self.chunking.overlap
        )
    }
}

fn embedding_spec(
    provider: MemoryEmbeddingProvider,
    raw: &MemorySearchConfig,
    prefix: &str,
    config: &Config,
    env: &dyn EnvSource,
) -> Result<EmbeddingSpec, MemoryError> {
    let id = provider.as_str().to_owned();
    if provider == MemoryEmbeddingProvider::Local {
        return Err(MemoryError::Config(format!(
            "{prefix}.provider: \"local\" (an in-process GGUF model) is not available in this \
             service; serve the model with Ollama or an OpenAI-compatible server"
        )));
    }
    let remote = raw.remote.clone().unwrap_or_default();
    let configured = config
        .raw()
        .models
        .as_ref()
        .and_then(|m| m.providers.as_ref())
        .and_then(|p| p.get(&id));
    let (default_url, default_model) = provider_defaults(provider).unzip();
    let base_url = remote
        .base_url
        .or_else(|| configured.and_then(|p| p.base_url.clone()))
        .or(default_url.map(str::to_owned))
        .ok_or_else(|| {
            MemoryError::Config(format!(
                "{prefix}.remote.baseUrl: \"{id}\" needs a base URL"
            ))
        })?;
    let model = raw
        .model
        .clone()
        .or(default_model.map(str::to_owned))
        .ok_or_else(|| MemoryError::Config(format!("{prefix}.model: \"{id}\" needs a model")))?;
    let api_key = match (remote.api_key, configured) {
        (Some(key), _) => Some(ApiKey::new(key)).filter(|k| !k.expose().trim().is_empty()),
        (None, Some(settings)) => openclaw_providers::resolve_provider_key(&id, settings, env)
            .map_err(|e| MemoryError::Config(format!("{prefix}.provider: {e}")))?,
        (None, None) => None,
    };
    let needs_key = !matches!(
        provider,
        MemoryEmbeddingProvider::Ollama | MemoryEmbeddingProvider::OpenaiCompatible
    );
    if needs_key && api_key.is_none() {
        return Err(MemoryError::Config(format!(
            "{prefix}.remote.apiKey: \"{id}\" embeddings need an API key: set remote.apiKey \
             (for example \"${{{}_API_KEY}}\") or configure models.providers.{id}",
            id.to_ascii_uppercase()
        )));
    }
    let wire = if provider == MemoryEmbeddingProvider::Gemini {
        EmbeddingProvider::Gemini
    } else {
        EmbeddingProvider::OpenAiCompatible
    };
    Ok(EmbeddingSpec {
        id,
        wire,
        model,
        base_url: base_url.trim().trim_end_matches('/').to_owned(),
        api_key,
        headers: remote.headers.unwrap_or_default(),
    })
}

/// `own` over `base`, key by key (nested objects too).
fn merge(base: MemorySearchConfig, own: MemorySearchConfig) -> MemorySearchConfig {
    let remote = match (base.remote, own.remote) {
        (Some(b), Some(o)) => Some(openclaw_config::raw::MemorySearchRemote {
            base_url: o.base_url.or(b.base_url),
            api_key: o.api_key.or(b.api_key),
            headers: o.headers.or(b.headers),
        }),
        (b, o) => o.or(b),
    };
    let chunking = match (base.chunking, own.chunking) {
        (Some(b), Some(o)) => Some(openclaw_config::raw::MemorySearchChunking {
            tokens: o.tokens.or(b.tokens),
            overlap: o.overlap.or(b.overlap),
        }),
        (b, o) => o.or(b),
    };
    let query = match (base.query, own.query) {
        (Some(b), Some(o)) => Some(openclaw_config::raw::MemorySearchQuery {
            max_results: o.max_results.or(b.max_results),
            min_score: o.min_score.or(b.min_score),
            hybrid: match (b.hybrid, o.hybrid) {
                (Some(bh), Some(oh)) => Some(openclaw_config::raw::MemorySearchHybrid {
                    enabled: oh.enabled.or(bh.enabled),
                    vector_weight: oh.vector_weight.or(bh.vector_weight),
                    text_weight: oh.text_weight.or(bh.text_weight),
                    candidate_multiplier: oh.candidate_multiplier.or(bh.candidate_multiplier),
                }),
                (bh, oh) => oh.or(bh),
            },
        }),
        (b, o) => o.or(b),
    };
    MemorySearchConfig {
        enabled: own.enabled.or(base.enabled),
        provider: own.provider.or(base.provider),
        model: own.model.or(base.model),
        remote,
        chunking,
        query,
    }
}

//! `agents.defaults.memorySearch` and `agents.list[].memorySearch`: how `memory_search` indexes
//! and ranks the memory files (chunking, the embedding provider, hybrid weights). A list entry's
//! keys override the defaults' one by one.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// `memorySearch`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemorySearchConfig {
    /// Whether `memory_search` is offered at all (default true). Off, the memory tools stay
    /// away and nothing is indexed.
    pub enabled: Option<bool>,
    /// The embedding provider for vector search. Unset or "none": keyword search only.
    pub provider: Option<MemoryEmbeddingProvider>,
    /// The embedding model (default: the provider's usual embedding model; required for
    /// "openai-compatible").
    pub model: Option<String>,
    /// Where embeddings are requested, and with which key.
    pub remote: Option<MemorySearchRemote>,
    /// How memory files are cut into chunks.
    pub chunking: Option<MemorySearchChunking>,
    /// How results are ranked.
    pub query: Option<MemorySearchQuery>,
}

/// `memorySearch.remote`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemorySearchRemote {
    /// The API base URL, up to and including its version (`https://api.openai.com/v1`);
    /// embeddings are POSTed to `<baseUrl>/embeddings`.
    pub base_url: Option<String>,
    /// The API key, usually `${ENV_VAR}`. Without it, `models.providers.<provider>`'s key is
    /// used.
    pub api_key: Option<String>,
    /// Extra HTTP headers sent with every embeddings request.
    pub headers: Option<BTreeMap<String, String>>,
}

/// `memorySearch.chunking`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemorySearchChunking {
    /// Tokens per chunk, about four characters each (default 400).
    #[schemars(range(min = 16, max = 8192))]
    pub tokens: Option<u64>,
    /// Tokens shared by consecutive chunks (default 80); less than `tokens`.
    #[schemars(range(max = 4096))]
    pub overlap: Option<u64>,
}

/// `memorySearch.query`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemorySearchQuery {
    /// Passages returned when the model does not ask for a number (default 6).
    #[schemars(range(min = 1, max = 20))]
    pub max_results: Option<u64>,
    /// Lowest combined score a passage needs when embeddings take part (default 0.35);
    /// keyword-only search shows every match.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_score: Option<f64>,
    /// How keyword and vector scores combine.
    pub hybrid: Option<MemorySearchHybrid>,
}

/// `memorySearch.query.hybrid`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemorySearchHybrid {
    /// Combine both searches when embeddings are configured (default true); off, vector
    /// search alone ranks.
    pub enabled: Option<bool>,
    /// Weight of the vector score (default 0.7).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub vector_weight: Option<f64>,
    /// Weight of the keyword score (default 0.3).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub text_weight: Option<f64>,
    /// Candidates taken from each search, as a multiple of the results wanted (default 4).
    #[schemars(range(min = 1, max = 20))]
    pub candidate_multiplier: Option<u64>,
}

choice! {
    /// `memorySearch.provider`.
    MemoryEmbeddingProvider {
        /// No embeddings: keyword search only.
        None = "none",
        /// OpenAI's embeddings API (`text-embedding-3-small`).
        Openai = "openai",
        /// Google Gemini's `batchEmbedContents` (`gemini-embedding-001`).
        Gemini = "gemini",
        /// Voyage AI's embeddings API (`voyage-3.5-lite`).
        Voyage = "voyage",
        /// Mistral's embeddings API (`mistral-embed`).
        Mistral = "mistral",
        /// A local Ollama server's OpenAI-compatible endpoint (`nomic-embed-text`).
        Ollama = "ollama",
        /// An in-process GGUF model: not available in this service (refused with a message).
        Local = "local",
        /// Any server speaking OpenAI's `POST /embeddings` (needs `remote.baseUrl` and `model`).
        OpenaiCompatible = "openai-compatible",
    }
}

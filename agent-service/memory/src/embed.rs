//! Embeddings over the provider's own wire format, in batches.
//!
//! - OpenAI's: `POST <baseUrl>/embeddings` with `{"model", "input": [texts]}` and
//!   `Authorization: Bearer <key>`, answered with `{"data": [{"index", "embedding"}]}`. OpenAI,
//!   Voyage, Mistral, Ollama (`/v1`) and other OpenAI-compatible servers speak it.
//! - Gemini's: `POST <baseUrl>/models/<model>:batchEmbedContents` with
//!   `{"requests": [{"model": "models/<model>", "content": {"parts": [{"text"}]}}]}` and
//!   `x-goog-api-key: <key>`, answered with `{"embeddings": [{"values"}]}`.
//!
//! The calls go over the model providers' transport (`openclaw_providers::Endpoint`): the key
//! travels only in its header, marked sensitive, and is never logged or put in an error; extra
//! headers from `remote.headers` come last and may override; an error status is read as a
//! model call's is.

use std::time::Duration;

use openclaw_providers::{Auth, Endpoint, HttpClient, HttpSettings};
use serde_json::{Value, json};

use crate::error::MemoryError;
use crate::settings::{EmbeddingProvider, EmbeddingSpec};

/// Texts per request.
pub const BATCH: usize = 64;
/// How long an embeddings answer may take to start, and may then stay silent.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A client for one embedding endpoint.
#[derive(Debug, Clone)]
pub struct Embedder {
    spec: EmbeddingSpec,
    endpoint: Endpoint,
}

impl Embedder {
    /// A client for `spec` on the model providers' own transport (rustls, a 10 s connect
    /// timeout, the key marked sensitive and kept out of messages), with 120 s for the answer
    /// to start and 120 s of silence allowed within it. A header name or value that HTTP
    /// cannot carry is a config error naming the header, never its value.
    pub fn new(spec: EmbeddingSpec) -> Result<Self, MemoryError> {
        let client = HttpClient::new(&HttpSettings {
            connect_timeout: HttpSettings::DEFAULT_CONNECT,
            first_byte_timeout: ANSWER_TIMEOUT,
            idle_timeout: ANSWER_TIMEOUT,
        })
        .map_err(|e| MemoryError::Config(e.to_string()))?;
        let endpoint = Endpoint::new(spec.id.clone(), &spec.base_url, client)
            .with_setting("memorySearch.remote")
            .with_api_key(spec.api_key.clone())
            .with_headers(&spec.headers)
            .map_err(|e| MemoryError::Config(e.to_string()))?;
        Ok(Self { spec, endpoint })
    }

    /// What cached embeddings are keyed by: provider, model and endpoint.
    pub fn model_key(&self) -> String {
        format!(
            "{}|{}|{}",
            self.spec.id, self.spec.model, self.spec.base_url
        )
    }

    /// The provider id, for messages.
    pub fn provider(&self) -> &str {
        &self.spec.id
    }

    /// One vector per text, in order, in batches of [`BATCH`].
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            out.extend(self.embed_batch(batch).await?);
        }
        Ok(out)
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let (path, auth, body) = match self.spec.wire {
            EmbeddingProvider::OpenAiCompatible => (
                "/embeddings".to_owned(),
                Auth::Bearer,
                json!({ "model": self.spec.model, "input": texts }),
            ),
            EmbeddingProvider::Gemini => {
                let model = format!("models/{}", self.spec.model);
                let requests: Vec<Value> = texts
                    .iter()
                    .map(|t| json!({ "model": model, "content": { "parts": [{ "text": t }] } }))
                    .collect();
                (
                    format!("/{model}:batchEmbedContents"),
                    Auth::XGoogApiKey,
                    json!({ "requests": requests }),
                )
            }
        };
        let value = self
            .endpoint
            .post_json(&path, auth, &body)
            .await
            .map_err(|e| self.failed(e.to_string()))?;
        let vectors = match self.spec.wire {
            EmbeddingProvider::OpenAiCompatible => openai_vectors(&value),
            EmbeddingProvider::Gemini => gemini_vectors(&value),
        }
        .ok_or_else(|| self.failed("the answer holds no embeddings in the expected shape"))?;
        if vectors.len() != texts.len() {
            return Err(self.failed(format!(
                "asked for {} embeddings, got {}",
                texts.len(),
                vectors.len()
            )));
        }
        Ok(vectors)
    }

    fn failed(&self, message: impl Into<String>) -> MemoryError {
        MemoryError::Embeddings {
            provider: self.spec.id.clone(),
            message: message.into(),
        }
    }
}

fn floats(value: &Value) -> Option<Vec<f32>> {
    value
        .as_array()?
        .iter()
        .map(|x| {
            #[expect(clippy::cast_possible_truncation, reason = "embeddings are f32 values")]
            x.as_f64().map(|f| f as f32)
        })
        .collect()
}

/// `data[].embedding`, put in `index` order.
fn openai_vectors(value: &Value) -> Option<Vec<Vec<f32>>> {
    let mut items: Vec<(u64, Vec<f32>)> = value
        .get("data")?
        .as_array()?
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(i as u64);
            Some((index, floats(item.get("embedding")?)?))
        })
        .collect::<Option<_>>()?;
    items.sort_by_key(|(index, _)| *index);
    Some(items.into_iter().map(|(_, v)| v).collect())
}

/// `embeddings[].values`.
fn gemini_vectors(value: &Value) -> Option<Vec<Vec<f32>>> {
    value
        .get("embeddings")?
        .as_array()?
        .iter()
        .map(|item| floats(item.get("values")?))
        .collect()
}

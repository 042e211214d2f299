//! Embeddings over the provider's own wire format, in batches.
//!
//! - OpenAI's: `POST <baseUrl>/embeddings` with `{"model", "input": [texts]}` and
//!   `Authorization: Bearer <key>`, answered with `{"data": [{"index", "embedding"}]}`. OpenAI,
//!   Voyage, Mistral, Ollama (`/v1`) and other OpenAI-compatible servers speak it.
//! - Gemini's: `POST <baseUrl>/models/<model>:batchEmbedContents` with
//!   `{"requests": [{"model": "models/<model>", "content": {"parts": [{"text"}]}}]}` and
//!   `x-goog-api-key: <key>`, answered with `{"embeddings": [{"values"}]}`.
//!
//! The key travels only in its header, marked sensitive; it is never logged or put in an
//! error. Extra headers from `remote.headers` come last and may override.

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::error::MemoryError;
use crate::settings::{EmbeddingProvider, EmbeddingSpec};

/// Texts per request.
pub const BATCH: usize = 64;
/// The most of an error body quoted in a message.
const ERROR_EXCERPT: usize = 300;

/// A client for one embedding endpoint.
#[derive(Debug, Clone)]
pub struct Embedder {
    spec: EmbeddingSpec,
    headers: HeaderMap,
    client: reqwest::Client,
}

impl Embedder {
    /// A client for `spec`: the same transport settings as the model providers (rustls, a 10 s
    /// connect timeout), with a 120 s limit per request. A header name or value that HTTP
    /// cannot carry is a config error naming the header, never its value.
    pub fn new(spec: EmbeddingSpec) -> Result<Self, MemoryError> {
        let mut headers = HeaderMap::new();
        let auth = match (spec.wire, &spec.api_key) {
            (_, None) => None,
            (EmbeddingProvider::OpenAiCompatible, Some(key)) => Some((
                http::header::AUTHORIZATION,
                format!("Bearer {}", key.expose()),
            )),
            (EmbeddingProvider::Gemini, Some(key)) => Some((
                HeaderName::from_static("x-goog-api-key"),
                key.expose().to_owned(),
            )),
        };
        if let Some((name, value)) = auth {
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                MemoryError::Config(
                    "memorySearch.remote.apiKey is not a valid header value".to_owned(),
                )
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        for (name, value) in &spec.headers {
            let invalid = || {
                MemoryError::Config(format!(
                    "memorySearch.remote.headers.{name} is not a valid HTTP header"
                ))
            };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut value = HeaderValue::from_str(value).map_err(|_| invalid())?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| MemoryError::Config(format!("HTTP client: {e}")))?;
        Ok(Self {
            spec,
            headers,
            client,
        })
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
        let (url, body) = match self.spec.wire {
            EmbeddingProvider::OpenAiCompatible => (
                format!("{}/embeddings", self.spec.base_url),
                json!({ "model": self.spec.model, "input": texts }),
            ),
            EmbeddingProvider::Gemini => {
                let model = format!("models/{}", self.spec.model);
                let requests: Vec<Value> = texts
                    .iter()
                    .map(|t| json!({ "model": model, "content": { "parts": [{ "text": t }] } }))
                    .collect();
                (
                    format!("{}/{model}:batchEmbedContents", self.spec.base_url),
                    json!({ "requests": requests }),
                )
            }
        };
        let body = serde_json::to_vec(&body).map_err(|e| self.failed(format!("request: {e}")))?;
        let response = self
            .client
            .post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .headers(self.headers.clone())
            .body(body)
            .send()
            .await
            .map_err(|e| self.failed(chain(&e)))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.failed(format!("the answer broke off: {}", chain(&e))))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            let excerpt: String = text.chars().take(ERROR_EXCERPT).collect();
            return Err(self.failed(format!("HTTP {}: {}", status.as_u16(), excerpt.trim())));
        }
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| self.failed(format!("the answer is not JSON: {e}")))?;
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

fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

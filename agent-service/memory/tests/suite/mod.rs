//! Shared fixtures: a workspace with memory files, an index in a temporary state dir, and a
//! scripted embeddings server speaking OpenAI's wire format on a real socket.

mod config;
mod embeddings;
mod index;
mod keyword;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header::CONTENT_TYPE};
use axum::routing::post;
use openclaw_memory::{AgentMemory, MemorySettings, SearchOutcome};
use openclaw_workspace::Confined;
use serde_json::{Value, json};

/// A workspace and a state dir, both temporary.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub workspace: PathBuf,
    pub index: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(workspace.join("memory")).unwrap();
        let index = dir.path().join("state/agents/main/agent/memory.sqlite");
        Self {
            _dir: dir,
            workspace,
            index,
        }
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.workspace.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn memory(&self, settings: MemorySettings) -> AgentMemory {
        AgentMemory::new(settings, self.index.clone()).unwrap()
    }

    pub async fn search(&self, memory: &AgentMemory, query: &str) -> SearchOutcome {
        let ws = Arc::new(Confined::new(&self.workspace).unwrap());
        memory.search(ws, query, 6).await.unwrap()
    }
}

/// The paths and first lines of the hits, best first.
pub fn found(outcome: &SearchOutcome) -> Vec<String> {
    outcome
        .hits
        .iter()
        .map(|h| format!("{}#L{}-L{}", h.path, h.start, h.end))
        .collect()
}

/// Settings from an `openclaw.json` text, for agent `main`.
pub fn settings_from(config: &str) -> Result<MemorySettings, String> {
    let env: HashMap<String, String> = HashMap::new();
    let config = openclaw_config::load(config, &env, &openclaw_config::LoadOptions::default())
        .map_err(|e| e.to_string())?;
    MemorySettings::resolve(&config, "main", &env).map_err(|e| e.to_string())
}

/// Words that mean the same thing, one group per dimension: the scripted server's whole idea of
/// meaning. A text's vector counts its words per group.
const CONCEPTS: &[&[&str]] = &[
    &["espresso", "coffee", "caffeinated", "caffeine", "latte"],
    &["dawn", "morning", "early", "sunrise"],
    &["drinks", "beverage", "drink", "sips"],
    &["cat", "kitten", "pet", "feline"],
    &["deadline", "due", "submit", "cutoff"],
    &["volcano", "lava", "eruption"],
];

fn concept_vector(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; CONCEPTS.len() + 1];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        if let Some(i) = CONCEPTS.iter().position(|g| g.contains(&word.as_str())) {
            v[i] += 1.0;
        }
    }
    // A small constant dimension keeps unrelated texts apart from zero vectors.
    v[CONCEPTS.len()] = 0.1;
    v
}

/// What the scripted server saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every text embedded, in order.
    pub inputs: Vec<String>,
    /// The `Authorization` header of each request.
    pub auth: Vec<String>,
    /// The `model` of each request.
    pub models: Vec<String>,
}

/// The model the scripted server refuses with 403 and an OpenAI error body.
pub const REFUSED_MODEL: &str = "refused-1";

/// A scripted OpenAI-compatible embeddings server on `127.0.0.1:0`.
pub struct EmbeddingServer {
    pub base_url: String,
    pub seen: Arc<Mutex<Seen>>,
}

async fn embeddings(
    State(seen): State<Arc<Mutex<Seen>>>,
    headers: HeaderMap,
    body: Bytes,
) -> (
    StatusCode,
    [(axum::http::HeaderName, &'static str); 1],
    String,
) {
    let json = [(CONTENT_TYPE, "application/json")];
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, json, "{}".to_owned());
    };
    let (Some(model), Some(input)) = (request["model"].as_str(), request["input"].as_array())
    else {
        let error = json!({ "error": { "message": "model and input are required" } });
        return (StatusCode::BAD_REQUEST, json, error.to_string());
    };
    if model == REFUSED_MODEL {
        let error = json!({ "error": { "message": "no access to this model", "type": "invalid_request_error" } });
        return (StatusCode::FORBIDDEN, json, error.to_string());
    }
    let texts: Vec<String> = input
        .iter()
        .map(|t| t.as_str().unwrap_or_default().to_owned())
        .collect();
    {
        let mut seen = seen.lock().unwrap();
        seen.inputs.extend(texts.iter().cloned());
        seen.models.push(model.to_owned());
        seen.auth.push(
            headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned(),
        );
    }
    // Answered in reverse order, as the API may: `index` says which is which.
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| json!({ "object": "embedding", "index": i, "embedding": concept_vector(t) }))
        .collect();
    let answer = json!({ "object": "list", "data": data, "model": model, "usage": { "prompt_tokens": 1, "total_tokens": 1 } });
    (StatusCode::OK, json, answer.to_string())
}

impl EmbeddingServer {
    pub async fn start() -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let app = Router::new()
            .route("/v1/embeddings", post(embeddings))
            .with_state(Arc::clone(&seen));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base_url: format!("http://{addr}/v1"),
            seen,
        }
    }

    /// Memory settings that embed through this server.
    pub fn settings(&self) -> MemorySettings {
        self.settings_for("concepts-1")
    }

    /// Memory settings that embed through this server with `model`.
    pub fn settings_for(&self, model: &str) -> MemorySettings {
        settings_from(&format!(
            r#"{{ agents: {{ defaults: {{ memorySearch: {{
                provider: "openai-compatible", model: "{model}",
                remote: {{ baseUrl: "{}", apiKey: "sk-test-embeddings" }},
            }} }} }} }}"#,
            self.base_url
        ))
        .unwrap()
    }
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}

//! Shared helpers: a provider built from config against a fake server, a standard request,
//! running a call while collecting its events.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_testkit::{FakeReply, FakeServer, FakeServerHandle, RecordedRequest, WireFormat};
use openclaw_config::{LoadOptions, load};
use openclaw_providers::{
    HttpSettings, ModelProvider, ModelRequest, ProviderError, ProviderRegistry, RegistryContext,
    RetryPolicy, StreamEvent, SystemPrompt, ToolSpec, complete_with_retry,
};
use openclaw_transcript::{
    AssistantMessage, Clock, ContentBlock, FixedClock, Message, ToolResultMessage, UserContent,
    UserMessage,
};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The fixed clock's time, in Unix milliseconds.
pub const NOW_MS: i64 = 1_750_000_000_000;

/// The API key every test provider is configured with.
pub const KEY: &str = "sk-test-key";

pub fn clock() -> Arc<dyn Clock> {
    Arc::new(FixedClock(
        jiff::Timestamp::from_millisecond(NOW_MS).unwrap(),
    ))
}

/// Loads config text and builds its registry, with `env` for secrets.
pub fn registry(
    config: &str,
    env: &[(&str, &str)],
    base_dir: &Path,
) -> Result<ProviderRegistry, ProviderError> {
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let config = load(config, &env, &LoadOptions::default()).unwrap();
    let context = RegistryContext {
        env: &env,
        base_dir,
        clock: clock(),
        http: HttpSettings {
            connect_timeout: Duration::from_secs(5),
            first_byte_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
        },
    };
    ProviderRegistry::from_config(&config, &context)
}

/// A fake server for `format` and provider `fake` configured against it through
/// `models.providers` (key `KEY`, one extra header), as the runtime would build it.
pub async fn fake(format: WireFormat) -> (FakeServerHandle, Arc<dyn ModelProvider>) {
    let (base_url, handle) = FakeServer::start(format).await.unwrap();
    handle.require_api_key(KEY);
    let config = format!(
        r#"{{ models: {{ providers: {{ fake: {{
            api: "{}", baseUrl: "{base_url}", apiKey: {{ source: "env", id: "FAKE_KEY" }},
            headers: {{ "x-extra": "yes" }}, models: [{{ id: "m1" }}],
        }} }} }} }}"#,
        format.api()
    );
    let registry = registry(&config, &[("FAKE_KEY", KEY)], Path::new(".")).unwrap();
    let provider = registry.provider("fake").unwrap();
    (handle, provider)
}

/// One tool round against `format`'s fake, as [`fake`] configures it: the model says "Let me
/// look." and calls `read` on AGENTS.md, then answers "Done." to the call's result. Returns the
/// two requests the fake received.
pub async fn tool_round(format: WireFormat) -> Vec<RecordedRequest> {
    let (fake, provider) = fake(format).await;
    fake.push(
        FakeReply::tool_call("call_1", "read", json!({"path": "AGENTS.md"}))
            .with_text("Let me look."),
    );
    fake.push(FakeReply::text("Done."));
    let first = run(provider.as_ref(), request()).await.0.unwrap();
    let mut second = request();
    std::sync::Arc::make_mut(&mut second.messages).push(Message::Assistant(first));
    std::sync::Arc::make_mut(&mut second.messages).push(tool_result("call_1", "read", "# Agents"));
    run(provider.as_ref(), second).await.0.unwrap();

    fake.requests()
}

pub fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.to_owned()),
        timestamp: NOW_MS,
    })
}

pub fn tool_result(id: &str, name: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.to_owned(),
        tool_name: name.to_owned(),
        content: vec![ContentBlock::text(text)],
        is_error: false,
        details: None,
        timestamp: NOW_MS,
    })
}

pub fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}).into(),
    }
}

/// Model `m1`, system `STABLE` / `DYNAMIC`, one user message, the read tool.
pub fn request() -> ModelRequest {
    ModelRequest {
        model: "m1".into(),
        system: SystemPrompt {
            stable: "STABLE".into(),
            dynamic: "DYNAMIC".into(),
        },
        messages: vec![user("hi")].into(),
        tools: vec![read_tool()].into(),
        ..ModelRequest::default()
    }
}

pub type Outcome = (Result<AssistantMessage, ProviderError>, Vec<StreamEvent>);

async fn collect(mut receiver: mpsc::Receiver<StreamEvent>) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    while let Some(event) = receiver.recv().await {
        events.push(event);
    }
    events
}

/// One call, no retries, events collected.
pub async fn run(provider: &dyn ModelProvider, request: ModelRequest) -> Outcome {
    let (sender, receiver) = mpsc::channel(16);
    tokio::join!(
        provider.complete(&request, sender, CancellationToken::new()),
        collect(receiver)
    )
}

/// One call through [`complete_with_retry`], events collected.
pub async fn run_with_retry(
    provider: &dyn ModelProvider,
    request: ModelRequest,
    policy: &RetryPolicy,
) -> Outcome {
    let (sender, receiver) = mpsc::channel(16);
    tokio::join!(
        complete_with_retry(provider, request, sender, CancellationToken::new(), policy),
        collect(receiver)
    )
}

/// Retries quickly, so tests of backoff stay short.
pub fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        deadline: Duration::from_secs(30),
    }
}

/// All text deltas joined.
pub fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

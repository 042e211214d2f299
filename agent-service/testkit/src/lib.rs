//! Dev-only test support for the agent service: fake model servers that speak each provider's
//! EXACT wire protocol on `127.0.0.1:0`.
//!
//! What it is for: tests (and benchmarks) that drive a real HTTP client against the OpenAI
//! Responses API, Chat Completions or the Anthropic Messages API without any network or
//! account. Each [`FakeServer`] checks what the real API would refuse (JSON body, key,
//! `anthropic-version`, `stream: true`, `model`), records every request's path, headers and
//! body, and answers from a queue of [`FakeReply`]s: text streamed in N deltas, thinking, tool
//! calls with their arguments split over several chunks, usage with cache-read tokens (and
//! cache writes where gateways report them, [`CacheWriteField`]), 429 with `retry-after`, 5xx,
//! context overflow, an error body sent as an event stream, a whole JSON answer to a streaming
//! request, a malformed chunk, a connection cut mid-stream, a stall, delays. A Chat Completions
//! fake can refuse roles that do not alternate, as many local models' chat templates do.
//! [`FakeServerHandle::set_instant`] answers every request at once from pre-rendered bodies,
//! for benchmarks. [`packages::ensure_program`] installs a system program a test needs
//! (bubblewrap, a router) from Debian's packages; [`procs`] tells whether a command a test
//! started still runs.
//!
//! What it is not for: production, or judging model behaviour; it never looks at prompts
//! beyond "is the last message a tool result" in instant mode.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use agent_testkit::{FakeReply, FakeServer, FakeUsage, WireFormat};
//!
//! let (base_url, fake) = FakeServer::start(WireFormat::AnthropicMessages).await?;
//! let usage = FakeUsage { cache_read: 900, ..FakeUsage::default() };
//! fake.push(FakeReply::text("Hello there").deltas(3).usage(usage));
//! fake.push(FakeReply::rate_limited(Some(1)));
//! // ... point a provider at base_url, run it ...
//! assert_eq!(fake.requests()[0].header("anthropic-version"), Some("2023-06-01"));
//! # Ok(()) }
//! ```

mod anthropic;
mod chat;
mod frames;
pub mod packages;
pub mod procs;
mod reply;
mod responses;
mod server;

pub use reply::{CacheWriteField, FakeError, FakeReply, FakeToolCall, FakeTurn, FakeUsage};
pub use server::{FakeServer, FakeServerHandle, RecordedRequest};

/// The wire protocol a fake server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// OpenAI Responses API: `POST /v1/responses`, SSE with `event:` lines.
    OpenAiResponses,
    /// OpenAI Chat Completions: `POST /v1/chat/completions`, `data:` lines and `[DONE]`.
    ChatCompletions,
    /// Anthropic Messages: `POST /v1/messages`, SSE with `event:` lines.
    AnthropicMessages,
}

impl WireFormat {
    /// Every format, for tests that run against each.
    pub const ALL: [Self; 3] = [
        Self::OpenAiResponses,
        Self::ChatCompletions,
        Self::AnthropicMessages,
    ];

    /// The `api` value of `models.providers.<id>` for this format.
    pub fn api(self) -> &'static str {
        match self {
            Self::OpenAiResponses => "openai-responses",
            Self::ChatCompletions => "openai-completions",
            Self::AnthropicMessages => "anthropic-messages",
        }
    }

    /// The path the fake serves.
    pub fn path(self) -> &'static str {
        match self {
            Self::OpenAiResponses => "/v1/responses",
            Self::ChatCompletions => "/v1/chat/completions",
            Self::AnthropicMessages => "/v1/messages",
        }
    }

    /// What the base URL ends with: OpenAI base URLs include `/v1`, Anthropic's do not.
    fn base_path(self) -> &'static str {
        match self {
            Self::OpenAiResponses | Self::ChatCompletions => "/v1",
            Self::AnthropicMessages => "",
        }
    }
}

/// The Codex `model_providers` entry that points Codex at a fake Responses server at
/// `base_url`: no retries, so a test sees each failure once, and a minute before a silent
/// stream counts as stalled.
pub fn codex_provider(base_url: &str) -> serde_json::Map<String, serde_json::Value> {
    let provider = serde_json::json!({
        "name": "fake",
        "base_url": base_url,
        "wire_api": "responses",
        "request_max_retries": 0,
        "stream_max_retries": 0,
        "stream_idle_timeout_ms": 60_000,
    });
    provider.as_object().cloned().unwrap_or_default()
}

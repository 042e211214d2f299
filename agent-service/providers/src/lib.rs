//! The model provider layer of the agent runtime: one request type, one streaming event type and
//! one trait ([`ModelProvider`]) in front of the real wire formats.
//!
//! What it is for:
//! - speaking each API exactly as the vendor documents it, over HTTP with streamed SSE:
//!   the OpenAI Responses API ([`OpenAiResponses`]), OpenAI-compatible Chat Completions as served
//!   by OpenAI, Ollama, vLLM, llama.cpp and OpenRouter ([`ChatCompletions`]), and the Anthropic
//!   Messages API with the stable system prompt in its own cached block (P-24,
//!   [`AnthropicMessages`]), each request body serialised straight from the request it
//!   borrows, in fixed bytes (tool schemas travel pre-encoded, [`ToolSchema`]);
//! - turning each stream into [`StreamEvent`]s as they arrive and into one complete
//!   [`openclaw_transcript::AssistantMessage`]; a tool call is announced only once its arguments
//!   are complete, so a partial call never leaks (L10); arguments that are not JSON, or that
//!   the output limit cut off, are handed on raw with the parse error ([`tool_arguments`]) for
//!   the loop to tell the model, not turned into a failed call;
//! - mapping each API's failures onto one [`ProviderError`] (rate limits with the wait they ask
//!   for, server errors, context overflow, malformed or cut streams, a 200 that is an HTML
//!   page), carrying any text streamed before the failure, and retrying the retryable ones
//!   safely ([`complete_with_retry`]: never after output reached the caller, never past the
//!   call's deadline);
//! - per-provider connect, first-byte and idle timeouts ([`HttpSettings`]), so a hung server
//!   fails an attempt instead of holding a session;
//! - an offline [`ScriptedProvider`] that replays canned turns from a JSON5 script, for demos
//!   and tests without any account;
//! - building every configured provider from `models.providers` and resolving model references
//!   through the config crate's one parser to a provider and its wire model id (R-13, L14:
//!   [`ProviderRegistry`]).
//!
//! Configuration, `models.providers.<id>` in `openclaw.json` (a relative `script` path is
//! relative to [`RegistryContext::base_dir`]; without `apiKey`, `<ID>_API_KEY` is read):
//! ```json5
//! { models: { providers: {
//!   anthropic: { api: "anthropic-messages", baseUrl: "https://api.anthropic.com", apiKey: "${ANTHROPIC_API_KEY}",
//!                models: [{ id: "claude-3-5-haiku-latest", maxTokens: 8192, reasoning: false }] },
//!   openai:    { api: "openai-responses", baseUrl: "https://api.openai.com/v1" },
//!   ollama:    { api: "openai-completions", baseUrl: "http://127.0.0.1:11434/v1", models: [{ id: "qwen3:8b" }],
//!                timeouts: { connectSeconds: 5, firstByteSeconds: 120, idleSeconds: 120 } },
//!   scripted:  { api: "scripted", script: "demo-script.json5", models: [{ id: "demo" }] },
//! } } }
//! ```
//!
//! Reply timestamps come from the [`openclaw_transcript::Clock`] each provider is built with,
//! read when the request starts.
//!
//! What it is not for: the agent loop, prompts, tools, tool-call/result pairing repair (the loop
//! does that at its one choke point before calling [`ModelProvider::complete`]), fallbacks to
//! other models, or persisting anything. It never logs an API key.

mod anthropic;
mod body;
mod chat_completions;
mod credentials;
mod error;
mod excerpt;
mod http_provider;
mod openai_responses;
mod provider;
mod registry;
mod reply;
mod request;
#[cfg(test)]
mod request_bytes;
mod retry;
mod scripted;
mod sse;
mod timeouts;
mod transport;
mod usage;

pub use anthropic::{
    ANTHROPIC_VERSION, AnthropicMessages, AnthropicWire, DEFAULT_ANTHROPIC_MAX_TOKENS,
};
pub use chat_completions::{ChatCompletions, ChatWire};
pub use credentials::{ApiKey, provider_secrets, resolve_api_key, resolve_provider_key};
pub use error::ProviderError;
pub use http_provider::HttpProvider;
pub use openai_responses::{OpenAiResponses, ResponsesWire};
pub use provider::ModelProvider;
pub use registry::{ProviderRegistry, RegistryContext, ResolvedModel, WireIdRule};
pub use request::{
    InvalidArguments, ModelRequest, StreamEvent, SystemPrompt, ToolSchema, ToolSpec,
    reasoning_effort, tool_arguments,
};
pub use retry::{RetryPolicy, complete_with_retry};
pub use scripted::{DEMO_SCRIPT, ScriptedProvider};
pub use timeouts::HttpSettings;
pub use transport::{Auth, Endpoint, HttpClient};

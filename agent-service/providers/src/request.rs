//! What the agent loop hands a provider, and what a provider streams back while it answers.

use openclaw_transcript::{Message, ToolCall, Usage};
use serde_json::Value;

/// One model call: everything a provider needs to build its wire request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// The wire model id, already mapped from the model reference by the provider's rule
    /// ([`crate::ResolvedModel::wire_model`], L14).
    pub model: String,
    /// The system prompt, split at the prompt-cache boundary.
    pub system: SystemPrompt,
    /// The conversation so far, tool calls already paired with their results by the loop.
    pub messages: Vec<Message>,
    /// Tools the model may call, in the order they are sent.
    pub tools: Vec<ToolSpec>,
    /// Output token limit; `None` leaves it to the API (Anthropic, which requires one, gets
    /// [`crate::DEFAULT_ANTHROPIC_MAX_TOKENS`]).
    pub max_output_tokens: Option<u32>,
    /// Reasoning effort (`minimal`, `low`, `medium`, `high`); `None` or `off` sends none.
    pub reasoning_effort: Option<String>,
}

/// The system prompt split at the prompt-cache boundary (P-24).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPrompt {
    /// Everything above the boundary: identical across turns, so caches can reuse it.
    pub stable: String,
    /// Everything below the boundary: per-turn sections.
    pub dynamic: String,
}

impl SystemPrompt {
    /// The whole prompt for APIs with a single system text: `stable + "\n\n" + dynamic`, or the
    /// one part that is non-empty. The stable part stays a byte prefix, so prefix caches still
    /// hit.
    pub fn joined(&self) -> String {
        match (self.stable.is_empty(), self.dynamic.is_empty()) {
            (_, true) => self.stable.clone(),
            (true, false) => self.dynamic.clone(),
            (false, false) => format!("{}\n\n{}", self.stable, self.dynamic),
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSpec {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// Something the model produced, sent to the caller as soon as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Visible text.
    TextDelta(String),
    /// Reasoning text.
    ThinkingDelta(String),
    /// The model started a tool call; its arguments are still streaming.
    ToolCallStarted {
        /// The call id that the tool result must echo.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A tool call whose arguments are complete and parsed as JSON. Sent once per call; a call
    /// whose stream broke off is never sent.
    ToolCallFinished(ToolCall),
    /// Token usage of the whole reply, sent once, just before the reply completes.
    Usage(Usage),
}

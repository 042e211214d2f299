//! The tool interface the agent loop calls, and what a call returns.

use async_trait::async_trait;
use serde_json::Value;

use crate::context::ToolContext;

/// One tool the model can call.
///
/// A tool never panics and never fails the session: every problem becomes a
/// [`ToolOutcome::Error`] (told to the model, the turn continues) or, when the run must stop,
/// a [`ToolOutcome::EndTurn`].
///
/// Under one config a tool's name stands for one definition: [`Tool::description`] and
/// [`Tool::parameters`] depend on nothing but the tool and the config, because the runtime
/// encodes them once per config load ([`crate::SpecCache`]) and shows every run that text.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls the tool by (lowercase, stable).
    fn name(&self) -> &'static str;
    /// What the tool does, for the model's tool schema.
    fn description(&self) -> String;
    /// The JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// Runs the tool. Arguments that do not match [`Tool::parameters`] give a
    /// [`ToolOutcome::Error`] naming the field.
    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome;
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// Success: `text` goes to the model; `details` is structured data for events and UIs.
    Ok {
        /// The result as the model sees it.
        text: String,
        /// Structured data about the result (never sent to the model by this crate).
        details: Option<Value>,
    },
    /// A failure told to the model as an error result; the turn continues.
    Error {
        /// The error as the model sees it.
        text: String,
    },
    /// The run must stop (cancelled, or a fatal condition); `text` is recorded as the result.
    EndTurn {
        /// Why the turn ended.
        text: String,
    },
}

impl ToolOutcome {
    /// The text the model sees, whichever kind of outcome it is.
    pub fn text_mut(&mut self) -> &mut String {
        match self {
            ToolOutcome::Ok { text, .. }
            | ToolOutcome::Error { text }
            | ToolOutcome::EndTurn { text } => text,
        }
    }

    /// A success without details.
    pub fn ok(text: impl Into<String>) -> Self {
        ToolOutcome::Ok {
            text: text.into(),
            details: None,
        }
    }

    /// A success with structured details.
    pub fn ok_with(text: impl Into<String>, details: Value) -> Self {
        ToolOutcome::Ok {
            text: text.into(),
            details: Some(details),
        }
    }

    /// An error result for the model.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutcome::Error { text: text.into() }
    }

    /// The text the model sees, whichever the variant.
    pub fn text(&self) -> &str {
        match self {
            ToolOutcome::Ok { text, .. }
            | ToolOutcome::Error { text }
            | ToolOutcome::EndTurn { text } => text,
        }
    }

    /// Whether the model is told this is an error (an [`ToolOutcome::EndTurn`] counts).
    pub fn is_error(&self) -> bool {
        !matches!(self, ToolOutcome::Ok { .. })
    }

    /// The structured details of a success.
    pub fn details(&self) -> Option<&Value> {
        match self {
            ToolOutcome::Ok { details, .. } => details.as_ref(),
            ToolOutcome::Error { .. } | ToolOutcome::EndTurn { .. } => None,
        }
    }
}

impl<T: Into<ToolOutcome>> From<Result<ToolOutcome, T>> for ToolOutcome {
    fn from(result: Result<ToolOutcome, T>) -> Self {
        result.unwrap_or_else(Into::into)
    }
}

//! The mapping's one error type.

use prompt_render::RenderError;

/// Why a Codex turn could not be mapped. Every variant names the offending
/// request field (for example `dynamic_tools[2].json_schema`); fields of the
/// shared render inputs carry the `base.` prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodexError {
    /// A Codex-specific field holds a value that cannot be mapped.
    #[error("{field}: {reason}")]
    InvalidArgument {
        /// Request field path.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The shared render inputs were refused by the renderer's validation.
    #[error("base.{0}")]
    Base(#[from] RenderError),
    /// A Codex model catalog (`models_cache.json`) or the model-prompt
    /// fixture made from one is unusable. Only the snapshot tool reads them.
    #[error("model catalog: {0}")]
    Catalog(String),
}

impl CodexError {
    /// Shorthand for [`CodexError::InvalidArgument`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The offending field path.
    pub fn field(&self) -> String {
        match self {
            Self::InvalidArgument { field, .. } => field.clone(),
            Self::Base(error) => format!("base.{}", error.field()),
            Self::Catalog(_) => "catalog".to_owned(),
        }
    }
}

//! The renderer's one error type.

/// Why a render request was refused. Every variant names the offending field
/// using the request's field path (for example `context_files[2].path`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A field holds a value the renderer cannot accept.
    #[error("{field}: {reason}")]
    InvalidArgument {
        /// Request field path.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl RenderError {
    /// Shorthand for [`RenderError::InvalidArgument`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The offending field path.
    pub fn field(&self) -> &str {
        match self {
            Self::InvalidArgument { field, .. } => field,
        }
    }
}

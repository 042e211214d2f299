//! The server's error type and its one mapping onto gRPC status codes.

use prompt_codex::CodexError;
use prompt_render::RenderError;
use tonic::Status;

/// Everything a PromptService call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A request field is invalid.
    #[error("{field}: {reason}")]
    InvalidArgument {
        /// Request field path.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The renderer refused the input.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The `openclaw.json` text is invalid; every problem is listed.
    #[error("config_json5: {0}")]
    Config(#[from] openclaw_config::ConfigError),
    /// The requested agent is not configured.
    #[error("agent_id: no agent {0:?} in the config")]
    UnknownAgent(String),
    /// The Codex mapping refused the request.
    #[error(transparent)]
    Codex(#[from] CodexError),
}

impl ServerError {
    /// Shorthand for [`ServerError::InvalidArgument`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The same error with the field path placed under `parent` (for
    /// messages converted as part of a larger request).
    pub fn within(self, parent: &str) -> Self {
        match self {
            Self::InvalidArgument { field, reason } => Self::InvalidArgument {
                field: format!("{parent}.{field}"),
                reason,
            },
            // These name their own fields (or none); listed so that a new
            // variant has to decide.
            other
            @ (Self::Render(_) | Self::Config(_) | Self::UnknownAgent(_) | Self::Codex(_)) => other,
        }
    }
}

impl From<ServerError> for Status {
    fn from(error: ServerError) -> Self {
        use openclaw_config::ConfigError as C;
        let message = error.to_string();
        match error {
            ServerError::InvalidArgument { .. } | ServerError::Render(_) => {
                Status::invalid_argument(message)
            }
            ServerError::Config(C::Invalid(_) | C::Duration { .. } | C::ModelRef { .. }) => {
                Status::invalid_argument(message)
            }
            ServerError::UnknownAgent(_) | ServerError::Config(C::UnknownAgent(_)) => {
                Status::not_found(message)
            }
            ServerError::Config(C::Schema(detail)) => {
                tracing::error!(%detail, "config schema unusable");
                Status::internal("internal error while validating the config")
            }
            ServerError::Codex(CodexError::InvalidArgument { .. } | CodexError::Base(_)) => {
                Status::invalid_argument(message)
            }
            // Only the snapshot tool reads model catalogs; a catalog error
            // here would be a bug.
            ServerError::Codex(CodexError::Catalog(detail)) => {
                tracing::error!(%detail, "unexpected model catalog error");
                Status::internal("internal error while mapping the Codex turn")
            }
        }
    }
}

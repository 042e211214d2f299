//! The server's error type and its one mapping onto gRPC status codes.

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
}

impl ServerError {
    /// Shorthand for [`ServerError::InvalidArgument`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
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
        }
    }
}

//! The crate's single error type, and how each error reaches the model.

use crate::tool::ToolOutcome;

/// Everything a tool can fail with. Every variant except [`ToolError::Cancelled`] is told to
/// the model as an error result and the turn continues; `Cancelled` ends the turn.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not match the tool's schema; `detail` names the field.
    #[error("invalid arguments for {tool}: {detail}")]
    InvalidArguments {
        /// The tool's name.
        tool: &'static str,
        /// What is wrong, starting with the field's path when there is one.
        detail: String,
    },
    /// A path leaves the workspace (or would write through a link). The text starts with
    /// "permission denied" so the model cannot mistake it for a missing file.
    #[error("{0}")]
    PermissionDenied(String),
    /// A file, process or config key that does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A request that is understood but refused or impossible: an ambiguous edit, a patch
    /// whose context does not match, a protected config key, a command that timed out.
    #[error("{0}")]
    Failed(String),
    /// The run was cancelled while the tool was working; the turn must stop.
    #[error("{0}")]
    Cancelled(String),
    /// A bug or an environment failure (a worker task died, a pipe could not be created).
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    /// A [`ToolError::Failed`] from anything printable.
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }
}

impl From<ToolError> for ToolOutcome {
    fn from(error: ToolError) -> Self {
        match error {
            ToolError::Cancelled(text) => ToolOutcome::EndTurn { text },
            ToolError::InvalidArguments { .. }
            | ToolError::PermissionDenied(_)
            | ToolError::NotFound(_)
            | ToolError::Failed(_)
            | ToolError::Internal(_) => ToolOutcome::Error {
                text: error.to_string(),
            },
        }
    }
}

impl From<openclaw_workspace::Error> for ToolError {
    fn from(error: openclaw_workspace::Error) -> Self {
        use openclaw_workspace::Error as W;
        match error {
            // The workspace crate's message already reads "permission denied for <path>: why".
            W::PathDenied { .. } => ToolError::PermissionDenied(error.to_string()),
            W::NotFound { .. } => ToolError::NotFound(error.to_string()),
            W::NotAFile { .. } | W::InvalidPath { .. } | W::Io { .. } => {
                ToolError::Failed(error.to_string())
            }
            W::RelativeWorkspace { .. }
            | W::WorkspaceVanished { .. }
            | W::StateFile { .. }
            | W::ClockOutOfRange => ToolError::Internal(error.to_string()),
        }
    }
}

/// Runs blocking filesystem or config work off the async threads.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Internal(format!("a worker task failed: {e}")))?
}

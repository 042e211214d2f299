//! The runtime's one error type. Each variant maps to exactly one gRPC status
//! in the server (see agent-server's error mapping).

/// Everything a runtime operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A request field is invalid.
    #[error("{field}: {reason}")]
    InvalidArgument {
        /// Field path.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// No such agent.
    #[error("agent_id: no agent {0:?} is configured")]
    UnknownAgent(String),
    /// No such session.
    #[error("session: {0}")]
    SessionNotFound(String),
    /// A path outside the workspace, or a refused sender.
    #[error("{0}")]
    PermissionDenied(String),
    /// The service cannot act in its current state (for example the config
    /// file is invalid; every problem is listed).
    #[error("{0}")]
    FailedPrecondition(String),
    /// Past capacity.
    #[error("{0}")]
    ResourceExhausted(String),
    /// The model provider refused a request as longer than its context
    /// window. Kept apart from [`RuntimeError::ResourceExhausted`] so the run
    /// can compact and retry; clients see RESOURCE_EXHAUSTED.
    #[error("{0}")]
    ContextOverflow(String),
    /// A dependency (prompt-service, a model provider) is unreachable.
    #[error("{0}")]
    Unavailable(String),
    /// The run was aborted (interrupted by a newer message, or shutdown).
    #[error("{0}")]
    Aborted(String),
    /// A bug or an unexpected I/O failure; the detail is logged, not sent.
    #[error("internal error: {0}")]
    Internal(String),
}

impl RuntimeError {
    /// Shorthand for [`RuntimeError::InvalidArgument`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl From<openclaw_transcript::Error> for RuntimeError {
    fn from(error: openclaw_transcript::Error) -> Self {
        use openclaw_transcript::Error as E;
        let message = error.to_string();
        match error {
            E::InvalidName { field, .. } => Self::invalid(field.replace(' ', "_"), message),
            // Another process holds the session: a state conflict, not a bug.
            E::Locked { .. } => Self::FailedPrecondition(format!(
                "{message}; is another agent-service using this state directory?"
            )),
            E::NotFound { .. } => Self::SessionNotFound(message),
            E::EntryTooLarge { .. } => Self::ResourceExhausted(message),
            E::AlreadyExists { .. }
            | E::ShortWrite { .. }
            | E::Poisoned { .. }
            | E::CorruptIndex { .. }
            | E::Encode(_)
            | E::Io { .. } => Self::Internal(message),
        }
    }
}

//! The runtime's one error type and the one table of its status codes
//! ([`RuntimeError::code`]): the server's gRPC statuses and the error events of
//! a run's stream both take their code from it.

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
    /// No such thing of another kind (a cron job, ...); the message names it.
    #[error("{0}")]
    NotFound(String),
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
    /// The model provider refused a request for something in it (HTTP 400 or 422: an image it
    /// cannot read, a field too long, a content policy). Kept apart from
    /// [`RuntimeError::FailedPrecondition`] so the run can check whether the newest message is
    /// the cause; clients see FAILED_PRECONDITION.
    #[error("{0}")]
    ProviderRefused(String),
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

/// The status code of a runtime error, numbered as gRPC numbers its codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    /// A request field is invalid.
    InvalidArgument = 3,
    /// No such agent or session.
    NotFound = 5,
    /// Refused for this caller or path.
    PermissionDenied = 7,
    /// Past capacity or a limit (including a context window).
    ResourceExhausted = 8,
    /// Not possible in the current state.
    FailedPrecondition = 9,
    /// The run was aborted.
    Aborted = 10,
    /// A bug or an unexpected failure.
    Internal = 13,
    /// A dependency is unreachable.
    Unavailable = 14,
}

impl ErrorCode {
    /// Every code, in numeric order.
    pub const ALL: [Self; 8] = [
        Self::InvalidArgument,
        Self::NotFound,
        Self::PermissionDenied,
        Self::ResourceExhausted,
        Self::FailedPrecondition,
        Self::Aborted,
        Self::Internal,
        Self::Unavailable,
    ];

    /// The gRPC name (`INVALID_ARGUMENT`, ...), as error events carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::NotFound => "NOT_FOUND",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Aborted => "ABORTED",
            Self::Internal => "INTERNAL",
            Self::Unavailable => "UNAVAILABLE",
        }
    }

    /// The gRPC code number.
    pub fn number(self) -> i32 {
        self as i32
    }
}

impl RuntimeError {
    /// The status code of this error: the one table the gRPC mapping and the
    /// stream's error events share.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            Self::UnknownAgent(_) | Self::SessionNotFound(_) | Self::NotFound(_) => {
                ErrorCode::NotFound
            }
            Self::PermissionDenied(_) => ErrorCode::PermissionDenied,
            Self::FailedPrecondition(_) | Self::ProviderRefused(_) => ErrorCode::FailedPrecondition,
            Self::ResourceExhausted(_) | Self::ContextOverflow(_) => ErrorCode::ResourceExhausted,
            Self::Unavailable(_) => ErrorCode::Unavailable,
            Self::Aborted(_) => ErrorCode::Aborted,
            Self::Internal(_) => ErrorCode::Internal,
        }
    }

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
            // A file this release cannot read: the state is the operator's to resolve.
            E::UnsupportedVersion { .. } => Self::FailedPrecondition(message),
            E::AlreadyExists { .. }
            | E::ShortWrite { .. }
            | E::Poisoned { .. }
            | E::CorruptIndex { .. }
            | E::Encode(_)
            | E::Io { .. } => Self::Internal(message),
        }
    }
}

/// A prompt source failure: unreachable is UNAVAILABLE, a refused request INTERNAL (the
/// runtime built it).
impl From<prompt_client::PromptError> for RuntimeError {
    fn from(error: prompt_client::PromptError) -> Self {
        match error {
            prompt_client::PromptError::Unavailable(m) => Self::Unavailable(m),
            prompt_client::PromptError::Refused(m) => Self::Internal(m),
        }
    }
}

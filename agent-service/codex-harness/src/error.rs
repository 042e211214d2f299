//! The crate's one error type.

use std::path::PathBuf;

/// Why the harness could not run a turn. A turn that ran and then failed,
/// was interrupted or lost its process is not an error: it comes back as a
/// [`TurnOutcome`](crate::TurnOutcome) with its status, so the entries it
/// produced can still be written.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The Codex executable could not be started.
    #[error(
        "could not start {command} (runtime.codex.command; the default is `codex` on PATH): {source}"
    )]
    Spawn {
        /// The executable.
        command: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The configured `codexHome` does not exist and cannot be created.
    #[error("cannot create the Codex home {} (runtime.codex.codexHome): {source}", path.display())]
    CodexHome {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The app-server reported a version outside the supported range.
    #[error(
        "{command} is Codex {found}, but this build supports Codex {supported} only; install a supported release (for example `npm install -g @openai/codex@0.169.0`)"
    )]
    UnsupportedVersion {
        /// The executable.
        command: PathBuf,
        /// The version it reported.
        found: String,
        /// The supported range, for the message.
        supported: &'static str,
    },
    /// The app-server's version could not be read at all.
    #[error("could not tell which Codex version {command} is: {detail}")]
    UnknownVersion {
        /// The executable.
        command: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The app-server process exited or closed its output.
    #[error("the Codex app-server exited: {detail}")]
    ProcessExited {
        /// Exit status and the end of its stderr.
        detail: String,
    },
    /// A request to the app-server got a JSON-RPC error back.
    #[error("Codex {method} failed ({code}): {message}")]
    Rpc {
        /// The method that was called.
        method: String,
        /// JSON-RPC error code (`-32600` for invalid params and unknown methods).
        code: i64,
        /// The server's message.
        message: String,
    },
    /// A request to the app-server got no answer in time: the app-server is taken for hung,
    /// killed, and replaced on the next turn.
    #[error(
        "the Codex app-server stopped answering: {method} got no answer within {seconds} s; \
         it was killed, and the next turn starts a new one"
    )]
    Timeout {
        /// The method that was called.
        method: String,
        /// The limit.
        seconds: u64,
    },
    /// The app-server answered with something the harness cannot use.
    #[error("Codex {method} returned an unexpected result: {detail}")]
    Protocol {
        /// The method (or notification) concerned.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// The caller's input cannot be used (the field is named).
    #[error("{field}: {reason}")]
    InvalidInput {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The session's transcript could not be read for a new thread's
    /// projection (no thread was started).
    #[error("cannot read the session's transcript for the new Codex thread: {detail}")]
    History {
        /// Why.
        detail: String,
    },
    /// A turn is already running on this thread.
    #[error("a turn is already running on Codex thread {thread_id}")]
    TurnActive {
        /// The thread.
        thread_id: String,
    },
    /// No turn is running on the thread (steer or interrupt came too late).
    #[error("no turn is running on Codex thread {thread_id}")]
    NoActiveTurn {
        /// The thread.
        thread_id: String,
    },
    /// The runner was shut down.
    #[error("the Codex runner has been shut down")]
    ShutDown,
}

impl HarnessError {
    pub(crate) fn protocol(method: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Protocol {
            method: method.into(),
            detail: detail.into(),
        }
    }
}

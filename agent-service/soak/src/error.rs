//! Why a soak could not run to its report. Findings about the services
//! (lost messages, torn lines, unclean exits) are not errors: they are in the
//! [`crate::Report`].

use std::path::PathBuf;

/// A soak that could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    /// A service binary is missing.
    #[error(
        "{0} does not exist: build the servers first (cargo build -p prompt-server -p agent-server), or pass its path"
    )]
    MissingBinary(PathBuf),
    /// A file or directory operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// A service did not start, or could not be stopped.
    #[error("{service}: {reason}")]
    Service {
        /// `prompt-service` or `agent-service`.
        service: &'static str,
        /// What went wrong, with the tail of its log when it helps.
        reason: String,
    },
    /// A call the soak itself depends on (setup, the final transcript read)
    /// failed.
    #[error("{what}: {status}")]
    Rpc {
        /// The call.
        what: String,
        /// The status.
        status: Box<tonic::Status>,
    },
    /// A transcript or the session index could not be read at all (damaged
    /// lines are findings, not errors).
    #[error("{path}: {source}")]
    Transcript {
        /// The file.
        path: PathBuf,
        /// The error.
        source: openclaw_transcript::Error,
    },
    /// The pinned Codex could not be installed (the Codex runtime needs it).
    #[error("installing the pinned Codex: {0}")]
    Codex(#[source] codex_peer::PeerError),
    /// The options do not make a soak.
    #[error("invalid option: {0}")]
    Invalid(String),
}

impl SoakError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }

    pub(crate) fn rpc(what: impl Into<String>) -> impl FnOnce(tonic::Status) -> Self {
        let what = what.into();
        move |status| Self::Rpc {
            what,
            status: Box::new(status),
        }
    }
}

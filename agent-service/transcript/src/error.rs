//! The crate's single error type.

use std::io;
use std::path::{Path, PathBuf};

/// Everything that can go wrong in this crate.
///
/// Damaged transcript *content* is not an error: torn tails and bad lines are reported in
/// [`crate::LoadReport`] and [`crate::TailRepair`] so that a session always loads.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An agent id, session key or session id failed validation before any path was built.
    #[error("invalid {field} {value:?}: {reason}")]
    InvalidName {
        /// Which kind of name: "agent id", "session key" or "session id".
        field: &'static str,
        /// The rejected value.
        value: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// Another process (or another handle in this process) holds the transcript's writer lock.
    #[error("transcript {path} is locked by another writer")]
    Locked {
        /// The locked transcript.
        path: PathBuf,
    },
    /// `create` found a transcript already at the path.
    #[error("transcript {path} already exists")]
    AlreadyExists {
        /// The existing transcript.
        path: PathBuf,
    },
    /// The transcript does not exist.
    #[error("transcript {path} not found")]
    NotFound {
        /// The missing transcript.
        path: PathBuf,
    },
    /// An entry serialises to a line longer than the configured line limit; readers would
    /// skip it, so it is refused instead of written.
    #[error("entry of {len} bytes exceeds the line limit of {max} bytes")]
    EntryTooLarge {
        /// Encoded length including the newline.
        len: usize,
        /// The limit in force.
        max: usize,
    },
    /// The kernel accepted only part of a line; the file was truncated back to its previous end.
    #[error("short write to {path}: {written} of {expected} bytes (rolled back)")]
    ShortWrite {
        /// The transcript.
        path: PathBuf,
        /// Bytes the kernel accepted.
        written: usize,
        /// Bytes in the line.
        expected: usize,
    },
    /// A failed write could not be rolled back; the writer refuses further appends. Reopening
    /// the transcript repairs the tail.
    #[error("writer for {path} is poisoned after a failed rollback; reopen it to repair")]
    Poisoned {
        /// The transcript.
        path: PathBuf,
    },
    /// `sessions.json` exists but is not a JSON object; see [`crate::SessionStore::rebuild_index`].
    #[error("session index {path} is corrupt: {reason}")]
    CorruptIndex {
        /// The index file.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// The transcript's header names a format version this crate does not read.
    #[error("transcript {path} has format version {version}: {reason}")]
    UnsupportedVersion {
        /// The transcript.
        path: PathBuf,
        /// The version its header names.
        version: u32,
        /// Why it is not read.
        reason: String,
    },
    /// Serialising an entry, header or index failed.
    #[error("failed to encode JSON: {0}")]
    Encode(#[source] serde_json::Error),
    /// An I/O operation on `path` failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Shorthand for this crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps an `io::Error` with the path it happened on (`map_err(io_at(path))`).
pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

//! The crate's one error type.

/// What indexing or searching memory can fail with.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A `memorySearch` setting cannot be used; the message names the key.
    #[error("{0}")]
    Config(String),
    /// The embeddings endpoint failed or answered something that is not embeddings.
    #[error("embeddings from {provider}: {message}")]
    Embeddings {
        /// The provider id.
        provider: String,
        /// What went wrong (status and the start of the body, or the transport error).
        message: String,
    },
    /// The index database failed (corruption is handled before this is returned).
    #[error("memory index {path}: {source}")]
    Index {
        /// The database file.
        path: String,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A filesystem error outside the workspace's memory files (the index directory).
    #[error("memory index directory {path}: {source}")]
    Io {
        /// The directory or file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A worker thread failed.
    #[error("internal error: {0}")]
    Internal(String),
}

//! The crate's single error type.

use std::path::PathBuf;

/// A failure of discovery as a whole. Problems with individual roots, directories and skills
/// are not errors: they are reported in [`crate::Discovery::skipped`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An input path that must be absolute is relative; discovery does not guess what it is
    /// relative to.
    #[error("{field} must be an absolute path, got {path:?}")]
    RelativePath {
        /// Which input: "workspace", "home_dir", "state_dir", "bundled_dir" or "plugin_roots".
        field: &'static str,
        /// The path as given.
        path: PathBuf,
    },
}

//! The crate's single error type.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Everything that can go wrong in this crate.
///
/// How a server maps it: [`Error::PathDenied`] is PermissionDenied, [`Error::InvalidPath`]
/// and [`Error::RelativeWorkspace`] are InvalidArgument, [`Error::NotFound`] is NotFound,
/// [`Error::NotAFile`] is FailedPrecondition, [`Error::WorkspaceVanished`] and
/// [`Error::StateFile`] are FailedPrecondition (the user must act), the rest are Internal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path was refused because it leaves the workspace (or would write through a link).
    #[error("permission denied for {}: {reason}", path.display())]
    PathDenied {
        /// The path as requested.
        path: PathBuf,
        /// Which rule refused it.
        reason: DenyReason,
    },
    /// A path was malformed before any filesystem access.
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath {
        /// The path as requested, lossily decoded.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The configured workspace path is relative; the caller must resolve it first, so that the
    /// proof marker never depends on the process's working directory.
    #[error("workspace path {} must be absolute", path.display())]
    RelativeWorkspace {
        /// The path as configured.
        path: PathBuf,
    },
    /// A path inside the workspace does not exist.
    #[error("{} not found", path.display())]
    NotFound {
        /// The path as requested.
        path: PathBuf,
    },
    /// A path exists but is not a regular file (a directory, FIFO, socket or device).
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The path as requested.
        path: PathBuf,
    },
    /// A workspace proven within the last 24 hours is missing, empty or shows none of its
    /// content; seeding it again would silently restart onboarding over lost data.
    #[error(
        "workspace {} was in use within the last 24 hours but {condition}; refusing to seed a \
         fresh workspace over it. Restore the workspace from a backup, or run a full reset to \
         start over: it removes the proof marker {} and moves what is left of the workspace aside.",
        workspace.display(),
        marker.display()
    )]
    WorkspaceVanished {
        /// The workspace as configured.
        workspace: PathBuf,
        /// The proof marker that remembers it.
        marker: PathBuf,
        /// What was found instead of the workspace.
        condition: VanishedCondition,
    },
    /// `<workspace>/.openclaw/workspace-state.json` exists but cannot be understood.
    #[error("cannot read workspace setup state {}: {source}", path.display())]
    StateFile {
        /// The state file.
        path: PathBuf,
        /// The decoding error.
        source: serde_json::Error,
    },
    /// `now` cannot be represented as a timestamp (before year -9999 or after 9999).
    #[error("the clock reading is outside the supported timestamp range")]
    ClockOutOfRange,
    /// An I/O error on a path this crate owns.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path being read, written or created.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

/// Why a path was refused by [`crate::Confined`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyReason {
    /// A relative path whose `..` components climb out of the workspace.
    ParentEscape,
    /// An absolute path outside the workspace.
    OutsideWorkspace,
    /// The path stays inside lexically but a symbolic link takes its real target outside.
    SymlinkEscape,
    /// A write would create a file through a symbolic link whose target does not exist.
    DanglingSymlink,
    /// A write through a final-component symbolic link, wherever it points
    /// (lesson L15c): the caller must name the real file.
    FinalSymlink,
    /// `~user` expansion, or `~` without a configured home directory.
    HomeExpansion,
    /// More than 40 symbolic links on the way (a loop, most likely).
    TooManySymlinks,
    /// The file changed between the check and the open (a symlink race).
    ChangedDuringOpen,
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DenyReason::ParentEscape => "`..` leads outside the workspace",
            DenyReason::OutsideWorkspace => "the path is outside the workspace",
            DenyReason::SymlinkEscape => "a symbolic link leads outside the workspace",
            DenyReason::DanglingSymlink => "refusing to write through a dangling symbolic link",
            DenyReason::FinalSymlink => {
                "refusing to write through a symbolic link; write to the file it points to instead"
            }
            DenyReason::HomeExpansion => "home-directory (`~`) paths are not allowed here",
            DenyReason::TooManySymlinks => "too many levels of symbolic links",
            DenyReason::ChangedDuringOpen => "the file changed while it was being opened",
        })
    }
}

/// What [`Error::WorkspaceVanished`] found at the workspace path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VanishedCondition {
    /// The directory does not exist.
    Missing,
    /// The directory exists and is empty.
    Empty,
    /// The directory has entries, but none of the workspace's files: no BOOTSTRAP.md, no
    /// customised or intact bootstrap file, no memory.
    NoUserContent,
}

impl fmt::Display for VanishedCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VanishedCondition::Missing => "it no longer exists",
            VanishedCondition::Empty => "it is now empty",
            VanishedCondition::NoUserContent => {
                "none of its bootstrap files or memory are there any more"
            }
        })
    }
}

/// This crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps an `io::Error` with the path it happened on.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

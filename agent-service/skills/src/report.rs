//! Everything discovery decided not to list, and why: collisions and skipped candidates.
//! Nothing is dropped silently (lesson L6: complete or honest).

use std::fmt;
use std::path::PathBuf;

use crate::gates::GateFailure;
use crate::roots::Root;

/// Two skills with the same name; the one from the higher-priority root (or, within a root,
/// the first in scan order) is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// The shared skill name.
    pub name: String,
    /// The skill that is listed.
    pub kept: SkillOrigin,
    /// The skill hidden by it.
    pub shadowed: SkillOrigin,
    /// Whether both resolve to the same file (one root links into another).
    pub same_file: bool,
}

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillOrigin {
    /// Absolute path of its SKILL.md.
    pub location: PathBuf,
    /// The root it was found under.
    pub root: Root,
}

/// A root, directory or skill that was not listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The directory, SKILL.md or configured path concerned.
    pub path: PathBuf,
    /// The skill's name when it was known.
    pub name: Option<String>,
    /// The root it belongs to; `None` for a configured path that never became a root.
    pub root: Option<Root>,
    /// Why.
    pub reason: SkipReason,
}

/// Why something was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// A configured path is relative; only absolute and `~/` paths are accepted.
    RelativePath {
        /// The config key it came from.
        setting: &'static str,
    },
    /// The root belongs to a plugin that is not enabled.
    PluginDisabled {
        /// The plugin id.
        plugin: String,
    },
    /// A configured root does not exist.
    RootMissing,
    /// A root, directory or SKILL.md could not be read.
    Unreadable {
        /// The I/O error.
        error: String,
    },
    /// A root or SKILL.md path is not what it should be (a root that is a file, a SKILL.md
    /// that is a directory).
    NotAFileOrDirectory,
    /// A directory or SKILL.md resolves (through a symlink) outside its root and outside
    /// `skills.load.allowSymlinkTargets`.
    SymlinkEscape {
        /// Where it resolves to.
        target: PathBuf,
    },
    /// A directory reached twice through symlinks inside the same root.
    AlreadyScanned {
        /// Its real path.
        target: PathBuf,
    },
    /// `maxCandidatesPerRoot` directories were already examined in this root.
    CandidateLimit {
        /// The limit in force.
        limit: u64,
    },
    /// `maxSkillsLoadedPerSource` skills were already loaded from this root.
    SkillLimit {
        /// The limit in force.
        limit: u64,
    },
    /// A grouping folder at the deepest allowed level still has subdirectories.
    DepthLimit {
        /// The deepest level scanned below the root.
        max_depth: usize,
    },
    /// SKILL.md is larger than `maxSkillFileBytes`.
    FileTooLarge {
        /// Its size in bytes (at least `limit + 1` when it grew while being read).
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// The frontmatter (or the file's encoding) could not be read.
    MalformedFrontmatter {
        /// What is wrong, with a line number when there is one.
        message: String,
    },
    /// The frontmatter has no `description`.
    MissingDescription,
    /// `skills.entries.<key>.enabled` is false.
    Disabled {
        /// The config entry key (skillKey or name).
        key: String,
    },
    /// A bundled skill not named in `skills.allowBundled`.
    BundledNotAllowed,
    /// A gate failed.
    Gate(GateFailure),
    /// The agent's skill allowlist does not name it.
    NotInAgentAllowlist,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RelativePath { setting } => {
                write!(
                    f,
                    "{setting} entry is relative; write an absolute or ~/ path"
                )
            }
            Self::PluginDisabled { plugin } => write!(f, "plugin {plugin} is not enabled"),
            Self::RootMissing => f.write_str("configured skills directory does not exist"),
            Self::Unreadable { error } => write!(f, "unreadable: {error}"),
            Self::NotAFileOrDirectory => f.write_str("not a directory or not a regular file"),
            Self::SymlinkEscape { target } => write!(
                f,
                "symlink leads outside its root to {} (not in skills.load.allowSymlinkTargets)",
                target.display()
            ),
            Self::AlreadyScanned { target } => {
                write!(f, "already scanned as {}", target.display())
            }
            Self::CandidateLimit { limit } => {
                write!(
                    f,
                    "over maxCandidatesPerRoot ({limit} directories examined)"
                )
            }
            Self::SkillLimit { limit } => {
                write!(f, "over maxSkillsLoadedPerSource ({limit} skills loaded)")
            }
            Self::DepthLimit { max_depth } => {
                write!(
                    f,
                    "subdirectories deeper than {max_depth} levels are not scanned"
                )
            }
            Self::FileTooLarge { size, limit } => {
                write!(
                    f,
                    "SKILL.md is {size} bytes, over maxSkillFileBytes ({limit})"
                )
            }
            Self::MalformedFrontmatter { message } => write!(f, "malformed frontmatter: {message}"),
            Self::MissingDescription => f.write_str("frontmatter has no description"),
            Self::Disabled { key } => write!(f, "skills.entries.{key}.enabled is false"),
            Self::BundledNotAllowed => f.write_str("bundled skill not in skills.allowBundled"),
            Self::Gate(failure) => write!(f, "{failure}"),
            Self::NotInAgentAllowlist => f.write_str("not in the agent's skills allowlist"),
        }
    }
}

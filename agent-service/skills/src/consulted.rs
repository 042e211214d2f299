//! What a discovery read, stamped, so a caller may keep the discovery and tell without
//! reading again whether a new one would find the same ([`Consulted`]).
//!
//! Every path discovery looks at is stamped just before it is read, following links as the
//! read does: each root, each directory it lists, each symbolic link among their
//! entries, each SKILL.md it loads, each allowed symlink target, and each file a gate probes
//! for a program on PATH. A stamp is what `stat` answers for the path: absent, failed (with
//! the error), or the object's device, inode, mode, owner, group, size, mtime and ctime in
//! nanoseconds. What each covers:
//! - a directory's mtime and ctime move when an entry is created, removed or renamed in it,
//!   which is how a new skill, a deleted one, a SKILL.md appearing in a grouping folder, or
//!   a link among the entries replaced becomes visible;
//! - a file's size, mtime and ctime move on every write (ctime also on chmod and on a
//!   rename over it, and no process can set it back), its inode when it is replaced;
//! - following links, a path whose link (or any link on its way) now leads elsewhere names
//!   another object, so another device and inode;
//! - a probed program file appearing, vanishing or losing its execute bit changes its stamp.
//!
//! Not covered: environment variables, the platform and the config, which callers key on
//! (they do not change under a running service without a new config).
//!
//! Timestamps are coarse (a kernel tick of a few milliseconds, whole seconds on some
//! filesystems): two writes of the same size within one tick leave equal stamps. So a
//! discovery may be kept only when every stamped time is older than the moment it began by
//! more than [`RACY_MARGIN`] ([`Consulted::settled_before`]), and only when the stamps taken
//! again after it are still equal ([`Consulted::still_holds`]): nothing changed while it ran.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How much older than the start of a discovery every stamped time must be for the discovery
/// to be kept: more than any filesystem's timestamp unit and the kernel clock's tick.
pub const RACY_MARGIN: Duration = Duration::from_secs(2);

/// The paths one discovery read, each with its stamp from just before the read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consulted {
    paths: Vec<(PathBuf, Stamp)>,
}

/// What `stat` answered for a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    Absent,
    /// Another error, by its OS error number.
    Failed(Option<i32>),
    Present {
        dev: u64,
        ino: u64,
        mode: u32,
        uid: u32,
        gid: u32,
        size: u64,
        /// Nanoseconds since the epoch.
        mtime: i128,
        /// Nanoseconds since the epoch.
        ctime: i128,
    },
}

impl Stamp {
    fn of(path: &Path) -> Self {
        match std::fs::metadata(path) {
            Ok(meta) => Self::present(&meta),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Self::Absent,
            Err(error) => Self::Failed(error.raw_os_error()),
        }
    }

    #[cfg(unix)]
    fn present(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self::Present {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size(),
            mtime: nanos(meta.mtime(), meta.mtime_nsec()),
            ctime: nanos(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Elsewhere there is no ctime to trust: the stamp never settles.
    #[cfg(not(unix))]
    fn present(_meta: &std::fs::Metadata) -> Self {
        Self::Failed(None)
    }
}

fn nanos(seconds: i64, nanoseconds: i64) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanoseconds)
}

impl Consulted {
    /// Stamps `path` now, before it is read.
    pub(crate) fn record(&mut self, path: &Path) {
        self.paths.push((path.to_path_buf(), Stamp::of(path)));
    }

    /// How many paths were stamped.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether no path was stamped.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Whether every path still stamps as it did: a discovery now would read the same.
    pub fn still_holds(&self) -> bool {
        self.paths
            .iter()
            .all(|(path, stamp)| Stamp::of(path) == *stamp)
    }

    /// Whether every stamped time is older than `began` (read before the discovery started)
    /// by more than [`RACY_MARGIN`], so a later change carries a later time.
    pub fn settled_before(&self, began: SystemTime) -> bool {
        if cfg!(not(unix)) {
            return false;
        }
        let Some(limit) = began
            .checked_sub(RACY_MARGIN)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        else {
            return false;
        };
        let limit = i128::try_from(limit.as_nanos()).unwrap_or(i128::MAX);
        self.paths.iter().all(|(_, stamp)| match stamp {
            Stamp::Absent | Stamp::Failed(_) => true,
            Stamp::Present { mtime, ctime, .. } => *mtime < limit && *ctime < limit,
        })
    }
}

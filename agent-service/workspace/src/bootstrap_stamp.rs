//! The validity key of a cached bootstrap load ([`crate::BootstrapCache`], lesson L16): a
//! [`Snapshot`] of the workspace root and of every watched name in it, and the rules that
//! decide when a snapshot may stand for what a fresh load would read.
//!
//! A snapshot is taken through one directory handle of the root, opened by the workspace path
//! as given: `fstat` of the handle, then `fstatat(handle, name, AT_SYMLINK_NOFOLLOW)` for each
//! bootstrap name (and the extra names the cache's caller depends on). What each field is for:
//! - the root's device and inode: the directory the path names now. A workspace renamed away
//!   and replaced, or a parent link pointed elsewhere, is another directory;
//! - the root's mode, owner and group: whether the service may open it at all;
//! - per name, absent or present: a file created, deleted or renamed away;
//! - device and inode: another file under the name (renamed over, deleted and created again,
//!   replaced by a hard link). An inode number can be reused once freed, which the times below
//!   tell apart;
//! - mode (file type and permission bits), owner and group: whether the name reads as a file,
//!   as a directory, FIFO or device, or as unreadable;
//! - size and mtime in nanoseconds: content written;
//! - ctime in nanoseconds: the kernel sets it on every change of content or metadata (a write,
//!   chmod, chown, a link added or removed, a rename) and no process can set it, so an edit
//!   whose mtime was put back (`touch -d`, a copy keeping times) still changes it.
//!
//! Not in the key: the root's own times. They change whenever any file is created in the root,
//! which would throw the entry away for files that are not bootstrap files; the names that
//! matter are stamped one by one instead.
//!
//! A name that is a symbolic link makes the workspace uncacheable: what the link leads to
//! depends on its target path and every directory on the way, which no stamp of the name
//! covers. Such a workspace is read fresh on every load, links checked as always. So is one
//! where a stamp fails for any reason other than "no such file".
//!
//! Timestamps are coarse. The kernel stamps files from a clock that advances in ticks of a few
//! milliseconds, and some filesystems keep whole seconds or two. Two writes of the same size in
//! one tick leave the same mtime and ctime: if the first was read and cached, the second would
//! look unchanged. So a snapshot stands for content only when every stamped time is older than
//! the moment the load began by more than [`RACY_MARGIN`]: any later change then carries a later
//! ctime. A file changed within the margin (or stamped in the future, by a skewed clock) is read
//! again on every load, and the load is not kept, until the file has aged. Limits, shared by
//! every cache of this kind: a wall clock stepped back by more than the margin, a network
//! filesystem whose server clock runs that far behind, and writes through a shared memory
//! mapping (the kernel updates their times late) can hide a change until the next one.
//!
//! A load also races with writers. It is kept only when the snapshots before and after it are
//! equal and each file's outcome agrees with its stamp (absent names not found, regular files
//! read, other types refused as not regular), so a name that came and went during the load is
//! never stored.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cap_std::fs::Dir;
use nix::errno::Errno;
use nix::fcntl::AtFlags;
use nix::sys::stat::{FileStat, SFlag, fstat, fstatat};

use crate::bootstrap_files::{BootstrapFile, MissingReason};
use crate::bootstrap_name::BootstrapName;

/// How much older than the start of a load every stamped time must be for the load to be
/// kept: more than any filesystem's timestamp unit and the kernel clock's tick.
pub const RACY_MARGIN: Duration = Duration::from_secs(2);

/// The root and every watched name, as `fstat`/`fstatat` see them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    root: Identity,
    /// One stamp per name: [`BootstrapName::LOAD_ORDER`], then the extra names that are not
    /// bootstrap names, in order.
    names: Vec<Stamp>,
}

/// Which file, of which type and permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    mode: u32,
    uid: u32,
    gid: u32,
}

/// What sits under one name in the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    Absent,
    Present {
        id: Identity,
        size: i64,
        /// Nanoseconds since the epoch.
        mtime: i128,
        /// Nanoseconds since the epoch.
        ctime: i128,
    },
}

impl Snapshot {
    /// The snapshot of `workspace` now, or `None` when its load cannot be cached: the root
    /// cannot be opened, a name is a symbolic link, or a stamp fails.
    pub(crate) fn take(workspace: &Path, extra_names: &[&str]) -> Option<Self> {
        let dir = Dir::open_ambient_dir(workspace, cap_std::ambient_authority()).ok()?;
        let root = Identity::of(&fstat(&dir).ok()?);
        let names = BootstrapName::LOAD_ORDER
            .iter()
            .map(|name| name.file_name())
            .chain(
                extra_names
                    .iter()
                    .copied()
                    .filter(|name| BootstrapName::from_file_name(name).is_none()),
            )
            .map(|name| stamp(&dir, name))
            .collect::<Option<Vec<_>>>()?;
        Some(Self { root, names })
    }

    /// Whether every stamped time is older than `began` (read before this snapshot was
    /// taken) by more than [`RACY_MARGIN`].
    pub(crate) fn settled_before(&self, began: SystemTime) -> bool {
        let Some(limit) = began
            .checked_sub(RACY_MARGIN)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        else {
            return false;
        };
        let limit = i128::try_from(limit.as_nanos()).unwrap_or(i128::MAX);
        self.names.iter().all(|stamp| match stamp {
            Stamp::Absent => true,
            Stamp::Present { mtime, ctime, .. } => *mtime < limit && *ctime < limit,
        })
    }

    /// Roughly the bytes this snapshot holds.
    pub(crate) fn approx_bytes(&self) -> usize {
        size_of::<Self>() + self.names.len() * size_of::<Stamp>()
    }

    /// Whether each loaded file's outcome is what its stamp says the name is.
    pub(crate) fn agrees_with(&self, files: &[BootstrapFile]) -> bool {
        BootstrapName::LOAD_ORDER
            .iter()
            .zip(&self.names)
            .all(|(name, stamp)| {
                let missing = files.iter().find(|f| f.name == *name).map(|f| f.missing);
                match stamp {
                    Stamp::Absent => matches!(missing, None | Some(Some(MissingReason::NotFound))),
                    Stamp::Present { id, .. } if id.is(SFlag::S_IFREG) => {
                        matches!(missing, Some(None | Some(MissingReason::Unreadable(_))))
                    }
                    Stamp::Present { .. } => {
                        matches!(missing, Some(Some(MissingReason::NotARegularFile)))
                    }
                }
            })
    }
}

impl Identity {
    fn of(stat: &FileStat) -> Self {
        Self {
            dev: stat.st_dev,
            ino: stat.st_ino,
            mode: stat.st_mode,
            uid: stat.st_uid,
            gid: stat.st_gid,
        }
    }

    fn is(&self, kind: SFlag) -> bool {
        self.mode & SFlag::S_IFMT.bits() == kind.bits()
    }
}

/// The stamp of `name` in `dir`, never following a link; `None` for a link or an error.
fn stamp(dir: &Dir, name: &str) -> Option<Stamp> {
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            let id = Identity::of(&stat);
            if id.is(SFlag::S_IFLNK) {
                return None;
            }
            Some(Stamp::Present {
                id,
                size: stat.st_size,
                mtime: nanos(stat.st_mtime, stat.st_mtime_nsec),
                ctime: nanos(stat.st_ctime, stat.st_ctime_nsec),
            })
        }
        Err(Errno::ENOENT) => Some(Stamp::Absent),
        Err(_) => None,
    }
}

fn nanos(seconds: i64, nanoseconds: i64) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanoseconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn present(mtime: i128, ctime: i128) -> Stamp {
        Stamp::Present {
            id: Identity {
                dev: 1,
                ino: 2,
                mode: SFlag::S_IFREG.bits() | 0o644,
                uid: 0,
                gid: 0,
            },
            size: 3,
            mtime,
            ctime,
        }
    }

    fn snapshot(names: Vec<Stamp>) -> Snapshot {
        let root = Identity {
            dev: 1,
            ino: 1,
            mode: SFlag::S_IFDIR.bits() | 0o755,
            uid: 0,
            gid: 0,
        };
        Snapshot { root, names }
    }

    #[test]
    fn only_times_older_than_the_margin_before_the_load_are_settled() {
        let began = UNIX_EPOCH + Duration::from_secs(100);
        let second = 1_000_000_000_i128;
        let old = 97 * second;
        assert!(snapshot(vec![Stamp::Absent, present(old, old)]).settled_before(began));
        // Exactly the margin is not older than it; a recent mtime or ctime alone is enough.
        assert!(!snapshot(vec![present(old, 98 * second)]).settled_before(began));
        assert!(!snapshot(vec![present(98 * second, old)]).settled_before(began));
        assert!(!snapshot(vec![present(old, 99 * second + 1)]).settled_before(began));
        // A time in the future (a skewed clock) is never settled.
        assert!(!snapshot(vec![present(old, 200 * second)]).settled_before(began));
        // A clock before the epoch settles nothing.
        assert!(!snapshot(vec![Stamp::Absent]).settled_before(UNIX_EPOCH));
    }

    #[test]
    fn the_file_type_is_read_from_the_mode() {
        let file = Identity {
            dev: 0,
            ino: 0,
            mode: SFlag::S_IFREG.bits() | 0o600,
            uid: 0,
            gid: 0,
        };
        assert!(file.is(SFlag::S_IFREG));
        assert!(!file.is(SFlag::S_IFLNK));
        let fifo = Identity {
            mode: SFlag::S_IFIFO.bits(),
            ..file
        };
        assert!(!fifo.is(SFlag::S_IFREG));
        assert!(fifo.is(SFlag::S_IFIFO));
    }
}

//! Who a root service's sandboxed commands are on the host, and handing them their files.
//!
//! bubblewrap started by root makes no user namespace of a non-root user: its commands would be
//! host uid 0 without capabilities, which the kernel exempts from the process limit
//! (`RLIMIT_NPROC`) and which reaches uid 0's kernel keyrings. So a root service starts every
//! sandboxed command as the [`SandboxUser`] (see [`crate::Isolation::command`]): bubblewrap
//! still builds the sandbox as root (so it can mount workspaces under directories only root may
//! enter, such as `/root/.openclaw`), keeps only `CAP_SETUID`/`CAP_SETGID` for its child, and
//! that child is util-linux's `setpriv`, which becomes the sandbox user and drops them; then
//! `unshare --user --map-current-user` puts the command in a user namespace of that user, whose
//! process count is the sandbox's own, before `prlimit` sets the limits in it.
//!
//! Files: the service writes into the session workspace as root (the file tools, the seeded
//! files), and the sandbox user could not change them. Before each command [`hand_over`] gives
//! every entry of the session workspace (and of an agent workspace mounted read-write) that the
//! service owns to the sandbox user. That is a privileged write into a tree the sandbox can
//! change while it runs, so it is done as a class of attack, "make root chown a file outside the
//! tree", would require:
//!
//! - every directory is opened from the tree's root with `openat2(RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)`, so a directory swapped for a symlink, or a path
//!   leading out of the tree or onto another mount, is not entered;
//! - every entry is changed relative to its directory's descriptor without following a final
//!   symlink (`fchownat(AT_SYMLINK_NOFOLLOW)`): a link is changed itself, never its target;
//! - a file with more than one hard link is left alone (it may be a name for a file outside;
//!   the sandbox cannot make such a link, the mounts stand between, but someone on the host
//!   could), and so is an entry on another device (a mount point);
//! - only entries the service owns change hands: files of other users keep their owner, and a
//!   tree whose top directory belongs to someone else is not touched at all.

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};
use nix::unistd::{Gid, Uid, fchownat};

use crate::engine::Unusable;

/// The host user and group a root service's sandboxed commands run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxUser {
    uid: u32,
    gid: u32,
}

impl SandboxUser {
    /// uid and gid 65532: the unprivileged `nonroot` user of distroless images. Not `nobody`
    /// (65534), whose files other daemons share and which is also the id a user namespace
    /// shows for every unmapped owner, so the sandbox's own files would look like root's.
    pub const DEFAULT: SandboxUser = SandboxUser {
        uid: 65532,
        gid: 65532,
    };

    /// A sandbox user; uid or gid 0 is refused (it is what this user exists to avoid).
    pub fn new(uid: u32, gid: u32) -> Result<Self, Unusable> {
        if uid == 0 || gid == 0 {
            return Err(Unusable(format!(
                "the sandbox user must not be root (uid {uid}, gid {gid})"
            )));
        }
        Ok(Self { uid, gid })
    }

    /// The host uid.
    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// The host gid.
    pub fn gid(&self) -> u32 {
        self.gid
    }
}

impl Default for SandboxUser {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Gives every entry under `root` (itself included) owned by `service` to `user`, as the
/// module docs describe. Entries that vanish or change kind during the walk are skipped.
pub(crate) fn hand_over(root: &Path, service: Uid, user: SandboxUser) -> Result<(), Unusable> {
    let fail = |what: &Path, e: Errno| {
        Unusable(format!(
            "cannot give {} to the sandbox user (uid {}): {e}",
            what.display(),
            user.uid
        ))
    };
    let top = Dir::open(root, directory_flags(), Mode::empty()).map_err(|e| fail(root, e))?;
    let top_stat = fstat(top.as_fd()).map_err(|e| fail(root, e))?;
    if top_stat.st_uid != service.as_raw() && top_stat.st_uid != user.uid {
        // Someone else's tree (an agent workspace of another user): its owner decides.
        return Ok(());
    }
    if top_stat.st_uid == service.as_raw() {
        nix::unistd::fchown(top.as_fd(), Some(user.owner()), Some(user.group()))
            .map_err(|e| fail(root, e))?;
    }
    let mut pending: Vec<PathBuf> = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let path = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &relative
        };
        let mut dir = match open_beneath(&top, path) {
            Ok(dir) => dir,
            // Replaced by a link, moved or removed since it was listed: not ours to follow.
            Err(Errno::ENOENT | Errno::ELOOP | Errno::ENOTDIR | Errno::EXDEV) => continue,
            Err(e) => return Err(fail(&root.join(&relative), e)),
        };
        let names: Vec<Vec<u8>> = dir
            .iter()
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_bytes().to_vec())
            .filter(|name| !matches!(name.as_slice(), b"." | b".."))
            .collect();
        for name in names {
            let name = OsStr::from_bytes(&name);
            let stat = match fstatat(dir.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::ENOENT) => continue,
                Err(e) => return Err(fail(&root.join(&relative).join(name), e)),
            };
            if stat.st_dev != top_stat.st_dev {
                continue;
            }
            let is_dir = kind(&stat) == SFlag::S_IFDIR;
            if stat.st_uid == service.as_raw() && (is_dir || stat.st_nlink <= 1) {
                match fchownat(
                    dir.as_fd(),
                    name,
                    Some(user.owner()),
                    Some(user.group()),
                    AtFlags::AT_SYMLINK_NOFOLLOW,
                ) {
                    Ok(()) | Err(Errno::ENOENT) => {}
                    Err(e) => return Err(fail(&root.join(&relative).join(name), e)),
                }
            }
            if is_dir {
                pending.push(relative.join(name));
            }
        }
    }
    Ok(())
}

impl SandboxUser {
    fn owner(&self) -> Uid {
        Uid::from_raw(self.uid)
    }

    fn group(&self) -> Gid {
        Gid::from_raw(self.gid)
    }
}

/// The file type bits of a stat.
fn kind(stat: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits())
}

/// A directory opened for listing, never through a final symlink.
fn directory_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Opens the directory `path` beneath `base` with no symlink, `..` escape or mount crossing on
/// the way.
fn open_beneath(base: &Dir, path: &Path) -> Result<Dir, Errno> {
    let how = OpenHow::new().flags(directory_flags()).resolve(
        ResolveFlag::RESOLVE_BENEATH
            | ResolveFlag::RESOLVE_NO_SYMLINKS
            | ResolveFlag::RESOLVE_NO_XDEV,
    );
    Dir::from_fd(openat2(base.as_fd(), path, how)?)
}

//! Path confinement for file access in a workspace (lesson L15c).
//!
//! Every path is judged twice, and both judgements must land inside the workspace:
//! 1. lexically: `~` handled, the path joined to the root when relative, `.` and `..` applied
//!    as text. This refuses `../` climbs and absolute paths elsewhere before anything outside is
//!    even looked at;
//! 2. really: the path is walked from `/` one component at a time like the kernel does,
//!    following every symbolic link (parents and the final component) and applying `..` after
//!    each link. The real target must lie inside the canonical root.
//!
//! Writes may name a file that does not exist yet: the walk resolves the existing ancestors and
//! keeps the missing rest as written. A write that would go through a dangling symbolic link
//! (the link exists, its target does not) is refused wherever the link sits, because creating
//! the file would create the link's target. A write through a final-component link whose target
//! exists inside the workspace is allowed: the returned path is the real target, so the caller
//! writes that file rather than the link.
//!
//! Checking a path and then using it is two steps, and a process that can modify the workspace
//! between them (the agent's own exec tool, say) could swap a checked directory for a symlink
//! to elsewhere. So the judgement above only decides *whether* and *what* may be touched; every
//! file operation ([`Confined::open_read`], [`Confined::write_file`], [`Confined::remove_file`],
//! [`Confined::create_dir_all`]) then goes through a directory handle of the root opened once
//! ([`cap_std::fs::Dir`]), with the resolved path made relative to it. The kernel resolves that
//! path beneath the handle (`openat2` with `RESOLVE_BENEATH` where available, a component walk
//! with `O_NOFOLLOW` otherwise): a component swapped for a link out of the workspace fails the
//! operation instead of following it. Reads also require the opened file to be the inode that
//! was checked; writes create a temporary file in the parent directory's handle and rename it
//! into place (a rename never follows a symlink at the destination). Hard links are invisible
//! to any path check: a hard link inside the workspace to a file outside it is read as a
//! workspace file (Linux's `protected_hardlinks` stops users linking files they do not own).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};

use crate::error::{DenyReason, Error, Result, io_at};

/// Symbolic links followed in one resolution before giving up (Linux's own limit).
const MAX_SYMLINKS: usize = 40;

/// A workspace root that file access is confined to.
#[derive(Debug, Clone)]
pub struct Confined {
    /// The canonical root: absolute, no symlinks, no `..`.
    root: PathBuf,
    /// The root as configured, normalised lexically, so that absolute paths written with the
    /// configured spelling (a symlinked parent, say) pass the lexical check too.
    alias: PathBuf,
    /// The home directory `~` expands to, if `~` is allowed at all.
    home: Option<PathBuf>,
    /// A handle of the root, opened once: every file operation resolves beneath it.
    dir: Arc<Dir>,
}

impl PartialEq for Confined {
    fn eq(&self, other: &Self) -> bool {
        (&self.root, &self.alias, &self.home) == (&other.root, &other.alias, &other.home)
    }
}

impl Eq for Confined {}

/// Whether [`Confined::write_file`] created a file or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The file did not exist.
    Created,
    /// An existing file was replaced.
    Replaced,
}

/// Whether a path is resolved for reading or for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

impl Confined {
    /// Confines access to `root`, which must be an existing directory. The root is
    /// canonicalised once, here. `~` is refused until [`Confined::with_home`] allows it.
    pub fn new(root: &Path) -> Result<Self> {
        let canonical = fs::canonicalize(root).map_err(io_at(root))?;
        if !canonical.is_dir() {
            return Err(Error::Io {
                path: root.to_path_buf(),
                source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        let alias = if root.is_absolute() {
            normalize_lexically(root)
        } else {
            canonical.clone()
        };
        let dir = Dir::open_ambient_dir(&canonical, cap_std::ambient_authority())
            .map_err(io_at(&canonical))?;
        Ok(Self {
            root: canonical,
            alias,
            home: None,
            dir: Arc::new(dir),
        })
    }

    /// Lets `~` and `~/...` expand to `home` (the current user's home directory); the expanded
    /// path is then checked like any other absolute path. `~user` stays refused.
    #[must_use]
    pub fn with_home(mut self, home: PathBuf) -> Self {
        self.home = Some(home);
        self
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The real absolute path of an existing file or directory to read.
    ///
    /// Errors: [`Error::InvalidPath`] (empty, NUL byte), [`Error::PathDenied`] (outside the
    /// workspace lexically or really, `~user`), [`Error::NotFound`].
    pub fn resolve_read(&self, path: impl AsRef<Path>) -> Result<PathBuf> {
        self.resolve(path.as_ref(), Access::Read, FromRoot::Checked)
    }

    /// The real absolute path to write, which need not exist yet (its parents need not
    /// either: the caller creates them at the returned location).
    ///
    /// Errors: as [`Confined::resolve_read`], plus [`DenyReason::DanglingSymlink`] when a
    /// dangling symbolic link is on the way; never [`Error::NotFound`].
    pub fn resolve_write(&self, path: impl AsRef<Path>) -> Result<PathBuf> {
        self.resolve(path.as_ref(), Access::Write, FromRoot::Checked)
    }

    /// Opens a regular file for reading, refusing the open if the file opened is not the one
    /// that was checked (see the module's TOCTOU note). Returns the file and its real path.
    ///
    /// Errors: as [`Confined::resolve_read`], plus [`Error::NotAFile`] for directories, FIFOs
    /// and devices (checked before opening) and [`DenyReason::ChangedDuringOpen`]. The open is
    /// non-blocking, so a FIFO or device swapped in after the check cannot make the caller wait
    /// for a writer: it is opened at once and refused as not the file checked. (`O_NONBLOCK`
    /// changes nothing for the regular file read afterwards.)
    pub fn open_read(&self, path: impl AsRef<Path>) -> Result<(File, PathBuf)> {
        let requested = path.as_ref();
        // The root's own path is not walked again: the file is opened through `dir` (the
        // root as it was when this was made) and must be the file checked here, so a root
        // swapped for a link since then is refused below rather than followed.
        let real = self.resolve(requested, Access::Read, FromRoot::Trusted)?;
        let inside = self.inside(&real, requested)?;
        let checked = fs::symlink_metadata(&real).map_err(io_at(&real))?;
        if !checked.file_type().is_file() {
            return Err(Error::NotAFile {
                path: requested.to_path_buf(),
            });
        }
        let mut options = OpenOptions::new();
        options
            .read(true)
            .follow(FollowSymlinks::No)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
        let file = self
            .dir
            .open_with(inside, &options)
            .map_err(|e| changed_or_io(e, requested, &real))?
            .into_std();
        let opened = file.metadata().map_err(io_at(&real))?;
        if (opened.dev(), opened.ino()) != (checked.dev(), checked.ino()) {
            return Err(denied(requested, DenyReason::ChangedDuringOpen));
        }
        Ok((file, real))
    }

    /// Writes `bytes` to the file at `path` (missing parent directories are created), through
    /// a temporary file in its directory renamed into place: readers see the old file or the
    /// new one, never half of one. A replaced file keeps its permissions; a new one is 0644.
    /// Not fsynced: an agent's edit is not worth a disk flush per call.
    ///
    /// Errors: as [`Confined::resolve_write`], plus [`Error::NotAFile`] for a directory, and
    /// [`DenyReason::ChangedDuringOpen`] when a directory on the way was swapped for a link
    /// out of the workspace after the check.
    pub fn write_file(&self, path: impl AsRef<Path>, bytes: &[u8]) -> Result<(Written, PathBuf)> {
        let requested = path.as_ref();
        let real = self.resolve_write(requested)?;
        let inside = self.inside(&real, requested)?;
        let (parent, name) = split_parent(inside, requested)?;
        let io = |e: io::Error| changed_or_io(e, requested, &real);
        if !parent.as_os_str().is_empty() {
            self.dir.create_dir_all(parent).map_err(io)?;
        }
        let parent_dir = self.parent_dir(parent).map_err(io)?;
        let existing = match parent_dir.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => {
                return Err(Error::NotAFile {
                    path: requested.to_path_buf(),
                });
            }
            Ok(meta) => Some(meta.permissions()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let mut temp = cap_tempfile::TempFile::new(&parent_dir).map_err(io)?;
        temp.write_all(bytes).map_err(io)?;
        let permissions = existing
            .clone()
            .unwrap_or_else(|| Permissions::from_mode(0o644));
        temp.as_file().set_permissions(permissions).map_err(io)?;
        temp.replace(name).map_err(io)?;
        let written = if existing.is_some() {
            Written::Replaced
        } else {
            Written::Created
        };
        Ok((written, real))
    }

    /// Deletes the regular file at `path` (never a directory, never through a link).
    pub fn remove_file(&self, path: impl AsRef<Path>) -> Result<PathBuf> {
        let requested = path.as_ref();
        let real = self.resolve_write(requested)?;
        let inside = self.inside(&real, requested)?;
        let (parent, name) = split_parent(inside, requested)?;
        let io = |e: io::Error| changed_or_io(e, requested, &real);
        let parent_dir = self.parent_dir(parent).map_err(io)?;
        match parent_dir.symlink_metadata(name) {
            Ok(meta) if !meta.is_file() => {
                return Err(Error::NotAFile {
                    path: requested.to_path_buf(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(Error::NotFound {
                    path: requested.to_path_buf(),
                });
            }
            Err(e) => return Err(io(e)),
        }
        parent_dir.remove_file(name).map_err(io)?;
        Ok(real)
    }

    /// Creates the directory at `path` and its missing parents.
    pub fn create_dir_all(&self, path: impl AsRef<Path>) -> Result<PathBuf> {
        let requested = path.as_ref();
        let real = self.resolve_write(requested)?;
        let inside = self.inside(&real, requested)?;
        if !inside.as_os_str().is_empty() {
            self.dir
                .create_dir_all(inside)
                .map_err(|e| changed_or_io(e, requested, &real))?;
        }
        Ok(real)
    }

    /// A resolved real path relative to the root (empty for the root itself).
    fn inside<'r>(&self, real: &'r Path, requested: &Path) -> Result<&'r Path> {
        real.strip_prefix(&self.root)
            .map_err(|_| denied(requested, DenyReason::SymlinkEscape))
    }

    /// A handle of a directory inside the root (`""` is the root).
    fn parent_dir(&self, parent: &Path) -> io::Result<Dir> {
        if parent.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir_nofollow(parent)
        }
    }

    fn resolve(&self, requested: &Path, access: Access, from_root: FromRoot) -> Result<PathBuf> {
        check_text(requested)?;
        let expanded = self.expand_home(requested)?;
        let absolute = if expanded.is_absolute() {
            expanded.into_owned()
        } else {
            self.root.join(expanded)
        };
        let lexical = normalize_lexically(&absolute);
        if !lexical.starts_with(&self.root) && !lexical.starts_with(&self.alias) {
            let reason = if requested.is_absolute() || expanded_from_home(requested) {
                DenyReason::OutsideWorkspace
            } else {
                DenyReason::ParentEscape
            };
            return Err(denied(requested, reason));
        }
        let walk = match absolute.strip_prefix(&self.root) {
            Ok(rest) if from_root == FromRoot::Trusted => {
                walk_from(self.root.clone(), rest, requested)?
            }
            _ => walk(&absolute, requested)?,
        };
        if !walk.real.starts_with(&self.root) {
            return Err(denied(requested, DenyReason::SymlinkEscape));
        }
        // Writes never go through a final-component symlink, even one that
        // points inside (lesson L15c): the link could be re-pointed between
        // the check and the write, so the caller must name the real file.
        if access == Access::Write
            && let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name())
        {
            let real_parent = walk_parent(parent, requested)?;
            if fs::symlink_metadata(real_parent.join(name))
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                return Err(denied(requested, DenyReason::FinalSymlink));
            }
        }
        match access {
            Access::Read if !walk.exists => Err(Error::NotFound {
                path: requested.to_path_buf(),
            }),
            Access::Write if walk.dangling => Err(denied(requested, DenyReason::DanglingSymlink)),
            Access::Read | Access::Write => Ok(walk.real),
        }
    }

    /// `~` and `~/rest` become the home directory when one is configured; any other leading
    /// `~` component (`~user`, `~+`, or `~` without a home) is refused, never looked up.
    fn expand_home<'p>(&self, requested: &'p Path) -> Result<Cow<'p, Path>> {
        let mut components = requested.components();
        match components.next() {
            Some(Component::Normal(first)) if first.as_bytes().starts_with(b"~") => {
                match (&self.home, first.as_bytes()) {
                    (Some(home), b"~") => Ok(Cow::Owned(home.join(components.as_path()))),
                    _ => Err(denied(requested, DenyReason::HomeExpansion)),
                }
            }
            _ => Ok(Cow::Borrowed(requested)),
        }
    }
}

/// `a/b/c.txt` -> (`a/b`, `c.txt`); the root itself has no name to write.
fn split_parent<'p>(inside: &'p Path, requested: &Path) -> Result<(&'p Path, &'p std::ffi::OsStr)> {
    match (inside.parent(), inside.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(Error::NotAFile {
            path: requested.to_path_buf(),
        }),
    }
}

/// An error of an operation beneath the root: a refusal to follow a link (the path changed
/// since it was checked) is a denial; anything else is plain IO.
fn changed_or_io(error: io::Error, requested: &Path, real: &Path) -> Error {
    // Linux's ELOOP (40): a link met where none may be followed. EXDEV (18): `openat2`'s
    // RESOLVE_BENEATH refusing a path that leaves the root. cap-std's own walk reports the same
    // refusal as PermissionDenied "a path led outside of the filesystem".
    const ELOOP: i32 = 40;
    const EXDEV: i32 = 18;
    let escaped = matches!(error.raw_os_error(), Some(ELOOP | EXDEV))
        || (error.kind() == io::ErrorKind::PermissionDenied
            && error.to_string().contains("led outside of the filesystem"));
    if escaped {
        denied(requested, DenyReason::ChangedDuringOpen)
    } else {
        io_at(real)(error)
    }
}

fn expanded_from_home(requested: &Path) -> bool {
    requested.as_os_str().as_bytes().starts_with(b"~")
}

fn denied(path: &Path, reason: DenyReason) -> Error {
    Error::PathDenied {
        path: path.to_path_buf(),
        reason,
    }
}

/// Refuses paths no filesystem call should see: empty ones, and ones with a NUL byte (which
/// C APIs would silently cut short, `allowed.md\0../../secret` style).
fn check_text(path: &Path) -> Result<()> {
    let bytes = path.as_os_str().as_bytes();
    let reason = if bytes.is_empty() {
        "the path is empty"
    } else if bytes.contains(&0) {
        "the path contains a NUL byte"
    } else {
        return Ok(());
    };
    Err(Error::InvalidPath {
        path: path.to_string_lossy().into_owned(),
        reason,
    })
}

/// `.` dropped and `..` applied as text; `..` at the root stays at the root, as in the kernel.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What a real walk found.
/// The real path of a parent directory (the final-symlink check looks at the
/// last component inside it).
fn walk_parent(parent: &Path, requested: &Path) -> Result<PathBuf> {
    Ok(walk(parent, requested)?.real)
}

#[derive(Debug)]
struct Walk {
    /// Every symlink followed, `.` and `..` applied; the missing tail kept as written.
    real: PathBuf,
    /// Whether the whole path exists.
    exists: bool,
    /// Whether a followed symbolic link's target (or part of it) does not exist.
    dangling: bool,
}

/// Whether a resolution may start its walk at the root instead of at `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FromRoot {
    /// Walk every component from `/`: the real path returned may be used by name, so a root
    /// replaced by a symbolic link since [`Confined::new`] must be found.
    Checked,
    /// Start at the root: the caller opens through the root's handle and checks the file.
    Trusted,
}

/// One pending step of a walk.
#[derive(Debug)]
enum Step {
    Name(OsString),
    Parent,
    /// The end of a symbolic link's expansion.
    LinkEnd,
}

fn steps(path: &Path) -> impl DoubleEndedIterator<Item = Step> + '_ {
    path.components().filter_map(|component| match component {
        Component::Normal(name) => Some(Step::Name(name.to_os_string())),
        Component::ParentDir => Some(Step::Parent),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    })
}

/// Resolves an absolute path the way the kernel would, one component at a time, following
/// every symbolic link, and tolerating a missing tail (for writes). `requested` names the path
/// in errors.
fn walk(absolute: &Path, requested: &Path) -> Result<Walk> {
    walk_from(PathBuf::from("/"), absolute, requested)
}

/// [`walk`] of `rest` from `start`, a real directory (no symbolic link on its way).
fn walk_from(start: PathBuf, rest: &Path, requested: &Path) -> Result<Walk> {
    let mut pending: VecDeque<Step> = steps(rest).collect();
    let mut real = start;
    let mut open_links = 0_usize;
    let mut followed = 0_usize;
    let mut missing = false;
    let mut dangling = false;
    while let Some(step) = pending.pop_front() {
        let name = match step {
            Step::LinkEnd => {
                open_links = open_links.saturating_sub(1);
                continue;
            }
            Step::Parent => {
                real.pop();
                // `missing/..` leads back to where things may exist again.
                if missing {
                    missing = !exists_no_follow(&real).map_err(io_at(&real))?;
                }
                continue;
            }
            Step::Name(name) => name,
        };
        let candidate = real.join(&name);
        if missing {
            real = candidate;
            continue;
        }
        match fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                followed += 1;
                if followed > MAX_SYMLINKS {
                    return Err(denied(requested, DenyReason::TooManySymlinks));
                }
                let target = fs::read_link(&candidate).map_err(io_at(&candidate))?;
                if target.is_absolute() {
                    real = PathBuf::from("/");
                }
                // A relative target continues from the link's directory, which `real` still is.
                pending.push_front(Step::LinkEnd);
                let expansion: Vec<Step> = steps(&target).collect();
                for step in expansion.into_iter().rev() {
                    pending.push_front(step);
                }
                open_links += 1;
            }
            Ok(_) => real = candidate,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing = true;
                dangling |= open_links > 0;
                real = candidate;
            }
            Err(e) => return Err(io_at(&candidate)(e)),
        }
    }
    Ok(Walk {
        real,
        exists: !missing,
        dangling,
    })
}

fn exists_no_follow(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The real location a workspace path has or will have once created: the same walk,
/// following dangling links too, so a workspace keeps the same proof-marker key whether or not
/// it exists right now. `path` must be absolute.
pub(crate) fn resolve_lenient(path: &Path) -> Result<PathBuf> {
    walk(path, path).map(|w| w.real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalisation_applies_dots_and_stops_at_the_root() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c")),
            PathBuf::from("/a/c")
        );
        assert_eq!(
            normalize_lexically(Path::new("/../../x")),
            PathBuf::from("/x")
        );
    }
}

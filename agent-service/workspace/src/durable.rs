//! Crash-safe file writes. Every file is first written to a fresh temporary name in the same
//! directory (created with O_CREAT|O_EXCL, which never follows a symlink) and fsynced; then it
//! is either renamed over the destination ([`replace`]) or published under the destination
//! name only if that name is still free ([`create_new`]). Neither ever truncates a file in place,
//! and a rename replaces a symlink at the destination instead of writing through it. The
//! directory is fsynced afterwards so the new name survives a crash.

use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;
use std::time::SystemTime;

use tempfile::NamedTempFile;

/// Mode of files that may hold private data (config, markers, state).
pub(crate) const PRIVATE_FILE: u32 = 0o600;
/// Mode of workspace Markdown files the user edits (the umask still applies).
pub(crate) const USER_FILE: u32 = 0o644;
/// Mode of the directories this crate creates in the state dir.
pub(crate) const PRIVATE_DIR: u32 = 0o700;

/// Replaces `path` with `bytes` atomically (temp file, fsync, rename, fsync the directory).
/// `modified`, when given, becomes the file's modification time, so that callers with an
/// injected clock get deterministic mtimes.
pub(crate) fn replace(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    modified: Option<SystemTime>,
) -> io::Result<()> {
    let dir = parent(path)?;
    let temp = written_temp(dir, bytes, mode, modified)?;
    temp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)
}

/// Publishes `bytes` at `path` only if nothing (not even a dangling symlink) is there yet.
/// Returns `false`, writing nothing, when the name is taken.
pub(crate) fn create_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<bool> {
    let dir = parent(path)?;
    let temp = written_temp(dir, bytes, mode, None)?;
    match temp.persist_noclobber(path) {
        Ok(_) => {}
        Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(e.error),
    }
    sync_dir(dir)?;
    Ok(true)
}

/// Creates `dir` and its missing parents with mode 0700 (existing ones are left alone).
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(dir)
}

fn written_temp(
    dir: &Path,
    bytes: &[u8],
    mode: u32,
    modified: Option<SystemTime>,
) -> io::Result<NamedTempFile> {
    // The temp file is deleted on drop if anything below fails.
    let mut temp = tempfile::Builder::new()
        .prefix(".openclaw-")
        .suffix(".tmp")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if let Some(at) = modified {
        temp.as_file().set_modified(at)?;
    }
    temp.as_file().sync_all()?;
    Ok(temp)
}

fn parent(path: &Path) -> io::Result<&Path> {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent directory"))
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

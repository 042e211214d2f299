//! Durable file replacement: temp file in the same directory, fsync, rename, fsync the
//! directory. A reader sees the old bytes or the new, never a truncated file.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use uuid::Uuid;

use crate::error::{Result, io_at};
use crate::paths::with_suffix;

/// Files this crate creates hold conversations: readable by the owner only (on Unix).
pub(crate) fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

/// Fsyncs a directory so that renames, links and new names in it survive a crash.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// The parent directory of `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// A fresh name beside `path` for a temporary file: `<path>.<random>.tmp`.
pub(crate) fn temp_beside(path: &Path) -> std::path::PathBuf {
    let tag = Uuid::new_v4().simple().to_string();
    with_suffix(path, &format!(".{}.tmp", &tag[..8]))
}

/// Replaces `path` with `bytes` atomically and durably; never truncates `path` in place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    replace(path, bytes).map(drop)
}

/// [`write_atomic`], returning an open handle on the file now at `path` (the index cache
/// keeps it, see `index_cache`).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> Result<File> {
    let dir = parent_dir(path);
    let temp = temp_beside(path);
    let written = private(OpenOptions::new().write(true).create_new(true))
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()?;
            Ok(file)
        })
        .and_then(|file| fs::rename(&temp, path).map(|()| file));
    match written {
        Ok(file) => {
            sync_dir(dir)?;
            Ok(file)
        }
        Err(e) => {
            // Best effort: the temp name is unique, so a leftover is only litter.
            let _ = fs::remove_file(&temp);
            Err(io_at(path)(e))
        }
    }
}

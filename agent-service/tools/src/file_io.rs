//! Blocking file helpers shared by the file tools and `apply_patch`. Paths are always
//! resolved through [`Confined`] first; these helpers only touch the real paths it returns.
//!
//! Writes go to a fresh temporary file in the target's directory that is then renamed over
//! the target: readers see the old or the new file, never half of one, and a rename replaces
//! a symbolic link at the destination instead of writing through it. Writes are not fsynced:
//! an agent's edit is not worth a disk flush per call (the transcript is the durable record).

use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use openclaw_workspace::Confined;

use crate::error::ToolError;

/// Largest file `edit` and `apply_patch` load whole.
pub(crate) const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// A text file loaded whole for editing.
pub(crate) struct TextFile {
    /// The file's content.
    pub(crate) text: String,
    /// Its real path (inside the workspace).
    pub(crate) real: std::path::PathBuf,
}

/// Loads a UTF-8 text file of at most [`MAX_EDIT_BYTES`]. `shown` names it in errors.
pub(crate) fn read_text(
    confined: &Confined,
    path: &Path,
    shown: &str,
) -> Result<TextFile, ToolError> {
    let (file, real) = confined.open_read(path)?;
    let path = shown;
    let io_error = |e: io::Error| ToolError::failed(format!("cannot read {path}: {e}"));
    let len = file.metadata().map_err(io_error)?.len();
    if len > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "{path} is too large to edit here ({len} bytes; the limit is {MAX_EDIT_BYTES})"
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::failed(format!("{path} is not UTF-8 text")))?;
    Ok(TextFile { text, real })
}

/// Whether a write created a new file or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// The file did not exist.
    Created,
    /// An existing file was replaced.
    Replaced,
}

/// Writes `bytes` to `real` (a path [`Confined::resolve_write`] returned) through a temporary
/// file and a rename, creating missing parent directories. A replaced file keeps its
/// permissions. `shown` names the file in errors the way the model wrote it.
pub(crate) fn write_atomic(real: &Path, bytes: &[u8], shown: &str) -> Result<Written, ToolError> {
    let fail = |e: io::Error| ToolError::failed(format!("cannot write {shown}: {e}"));
    let parent = real.parent().ok_or_else(|| {
        ToolError::failed(format!("cannot write {shown}: it has no parent directory"))
    })?;
    fs::create_dir_all(parent).map_err(fail)?;
    let existing = match fs::symlink_metadata(real) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::failed(format!(
                "cannot write {shown}: it is a directory"
            )));
        }
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail(e)),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".openclaw-")
        .suffix(".tmp")
        .tempfile_in(parent)
        .map_err(fail)?;
    temp.write_all(bytes).map_err(fail)?;
    if let Some(permissions) = &existing {
        temp.as_file()
            .set_permissions(permissions.clone())
            .map_err(fail)?;
    }
    temp.persist(real).map_err(|e| fail(e.error))?;
    Ok(if existing.is_some() {
        Written::Replaced
    } else {
        Written::Created
    })
}

/// Deletes the regular file at `real`.
pub(crate) fn remove_file(real: &Path, shown: &str) -> Result<(), ToolError> {
    fs::remove_file(real).map_err(|e| ToolError::failed(format!("cannot delete {shown}: {e}")))
}

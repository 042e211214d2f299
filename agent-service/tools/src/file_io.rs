//! Blocking file helpers shared by the file tools and `apply_patch`. Every file operation goes
//! through [`Confined`], which judges the path and then performs the operation beneath the
//! workspace's directory handle, so a directory swapped for a link after the check cannot
//! redirect it outside.
//!
//! Writes go to a fresh temporary file in the target's directory that is then renamed over
//! the target: readers see the old or the new file, never half of one, and a rename replaces
//! a symbolic link at the destination instead of writing through it. Writes are not fsynced:
//! an agent's edit is not worth a disk flush per call (the transcript is the durable record).

use std::io::{self, Read};
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

pub(crate) use openclaw_workspace::Written;

/// Writes `bytes` to `path` (anything [`Confined::resolve_write`] accepts: a path as the model
/// wrote it, or a real path inside) through [`Confined::write_file`]: atomically, beneath the
/// workspace's directory handle. `shown` names the file in errors the way the model wrote it.
pub(crate) fn write_file(
    confined: &Confined,
    path: &Path,
    bytes: &[u8],
    shown: &str,
) -> Result<Written, ToolError> {
    confined
        .write_file(path, bytes)
        .map(|(written, _)| written)
        .map_err(|e| described("write", shown, e))
}

/// Deletes the regular file at `path` through [`Confined::remove_file`].
pub(crate) fn remove_file(confined: &Confined, path: &Path, shown: &str) -> Result<(), ToolError> {
    confined
        .remove_file(path)
        .map(|_| ())
        .map_err(|e| described("delete", shown, e))
}

/// A workspace error as a tool error, IO failures and non-files phrased for the model.
fn described(verb: &str, shown: &str, error: openclaw_workspace::Error) -> ToolError {
    use openclaw_workspace::Error as W;
    match error {
        // Writes refuse only directories; deletes anything but a regular file.
        W::NotAFile { .. } if verb == "write" => {
            ToolError::failed(format!("cannot {verb} {shown}: it is a directory"))
        }
        W::NotAFile { .. } => {
            ToolError::failed(format!("cannot {verb} {shown}: it is not a regular file"))
        }
        W::Io { source, .. } => ToolError::failed(format!("cannot {verb} {shown}: {source}")),
        other => other.into(),
    }
}

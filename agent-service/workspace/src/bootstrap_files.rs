//! Loading the bootstrap files for a prompt's Project Context (P-31, R-4). Reads are confined to
//! the workspace and capped. A load here always reads the disk; [`crate::BootstrapCache`] keeps
//! loads between renders (the runtime owns truncation).

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::bootstrap_name::BootstrapName;
use crate::confine::Confined;
use crate::error::{Error, Result};

/// The most bytes read from one bootstrap file; the rest is left out and the file flagged.
pub const BOOTSTRAP_FILE_MAX_BYTES: usize = 2 * 1024 * 1024;

/// One bootstrap file as found in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapFile {
    /// Which file.
    pub name: BootstrapName,
    /// Where it is expected: the workspace path as given, joined with the file name.
    pub path: PathBuf,
    /// The text (invalid UTF-8 replaced); empty when missing.
    pub content: String,
    /// Why the file could not be used; `None` when `content` is the file's text.
    pub missing: Option<MissingReason>,
    /// Whether only the first [`BOOTSTRAP_FILE_MAX_BYTES`] were read.
    pub truncated: bool,
}

impl BootstrapFile {
    /// Whether the file is missing (absent, or present but not usable).
    pub fn is_missing(&self) -> bool {
        self.missing.is_some()
    }
}

/// Why a bootstrap file has no content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingReason {
    /// It does not exist (or is a symbolic link to nothing).
    NotFound,
    /// It is a symbolic link whose target is outside the workspace; it was not read.
    OutsideWorkspace,
    /// It is a directory, FIFO, socket or device.
    NotARegularFile,
    /// Reading it failed.
    Unreadable(io::ErrorKind),
}

/// Loads the bootstrap files in order: AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md,
/// HEARTBEAT.md (each listed, missing or not), then BOOTSTRAP.md and MEMORY.md only when
/// something exists under that exact name.
///
/// Errors only when the workspace itself cannot be opened; a bad file is reported in its entry.
pub fn load_bootstrap_files(workspace: &Path) -> Result<Vec<BootstrapFile>> {
    let confined = Confined::new(workspace)?;
    let mut files = Vec::with_capacity(BootstrapName::LOAD_ORDER.len());
    for name in BootstrapName::LOAD_ORDER {
        if name.only_when_present() && !is_present(&confined, name) {
            continue;
        }
        files.push(load_one(&confined, workspace, name));
    }
    Ok(files)
}

/// Something (even a dangling symlink) sits under the exact name in the workspace root.
fn is_present(workspace: &Confined, name: BootstrapName) -> bool {
    std::fs::symlink_metadata(workspace.root().join(name.file_name())).is_ok()
}

fn load_one(confined: &Confined, workspace: &Path, name: BootstrapName) -> BootstrapFile {
    let path = workspace.join(name.file_name());
    let missing = |reason| BootstrapFile {
        name,
        path: path.clone(),
        content: String::new(),
        missing: Some(reason),
        truncated: false,
    };
    let file = match confined.open_read(name.file_name()) {
        Ok((file, _real)) => file,
        Err(error) => return missing(missing_reason(&error)),
    };
    let mut bytes = Vec::new();
    if let Err(error) = file
        .take(BOOTSTRAP_FILE_MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
    {
        return missing(MissingReason::Unreadable(error.kind()));
    }
    let truncated = bytes.len() > BOOTSTRAP_FILE_MAX_BYTES;
    if truncated {
        bytes.truncate(BOOTSTRAP_FILE_MAX_BYTES);
        drop_split_char(&mut bytes);
    }
    BootstrapFile {
        name,
        path,
        content: String::from_utf8_lossy(&bytes).into_owned(),
        missing: None,
        truncated,
    }
}

/// At most `max_bytes` of a bootstrap file in the workspace root, or `None` when it cannot be
/// used: absent, leading outside, not a regular file, or unreadable. Setup only asks "is this
/// still our template?", and an unreadable file must not stop an agent from starting.
pub(crate) fn read_capped(
    workspace: &Confined,
    name: BootstrapName,
    max_bytes: u64,
) -> Option<Vec<u8>> {
    let (file, _real) = workspace.open_read(name.file_name()).ok()?;
    let mut bytes = Vec::new();
    file.take(max_bytes).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn missing_reason(error: &Error) -> MissingReason {
    match error {
        Error::NotFound { .. } => MissingReason::NotFound,
        Error::PathDenied { .. } => MissingReason::OutsideWorkspace,
        Error::NotAFile { .. } => MissingReason::NotARegularFile,
        Error::Io { source, .. } => MissingReason::Unreadable(source.kind()),
        Error::InvalidPath { .. }
        | Error::RelativeWorkspace { .. }
        | Error::WorkspaceVanished { .. }
        | Error::StateFile { .. }
        | Error::ClockOutOfRange => MissingReason::Unreadable(io::ErrorKind::Other),
    }
}

/// A cut at the byte cap can split a UTF-8 sequence; drop its leading bytes rather than show a
/// replacement character that is not in the file.
fn drop_split_char(bytes: &mut Vec<u8>) {
    let tail = bytes.len().saturating_sub(3)..bytes.len();
    // The last byte that starts a character (ASCII or a lead byte, not a continuation).
    let Some(start) = tail.rev().find(|&i| bytes[i] & 0xC0 != 0x80) else {
        return;
    };
    let needed = match bytes[start] {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    if bytes.len() - start < needed {
        bytes.truncate(start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_character_at_the_cut_is_dropped_but_earlier_damage_is_kept() {
        let mut cut = "aé".as_bytes()[..2].to_vec();
        drop_split_char(&mut cut);
        assert_eq!(cut, b"a");

        let mut cut_after_damage = vec![0xff, b'a', 0xF0, 0x9F, 0xA6];
        drop_split_char(&mut cut_after_damage);
        assert_eq!(cut_after_damage, vec![0xff, b'a']);

        let mut whole = "a🦞".as_bytes().to_vec();
        drop_split_char(&mut whole);
        assert_eq!(whole, "a🦞".as_bytes());
    }
}

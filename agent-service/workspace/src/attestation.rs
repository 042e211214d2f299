//! The workspace proof marker (R-6): evidence, kept in the state dir, that a workspace path was
//! in use, so that a workspace that later vanishes or is wiped is noticed instead of silently
//! re-seeded.
//!
//! One marker per resolved workspace path, at
//! `<stateDir>/workspace-attestations/<sha256 hex of the path>.attested`, at most 2048 bytes of
//! UTF-8:
//!
//! ```text
//! openclaw-workspace-attestation:v1
//! 2026-07-05T12:34:56.789Z
//! generated:AGENTS.md:<sha256 hex>
//! generated:TOOLS.md:<sha256 hex>
//! ```
//!
//! with one `generated:` line, sorted by file name, for each bootstrap file whose content still
//! equals its template. The marker is replaced atomically on every ensure (a fresh O_EXCL
//! temporary file with mode 0600, renamed over the old marker; a rename never follows a symlink
//! planted at the marker's name), and its modification time is set to the injected `now`.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::bootstrap_files::read_capped;
use crate::bootstrap_name::BootstrapName;
use crate::confine::{self, Confined};
use crate::durable;
use crate::error::{Error, Result, io_at};
use crate::state::rfc3339;
use crate::templates::{sha256_hex, template};

/// The first line of every marker.
pub const ATTESTATION_HEADER: &str = "openclaw-workspace-attestation:v1";
/// The largest marker that counts as one.
pub const ATTESTATION_MAX_BYTES: u64 = 2048;
/// How long a marker keeps a workspace "recently proven" after its last refresh.
pub const ATTESTATION_RECENT: Duration = Duration::from_secs(24 * 60 * 60);
/// The directory, under the state dir, holding the markers.
pub const ATTESTATIONS_DIR_NAME: &str = "workspace-attestations";
/// The prefix of each line naming a file that still equals its template.
const GENERATED_PREFIX: &str = "generated:";

/// A recently proven workspace's marker, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    /// The marker file.
    pub path: PathBuf,
    /// The timestamp on line 2, as written.
    pub written_at: String,
    /// File name -> SHA-256 hex of each bootstrap file that still equalled its template when
    /// the marker was written.
    pub generated: BTreeMap<String, String>,
}

/// Where the marker for `workspace` lives. The workspace path is resolved through symlinks
/// first (also when it does not exist right now), so every spelling of one directory shares a
/// marker. `workspace` must be absolute.
pub fn attestation_path(state_dir: &Path, workspace: &Path) -> Result<PathBuf> {
    if !workspace.is_absolute() {
        return Err(Error::RelativeWorkspace {
            path: workspace.to_path_buf(),
        });
    }
    let resolved = confine::resolve_lenient(workspace)?;
    Ok(marker_path(state_dir, &resolved))
}

pub(crate) fn marker_path(state_dir: &Path, resolved_workspace: &Path) -> PathBuf {
    let key = sha256_hex(resolved_workspace.as_os_str().as_bytes());
    state_dir
        .join(ATTESTATIONS_DIR_NAME)
        .join(format!("{key}.attested"))
}

/// The workspace's marker if it proves recent use: a regular file (not a symlink) of at most
/// [`ATTESTATION_MAX_BYTES`], starting with [`ATTESTATION_HEADER`], modified no more than
/// [`ATTESTATION_RECENT`] before `now` (a modification time after `now` counts as recent).
/// Anything else, a missing marker included, is `None`.
pub fn recent_attestation(
    state_dir: &Path,
    workspace: &Path,
    now: SystemTime,
) -> Result<Option<Attestation>> {
    read_recent(&attestation_path(state_dir, workspace)?, now)
}

pub(crate) fn read_recent(marker: &Path, now: SystemTime) -> Result<Option<Attestation>> {
    let checked = match fs::symlink_metadata(marker) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_at(marker)(e)),
    };
    if !checked.file_type().is_file() || checked.len() > ATTESTATION_MAX_BYTES {
        return Ok(None);
    }
    let modified = checked.modified().map_err(io_at(marker))?;
    let age = now.duration_since(modified).unwrap_or(Duration::ZERO);
    if age > ATTESTATION_RECENT {
        return Ok(None);
    }
    // Non-blocking: a FIFO swapped in after the check is opened at once and refused below.
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(marker)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_at(marker)(e)),
    };
    let opened = file.metadata().map_err(io_at(marker))?;
    if (opened.dev(), opened.ino()) != (checked.dev(), checked.ino()) {
        // Replaced between the check and the open: judge only what was checked.
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(ATTESTATION_MAX_BYTES)
        .read_to_end(&mut bytes)
        .map_err(io_at(marker))?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    let mut lines = text.lines();
    if lines.next() != Some(ATTESTATION_HEADER) {
        return Ok(None);
    }
    let written_at = lines.next().unwrap_or_default().to_owned();
    let generated = lines
        .filter_map(|line| line.strip_prefix(GENERATED_PREFIX)?.split_once(':'))
        .map(|(name, hash)| (name.to_owned(), hash.to_owned()))
        .collect();
    Ok(Some(Attestation {
        path: marker.to_path_buf(),
        written_at,
        generated,
    }))
}

/// Writes (or replaces) the marker for the workspace rooted at `workspace`, listing the
/// bootstrap files that still equal their templates.
pub(crate) fn refresh(marker: &Path, workspace: &Confined, now: SystemTime) -> Result<()> {
    let mut text = format!("{ATTESTATION_HEADER}\n{}\n", rfc3339(now)?);
    for (name, hash) in generated_files(workspace)? {
        text.push_str(&format!("{GENERATED_PREFIX}{name}:{hash}\n"));
    }
    // Cannot happen with eight short names, but a marker over the limit would not count.
    debug_assert!(text.len() as u64 <= ATTESTATION_MAX_BYTES);
    if let Some(dir) = marker.parent() {
        durable::create_private_dir(dir).map_err(io_at(dir))?;
    }
    durable::replace(marker, text.as_bytes(), durable::PRIVATE_FILE, Some(now))
        .map_err(io_at(marker))
}

/// File name -> hash for each bootstrap file whose content equals its template, sorted.
fn generated_files(workspace: &Confined) -> Result<BTreeMap<&'static str, String>> {
    let mut generated = BTreeMap::new();
    for name in BootstrapName::LOAD_ORDER {
        let Some(template) = template(name) else {
            continue;
        };
        let bytes = read_capped(workspace, name, template.len() as u64 + 1);
        if bytes.as_deref() == Some(template.as_bytes()) {
            generated.insert(name.file_name(), sha256_hex(template.as_bytes()));
        }
    }
    Ok(generated)
}

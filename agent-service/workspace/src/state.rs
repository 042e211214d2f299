//! The workspace's setup state, `<workspace>/.openclaw/workspace-state.json`:
//! `{version: 1, bootstrapSeededAt?, setupCompletedAt?}`. It remembers that BOOTSTRAP.md was
//! seeded, and that setup was completed, so BOOTSTRAP.md is never created twice.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::confine::Confined;
use crate::durable;
use crate::error::{Error, Result, io_at};

/// The state directory inside a workspace.
pub const STATE_DIR_NAME: &str = ".openclaw";
/// The state file inside [`STATE_DIR_NAME`].
pub const STATE_FILE_NAME: &str = "workspace-state.json";
/// Where older OpenClaw versions kept the same state, read when the current file is absent.
pub(crate) const LEGACY_STATE_FILE_NAME: &str = "openclaw-workspace-state.json";
/// The format version written.
const VERSION: u32 = 1;
/// Larger state files are not ours; refusing them keeps a hostile file from costing memory.
const MAX_STATE_BYTES: u64 = 64 * 1024;

/// A workspace's setup state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceState {
    /// Format version, 1.
    pub version: u32,
    /// When BOOTSTRAP.md was seeded (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_seeded_at: Option<String>,
    /// When setup was completed (RFC 3339): BOOTSTRAP.md was deleted after seeding, or the
    /// workspace was already set up when first seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_completed_at: Option<String>,
}

impl Default for WorkspaceState {
    fn default() -> Self {
        Self {
            version: VERSION,
            bootstrap_seeded_at: None,
            setup_completed_at: None,
        }
    }
}

impl WorkspaceState {
    /// Whether setup is complete, so a BOOTSTRAP.md that is still (or again) present is stale
    /// and the runtime should leave it out of the prompt.
    pub fn setup_completed(&self) -> bool {
        self.setup_completed_at.is_some()
    }
}

/// What is on disk: the current key names, plus the legacy `onboardingCompletedAt`, and
/// tolerance for keys other versions add.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredState {
    version: Option<u32>,
    bootstrap_seeded_at: Option<String>,
    setup_completed_at: Option<String>,
    onboarding_completed_at: Option<String>,
}

/// Reads a workspace's setup state; `None` when it has none yet (neither the current file nor
/// the legacy `<workspace>/openclaw-workspace-state.json`).
///
/// Errors: [`Error::StateFile`] for a file that is not valid state JSON; confinement errors
/// when the state path is a symbolic link leading out of the workspace.
pub fn read_workspace_state(workspace: &Path) -> Result<Option<WorkspaceState>> {
    read(&Confined::new(workspace)?)
}

pub(crate) fn read(workspace: &Confined) -> Result<Option<WorkspaceState>> {
    let current = Path::new(STATE_DIR_NAME).join(STATE_FILE_NAME);
    for relative in [current.as_path(), Path::new(LEGACY_STATE_FILE_NAME)] {
        let (file, real) = match workspace.open_read(relative) {
            Ok(opened) => opened,
            Err(Error::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        let mut text = Vec::new();
        file.take(MAX_STATE_BYTES)
            .read_to_end(&mut text)
            .map_err(io_at(&real))?;
        let stored: StoredState =
            serde_json::from_slice(&text).map_err(|source| Error::StateFile {
                path: real.clone(),
                source,
            })?;
        return Ok(Some(WorkspaceState {
            version: stored.version.unwrap_or(VERSION),
            bootstrap_seeded_at: stored.bootstrap_seeded_at,
            setup_completed_at: stored.setup_completed_at.or(stored.onboarding_completed_at),
        }));
    }
    Ok(None)
}

/// Replaces the state file atomically (temp file, fsync, rename).
pub(crate) fn write(workspace: &Confined, state: &WorkspaceState) -> Result<PathBuf> {
    let dir = workspace.resolve_write(STATE_DIR_NAME)?;
    std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    // Checked again now that it exists: it must still be a directory inside the workspace.
    let dir = workspace.resolve_read(STATE_DIR_NAME)?;
    let path = dir.join(STATE_FILE_NAME);
    let mut bytes = serde_json::to_vec_pretty(state).map_err(|source| Error::StateFile {
        path: path.clone(),
        source,
    })?;
    bytes.push(b'\n');
    durable::replace(&path, &bytes, durable::PRIVATE_FILE, None).map_err(io_at(&path))?;
    Ok(path)
}

/// `now` as the RFC 3339 text stored in state and markers, millisecond precision in UTC
/// (`2026-07-05T12:34:56.789Z`), the shape OpenClaw writes.
pub(crate) fn rfc3339(now: SystemTime) -> Result<String> {
    let at = jiff::Timestamp::try_from(now).map_err(|_| Error::ClockOutOfRange)?;
    Ok(format!("{at:.3}"))
}

//! Shared fixtures: a temporary home with a state dir and a workspace path, and a fixed clock.

mod attestation;
mod bootstrap_cache;
mod bootstrap_cache_changes;
mod bootstrap_files;
mod config_file;
mod confine;
mod confine_race;
mod heartbeat;
mod sandbox;
mod setup;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use openclaw_workspace::{EnsuredWorkspace, Result, SetupOptions, ensure_workspace};
use tempfile::TempDir;

/// A fixed "now": 2026-05-28T20:26:40Z.
pub fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_780_000_000)
}

/// `n` hours.
pub fn hours(n: u64) -> Duration {
    Duration::from_secs(n * 60 * 60)
}

/// A temporary home: `<tmp>/state` is the state dir, `<tmp>/workspace` the workspace (not
/// created until ensured).
pub struct Home {
    _dir: TempDir,
    pub base: PathBuf,
    pub state_dir: PathBuf,
    pub workspace: PathBuf,
}

impl Home {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Canonical, so expectations compare with what the crate reports.
        let base = std::fs::canonicalize(dir.path()).unwrap();
        Self {
            state_dir: base.join("state"),
            workspace: base.join("workspace"),
            base,
            _dir: dir,
        }
    }

    pub fn ensure(&self, options: SetupOptions) -> Result<EnsuredWorkspace> {
        self.ensure_at(options, now())
    }

    pub fn ensure_at(&self, options: SetupOptions, at: SystemTime) -> Result<EnsuredWorkspace> {
        ensure_workspace(&self.workspace, &self.state_dir, options, at)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.workspace.join(name)
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap()
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.file(name), text).unwrap();
    }
}

/// The names in a directory, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

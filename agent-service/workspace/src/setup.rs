//! Setting up an agent's workspace: create the directory, seed missing
//! bootstrap files from our templates, create BOOTSTRAP.md once for a brand-new workspace,
//! record the setup state, and refresh the proof marker, refusing to start over a recently
//! proven workspace that has vanished.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::attestation::{self, Attestation};
use crate::bootstrap_files::read_capped;
use crate::bootstrap_name::BootstrapName;
use crate::confine::{self, Confined};
use crate::durable;
use crate::error::{Error, Result, VanishedCondition, io_at};
use crate::state::{self, WorkspaceState, rfc3339};
use crate::templates::{sha256_hex, template};

/// The config switches that shape setup (`agents.defaults.skipBootstrap`,
/// `agents.defaults.skipOptionalBootstrapFiles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetupOptions {
    /// Create no bootstrap files and no setup state: only the directory and the proof marker.
    pub skip_bootstrap: bool,
    /// Do not seed SOUL.md, IDENTITY.md, USER.md and HEARTBEAT.md.
    pub skip_optional_bootstrap_files: bool,
}

/// What [`ensure_workspace`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsuredWorkspace {
    /// The canonical workspace directory.
    pub root: PathBuf,
    /// Whether the directory was created by this call.
    pub created_dir: bool,
    /// The files this call wrote, in load order (BOOTSTRAP.md included when it was seeded).
    pub seeded: Vec<BootstrapName>,
    /// The setup state after this call; `None` with `skip_bootstrap`.
    pub state: Option<WorkspaceState>,
    /// The refreshed proof marker.
    pub marker: PathBuf,
}

/// Makes sure `workspace` exists and is set up, and refreshes its proof marker in `state_dir`.
///
/// - Missing bootstrap files are written from our templates, never over an existing file
///   (a symlink, even a dangling one, counts as existing). `skip_optional_bootstrap_files`
///   leaves out SOUL, IDENTITY, USER and HEARTBEAT.
/// - BOOTSTRAP.md is written only when the workspace is brand new (none of the six seeded
///   files nor `memory/` exists) and setup was never seeded or completed. When a seeded
///   BOOTSTRAP.md is gone, setup is recorded as completed, so it is never written again.
/// - `skip_bootstrap` writes no file at all in the workspace.
/// - If the marker proves the workspace was in use within 24 hours, and the workspace is now
///   missing, empty or without any of its content, nothing is created and
///   [`Error::WorkspaceVanished`] tells the user to restore it or run [`full_reset`]. (Not with
///   `skip_bootstrap`, which seeds nothing and so cannot seed over lost data.)
///
/// `workspace` must be absolute. `now` stamps the state and the marker.
pub fn ensure_workspace(
    workspace: &Path,
    state_dir: &Path,
    options: SetupOptions,
    now: SystemTime,
) -> Result<EnsuredWorkspace> {
    let marker = attestation::attestation_path(state_dir, workspace)?;
    if !options.skip_bootstrap
        && let Some(proof) = attestation::read_recent(&marker, now)?
    {
        check_still_there(workspace, &marker, &proof)?;
    }

    let created_dir = !workspace.exists();
    fs::create_dir_all(workspace).map_err(io_at(workspace))?;
    let confined = Confined::new(workspace)?;

    let (seeded, state) = if options.skip_bootstrap {
        (Vec::new(), None)
    } else {
        let (seeded, state) = seed(&confined, options, now)?;
        (seeded, Some(state))
    };
    attestation::refresh(&marker, &confined, now)?;
    Ok(EnsuredWorkspace {
        root: confined.root().to_path_buf(),
        created_dir,
        seeded,
        state,
        marker,
    })
}

/// The full onboarding reset offered by [`Error::WorkspaceVanished`]: clears the
/// workspace and its proof marker together, so the next [`ensure_workspace`] seeds a brand-new
/// workspace, BOOTSTRAP.md included. The workspace is cleared by moving it aside, to the first
/// free `<name>.reset-<n>` beside it, never by deleting it: the user's files stay recoverable.
/// Returns the marker removed (when there was one) and the folder the workspace was moved to
/// (when it existed).
pub fn full_reset(workspace: &Path, state_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut changed = Vec::new();
    let marker = attestation::attestation_path(state_dir, workspace)?;
    if remove_if_present(&marker)? {
        changed.push(marker);
    }
    match fs::symlink_metadata(workspace) {
        Ok(_) => {
            let aside = free_reset_path(workspace)?;
            fs::rename(workspace, &aside).map_err(io_at(workspace))?;
            changed.push(aside);
        }
        // A vanished workspace has nothing to clear.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_at(workspace)(e)),
    }
    Ok(changed)
}

/// The first `<workspace>.reset-<n>` (n from 1) that does not exist yet.
fn free_reset_path(workspace: &Path) -> Result<PathBuf> {
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".to_owned());
    for n in 1u32.. {
        let candidate = workspace.with_file_name(format!("{name}.reset-{n}"));
        match fs::symlink_metadata(&candidate) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(candidate),
            Err(e) => return Err(io_at(&candidate)(e)),
            Ok(_) => {}
        }
    }
    Err(io_at(workspace)(io::Error::other(
        "no free name to move the workspace aside",
    )))
}

fn remove_if_present(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_at(path)(e)),
    }
}

/// Seeds the workspace and updates its setup state; returns the files written and the state.
fn seed(
    workspace: &Confined,
    options: SetupOptions,
    now: SystemTime,
) -> Result<(Vec<BootstrapName>, WorkspaceState)> {
    let stamp = rfc3339(now)?;
    let before = state::read(workspace)?;
    let mut state = before.clone().unwrap_or_default();
    let brand_new = is_brand_new(workspace)?;
    let mut seeded = Vec::new();

    // BOOTSTRAP.md goes first and the state second: after a crash in between, the next run
    // finds BOOTSTRAP.md present and records it as seeded.
    if exists(workspace, BootstrapName::Bootstrap.file_name())? {
        if state.bootstrap_seeded_at.is_none() && !state.setup_completed() {
            state.bootstrap_seeded_at = Some(stamp.clone());
        }
    } else if !state.setup_completed() {
        if state.bootstrap_seeded_at.is_some() || !brand_new {
            // Seeded and since deleted by the user, or set up before we first saw it.
            state.setup_completed_at = Some(stamp.clone());
        } else if write_template(workspace, BootstrapName::Bootstrap)? {
            seeded.push(BootstrapName::Bootstrap);
            state.bootstrap_seeded_at = Some(stamp.clone());
        }
    }
    if before.as_ref() != Some(&state) {
        state::write(workspace, &state)?;
    }

    for name in BootstrapName::SEEDED {
        if options.skip_optional_bootstrap_files && name.is_optional() {
            continue;
        }
        if write_template(workspace, name)? {
            seeded.push(name);
        }
    }
    seeded.sort();
    Ok((seeded, state))
}

/// None of the six seeded files nor `memory/` exists.
fn is_brand_new(workspace: &Confined) -> Result<bool> {
    for name in BootstrapName::SEEDED {
        if exists(workspace, name.file_name())? {
            return Ok(false);
        }
    }
    Ok(!exists(workspace, "memory")?)
}

/// Whether anything, a dangling symlink included, has this name in the workspace root.
fn exists(workspace: &Confined, name: &str) -> Result<bool> {
    let path = workspace.root().join(name);
    match fs::symlink_metadata(&path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_at(&path)(e)),
    }
}

/// Writes a template unless something already has its name; `true` when written.
fn write_template(workspace: &Confined, name: BootstrapName) -> Result<bool> {
    let Some(text) = template(name) else {
        return Ok(false);
    };
    // The root is canonical, so only the final name could be a link, and publishing refuses to
    // replace anything that exists under it.
    let path = workspace.root().join(name.file_name());
    durable::create_new(&path, text.as_bytes(), durable::USER_FILE).map_err(io_at(&path))
}

/// For a recently proven workspace: it must still exist, hold something, and show evidence
/// of the workspace we saw (see [`has_evidence`]).
fn check_still_there(workspace: &Path, marker: &Path, proof: &Attestation) -> Result<()> {
    let vanished = |condition| Error::WorkspaceVanished {
        workspace: workspace.to_path_buf(),
        marker: marker.to_path_buf(),
        condition,
    };
    let resolved = confine::resolve_lenient(workspace)?;
    let mut entries = match fs::read_dir(&resolved) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(vanished(VanishedCondition::Missing));
        }
        Err(e) => return Err(io_at(workspace)(e)),
    };
    if entries.next().is_none() {
        return Err(vanished(VanishedCondition::Empty));
    }
    if has_evidence(&Confined::new(workspace)?, proof)? {
        Ok(())
    } else {
        Err(vanished(VanishedCondition::NoUserContent))
    }
}

/// Evidence that this is still the workspace the marker saw: BOOTSTRAP.md (setup pending),
/// MEMORY.md or `memory/`, a bootstrap file that is not our template (changed, a link, or
/// unreadable), or a file the marker recorded as generated that is still intact. Setup state
/// alone is not evidence: a `rm *` leaves `.openclaw/` behind.
fn has_evidence(workspace: &Confined, proof: &Attestation) -> Result<bool> {
    for name in ["BOOTSTRAP.md", "MEMORY.md", "memory"] {
        if exists(workspace, name)? {
            return Ok(true);
        }
    }
    for name in BootstrapName::SEEDED {
        let Some(template) = template(name) else {
            continue;
        };
        if !exists(workspace, name.file_name())? {
            continue;
        }
        // Anything but our template (changed text, a link, an unreadable file) is the user's.
        let Some(bytes) = read_capped(workspace, name, template.len() as u64 + 1) else {
            return Ok(true);
        };
        if bytes != template.as_bytes() {
            return Ok(true);
        }
        let recorded = proof.generated.get(name.file_name());
        if recorded.is_some_and(|hash| *hash == sha256_hex(&bytes)) {
            return Ok(true);
        }
    }
    Ok(false)
}

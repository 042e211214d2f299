//! `openclaw-workspace`: everything about an agent's workspace directory on disk.
//!
//! What it is for:
//! - setup ([`ensure_workspace`], R-2, R-5, R-7): create the workspace, seed the bootstrap
//!   files from our own templates ([`template`]) without ever overwriting, create BOOTSTRAP.md
//!   only for a brand-new workspace and never again once deleted, tracked in
//!   `<workspace>/.openclaw/workspace-state.json` ([`WorkspaceState`]);
//! - the proof marker (R-6, [`recent_attestation`]): a recently proven workspace that has
//!   vanished or been wiped is refused ([`Error::WorkspaceVanished`]) until the user restores
//!   it or runs [`full_reset`];
//! - loading the bootstrap files for Project Context ([`load_bootstrap_files`], P-31, R-4),
//!   and keeping loads between renders, checked again on every load ([`BootstrapCache`]);
//! - confining file access to the workspace ([`Confined`], lesson L15c): `..`, absolute paths,
//!   `~user`, NUL bytes, symlinked parents, final-component and dangling symlinks;
//! - per-scope sandbox workspaces ([`sandbox_workspace_dir`], [`ensure_sandbox_workspace`], R-3);
//! - the starter `openclaw.json` ([`ensure_config_file`]);
//!
//! What it is not for: parsing config (`openclaw-config` resolves the agent views whose
//! workspace path and switches are passed in here), truncating or rendering files for the
//! prompt, caching anything but the raw bootstrap load, tool policy, or git. It is synchronous `std::fs` code for Unix; the async
//! runtime calls it from `spawn_blocking`. The clock is a parameter (`now`), so results are
//! deterministic under test. It holds no global state and prints nothing.
//!
//! ```
//! use std::time::SystemTime;
//! use openclaw_workspace::{BootstrapName, SetupOptions, ensure_workspace, load_bootstrap_files};
//!
//! let home = tempfile::tempdir()?;
//! let workspace = home.path().join("workspace");
//! let ensured = ensure_workspace(&workspace, home.path(), SetupOptions::default(), SystemTime::now())?;
//! assert!(ensured.seeded.contains(&BootstrapName::Bootstrap));
//!
//! let files = load_bootstrap_files(&workspace)?;
//! assert_eq!(files[0].name, BootstrapName::Agents);
//! assert!(files.iter().all(|f| !f.is_missing()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod attestation;
mod bootstrap_cache;
mod bootstrap_files;
mod bootstrap_name;
mod bootstrap_stamp;
mod config_file;
mod confine;
mod durable;
mod error;
mod sandbox;
mod setup;
mod state;
mod templates;

pub use attestation::{
    ATTESTATION_HEADER, ATTESTATION_MAX_BYTES, ATTESTATION_RECENT, ATTESTATIONS_DIR_NAME,
    Attestation, attestation_path, recent_attestation,
};
pub use bootstrap_cache::{BootstrapCache, CacheLimits, CacheStats, Loaded};
pub use bootstrap_files::{
    BOOTSTRAP_FILE_MAX_BYTES, BootstrapFile, MissingReason, load_bootstrap_files,
};
pub use bootstrap_name::BootstrapName;
pub use bootstrap_stamp::RACY_MARGIN;
pub use config_file::{CONFIG_FILE_NAME, ConfigFile, default_config_text, ensure_config_file};
pub use confine::{Confined, Written};
pub use error::{DenyReason, Error, Result, VanishedCondition};
pub use sandbox::{
    SandboxWorkspace, ensure_sandbox_workspace, sandbox_slug, sandbox_workspace_dir,
};
pub use setup::{EnsuredWorkspace, SetupOptions, ensure_workspace, full_reset};
pub use state::{STATE_DIR_NAME, STATE_FILE_NAME, WorkspaceState, read_workspace_state};
pub use templates::template;

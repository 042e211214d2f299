//! Per-scope sandbox workspaces: with `agents.defaults.sandbox` on, non-main sessions may
//! work in `<sandbox.workspaceRoot>/<slug of the scope key>` instead of the agent workspace.

use std::fs;
use std::path::{Path, PathBuf};

use crate::bootstrap_files::read_capped;
use crate::bootstrap_name::BootstrapName;
use crate::confine::Confined;
use crate::durable;
use crate::error::{Result, io_at};
use crate::templates::{sha256_hex, template};

/// The files a sandbox workspace gets: what sub-agent sessions see (P-35). No BOOTSTRAP.md: a
/// sandbox is never a brand-new main workspace.
const SANDBOX_FILES: [BootstrapName; 2] = [BootstrapName::Agents, BootstrapName::Tools];
/// The most bytes copied from one agent-workspace file.
const COPY_MAX_BYTES: u64 = crate::BOOTSTRAP_FILE_MAX_BYTES as u64;

/// The directory name for a scope key (`shared`, a session key, or `agent:<id>`), as OpenClaw
/// derives it: the key trimmed (or `session` when blank), lowercased, each run of characters
/// outside `[a-z0-9._-]` turned into one `-`, dashes trimmed, cut to 32 characters (or
/// `session` if nothing is left), then `-` and the first 8 hex digits of the SHA-256 of the
/// trimmed key. Always a single safe path component, never `.` or `..`.
pub fn sandbox_slug(scope_key: &str) -> String {
    let trimmed = scope_key.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    let key = if trimmed.is_empty() {
        "session"
    } else {
        trimmed
    };
    let hash = sha256_hex(key.as_bytes());
    let mut safe = String::with_capacity(key.len());
    let mut in_run = false;
    for c in key.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
            safe.push(c);
            in_run = false;
        } else if !in_run {
            // A run of other characters becomes one dash; a literal dash next to it stays.
            safe.push('-');
            in_run = true;
        }
    }
    // Every character left is ASCII, so 32 characters are 32 bytes.
    let base: String = safe.trim_matches('-').chars().take(32).collect();
    let base = if base.is_empty() { "session" } else { &base };
    format!("{base}-{}", &hash[..8])
}

/// `<workspace_root>/<sandbox_slug(scope_key)>`.
pub fn sandbox_workspace_dir(workspace_root: &Path, scope_key: &str) -> PathBuf {
    workspace_root.join(sandbox_slug(scope_key))
}

/// What [`ensure_sandbox_workspace`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxWorkspace {
    /// The sandbox workspace directory (canonical).
    pub dir: PathBuf,
    /// Files copied from the agent workspace.
    pub copied: Vec<BootstrapName>,
    /// Files written from our templates because the agent workspace had no usable copy.
    pub templated: Vec<BootstrapName>,
}

/// Creates the sandbox workspace for `scope_key` under `workspace_root` and seeds it as a
/// non-main workspace: AGENTS.md and TOOLS.md copied from `agent_workspace` when it has them
/// (read through confinement, so a link out of the agent workspace is not copied; at most
/// 2 MiB), else from our templates. Existing files are never overwritten; no BOOTSTRAP.md,
/// setup state or proof marker is written.
///
/// The sandbox directory must resolve inside `workspace_root` (a planted symlink is refused).
pub fn ensure_sandbox_workspace(
    workspace_root: &Path,
    scope_key: &str,
    agent_workspace: &Path,
) -> Result<SandboxWorkspace> {
    durable::create_private_dir(workspace_root).map_err(io_at(workspace_root))?;
    let root = Confined::new(workspace_root)?;
    let slug = sandbox_slug(scope_key);
    let dir = root.resolve_write(&slug)?;
    fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    let dir = root.resolve_read(&slug)?;
    let sandbox = Confined::new(&dir)?;
    let agent = Confined::new(agent_workspace).ok();

    let mut result = SandboxWorkspace {
        dir,
        copied: Vec::new(),
        templated: Vec::new(),
    };
    for name in SANDBOX_FILES {
        let dest = sandbox.root().join(name.file_name());
        let copy = agent
            .as_ref()
            .and_then(|a| read_capped(a, name, COPY_MAX_BYTES));
        let (bytes, from_agent) = match (copy, template(name)) {
            (Some(bytes), _) => (bytes, true),
            (None, Some(text)) => (text.as_bytes().to_vec(), false),
            (None, None) => continue,
        };
        if durable::create_new(&dest, &bytes, durable::USER_FILE).map_err(io_at(&dest))? {
            if from_agent {
                result.copied.push(name);
            } else {
                result.templated.push(name);
            }
        }
    }
    Ok(result)
}

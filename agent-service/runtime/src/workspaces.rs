//! Agent workspaces on disk: setup at startup and on request, the sandbox
//! workspace of a session, and skills discovery.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::SystemTime,
};

use openclaw_config::{
    Config,
    raw::{SandboxMode, SandboxScope},
    resolve::{AgentView, Dirs},
};
use openclaw_skills::{DiscoverInput, Discovery, Host, Platform, PluginSkillRoot, ProcessHost};
use openclaw_transcript::SessionKey;
use openclaw_workspace::{DenyReason, SetupOptions};

use crate::{
    env::Env,
    error::RuntimeError,
    sessions::{SessionKind, key},
};

/// What setting up one agent's workspace did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSetup {
    /// Agent id.
    pub agent_id: String,
    /// Workspace path.
    pub workspace: PathBuf,
    /// Files written.
    pub created_files: Vec<String>,
    /// BOOTSTRAP.md was seeded.
    pub bootstrap_seeded: bool,
    /// Templates suppressed by `skipBootstrap`.
    pub skipped_bootstrap: bool,
}

/// `agents.defaults.skipBootstrap` and `skipOptionalBootstrapFiles`.
pub fn setup_options(config: &Config) -> SetupOptions {
    let defaults = config
        .raw()
        .agents
        .as_ref()
        .and_then(|a| a.defaults.as_ref());
    SetupOptions {
        skip_bootstrap: defaults.and_then(|d| d.skip_bootstrap).unwrap_or(false),
        skip_optional_bootstrap_files: defaults
            .and_then(|d| d.skip_optional_bootstrap_files)
            .unwrap_or(false),
    }
}

/// Ensures one agent's workspace (seeding templates, refusing a vanished one).
pub fn ensure(
    agent: &AgentView,
    state_dir: &Path,
    options: SetupOptions,
    full_reset: bool,
) -> Result<WorkspaceSetup, RuntimeError> {
    if full_reset {
        let removed =
            openclaw_workspace::full_reset(&agent.workspace, state_dir).map_err(workspace_error)?;
        tracing::warn!(agent = %agent.id, removed = removed.len(), "full workspace reset: proof marker removed and workspace moved aside");
    }
    let ensured = openclaw_workspace::ensure_workspace(
        &agent.workspace,
        state_dir,
        options,
        SystemTime::now(),
    )
    .map_err(workspace_error)?;
    let created_files: Vec<String> = ensured
        .seeded
        .iter()
        .map(|n| n.file_name().to_owned())
        .collect();
    if !created_files.is_empty() {
        tracing::info!(agent = %agent.id, workspace = %ensured.root.display(), files = ?created_files, "workspace seeded");
    }
    Ok(WorkspaceSetup {
        agent_id: agent.id.clone(),
        bootstrap_seeded: created_files.iter().any(|f| f == "BOOTSTRAP.md"),
        workspace: ensured.root,
        created_files,
        skipped_bootstrap: options.skip_bootstrap,
    })
}

/// The sandbox scope key of a session, when `agents.defaults.sandbox`
/// covers it; `None` means the agent workspace is used.
pub(crate) fn sandbox_scope(agent: &AgentView, session_key: &SessionKey) -> Option<String> {
    let sandbox = &agent.sandbox;
    let sandboxed = match sandbox.mode {
        SandboxMode::Off => false,
        SandboxMode::NonMain => key::kind_of(session_key) != SessionKind::Main,
        SandboxMode::All => true,
    };
    sandboxed.then(|| match sandbox.scope {
        SandboxScope::Shared => "shared".to_owned(),
        SandboxScope::Session => session_key.as_str().to_owned(),
        SandboxScope::Agent => format!("agent:{}", agent.id),
    })
}

/// Whether `agents.defaults.sandbox` covers a session (its commands then run sandboxed).
pub(crate) fn sandboxed(agent: &AgentView, session_key: &SessionKey) -> bool {
    sandbox_scope(agent, session_key).is_some()
}

/// The working directory of a session, without touching the disk.
pub fn session_workspace_path(agent: &AgentView, session_key: &SessionKey) -> PathBuf {
    match sandbox_scope(agent, session_key) {
        Some(scope) => {
            openclaw_workspace::sandbox_workspace_dir(&agent.sandbox.workspace_root, &scope)
        }
        None => agent.workspace.clone(),
    }
}

/// The working directory of a session, created and seeded when it is a
/// sandbox workspace (AGENTS.md and TOOLS.md copied, no BOOTSTRAP.md).
pub fn ensure_session_workspace(
    agent: &AgentView,
    session_key: &SessionKey,
) -> Result<PathBuf, RuntimeError> {
    match sandbox_scope(agent, session_key) {
        Some(scope) => Ok(openclaw_workspace::ensure_sandbox_workspace(
            &agent.sandbox.workspace_root,
            &scope,
            &agent.workspace,
        )
        .map_err(workspace_error)?
        .dir),
        None => Ok(agent.workspace.clone()),
    }
}

/// Maps workspace errors onto runtime errors.
pub fn workspace_error(error: openclaw_workspace::Error) -> RuntimeError {
    use openclaw_workspace::Error as E;
    let message = error.to_string();
    match error {
        E::PathDenied { reason, .. } => match reason {
            DenyReason::ParentEscape
            | DenyReason::OutsideWorkspace
            | DenyReason::SymlinkEscape
            | DenyReason::DanglingSymlink
            | DenyReason::FinalSymlink
            | DenyReason::HomeExpansion
            | DenyReason::TooManySymlinks
            | DenyReason::ChangedDuringOpen => RuntimeError::PermissionDenied(message),
        },
        E::InvalidPath { .. } | E::RelativeWorkspace { .. } => {
            RuntimeError::invalid("path", message)
        }
        E::NotFound { .. } | E::NotAFile { .. } => RuntimeError::invalid("path", message),
        E::WorkspaceVanished { .. } => RuntimeError::FailedPrecondition(message),
        E::StateFile { .. } | E::ClockOutOfRange | E::Io { .. } => RuntimeError::Internal(message),
    }
}

/// Skills host over the runtime's environment (tests never read real env vars).
#[derive(Debug)]
struct RuntimeHost {
    env: Arc<dyn Env>,
    bins: ProcessHost,
}

impl Host for RuntimeHost {
    fn platform(&self) -> Platform {
        Platform::current()
    }
    fn env_is_set(&self, name: &str) -> bool {
        self.env.var(name).is_some_and(|v| !v.is_empty())
    }
    fn has_bin(&self, name: &str) -> bool {
        self.bins.has_bin(name)
    }
    fn bin_candidates(&self, name: &str) -> Vec<PathBuf> {
        self.bins.bin_candidates(name)
    }
}

/// Discovers the skills of one agent, with the stamps of every path it read; `bundled` is the
/// skills folder shipped with the service (it may be absent on disk).
pub(crate) fn discover_skills_consulted(
    agent: &AgentView,
    config: &Config,
    dirs: &Dirs,
    bundled: Option<&Path>,
    env: Arc<dyn Env>,
) -> Result<(Discovery, openclaw_skills::Consulted), RuntimeError> {
    let path = env.var("PATH").unwrap_or_default();
    let host = RuntimeHost {
        bins: ProcessHost::with_path(std::ffi::OsStr::new(&path)),
        env,
    };
    let default_skills = openclaw_config::raw::SkillsConfig::default();
    let skills = config.raw().skills.as_ref().unwrap_or(&default_skills);
    let plugin_roots: Vec<PluginSkillRoot> = config
        .plugin_skills(dirs)
        .into_iter()
        .map(|p| PluginSkillRoot {
            plugin: p.plugin,
            dir: p.dir,
        })
        .collect();
    let enabled_plugins = config.enabled_plugins();
    let input = DiscoverInput {
        workspace: &agent.workspace,
        dirs,
        bundled_dir: bundled,
        plugin_roots: &plugin_roots,
        enabled_plugins: &enabled_plugins,
        skills,
        allowlist: &agent.skills,
        limits: &agent.skills_limits,
        config: Some(config.value()),
        host: &host,
    };
    openclaw_skills::discover_consulted(&input).map_err(|e| RuntimeError::Internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lesson L15c: every kind of path escape reaches callers as
    /// PERMISSION_DENIED, never as an internal error.
    #[test]
    fn confinement_denials_are_permission_denied() {
        let root = tempfile::tempdir().ok();
        let Some(root) = root else { return };
        let confined = openclaw_workspace::Confined::new(root.path());
        let confined = match confined {
            Ok(c) => c,
            Err(e) => panic!("confined: {e}"),
        };
        for path in ["../outside.txt", "/etc/passwd", "~root/.ssh/id_rsa"] {
            let err = confined.resolve_write(path).err().map(workspace_error);
            assert!(
                matches!(err, Some(RuntimeError::PermissionDenied(_))),
                "{path}: {err:?}"
            );
        }
    }
}

//! Which sessions run sandboxed and the [`Isolation`] their commands run in.
//!
//! A session that `agents.defaults.sandbox` covers (`mode` `non-main` or `all`) gets its own
//! workspace ([`crate::workspaces`]) and, here, a real sandbox for `exec` and `process`: the
//! engine detected at start-up ([`Engine`]), the session workspace as the only writable path,
//! the agent workspace per `workspaceAccess`, the network per `network`. When the engine is
//! unusable, the backend is one this runtime does not run, or the agent runs on the Codex
//! runtime (whose commands run under Codex's own sandbox), a sandboxed session's runs fail
//! with FAILED_PRECONDITION naming the reason: they never run unsandboxed.

use std::ffi::OsStr;
use std::path::Path;

use openclaw_config::raw::{SandboxBackend, SandboxLimits, SandboxNetwork, WorkspaceAccess};
use openclaw_config::resolve::{AgentRuntime, AgentView};
use openclaw_sandbox::{
    Access, Bubblewrap, Containment, Isolation, Limits, Mount, Network, SandboxUser, Unusable,
};
use openclaw_transcript::SessionKey;

use crate::error::RuntimeError;
use crate::workspaces;

/// The sandbox engine as detected at start-up.
#[derive(Debug, Clone)]
pub(crate) struct Engine(Result<Bubblewrap, Unusable>);

impl Engine {
    /// Detects bubblewrap (`program`: a bare name is looked up on `PATH`).
    pub(crate) fn detect(program: &OsStr) -> Self {
        let found = Bubblewrap::detect(program);
        match &found {
            Ok(engine) => tracing::info!(
                engine = %engine.program().display(),
                version = %engine.version(),
                "sandbox engine ready"
            ),
            Err(why) => {
                tracing::info!(reason = %why, "sandbox engine unusable; sandboxed sessions will be refused")
            }
        }
        // Detected now rather than on the first command, and said once.
        match openclaw_sandbox::Lifetime::host().containment() {
            Containment::PidNamespace { user_namespace } => tracing::info!(
                user_namespace,
                "host commands run in pid namespaces of their own, killed with the service"
            ),
            Containment::GroupOnly {
                parent_death,
                reason,
            } => tracing::warn!(
                %reason,
                parent_death,
                "host commands run in process groups only: a process that leaves its group \
                 outlives its command and the service"
            ),
        }
        Self(found)
    }

    /// The sandbox of a session, `None` when the session is not sandboxed. `cwd` is the
    /// session workspace (it must exist).
    pub(crate) fn isolation(
        &self,
        agent: &AgentView,
        key: &SessionKey,
        cwd: &Path,
    ) -> Result<Option<Isolation>, RuntimeError> {
        if !workspaces::sandboxed(agent, key) {
            return Ok(None);
        }
        let refuse = |why: String| {
            RuntimeError::FailedPrecondition(format!(
                "session {} of agent {} runs sandboxed (agents.defaults.sandbox.mode is {}), \
                 but {why}; it is not run unsandboxed",
                key.as_str(),
                agent.id,
                agent.sandbox.mode
            ))
        };
        if let AgentRuntime::Codex(_) = agent.runtime {
            return Err(refuse(
                "the agent runs on the Codex runtime, whose commands run under Codex's own \
                 sandbox setting rather than this runtime's sandbox"
                    .to_owned(),
            ));
        }
        match agent.sandbox.backend {
            SandboxBackend::Bubblewrap => {}
            other => {
                return Err(refuse(format!(
                    "agents.defaults.sandbox.backend is {other}, which this runtime does not \
                     run (it isolates with bubblewrap: set the backend to \"bubblewrap\" or \
                     remove it)"
                )));
            }
        }
        let engine = self
            .0
            .clone()
            .map_err(|why| refuse(format!("the sandbox is unusable here: {why}")))?;
        // The session workspace is handed to the sandbox user of a root service: resolving a
        // link planted in its place (a workspace root others may write) would hand over
        // whatever it points at.
        if std::fs::symlink_metadata(cwd).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Err(refuse(format!(
                "its workspace {} is a symbolic link, not a directory",
                cwd.display()
            )));
        }
        let canonical = |path: &Path| {
            std::fs::canonicalize(path).map_err(|e| {
                RuntimeError::Internal(format!("cannot resolve {}: {e}", path.display()))
            })
        };
        let agent_workspace = match agent.sandbox.workspace_access {
            WorkspaceAccess::None => None,
            WorkspaceAccess::Ro => Some(Access::ReadOnly),
            WorkspaceAccess::Rw => Some(Access::ReadWrite),
        };
        let agent_workspace = match agent_workspace {
            Some(access) => Some(Mount {
                path: canonical(&agent.workspace)?,
                access,
            }),
            None => None,
        };
        let network = match agent.sandbox.network {
            SandboxNetwork::None => Network::Off,
            SandboxNetwork::Host => Network::On,
        };
        let mut isolation = Isolation::new(engine, canonical(cwd)?, agent_workspace, network)
            .with_limits(limits(&agent.sandbox.limits));
        if let Some(uid) = agent.sandbox.uid {
            let user = SandboxUser::new(uid, uid)
                .map_err(|why| refuse(format!("agents.defaults.sandbox.uid: {why}")))?;
            isolation = isolation.with_user(user);
        }
        Ok(Some(isolation))
    }
}

/// Bytes in a MiB, the unit of the configured memory and file size limits.
const MIB: u64 = 1 << 20;

/// The configured limits over the engine's defaults: an unset key keeps the default, 0 lifts
/// the limit.
fn limits(configured: &SandboxLimits) -> Limits {
    let SandboxLimits {
        processes,
        address_space_mb,
        file_size_mb,
        cpu_seconds,
    } = *configured;
    let pick = |set: Option<u64>, default: Option<u64>, unit: u64| match set {
        None => default,
        Some(0) => None,
        Some(n) => Some(n.saturating_mul(unit)),
    };
    Limits {
        processes: pick(processes, Limits::DEFAULT.processes, 1),
        address_space_bytes: pick(address_space_mb, Limits::DEFAULT.address_space_bytes, MIB),
        file_size_bytes: pick(file_size_mb, Limits::DEFAULT.file_size_bytes, MIB),
        cpu_seconds: pick(cpu_seconds, Limits::DEFAULT.cpu_seconds, 1),
    }
}

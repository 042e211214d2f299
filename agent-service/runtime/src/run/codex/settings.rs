//! What a Codex turn runs with: the model reference (Codex calls the model, not us), the
//! harness settings and the approval and sandbox modes from the agent's `runtime.codex`.

use super::*;
use openclaw_config::resolve::AgentView;

/// The harness settings of a run: the agent's `runtime.codex`, with Codex's
/// own shell off when tool policy denies `exec` or `tools.exec.security`
/// is `deny` (so that these bind Codex-native exec too).
pub(super) fn harness_settings(
    codex: &CodexSettings,
    tools: &ToolRegistry,
    approvals: &ApprovalRules,
) -> HarnessSettings {
    let mut settings = HarnessSettings::from_codex(codex);
    settings.native_exec =
        tools.get("exec").is_some() && approvals.policy.security != ExecSecurity::Deny;
    settings
}

/// Whether tool policy gives the agent `apply_patch` on the Codex runtime:
/// its `tools` allow/deny/profile/byProvider and `tools.exec.applyPatch.enabled`
/// admit it. The model restrictions of our tool (OpenAI models, `allowModels`)
/// are left out: Codex's own `apply_patch`, which this decides about, comes
/// with the model's Codex metadata whatever its provider.
pub(super) fn patch_allowed(config: &Config, agent: &AgentView, model: &ResolvedModel) -> bool {
    let mut settings = config.apply_patch();
    settings.allow_models = vec![model.reference.model.clone()];
    openclaw_tools::policy::allowed_tools(
        &agent.tools,
        &model.reference.provider,
        &model.reference.model,
        false,
        &settings,
        &[],
    )
    .iter()
    .any(|name| name == "apply_patch")
}

/// Codex applies its own `apply_patch` without asking under `on-request`
/// and `never` (inside the sandbox's writable roots), so an agent whose tool
/// policy denies `apply_patch` runs only under `untrusted`, where every file
/// change is asked about and declined.
pub(super) fn check_patch_policy(
    agent: &str,
    codex: &CodexSettings,
    approvals: &ApprovalRules,
) -> Result<(), RuntimeError> {
    let policy = approval_policy(codex);
    if approvals.apply_patch || policy == pb::CodexApprovalPolicy::Untrusted {
        return Ok(());
    }
    let name = match policy {
        pb::CodexApprovalPolicy::Never => "never",
        _ => "on-request",
    };
    Err(RuntimeError::FailedPrecondition(format!(
        "agent {agent:?}: tool policy denies apply_patch, but under \
         runtime.codex.approvalPolicy {name:?} Codex applies its own patches without asking; \
         set approvalPolicy to \"untrusted\" or allow apply_patch"
    )))
}

/// The policy prompt-codex maps; unset means `untrusted` (an unattended run
/// needs an explicit one, and this is the most conservative).
pub(super) fn approval_policy(codex: &CodexSettings) -> pb::CodexApprovalPolicy {
    match codex.approval_policy {
        None | Some(CodexApprovalPolicy::Untrusted) => pb::CodexApprovalPolicy::Untrusted,
        Some(CodexApprovalPolicy::OnRequest) => pb::CodexApprovalPolicy::OnRequest,
        Some(CodexApprovalPolicy::Never) => pb::CodexApprovalPolicy::Never,
    }
}

/// The sandbox; unset means `read-only`.
pub(super) fn sandbox(codex: &CodexSettings) -> pb::CodexSandboxMode {
    match codex.sandbox {
        None | Some(CodexSandbox::ReadOnly) => pb::CodexSandboxMode::ReadOnly,
        Some(CodexSandbox::WorkspaceWrite) => pb::CodexSandboxMode::WorkspaceWrite,
        Some(CodexSandbox::DangerFullAccess) => pb::CodexSandboxMode::DangerFullAccess,
    }
}

/// The one mapping from harness errors (no turn ran) to runtime errors.
pub(super) fn harness_error(error: HarnessError) -> RuntimeError {
    let message = error.to_string();
    match error {
        HarnessError::Spawn { .. }
        | HarnessError::CodexHome { .. }
        | HarnessError::UnsupportedVersion { .. }
        | HarnessError::UnknownVersion { .. }
        | HarnessError::TurnActive { .. }
        | HarnessError::NoActiveTurn { .. } => RuntimeError::FailedPrecondition(message),
        HarnessError::ProcessExited { .. }
        | HarnessError::Rpc { .. }
        | HarnessError::Timeout { .. }
        | HarnessError::Protocol { .. }
        | HarnessError::History { .. }
        | HarnessError::ShutDown => RuntimeError::Unavailable(message),
        HarnessError::InvalidInput { .. } => RuntimeError::Internal(message),
    }
}

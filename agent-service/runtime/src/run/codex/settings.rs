//! What a Codex turn runs with: the model reference (Codex calls the model, not us), the
//! harness settings and the approval and sandbox modes from the agent's `runtime.codex`.

use super::*;
use crate::run::reply::provider_error;
use openclaw_config::resolve::AgentView;
use openclaw_providers::ProviderError;

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

/// A failed Codex turn, reported as the embedded runtime reports the same answer of the
/// model provider: Codex's kind of error and the provider's HTTP status become the
/// [`ProviderError`] the embedded loop would have read, and the one table of provider
/// errors ([`provider_error`]) gives its status (a 429 is RESOURCE_EXHAUSTED on both
/// runtimes). The message keeps what Codex passed on of the provider's answer. Kinds that
/// are no provider's answer (Codex's own sandbox, a rollback) stay UNAVAILABLE.
pub(super) fn turn_failure(message: &str, kind: &str, http_status: Option<u16>) -> RuntimeError {
    let (message, partial) = (message.to_owned(), String::new());
    let client = |status: u16, message: String| ProviderError::Client {
        status,
        message,
        partial: String::new(),
    };
    let server = |status: u16, message: String| ProviderError::Server {
        status,
        message,
        partial: String::new(),
    };
    let error = match (kind, http_status) {
        ("contextWindowExceeded", _) => ProviderError::ContextOverflow { message, partial },
        ("usageLimitExceeded" | "rateLimitExceeded", _) | (_, Some(429)) => {
            ProviderError::RateLimited {
                retry_after: None,
                message,
                partial,
            }
        }
        ("sessionBudgetExceeded", _) => {
            return RuntimeError::ResourceExhausted(format!("the Codex turn failed: {message}"));
        }
        ("unauthorized", status) => client(status.unwrap_or(401), message),
        ("badRequest" | "cyberPolicy" | "misalignmentPolicyViolation", status) => {
            client(status.unwrap_or(400), message)
        }
        ("modelNotFound", status) => client(status.unwrap_or(404), message),
        (_, Some(status)) if (400..500).contains(&status) => client(status, message),
        ("serverOverloaded", status) => server(status.unwrap_or(529), message),
        ("flexUnavailable" | "policyCapacityUnavailable", status) => {
            server(status.unwrap_or(503), message)
        }
        ("internalServerError", status) => server(status.unwrap_or(500), message),
        (_, Some(status)) if status >= 500 => server(status, message),
        (
            "httpConnectionFailed"
            | "responseStreamConnectionFailed"
            | "responseStreamDisconnected"
            | "responseTooManyFailedAttempts",
            _,
        ) => ProviderError::Connection { message, partial },
        _ => return RuntimeError::Unavailable(format!("the Codex turn failed: {message}")),
    };
    provider_error(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn codex_turn_errors_take_the_embedded_runtimes_statuses() {
        let code = |kind: &str, status: Option<u16>| turn_failure("m", kind, status).code();
        let cases = [
            (
                "responseTooManyFailedAttempts",
                Some(429),
                ErrorCode::ResourceExhausted,
            ),
            ("rateLimitExceeded", None, ErrorCode::ResourceExhausted),
            ("usageLimitExceeded", None, ErrorCode::ResourceExhausted),
            ("contextWindowExceeded", None, ErrorCode::ResourceExhausted),
            ("sessionBudgetExceeded", None, ErrorCode::ResourceExhausted),
            ("unauthorized", None, ErrorCode::FailedPrecondition),
            ("badRequest", None, ErrorCode::FailedPrecondition),
            (
                "httpConnectionFailed",
                Some(403),
                ErrorCode::FailedPrecondition,
            ),
            ("modelNotFound", None, ErrorCode::FailedPrecondition),
            ("internalServerError", None, ErrorCode::Unavailable),
            ("httpConnectionFailed", Some(502), ErrorCode::Unavailable),
            ("responseStreamDisconnected", None, ErrorCode::Unavailable),
            ("sandboxError", None, ErrorCode::Unavailable),
            ("", None, ErrorCode::Unavailable),
        ];
        for (kind, status, want) in cases {
            assert_eq!(code(kind, status), want, "{kind} {status:?}");
        }
        // The same provider answer gets the same status on the embedded runtime.
        let embedded = provider_error(ProviderError::RateLimited {
            retry_after: None,
            message: "slow down".to_owned(),
            partial: String::new(),
        });
        let codex = turn_failure("slow down", "responseTooManyFailedAttempts", Some(429));
        assert_eq!(codex.code(), embedded.code());
        assert_eq!(
            codex.to_string(),
            embedded.to_string(),
            "the message is kept"
        );
        assert!(matches!(
            turn_failure("too long", "contextWindowExceeded", None),
            RuntimeError::ContextOverflow(m) if m.contains("too long")
        ));
    }
}

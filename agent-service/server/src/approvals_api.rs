//! Exec approvals over the API: the runtime's approvals to and from their RPC messages.

use agent_runtime::approvals::{Approval, ApprovalState};
use openclaw_proto::agent::v1 as pb;
use openclaw_tools::{ApprovalDecision, ApprovalSubject};
use tonic::Status;

use crate::convert::timestamp_ms;

/// An approval for the API and the event stream.
pub(crate) fn approval_pb(approval: Approval) -> pb::Approval {
    let Approval {
        id,
        agent_id,
        session_key,
        run,
        call_id,
        subject,
        command,
        cwd,
        reason,
        always_patterns,
        state,
        requested_at_ms,
        expires_at_ms,
        decided_at_ms,
        decided_by,
        fallback_allowed,
    } = approval;
    pb::Approval {
        id,
        agent_id,
        session_key,
        run,
        call_id,
        subject: match subject {
            ApprovalSubject::Command => pb::ApprovalSubject::Command,
            ApprovalSubject::FileChange => pb::ApprovalSubject::FileChange,
        } as i32,
        command,
        cwd: cwd.display().to_string(),
        reason,
        always_patterns,
        state: match state {
            ApprovalState::Pending => pb::ApprovalState::Pending,
            ApprovalState::AllowedOnce => pb::ApprovalState::AllowedOnce,
            ApprovalState::AllowedAlways => pb::ApprovalState::AllowedAlways,
            ApprovalState::Denied => pb::ApprovalState::Denied,
            ApprovalState::Expired => pb::ApprovalState::Expired,
            ApprovalState::Cancelled => pb::ApprovalState::Cancelled,
        } as i32,
        requested_at: Some(timestamp_ms(requested_at_ms)),
        expires_at: Some(timestamp_ms(expires_at_ms)),
        decided_at: decided_at_ms.map(timestamp_ms),
        decided_by,
        fallback_allowed,
    }
}

/// The decision of a ResolveApproval request.
pub(crate) fn decision_of(value: i32) -> Result<ApprovalDecision, Status> {
    match pb::ApprovalDecision::try_from(value) {
        Ok(pb::ApprovalDecision::AllowOnce) => Ok(ApprovalDecision::AllowOnce),
        Ok(pb::ApprovalDecision::AllowAlways) => Ok(ApprovalDecision::AllowAlways),
        Ok(pb::ApprovalDecision::Deny) => Ok(ApprovalDecision::Deny),
        Ok(pb::ApprovalDecision::Unspecified) | Err(_) => Err(Status::invalid_argument(format!(
            "decision: must be ALLOW_ONCE, ALLOW_ALWAYS or DENY (got {value})"
        ))),
    }
}

/// An agent's allowlist for the API: the file's entries, then the config's.
pub(crate) fn allowlist_pb(list: agent_runtime::ExecAllowlist) -> pb::ListExecAllowlistResponse {
    let agent_runtime::ExecAllowlist {
        agent_id,
        file,
        config,
    } = list;
    let file = file.into_iter().map(|e| pb::ExecAllowlistEntry {
        pattern: e.pattern,
        source: "file".to_owned(),
        added_by: e.added_by.unwrap_or_default(),
        added_at: e.added_at_ms.map(timestamp_ms),
    });
    let config = config.into_iter().map(|pattern| pb::ExecAllowlistEntry {
        pattern,
        source: "config".to_owned(),
        added_by: String::new(),
        added_at: None,
    });
    pb::ListExecAllowlistResponse {
        agent_id,
        entries: file.chain(config).collect(),
    }
}

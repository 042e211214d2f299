//! The [`Approver`] of one run: asks a person through the service's approvals
//! ([`crate::approvals`]) and publishes the requests and their ends on the run's events.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use openclaw_tools::{ApprovalOutcome, ApprovalRequest, Approver, CancellationToken};

use super::Emitter;
use crate::approvals::{Approval, ApprovalState, Approvals, new_id};
use crate::events::RunEvent;

/// The [`Approver`] of one run: asks through [`Approvals`] and publishes on the run's events.
pub(crate) struct RunApprover {
    pub(crate) approvals: Arc<Approvals>,
    pub(crate) out: Emitter,
    pub(crate) agent_id: String,
    pub(crate) session_key: String,
    pub(crate) run: u64,
    pub(crate) timeout: Duration,
    /// Whether anyone follows the session now (checked at each request).
    pub(crate) followed: Arc<dyn Fn() -> bool + Send + Sync>,
    pub(crate) clock: Arc<dyn openclaw_transcript::Clock>,
}

#[async_trait]
impl Approver for RunApprover {
    fn available(&self) -> bool {
        (self.followed)()
    }

    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalOutcome {
        if !self.available() {
            return ApprovalOutcome::Unavailable;
        }
        let ApprovalRequest {
            subject,
            command,
            cwd,
            reason,
            always_patterns,
            call_id,
            fallback_allowed,
        } = request;
        let now = openclaw_transcript::unix_millis(self.clock.now());
        let approval = Approval {
            id: new_id(),
            agent_id: self.agent_id.clone(),
            session_key: self.session_key.clone(),
            run: self.run,
            call_id,
            subject,
            command,
            cwd,
            reason,
            always_patterns,
            state: ApprovalState::Pending,
            requested_at_ms: now,
            expires_at_ms: now
                .saturating_add(i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX)),
            decided_at_ms: None,
            decided_by: String::new(),
            fallback_allowed: false,
        };
        let clock = Arc::clone(&self.clock);
        let out = self.out.clone();
        let publish = move |approval: Approval, ended: bool| {
            out.emit(if ended {
                RunEvent::ApprovalResolved(Box::new(approval))
            } else {
                RunEvent::ApprovalRequested(Box::new(approval))
            });
        };
        self.approvals
            .ask(
                approval,
                &publish,
                self.timeout,
                cancel,
                fallback_allowed,
                move || openclaw_transcript::unix_millis(clock.now()),
            )
            .await
    }
}

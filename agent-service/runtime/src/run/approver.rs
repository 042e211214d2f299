//! The [`Approver`] of one run: asks a person through the service's approvals
//! ([`crate::approvals`]) and publishes the requests and their ends on the run's events.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use openclaw_tools::{ApprovalOutcome, ApprovalRequest, Approver, CancellationToken};

use super::Emitter;
use crate::approvals::{Approval, ApprovalState, Approvals, new_id};
use crate::events::RunEvent;
use crate::services::Services;
use crate::sessions::Session;

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

impl RunApprover {
    /// The approver of a run: asks a person through the
    /// service's approvals while anyone follows the session (a Run stream, a watcher).
    pub(crate) fn for_run(
        services: &Services,
        s: &Session,
        out: &Emitter,
        config: &openclaw_config::Config,
    ) -> Arc<dyn Approver> {
        let live = Arc::downgrade(&s.live);
        let timeout = approval_timeout(config, &s.agent.id);
        Arc::new(Self {
            approvals: Arc::clone(services.approvals()),
            out: out.clone(),
            agent_id: s.agent.id.clone(),
            session_key: s.key.as_str().to_owned(),
            run: out.run(),
            timeout,
            followed: Arc::new(move || live.upgrade().is_some_and(|l| l.followers() > 0)),
            clock: Arc::clone(services.clock()),
        })
    }
}

/// `approvalTimeoutSec` of the agent's exec settings (its own `tools.exec`, then
/// `tools.exec`, then the legacy `tools.bash`), at least one second.
fn approval_timeout(config: &openclaw_config::Config, agent_id: &str) -> Duration {
    config
        .exec_layers(agent_id)
        .into_iter()
        .find_map(|e| e.approval_timeout_sec)
        .map_or(crate::approvals::DEFAULT_TIMEOUT, |secs| {
            Duration::from_secs(secs.max(1))
        })
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

#[cfg(test)]
mod tests {
    use openclaw_config::{LoadOptions, NoEnv};

    use super::*;

    fn timeout_of(text: &str, agent: &str) -> Duration {
        let config = openclaw_config::load(text, &NoEnv, &LoadOptions::default()).unwrap();
        approval_timeout(&config, agent)
    }

    /// An agent's own `tools.exec.approvalTimeoutSec` wins over the global one, which wins
    /// over the legacy `tools.bash`; other agents keep the global value.
    #[test]
    fn the_agents_own_timeout_wins() {
        let text = r#"{
            agents: { list: [
                { id: "main", tools: { exec: { approvalTimeoutSec: 7 } } },
                { id: "other" },
            ] },
            tools: { exec: { approvalTimeoutSec: 30 }, bash: { approvalTimeoutSec: 90 } },
        }"#;
        assert_eq!(timeout_of(text, "main"), Duration::from_secs(7));
        assert_eq!(timeout_of(text, "MAIN"), Duration::from_secs(7));
        assert_eq!(timeout_of(text, "other"), Duration::from_secs(30));
        let legacy = r#"{ tools: { bash: { approvalTimeoutSec: 90 } } }"#;
        assert_eq!(timeout_of(legacy, "main"), Duration::from_secs(90));
        assert_eq!(timeout_of("{}", "main"), crate::approvals::DEFAULT_TIMEOUT);
        let zero =
            r#"{ agents: { list: [{ id: "main", tools: { exec: { approvalTimeoutSec: 0 } } }] } }"#;
        assert_eq!(timeout_of(zero, "main"), Duration::from_secs(1));
    }
}

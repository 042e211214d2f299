//! Exec approvals as the API manages them: pending requests and their decisions, and each
//! agent's allowlist (the approvals file's entries beside the config's).

use std::sync::Arc;

use openclaw_transcript::SessionKey;

use crate::{
    approvals::Approval,
    error::RuntimeError,
    services::{Services, blocking},
    sessions::key,
};

/// An agent's exec allowlist, by where its entries come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecAllowlist {
    /// The agent.
    pub agent_id: String,
    /// Entries of the approvals file (the agent's, then those for every agent).
    pub file: Vec<openclaw_tools::AllowlistEntry>,
    /// Entries of the config (`tools.exec.allowlist`, per agent too).
    pub config: Vec<String>,
}

/// Exec approvals and allowlists of every agent (see [`crate::Runtime::approvals`]). Agent
/// ids are those of the config, "" for the default agent.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalsHandle<'r> {
    services: &'r Arc<Services>,
}

impl<'r> ApprovalsHandle<'r> {
    pub(super) fn new(services: &'r Arc<Services>) -> Self {
        Self { services }
    }

    /// Decides pending exec approval `id` of agent `agent_id`: see
    /// [`crate::approvals::Approvals::resolve`].
    pub async fn resolve(
        &self,
        agent_id: &str,
        id: &str,
        decision: openclaw_tools::ApprovalDecision,
        by: &str,
    ) -> Result<Approval, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.services
            .approvals()
            .resolve(Some(&agent.id), id, decision, by, self.services.now_ms())
            .await
    }

    /// The pending exec approvals of agent `agent_id`, of one session when `session_key` is
    /// not empty, and with `include_decided` the recent decisions.
    pub fn list(
        &self,
        agent_id: &str,
        session_key: &str,
        include_decided: bool,
    ) -> Result<Vec<Approval>, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let key = if session_key.trim().is_empty() {
            None
        } else {
            Some(key::normalize(&agent.id, session_key)?)
        };
        Ok(self.services.approvals().list(
            &agent.id,
            key.as_ref().map(SessionKey::as_str),
            include_decided,
        ))
    }

    /// Agent `agent_id`'s exec allowlist: the approvals file's entries (its own and those for
    /// every agent), then the config's.
    pub fn allowlist(&self, agent_id: &str) -> Result<ExecAllowlist, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let loaded = self.services.loaded_config()?;
        let file = self.services.exec_approvals().allowlist(&agent.id);
        let config = openclaw_tools::ExecPolicy::from_config(&loaded.config, &agent.id)
            .allowlist
            .patterns()
            .to_vec();
        Ok(ExecAllowlist {
            agent_id: agent.id,
            file,
            config,
        })
    }

    /// Adds `pattern` to agent `agent_id`'s entries in the approvals file (idempotent).
    /// INVALID_ARGUMENT names `pattern` when it is not an absolute glob that compiles.
    pub async fn add_allowlist_entry(
        &self,
        agent_id: &str,
        pattern: &str,
        by: &str,
    ) -> Result<ExecAllowlist, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        if by.trim().is_empty() {
            return Err(RuntimeError::invalid(
                "added_by",
                "say who adds the entry (it is recorded with it)",
            ));
        }
        let pattern = pattern.trim().to_owned();
        if pattern.is_empty() {
            return Err(RuntimeError::invalid("pattern", "must not be empty"));
        }
        if let Some(problem) = openclaw_tools::exec_allowlist::Allowlist::new([pattern.clone()])
            .warnings()
            .first()
        {
            return Err(RuntimeError::invalid("pattern", problem.clone()));
        }
        let store = Arc::clone(self.services.exec_approvals());
        let (id, by, at) = (
            agent.id.clone(),
            by.trim().to_owned(),
            self.services.now_ms(),
        );
        blocking(move || {
            store
                .add(&id, &pattern, &by, at)
                .map_err(|e| RuntimeError::Internal(e.to_string()))
        })
        .await?;
        tracing::info!(agent = %agent.id, "exec allowlist entry added over the API");
        self.allowlist(&agent.id)
    }

    /// Removes `pattern` from agent `agent_id`'s entries in the approvals file; NOT_FOUND when
    /// the file has no such entry for the agent.
    pub async fn remove_allowlist_entry(
        &self,
        agent_id: &str,
        pattern: &str,
    ) -> Result<ExecAllowlist, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let store = Arc::clone(self.services.exec_approvals());
        let (id, wanted) = (agent.id.clone(), pattern.trim().to_owned());
        let removed = blocking(move || {
            store
                .remove(&id, &wanted)
                .map_err(|e| RuntimeError::Internal(e.to_string()))
        })
        .await?;
        if !removed {
            return Err(RuntimeError::NotFound(format!(
                "agent {} has no allowlist entry {:?} in the approvals file (entries from the \
                 config are removed in the config)",
                agent.id,
                pattern.trim()
            )));
        }
        self.allowlist(&agent.id)
    }
}

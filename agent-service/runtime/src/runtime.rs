//! The runtime facade: its lifecycle (start, reload, recovery, background work, shutdown), the
//! operations that combine several parts (setup), and a handle per concern the API reaches
//! directly: [`Runtime::sessions`], [`Runtime::agents`], [`Runtime::runs`],
//! [`Runtime::approvals`], [`Runtime::cron`]. Each handle works on the services the runs share
//! (see [`crate::services`]); nothing here is used by the runs.

mod agents;
mod approvals;
mod sessions;

use std::{sync::Arc, time::Duration};

use openclaw_config::resolve::AgentView;

pub use agents::{AgentsHandle, RunsHandle};
pub use approvals::{ApprovalsHandle, ExecAllowlist};
pub use sessions::{SessionsHandle, TranscriptItem, TranscriptStream, WorkspacePaths};

use crate::{
    config_state::ConfigState,
    error::RuntimeError,
    run,
    services::{RuntimeOptions, Services, SetupOutcome, blocking},
    sessions::SessionTarget,
    settings::Settings,
    workspaces,
};

/// The agent runtime.
#[derive(Debug)]
pub struct Runtime {
    services: Arc<Services>,
}

impl Runtime {
    /// Loads the config, seeds or checks every agent workspace, and prepares
    /// the runtime. An invalid config does not fail here: see [`Runtime::config`].
    pub fn start(options: RuntimeOptions) -> Result<Arc<Self>, RuntimeError> {
        Ok(Arc::new(Self {
            services: Services::start(options)?,
        }))
    }

    /// The config state (an invalid config lists every problem).
    pub fn config(&self) -> ConfigState {
        self.services.config()
    }

    /// Re-reads the config file.
    pub fn reload(&self) {
        self.services.reload();
    }

    /// Resolved locations.
    pub fn settings(&self) -> &Settings {
        self.services.settings()
    }

    /// The redactor every outgoing text goes through.
    pub fn redactor(&self) -> &openclaw_secrets::Redactor {
        self.services.redactor()
    }

    /// The sessions of every agent, by agent id and session target.
    pub fn sessions(&self) -> SessionsHandle<'_> {
        SessionsHandle::new(&self.services)
    }

    /// The configured agents: views and skills.
    pub fn agents(&self) -> AgentsHandle<'_> {
        AgentsHandle::new(&self.services)
    }

    /// The runs: submitting messages, previews, heartbeats now.
    pub fn runs(&self) -> RunsHandle<'_> {
        RunsHandle::new(&self.services)
    }

    /// Exec approvals waiting for a person, and the agents' allowlists.
    pub fn approvals(&self) -> ApprovalsHandle<'_> {
        ApprovalsHandle::new(&self.services)
    }

    /// The cron jobs of an agent ("" for the default), as the operator manages them (any job,
    /// any target).
    pub fn cron(&self, agent_id: &str) -> Result<run::AgentCron, RuntimeError> {
        self.cron_as(agent_id, openclaw_cron::Privilege::Host)
    }

    /// The cron jobs of an agent as a caller of `privilege` manages them: a sandboxed
    /// session's tool, forwarded by another replica, gets [`openclaw_cron::Privilege::Sandboxed`].
    pub fn cron_as(
        &self,
        agent_id: &str,
        privilege: openclaw_cron::Privilege,
    ) -> Result<run::AgentCron, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        Ok(run::AgentCron::new(&self.services, &agent.id, privilege))
    }

    /// Start-up: rebuilds a session index that cannot be read (moved aside, rebuilt from the
    /// transcripts; logged), then writes messages that a previous process acknowledged but
    /// never wrote (its journals) into their transcripts, unanswered. Call before serving.
    /// Returns how many sessions had leftovers.
    pub async fn recover_journals(&self) -> usize {
        let Ok(loaded) = self.services.loaded_config() else {
            return 0;
        };
        let mut recovered = 0;
        for agent in &loaded.agents {
            match self.services.sessions().repair_index(agent) {
                Ok(None) => {}
                Ok(Some(report)) => tracing::warn!(
                    agent = %agent.id,
                    moved_to = %report
                        .corrupt_index_moved_to
                        .as_deref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    sessions = report.sessions,
                    orphans = report.orphans.len(),
                    "the session index could not be read: moved aside and rebuilt from the transcripts"
                ),
                Err(error) => {
                    tracing::error!(agent = %agent.id, %error, "session index unreadable and not rebuilt");
                }
            }
            let ids = match self.services.sessions().journaled_sessions(agent) {
                Ok(ids) => ids,
                Err(error) => {
                    tracing::error!(agent = %agent.id, %error, "cannot scan message journals");
                    continue;
                }
            };
            for id in ids {
                match self.recover_session_journal(agent, &id.to_string()).await {
                    Ok(()) => recovered += 1,
                    Err(error) => {
                        tracing::error!(agent = %agent.id, session_id = %id, %error, "message journal not recovered");
                    }
                }
            }
        }
        recovered
    }

    /// Start-up: reloads the subagent registry; children still marked running were cut short
    /// by the previous stop or crash, and every result their parents have not received yet
    /// is pushed now (see [`crate::subagents`]). Call after [`Runtime::recover_journals`].
    /// Returns how many results were pushed.
    pub async fn recover_subagents(&self) -> usize {
        run::recover_subagents(&self.services).await
    }

    /// Starts the heartbeat scheduler on the current tokio runtime (the first call only). It
    /// stops when shutdown begins.
    pub fn start_heartbeats(&self) {
        run::start_heartbeats(&self.services);
    }

    /// Starts releasing idle sessions (see [`RuntimeOptions::idle_release`]); it stops when
    /// shutdown begins.
    pub fn start_idle_release(&self) {
        self.services.start_idle_release();
    }

    /// Starts the cron scheduler (see [`crate::cron`]): claims a previous process left open
    /// are resolved first, then due jobs run in their sessions. Call after
    /// [`Runtime::recover_journals`]; it stops when shutdown begins.
    pub fn start_cron(&self) {
        run::start_cron(&self.services);
    }

    /// Stops starting runs (the first step of [`Runtime::shutdown`]; call it
    /// as soon as the shutdown signal arrives).
    pub fn begin_shutdown(&self) {
        self.services.begin_shutdown();
    }

    /// Creates `openclaw.json` when missing and seeds the workspace of one
    /// agent ("" for all). `full_reset` first clears the workspace (moved
    /// aside, never deleted) and its proof marker.
    pub async fn setup(
        &self,
        agent_id: &str,
        full_reset: bool,
    ) -> Result<SetupOutcome, RuntimeError> {
        let loaded = self.services.loaded_config()?;
        let agents: Vec<AgentView> = if agent_id.trim().is_empty() {
            loaded.agents.clone()
        } else {
            vec![loaded.agent(agent_id)?.clone()]
        };
        let default_ws = loaded.agent("")?.workspace.display().to_string();
        let config_path = self.services.settings().config_path.clone();
        let state_dir = self.services.settings().state_dir.clone();
        let options = workspaces::setup_options(&loaded.config);
        let (config_created, results) = blocking(move || {
            let file = openclaw_workspace::ensure_config_file(&config_path, &default_ws)
                .map_err(workspaces::workspace_error)?;
            let mut results = Vec::new();
            for agent in &agents {
                results.push(workspaces::ensure(agent, &state_dir, options, full_reset)?);
            }
            Ok((file.created, results))
        })
        .await?;
        if config_created {
            tracing::info!(path = %self.services.settings().config_path.display(), "config file created");
            self.reload();
        }
        self.services
            .unblock(results.iter().map(|r| r.agent_id.as_str()));
        Ok(SetupOutcome {
            config_created,
            config_path: self.services.settings().config_path.clone(),
            workspaces: results,
        })
    }

    /// Graceful shutdown: no new runs start; active runs get until `drain`
    /// after [`Runtime::begin_shutdown`] to finish, then are cancelled (their tool calls get "interrupted"
    /// results). Messages still queued are written to their transcripts as
    /// unanswered user messages, so nothing accepted is lost. Then every
    /// session is flushed and closed.
    pub async fn shutdown(&self, drain: Duration) {
        self.begin_shutdown();
        let since = self
            .services
            .stopping_since()
            .unwrap_or_else(tokio::time::Instant::now);
        let left = drain.saturating_sub(since.elapsed());
        if !self.wait_idle(left).await {
            tracing::warn!(
                drain_ms = u64::try_from(drain.as_millis()).unwrap_or(u64::MAX),
                "runs still active after the drain window; cancelling them"
            );
            self.services.sessions().cancel_all();
            if !self.wait_idle(Duration::from_secs(10)).await {
                tracing::error!("runs did not stop after cancellation; closing sessions anyway");
            }
        }
        self.services.sessions().close_all().await;
        tracing::info!("sessions flushed and closed");
        // After the runs: a Codex turn still running would end as interrupted.
        self.services.codex_runners().shutdown().await;
    }

    async fn wait_idle(&self, limit: Duration) -> bool {
        let until = tokio::time::Instant::now() + limit;
        loop {
            if self.services.sessions().all_idle() {
                return true;
            }
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn recover_session_journal(
        &self,
        agent: &AgentView,
        id: &str,
    ) -> Result<(), RuntimeError> {
        let info = self
            .services
            .sessions()
            .get(agent, &SessionTarget::Id(id.to_owned()))
            .await?;
        let cwd = self.services.session_workspace(agent, &info.key).await?;
        self.services
            .sessions()
            .open(agent, &info, &cwd)
            .await
            .map(drop)
    }
}

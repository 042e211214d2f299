//! The runtime facade: one method per operation of the agent API. Each one hands over to the
//! services the runs share (see [`crate::services`]); nothing here is used by the runs.

use std::{path::PathBuf, sync::Arc, time::Duration};

use openclaw_config::resolve::AgentView;
use openclaw_skills::Discovery;
use openclaw_transcript::{
    Entry, LoadReport, ReadOptions, SessionHeader, SessionKey, TranscriptReader,
};
use tokio::sync::{broadcast, mpsc};

use crate::{
    config_state::ConfigState,
    error::RuntimeError,
    heartbeat::{HeartbeatEvent, HeartbeatOutcome},
    prompt_input::TurnChannel,
    run::{self, Preview, RunSpec, Submitted, TurnPrompt},
    services::{RuntimeOptions, Services, SetupOutcome, blocking},
    sessions::{NewSession, SessionInfo, SessionManager, SessionTarget, key},
    settings::Settings,
    subagents::SubagentLimits,
    workspaces,
};

/// Items a transcript read sends before it waits for the consumer.
const TRANSCRIPT_BUFFER: usize = 64;

/// One item of a transcript stream.
#[derive(Debug, Clone, PartialEq)]
pub enum TranscriptItem {
    /// The header (first line).
    Header(SessionHeader),
    /// An entry.
    Entry(Entry),
    /// Sent last: what the read found.
    Report(LoadReport),
}

/// Transcript items as they are read (bounded: the reader waits for the consumer).
pub type TranscriptStream = mpsc::Receiver<Result<TranscriptItem, RuntimeError>>;

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

    /// Replaces secret values in `text`.
    pub fn redact<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        self.services.redact(text)
    }

    /// The redactor every outgoing text goes through.
    pub fn redactor(&self) -> &openclaw_secrets::Redactor {
        self.services.redactor()
    }

    /// Decides pending exec approval `id` of agent `agent_id` ("" for the default agent):
    /// see [`crate::approvals::Approvals::resolve`].
    pub async fn resolve_approval(
        &self,
        agent_id: &str,
        id: &str,
        decision: openclaw_tools::ApprovalDecision,
        by: &str,
    ) -> Result<crate::approvals::Approval, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.services
            .approvals()
            .resolve(Some(&agent.id), id, decision, by, self.services.now_ms())
            .await
    }

    /// The pending exec approvals of agent `agent_id` ("" for the default agent), of one
    /// session when `session_key` is not empty, and with `include_decided` the recent
    /// decisions.
    pub fn list_approvals(
        &self,
        agent_id: &str,
        session_key: &str,
        include_decided: bool,
    ) -> Result<Vec<crate::approvals::Approval>, RuntimeError> {
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

    /// Agent `agent_id`'s exec allowlist ("" for the default agent): the approvals file's
    /// entries (its own and those for every agent), then the config's.
    pub fn exec_allowlist(&self, agent_id: &str) -> Result<ExecAllowlist, RuntimeError> {
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
    pub async fn add_exec_allowlist_entry(
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
        self.exec_allowlist(&agent.id)
    }

    /// Removes `pattern` from agent `agent_id`'s entries in the approvals file; NOT_FOUND when
    /// the file has no such entry for the agent.
    pub async fn remove_exec_allowlist_entry(
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
        self.exec_allowlist(&agent.id)
    }

    /// Hands a user message to its session: it starts a run, joins the
    /// active one, or waits, by its queue mode; see [`crate::run`].
    pub async fn submit(self: &Arc<Self>, spec: RunSpec) -> Result<Submitted, RuntimeError> {
        run::submit(&self.services, spec).await
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
    pub async fn recover_subagents(self: &Arc<Self>) -> usize {
        run::recover_subagents(&self.services).await
    }

    /// The subagent settings of `agent_id`.
    pub fn subagent_limits(&self, agent_id: &str) -> Result<SubagentLimits, RuntimeError> {
        Ok(SubagentLimits::of_agent(
            &self.services.loaded_config()?.config,
            agent_id,
        ))
    }

    /// The run events of a session from now on (all runs).
    pub async fn watch(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<crate::sessions::SessionEvents, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let info = self.services.sessions().get(&agent, target).await?;
        Ok(self
            .services
            .sessions()
            .live(&agent.id, &info.entry.session_id)
            .subscribe())
    }

    /// Renders one turn's system prompt: the workspace files are read now,
    /// the config knobs applied, and the request sent to the prompt source.
    /// Runs and previews both come through here, so a preview is
    /// byte-identical to what a run sends (P-3).
    pub async fn render_turn(
        &self,
        t: &TurnPrompt<'_>,
        deadline: std::time::Instant,
    ) -> Result<openclaw_proto::prompt::v1::RenderSystemPromptResponse, RuntimeError> {
        run::render_turn(&self.services, t, deadline).await
    }

    /// The prompt the next model call of a session would send, without
    /// writing anything (the session need not exist).
    pub async fn preview(
        self: &Arc<Self>,
        agent_id: &str,
        session_key: &str,
        channel: &TurnChannel,
    ) -> Result<Preview, RuntimeError> {
        run::preview(&self.services, agent_id, session_key, channel).await
    }

    /// Starts the heartbeat scheduler on the current tokio runtime (the first call only). It
    /// stops when shutdown begins.
    pub fn start_heartbeats(self: &Arc<Self>) {
        run::start_heartbeats(&self.services);
    }

    /// Starts releasing idle sessions (see [`RuntimeOptions::idle_release`]); it stops when
    /// shutdown begins.
    pub fn start_idle_release(self: &Arc<Self>) {
        self.services.start_idle_release();
    }

    /// The cron jobs of an agent ("" for the default), as the operator manages them (any job,
    /// any target).
    pub fn cron(self: &Arc<Self>, agent_id: &str) -> Result<run::AgentCron, RuntimeError> {
        self.cron_as(agent_id, openclaw_cron::Privilege::Host)
    }

    /// The cron jobs of an agent as a caller of `privilege` manages them: a sandboxed
    /// session's tool, forwarded by another replica, gets [`openclaw_cron::Privilege::Sandboxed`].
    pub fn cron_as(
        self: &Arc<Self>,
        agent_id: &str,
        privilege: openclaw_cron::Privilege,
    ) -> Result<run::AgentCron, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        Ok(run::AgentCron::new(&self.services, &agent.id, privilege))
    }

    /// Starts the cron scheduler (see [`crate::cron`]): claims a previous process left open
    /// are resolved first, then due jobs run in their sessions. Call after
    /// [`Runtime::recover_journals`]; it stops when shutdown begins.
    pub fn start_cron(self: &Arc<Self>) {
        run::start_cron(&self.services);
    }

    /// Heartbeat outcomes from now on, for every agent.
    pub fn heartbeat_events(&self) -> broadcast::Receiver<HeartbeatEvent> {
        self.services.heartbeats().subscribe()
    }

    /// Runs one heartbeat of an agent ("" for the default) now, waits for its outcome and
    /// publishes it like a scheduled one.
    pub async fn heartbeat_now(self: &Arc<Self>, agent_id: &str) -> HeartbeatOutcome {
        run::heartbeat_now(&self.services, agent_id).await
    }

    /// Stops starting runs (the first step of [`Runtime::shutdown`]; call it
    /// as soon as the shutdown signal arrives).
    pub fn begin_shutdown(&self) {
        self.services.begin_shutdown();
    }

    /// Resolved locations.
    pub fn settings(&self) -> &Settings {
        self.services.settings()
    }

    /// The agent view for an id ("" for the default).
    pub fn agent_view(&self, id: &str) -> Result<AgentView, RuntimeError> {
        self.services.agent_view(id)
    }

    /// The configured agents, in config order, with the default id.
    pub fn agents(&self) -> Result<(Vec<AgentView>, String), RuntimeError> {
        self.services.agents()
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

    /// The skills of one agent (R-9, P-39).
    pub async fn list_skills(&self, agent_id: &str) -> Result<Discovery, RuntimeError> {
        self.services.list_skills(agent_id).await
    }

    /// The working directory of a session, created if it is a sandbox
    /// workspace.
    pub async fn session_workspace(
        &self,
        agent: &AgentView,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        self.services.session_workspace(agent, key).await
    }

    /// The working directory of a session, computed only.
    pub fn session_workspace_path(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        Ok(workspaces::session_workspace_path(
            &self.services.agent_view(agent_id)?,
            key,
        ))
    }

    /// Creates (or returns) the session for a key.
    pub async fn create_session(
        &self,
        agent_id: &str,
        session_key: &str,
        meta: NewSession,
    ) -> Result<(SessionInfo, bool), RuntimeError> {
        let agent = self.services.usable_agent(agent_id)?;
        let key = key::normalize(&agent.id, session_key)?;
        let cwd = self.session_workspace(&agent, &key).await?;
        self.services
            .sessions()
            .create(&agent, &key, &cwd, meta)
            .await
    }

    /// Sessions of an agent.
    pub async fn list_sessions(&self, agent_id: &str) -> Result<Vec<SessionInfo>, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.services.sessions().list(&agent).await
    }

    /// The session's workspace files cut on several renders in a row (P-49), by path.
    pub fn repeated_cuts(
        &self,
        agent_id: &str,
        session_key: &str,
    ) -> Vec<crate::bootstrap_cuts::RepeatedCut> {
        self.services.cuts().repeated(agent_id, session_key)
    }

    /// One session.
    pub async fn get_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.services.sessions().get(&agent, target).await
    }

    /// Resets a session (new id, old transcript archived).
    pub async fn reset_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.services.usable_agent(agent_id)?;
        let info = self.services.sessions().get(&agent, target).await?;
        let cwd = self.session_workspace(&agent, &info.key).await?;
        self.services.sessions().reset(&agent, target, &cwd).await
    }

    /// Deletes a session (transcript archived); returns the archive path.
    pub async fn delete_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<Option<PathBuf>, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.services.sessions().delete(&agent, target).await
    }

    /// Streams a session's transcript: header, entries, then the load report.
    /// Reading is bounded in memory and waits for the consumer.
    pub async fn transcript(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<TranscriptStream, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let sessions = self.services.sessions();
        let info = sessions.get(&agent, target).await?;
        let path = sessions.transcript_path(&agent, &info.entry.session_id)?;
        let (tx, rx) = mpsc::channel(TRANSCRIPT_BUFFER);
        tokio::task::spawn_blocking(move || stream_transcript(&path, &tx));
        Ok(rx)
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
        let cwd = self.session_workspace(agent, &info.key).await?;
        self.services
            .sessions()
            .open(agent, &info, &cwd)
            .await
            .map(drop)
    }

    /// The session manager (appends go through session actors).
    pub fn sessions(&self) -> &SessionManager {
        self.services.sessions()
    }
}

fn stream_transcript(
    path: &std::path::Path,
    tx: &mpsc::Sender<Result<TranscriptItem, RuntimeError>>,
) {
    let mut reader = match TranscriptReader::open(path, ReadOptions::default()) {
        Ok(reader) => reader,
        Err(openclaw_transcript::Error::NotFound { .. }) => {
            let _ = tx.blocking_send(Ok(TranscriptItem::Report(LoadReport::default())));
            return;
        }
        Err(e) => {
            let _ = tx.blocking_send(Err(e.into()));
            return;
        }
    };
    if let Some(header) = reader.header().cloned()
        && tx
            .blocking_send(Ok(TranscriptItem::Header(header)))
            .is_err()
    {
        return;
    }
    for entry in reader.by_ref() {
        let item = entry.map(TranscriptItem::Entry).map_err(RuntimeError::from);
        if tx.blocking_send(item).is_err() {
            return; // The client went away.
        }
    }
    let _ = tx.blocking_send(Ok(TranscriptItem::Report(reader.finish())));
}

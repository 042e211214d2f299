//! The runtime facade: one method per operation of the agent API.

use std::{path::PathBuf, sync::Arc};

use openclaw_config::{Loader, resolve::AgentView};
use openclaw_transcript::{Clock, Entry, LoadReport, ReadOptions, SessionHeader, TranscriptReader};
use tokio::sync::mpsc;

use crate::{
    config_state::{self, ConfigState, Loaded},
    env::Env,
    error::RuntimeError,
    sessions::{NewSession, SessionInfo, SessionManager, SessionTarget},
    settings::Settings,
};

/// Items a transcript read sends before it stops.
const TRANSCRIPT_BUFFER: usize = 64;

/// Everything the runtime needs from its host.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// Where state and config live.
    pub settings: Settings,
    /// Environment variables (for `${VAR}` in the config).
    pub env: Arc<dyn Env>,
    /// Wall clock for timestamps.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

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

/// The agent runtime.
pub struct Runtime {
    options: RuntimeOptions,
    config: ConfigState,
    sessions: SessionManager,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Loads the config and prepares the runtime. An invalid config does not
    /// fail here: see [`Runtime::config`].
    pub fn start(options: RuntimeOptions) -> Result<Arc<Self>, RuntimeError> {
        let loader = Loader::new().map_err(|e| RuntimeError::Internal(e.to_string()))?;
        let config = config_state::load(&options.settings, options.env.as_ref(), &loader);
        match &config {
            ConfigState::Ready(loaded) => tracing::info!(
                config = %options.settings.config_path.display(),
                from_file = loaded.from_file,
                agents = loaded.agents.len(),
                default_agent = %loaded.default_agent,
                "config loaded"
            ),
            ConfigState::Invalid(message) => {
                tracing::error!(%message, "config invalid; agent calls answer FAILED_PRECONDITION until it is fixed")
            }
        }
        let sessions = SessionManager::new(
            options.settings.state_dir.clone(),
            Arc::clone(&options.clock),
        );
        Ok(Arc::new(Self {
            options,
            config,
            sessions,
        }))
    }

    /// The config state (invalid configs list every problem).
    pub fn config(&self) -> &ConfigState {
        &self.config
    }

    /// Resolved locations.
    pub fn settings(&self) -> &Settings {
        &self.options.settings
    }

    fn loaded(&self) -> Result<&Arc<Loaded>, RuntimeError> {
        self.config.ready()
    }

    fn agent(&self, id: &str) -> Result<&AgentView, RuntimeError> {
        self.loaded()?.agent(id)
    }

    /// The configured agents, in config order, with the default id.
    pub fn agents(&self) -> Result<(Vec<AgentView>, String), RuntimeError> {
        let loaded = self.loaded()?;
        Ok((loaded.agents.clone(), loaded.default_agent.clone()))
    }

    /// Creates (or returns) the session for a key.
    pub async fn create_session(
        &self,
        agent_id: &str,
        key: &str,
        meta: NewSession,
    ) -> Result<(SessionInfo, bool), RuntimeError> {
        let agent = self.agent(agent_id)?;
        self.sessions.create(agent, key, meta).await
    }

    /// Sessions of an agent.
    pub async fn list_sessions(&self, agent_id: &str) -> Result<Vec<SessionInfo>, RuntimeError> {
        let agent = self.agent(agent_id)?;
        self.sessions.list(agent).await
    }

    /// One session.
    pub async fn get_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.agent(agent_id)?;
        self.sessions.get(agent, target).await
    }

    /// Resets a session (new id, old transcript archived).
    pub async fn reset_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.agent(agent_id)?;
        self.sessions.reset(agent, target).await
    }

    /// Deletes a session (transcript archived); returns the archive path.
    pub async fn delete_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<Option<PathBuf>, RuntimeError> {
        let agent = self.agent(agent_id)?;
        self.sessions.delete(agent, target).await
    }

    /// Streams a session's transcript: header, entries, then the load report.
    /// Reading is bounded in memory and waits for the consumer.
    pub async fn transcript(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<TranscriptStream, RuntimeError> {
        let agent = self.agent(agent_id)?;
        let info = self.sessions.get(agent, target).await?;
        let path = self
            .sessions
            .transcript_path(agent, &info.entry.session_id)?;
        let (tx, rx) = mpsc::channel(TRANSCRIPT_BUFFER);
        tokio::task::spawn_blocking(move || stream_transcript(&path, &tx));
        Ok(rx)
    }

    /// Flushes and closes every session (graceful shutdown).
    pub async fn shutdown(&self) {
        self.sessions.close_all().await;
        tracing::info!("sessions flushed and closed");
    }

    /// The session manager (appends go through session actors).
    pub fn sessions(&self) -> &SessionManager {
        &self.sessions
    }

    /// The agent view for an id ("" for the default).
    pub fn agent_view(&self, id: &str) -> Result<AgentView, RuntimeError> {
        self.agent(id).cloned()
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

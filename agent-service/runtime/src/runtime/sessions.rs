//! The sessions of the agents, reached by agent id ("" for the default agent) and a session
//! target: what the API's session operations need, each resolving the agent once and then
//! working on the [`SessionManager`].

use std::{
    borrow::Cow,
    path::{Path, PathBuf},
    sync::Arc,
};

use openclaw_config::resolve::AgentView;
use openclaw_transcript::{
    Entry, LoadReport, ReadOptions, SessionHeader, SessionKey, TranscriptReader,
};
use tokio::sync::mpsc;

use crate::{
    error::RuntimeError,
    services::Services,
    sessions::{NewSession, SessionEvents, SessionInfo, SessionManager, SessionTarget, key},
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

/// The sessions of every agent (see [`crate::Runtime::sessions`]).
#[derive(Debug, Clone, Copy)]
pub struct SessionsHandle<'r> {
    services: &'r Arc<Services>,
}

impl<'r> SessionsHandle<'r> {
    pub(super) fn new(services: &'r Arc<Services>) -> Self {
        Self { services }
    }

    /// The session manager itself: live sessions, idle state, repairs (appends go through
    /// session writers).
    pub fn manager(&self) -> &'r SessionManager {
        self.services.sessions()
    }

    /// The session's workspace files cut on several renders in a row (P-49), by path.
    pub fn repeated_cuts(
        &self,
        agent_id: &str,
        session_key: &str,
    ) -> Vec<crate::bootstrap_cuts::RepeatedCut> {
        self.services.cuts().repeated(agent_id, session_key)
    }

    /// [`Self::repeated_cuts`] of every session of `agent_id` that has any, by session key.
    pub fn repeated_cuts_by_session(
        &self,
        agent_id: &str,
    ) -> std::collections::HashMap<String, Vec<crate::bootstrap_cuts::RepeatedCut>> {
        self.services.cuts().repeated_by_session(agent_id)
    }

    /// Creates (or returns) the session for a key; the flag says whether it was created.
    pub async fn create(
        &self,
        agent_id: &str,
        session_key: &str,
        meta: NewSession,
    ) -> Result<(SessionInfo, bool), RuntimeError> {
        let agent = self.services.usable_agent(agent_id)?;
        let key = key::normalize(&agent.id, session_key)?;
        let cwd = self.services.session_workspace(&agent, &key).await?;
        self.manager().create(&agent, &key, &cwd, meta).await
    }

    /// The sessions of an agent.
    pub async fn list(&self, agent_id: &str) -> Result<Vec<SessionInfo>, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.manager().list(&agent).await
    }

    /// One page of agent `agent_id`'s sessions in list order (most recently updated first,
    /// then by key): at most `limit` of them (0: all) after `after`, the `(updated_at, key)`
    /// of the previous page's last session. Returns the page and whether more follow.
    pub async fn list_page(
        &self,
        agent_id: &str,
        after: Option<(i64, &str)>,
        limit: usize,
    ) -> Result<(Vec<SessionInfo>, bool), RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let after = after.map(|(at, key)| (at, key.to_owned()));
        self.manager().list_page(&agent, after, limit).await
    }

    /// [`Self::list_page`] handed to `write` as the agent's id and rows borrowed from the
    /// index, on the blocking pool, for a caller that encodes the page without copying each
    /// session.
    pub async fn list_page_with<R, F>(
        &self,
        agent_id: &str,
        after: Option<(i64, &str)>,
        limit: usize,
        write: F,
    ) -> Result<R, RuntimeError>
    where
        F: FnOnce(&str, &[crate::sessions::ListedRow<'_>], bool) -> R + Send + 'static,
        R: Send + 'static,
    {
        let agent = self.services.agent_view(agent_id)?;
        let after = after.map(|(at, key)| (at, key.to_owned()));
        self.manager()
            .list_page_with(&agent, after, limit, write)
            .await
    }

    /// One session.
    pub async fn get(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.manager().get(&agent, target).await
    }

    /// Resets a session (new id, old transcript archived).
    pub async fn reset(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.services.usable_agent(agent_id)?;
        let info = self.manager().get(&agent, target).await?;
        let cwd = self.services.session_workspace(&agent, &info.key).await?;
        self.manager().reset(&agent, target, &cwd).await
    }

    /// Deletes a session (transcript archived); returns the archive path.
    pub async fn delete(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<Option<PathBuf>, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        self.manager().delete(&agent, target).await
    }

    /// The run events of a session from now on (all runs).
    pub async fn watch(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionEvents, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let info = self.manager().get(&agent, target).await?;
        Ok(self
            .manager()
            .live(&agent.id, &info.entry.session_id)
            .subscribe())
    }

    /// Streams a session's transcript: header, entries, then the load report.
    /// Reading is bounded in memory and waits for the consumer.
    pub async fn transcript(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<TranscriptStream, RuntimeError> {
        let agent = self.services.agent_view(agent_id)?;
        let info = self.manager().get(&agent, target).await?;
        let path = self
            .manager()
            .transcript_path(&agent, &info.entry.session_id)?;
        let (tx, rx) = mpsc::channel(TRANSCRIPT_BUFFER);
        tokio::task::spawn_blocking(move || stream_transcript(&path, &tx));
        Ok(rx)
    }

    /// The working directory of a session, created if it is a sandbox workspace.
    pub async fn workspace(
        &self,
        agent: &AgentView,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        self.services.session_workspace(agent, key).await
    }

    /// The working directories of agent `agent_id`'s sessions, computed only: the agent is
    /// looked up once for any number of sessions (a page of a list).
    pub fn workspace_paths(&self, agent_id: &str) -> Result<WorkspacePaths, RuntimeError> {
        Ok(WorkspacePaths {
            agent: self.services.agent_view(agent_id)?,
        })
    }

    /// The working directory of a session, computed only.
    pub fn workspace_path(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        Ok(workspaces::session_workspace_path(
            &self.services.agent_view(agent_id)?,
            key,
        ))
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

/// The working directories of one agent's sessions, computed only ([`SessionsHandle::workspace_paths`]).
#[derive(Debug, Clone)]
pub struct WorkspacePaths {
    agent: AgentView,
}

impl WorkspacePaths {
    /// The working directory of session `key`: borrowed when it is the agent's own workspace
    /// (every session the sandbox does not cover), so listing those copies no path.
    pub fn of(&self, key: &SessionKey) -> Cow<'_, Path> {
        if workspaces::sandboxed(&self.agent, key) {
            Cow::Owned(workspaces::session_workspace_path(&self.agent, key))
        } else {
            Cow::Borrowed(&self.agent.workspace)
        }
    }

    /// The agent's id, as the config spells it.
    pub fn agent_id(&self) -> &str {
        &self.agent.id
    }
}

//! The sessions of every agent: the index per agent (through the transcript
//! crate's store, which locks and rewrites it atomically) and the live
//! sessions of this process.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
};

use openclaw_config::resolve::AgentView;
use openclaw_transcript::{
    AgentId, Clock, SessionEntry, SessionId, SessionKey, SessionStore, unix_millis,
};

use super::blocking;
use super::{
    creations::Creations,
    key,
    live::{LiveSession, Released},
    queue::Counters,
    recover::recover_journal,
    repairs::{Repair, RepairKind, Repairs},
    session::Session,
    touches::{Touches, TurnDelta},
    writer::TranscriptSpec,
};
use crate::error::RuntimeError;

/// Which session a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    /// By key (normalised against the agent).
    Key(String),
    /// By current session id.
    Id(String),
}

/// Metadata recorded when a session is created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewSession {
    /// Channel id.
    pub channel: Option<String>,
    /// `direct`, `group` or `channel`.
    pub chat_type: Option<String>,
    /// Display name.
    pub display_name: Option<String>,
}

/// A session as listed in the index.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// Owning agent id.
    pub agent_id: String,
    /// Full session key.
    pub key: SessionKey,
    /// Index entry (current id, timestamps, counters, overrides), shared with the index.
    pub entry: Arc<SessionEntry>,
}

/// A session of a listed page, borrowed from the index while the page is written
/// ([`SessionManager::list_page_with`]).
#[derive(Debug, Clone, Copy)]
pub struct ListedRow<'a> {
    /// Full session key.
    pub key: &'a SessionKey,
    /// Its index entry.
    pub entry: &'a Arc<SessionEntry>,
}

/// Sessions of all agents.
pub struct SessionManager {
    state_dir: PathBuf,
    clock: Arc<dyn Clock>,
    /// The live sessions, by agent id and session id.
    live: Mutex<HashMap<(String, SessionId), Arc<LiveSession>>>,
    /// What is kept of sessions released while idle (their numbers and last prompt
    /// fingerprint, a few hundred bytes against a live session's buffers), so that they go
    /// on from there when opened again.
    released: Mutex<HashMap<(String, SessionId), Released>>,
    /// The root of every session's untrusted-content fence (random per process): a
    /// session's fence is derived from it and the session id, so it is the same each time
    /// the session is opened in this process.
    fence_root: openclaw_tools::Fence,
    /// Turn usage and timestamps not yet in the index (see `touches`).
    touches: Arc<Touches>,
    /// New sessions' index entries, written in groups (see `creations`).
    creations: Creations,
    /// What start-up and recovery repaired.
    repairs: Repairs,
    /// One store per agent, so each agent's index is parsed once (the store keeps it).
    stores: Mutex<HashMap<AgentId, SessionStore>>,
}

impl std::fmt::Debug for SessionManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionManager")
            .field("state_dir", &self.state_dir)
            .finish_non_exhaustive()
    }
}

impl SessionManager {
    /// Sessions under `state_dir`, timestamps from `clock`.
    pub fn new(state_dir: PathBuf, clock: Arc<dyn Clock>) -> Self {
        Self {
            state_dir,
            clock,
            live: Mutex::new(HashMap::new()),
            released: Mutex::default(),
            fence_root: openclaw_tools::Fence::random(),
            touches: Arc::default(),
            creations: Creations::default(),
            repairs: Repairs::default(),
            stores: Mutex::default(),
        }
    }

    /// Records a finished turn's usage and time for the session's index
    /// entry; the index is rewritten behind the run (see `touches`).
    pub fn record_turn(&self, agent: &AgentView, key: &SessionKey, delta: TurnDelta) {
        if !self.touches.add(&agent.id, key, delta) {
            return;
        }
        let Ok(store) = self.store(agent) else { return };
        let touches = Arc::clone(&self.touches);
        let agent_id = agent.id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(super::touches::WRITE_BEHIND).await;
            if let Err(error) = touches.flush(&agent_id, store).await {
                tracing::warn!(agent = %agent_id, %error, "session index not updated yet; retried on the next write");
            }
        });
    }

    /// Writes the agent's pending turn deltas into its index. A failure is
    /// logged and the deltas stay pending: readers then see older counters.
    async fn settle_touches(&self, agent: &AgentView) {
        let Ok(store) = self.store(agent) else { return };
        if let Err(error) = self.touches.flush(&agent.id, store).await {
            tracing::warn!(agent = %agent.id, %error, "session index not updated yet; retried on the next write");
        }
    }

    fn store(&self, agent: &AgentView) -> Result<SessionStore, RuntimeError> {
        let id = AgentId::new(agent.id.clone())
            .map_err(|e| RuntimeError::invalid("agent_id", e.to_string()))?;
        Ok(self.store_of(id))
    }

    /// The agent's store (a clone sharing its parsed index).
    fn store_of(&self, id: AgentId) -> SessionStore {
        let mut stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        stores
            .entry(id)
            .or_insert_with_key(|id| {
                SessionStore::new(&self.state_dir, id, Arc::clone(&self.clock))
            })
            .clone()
    }

    /// Path of a session's transcript.
    pub fn transcript_path(
        &self,
        agent: &AgentView,
        id: &SessionId,
    ) -> Result<PathBuf, RuntimeError> {
        Ok(self.store(agent)?.dir().transcript(id))
    }

    /// Start-up: an index that cannot be read at all (truncated, empty, not a JSON object,
    /// random bytes) is moved aside and rebuilt from the transcripts' headers, so every
    /// session stays reachable. `None` when the index was readable (or absent).
    pub fn repair_index(
        &self,
        agent: &AgentView,
    ) -> Result<Option<openclaw_transcript::RebuildReport>, RuntimeError> {
        let store = self.store(agent)?;
        match store.snapshot() {
            Ok(_) => Ok(None),
            Err(openclaw_transcript::Error::CorruptIndex { reason, .. }) => {
                let report = store.rebuild_index()?;
                self.repairs.record(Repair {
                    kind: RepairKind::IndexRebuilt,
                    agent_id: agent.id.clone(),
                    session_id: None,
                    file: report.corrupt_index_moved_to.clone().unwrap_or_default(),
                    detail: format!(
                        "sessions.json could not be read ({reason}): rebuilt with {} sessions \
                         from the transcripts, {} transcripts without a usable header",
                        report.sessions,
                        report.orphans.len()
                    ),
                    at_ms: unix_millis(self.clock.now()),
                });
                Ok(Some(report))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// What start-up and recovery repaired since this process started, oldest first.
    pub fn repairs(&self) -> Vec<Repair> {
        self.repairs.list()
    }

    /// Sessions of `agent` whose message journal holds messages not marked done (a previous
    /// process acknowledged messages it may not have written). A journal that cannot be read
    /// is listed too, so that its recovery reports why.
    pub fn journaled_sessions(&self, agent: &AgentView) -> Result<Vec<SessionId>, RuntimeError> {
        let dir = self.store(agent)?.dir().path().to_path_buf();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(RuntimeError::Internal(format!("{}: {e}", dir.display()))),
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let is_journal = path
                .extension()
                .is_some_and(|e| e == super::journal::JOURNAL_EXT);
            let non_empty = entry.metadata().is_ok_and(|m| m.len() > 0);
            if let (true, true, Some(stem)) = (
                is_journal,
                non_empty,
                path.file_stem().and_then(|s| s.to_str()),
            ) && let Ok(id) = SessionId::parse(stem)
                && super::journal::Journal::for_transcript(&path)
                    .leftovers()
                    .map_or(true, |left| !left.is_empty())
            {
                found.push(id);
            }
        }
        found.sort_by_key(|id| id.to_string());
        Ok(found)
    }

    /// Creates the session for `key` (and its transcript header), or returns
    /// the existing one. The bool is true when it was created.
    pub async fn create(
        &self,
        agent: &AgentView,
        key: &SessionKey,
        cwd: &Path,
        meta: NewSession,
    ) -> Result<(SessionInfo, bool), RuntimeError> {
        let key = key.clone();
        let store = self.store(agent)?;
        let now = unix_millis(self.clock.now());
        // The common case, a session that exists, reads the index and writes
        // nothing. (The index is only ever replaced whole, so a read without
        // the lock sees one complete version.) Usually the version this process last read or
        // wrote is still the file's: then a `stat` answers, with no blocking task.
        let existing = match store.get_if_cached(&key)? {
            Some(entry) => entry,
            None => {
                let (store, k) = (store.clone(), key.clone());
                blocking(move || Ok(store.get(&k)?)).await?
            }
        };
        let (entry, created) = match existing {
            Some(existing) => (existing, false),
            None => {
                let mut entry = SessionEntry::new(SessionId::new_v4(), now);
                entry.channel = meta.channel;
                entry.chat_type = meta.chat_type;
                entry.display_name = meta.display_name;
                self.creations
                    .create(&agent.id, store, key.clone(), entry)
                    .await?
            }
        };
        let info = SessionInfo {
            agent_id: agent.id.clone(),
            key,
            entry,
        };
        if created {
            // Write the header now so the session's file and cwd exist from the start.
            self.writable(agent, &info, cwd)?
                .append(Vec::new(), true)
                .await?;
            tracing::info!(agent = %agent.id, key = %info.key.as_str(), session_id = %info.entry.session_id, "session created");
        }
        Ok((info, created))
    }

    /// Every session of the agent, most recently updated first. Reads only the index.
    pub async fn list(&self, agent: &AgentView) -> Result<Vec<SessionInfo>, RuntimeError> {
        self.settle_touches(agent).await;
        let store = self.store(agent)?;
        let mut all = blocking(move || Ok(store.list()?)).await?;
        all.sort_by(|a, b| {
            b.1.updated_at
                .cmp(&a.1.updated_at)
                .then_with(|| a.0.cmp(&b.0))
        });
        Ok(all
            .into_iter()
            .map(|(key, entry)| SessionInfo {
                agent_id: agent.id.clone(),
                key,
                entry,
            })
            .collect())
    }

    /// One page of `agent`'s sessions in list order (most recently updated first, then by
    /// key): at most `limit` (0: all) of those after `after`, the `(updated_at, key)` of the
    /// previous page's last session; and whether more follow.
    pub async fn list_page(
        &self,
        agent: &AgentView,
        after: Option<(i64, String)>,
        limit: usize,
    ) -> Result<(Vec<SessionInfo>, bool), RuntimeError> {
        self.list_page_with(agent, after, limit, move |agent_id, rows, more| {
            let page = rows
                .iter()
                .map(|row| SessionInfo {
                    agent_id: agent_id.to_owned(),
                    key: row.key.clone(),
                    entry: Arc::clone(row.entry),
                })
                .collect();
            (page, more)
        })
        .await
    }

    /// [`SessionManager::list_page`] handed to `write` as the agent's id, rows borrowed from
    /// the index and whether more follow, on the blocking pool: a caller that only encodes
    /// the page (a reply of 100,000 sessions) copies nothing per session. Only the page's
    /// sessions are sorted: the rest of the index is scanned once and selected from in place.
    pub async fn list_page_with<R, F>(
        &self,
        agent: &AgentView,
        after: Option<(i64, String)>,
        limit: usize,
        write: F,
    ) -> Result<R, RuntimeError>
    where
        F: FnOnce(&str, &[ListedRow<'_>], bool) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.settle_touches(agent).await;
        let store = self.store(agent)?;
        let agent_id = agent.id.clone();
        blocking(move || {
            let index = store.snapshot()?;
            // Each row carries its sort key, read from its entry once: comparisons then stay
            // in this vector instead of following every entry's pointer (the entries of a
            // long-running service are spread over the heap).
            type Order<'a> = (std::cmp::Reverse<i64>, &'a str);
            fn row<'a>(
                (key, entry): (&'a SessionKey, &'a Arc<SessionEntry>),
            ) -> (Order<'a>, ListedRow<'a>) {
                (
                    (std::cmp::Reverse(entry.updated_at), key.as_str()),
                    ListedRow { key, entry },
                )
            }
            let mut rows: Vec<_> = match &after {
                Some((at, last)) => {
                    let cursor = (std::cmp::Reverse(*at), last.as_str());
                    index
                        .iter_shared()
                        .map(row)
                        .filter(|(order, _)| *order > cursor)
                        .collect()
                }
                None => index.iter_shared().map(row).collect(),
            };
            let more = limit != 0 && rows.len() > limit;
            if more {
                rows.select_nth_unstable_by(limit, |a, b| a.0.cmp(&b.0));
                rows.truncate(limit);
            }
            rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            let page: Vec<ListedRow<'_>> = rows.into_iter().map(|(_, row)| row).collect();
            Ok(write(&agent_id, &page, more))
        })
        .await
    }

    /// One session, by key or id.
    pub async fn get(
        &self,
        agent: &AgentView,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        self.settle_touches(agent).await;
        self.lookup(agent, target).await
    }

    /// One session, by key or id, without waiting for turn counters still
    /// being written (for the runtime's own reads of routing and overrides,
    /// which are written at once).
    pub(crate) async fn lookup(
        &self,
        agent: &AgentView,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let store = self.store(agent)?;
        let found = match target {
            SessionTarget::Key(k) => {
                let key = key::normalize(&agent.id, k)?;
                // The index this process last read or wrote is usually still
                // the file's version: then a `stat` answers, with no blocking task.
                let entry = match store.get_if_cached(&key)? {
                    Some(entry) => entry,
                    None => {
                        let lookup = key.clone();
                        blocking(move || Ok(store.get(&lookup)?)).await?
                    }
                };
                entry.map(|entry| (key, entry))
            }
            SessionTarget::Id(id) => {
                let id = SessionId::parse(id.trim())
                    .map_err(|e| RuntimeError::invalid("session_id", e.to_string()))?;
                blocking(move || Ok(store.find_by_id(&id)?)).await?
            }
        };
        let (key, entry) = found.ok_or_else(|| {
            RuntimeError::SessionNotFound(format!(
                "no session {} for agent {:?}",
                describe(target),
                agent.id
            ))
        })?;
        Ok(SessionInfo {
            agent_id: agent.id.clone(),
            key,
            entry,
        })
    }

    /// The live session with its transcript writer running (started on
    /// first use), ready for reads and appends.
    pub fn writable(
        &self,
        agent: &AgentView,
        info: &SessionInfo,
        cwd: &Path,
    ) -> Result<Arc<LiveSession>, RuntimeError> {
        let path = self.transcript_path(agent, &info.entry.session_id)?;
        let live = self.live(&agent.id, &info.entry.session_id);
        live.start_transcript(
            || TranscriptSpec {
                path,
                id: info.entry.session_id,
                key: info.key.clone(),
                cwd: cwd.display().to_string(),
            },
            Arc::clone(&self.clock),
        );
        Ok(live)
    }

    /// Ends the session in this process (it is being reset or deleted): kills every
    /// background command it still runs, with everything those started, and stops its
    /// transcript writer, if running, releasing its file lock.
    async fn close_writer(&self, agent: &AgentView, id: &SessionId) {
        let live = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(agent.id.clone(), *id))
            .cloned();
        if let Some(live) = live {
            live.processes.kill_all();
            live.close_transcript().await;
        }
    }

    /// Archives the transcript and points the key at a new session id, whose run, message
    /// and command numbers go on from the old one's.
    pub async fn reset(
        &self,
        agent: &AgentView,
        target: &SessionTarget,
        cwd: &Path,
    ) -> Result<SessionInfo, RuntimeError> {
        let info = self.get(agent, target).await?;
        self.close_writer(agent, &info.entry.session_id).await;
        let store = self.store(agent)?;
        let key = info.key.clone();
        let reset = blocking(move || Ok(store.reset(&key)?)).await?;
        tracing::info!(agent = %agent.id, key = %info.key.as_str(), old = %info.entry.session_id, new = %reset.session_id, "session reset");
        // The key's numbers go on across the reset, so a client de-duplicating by run or
        // message number never sees one again: the new session starts where the old one
        // ended, and its floor is on disk before anything else.
        let counters = self.retire(&agent.id, &info.entry.session_id).await;
        if let Some(path) = self.numbers_path(&agent.id, &reset.session_id) {
            blocking(move || {
                Self::write_numbers(&path, counters);
                Ok(())
            })
            .await?;
        }
        self.released
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                (agent.id.clone(), reset.session_id),
                Released::numbered(counters),
            );
        let new = self
            .get(agent, &SessionTarget::Key(info.key.as_str().to_owned()))
            .await?;
        self.writable(agent, &new, cwd)?
            .append(Vec::new(), true)
            .await?;
        Ok(new)
    }

    /// Removes the key from the index and archives the transcript; the session's numbers
    /// file and message journal go with it. Returns where the transcript went.
    pub async fn delete(
        &self,
        agent: &AgentView,
        target: &SessionTarget,
    ) -> Result<Option<PathBuf>, RuntimeError> {
        let info = self.get(agent, target).await?;
        self.close_writer(agent, &info.entry.session_id).await;
        let store = self.store(agent)?;
        let key = info.key.clone();
        let deleted = blocking(move || Ok(store.delete(&key)?)).await?;
        self.retire(&agent.id, &info.entry.session_id).await;
        tracing::info!(agent = %agent.id, key = %info.key.as_str(), "session deleted");
        Ok(deleted.and_then(|d| d.archived))
    }

    /// The live session (created on first use; its transcript writer is
    /// started by [`Self::writable`]). Its numbers go on from what this process kept of it,
    /// else from the floor on disk; the floor ahead of them is written before the first
    /// number is handed out (see [`LiveSession::admission`]), not here.
    pub fn live(&self, agent_id: &str, id: &SessionId) -> Arc<LiveSession> {
        let mut map = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        let live = map
            .entry((agent_id.to_owned(), *id))
            .or_insert_with_key(|slot| {
                let path = self.numbers_path(agent_id, id);
                let kept = self
                    .released
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(slot)
                    .unwrap_or_else(|| {
                        let floor = path
                            .as_deref()
                            .map(super::numbers::read)
                            .unwrap_or_default();
                        Released::numbered(floor)
                    });
                let fence = self.fence_root.derived(id.to_string().as_bytes());
                Arc::new(LiveSession::resumed(fence, kept, path))
            });
        live.touch();
        Arc::clone(live)
    }

    /// The numbers file of a session, when its agent id is valid.
    fn numbers_path(&self, agent_id: &str, id: &SessionId) -> Option<PathBuf> {
        let agent = AgentId::new(agent_id.to_owned()).ok()?;
        Some(super::numbers::path_of(
            &self.store_of(agent).dir().transcript(id),
        ))
    }

    /// Ends a deleted or reset session in this process for good: it leaves the live and
    /// released sessions, writes no floor again, and its numbers file and (emptied) message
    /// journal are removed. Returns the numbers it had handed out (the floor on disk when
    /// this process never opened it), for a reset to go on from.
    async fn retire(&self, agent_id: &str, id: &SessionId) -> Counters {
        let slot = (agent_id.to_owned(), *id);
        let live = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&slot);
        let kept = self
            .released
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&slot)
            .map(|kept| kept.counters());
        let known = match live {
            Some(live) => {
                live.retire().await;
                Some(live.released().counters())
            }
            None => kept,
        };
        let Some(path) = self.numbers_path(agent_id, id) else {
            return known.unwrap_or_default();
        };
        let journal = path.with_extension(super::journal::JOURNAL_EXT);
        let removed = blocking(move || {
            let floor = known.unwrap_or_else(|| super::numbers::read(&path));
            for file in [&path, &journal] {
                match std::fs::remove_file(file) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(error) => {
                        tracing::warn!(path = %file.display(), %error, "file of an ended session not removed")
                    }
                }
            }
            Ok(floor)
        })
        .await;
        removed.unwrap_or_else(|error| {
            tracing::error!(%error, "files of an ended session not removed");
            known.unwrap_or_default()
        })
    }

    /// Writes a session's numbers floor; a failure is logged (numbers may then repeat after
    /// a crash, never within this process). Blocking: called on the blocking pool.
    fn write_numbers(path: &Path, floor: Counters) {
        // A session's directory appears with its first transcript line; the floor may come
        // first.
        if let Some(dir) = path.parent()
            && let Err(error) = std::fs::create_dir_all(dir)
        {
            tracing::error!(path = %dir.display(), %error, "session numbers not written");
            return;
        }
        if let Err(error) = super::numbers::write(path, floor) {
            tracing::error!(path = %path.display(), %error, "session numbers not written");
        }
    }

    /// Releases the sessions that have been idle for `idle_for` (no run active, queued or
    /// collecting, no watcher, no background command running, held by nothing but this
    /// manager): their transcript writer is stopped (flushed, file lock and descriptors
    /// released) and their buffers freed. Their numbers and last prompt fingerprint are kept,
    /// so a session opened again goes on where it was; its transcript is read again then. Returns how many were released.
    pub async fn release_idle(&self, idle_for: std::time::Duration) -> usize {
        let now = tokio::time::Instant::now();
        let released: Vec<((String, SessionId), Arc<LiveSession>)> = {
            let mut map = self.live.lock().unwrap_or_else(PoisonError::into_inner);
            // Under the map lock nobody can take a new handle, so a count of one means the
            // map holds the only one.
            let idle: Vec<(String, SessionId)> = map
                .iter()
                .filter(|(_, live)| Arc::strong_count(live) == 1 && live.idle_for(now, idle_for))
                .map(|(slot, _)| slot.clone())
                .collect();
            idle.into_iter()
                .filter_map(|slot| map.remove(&slot).map(|live| (slot, live)))
                .collect()
        };
        if released.is_empty() {
            return 0;
        }
        {
            let mut kept = self.released.lock().unwrap_or_else(PoisonError::into_inner);
            for (slot, live) in &released {
                kept.insert(slot.clone(), live.released());
            }
        }
        let count = released.len();
        // Closed side by side: each close waits for a flush on the blocking pool, which a
        // busy service keeps full, so one after another would release a few sessions a
        // second while new ones keep opening.
        let closing: Vec<_> = released
            .into_iter()
            .map(|(_, live)| tokio::spawn(async move { live.close_transcript().await }))
            .collect();
        for close in closing {
            let _ = close.await;
        }
        tracing::debug!(sessions = count, "idle sessions released");
        count
    }

    /// The live session if it is open now (never opens one: for looking without the cost).
    pub fn peek(&self, agent_id: &str, id: &SessionId) -> Option<Arc<LiveSession>> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(agent_id.to_owned(), *id))
            .cloned()
    }

    /// How many sessions are live in this process (opened and not released).
    pub fn live_count(&self) -> usize {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Opens a session for its runs: the live session with its transcript writer and its message
    /// journal, after writing into the transcript whatever a previous process acknowledged
    /// but never wrote (once per process and session, before anything new).
    pub(crate) async fn open(
        &self,
        agent: &AgentView,
        info: &SessionInfo,
        cwd: &Path,
    ) -> Result<Session, RuntimeError> {
        let live = self.writable(agent, info, cwd)?;
        let transcript = self.transcript_path(agent, &info.entry.session_id)?;
        let journal = live.journal(&transcript);
        live.recover_once(|| async {
            let recovered =
                recover_journal(self.clock.as_ref(), &live, &journal, &info.key).await?;
            if let Some((count, file)) = recovered.quarantined {
                self.repairs.record(Repair {
                    kind: RepairKind::MessagesQuarantined,
                    agent_id: agent.id.clone(),
                    session_id: Some(info.entry.session_id.to_string()),
                    file,
                    detail: format!(
                        "{count} acknowledged message(s) too large for a transcript line were \
                         set aside; {} others were saved to the transcript",
                        recovered.saved
                    ),
                    at_ms: unix_millis(self.clock.now()),
                });
            }
            Ok::<(), RuntimeError>(())
        })
        .await?;
        Ok(Session {
            agent: agent.clone(),
            key: info.key.clone(),
            session_id: info.entry.session_id.to_string(),
            kind: key::kind_of(&info.key),
            cwd: cwd.to_path_buf(),
            live,
            journal,
        })
    }

    /// Applies `change` to a session's index entry (atomic rewrite).
    pub async fn update_entry<F>(
        &self,
        agent: &AgentView,
        key: &SessionKey,
        change: F,
    ) -> Result<(), RuntimeError>
    where
        F: FnOnce(&mut SessionEntry) + Send + 'static,
    {
        let store = self.store(agent)?;
        let key = key.clone();
        blocking(move || {
            let found = store.update(|index| index.get_mut(&key).map(change).is_some())?;
            if found {
                Ok(())
            } else {
                Err(RuntimeError::SessionNotFound(format!(
                    "no session with key {:?}",
                    key.as_str()
                )))
            }
        })
        .await
    }

    /// True when any session of any agent has an active run.
    pub fn any_running(&self) -> bool {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .any(|s| s.is_running())
    }

    /// True when no session has a run active, queued or collecting.
    pub fn all_idle(&self) -> bool {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .all(|s| s.is_idle())
    }

    /// Cancels every active run (shutdown after the drain window).
    pub fn cancel_all(&self) {
        for live in self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
        {
            live.queue().cancel_active();
        }
    }

    /// Flushes and stops every transcript writer (graceful shutdown).
    pub async fn close_all(&self) {
        let live: Vec<Arc<LiveSession>> = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        for session in &live {
            session.close_transcript().await;
        }
        // Nothing is numbered after the drain: the exact numbers, so the next start goes on
        // without a gap.
        let mut floors: Vec<(PathBuf, Counters)> = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(|((agent_id, id), live)| {
                Some((self.numbers_path(agent_id, id)?, live.released().counters()))
            })
            .collect();
        floors.extend(
            self.released
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .filter_map(|((agent_id, id), kept)| {
                    Some((self.numbers_path(agent_id, id)?, kept.counters()))
                }),
        );
        let written = blocking(move || {
            for (path, counters) in floors {
                Self::write_numbers(&path, counters);
            }
            Ok(())
        })
        .await;
        if let Err(error) = written {
            tracing::error!(%error, "session numbers not written at shutdown");
        }
        for agent_id in self.touches.dirty_agents() {
            let Ok(id) = AgentId::new(agent_id.clone()) else {
                continue;
            };
            let store = self.store_of(id);
            if let Err(error) = self.touches.flush(&agent_id, store).await {
                tracing::error!(agent = %agent_id, %error, "turn counters not written to the session index at shutdown");
            }
        }
    }
}

fn describe(target: &SessionTarget) -> String {
    match target {
        SessionTarget::Key(k) => format!("with key {k:?}"),
        SessionTarget::Id(id) => format!("with id {id:?}"),
    }
}

//! New sessions' index entries, written in groups.
//!
//! Creating a session adds its entry to the agent's `sessions.json`, which is
//! replaced whole and durably (temp file, fsync, rename). With thousands of
//! sessions that file is megabytes, and sessions created together would each
//! rewrite it in turn behind the index lock. So creations that arrive together
//! are written together: the first to take the agent's writer writes every
//! creation pending at that moment in one index update (a group commit), and
//! each creator waits for the update that holds its entry. A session is never
//! used before its entry is durable, as before.
//!
//! The write runs in a task of its own, so a creator that gives up (its client
//! went away) cannot leave the others waiting. If a group's write fails, each
//! of its creators writes its entry alone and gets its own error.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use openclaw_transcript::{SessionEntry, SessionKey, SessionStore};
use tokio::sync::oneshot;

use super::blocking;
use crate::error::RuntimeError;

/// The entry a key has after a creation, and whether this creation made it.
pub(crate) type Created = (Arc<SessionEntry>, bool);

/// Pending creations of every agent.
#[derive(Debug, Default)]
pub(crate) struct Creations {
    agents: Mutex<HashMap<String, Arc<AgentCreations>>>,
    /// Index updates written for groups, over every agent.
    groups: Arc<AtomicU64>,
}

#[derive(Debug, Default)]
struct AgentCreations {
    pending: Mutex<Vec<Pending>>,
    /// Held while a group is written: one index update per agent at a time.
    writer: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Debug)]
struct Pending {
    key: SessionKey,
    entry: SessionEntry,
    /// `None`: the group's write failed; write alone.
    done: oneshot::Sender<Option<Created>>,
}

impl Creations {
    fn slot(&self, agent_id: &str) -> Arc<AgentCreations> {
        let mut agents = self.agents.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(agents.entry(agent_id.to_owned()).or_default())
    }

    /// Adds `entry` under `key` unless the key has one already, durably, with
    /// every creation of the agent pending at the same time.
    pub(crate) async fn create(
        &self,
        agent_id: &str,
        store: SessionStore,
        key: SessionKey,
        entry: SessionEntry,
    ) -> Result<Created, RuntimeError> {
        let slot = self.slot(agent_id);
        let (done, mut outcome) = oneshot::channel();
        slot.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Pending {
                key: key.clone(),
                entry: entry.clone(),
                done,
            });
        let writer = Arc::clone(&slot.writer).lock_owned().await;
        match outcome.try_recv() {
            // An earlier group held it.
            Ok(Some(created)) => return Ok(created),
            Ok(None) | Err(oneshot::error::TryRecvError::Closed) => {
                drop(writer);
                return write_alone(store, key, entry).await;
            }
            // Not written yet: this creator writes the group.
            Err(oneshot::error::TryRecvError::Empty) => {}
        }
        let group =
            std::mem::take(&mut *slot.pending.lock().unwrap_or_else(PoisonError::into_inner));
        let number = self.groups.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::trace!(
            agent = agent_id,
            group = number,
            creations = group.len(),
            "new sessions written together"
        );
        tokio::spawn(write_group(store.clone(), group, writer));
        match outcome.await {
            Ok(Some(created)) => Ok(created),
            Ok(None) | Err(_) => write_alone(store, key, entry).await,
        }
    }
}

/// Writes one group in one index update and tells each creator its outcome.
async fn write_group(
    store: SessionStore,
    group: Vec<Pending>,
    _writer: tokio::sync::OwnedMutexGuard<()>,
) {
    let requests: Vec<(SessionKey, SessionEntry)> = group
        .iter()
        .map(|p| (p.key.clone(), p.entry.clone()))
        .collect();
    let written = blocking(move || {
        Ok(store.update(|index| {
            requests
                .into_iter()
                .map(|(key, entry)| insert_new(index, key, entry))
                .collect::<Vec<_>>()
        })?)
    })
    .await;
    match written {
        Ok(outcomes) => {
            for (pending, created) in group.into_iter().zip(outcomes) {
                // A creator that went away no longer waits.
                let _ = pending.done.send(Some(created));
            }
        }
        Err(error) => {
            tracing::debug!(%error, creations = group.len(), "group write of new sessions failed; each is written alone");
            for pending in group {
                let _ = pending.done.send(None);
            }
        }
    }
}

/// One creation in an index update of its own.
async fn write_alone(
    store: SessionStore,
    key: SessionKey,
    entry: SessionEntry,
) -> Result<Created, RuntimeError> {
    blocking(move || Ok(store.update(|index| insert_new(index, key, entry))?)).await
}

fn insert_new(
    index: &mut openclaw_transcript::SessionIndex,
    key: SessionKey,
    entry: SessionEntry,
) -> Created {
    match index.get_shared(&key) {
        Some(existing) => (Arc::clone(existing), false),
        None => {
            index.insert(key, entry.clone());
            (Arc::new(entry), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_transcript::{AgentId, SessionId, SystemClock};

    fn store_in(dir: &std::path::Path) -> SessionStore {
        SessionStore::new(dir, &AgentId::new("main").unwrap(), Arc::new(SystemClock))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn creations_at_once_are_each_durable_and_one_key_is_created_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        let creations = Arc::new(Creations::default());
        let mut tasks = Vec::new();
        for i in 0..200 {
            let (creations, store) = (Arc::clone(&creations), store.clone());
            // Every fourth creation asks for a key another one asks for too.
            let key =
                SessionKey::new(format!("agent:main:s{}", if i % 4 == 0 { 0 } else { i })).unwrap();
            tasks.push(tokio::spawn(async move {
                let entry = SessionEntry::new(SessionId::new_v4(), 1);
                let mine = entry.session_id;
                let (got, created) = creations
                    .create("main", store, key.clone(), entry)
                    .await
                    .unwrap();
                (key, mine, got.session_id, created)
            }));
        }
        let mut created_zero = 0;
        for task in tasks {
            let (key, mine, got, created) = task.await.unwrap();
            assert_eq!(created, mine == got, "{key:?}");
            if key.as_str() == "agent:main:s0" {
                created_zero += usize::from(created);
            }
        }
        assert_eq!(created_zero, 1, "the shared key was created once");
        // Written together: far fewer index updates than creations.
        let groups = creations.groups.load(Ordering::Relaxed);
        assert!(groups <= 20, "{groups} index updates for 200 creations");
        // What a fresh reader of the file sees: every key, with the entry its creator got.
        let fresh = store_in(dir.path()).load_index().unwrap();
        assert_eq!(fresh.len(), 151);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_group_gives_each_creator_its_own_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path());
        // The index's path is a directory: no update can replace it.
        std::fs::create_dir_all(store.dir().index()).unwrap();
        let creations = Arc::new(Creations::default());
        let mut tasks = Vec::new();
        for i in 0..8 {
            let (creations, store) = (Arc::clone(&creations), store.clone());
            tasks.push(tokio::spawn(async move {
                let key = SessionKey::new(format!("agent:main:f{i}")).unwrap();
                creations
                    .create(
                        "main",
                        store,
                        key,
                        SessionEntry::new(SessionId::new_v4(), 1),
                    )
                    .await
            }));
        }
        for task in tasks {
            assert!(task.await.unwrap().is_err());
        }
        assert!(creations.slot("main").pending.lock().unwrap().is_empty());
    }
}

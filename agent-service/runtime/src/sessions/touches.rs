//! Turn bookkeeping for the session index, written behind the runs.
//!
//! Every model turn adds its token usage to the session's index entry and
//! touches its timestamps. Rewriting `sessions.json` durably (temp file,
//! fsync, rename, fsync of the directory) costs milliseconds, and with many
//! sessions every turn of an agent would queue on the index lock for its own
//! rewrite. So a turn only records its delta here and goes on; one writer per
//! agent applies every pending delta in a single index update, started
//! [`WRITE_BEHIND`] after the first delta it takes (a group commit: what
//! arrives meanwhile, or during the write, goes into the same or the next one).
//!
//! Reads of the index (`list`, `get`, and so reset and delete) first wait for
//! the pending deltas, so a client never misses its own finished turn, and a
//! reset cannot move one conversation's usage onto the next. Shutdown writes
//! what is left. A crash loses at most the deltas not yet written: counters
//! and timestamps are bookkeeping, and the transcript, whose assistant entries
//! carry their usage, stays the record.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use openclaw_transcript::{SessionKey, SessionStore};

use crate::error::RuntimeError;

/// How long a turn's delta waits before its write starts, so that the turns of a busy agent
/// share one index write (a few a second at most, however many turns end).
pub(crate) const WRITE_BEHIND: Duration = Duration::from_millis(200);

/// What one turn adds to its session's index entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnDelta {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Total tokens.
    pub total: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// When the turn ended (ms since the epoch).
    pub at: i64,
    /// Compactions written.
    pub compactions: u64,
    /// When a memory-flush turn last ran (ms since the epoch).
    pub memory_flush_at: Option<i64>,
}

impl TurnDelta {
    fn merge(&mut self, later: &Self) {
        self.input += later.input;
        self.output += later.output;
        self.total += later.total;
        self.cache_read += later.cache_read;
        self.cache_write += later.cache_write;
        self.at = self.at.max(later.at);
        self.compactions += later.compactions;
        self.memory_flush_at = self.memory_flush_at.max(later.memory_flush_at);
    }
}

/// Pending deltas of every agent.
#[derive(Debug, Default)]
pub(crate) struct Touches {
    agents: Mutex<HashMap<String, Arc<AgentTouches>>>,
}

#[derive(Debug, Default)]
struct AgentTouches {
    pending: Mutex<HashMap<SessionKey, TurnDelta>>,
    /// Held while a batch is written: one writer per agent at a time.
    writer: tokio::sync::Mutex<()>,
    /// A write of this agent's deltas is scheduled and has not started yet.
    scheduled: AtomicBool,
}

impl Touches {
    fn slot(&self, agent_id: &str) -> Arc<AgentTouches> {
        let mut agents = self.agents.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(agents.entry(agent_id.to_owned()).or_default())
    }

    /// Adds a turn's delta; write it with [`Touches::flush`]. Returns whether the caller
    /// should schedule that write: false while one is scheduled and not yet started (it
    /// takes this delta too).
    pub(crate) fn add(&self, agent_id: &str, key: &SessionKey, delta: TurnDelta) -> bool {
        let slot = self.slot(agent_id);
        let mut pending = slot.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.entry(key.clone()).or_default().merge(&delta);
        !slot.scheduled.swap(true, Ordering::SeqCst)
    }

    /// The agents with deltas waiting.
    pub(crate) fn dirty_agents(&self) -> Vec<String> {
        let agents = self.agents.lock().unwrap_or_else(PoisonError::into_inner);
        agents
            .iter()
            .filter(|(_, slot)| {
                !slot
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_empty()
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Writes the agent's pending deltas (and any that arrive while an earlier
    /// batch is being written) into its index. Returns once every delta added
    /// before the call is written. On failure the batch stays pending for the
    /// next flush.
    pub(crate) async fn flush(
        &self,
        agent_id: &str,
        store: SessionStore,
    ) -> Result<(), RuntimeError> {
        let slot = self.slot(agent_id);
        let _writer = slot.writer.lock().await;
        // Deltas added from here on need a write of their own.
        slot.scheduled.store(false, Ordering::SeqCst);
        let batch =
            std::mem::take(&mut *slot.pending.lock().unwrap_or_else(PoisonError::into_inner));
        if batch.is_empty() {
            // Written by the batch this call waited for.
            return Ok(());
        }
        let applied = batch.clone();
        let written = tokio::task::spawn_blocking(move || {
            store.update(|index| {
                for (key, delta) in &applied {
                    // A session deleted since its turn has nothing to update.
                    if let Some(entry) = index.get_mut(key) {
                        entry.input_tokens += delta.input;
                        entry.output_tokens += delta.output;
                        entry.total_tokens += delta.total;
                        entry.cache_read += delta.cache_read;
                        entry.cache_write += delta.cache_write;
                        entry.updated_at = entry.updated_at.max(delta.at);
                        entry.last_interaction_at =
                            Some(entry.last_interaction_at.unwrap_or(0).max(delta.at));
                        entry.compaction_count += delta.compactions;
                        if let Some(at) = delta.memory_flush_at {
                            // OpenClaw's field names: when the flush ran, and in which
                            // compaction cycle.
                            entry.extra.insert("memoryFlushAt".to_owned(), at.into());
                            entry.extra.insert(
                                "memoryFlushCompactionCount".to_owned(),
                                entry.compaction_count.into(),
                            );
                        }
                    }
                }
            })
        })
        .await
        .map_err(|e| RuntimeError::Internal(format!("index task failed: {e}")))
        .and_then(|r| r.map_err(RuntimeError::from));
        if written.is_err() {
            let mut pending = slot.pending.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, delta) in batch {
                let merged = pending.entry(key).or_default();
                let later = *merged;
                *merged = delta;
                merged.merge(&later);
            }
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_of_one_session_add_up() {
        let touches = Touches::default();
        let key = SessionKey::new("agent:main:main").unwrap();
        let first = touches.add(
            "main",
            &key,
            TurnDelta {
                input: 10,
                output: 2,
                total: 12,
                at: 5,
                ..TurnDelta::default()
            },
        );
        let second = touches.add(
            "main",
            &key,
            TurnDelta {
                input: 1,
                output: 1,
                total: 2,
                cache_read: 6,
                cache_write: 3,
                at: 3,
                compactions: 1,
                memory_flush_at: Some(2),
            },
        );
        assert!(first, "the first delta schedules a write");
        assert!(!second, "the scheduled write takes the second delta too");
        assert_eq!(touches.dirty_agents(), ["main"]);
        let slot = touches.slot("main");
        let pending = slot.pending.lock().unwrap();
        assert_eq!(
            pending[&key],
            TurnDelta {
                input: 11,
                output: 3,
                total: 14,
                cache_read: 6,
                cache_write: 3,
                at: 5,
                compactions: 1,
                memory_flush_at: Some(2),
            }
        );
    }
}

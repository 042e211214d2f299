//! One agent's session store: the index plus the transcripts beside it, and the operations
//! that touch both (reset, delete, rebuild).
//!
//! Read-modify-write of `sessions.json` happens under an exclusive lock on the sidecar
//! `sessions.json.lock` (held only for the update itself), so two processes never lose each
//! other's changes. Listing takes no lock: the index is replaced atomically.
//!
//! Reads are answered from the parsed index the store keeps (see `index_cache`), checked
//! against the file with one `stat` per read; the store's own writes update it in place of a
//! re-read.

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::Timestamp;

use crate::clock::{Clock, file_stamp, unix_millis};
use crate::durable::sync_dir;
use crate::error::{Error, Result, io_at};
use crate::index::{SessionEntry, SessionIndex};
use crate::index_cache::{IndexCache, Write};
use crate::paths::{
    AgentId, ArchiveKind, INDEX_FILE, SessionId, SessionKey, SessionsDir, TRANSCRIPT_EXT,
    with_suffix,
};
use crate::reader::{ReadOptions, TranscriptReader};
use crate::tail::read_leaf;
use crate::writer::{DEFAULT_LOCK_WAIT, lock_exclusive};

/// Result of [`SessionStore::reset`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reset {
    /// The session the key pointed at before, if any.
    pub previous: Option<SessionId>,
    /// Where its transcript was archived, if it had one.
    pub archived: Option<PathBuf>,
    /// The new session id the key now points at. Its transcript does not exist yet: create it
    /// with [`crate::TranscriptWriter::create`].
    pub session_id: SessionId,
}

/// Result of [`SessionStore::delete`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleted {
    /// The session the key pointed at.
    pub session_id: SessionId,
    /// Where its transcript was archived, if it had one.
    pub archived: Option<PathBuf>,
}

/// Result of [`SessionStore::rebuild_index`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildReport {
    /// Keys in the rebuilt index.
    pub sessions: usize,
    /// Keys added from transcript headers.
    pub added: usize,
    /// Where the previous index was moved because it was corrupt.
    pub corrupt_index_moved_to: Option<PathBuf>,
    /// Transcripts whose header has no session key (or no valid header): left in place,
    /// not indexed.
    pub orphans: Vec<SessionId>,
    /// Unindexed transcripts whose key is already taken (by the index or a newer transcript):
    /// left in place, not indexed.
    pub superseded: Vec<SessionId>,
}

/// An agent's sessions directory with its index.
///
/// Clones share the parsed index: keep one store (or clones of it) per directory and
/// process, so the index is parsed once rather than by every new store.
#[derive(Clone)]
pub struct SessionStore {
    dir: SessionsDir,
    clock: Arc<dyn Clock>,
    read: ReadOptions,
    cache: Arc<IndexCache>,
}

impl SessionStore {
    /// The store of `agent` under `state_dir`.
    pub fn new(state_dir: impl AsRef<Path>, agent: &AgentId, clock: Arc<dyn Clock>) -> Self {
        Self {
            dir: SessionsDir::new(state_dir, agent),
            clock,
            read: ReadOptions::default(),
            cache: Arc::default(),
        }
    }

    /// The directory layout.
    pub fn dir(&self) -> &SessionsDir {
        &self.dir
    }

    /// The index as it is now (missing: empty; unparseable: [`Error::CorruptIndex`]), shared:
    /// parsed at most once per version of the file.
    pub fn snapshot(&self) -> Result<Arc<SessionIndex>> {
        let path = self.dir.index();
        if let Some(hit) = self.cache.current_if_cached(&path)? {
            return Ok(hit);
        }
        // Read under a shared hold of the index lock, so no fold of the update log by another
        // process falls between reading the log and reading the index (see `index_log`).
        let _shared = self.lock_index_shared()?;
        self.cache.current(&path)
    }

    /// A copy of the index (see [`SessionStore::snapshot`] for one without the copy).
    pub fn load_index(&self) -> Result<SessionIndex> {
        Ok(SessionIndex::clone(&*self.snapshot()?))
    }

    /// Every valid `(key, entry)` in key order, the records shared with the index. Reads only
    /// `sessions.json`, never a transcript.
    pub fn list(&self) -> Result<Vec<(SessionKey, Arc<SessionEntry>)>> {
        Ok(self
            .snapshot()?
            .iter_shared()
            .map(|(key, entry)| (key.clone(), Arc::clone(entry)))
            .collect())
    }

    /// The record for `key`.
    pub fn get(&self, key: &SessionKey) -> Result<Option<Arc<SessionEntry>>> {
        Ok(self.snapshot()?.get_shared(key).cloned())
    }

    /// [`SessionStore::get`] from the version of the index already parsed, when the file is
    /// still that version (one `stat`, no read, no wait); `None` when the index would have to
    /// be read first.
    pub fn get_if_cached(&self, key: &SessionKey) -> Result<Option<Option<Arc<SessionEntry>>>> {
        Ok(self
            .cache
            .current_if_cached(&self.dir.index())?
            .map(|index| index.get_shared(key).cloned()))
    }

    /// The key and record of the session `id`.
    pub fn find_by_id(&self, id: &SessionId) -> Result<Option<(SessionKey, Arc<SessionEntry>)>> {
        Ok(self
            .snapshot()?
            .find_by_id(id)
            .map(|(key, entry)| (key.clone(), Arc::clone(entry))))
    }

    /// Applies `change` to the index and saves it, under the index lock. A large index gets
    /// the changed records appended to its update log instead of being rewritten (see
    /// `index_log`), so the cost follows the change, not the number of sessions.
    pub fn update<R>(&self, change: impl FnOnce(&mut SessionIndex) -> R) -> Result<R> {
        let _lock = self.lock_index()?;
        self.cache
            .update(&self.dir.index(), Write::Changes, |index| Ok(change(index)))
    }

    /// Points `key` at a fresh session id and archives the old transcript as
    /// `<old>.jsonl.reset.<timestamp>`. Routing and preference fields carry over; counters,
    /// the Codex thread binding and unknown fields belong to the old conversation and do not.
    ///
    /// The old transcript's writer must be dropped first: [`Error::Locked`] otherwise (after
    /// [`crate::DEFAULT_LOCK_WAIT`]).
    pub fn reset(&self, key: &SessionKey) -> Result<Reset> {
        let _lock = self.lock_index()?;
        let now = self.clock.now();
        let session_id = SessionId::new_v4();
        let fresh = SessionEntry::new(session_id, unix_millis(now));
        // Index first: a crash before the archive step leaves the old file unreferenced but
        // intact, never a key pointing at a session that was moved away.
        let (previous, held) = self
            .cache
            .update(&self.dir.index(), Write::Changes, |index| {
                let previous = index.get(key).cloned();
                let held = match &previous {
                    Some(old) => self.lock_transcript(&old.session_id)?,
                    None => None,
                };
                let entry = match &previous {
                    Some(old) => carried_over(old.clone(), fresh),
                    None => fresh,
                };
                index.insert(key.clone(), entry);
                Ok((previous, held))
            })?;
        let archived = match (previous.as_ref(), held) {
            (Some(old), Some(_held)) => {
                Some(self.archive(&old.session_id, ArchiveKind::Reset, now)?)
            }
            _ => None,
        };
        Ok(Reset {
            previous: previous.map(|old| old.session_id),
            archived,
            session_id,
        })
    }

    /// Removes `key` and archives its transcript as `<id>.jsonl.deleted.<timestamp>`.
    /// `None` if the key was not in the index.
    pub fn delete(&self, key: &SessionKey) -> Result<Option<Deleted>> {
        let _lock = self.lock_index()?;
        let removed = self
            .cache
            .update(&self.dir.index(), Write::Changes, |index| {
                let Some(entry) = index.get(key).cloned() else {
                    return Ok(None);
                };
                let held = self.lock_transcript(&entry.session_id)?;
                index.remove(key);
                Ok(Some((entry, held)))
            })?;
        let Some((entry, held)) = removed else {
            return Ok(None);
        };
        let archived = match held {
            Some(_held) => {
                Some(self.archive(&entry.session_id, ArchiveKind::Deleted, self.clock.now())?)
            }
            None => None,
        };
        Ok(Some(Deleted {
            session_id: entry.session_id,
            archived,
        }))
    }

    /// Rebuilds `sessions.json` from the transcript headers (their `sessionKey`), e.g. after
    /// [`Error::CorruptIndex`]. A corrupt index is first moved to
    /// `sessions.json.corrupt.<timestamp>` and the index is built from scratch (with the
    /// records of its update log, which are whole records); a readable index stays
    /// authoritative and only gains keys it lacks. The result is written whole, the log
    /// folded in. When several unindexed
    /// transcripts claim one key, the newest header wins.
    pub fn rebuild_index(&self) -> Result<RebuildReport> {
        let _lock = self.lock_index()?;
        let index_path = self.dir.index();
        let mut report = RebuildReport::default();
        // Not `load_index`: that would wait for the shared hold of the lock held here.
        let mut index = match self.cache.current(&index_path) {
            Ok(index) => SessionIndex::clone(&index),
            Err(Error::CorruptIndex { .. }) => {
                let aside = self.dir.path().join(format!(
                    "{INDEX_FILE}.corrupt.{}",
                    file_stamp(self.clock.now())
                ));
                fs::rename(&index_path, &aside).map_err(io_at(&index_path))?;
                self.cache.forget();
                report.corrupt_index_moved_to = Some(aside);
                // The log's records are whole: what they set is kept.
                SessionIndex::load(&index_path)?
            }
            Err(e) => return Err(e),
        };
        let indexed: HashSet<SessionId> = index.iter().map(|(_, e)| e.session_id).collect();
        let mut newest: BTreeMap<SessionKey, (Timestamp, SessionEntry)> = BTreeMap::new();
        for (session_id, path) in self.transcripts()? {
            if indexed.contains(&session_id) {
                continue;
            }
            let header = match TranscriptReader::open(&path, self.read) {
                Ok(reader) => reader.header().cloned(),
                Err(Error::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            let Some((key, header)) = header.and_then(|h| Some((h.session_key.clone()?, h))) else {
                report.orphans.push(session_id);
                continue;
            };
            let created = match header.timestamp.parse::<Timestamp>() {
                Ok(created) => created,
                Err(_) => modified(&path)?,
            };
            let updated = read_leaf(&path, self.read)?
                .and_then(|leaf| leaf.timestamp.parse::<Timestamp>().ok())
                .unwrap_or(created);
            let mut entry = SessionEntry::new(session_id, unix_millis(created));
            entry.updated_at = unix_millis(updated);
            if index.get(&key).is_some() {
                report.superseded.push(session_id);
                continue;
            }
            match newest.get(&key) {
                Some((other, _)) if *other >= created => report.superseded.push(session_id),
                _ => {
                    if let Some((_, lost)) = newest.insert(key, (created, entry)) {
                        report.superseded.push(lost.session_id);
                    }
                }
            }
        }
        report.added = newest.len();
        for (key, (_, entry)) in newest {
            index.insert(key, entry);
        }
        report.sessions = index.len();
        report.orphans.sort();
        report.superseded.sort();
        self.cache.update(&index_path, Write::Whole, |current| {
            *current = index;
            Ok(())
        })?;
        Ok(report)
    }

    /// Live transcripts (`<uuid>.jsonl`) in the directory, sorted by id.
    fn transcripts(&self) -> Result<Vec<(SessionId, PathBuf)>> {
        let dir = self.dir.path();
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_at(dir)(e)),
        };
        let mut found = Vec::new();
        for entry in entries {
            let path = entry.map_err(io_at(dir))?.path();
            if path.extension().is_some_and(|ext| ext == TRANSCRIPT_EXT)
                && let Some(id) = path.file_stem().and_then(|s| s.to_str())
                && let Ok(id) = SessionId::parse(id)
            {
                found.push((id, path));
            }
        }
        found.sort();
        Ok(found)
    }

    fn lock_index(&self) -> Result<File> {
        let dir = self.dir.path();
        fs::create_dir_all(dir).map_err(io_at(dir))?;
        let path = with_suffix(&self.dir.index(), ".lock");
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_at(&path))?;
        // Held for one read-modify-write of a small file, so blocking is short.
        file.lock().map_err(io_at(&path))?;
        Ok(file)
    }

    /// The index lock held shared, for reading the index with its log; `None` when the
    /// directory does not exist yet (nothing to read).
    fn lock_index_shared(&self) -> Result<Option<File>> {
        let path = with_suffix(&self.dir.index(), ".lock");
        let file = match OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_at(&path)(e)),
        };
        file.lock_shared().map_err(io_at(&path))?;
        Ok(Some(file))
    }

    /// Takes the transcript's writer lock so no writer appends while it is archived.
    /// `None` if there is no transcript.
    fn lock_transcript(&self, id: &SessionId) -> Result<Option<File>> {
        let path = self.dir.transcript(id);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_at(&path)(e)),
        };
        lock_exclusive(&file, &path, DEFAULT_LOCK_WAIT)?;
        Ok(Some(file))
    }

    fn archive(&self, id: &SessionId, kind: ArchiveKind, at: Timestamp) -> Result<PathBuf> {
        let from = self.dir.transcript(id);
        let to = self.dir.archive(id, kind, at);
        fs::rename(&from, &to).map_err(io_at(&from))?;
        sync_dir(self.dir.path())?;
        Ok(to)
    }
}

fn modified(path: &Path) -> Result<Timestamp> {
    let modified = fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(io_at(path))?;
    Timestamp::try_from(modified).map_err(|e| io_at(path)(io::Error::other(e)))
}

/// What a reset keeps of `old` on top of `fresh`: the session's routing and its settings. Every
/// field is named, so a field added to [`SessionEntry`] does not compile until this decides
/// whether a reset keeps it.
fn carried_over(old: SessionEntry, fresh: SessionEntry) -> SessionEntry {
    let SessionEntry {
        // The new conversation's own.
        session_id: _,
        created_at: _,
        updated_at: _,
        last_interaction_at: _,
        // Routing and settings: kept.
        chat_type,
        channel,
        display_name,
        model_override,
        provider_override,
        thinking_level,
        queue_mode,
        reasoning_level,
        // The old conversation's: its Codex thread, counters and fields of other writers.
        codex_thread_id: _,
        codex_thread_context: _,
        compaction_count: _,
        input_tokens: _,
        output_tokens: _,
        total_tokens: _,
        cache_read: _,
        cache_write: _,
        extra: _,
    } = old;
    SessionEntry {
        chat_type,
        channel,
        display_name,
        model_override,
        provider_override,
        thinking_level,
        queue_mode,
        reasoning_level,
        ..fresh
    }
}

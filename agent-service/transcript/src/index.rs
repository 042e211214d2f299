//! `sessions.json`: the map from session key to [`SessionEntry`].
//!
//! It is only ever replaced whole (temp file, fsync, rename, fsync dir), never truncated in
//! place, so a crash leaves the old index or the new one. Entries that fail validation are
//! kept verbatim and written back unchanged, so loading and saving never loses data.
//!
//! A large index is not rewritten for every change: [`crate::SessionStore`] appends the
//! changed records to the update log beside it (`sessions.json.log`, see `index_log`) and
//! folds the log into `sessions.json` once the log grows past half the index. Loading applies
//! the log on top of the file, so a reader always sees both.
//!
//! Records are held behind `Arc`s: a copy of the index (every update starts from one) and a
//! listing share them instead of copying 100,000 records; a changed record is copied on write.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::durable::replace;
use crate::error::{Error, Result, io_at};
use crate::paths::{SessionId, SessionKey};

/// One session key's record. Times are milliseconds since the Unix epoch, as OpenClaw writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    /// The session the key currently points at.
    pub session_id: SessionId,
    /// When this session id was assigned.
    #[serde(default)]
    pub created_at: i64,
    /// Last change to the session.
    pub updated_at: i64,
    /// Last inbound message or reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_interaction_at: Option<i64>,
    /// `direct`, `group` or `room`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_type: Option<String>,
    /// Delivery channel, e.g. `telegram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Per-session model override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_override: Option<String>,
    /// Per-session provider override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_override: Option<String>,
    /// Per-session thinking level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    /// Per-session queue mode (`steer`, `followup`, `collect`, `interrupt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_mode: Option<String>,
    /// Per-session reasoning visibility (`on`, `off`, `stream`), set with `/reasoning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_level: Option<String>,
    /// The bound Codex app-server thread, a cache of this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_thread_id: Option<String>,
    /// The per-turn project context that thread holds: workspace-relative
    /// path to the SHA-256 of the block pasted for it (not pasted again
    /// while unchanged).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub codex_thread_context: BTreeMap<String, String>,
    /// Compactions so far.
    #[serde(default)]
    pub compaction_count: u64,
    /// Cumulative input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Cumulative output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Cumulative total tokens.
    #[serde(default)]
    pub total_tokens: u64,
    /// Cumulative input tokens read from the prompt cache (not in `inputTokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read: u64,
    /// Cumulative input tokens written to the prompt cache (not in `inputTokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write: u64,
    /// Every other field, kept as read and written back unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionEntry {
    /// A fresh record for `session_id` created at `at_ms`.
    pub fn new(session_id: SessionId, at_ms: i64) -> Self {
        Self {
            session_id,
            created_at: at_ms,
            updated_at: at_ms,
            last_interaction_at: None,
            chat_type: None,
            channel: None,
            display_name: None,
            model_override: None,
            provider_override: None,
            thinking_level: None,
            queue_mode: None,
            reasoning_level: None,
            codex_thread_id: None,
            codex_thread_context: BTreeMap::new(),
            compaction_count: 0,
            input_tokens: 0,
            output_tokens: 0,
            total_tokens: 0,
            cache_read: 0,
            cache_write: 0,
            extra: Map::new(),
        }
    }
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// An index value that failed validation, kept so that saving writes it back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidIndexEntry {
    /// The value as read.
    pub value: Value,
    /// Why it was not accepted.
    pub reason: String,
}

/// The parsed index.
#[derive(Debug, Clone, Default)]
pub struct SessionIndex {
    entries: BTreeMap<SessionKey, Arc<SessionEntry>>,
    invalid: BTreeMap<String, InvalidIndexEntry>,
    /// Raw keys changed since the index was loaded or last saved: what the update log needs.
    changed: BTreeSet<String>,
}

/// Two indexes are equal when they hold the same records (what changed since loading is not
/// part of the value).
impl PartialEq for SessionIndex {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries && self.invalid == other.invalid
    }
}

impl SessionIndex {
    /// Loads `path` with the update log beside it applied; a missing file is an empty index.
    /// A file that is not a JSON object is [`Error::CorruptIndex`]; single bad entries are kept
    /// aside (see [`SessionIndex::invalid`]). The log is read first, so a log folded in
    /// meanwhile is applied again to an index that already holds it, which changes nothing;
    /// [`crate::SessionStore`] also excludes a concurrent fold with the index lock.
    pub fn load(path: &Path) -> Result<Self> {
        let log_path = crate::index_log::log_path(path);
        let log = match fs::read(&log_path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_at(&log_path)(e)),
        };
        let mut index = match fs::read(path) {
            Ok(bytes) => Self::parse(&bytes, path)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Self::default(),
            Err(e) => return Err(io_at(path)(e)),
        };
        index.apply_log(&log);
        Ok(index)
    }

    /// Applies the complete lines of an update log (see `index_log`) in order; a line that
    /// does not parse (a torn tail) is skipped. Returns the bytes up to the last complete
    /// line.
    pub(crate) fn apply_log(&mut self, bytes: &[u8]) -> u64 {
        let complete = crate::index_log::complete_len(bytes);
        for (key, value) in crate::index_log::records(&bytes[..complete]) {
            if let Ok(valid) = SessionKey::new(key.as_str()) {
                self.entries.remove(&valid);
            }
            self.invalid.remove(&key);
            if let Some(value) = value {
                self.put_raw(key, value);
            }
        }
        complete as u64
    }

    /// Adds one raw `(key, value)` as read from a file: a valid record, or one kept aside.
    fn put_raw(&mut self, key: String, value: Value) {
        let parsed = SessionKey::new(key.as_str())
            .map_err(|e| e.to_string())
            .and_then(|k| {
                SessionEntry::deserialize(&value)
                    .map(|entry| (k, entry))
                    .map_err(|e| e.to_string())
            });
        match parsed {
            Ok((key, entry)) => {
                self.entries.insert(key, Arc::new(entry));
            }
            Err(reason) => {
                self.invalid
                    .insert(key, InvalidIndexEntry { value, reason });
            }
        }
    }

    /// The raw keys changed since loading or the last save, emptied.
    pub(crate) fn take_changed(&mut self) -> BTreeSet<String> {
        std::mem::take(&mut self.changed)
    }

    /// The current value of a raw key as the log records it: the record, the value kept
    /// aside, or `None` when the key is gone.
    pub(crate) fn raw_value(&self, key: &str) -> Result<Option<Value>> {
        if let Some(invalid) = self.invalid.get(key) {
            return Ok(Some(invalid.value.clone()));
        }
        match SessionKey::new(key).ok().and_then(|k| self.entries.get(&k)) {
            Some(entry) => serde_json::to_value(&**entry)
                .map(Some)
                .map_err(Error::Encode),
            None => Ok(None),
        }
    }

    pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<Self> {
        let corrupt = |reason: String| Error::CorruptIndex {
            path: path.to_path_buf(),
            reason,
        };
        let object: Map<String, Value> =
            serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?;
        let mut index = Self::default();
        for (key, value) in object {
            index.put_raw(key, value);
        }
        Ok(index)
    }

    /// Writes the index durably (temp file, fsync, rename, fsync dir), keys in sorted order.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.save_keeping_handle(path).map(drop)
    }

    /// [`SessionIndex::save`], returning an open handle on the file written.
    pub(crate) fn save_keeping_handle(&self, path: &Path) -> Result<File> {
        let bytes = serde_json::to_vec_pretty(self).map_err(Error::Encode)?;
        replace(path, &bytes)
    }

    /// The record for `key`.
    pub fn get(&self, key: &SessionKey) -> Option<&SessionEntry> {
        self.entries.get(key).map(|entry| &**entry)
    }

    /// The record for `key`, shared.
    pub fn get_shared(&self, key: &SessionKey) -> Option<&Arc<SessionEntry>> {
        self.entries.get(key)
    }

    /// The key and record of the session `id` (a scan: the index is keyed by session key).
    pub fn find_by_id(&self, id: &SessionId) -> Option<(&SessionKey, &Arc<SessionEntry>)> {
        self.entries
            .iter()
            .find(|(_, entry)| entry.session_id == *id)
    }

    /// The record for `key`, mutably.
    pub fn get_mut(&mut self, key: &SessionKey) -> Option<&mut SessionEntry> {
        let entry = self.entries.get_mut(key)?;
        self.changed.insert(key.as_str().to_owned());
        Some(Arc::make_mut(entry))
    }

    /// Sets `key`'s record, returning the previous one.
    pub fn insert(&mut self, key: SessionKey, entry: SessionEntry) -> Option<SessionEntry> {
        self.invalid.remove(key.as_str());
        self.changed.insert(key.as_str().to_owned());
        self.entries
            .insert(key, Arc::new(entry))
            .map(Arc::unwrap_or_clone)
    }

    /// Removes `key`, returning its record.
    pub fn remove(&mut self, key: &SessionKey) -> Option<SessionEntry> {
        if self.invalid.remove(key.as_str()).is_some() || self.entries.contains_key(key) {
            self.changed.insert(key.as_str().to_owned());
        }
        self.entries.remove(key).map(Arc::unwrap_or_clone)
    }

    /// Valid records in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&SessionKey, &SessionEntry)> {
        self.entries.iter().map(|(key, entry)| (key, &**entry))
    }

    /// Valid records in key order, shared.
    pub fn iter_shared(&self) -> impl Iterator<Item = (&SessionKey, &Arc<SessionEntry>)> {
        self.entries.iter()
    }

    /// Number of valid records.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No valid records.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Values that failed validation, by raw key.
    pub fn invalid(&self) -> &BTreeMap<String, InvalidIndexEntry> {
        &self.invalid
    }

    /// The valid records, in key order.
    pub fn into_entries(self) -> Vec<(SessionKey, SessionEntry)> {
        self.entries
            .into_iter()
            .map(|(key, entry)| (key, Arc::unwrap_or_clone(entry)))
            .collect()
    }
}

impl Serialize for SessionIndex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len() + self.invalid.len()))?;
        for (key, entry) in &self.entries {
            map.serialize_entry(key.as_str(), &**entry)?;
        }
        for (key, invalid) in &self.invalid {
            map.serialize_entry(key, &invalid.value)?;
        }
        map.end()
    }
}

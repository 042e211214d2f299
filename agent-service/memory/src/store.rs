//! The index database: one SQLite file per agent, in WAL mode, holding the chunks of the
//! memory files, two full-text tables over them, their embeddings, and an embedding cache
//! keyed by content hash and model.
//!
//! The file carries its format version in SQLite's `user_version`. The index is derived data
//! (the memory files are the truth), so an index of another version, one that fails SQLite's
//! `quick_check`, or one SQLite calls corrupt at any point is moved aside (renamed with a
//! `.corrupt-<unix seconds>` suffix) and rebuilt from the files; see [`Store::open`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::chunk::chunks;
use crate::files::Found;
use crate::settings::Chunking;

/// The format version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    searchable INTEGER NOT NULL,
    note TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_by_hash ON chunks(hash);
CREATE INDEX IF NOT EXISTS chunks_without_embedding ON chunks(hash) WHERE embedding IS NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_words USING fts5(
    text, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_trigram USING fts5(text, tokenize = 'trigram');
CREATE TABLE IF NOT EXISTS embedding_cache (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
);
";

/// Whether an SQLite error means the file is damaged (or is not a database at all).
pub fn is_corrupt(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// An open index.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    generation: u64,
}

/// What a sync found besides the index changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files in the index that can be searched.
    pub files: usize,
    /// Files re-chunked by this sync.
    pub reindexed: usize,
    /// Notes about files (cut, binary, unreadable), one sentence each.
    pub notes: Vec<String>,
}

/// One chunk as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkRow {
    /// Row id.
    pub id: i64,
    /// The file, workspace-relative.
    pub path: String,
    /// First line.
    pub start: usize,
    /// Last line.
    pub end: usize,
    /// The chunk's lines joined by `\n`.
    pub text: String,
}

/// The SHA-256 of `text`, hex.
pub fn content_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl Store {
    /// Opens the index at `path` (created if absent) for `identity` (chunking, embedding model
    /// and workspace). An index of another identity is emptied; one of another format version
    /// or that fails `quick_check` is moved aside first. Returns the store and, when the file
    /// was moved aside, a sentence saying so.
    pub fn open(path: &Path, identity: &str) -> Result<(Self, Option<String>), rusqlite::Error> {
        match Self::try_open(path, identity) {
            Ok(store) => Ok((store, None)),
            Err(Refused::Damaged(why)) => {
                let aside = move_aside(path);
                let store = Self::try_open(path, identity).map_err(Refused::into_error)?;
                Ok((
                    store,
                    Some(format!(
                        "the memory index was {why} and has been rebuilt from the memory files{aside}"
                    )),
                ))
            }
            Err(Refused::Sqlite(error)) => Err(error),
        }
    }

    /// An index in memory only, for when the file cannot be used at all.
    pub fn in_memory(identity: &str) -> Result<Self, rusqlite::Error> {
        let conn = Connection::open_in_memory()?;
        let mut store = Self {
            conn,
            path: PathBuf::from(":memory:"),
            generation: 0,
        };
        store.init(identity).map_err(Refused::into_error)?;
        Ok(store)
    }

    fn try_open(path: &Path, identity: &str) -> Result<Self, Refused> {
        let conn = Connection::open(path).map_err(Refused::from)?;
        let mut store = Self {
            conn,
            path: path.to_path_buf(),
            generation: 0,
        };
        let check: String = store
            .conn
            .query_row("PRAGMA quick_check", [], |row| row.get(0))
            .map_err(Refused::from)?;
        if check != "ok" {
            return Err(Refused::Damaged("damaged".to_owned()));
        }
        store.init(identity)?;
        Ok(store)
    }

    fn init(&mut self, identity: &str) -> Result<(), Refused> {
        let c = &self.conn;
        c.busy_timeout(std::time::Duration::from_secs(5))?;
        c.pragma_update(None, "journal_mode", "WAL")?;
        c.pragma_update(None, "synchronous", "NORMAL")?;
        let version: i64 = c.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version != 0 && version != SCHEMA_VERSION {
            return Err(Refused::Damaged(format!(
                "in format version {version} (this build reads {SCHEMA_VERSION})"
            )));
        }
        c.execute_batch(SCHEMA)?;
        c.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        let stored: Option<String> = c
            .query_row("SELECT value FROM meta WHERE key = 'identity'", [], |row| {
                row.get(0)
            })
            .optional()?;
        if stored.as_deref() != Some(identity) {
            // Chunking, model or workspace changed: every chunk goes (cached embeddings stay,
            // keyed by model and content).
            c.execute_batch(
                "BEGIN;
                 DELETE FROM chunks; DELETE FROM files;
                 DELETE FROM chunks_words; DELETE FROM chunks_trigram;
                 COMMIT;",
            )?;
            c.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('identity', ?1)",
                [identity],
            )?;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Increases with every change of chunks or embeddings.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The connection, for the search queries.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Brings the index up to date with `found`: files whose size and mtime are unchanged are
    /// not read; a read file whose content hash is unchanged is not re-chunked; files no
    /// longer found are dropped. One transaction.
    pub fn sync(
        &mut self,
        found: Found,
        chunking: Chunking,
    ) -> Result<SyncReport, rusqlite::Error> {
        let mut report = SyncReport {
            notes: found.notes,
            ..SyncReport::default()
        };
        let indexed: BTreeMap<String, (i64, i64, String)> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT path, mtime_ns, size, hash FROM files")?;
            stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))?
                .collect::<Result<_, _>>()?
        };
        let tx = self.conn.transaction()?;
        let mut seen = BTreeSet::new();
        let mut changed = false;
        for file in found.files {
            let path = file.path.clone();
            seen.insert(path.clone());
            let size = i64::try_from(file.size).unwrap_or(i64::MAX);
            let stamp = (file.mtime_ns, size);
            if indexed
                .get(&path)
                .is_some_and(|old| (old.0, old.1) == stamp)
            {
                continue;
            }
            let (text, cut) = match file.read() {
                Ok(read) => read,
                Err(error) => {
                    report
                        .notes
                        .push(format!("{path} was not searched: {error}"));
                    seen.remove(&path);
                    continue;
                }
            };
            let hash = content_hash(&text);
            if indexed.get(&path).is_some_and(|old| old.2 == hash) {
                tx.execute(
                    "UPDATE files SET mtime_ns = ?2, size = ?3 WHERE path = ?1",
                    params![path, stamp.0, stamp.1],
                )?;
                continue;
            }
            delete_file(&tx, &path)?;
            changed = true;
            report.reindexed += 1;
            let binary = text.contains('\0');
            let note = if binary {
                Some(format!(
                    "{path} looks binary (it contains NUL bytes); skipped"
                ))
            } else if cut {
                Some(format!(
                    "only the first {} bytes of {path} were searched",
                    crate::files::MAX_FILE_BYTES
                ))
            } else {
                None
            };
            tx.execute(
                "INSERT INTO files (path, mtime_ns, size, hash, searchable, note)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![path, stamp.0, stamp.1, hash, !binary, note],
            )?;
            if binary {
                continue;
            }
            let mut insert = tx.prepare_cached(
                "INSERT INTO chunks (path, start_line, end_line, hash, text) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            let mut words =
                tx.prepare_cached("INSERT INTO chunks_words (rowid, text) VALUES (?1, ?2)")?;
            let mut trigram =
                tx.prepare_cached("INSERT INTO chunks_trigram (rowid, text) VALUES (?1, ?2)")?;
            for chunk in chunks(&text, chunking) {
                let start = i64::try_from(chunk.start).unwrap_or(i64::MAX);
                let end = i64::try_from(chunk.end).unwrap_or(i64::MAX);
                insert.execute(params![
                    path,
                    start,
                    end,
                    content_hash(&chunk.text),
                    chunk.text
                ])?;
                let id = tx.last_insert_rowid();
                words.execute(params![id, chunk.text])?;
                trigram.execute(params![id, chunk.text])?;
            }
        }
        for path in indexed.keys().filter(|p| !seen.contains(*p)) {
            delete_file(&tx, path)?;
            changed = true;
        }
        {
            let mut stmt =
                tx.prepare_cached("SELECT note FROM files WHERE note IS NOT NULL ORDER BY path")?;
            let notes = stmt.query_map([], |r| r.get::<_, String>(0))?;
            for note in notes {
                report.notes.push(note?);
            }
            report.files = tx.query_row("SELECT count(*) FROM files WHERE searchable", [], |r| {
                r.get::<_, i64>(0)
            })? as usize;
        }
        tx.commit()?;
        if changed {
            self.generation += 1;
        }
        Ok(report)
    }

    /// Fills missing chunk embeddings of `model` from the cache, and returns the distinct
    /// (hash, text) pairs still without one.
    pub fn missing_embeddings(
        &mut self,
        model: &str,
    ) -> Result<Vec<(String, String)>, rusqlite::Error> {
        let filled = self.conn.execute(
            "UPDATE chunks SET embedding = (
                 SELECT vector FROM embedding_cache c WHERE c.model = ?1 AND c.hash = chunks.hash)
             WHERE embedding IS NULL
               AND EXISTS (SELECT 1 FROM embedding_cache c WHERE c.model = ?1 AND c.hash = chunks.hash)",
            [model],
        )?;
        if filled > 0 {
            self.generation += 1;
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT hash, min(text) FROM chunks WHERE embedding IS NULL GROUP BY hash ORDER BY hash",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    }

    /// Looks a cached embedding up.
    pub fn cached_embedding(
        &self,
        model: &str,
        hash: &str,
    ) -> Result<Option<Vec<f32>>, rusqlite::Error> {
        self.conn
            .query_row(
                "SELECT vector FROM embedding_cache WHERE model = ?1 AND hash = ?2",
                [model, hash],
                |r| r.get::<_, Vec<u8>>(0),
            )
            .optional()
            .map(|blob| blob.map(|b| from_blob(&b)))
    }

    /// Stores embeddings of `model` by content hash, in the cache and on every chunk with
    /// that hash.
    pub fn store_embeddings(
        &mut self,
        model: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> Result<(), rusqlite::Error> {
        let tx = self.conn.transaction()?;
        let mut updated = 0;
        {
            let mut cache = tx.prepare_cached(
                "INSERT OR REPLACE INTO embedding_cache (model, hash, vector) VALUES (?1, ?2, ?3)",
            )?;
            let mut chunk =
                tx.prepare_cached("UPDATE chunks SET embedding = ?2 WHERE hash = ?1")?;
            for (hash, vector) in vectors {
                let blob = to_blob(vector);
                cache.execute(params![model, hash, blob])?;
                updated += chunk.execute(params![hash, blob])?;
            }
        }
        tx.commit()?;
        // A query's embedding is cached without touching any chunk: the vectors stay valid.
        if updated > 0 {
            self.generation += 1;
        }
        Ok(())
    }

    /// Every chunk's embedding, by row id (chunks without one are left out).
    pub fn vectors(&self) -> Result<Vec<(i64, Vec<f32>)>, rusqlite::Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, from_blob(&r.get::<_, Vec<u8>>(1)?))))?
            .collect()
    }

    /// The chunks with these row ids.
    pub fn chunks(&self, ids: &[i64]) -> Result<BTreeMap<i64, ChunkRow>, rusqlite::Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path, start_line, end_line, text FROM chunks WHERE id = ?1",
        )?;
        let mut out = BTreeMap::new();
        for id in ids {
            let row = stmt
                .query_row([id], |r| {
                    Ok(ChunkRow {
                        id: r.get(0)?,
                        path: r.get(1)?,
                        start: usize::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                        end: usize::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
                        text: r.get(4)?,
                    })
                })
                .optional()?;
            if let Some(row) = row {
                out.insert(*id, row);
            }
        }
        Ok(out)
    }
}

fn delete_file(tx: &rusqlite::Transaction<'_>, path: &str) -> Result<(), rusqlite::Error> {
    tx.execute(
        "DELETE FROM chunks_words WHERE rowid IN (SELECT id FROM chunks WHERE path = ?1)",
        [path],
    )?;
    tx.execute(
        "DELETE FROM chunks_trigram WHERE rowid IN (SELECT id FROM chunks WHERE path = ?1)",
        [path],
    )?;
    tx.execute("DELETE FROM chunks WHERE path = ?1", [path])?;
    tx.execute("DELETE FROM files WHERE path = ?1", [path])?;
    Ok(())
}

/// Renames the database (and its WAL and shared-memory files) out of the way; returns
/// " (the old file is kept as <name>)" or "" when there was nothing to move.
pub fn move_aside(path: &Path) -> String {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let aside = PathBuf::from(format!("{}.corrupt-{stamp}", path.display()));
    let moved = std::fs::rename(path, &aside).is_ok();
    for suffix in ["-wal", "-shm"] {
        let extra = PathBuf::from(format!("{}{suffix}", path.display()));
        let _ignored = std::fs::remove_file(extra);
    }
    if moved {
        tracing::warn!(index = %path.display(), kept = %aside.display(), "memory index moved aside");
        let name = aside
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!(" (the old file is kept as {name})")
    } else {
        String::new()
    }
}

enum Refused {
    Damaged(String),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for Refused {
    fn from(error: rusqlite::Error) -> Self {
        if is_corrupt(&error) {
            Refused::Damaged("damaged".to_owned())
        } else {
            Refused::Sqlite(error)
        }
    }
}

impl Refused {
    fn into_error(self) -> rusqlite::Error {
        match self {
            Refused::Sqlite(error) => error,
            Refused::Damaged(why) => rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(format!("still unusable after moving it aside: {why}")),
            ),
        }
    }
}

/// A vector as little-endian `f32`s.
pub fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The inverse of [`to_blob`] (a trailing partial value is ignored).
pub fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

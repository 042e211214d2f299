//! The parsed `sessions.json`, kept between reads.
//!
//! Parsing the index costs 7 to 10 µs a session (about a second at 100,000 sessions), so a
//! store parses it once and answers later reads from memory. Before each read it checks with
//! two `stat`s that the index and its update log (see `index_log`) are still the versions it
//! read, and reads them again if not. Its own writes change the cached version in place, so a
//! process that is the only writer never parses the index after its first read, and an update
//! costs what it changes, not the size of the index.
//!
//! Why the check is sound: the index is only ever replaced by rename (see
//! [`crate::write_atomic`]), and the cache keeps the parsed version's file open, so that inode
//! cannot be freed and reused while it is cached: a replacement always has another inode
//! number. Size, modification and change times catch an editor that rewrites the file in
//! place, except one that keeps its size within one timestamp tick of the kernel. The log is
//! only appended to between replacements, so its length tells its versions apart.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use crate::durable::replace;
use crate::error::{Result, io_at};
use crate::index::SessionIndex;
use crate::index_log::{self, LogFile, log_path};

/// What identifies one version of the index file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    /// No file at the path: the index is empty.
    Missing,
    /// The file whose metadata this is.
    File {
        dev: u64,
        ino: u64,
        len: u64,
        modified: (i64, i64),
        changed: (i64, i64),
    },
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self::File {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    fn of(meta: &Metadata) -> Self {
        let nanos = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Self::File {
            dev: 0,
            ino: 0,
            len: meta.len(),
            modified: (
                (nanos / 1_000_000_000) as i64,
                (nanos % 1_000_000_000) as i64,
            ),
            changed: (0, 0),
        }
    }

    /// The version now at `path`.
    fn at(path: &Path) -> Result<Self> {
        match fs::metadata(path) {
            Ok(meta) => Ok(Self::of(&meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Self::Missing),
            Err(e) => Err(io_at(path)(e)),
        }
    }
}

struct Cached {
    /// The version of `sessions.json` parsed or written.
    stamp: Stamp,
    /// The version of the update log applied on top of it (`Missing`: none).
    log_stamp: Stamp,
    /// The parsed version's file, held open so its inode is not reused (see the module docs).
    _file: Option<File>,
    /// Bytes of `sessions.json`: what decides between appending to the log and a fold.
    index_len: u64,
    /// The log, held open for the same reason and for appending; `None` when there is none.
    log: Option<LogFile>,
    index: Arc<SessionIndex>,
}

impl Cached {
    /// True when the files at `path` and `log` are still the versions this holds (the log
    /// is looked at first, as [`load`] reads it first).
    fn is_current(&self, path: &Path, log: &Path) -> Result<bool> {
        Ok(Stamp::at(log)? == self.log_stamp && Stamp::at(path)? == self.stamp)
    }

    fn log_len(&self) -> u64 {
        self.log.as_ref().map_or(0, |log| log.len)
    }

    /// Catches up with lines another process appended to the same log since this version was
    /// read: true when the index file is unchanged and the log is the same file, only longer
    /// (the log is only appended to between folds, and a fold gives it a new inode, see
    /// `index_log`), and the new lines were applied. False when the files must be read again.
    fn catch_up(&mut self, path: &Path, log_path: &Path) -> Result<bool> {
        if Stamp::at(path)? != self.stamp {
            return Ok(false);
        }
        let (Some(log), Stamp::File { dev, ino, .. }) = (self.log.as_mut(), self.log_stamp) else {
            return Ok(false);
        };
        let meta = log.file.metadata().map_err(io_at(log_path))?;
        let now = Stamp::at(log_path)?;
        let same_file = matches!(now, Stamp::File { dev: d, ino: i, .. } if d == dev && i == ino);
        if !same_file || now != Stamp::of(&meta) || meta.len() < log.len {
            return Ok(false);
        }
        let mut tail = Vec::new();
        let mut reader = &log.file;
        io::Seek::seek(&mut reader, io::SeekFrom::Start(log.len)).map_err(io_at(log_path))?;
        reader.read_to_end(&mut tail).map_err(io_at(log_path))?;
        let added = Arc::make_mut(&mut self.index).apply_log(&tail);
        log.len += added;
        self.log_stamp = now;
        Ok(true)
    }
}

/// How [`IndexCache::update`] writes a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// Appended to the update log when the index is large, else the index replaced.
    Changes,
    /// The whole index replaced and the log folded in, whatever their sizes.
    Whole,
}

/// The last version of one index file this process read or wrote. Shared by the clones of a
/// [`crate::SessionStore`].
#[derive(Default)]
pub(crate) struct IndexCache {
    cached: Mutex<Option<Cached>>,
}

impl IndexCache {
    /// The index now at `path` (with its update log applied): the cached version if the files
    /// are unchanged, otherwise read again (and cached). A corrupt file is
    /// [`crate::Error::CorruptIndex`] and is not cached. Callers that may race another
    /// process's fold hold the index lock shared around this (see `index_log`).
    pub(crate) fn current(&self, path: &Path) -> Result<Arc<SessionIndex>> {
        let log = log_path(path);
        // Held while parsing: a concurrent reader would only parse the same file again.
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = cached.as_mut()
            && (hit.is_current(path, &log)? || hit.catch_up(path, &log)?)
        {
            return Ok(Arc::clone(&hit.index));
        }
        let fresh = load(path)?;
        let index = Arc::clone(&fresh.index);
        *cached = Some(fresh);
        Ok(index)
    }

    /// The cached version if the files at `path` are still that version; `None` when they
    /// would have to be read (changed, never read, or being read or written by another thread
    /// right now). Costs two `stat`s and never waits: for callers that must not block on a
    /// parse.
    pub(crate) fn current_if_cached(&self, path: &Path) -> Result<Option<Arc<SessionIndex>>> {
        let Ok(cached) = self.cached.try_lock() else {
            return Ok(None);
        };
        match cached.as_ref() {
            Some(hit) if hit.is_current(path, &log_path(path))? => Ok(Some(Arc::clone(&hit.index))),
            _ => Ok(None),
        }
    }

    /// Applies `change` to the current index and writes what it changed, as `how` says. Call
    /// it with the index lock held (exclusively). The records are changed in place (copied
    /// only while a reader holds the previous version), and only the changed keys are encoded
    /// when the change goes to the log.
    ///
    /// When `change` fails having changed nothing, or the write fails, nothing is written and
    /// the error is returned.
    pub(crate) fn update<R>(
        &self,
        path: &Path,
        how: Write,
        change: impl FnOnce(&mut SessionIndex) -> Result<R>,
    ) -> Result<R> {
        let log = log_path(path);
        let mut slot = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        let mut cached = match slot.take() {
            Some(mut hit) => {
                if hit.is_current(path, &log)? || hit.catch_up(path, &log)? {
                    hit
                } else {
                    load(path)?
                }
            }
            None => load(path)?,
        };
        let mut index = Arc::unwrap_or_clone(std::mem::take(&mut cached.index));
        index.take_changed();
        let result = match change(&mut index) {
            Ok(result) => result,
            Err(e) => {
                if index.take_changed().is_empty() {
                    cached.index = Arc::new(index);
                    *slot = Some(cached);
                }
                return Err(e);
            }
        };
        let changed = index.take_changed();
        if changed.is_empty() && how == Write::Changes {
            cached.index = Arc::new(index);
            *slot = Some(cached);
            return Ok(result);
        }
        // On any failure below the slot stays empty: the next read parses the files again.
        let changes = changed
            .into_iter()
            .map(|key| index.raw_value(&key).map(|value| (key, value)))
            .collect::<Result<Vec<_>>>()?;
        let lines = index_log::encode(&changes)?;
        if how == Write::Changes
            && index_log::goes_to_log(cached.index_len, cached.log_len(), lines.len() as u64)
        {
            let mut file = match cached.log.take() {
                Some(file) => file,
                None => index_log::open_for_append(&log, 0)?,
            };
            file.append(&log, &lines)?;
            cached.log_stamp = Stamp::of(&file.file.metadata().map_err(io_at(&log))?);
            cached.log = Some(file);
        } else {
            let bytes = serde_json::to_vec_pretty(&index).map_err(crate::Error::Encode)?;
            let file = replace(path, &bytes)?;
            // Every line of the log is in the index now (see `index_log` for a crash here).
            cached.log = None;
            index_log::remove(&log)?;
            cached.stamp = Stamp::of(&file.metadata().map_err(io_at(path))?);
            cached.log_stamp = Stamp::Missing;
            cached._file = Some(file);
            cached.index_len = bytes.len() as u64;
        }
        cached.index = Arc::new(index);
        *slot = Some(cached);
        Ok(result)
    }

    /// Drops the cached version (after the file was moved away or replaced by other means).
    pub(crate) fn forget(&self) {
        *self.cached.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Reads the update log and then the index, each through one handle, so each stamp and its
/// bytes belong to the same version even if a file is replaced meanwhile.
fn load(path: &Path) -> Result<Cached> {
    let log_path = log_path(path);
    let (log, log_stamp, log_bytes) = match read_whole(&log_path, true)? {
        Some((file, meta, bytes)) => {
            let stamp = Stamp::of(&meta);
            (Some(file), stamp, bytes)
        }
        None => (None, Stamp::Missing, Vec::new()),
    };
    let (file, stamp, index_len, mut index) = match read_whole(path, false)? {
        Some((file, meta, bytes)) => {
            let index = SessionIndex::parse(&bytes, path)?;
            (Some(file), Stamp::of(&meta), bytes.len() as u64, index)
        }
        None => (None, Stamp::Missing, 0, SessionIndex::default()),
    };
    let log_len = index.apply_log(&log_bytes);
    Ok(Cached {
        stamp,
        log_stamp,
        _file: file,
        index_len,
        log: log.map(|file| LogFile { file, len: log_len }),
        index: Arc::new(index),
    })
}

/// The open file at `path` (for appending too when `append`), its metadata and its bytes;
/// `None` when there is no file.
fn read_whole(path: &Path, append: bool) -> Result<Option<(File, Metadata, Vec<u8>)>> {
    let mut file = match OpenOptions::new().read(true).append(append).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_at(path)(e)),
    };
    let meta = file.metadata().map_err(io_at(path))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(io_at(path))?;
    Ok(Some((file, meta, bytes)))
}

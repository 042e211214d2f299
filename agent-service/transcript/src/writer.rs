//! The single writer of one transcript.
//!
//! Exclusivity across processes is an OS lock (`flock`, via `File::try_lock`) on the transcript
//! itself, held for the writer's lifetime; a second writer gets [`Error::Locked`] instead of
//! waiting. Within a process one lock per session in the runtime holds the writer, so the lock is
//! never contended by benign appends and never held across an await (there are none here).
//!
//! One wrinkle: a child process being spawned (by any thread) holds a copy of every open file
//! description until it `exec`s, so a lock just released can look held for a few milliseconds.
//! [`WriterOptions::lock_wait`] retries `try_lock` for that long before reporting `Locked`.
//!
//! Each entry is one line written with one `write` call on an `O_APPEND` handle. A crash can
//! therefore only leave a torn *final* line, which the next [`TranscriptWriter::open`] repairs.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use uuid::Uuid;

use crate::clock::{Clock, rfc3339};
use crate::durable::{parent_dir, private, sync_dir, temp_beside};
use crate::entry::{Entry, EntryBody, EntryId, SessionHeader, encode_line};
use crate::error::{Error, Result, io_at};
use crate::reader::{DEFAULT_MAX_LINE_LEN, LineScanner, LoadReport, ReadOptions, TranscriptReader};
use crate::repair::{TailRepair, repair_tail};
use crate::tail::tail_of;

/// Limits for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Entries that encode to a longer line are refused with [`Error::EntryTooLarge`]; keep it
    /// no larger than readers' [`ReadOptions::max_line_len`] or they will skip the line.
    pub max_line_len: usize,
    /// How long to retry a held lock before [`Error::Locked`]: long enough to ride out a
    /// concurrent spawn's inherited descriptors, short enough to report a real second writer
    /// promptly. `Duration::ZERO` tries once.
    pub lock_wait: Duration,
}

/// Default for [`WriterOptions::lock_wait`].
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_millis(500);

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            max_line_len: DEFAULT_MAX_LINE_LEN,
            lock_wait: DEFAULT_LOCK_WAIT,
        }
    }
}

/// What [`TranscriptWriter::open`] returns: the writer, and the tail repair it did, if any.
#[derive(Debug)]
pub struct OpenedWriter {
    /// The writer, holding the lock.
    pub writer: TranscriptWriter,
    /// Set when the file did not end in `\n` and its torn tail was quarantined.
    pub repair: Option<TailRepair>,
}

/// Appends entries to one transcript; holds its exclusive lock until dropped.
pub struct TranscriptWriter {
    path: PathBuf,
    file: File,
    /// Our view of the file length; exact because nobody else writes while we hold the lock.
    len: u64,
    leaf: Option<EntryId>,
    /// Ids already in the file (8-hex ones: the only shape we generate). Loaded lazily.
    ids: Option<HashSet<u32>>,
    clock: Arc<dyn Clock>,
    options: WriterOptions,
    poisoned: bool,
}

impl std::fmt::Debug for TranscriptWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptWriter")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("leaf", &self.leaf)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

/// Takes `file`'s exclusive lock, retrying with backoff for up to `wait`.
pub(crate) fn lock_exclusive(file: &File, path: &Path, wait: Duration) -> Result<()> {
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(Error::Locked {
                        path: path.to_path_buf(),
                    });
                }
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(TryLockError::Error(e)) => return Err(io_at(path)(e)),
        }
    }
}

impl TranscriptWriter {
    /// Creates a new transcript holding only `header`, and locks it.
    ///
    /// The header is written to a temp file, fsynced and hard-linked into place, so the file
    /// never exists without a complete header; [`Error::AlreadyExists`] if `path` exists.
    pub fn create(
        path: &Path,
        header: &SessionHeader,
        clock: Arc<dyn Clock>,
        options: WriterOptions,
    ) -> Result<Self> {
        let dir = parent_dir(path);
        fs::create_dir_all(dir).map_err(io_at(dir))?;
        let line = encode_line(header).map_err(Error::Encode)?;
        let temp = temp_beside(path);
        let file = private(OpenOptions::new().read(true).append(true).create_new(true))
            .open(&temp)
            .map_err(io_at(&temp))?;
        let placed = lock_exclusive(&file, &temp, options.lock_wait)
            .and_then(|()| {
                (&file)
                    .write_all(&line)
                    .and_then(|()| file.sync_data())
                    .map_err(io_at(&temp))
            })
            .and_then(|()| {
                fs::hard_link(&temp, path).map_err(|e| match e.kind() {
                    io::ErrorKind::AlreadyExists => Error::AlreadyExists {
                        path: path.to_path_buf(),
                    },
                    _ => io_at(path)(e),
                })
            });
        // The temp name goes either way; on success the inode lives on at `path`.
        let removed = fs::remove_file(&temp).map_err(io_at(&temp));
        placed?;
        removed?;
        sync_dir(dir)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            len: line.len() as u64,
            leaf: None,
            ids: Some(HashSet::new()),
            clock,
            options,
            poisoned: false,
        })
    }

    /// Opens an existing transcript for appending: takes the lock ([`Error::Locked`] if held),
    /// repairs a torn tail (reported in [`OpenedWriter::repair`]) and finds the leaf from the
    /// end of the file.
    pub fn open(
        path: &Path,
        clock: Arc<dyn Clock>,
        options: WriterOptions,
    ) -> Result<OpenedWriter> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => Error::NotFound {
                    path: path.to_path_buf(),
                },
                _ => io_at(path)(e),
            })?;
        lock_exclusive(&file, path, options.lock_wait)?;
        let read = ReadOptions {
            max_line_len: options.max_line_len,
            ..ReadOptions::default()
        };
        // Nothing is repaired or appended to a transcript of a format this crate does not
        // read (the reader checks the header's version).
        drop(TranscriptReader::open(path, read)?);
        let repair = repair_tail(&mut file, path, clock.now())?;
        let tail = tail_of(&mut file, 1, read).map_err(io_at(path))?;
        let len = file.metadata().map_err(io_at(path))?.len();
        let writer = Self {
            path: path.to_path_buf(),
            file,
            len,
            leaf: tail.entries.last().map(|entry| entry.id.clone()),
            ids: None,
            clock,
            options,
            poisoned: false,
        };
        Ok(OpenedWriter { writer, repair })
    }

    /// The transcript's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current leaf: the parent of the next entry.
    pub fn leaf(&self) -> Option<&EntryId> {
        self.leaf.as_ref()
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// Streams every entry into `visit` (one pass) and learns the ids on the way, so the first
    /// append needs no second scan. Call it once after [`TranscriptWriter::open`] to load the
    /// session.
    pub fn replay(
        &mut self,
        options: ReadOptions,
        mut visit: impl FnMut(Entry),
    ) -> Result<LoadReport> {
        let mut reader = TranscriptReader::from_file(&self.path, self.reread()?, options)?;
        let mut ids = HashSet::new();
        for entry in reader.by_ref() {
            let entry = entry?;
            if let Some(id) = entry.id.as_u32() {
                ids.insert(id);
            }
            visit(entry);
        }
        let report = reader.finish();
        self.ids = Some(ids);
        self.leaf.clone_from(&report.leaf);
        Ok(report)
    }

    /// Appends `body` as a child of the current leaf; the entry becomes the new leaf.
    ///
    /// The line has reached the kernel when this returns (it survives the process being
    /// killed) but not necessarily the disk: call [`TranscriptWriter::sync`] at turn
    /// boundaries, or use [`TranscriptWriter::append_and_sync`].
    pub fn append(&mut self, body: EntryBody) -> Result<Entry> {
        if self.poisoned {
            return Err(Error::Poisoned {
                path: self.path.clone(),
            });
        }
        let entry = Entry {
            id: EntryId::from_u32(self.fresh_id()?),
            parent_id: self.leaf.clone(),
            timestamp: rfc3339(self.clock.now()),
            body,
        };
        let line = encode_line(&entry).map_err(Error::Encode)?;
        if line.len() > self.options.max_line_len {
            return Err(Error::EntryTooLarge {
                len: line.len(),
                max: self.options.max_line_len,
            });
        }
        self.write_line(&line)?;
        if let (Some(ids), Some(id)) = (self.ids.as_mut(), entry.id.as_u32()) {
            ids.insert(id);
        }
        self.leaf = Some(entry.id.clone());
        Ok(entry)
    }

    /// [`TranscriptWriter::append`] then [`TranscriptWriter::sync`].
    pub fn append_and_sync(&mut self, body: EntryBody) -> Result<Entry> {
        let entry = self.append(body)?;
        self.sync()?;
        Ok(entry)
    }

    /// Flushes appended lines to disk (`fdatasync`: data and length).
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(io_at(&self.path))
    }

    /// A read handle on the locked file itself (not a reopen by path, which could name another
    /// file by now), positioned at the start. Appends ignore the shared offset (`O_APPEND`).
    fn reread(&self) -> Result<File> {
        let mut file = self.file.try_clone().map_err(io_at(&self.path))?;
        file.seek(SeekFrom::Start(0)).map_err(io_at(&self.path))?;
        Ok(file)
    }

    fn fresh_id(&mut self) -> Result<u32> {
        let ids = match self.ids.take() {
            Some(ids) => ids,
            None => scan_ids(self.reread()?, &self.path, self.options.max_line_len)?,
        };
        let ids = self.ids.insert(ids);
        Ok(next_id(ids, || Uuid::new_v4().as_fields().0))
    }

    /// One `write` call for the whole line. A short write is rolled back by truncating to the
    /// previous length, so the file never keeps half a line while the writer lives.
    fn write_line(&mut self, line: &[u8]) -> Result<()> {
        let written = loop {
            match (&self.file).write(line) {
                Ok(n) => break Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        match written {
            Ok(n) if n == line.len() => {
                self.len += n as u64;
                Ok(())
            }
            Ok(n) => {
                self.roll_back()?;
                Err(Error::ShortWrite {
                    path: self.path.clone(),
                    written: n,
                    expected: line.len(),
                })
            }
            Err(e) => {
                self.roll_back()?;
                Err(io_at(&self.path)(e))
            }
        }
    }

    fn roll_back(&mut self) -> Result<()> {
        if self.file.set_len(self.len).is_err() {
            self.poisoned = true;
            return Err(Error::Poisoned {
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}

/// A random id not in `ids`. Collisions are likely enough in long sessions (birthday bound on
/// 32 bits) that they must be checked, not assumed away.
pub(crate) fn next_id(ids: &HashSet<u32>, mut random: impl FnMut() -> u32) -> u32 {
    loop {
        let id = random();
        if !ids.contains(&id) {
            return id;
        }
    }
}

#[derive(Deserialize)]
struct IdProbe<'a> {
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
}

/// Collects the ids already in the file when the caller appends without [`TranscriptWriter::replay`].
/// Parses only the `id` field of each line.
fn scan_ids(file: File, path: &Path, max_line_len: usize) -> Result<HashSet<u32>> {
    let mut scanner = LineScanner::new(BufReader::with_capacity(64 * 1024, file), max_line_len);
    let mut ids = HashSet::new();
    while let Some(line) = scanner.next_line().map_err(io_at(path))? {
        if line.too_long || !line.terminated {
            continue;
        }
        if let Ok(IdProbe { id: Some(id) }) = serde_json::from_slice(scanner.line())
            && let Some(id) = EntryId::new(id.into_owned()).as_u32()
        {
            ids.insert(id);
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_id_skips_ids_already_in_the_file() {
        let ids = HashSet::from([7, 8]);
        let mut draws = [7, 8, 7, 9].into_iter();
        assert_eq!(next_id(&ids, || draws.next().unwrap_or(0)), 9);
    }
}

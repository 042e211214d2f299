//! The index's update log: `sessions.json.log`, beside `sessions.json`.
//!
//! Rewriting `sessions.json` costs time in proportion to the number of sessions (about 40 MB
//! and a second of encoding and fsync at 100,000 sessions), and every new session and every
//! turn's counters change it. So a change to a large index is written as one line per changed
//! key appended to this log, `{"key": "<session key>", "entry": <record or null>}` (`null`:
//! the key was removed), fsynced before the change is reported written. When the log would
//! grow past half the index, or the index is small (under [`FOLD_FLOOR`]), the change is
//! written the old way instead: the whole index replaced, with the log folded in, and the log
//! removed.
//!
//! Crash safety:
//! - each update is one `write` of complete lines followed by `fdatasync`, so a crash leaves
//!   at most a torn last line, which readers skip and the next writer cuts off (under the
//!   index lock) before appending;
//! - a fold replaces `sessions.json` first and removes the log after: a crash in between
//!   leaves a log whose every line the new index already holds, and applying a line again
//!   sets a key to the value it already has;
//! - readers read the log before the index, so a fold between the two reads applies an
//!   older log to a newer index: again lines it already holds. A fold and a later append
//!   between the two reads could apply an old line over a newer value, so the store reads
//!   both under a shared hold of the index lock.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::durable::{parent_dir, private, sync_dir};
use crate::error::{Error, Result, io_at};
use crate::paths::with_suffix;

/// Suffix of the log after the index's file name.
pub const LOG_SUFFIX: &str = ".log";

/// Below this size the index is replaced whole on every change (what other readers of
/// `sessions.json` expect), and the log is not used: about 2,500 sessions.
pub const FOLD_FLOOR: u64 = 512 << 10;

/// The log beside the index at `index`.
pub(crate) fn log_path(index: &Path) -> PathBuf {
    with_suffix(index, LOG_SUFFIX)
}

/// One line of the log.
#[derive(Serialize)]
struct LineOut<'a> {
    key: &'a str,
    entry: &'a Option<Value>,
}

#[derive(Deserialize)]
struct LineIn {
    key: String,
    entry: Option<Value>,
}

/// The length of `bytes` up to and including its last `\n`.
pub(crate) fn complete_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last| last + 1)
}

/// The `(key, value)` of every line that parses, in order (`None`: removed).
pub(crate) fn records(bytes: &[u8]) -> impl Iterator<Item = (String, Option<Value>)> + '_ {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice::<LineIn>(line).ok())
        .map(|line| (line.key, line.entry))
}

/// The log lines of `changes`.
pub(crate) fn encode(changes: &[(String, Option<Value>)]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (key, entry) in changes {
        serde_json::to_writer(&mut out, &LineOut { key, entry }).map_err(Error::Encode)?;
        out.push(b'\n');
    }
    Ok(out)
}

/// Whether a change of `adding` bytes goes to the log (true) or into a whole new index
/// (false), for an index of `index_len` bytes and a log of `log_len`.
pub(crate) fn goes_to_log(index_len: u64, log_len: u64, adding: u64) -> bool {
    index_len >= FOLD_FLOOR && log_len + adding <= index_len / 2
}

/// The open log, as the process that last wrote or read it knows it.
#[derive(Debug)]
pub(crate) struct LogFile {
    pub(crate) file: File,
    /// Bytes of complete lines; anything past it is a torn tail to cut off before appending.
    pub(crate) len: u64,
}

impl LogFile {
    /// Appends `lines` (complete lines) and fsyncs them. Call with the index lock held. A
    /// failed write is rolled back to the previous length.
    pub(crate) fn append(&mut self, path: &Path, lines: &[u8]) -> Result<()> {
        let on_disk = self.file.metadata().map_err(io_at(path))?.len();
        if on_disk != self.len {
            // A torn tail a crash left, or lines another writer failed to roll back.
            self.file.set_len(self.len).map_err(io_at(path))?;
        }
        let written = (&self.file)
            .write_all(lines)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            let _ = self.file.set_len(self.len);
            return Err(io_at(path)(e));
        }
        self.len += lines.len() as u64;
        Ok(())
    }
}

/// Opens (creating it if needed) the log at `path` for appending, its length of complete lines
/// being `len`. A new file's name is made durable before anything is written to it.
pub(crate) fn open_for_append(path: &Path, len: u64) -> Result<LogFile> {
    let file = match OpenOptions::new().append(true).read(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let file = private(OpenOptions::new().append(true).read(true).create(true))
                .open(path)
                .map_err(io_at(path))?;
            sync_dir(parent_dir(path))?;
            file
        }
        Err(e) => return Err(io_at(path)(e)),
    };
    Ok(LogFile { file, len })
}

/// Removes the log after a fold (its lines are all in the index now). Missing is fine.
pub(crate) fn remove(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_at(path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_not_a_record() {
        let changes = vec![
            ("agent:main:a".to_owned(), Some(serde_json::json!({"x": 1}))),
            ("agent:main:b".to_owned(), None),
        ];
        let mut bytes = encode(&changes).unwrap();
        let whole = bytes.len();
        bytes.extend_from_slice(b"{\"key\":\"agent:main:c\",\"ent");
        assert_eq!(complete_len(&bytes), whole);
        let read: Vec<_> = records(&bytes[..complete_len(&bytes)]).collect();
        assert_eq!(read, changes);
    }

    #[test]
    fn small_indexes_are_replaced_and_large_logs_folded() {
        assert!(!goes_to_log(FOLD_FLOOR - 1, 0, 10));
        assert!(goes_to_log(FOLD_FLOOR, 0, 10));
        assert!(!goes_to_log(FOLD_FLOOR, FOLD_FLOOR / 2 - 5, 10));
    }
}

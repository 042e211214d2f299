//! Tail repair before the first append: a file that does not end in `\n` had a write cut short.
//! The partial bytes are moved to `<transcript>.quarantine` (never silently dropped) and the
//! transcript is truncated back to its last `\n`, so the next line starts on a line boundary.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::json;

use crate::clock::rfc3339;
use crate::durable::{parent_dir, private, sync_dir};
use crate::error::{Result, io_at};
use crate::paths::quarantine_path;
use crate::tail::NewlineScanner;

/// A torn tail that [`crate::TranscriptWriter::open`] cut off and quarantined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailRepair {
    /// Where the partial line started; the transcript's new length.
    pub offset: u64,
    /// Bytes moved out.
    pub len: u64,
    /// The file they were appended to.
    pub quarantine: PathBuf,
}

/// Repairs `file` (the transcript at `path`, held under its writer lock) if it does not end
/// in `\n`.
pub(crate) fn repair_tail(
    file: &mut File,
    path: &Path,
    now: Timestamp,
) -> Result<Option<TailRepair>> {
    let len = file.seek(SeekFrom::End(0)).map_err(io_at(path))?;
    if len == 0 {
        return Ok(None);
    }
    let cut = NewlineScanner::new(file)
        .rfind(len)
        .map_err(io_at(path))?
        .map_or(0, |newline| newline + 1);
    if cut == len {
        return Ok(None);
    }
    let quarantine = quarantine_path(path);
    // A JSON note line, then the raw bytes on their own line (they contain no `\n`).
    let note = json!({
        "quarantined": "torn tail",
        "file": path.display().to_string(),
        "offset": cut,
        "len": len - cut,
        "at": rfc3339(now),
    });
    let created = !quarantine.exists();
    let mut out = private(OpenOptions::new().append(true).create(true))
        .open(&quarantine)
        .map_err(io_at(&quarantine))?;
    let mut note = serde_json::to_vec(&note).map_err(crate::Error::Encode)?;
    note.push(b'\n');
    file.seek(SeekFrom::Start(cut)).map_err(io_at(path))?;
    let copied = (|| -> io::Result<()> {
        out.write_all(&note)?;
        io::copy(&mut Read::take(&mut *file, len - cut), &mut out)?;
        out.write_all(b"\n")?;
        out.sync_data()
    })();
    copied.map_err(io_at(&quarantine))?;
    if created {
        sync_dir(parent_dir(&quarantine))?;
    }
    // Only once the bytes are safe elsewhere is the transcript cut.
    file.set_len(cut)
        .and_then(|()| file.sync_data())
        .map_err(io_at(path))?;
    Ok(Some(TailRepair {
        offset: cut,
        len: len - cut,
        quarantine,
    }))
}

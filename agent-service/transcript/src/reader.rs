//! Streaming reads with bounded memory: one pass, one JSON parse per line, at most one line
//! (capped at [`ReadOptions::max_line_len`]) held at a time.
//!
//! Damage never fails a load. A final line without `\n` is a torn tail: dropped and reported.
//! Any other line that is not a record (bad JSON, NUL runs, invalid UTF-8, over-long) is
//! skipped and reported with its line number and byte offset. Bad lines stay in the file: it is
//! append-only and rewriting it to cut them out would risk more than it fixes. Blank lines are
//! ignored.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::entry::{DecodeError, Entry, EntryId, Line, SessionHeader, decode_line};
use crate::error::{Error, Result, io_at};

/// Default cap on one line: longer lines are skipped (and reported) rather than buffered.
pub const DEFAULT_MAX_LINE_LEN: usize = 16 * 1024 * 1024;
/// Default cap on bad lines kept in [`LoadReport::bad_lines`]; all are still counted.
pub const DEFAULT_MAX_REPORTED_BAD_LINES: usize = 1024;

const READ_BUFFER: usize = 64 * 1024;

/// Limits for reading a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Lines longer than this many bytes (without `\n`) are skipped and reported.
    pub max_line_len: usize,
    /// At most this many bad lines are kept in the report; the rest are only counted.
    pub max_reported_bad_lines: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_line_len: DEFAULT_MAX_LINE_LEN,
            max_reported_bad_lines: DEFAULT_MAX_REPORTED_BAD_LINES,
        }
    }
}

/// What a load found besides the entries themselves.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// Line 1, if it was a valid session header.
    pub header: Option<SessionHeader>,
    /// Entries yielded.
    pub entries: u64,
    /// The id of the last entry yielded: the default leaf of the session tree.
    pub leaf: Option<EntryId>,
    /// Unterminated bytes at the end of the file, dropped.
    pub torn_tail: Option<TornTail>,
    /// Skipped lines, the first [`ReadOptions::max_reported_bad_lines`] of them.
    pub bad_lines: Vec<BadLine>,
    /// All skipped lines, including those beyond the reporting cap.
    pub bad_line_count: u64,
    /// Bytes read, torn tail included.
    pub bytes: u64,
}

impl LoadReport {
    /// No torn tail and no bad lines.
    pub fn is_clean(&self) -> bool {
        self.torn_tail.is_none() && self.bad_line_count == 0
    }
}

/// A final line without its `\n`: a write cut short by a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornTail {
    /// Byte offset where the partial line starts.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// A skipped line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line_no: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// Length in bytes, without `\n`.
    pub len: u64,
    /// Why it was skipped.
    pub reason: BadLineReason,
}

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadLineReason {
    /// Longer than [`ReadOptions::max_line_len`]; never buffered.
    TooLong,
    /// Contains NUL bytes (typically a run left by a crash on a delayed-allocation filesystem).
    NulBytes,
    /// Not valid UTF-8.
    InvalidUtf8,
    /// Not valid JSON; the parser's message.
    InvalidJson(String),
    /// Valid JSON but not a header or entry (e.g. missing `id`, or a known type with a
    /// malformed body); the message says what is wrong.
    NotARecord(String),
    /// A session header after line 1.
    MisplacedHeader,
}

/// One physical line as the scanner found it; its bytes are in [`LineScanner::line`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScannedLine {
    pub line_no: u64,
    pub offset: u64,
    pub len: u64,
    pub terminated: bool,
    /// Longer than the cap: the bytes were not kept.
    pub too_long: bool,
}

/// Splits a byte stream into `\n`-terminated lines, keeping at most `max` bytes of one line.
pub(crate) struct LineScanner<R> {
    inner: R,
    line: Vec<u8>,
    offset: u64,
    line_no: u64,
    max: usize,
}

impl<R: BufRead> LineScanner<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            line: Vec::new(),
            offset: 0,
            line_no: 0,
            max,
        }
    }

    /// The bytes of the line last returned (empty if it was too long).
    pub(crate) fn line(&self) -> &[u8] {
        &self.line
    }

    /// Bytes consumed so far.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn next_line(&mut self) -> io::Result<Option<ScannedLine>> {
        self.line.clear();
        let mut len = 0u64;
        let mut too_long = false;
        let terminated = loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                if len == 0 {
                    return Ok(None);
                }
                break false;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            if !too_long {
                if self.line.len() + chunk.len() > self.max {
                    too_long = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            len += chunk.len() as u64;
            let consumed = chunk.len() + usize::from(newline.is_some());
            self.inner.consume(consumed);
            if newline.is_some() {
                break true;
            }
        };
        let scanned = ScannedLine {
            line_no: self.line_no + 1,
            offset: self.offset,
            len,
            terminated,
            too_long,
        };
        self.line_no += 1;
        self.offset += len + u64::from(terminated);
        Ok(Some(scanned))
    }
}

/// Classifies a line that failed to decode. Called only on failure, so valid lines are
/// parsed exactly once and never scanned again.
pub(crate) fn bad_reason(bytes: &[u8], error: DecodeError) -> BadLineReason {
    match error {
        DecodeError::Json(_) if bytes.contains(&0) => BadLineReason::NulBytes,
        DecodeError::Json(_) if std::str::from_utf8(bytes).is_err() => BadLineReason::InvalidUtf8,
        DecodeError::Json(e) => BadLineReason::InvalidJson(e.to_string()),
        DecodeError::Shape(message) => BadLineReason::NotARecord(message),
    }
}

pub(crate) fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// Streams a transcript's entries. The header (line 1) is read by [`TranscriptReader::open`];
/// iterate for the entries, then call [`TranscriptReader::finish`] for the report.
///
/// The iterator yields `Err` only for I/O errors; damaged lines are reported, not yielded.
pub struct TranscriptReader {
    path: PathBuf,
    scanner: LineScanner<BufReader<File>>,
    options: ReadOptions,
    report: LoadReport,
    pending: Option<Entry>,
    done: bool,
}

impl TranscriptReader {
    /// Opens `path` and reads its first line.
    pub fn open(path: &Path, options: ReadOptions) -> Result<Self> {
        let file = File::open(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::NotFound {
                path: path.to_path_buf(),
            },
            _ => io_at(path)(e),
        })?;
        Self::from_file(path, file, options)
    }

    pub(crate) fn from_file(path: &Path, file: File, options: ReadOptions) -> Result<Self> {
        let mut reader = Self {
            path: path.to_path_buf(),
            scanner: LineScanner::new(
                BufReader::with_capacity(READ_BUFFER, file),
                options.max_line_len,
            ),
            options,
            report: LoadReport::default(),
            pending: None,
            done: false,
        };
        reader.pending = reader.next_entry()?;
        if let Some(header) = &reader.report.header {
            crate::version::check(path, header.version)?;
        }
        Ok(reader)
    }

    /// The session header, if line 1 was one.
    pub fn header(&self) -> Option<&SessionHeader> {
        self.report.header.as_ref()
    }

    /// The report so far; complete once the iterator has returned `None`.
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// Ends the read and returns the report (covering only the lines read so far if the
    /// iterator was not exhausted).
    pub fn finish(self) -> LoadReport {
        self.report
    }

    fn bad_line(&mut self, line: ScannedLine, reason: BadLineReason) {
        self.report.bad_line_count += 1;
        if self.report.bad_lines.len() < self.options.max_reported_bad_lines {
            self.report.bad_lines.push(BadLine {
                line_no: line.line_no,
                offset: line.offset,
                len: line.len,
                reason,
            });
        }
    }

    fn next_entry(&mut self) -> Result<Option<Entry>> {
        while !self.done {
            let line = self.scanner.next_line().map_err(|e| {
                // The scanner's position is unknown after a failed read: stop here.
                self.done = true;
                io_at(&self.path)(e)
            })?;
            let Some(line) = line else {
                self.done = true;
                break;
            };
            self.report.bytes = self.scanner.offset();
            if !line.terminated {
                self.report.torn_tail = Some(TornTail {
                    offset: line.offset,
                    len: line.len,
                });
                self.done = true;
                break;
            }
            if line.too_long {
                self.bad_line(line, BadLineReason::TooLong);
                continue;
            }
            let bytes = self.scanner.line();
            if is_blank(bytes) {
                continue;
            }
            match decode_line(bytes) {
                Ok(Line::Entry(entry)) => {
                    self.report.entries += 1;
                    self.report.leaf = Some(entry.id.clone());
                    return Ok(Some(entry));
                }
                Ok(Line::Header(header)) if line.line_no == 1 => self.report.header = Some(header),
                Ok(Line::Header(_)) => self.bad_line(line, BadLineReason::MisplacedHeader),
                Err(error) => {
                    let reason = bad_reason(bytes, error);
                    self.bad_line(line, reason);
                }
            }
        }
        Ok(None)
    }
}

impl Iterator for TranscriptReader {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(entry) = self.pending.take() {
            return Some(Ok(entry));
        }
        self.next_entry().transpose()
    }
}

/// Streams every entry of `path` into `visit` and returns the report.
pub fn for_each_entry(
    path: &Path,
    options: ReadOptions,
    mut visit: impl FnMut(Entry),
) -> Result<LoadReport> {
    let mut reader = TranscriptReader::open(path, options)?;
    for entry in reader.by_ref() {
        visit(entry?);
    }
    Ok(reader.finish())
}

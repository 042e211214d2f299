//! Reading the end of a transcript by seeking from EOF, so finding the leaf or the last few
//! entries costs the size of those lines, not the age of the session.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::entry::{Entry, Line, decode_line};
use crate::error::{Error, Result, io_at};
use crate::reader::{ReadOptions, TornTail, is_blank};

const CHUNK: u64 = 64 * 1024;

/// Finds `\n` bytes scanning backwards, one chunk in memory at a time.
pub(crate) struct NewlineScanner<'f, F> {
    file: &'f mut F,
    buf: Vec<u8>,
    buf_start: u64,
}

impl<'f, F: Read + Seek> NewlineScanner<'f, F> {
    pub(crate) fn new(file: &'f mut F) -> Self {
        Self {
            file,
            buf: Vec::new(),
            buf_start: 0,
        }
    }

    /// The offset of the last `\n` before `before`, if any.
    pub(crate) fn rfind(&mut self, before: u64) -> io::Result<Option<u64>> {
        let mut limit = before;
        while limit > 0 {
            let buffered =
                self.buf_start < limit && limit <= self.buf_start + self.buf.len() as u64;
            if !buffered {
                let start = limit.saturating_sub(CHUNK);
                self.buf
                    .resize(usize::try_from(limit - start).unwrap_or(0), 0);
                self.file.seek(SeekFrom::Start(start))?;
                self.file.read_exact(&mut self.buf)?;
                self.buf_start = start;
            }
            let end = usize::try_from(limit - self.buf_start).unwrap_or(0);
            if let Some(i) = self.buf[..end].iter().rposition(|&b| b == b'\n') {
                return Ok(Some(self.buf_start + i as u64));
            }
            limit = self.buf_start;
        }
        Ok(None)
    }

    /// Reads `[start, start + out.len())`, from the chunk in memory when it holds the range.
    fn read_at(&mut self, start: u64, out: &mut [u8]) -> io::Result<()> {
        let end = start + out.len() as u64;
        if self.buf_start <= start && end <= self.buf_start + self.buf.len() as u64 {
            let from = usize::try_from(start - self.buf_start).unwrap_or(0);
            out.copy_from_slice(&self.buf[from..from + out.len()]);
            return Ok(());
        }
        self.file.seek(SeekFrom::Start(start))?;
        self.file.read_exact(out)
    }
}

/// The last entries of a transcript, read from the end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tail {
    /// Up to the requested number of entries, oldest first.
    pub entries: Vec<Entry>,
    /// Unterminated bytes at the end of the file, ignored.
    pub torn_tail: Option<TornTail>,
    /// Lines skipped while scanning back (bad, over-long or misplaced headers).
    pub bad_lines: u64,
    /// The scan reached the start of the file, so `entries` holds every entry.
    pub reached_start: bool,
}

/// Reads the last `n` entries of `path`, seeking from the end.
pub fn read_tail(path: &Path, n: usize, options: ReadOptions) -> Result<Tail> {
    let mut file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_path_buf(),
        },
        _ => io_at(path)(e),
    })?;
    tail_of(&mut file, n, options).map_err(io_at(path))
}

/// The leaf: the last entry of `path`, found from the end.
pub fn read_leaf(path: &Path, options: ReadOptions) -> Result<Option<Entry>> {
    Ok(read_tail(path, 1, options)?.entries.pop())
}

pub(crate) fn tail_of<F: Read + Seek>(
    file: &mut F,
    n: usize,
    options: ReadOptions,
) -> io::Result<Tail> {
    let len = file.seek(SeekFrom::End(0))?;
    let mut tail = Tail::default();
    let mut scanner = NewlineScanner::new(file);
    let Some(last_newline) = scanner.rfind(len)? else {
        tail.reached_start = true;
        tail.torn_tail = (len > 0).then_some(TornTail { offset: 0, len });
        return Ok(tail);
    };
    if last_newline + 1 < len {
        tail.torn_tail = Some(TornTail {
            offset: last_newline + 1,
            len: len - last_newline - 1,
        });
    }
    // Each pass handles the line that ends at `line_end` (the offset of its `\n`).
    let mut line_end = last_newline;
    let mut bytes = Vec::new();
    while tail.entries.len() < n {
        let start = scanner.rfind(line_end)?.map_or(0, |newline| newline + 1);
        let line_len = line_end - start;
        if line_len > options.max_line_len as u64 {
            tail.bad_lines += 1;
        } else {
            bytes.resize(usize::try_from(line_len).unwrap_or(0), 0);
            scanner.read_at(start, &mut bytes)?;
            if !is_blank(&bytes) {
                match decode_line(&bytes) {
                    Ok(Line::Entry(entry)) => tail.entries.push(entry),
                    Ok(Line::Header(_)) if start == 0 => {}
                    Ok(Line::Header(_)) | Err(_) => tail.bad_lines += 1,
                }
            }
        }
        if start == 0 {
            tail.reached_start = true;
            break;
        }
        line_end = start - 1;
    }
    tail.entries.reverse();
    Ok(tail)
}

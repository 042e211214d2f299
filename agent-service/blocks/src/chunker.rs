//! The block chunker: assistant text deltas in, channel-ready chunks out.

use std::ops::Range;

use crate::breaks::{self, Cut, FenceView, Frame, Need, Reopen};
use crate::config::ChunkerConfig;
use crate::fence::{FenceScanner, Marker};

/// Why a chunk ends where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CutKind {
    /// At a paragraph break (a blank line).
    Paragraph,
    /// At a newline (inside a fence: a line boundary of the code).
    Newline,
    /// After `.`, `!` or `?` followed by whitespace.
    Sentence,
    /// At other whitespace.
    Whitespace,
    /// No break in the window: cut at `max_chars`.
    Hard,
    /// A forced cut moved back so the next chunk does not start with a fence marker run.
    BeforeMarker,
    /// A forced cut moved back to the start of a link or URL it would have split.
    BeforeLink,
    /// A link or URL that starts the chunk, kept whole although it runs past `max_chars`
    /// (never past `text_limit`).
    AfterLink,
    /// Before a fenced block that then fits the next chunk whole.
    BeforeFence,
    /// The rest of the turn, at `finish`.
    End,
}

/// One emitted chunk with what it is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Channel-ready text, synthetic fence lines included.
    pub text: String,
    /// Why the chunk ends here.
    pub kind: CutKind,
    /// The turn's source chars (char offsets) that `text` carries, synthetic lines excluded.
    pub source: Range<usize>,
    /// Bytes at the start of `text` that are a synthetic reopening fence line plus its newline.
    pub reopen_len: usize,
    /// Bytes at the end of `text` that are a synthetic closing fence (a newline plus marker).
    pub close_len: usize,
}

impl Chunk {
    /// `text` without the synthetic fence lines: exactly the source chars in `source`.
    pub fn body(&self) -> &str {
        &self.text[self.reopen_len..self.text.len() - self.close_len]
    }

    /// Length of `text` in chars, the unit of every limit.
    pub fn char_len(&self) -> usize {
        self.text.chars().count()
    }

    /// Whether the chunk ends with a synthetic fence close (a fence was split here).
    pub fn closes_fence(&self) -> bool {
        self.close_len > 0
    }
}

/// The synthetic opening line the next chunk starts with.
#[derive(Clone, Debug)]
struct Reopened {
    line: String,
    /// Chars of `line` plus its newline.
    chars: usize,
}

/// Retry hint: the planner cannot decide before this happens.
#[derive(Clone, Copy, Debug)]
enum Wait {
    Char(usize),
    NonWs(usize),
    LineEnd(u64),
}

/// Turns a stream of text deltas into chunks; see the crate docs for the rules it guarantees.
///
/// Pure and synchronous. One chunker serves one stream of text (one assistant text block or
/// message, depending on the break mode); [`BlockChunker::finish`] ends it and resets the
/// chunker for the next one.
#[derive(Clone, Debug)]
pub struct BlockChunker {
    config: ChunkerConfig,
    scanner: FenceScanner,
    /// Source chars from turn offset `base` on, not emitted yet.
    buf: Vec<char>,
    base: usize,
    /// Still inside the leading whitespace of the turn.
    at_start: bool,
    reopen: Option<Reopened>,
    wait: Option<Wait>,
    last_non_ws: Option<usize>,
}

impl BlockChunker {
    /// A chunker with `config` normalised (see [`ChunkerConfig::normalized`]).
    pub fn new(config: ChunkerConfig) -> Self {
        Self {
            config: config.normalized(),
            scanner: FenceScanner::default(),
            buf: Vec::new(),
            base: 0,
            at_start: true,
            reopen: None,
            wait: None,
            last_non_ws: None,
        }
    }

    /// The effective (normalised) configuration.
    pub fn config(&self) -> &ChunkerConfig {
        &self.config
    }

    /// Source chars received but not emitted yet.
    pub fn pending_chars(&self) -> usize {
        self.buf.len()
    }

    /// Adds a delta; returns the texts of the chunks it completes (possibly none).
    pub fn push(&mut self, delta: &str) -> Vec<String> {
        texts(self.push_chunks(delta))
    }

    /// Ends the stream: returns the remaining chunks (the tail is always flushed) and resets
    /// the chunker.
    pub fn finish(&mut self) -> Vec<String> {
        texts(self.finish_chunks())
    }

    /// [`BlockChunker::push`] with each chunk's kind, source range and synthetic parts.
    pub fn push_chunks(&mut self, delta: &str) -> Vec<Chunk> {
        for c in delta.chars() {
            let offset = self.base + self.buf.len();
            self.scanner.push(c);
            if !c.is_whitespace() {
                self.last_non_ws = Some(offset);
                if self.at_start {
                    // Blank lines before the first text are dropped; indentation is kept.
                    if let Some(nl) = self.buf.iter().rposition(|&b| b == '\n') {
                        self.buf.drain(..=nl);
                        self.base += nl + 1;
                    }
                    self.at_start = false;
                }
            }
            self.buf.push(c);
        }
        self.drain(false)
    }

    /// [`BlockChunker::finish`] with each chunk's kind, source range and synthetic parts.
    pub fn finish_chunks(&mut self) -> Vec<Chunk> {
        self.scanner.finish();
        let out = if self.at_start {
            Vec::new()
        } else {
            self.drain(true)
        };
        *self = Self::new(self.config.clone());
        out
    }

    fn ready(&self) -> bool {
        match self.wait {
            None => true,
            Some(Wait::Char(i)) => self.base + self.buf.len() > i,
            Some(Wait::NonWs(i)) => self.last_non_ws.is_some_and(|p| p >= i),
            Some(Wait::LineEnd(lines)) => self.scanner.lines_done() > lines,
        }
    }

    fn drain(&mut self, done: bool) -> Vec<Chunk> {
        let mut out = Vec::new();
        if self.at_start {
            return out;
        }
        while done || self.ready() {
            let plan = breaks::plan(&self.frame(done));
            let cut = match plan {
                Ok(Some(cut)) => cut,
                Ok(None) => {
                    self.base += self.buf.len();
                    self.buf.clear();
                    break;
                }
                Err(need) if !done => {
                    self.wait = Some(match need {
                        Need::Char(i) => Wait::Char(i),
                        Need::NonWs(i) => Wait::NonWs(i),
                        Need::LineEnd => Wait::LineEnd(self.scanner.lines_done()),
                    });
                    break;
                }
                // Once done every read resolves, so this is unreachable; cutting at max_chars
                // still guarantees that finish() drains everything.
                Err(_) => self.fallback_cut(),
            };
            self.wait = None;
            out.extend(self.apply(cut));
            if self.buf.is_empty() {
                break;
            }
        }
        out
    }

    fn fallback_cut(&self) -> Cut {
        let at = self
            .config
            .max_chars
            .saturating_sub(self.reopen.as_ref().map_or(0, |r| r.chars))
            .clamp(1, self.buf.len().max(1));
        Cut {
            body_end: at.min(self.buf.len()),
            rest: at.min(self.buf.len()),
            kind: CutKind::Hard,
            close: None,
            reopen: None,
        }
    }

    fn frame(&self, done: bool) -> Frame<'_> {
        let base = self.base;
        let rel = |abs: usize| abs.saturating_sub(base);
        let fences = self
            .scanner
            .fences()
            .filter(|f| f.close.is_none_or(|c| c.end > base))
            .map(|f| FenceView {
                start: (f.start >= base).then(|| f.start - base),
                content_start: rel(f.content_start),
                close_start: f.close.map(|c| rel(c.line_start)),
                end: f.close.map(|c| rel(c.end)),
                indent: f.indent,
                marker: f.marker,
            })
            .collect();
        Frame {
            buf: &self.buf,
            base,
            done,
            reopen_chars: self.reopen.as_ref().map_or(0, |r| r.chars),
            fences,
            pending: self.scanner.pending().map(|(s, shape)| (rel(s), shape)),
            cfg: &self.config,
        }
    }

    /// Emits the cut's chunk (none for a cut that only drops whitespace) and moves on.
    fn apply(&mut self, cut: Cut) -> Option<Chunk> {
        // A cut that consumes nothing would loop forever; the planner never makes one.
        let rest = cut.rest.max(1).min(self.buf.len());
        let body_end = cut.body_end.min(rest);
        let mut text = String::new();
        let mut reopen_len = 0;
        if let Some(r) = &self.reopen {
            text.push_str(&r.line);
            text.push('\n');
            reopen_len = text.len();
        }
        text.extend(&self.buf[..body_end]);
        let mut close_len = 0;
        if let Some(marker) = cut.close {
            let before = text.len();
            text.push('\n');
            text.push_str(&marker.text());
            close_len = text.len() - before;
        }
        let next = cut.reopen.map(|how| self.reopen_line(how, cut.close));
        let empty = body_end == 0 && reopen_len == 0 && close_len == 0;
        let chunk = Chunk {
            text,
            kind: cut.kind,
            source: self.base..self.base + body_end,
            reopen_len,
            close_len,
        };
        self.reopen = next;
        self.buf.drain(..rest);
        self.base += rest;
        self.scanner.prune(self.base);
        (!empty).then_some(chunk)
    }

    fn reopen_line(&self, how: Reopen, close: Option<Marker>) -> Reopened {
        let line: String = match how {
            Reopen::Line(range) => self.buf[range].iter().collect(),
            Reopen::Bare { indent, marker } => " ".repeat(indent) + &marker.text(),
            Reopen::Same => match &self.reopen {
                Some(r) => r.line.clone(),
                None => close.map(Marker::text).unwrap_or_default(),
            },
        };
        let chars = line.chars().count() + 1;
        Reopened { line, chars }
    }
}

fn texts(chunks: Vec<Chunk>) -> Vec<String> {
    chunks.into_iter().map(|c| c.text).collect()
}

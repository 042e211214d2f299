//! Idle coalescing (`blockStreamingCoalesce`): merges small chunks before they are sent.
//!
//! The caller owns the clock: every call takes the current time in milliseconds, and
//! [`Coalescer::deadline_ms`] says when to call [`Coalescer::poll`] next.

use crate::chunker::BlockChunker;
use crate::config::{BreakPreference, ChunkerConfig, DEFAULT_MIN_CHARS, DEFAULT_TEXT_LIMIT};
use crate::fence;

/// Default idle time before a buffered block is sent.
pub const DEFAULT_IDLE_MS: u64 = 1000;
/// Upper bound for `idle_ms`.
pub const MAX_IDLE_MS: u64 = 5000;

/// Coalescing bounds, in chars and milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoalesceConfig {
    /// Send once the buffered block holds this many chars.
    pub min_chars: usize,
    /// Never grow a block past this many chars (clamped to the channel limit).
    pub max_chars: usize,
    /// Send a buffered block after this long without a new chunk (clamped to 0..=5000).
    pub idle_ms: u64,
}

impl Default for CoalesceConfig {
    fn default() -> Self {
        Self {
            min_chars: DEFAULT_MIN_CHARS,
            max_chars: DEFAULT_TEXT_LIMIT,
            idle_ms: DEFAULT_IDLE_MS,
        }
    }
}

/// Merges chunks with the joiner of the break preference and sends them when big enough, when
/// the next one would not fit, or after an idle pause.
///
/// Every emitted block is at most `max_chars` long, except a single chunk longer than
/// `max_chars`, which is sent on its own, and nothing is ever longer than the channel limit.
/// Chunks from a [`BlockChunker`] with the same limit already respect it; a longer chunk (a
/// caller bug) is split by a chunker with `max_chars = text_limit` rather than sent oversized.
#[derive(Clone, Debug)]
pub struct Coalescer {
    config: CoalesceConfig,
    preference: BreakPreference,
    text_limit: usize,
    buf: String,
    buf_chars: usize,
    last_push_ms: u64,
}

impl Coalescer {
    /// A coalescer for a channel with `text_limit`; `config` is clamped so that
    /// `1 <= min_chars <= max_chars <= text_limit` and `idle_ms <= 5000`.
    pub fn new(config: CoalesceConfig, preference: BreakPreference, text_limit: usize) -> Self {
        let text_limit = text_limit.max(1);
        let max_chars = config.max_chars.clamp(1, text_limit);
        Self {
            config: CoalesceConfig {
                min_chars: config.min_chars.clamp(1, max_chars),
                max_chars,
                idle_ms: config.idle_ms.min(MAX_IDLE_MS),
            },
            preference,
            text_limit,
            buf: String::new(),
            buf_chars: 0,
            last_push_ms: 0,
        }
    }

    /// The effective (clamped) configuration.
    pub fn config(&self) -> CoalesceConfig {
        self.config
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// When [`Coalescer::poll`] will send the buffered block, if one is buffered.
    pub fn deadline_ms(&self) -> Option<u64> {
        (!self.buf.is_empty()).then(|| self.last_push_ms.saturating_add(self.config.idle_ms))
    }

    /// Adds a chunk at `now_ms`; returns the blocks to send now. A block left idle past
    /// `idle_ms` is sent first, as `poll` would have.
    pub fn push(&mut self, chunk: &str, now_ms: u64) -> Vec<String> {
        let mut out = self.poll(now_ms);
        if chunk.trim().is_empty() {
            return out;
        }
        let chars = chunk.chars().count();
        if chars > self.text_limit {
            let mut splitter = BlockChunker::new(ChunkerConfig {
                min_chars: 1,
                max_chars: self.text_limit,
                break_preference: self.preference,
                text_limit: self.text_limit,
                flush_on_paragraph: false,
            });
            let mut pieces = splitter.push(chunk);
            pieces.extend(splitter.finish());
            for piece in pieces {
                let n = piece.chars().count();
                self.add(&piece, n, &mut out);
            }
        } else {
            self.add(chunk, chars, &mut out);
        }
        self.last_push_ms = now_ms;
        out
    }

    /// Returns the buffered block if it has been idle for `idle_ms` at `now_ms`.
    pub fn poll(&mut self, now_ms: u64) -> Vec<String> {
        let idle = now_ms.saturating_sub(self.last_push_ms) >= self.config.idle_ms;
        if idle && !self.buf.is_empty() {
            vec![self.take()]
        } else {
            Vec::new()
        }
    }

    /// Ends the turn: returns the buffered block, if any.
    pub fn finish(&mut self) -> Vec<String> {
        if self.buf.is_empty() {
            Vec::new()
        } else {
            vec![self.take()]
        }
    }

    fn add(&mut self, chunk: &str, chars: usize, out: &mut Vec<String>) {
        if !self.buf.is_empty() {
            let joiner = self.joiner(chunk);
            let joined = self.buf_chars + joiner.chars().count() + chars;
            if joined > self.config.max_chars {
                out.push(self.take());
            } else {
                self.buf.push_str(joiner);
                self.buf_chars += joiner.chars().count();
            }
        }
        self.buf.push_str(chunk);
        self.buf_chars += chars;
        if self.buf_chars >= self.config.min_chars {
            out.push(self.take());
        }
    }

    /// The preference's joiner, except that a fence line never shares a line with other text:
    /// that would turn a closing fence into content (or an opening one into text).
    fn joiner(&self, next: &str) -> &'static str {
        let joiner = self.preference.joiner();
        let last_line = self.buf.rsplit('\n').next().unwrap_or_default();
        let first_line = next.split('\n').next().unwrap_or_default();
        if !joiner.contains('\n')
            && (fence::is_fence_like(last_line) || fence::is_fence_like(first_line))
        {
            "\n"
        } else {
            joiner
        }
    }

    fn take(&mut self) -> String {
        self.buf_chars = 0;
        std::mem::take(&mut self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_clamped() {
        let c = Coalescer::new(
            CoalesceConfig {
                min_chars: 9000,
                max_chars: 9000,
                idle_ms: 60_000,
            },
            BreakPreference::Paragraph,
            2000,
        );
        assert_eq!(
            c.config(),
            CoalesceConfig {
                min_chars: 2000,
                max_chars: 2000,
                idle_ms: 5000
            }
        );
    }

    #[test]
    fn sentence_joiner_never_glues_a_fence_line() {
        let mut c = Coalescer::new(
            CoalesceConfig {
                min_chars: 100,
                max_chars: 100,
                idle_ms: 10,
            },
            BreakPreference::Sentence,
            100,
        );
        assert!(c.push("```\ncode\n```", 0).is_empty());
        assert!(c.push("Next.", 1).is_empty());
        assert!(c.push("Then.", 2).is_empty());
        assert_eq!(c.finish(), vec!["```\ncode\n```\nNext. Then.".to_owned()]);
    }
}

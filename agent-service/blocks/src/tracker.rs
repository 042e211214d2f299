//! Keeps the final reply from repeating what block streaming already delivered.
//!
//! Blocks and the final text are compared on their *content*: every char that is not
//! whitespace, on lines that are not fence lines. That ignores exactly what streaming changes:
//! whitespace dropped at cuts, coalescer joiners and synthetic fence close/reopen lines (always
//! whole lines). Blocks are grouped by assistant message, because a turn that goes text → tool →
//! text ends with one final payload per message (openclaw#95432).

use std::collections::BTreeMap;

use crate::fence::{self, FenceScanner};

/// Blocks delivered during a turn, per assistant message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockTracker {
    messages: BTreeMap<usize, Delivered>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Delivered {
    content: String,
    blocks: usize,
}

impl BlockTracker {
    /// An empty tracker for a new turn.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a block of assistant message `message` that the channel confirmed as delivered.
    /// Record blocks in the order they were sent, and only confirmed ones: a block that failed
    /// must stay part of the unsent tail (openclaw#145428).
    pub fn record_sent(&mut self, message: usize, block: &str) {
        let delivered = self.messages.entry(message).or_default();
        delivered
            .content
            .extend(content_chars(block).map(|(_, c)| c));
        delivered.blocks += 1;
    }

    /// How many blocks were recorded for `message`.
    pub fn sent_blocks(&self, message: usize) -> usize {
        self.messages.get(&message).map_or(0, |d| d.blocks)
    }

    /// What of `final_text` (the final reply of assistant message `message`) still needs
    /// delivering, or `None` when the blocks already cover all of it.
    ///
    /// When the final text extends what was streamed, the tail starts right after the streamed
    /// content (mid-word if a forced cut was there). When it differs from what was streamed,
    /// the tail starts at the beginning of the word where they part. A tail that starts inside
    /// a fenced block gets the block's opening line again, so it renders as code. The tail is
    /// not chunked: send it like any reply (through a [`crate::BlockChunker`] if it may be
    /// longer than the channel limit).
    pub fn unsent_tail(&self, message: usize, final_text: &str) -> Option<String> {
        let sent = self
            .messages
            .get(&message)
            .map_or("", |d| d.content.as_str());
        let mut sent = sent.chars();
        let mut covered_to = 0;
        for (at, c) in content_chars(final_text) {
            match sent.next() {
                Some(s) if s == c => covered_to = at + c.len_utf8(),
                Some(_) => {
                    let word_start = final_text[..at]
                        .char_indices()
                        .rfind(|(_, w)| w.is_whitespace())
                        .map_or(0, |(i, w)| i + w.len_utf8());
                    return tail_from(final_text, word_start);
                }
                None => return tail_from(final_text, covered_to),
            }
        }
        None
    }
}

/// Content chars of `text` with their byte offsets: non-whitespace chars on non-fence lines.
fn content_chars(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut line_start = 0;
    text.split('\n').flat_map(move |line| {
        let start = line_start;
        line_start += line.len() + 1;
        let skip = fence::is_fence_like(line);
        line.char_indices()
            .filter(move |&(_, c)| !skip && !c.is_whitespace())
            .map(move |(i, c)| (start + i, c))
    })
}

/// `final_text` from byte `from` on, made presentable: leading blank lines dropped, and the
/// opening line of a fenced block the tail starts inside of put back.
fn tail_from(final_text: &str, from: usize) -> Option<String> {
    let chars: Vec<char> = final_text.chars().collect();
    let mut scanner = FenceScanner::default();
    chars.iter().for_each(|&c| scanner.push(c));
    scanner.finish();
    let mut at = final_text[..from].chars().count();
    let next_content = |from: usize| {
        (from..chars.len())
            .find(|&i| !chars[i].is_whitespace())
            .unwrap_or(chars.len())
    };
    let mut prefix = String::new();
    let inside = scanner
        .fences()
        .find(|f| f.start < at && f.close.is_none_or(|c| at < c.end));
    if let Some(fence) = inside {
        match fence.close {
            // Only blanks are left before the closing line: skip the fence.
            Some(close) if next_content(at) >= close.line_start => at = close.end,
            _ => {
                prefix = chars[fence.start..fence.content_start - 1].iter().collect();
                prefix.push('\n');
                let newline = chars[at..next_content(at)].iter().rposition(|&c| c == '\n');
                at = newline.map_or(at, |nl| at + nl + 1);
                let tail: String = chars[at..].iter().collect();
                return Some(prefix + tail.trim_end());
            }
        }
    }
    let content = next_content(at);
    if content == chars.len() {
        return None;
    }
    // Keep the indentation of the first line, as the chunker does after a cut.
    let start = chars[at..content]
        .iter()
        .rposition(|&c| c == '\n')
        .map_or(content, |nl| at + nl + 1);
    let tail: String = chars[start..].iter().collect();
    content_chars(&tail)
        .next()
        .map(|_| prefix + tail.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ignores_whitespace_and_fence_lines() {
        let got: String = content_chars("a b\n```rust\nc\n```\n d")
            .map(|(_, c)| c)
            .collect();
        assert_eq!(got, "abcd");
    }
}

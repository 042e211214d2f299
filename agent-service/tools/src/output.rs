//! Bounded capture of command output: the first and the last bytes are kept, the middle is
//! counted and elided with a marker. Shared by `exec` and the background process logs.

use std::collections::VecDeque;

/// A byte sink that keeps at most `head_cap + tail_cap` bytes.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl HeadTail {
    /// Keeps up to `cap` bytes: a third from the start, the rest from the end (the end of a
    /// command's output is usually where the error is).
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 3;
        Self {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        bytes = rest;
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(&bytes[bytes.len().saturating_sub(self.tail_cap)..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes received in total.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Bytes dropped from the middle.
    pub(crate) fn omitted(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept output as text (invalid UTF-8 replaced), with a marker where bytes were
    /// dropped. Characters cut in half at the seams are dropped rather than mangled.
    pub(crate) fn render(&self) -> String {
        let omitted = self.omitted();
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head = String::from_utf8_lossy(trim_partial_end(&self.head));
        let tail = String::from_utf8_lossy(trim_partial_start(&tail));
        format!("{head}\n[... {omitted} bytes of output omitted ...]\n{tail}")
    }
}

/// Drops an incomplete UTF-8 sequence at the end of `bytes`.
fn trim_partial_end(bytes: &[u8]) -> &[u8] {
    let start_of_last = bytes
        .iter()
        .rposition(|b| !is_continuation(*b))
        .unwrap_or(0);
    match bytes.get(start_of_last) {
        Some(&lead) if sequence_len(lead) > bytes.len() - start_of_last => &bytes[..start_of_last],
        _ => bytes,
    }
}

/// Drops continuation bytes at the start of `bytes` (the rest of a character cut off).
fn trim_partial_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| is_continuation(**b))
        .count();
    &bytes[skip..]
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

fn sequence_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The last `max_chars` characters of `text`, with a note of how many were cut.
pub(crate) fn last_chars(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_owned();
    }
    let cut = count - max_chars;
    let start = text.char_indices().nth(cut).map_or(text.len(), |(i, _)| i);
    format!(
        "[... {cut} earlier characters omitted ...]\n{}",
        &text[start..]
    )
}

/// The first `max_chars` characters of `text`, with a note of how many were cut.
pub(crate) fn first_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((end, _)) => {
            let cut = text[end..].chars().count();
            format!("{}\n[... {cut} more characters omitted ...]", &text[..end])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut out = HeadTail::new(30);
        out.push(b"hello ");
        out.push(b"world");
        assert_eq!(out.render(), "hello world");
        assert_eq!(out.omitted(), 0);
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut out = HeadTail::new(9);
        for chunk in [b"abc".as_slice(), b"defghij", b"klmnop", b"qrs"] {
            out.push(chunk);
        }
        assert_eq!(out.total(), 19);
        assert_eq!(out.omitted(), 10);
        assert_eq!(
            out.render(),
            "abc\n[... 10 bytes of output omitted ...]\nnopqrs"
        );
    }

    #[test]
    fn a_single_huge_chunk_is_cut_in_two() {
        let mut out = HeadTail::new(6);
        out.push(b"0123456789");
        assert_eq!(
            out.render(),
            "01\n[... 4 bytes of output omitted ...]\n6789"
        );
    }

    #[test]
    fn cut_characters_are_dropped_at_the_seams() {
        let mut out = HeadTail::new(6);
        // "é" is two bytes: the head keeps 2 bytes ("a" + half an "é"), the tail 4.
        out.push("aéééébc".as_bytes());
        let text = out.render();
        assert!(!text.contains('\u{fffd}'), "{text:?}");
        assert!(text.starts_with("a\n"), "{text:?}");
        assert!(text.ends_with("ébc"), "{text:?}");
    }

    #[test]
    fn char_budgets_cut_on_character_boundaries() {
        assert_eq!(
            last_chars("héllo", 3),
            "[... 2 earlier characters omitted ...]\nllo"
        );
        assert_eq!(
            first_chars("héllo", 2),
            "hé\n[... 3 more characters omitted ...]"
        );
        assert_eq!(first_chars("hé", 2), "hé");
    }
}

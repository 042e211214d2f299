//! The SHA-256 of per-turn section texts seen recently with one stable block.
//!
//! Hashing is most of a per-turn render: the sections below the boundary are
//! a few kilobytes, rebuilt on every turn, and each is reported with its hash.
//! Most of them come out the same turn after turn (the messaging rules of a
//! channel, the output directives, the heartbeat rules), so a block remembers
//! the last few texts of each section with their hashes and hashes only a
//! text it has not seen. A hit compares the whole text, so a reported hash is
//! always the hash of the text reported: the output is the same with or
//! without this memo.

use std::sync::{Mutex, PoisonError};

use crate::{mode::SECTIONS, text};

/// Texts remembered per section row: a few channels or heartbeat variants
/// served from one block.
const PER_ROW: usize = 4;
/// Longer texts are hashed every time: remembering them would cost more
/// memory than their hash costs time.
const MAX_TEXT: usize = 2048;

/// Per section row of [`SECTIONS`], its recent texts and their hashes.
pub(crate) struct HashMemo {
    rows: Vec<Mutex<Recent>>,
}

#[derive(Default)]
struct Recent {
    /// Oldest first.
    seen: Vec<(String, String)>,
}

impl HashMemo {
    pub(crate) fn new() -> Self {
        Self {
            rows: SECTIONS.iter().map(|_| Mutex::default()).collect(),
        }
    }

    /// The lowercase hex SHA-256 of `text`, a piece of the section in row
    /// `row` of [`SECTIONS`].
    pub(crate) fn sha256_hex(&self, row: usize, text: &str) -> String {
        let Some(slot) = self.rows.get(row).filter(|_| text.len() <= MAX_TEXT) else {
            return text::sha256_hex(text.as_bytes());
        };
        if let Some(hit) = slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .seen
            .iter()
            .find(|(seen, _)| seen == text)
        {
            return hit.1.clone();
        }
        // Hashed outside the lock: other turns of the block go on meanwhile.
        let sha = text::sha256_hex(text.as_bytes());
        let mut recent = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if !recent.seen.iter().any(|(seen, _)| seen == text) {
            if recent.seen.len() == PER_ROW {
                recent.seen.remove(0);
            }
            recent.seen.push((text.to_owned(), sha.clone()));
        }
        sha
    }

    /// Bytes the remembered texts and hashes hold.
    pub(crate) fn approx_bytes(&self) -> usize {
        self.rows
            .iter()
            .map(|row| {
                let recent = row.lock().unwrap_or_else(PoisonError::into_inner);
                recent
                    .seen
                    .iter()
                    .map(|(text, sha)| text.len() + sha.len())
                    .sum::<usize>()
            })
            .sum()
    }
}

impl std::fmt::Debug for HashMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashMemo")
            .field("approx_bytes", &self.approx_bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_is_the_hash_of_the_same_text_and_old_texts_are_forgotten() {
        let memo = HashMemo::new();
        let texts: Vec<String> = (0..=PER_ROW)
            .map(|n| format!("## Runtime\nhost-{n}"))
            .collect();
        for t in &texts {
            assert_eq!(memo.sha256_hex(3, t), text::sha256_hex(t.as_bytes()));
        }
        // Same length, one byte apart: never confused.
        assert_eq!(
            memo.sha256_hex(3, "## Runtime\nhost-9"),
            text::sha256_hex(b"## Runtime\nhost-9")
        );
        let recent: Vec<String> = memo.rows[3]
            .lock()
            .unwrap()
            .seen
            .iter()
            .map(|(t, _)| t.clone())
            .collect();
        assert_eq!(recent.len(), PER_ROW);
        assert!(!recent.contains(&texts[0]) && !recent.contains(&texts[1]));
        assert_eq!(
            recent.last().map(String::as_str),
            Some("## Runtime\nhost-9")
        );
        // Rows are separate, and long texts are not kept.
        let long = "x".repeat(MAX_TEXT + 1);
        assert_eq!(memo.sha256_hex(4, &long), text::sha256_hex(long.as_bytes()));
        assert!(memo.rows[4].lock().unwrap().seen.is_empty());
    }
}

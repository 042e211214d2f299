//! [`WireMemo`]: prepared stable inputs, remembered by their request bytes.
//!
//! A session's requests differ only in their turn fields, so the bytes of
//! every other field (see [`crate::wire`]) identify its stable inputs. An
//! entry holds those bytes, the inputs decoded, validated and prepared
//! (stable block rendered) from them, and the reply fields that depend only
//! on the block, encoded. A request whose stable bytes match an entry
//! exactly has only its turn fields decoded.
//!
//! Entries are found by a sampled fingerprint and then compared byte for
//! byte, so a fingerprint collision costs a comparison, never a wrong
//! prompt. The comparison runs outside the lock.

use std::sync::{Arc, Mutex, PoisonError};

use prompt_render::Prepared;

use crate::{reply::ReplyParts, wire::Split};

/// One remembered stable part.
#[derive(Debug)]
pub(crate) struct Entry {
    fingerprint: u64,
    /// The stable bytes, concatenated.
    key: Box<[u8]>,
    /// The inputs decoded from `key`, validated, with their stable block.
    pub(crate) prepared: Prepared,
    /// The block's reply fields, encoded.
    pub(crate) parts: Arc<ReplyParts>,
}

/// A least-recently-used set of [`Entry`]s, bounded in number and in bytes
/// ([`MAX_KEY_BYTES`]).
#[derive(Debug)]
pub(crate) struct WireMemo {
    capacity: usize,
    slots: Mutex<Slots>,
}

#[derive(Debug, Default)]
struct Slots {
    entries: Vec<(u64, Arc<Entry>)>,
    tick: u64,
    /// Sum of the entries' key lengths.
    bytes: usize,
}

/// Bound on the stable bytes held, summed over entries. An entry holds its
/// bytes, the inputs decoded from them and their stable block, roughly three
/// times its key, so this keeps the memo near 100 MB at worst (64 entries of
/// a 50 KB request hold about 10 MB). A stable part over a quarter of it is
/// not remembered at all.
pub(crate) const MAX_KEY_BYTES: usize = 32 * 1024 * 1024;

impl WireMemo {
    /// A memo of at most `capacity` entries (0 remembers nothing).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            slots: Mutex::default(),
        }
    }

    /// The entry whose stable bytes are exactly `split`'s; `fingerprint` is
    /// [`Split::stable_fingerprint`].
    pub(crate) fn find(&self, fingerprint: u64, split: &Split<'_>) -> Option<Arc<Entry>> {
        if self.capacity == 0 {
            return None;
        }
        let candidates: Vec<Arc<Entry>> = {
            // A poisoned lock means a panic elsewhere mid-update; the entries
            // are always whole.
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            slots.tick += 1;
            let tick = slots.tick;
            slots
                .entries
                .iter_mut()
                .filter(|(_, e)| e.fingerprint == fingerprint)
                .map(|(last_used, e)| {
                    *last_used = tick;
                    Arc::clone(e)
                })
                .collect()
        };
        candidates.into_iter().find(|e| split.stable_equals(&e.key))
    }

    /// Remembers `prepared` (built from `split`'s stable bytes), evicting
    /// the least recently used entry when full.
    pub(crate) fn insert(
        &self,
        fingerprint: u64,
        split: &Split<'_>,
        prepared: Prepared,
        parts: Arc<ReplyParts>,
    ) {
        if self.capacity == 0 || split.stable_len() > MAX_KEY_BYTES / 4 {
            return;
        }
        let entry = Arc::new(Entry {
            fingerprint,
            key: split.stable_bytes().into_boxed_slice(),
            prepared,
            parts,
        });
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots
            .entries
            .iter()
            .any(|(_, e)| e.fingerprint == fingerprint && e.key == entry.key)
        {
            return; // Prepared concurrently by another request.
        }
        slots.tick += 1;
        let tick = slots.tick;
        // Least recently used first out, until both bounds hold.
        while slots.entries.len() >= self.capacity || slots.bytes + entry.key.len() > MAX_KEY_BYTES
        {
            let Some(oldest) = slots
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, (last_used, _))| *last_used)
                .map(|(i, _)| i)
            else {
                break;
            };
            let (_, evicted) = slots.entries.swap_remove(oldest);
            slots.bytes -= evicted.key.len();
        }
        slots.bytes += entry.key.len();
        slots.entries.push((tick, entry));
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::split;
    use prompt_render::{Renderer, fixtures};
    use prost::Message;

    fn remember(memo: &WireMemo, renderer: &Renderer, bytes: &[u8]) -> bool {
        let Some(split) = split(bytes) else {
            panic!("splits");
        };
        let fingerprint = split.stable_fingerprint();
        if memo.find(fingerprint, &split).is_some() {
            return true;
        }
        let mut input = crate::input_from_request(
            openclaw_proto::prompt::v1::RenderSystemPromptRequest::decode(bytes)
                .unwrap_or_else(|e| panic!("decodes: {e}")),
        )
        .unwrap_or_else(|e| panic!("converts: {e}"));
        let _ = input.take_turn();
        let prepared = renderer
            .prepare(input)
            .unwrap_or_else(|e| panic!("prepares: {e}"));
        let parts = Arc::new(ReplyParts::of(&prepared));
        memo.insert(fingerprint, &split, prepared, parts);
        false
    }

    fn request_with_file(chars: usize, tag: usize) -> Vec<u8> {
        let mut input = fixtures::realistic();
        input.workspace_notes.push(format!("variant {tag}"));
        input
            .context_files
            .push(fixtures::file("notes.md", "n".repeat(chars)));
        crate::request_from_input(&input).encode_to_vec()
    }

    #[test]
    fn the_memo_is_bounded_in_entries_and_bytes() {
        let renderer = Renderer::new(0);
        // By count: the least recently used goes first.
        let memo = WireMemo::new(2);
        let (a, b, c) = (
            request_with_file(10, 1),
            request_with_file(10, 2),
            request_with_file(10, 3),
        );
        assert!(!remember(&memo, &renderer, &a));
        assert!(!remember(&memo, &renderer, &b));
        assert!(remember(&memo, &renderer, &a));
        assert!(!remember(&memo, &renderer, &c));
        assert_eq!(memo.len(), 2);
        assert!(remember(&memo, &renderer, &a));
        assert!(!remember(&memo, &renderer, &b));

        // By bytes: three parts of a fifth of the budget fit, a fourth and
        // fifth evict the oldest; one over a quarter is never kept.
        let memo = WireMemo::new(64);
        let fifth = MAX_KEY_BYTES / 5;
        let big: Vec<Vec<u8>> = (0..5).map(|i| request_with_file(fifth, 10 + i)).collect();
        for bytes in &big {
            assert!(!remember(&memo, &renderer, bytes));
        }
        assert_eq!(memo.len(), 4);
        assert!(
            !remember(&memo, &renderer, &big[0]),
            "the oldest was evicted"
        );
        let huge = request_with_file(MAX_KEY_BYTES / 4 + 1, 99);
        assert!(!remember(&memo, &renderer, &huge));
        assert!(!remember(&memo, &renderer, &huge), "never kept");
    }
}

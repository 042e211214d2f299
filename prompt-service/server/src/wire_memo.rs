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

/// A bounded least-recently-used set of [`Entry`]s.
#[derive(Debug)]
pub(crate) struct WireMemo {
    capacity: usize,
    slots: Mutex<Slots>,
}

#[derive(Debug, Default)]
struct Slots {
    entries: Vec<(u64, Arc<Entry>)>,
    tick: u64,
}

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
        if self.capacity == 0 {
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
        let oldest = slots
            .entries
            .iter()
            .enumerate()
            .min_by_key(|(_, (last_used, _))| *last_used)
            .map(|(i, _)| i);
        if let (true, Some(oldest)) = (slots.entries.len() >= self.capacity, oldest) {
            slots.entries.swap_remove(oldest);
        }
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

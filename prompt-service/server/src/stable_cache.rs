//! [`StableCache`]: the one cache of prepared stable blocks, keyed by the
//! request bytes that carry the stable inputs.
//!
//! A session's requests differ only in their turn fields, so the bytes of
//! every other field (see [`crate::wire`]) identify its stable inputs. An
//! entry holds those bytes, the inputs decoded, validated and prepared
//! (stable block rendered) from them, and the reply fields that depend only
//! on the block, encoded. A request whose stable bytes match an entry
//! exactly has only its turn fields decoded.
//!
//! Entries are found by a sampled fingerprint ([`SampledHasher`]) and then
//! compared byte for byte, so a fingerprint collision costs a comparison,
//! never a wrong prompt. The comparison runs outside the lock. Recency is
//! kept by the `lru` crate; the bounds in entries and bytes are enforced
//! here, least recently used first out.

use std::{
    hash::Hasher,
    sync::{Arc, Mutex, PoisonError},
};

use lru::LruCache;
use prompt_render::Prepared;

use crate::{reply::ReplyParts, wire::Split};

/// Entries kept by default.
pub const DEFAULT_CACHE_ENTRIES: usize = 64;

/// Bound on what the cache holds, summed over entries: each entry's stable
/// bytes plus [`Prepared::approx_bytes`] (its decoded inputs and rendered
/// prefix). 64 entries of the realistic 50 KB request hold about 12 MB. An
/// entry over a quarter of it is used for its own request but not kept.
pub(crate) const MAX_CACHE_BYTES: usize = 96 * 1024 * 1024;

/// One remembered stable part.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The stable bytes, concatenated.
    key: Box<[u8]>,
    /// The inputs decoded from `key`, validated, with their stable block.
    pub(crate) prepared: Prepared,
    /// The block's reply fields, encoded.
    pub(crate) parts: Arc<ReplyParts>,
    /// What this entry counts against [`MAX_CACHE_BYTES`].
    weight: usize,
}

/// A least-recently-used cache of [`Entry`]s, bounded in number and in
/// bytes ([`MAX_CACHE_BYTES`]).
#[derive(Debug)]
pub(crate) struct StableCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Entries by fingerprint; stable parts that share one (they differ
    /// only between samples) share its slot.
    lru: LruCache<u64, Vec<Arc<Entry>>>,
    entries: usize,
    bytes: usize,
}

impl StableCache {
    /// A cache of at most `capacity` entries (0 keeps nothing).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            inner: Mutex::new(Inner {
                lru: LruCache::unbounded(),
                entries: 0,
                bytes: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock means a panic elsewhere mid-update; the entries
        // are always whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry whose stable bytes are exactly `split`'s; `fingerprint` is
    /// [`Split::stable_fingerprint`].
    pub(crate) fn find(&self, fingerprint: u64, split: &Split<'_>) -> Option<Arc<Entry>> {
        if self.capacity == 0 {
            return None;
        }
        let candidates: Vec<Arc<Entry>> = self.lock().lru.get(&fingerprint)?.clone();
        candidates.into_iter().find(|e| split.stable_equals(&e.key))
    }

    /// Remembers `prepared` (built from `split`'s stable bytes), evicting
    /// the least recently used entries until both bounds hold.
    pub(crate) fn insert(
        &self,
        fingerprint: u64,
        split: &Split<'_>,
        prepared: Prepared,
        parts: Arc<ReplyParts>,
    ) {
        let weight = split.stable_len() + prepared.approx_bytes();
        if self.capacity == 0 || weight > MAX_CACHE_BYTES / 4 {
            return;
        }
        let entry = Arc::new(Entry {
            key: split.stable_bytes().into_boxed_slice(),
            prepared,
            parts,
            weight,
        });
        let mut inner = self.lock();
        if inner
            .lru
            .peek(&fingerprint)
            .is_some_and(|slot| slot.iter().any(|e| e.key == entry.key))
        {
            return; // Prepared concurrently by another request.
        }
        while inner.entries >= self.capacity || inner.bytes + weight > MAX_CACHE_BYTES {
            let Some((_, evicted)) = inner.lru.pop_lru() else {
                break;
            };
            inner.entries -= evicted.len();
            inner.bytes -= evicted.iter().map(|e| e.weight).sum::<usize>();
        }
        inner.entries += 1;
        inner.bytes += weight;
        match inner.lru.get_mut(&fingerprint) {
            Some(slot) => slot.push(entry),
            None => {
                inner.lru.put(fingerprint, vec![entry]);
            }
        }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.lock().entries
    }
}

/// A hasher that reads short byte strings whole and long ones by their
/// length, both ends and a sample every [`SampledHasher::STRIDE`] bytes.
/// Equal keys always get equal fingerprints; keys that differ only between
/// samples collide, so the cache compares the bytes in full before trusting
/// a match. Not a general-purpose hash: it is for finding candidates fast
/// (a second full pass over a 50 KB request was a tenth of a per-turn
/// render).
#[derive(Default)]
pub(crate) struct SampledHasher(rustc_hash::FxHasher);

impl SampledHasher {
    /// Strings up to this length are hashed whole.
    const WHOLE: usize = 256;
    /// Bytes taken from each end of a longer string.
    pub(crate) const ENDS: usize = 64;
    /// Distance between the samples taken from a longer string.
    pub(crate) const STRIDE: usize = 512;
    /// Bytes in one sample.
    pub(crate) const SAMPLE: usize = 8;
}

impl Hasher for SampledHasher {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.len() <= Self::WHOLE {
            self.0.write(bytes);
            return;
        }
        self.0.write_usize(bytes.len());
        let (head, tail) = (&bytes[..Self::ENDS], &bytes[bytes.len() - Self::ENDS..]);
        self.0.write(head);
        self.0.write(tail);
        for start in (Self::ENDS..bytes.len() - Self::ENDS).step_by(Self::STRIDE) {
            let end = (start + Self::SAMPLE).min(bytes.len());
            self.0.write(&bytes[start..end]);
        }
    }

    fn write_usize(&mut self, i: usize) {
        self.0.write_usize(i);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::split;
    use prompt_render::fixtures;
    use prost::Message;

    fn remember(cache: &StableCache, bytes: &[u8]) -> bool {
        let Some(split) = split(bytes) else {
            panic!("splits");
        };
        let fingerprint = split.stable_fingerprint();
        if cache.find(fingerprint, &split).is_some() {
            return true;
        }
        let mut input = crate::input_from_request(
            openclaw_proto::prompt::v1::RenderSystemPromptRequest::decode(bytes)
                .unwrap_or_else(|e| panic!("decodes: {e}")),
        )
        .unwrap_or_else(|e| panic!("converts: {e}"));
        let _ = input.take_turn();
        let prepared = Prepared::new(input).unwrap_or_else(|e| panic!("prepares: {e}"));
        let parts = Arc::new(ReplyParts::of(&prepared));
        cache.insert(fingerprint, &split, prepared, parts);
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
    fn the_cache_is_bounded_in_entries_and_bytes() {
        // By count: the least recently used goes first.
        let cache = StableCache::new(2);
        let (a, b, c) = (
            request_with_file(10, 1),
            request_with_file(10, 2),
            request_with_file(10, 3),
        );
        assert!(!remember(&cache, &a));
        assert!(!remember(&cache, &b));
        assert!(remember(&cache, &a));
        assert!(!remember(&cache, &c));
        assert_eq!(cache.len(), 2);
        assert!(remember(&cache, &a));
        assert!(!remember(&cache, &b));

        // By bytes: an entry weighs its request bytes and the file kept in
        // its inputs (plus the prefix, which the injection budget keeps
        // small), so three of a tenth of the budget each (about a fifth
        // with what they hold) fit four times, a fifth evicts the oldest;
        // one over a quarter is never kept.
        let cache = StableCache::new(64);
        let tenth = MAX_CACHE_BYTES / 10;
        let big: Vec<Vec<u8>> = (0..5).map(|i| request_with_file(tenth, 10 + i)).collect();
        for bytes in &big {
            assert!(!remember(&cache, bytes));
        }
        assert_eq!(cache.len(), 4);
        assert!(!remember(&cache, &big[0]), "the oldest was evicted");
        let huge = request_with_file(MAX_CACHE_BYTES / 8 + 1, 99);
        assert!(!remember(&cache, &huge));
        assert!(!remember(&cache, &huge), "never kept");
    }

    #[test]
    fn parts_that_differ_between_samples_share_a_fingerprint_but_not_an_entry() {
        // A request of stable fields only: its stable part is all of it.
        let Some(whole) = split(&request_with_file(4096, 1)).map(|s| s.stable_bytes()) else {
            panic!("splits");
        };
        let run = "n".repeat(4096);
        let Some(file_at) = whole.windows(run.len()).position(|w| w == run.as_bytes()) else {
            panic!("the file is in the request");
        };
        // One byte of the file that no sample reads.
        let Some(at) = (file_at..file_at + run.len()).find(|i| {
            let from = i - SampledHasher::ENDS;
            from % SampledHasher::STRIDE >= SampledHasher::SAMPLE
        }) else {
            panic!("an unsampled byte");
        };
        let (a, mut b) = (whole.clone(), whole);
        b[at] = b'm';
        let (Some(sa), Some(sb)) = (split(&a), split(&b)) else {
            panic!("both split");
        };
        assert_eq!(sa.stable_fingerprint(), sb.stable_fingerprint());
        assert!(!sb.stable_equals(&sa.stable_bytes()));
        let cache = StableCache::new(4);
        assert!(!remember(&cache, &a));
        assert!(!remember(&cache, &b));
        assert!(remember(&cache, &a));
        assert!(remember(&cache, &b));
        assert_eq!(cache.len(), 2);
        let found = cache.find(sb.stable_fingerprint(), &sb);
        let file = found
            .as_ref()
            .and_then(|e| e.prepared.input().context_files.last());
        assert!(file.is_some_and(|f| f.content.contains('m')));
    }
}

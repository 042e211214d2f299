//! Block streaming for channel replies (R-12): turns a stream of assistant text deltas into
//! channel-ready blocks.
//!
//! - [`BlockChunker`] soft-chunks the text: it waits for `min_chars`, cuts at the best break
//!   inside `[min_chars, max_chars]`, never inside a fenced code block or a link unless forced,
//!   and closes/reopens a fence it is forced to split.
//! - [`Coalescer`] merges chunks that arrive close together (`blockStreamingCoalesce`).
//! - [`BlockTracker`] works out what of the final reply still needs delivering once blocks
//!   were streamed, so the final reply never repeats them.
//! - [`resolve_settings`] decides whether a channel streams blocks and with which bounds.
//! - [`DirectiveFilter`] and [`parse_directives`] read reply directives (P-18: `MEDIA:` lines,
//!   `[[reply_to_current]]`, `[[reply_to:<id>]]`, `[[audio_as_voice]]`) out of the text, in
//!   a stream or whole, with the same result, so no block ever carries part of one.
//!
//! It is a pure library: no async runtime, no clock (time is an input in milliseconds), no IO,
//! no errors (configurations are clamped into shape). It is not for sending, retrying or pacing
//! messages (human delay), nor for rendering Markdown for a channel; the runtime does that.
//!
//! ```
//! use openclaw_blocks::{
//!     BlockChunker, BlockStreamingInputs, BlockTracker, Coalescer, resolve_settings,
//! };
//!
//! let settings = resolve_settings(&BlockStreamingInputs {
//!     default_on: true,
//!     channel: "telegram",
//!     ..BlockStreamingInputs::default()
//! });
//! assert!(settings.enabled);
//! let chunking = settings.chunker.clone();
//! let mut chunker = BlockChunker::new(settings.chunker);
//! let mut coalescer =
//!     Coalescer::new(settings.coalesce, chunking.break_preference, chunking.text_limit);
//! let mut tracker = BlockTracker::new();
//!
//! let reply = "Hello there! ".repeat(300);
//! let mut sent = Vec::new();
//! for (i, delta) in [&reply[..1300], &reply[1300..]].into_iter().enumerate() {
//!     let now_ms = 250 * i as u64;
//!     for chunk in chunker.push(delta) {
//!         sent.extend(coalescer.push(&chunk, now_ms));
//!     }
//!     sent.extend(coalescer.poll(now_ms));
//! }
//! for chunk in chunker.finish() {
//!     sent.extend(coalescer.push(&chunk, 600));
//! }
//! sent.extend(coalescer.finish());
//! for block in &sent {
//!     // Record only what the channel confirmed.
//!     tracker.record_sent(0, block);
//! }
//! assert!(sent.iter().all(|b| b.chars().count() <= chunking.text_limit));
//! assert_eq!(tracker.unsent_tail(0, &reply), None);
//! ```
//!
//! # What the chunker guarantees
//!
//! Lengths are Unicode scalar values. After normalisation `1 <= min_chars <= max_chars <=
//! text_limit`. For the text of one stream (everything pushed before `finish`):
//!
//! 1. **Limit.** Every chunk, synthetic fence lines included, has at most `max_chars` chars;
//!    the one exception, [`CutKind::AfterLink`] (a link that starts the chunk, kept whole), has
//!    at most `text_limit`. No chunk is empty or whitespace only.
//! 2. **Nothing lost, nothing added.** Let `Dᵢ` be chunk `i` without its synthetic fence lines
//!    ([`Chunk::body`], exactly the source chars in [`Chunk::source`]). The input is
//!    `W₀ D₁ W₁ … Dₙ Wₙ` where every `Wᵢ` is whitespace: `W₀` the blank lines before the
//!    first text, `Wₙ` the trailing whitespace. After a fence split ([`Chunk::closes_fence`])
//!    `Wᵢ` is empty or the one newline of a code line boundary. Otherwise `Wᵢ` is the whole
//!    whitespace run at the cut, except the indentation of the line after its last newline,
//!    which the next chunk keeps (unless it alone fills a chunk); only a forced cut
//!    ([`CutKind::Hard`], [`CutKind::BeforeMarker`]) may fall inside a run, with `Wᵢ` empty.
//!    A synthetic reopen is the fence's opening line (just its indentation and marker when the
//!    line has `max_chars / 4` chars or more) plus `\n`; a synthetic close is `\n` plus the
//!    opening marker.
//! 3. **Minimum.** Every chunk except the last has at least `min_chars` chars, unless its kind
//!    is [`CutKind::BeforeFence`], [`CutKind::BeforeLink`] or [`CutKind::BeforeMarker`]: the
//!    only reasons to cut short are keeping a fence, a link or a fence line whole.
//! 4. **Balanced fences.** Every chunk, read on its own, leaves no fence open and reads each
//!    of its lines as the source did: no chunk starts with a marker run that was mid-line in
//!    the source, and no fence-like line is split. Guaranteed when every fence-like line (up to
//!    three spaces, then three or more backticks or tildes) is shorter than `max_chars / 4`;
//!    beyond that a fence that cannot be closed and reopened is cut like plain text, still
//!    within the limits.
//! 5. **Links.** A URL or Markdown link (see the `links` module for what counts) is never
//!    split if it fits one chunk together with the fence lines around it (its length plus any
//!    reopening and closing line at most `text_limit`); a longer one is split only where it
//!    starts a chunk. Same precondition as 4.
//! 6. **Flush.** `finish` emits everything left, closing a fence still open at the end.
//! 7. **Split independence.** The chunks depend on the text only, not on how it was cut into
//!    deltas: a cut is made only once no continuation could change it. So without
//!    `flush_on_paragraph` a chunk goes out once the text past its `max_chars` window has
//!    arrived (or at `finish`); with it, at the first paragraph break past `min_chars`.
//!
//! Per push the work is proportional to the delta, plus one pass over the (bounded) buffer
//! when a cut may be due; fences are tracked incrementally, so a long open fence costs nothing
//! extra.

mod breaks;
mod chunker;
mod coalesce;
mod config;
mod directives;
mod fence;
mod forced;
mod links;
mod settings;
mod tracker;

pub use chunker::{BlockChunker, Chunk, CutKind};
pub use coalesce::{CoalesceConfig, Coalescer, DEFAULT_IDLE_MS, MAX_IDLE_MS};
pub use config::{
    BreakPreference, ChunkerConfig, DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, DEFAULT_TEXT_LIMIT,
};
pub use directives::{AttachmentKind, Directive, DirectiveFilter, Parsed, parse_directives};
pub use settings::{
    BlockStreamingInputs, BlockStreamingSettings, BreakMode, ChunkOverrides, CoalesceOverrides,
    resolve_settings,
};
pub use tracker::BlockTracker;

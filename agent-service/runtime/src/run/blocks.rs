//! Block streaming of a run's assistant text.
//!
//! The channel's settings decide whether blocks are streamed at all; when
//! they are, text deltas go through the chunker (soft chunks at paragraph,
//! newline, sentence or whitespace breaks, fences and links kept whole) and
//! the coalescer (idle merging), and every block goes out as a
//! [`RunEvent::Block`]. With `text_end` blocks flow while the text streams
//! and each text block is flushed when it ends; with `message_end` the text
//! is held until the assistant message ends. The tail is always flushed at
//! the end of each message, and the final reply only carries what the
//! blocks did not.
//!
//! Before the chunker sees any text, reply directives are read out of it
//! (P-18, see [`super::reply`]): a block never carries a directive or part of
//! one, and each block carries the directives read since the one before. A
//! message that may still turn out to be the silent token is held back until
//! it says something else; if it is the token, nothing of it goes out.

use openclaw_blocks::{
    BlockChunker, BlockStreamingInputs, BlockStreamingSettings, BlockTracker, BreakMode,
    BreakPreference, ChunkOverrides, CoalesceOverrides, Coalescer, DirectiveFilter, Parsed,
    resolve_settings,
};
use openclaw_config::{
    Config,
    raw::{BlockStreamingBreak, BlockStreamingCoalesce, ChunkMode},
};
use tokio::time::Instant;

use super::{
    Emitter, RunEvent,
    reply::{DirectiveCheck, is_silent, may_be_silent},
};
use crate::events::ReplyDirectives;

/// The block streaming settings of a channel (`""` for none).
pub(crate) fn settings_for(config: &Config, channel: &str) -> BlockStreamingSettings {
    let agent = config.block_streaming();
    let entry = config
        .raw()
        .channels
        .as_ref()
        .and_then(|channels| channels.get(channel));
    let streaming = entry.and_then(|e| e.streaming.as_ref());
    let block = streaming.and_then(|s| s.block.as_ref());
    let channel_block_streaming = block
        .and_then(|b| b.enabled)
        .or_else(|| entry.and_then(|e| e.block_streaming));
    let size = |v: Option<u64>| v.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let coalesce_of = |c: Option<&BlockStreamingCoalesce>| CoalesceOverrides {
        min_chars: size(c.and_then(|c| c.min_chars)),
        max_chars: size(c.and_then(|c| c.max_chars)),
        idle_ms: c.and_then(|c| c.idle_ms),
    };
    resolve_settings(&BlockStreamingInputs {
        default_on: agent.enabled,
        channel,
        channel_block_streaming,
        break_mode: match agent.break_at {
            BlockStreamingBreak::TextEnd => BreakMode::TextEnd,
            BlockStreamingBreak::MessageEnd => BreakMode::MessageEnd,
        },
        chunk: ChunkOverrides {
            min_chars: size(Some(agent.chunk.min_chars)),
            max_chars: size(Some(agent.chunk.max_chars)),
            break_preference: Some(match agent.chunk.break_preference {
                openclaw_config::raw::BreakPreference::Paragraph => BreakPreference::Paragraph,
                openclaw_config::raw::BreakPreference::Newline => BreakPreference::Newline,
                openclaw_config::raw::BreakPreference::Sentence => BreakPreference::Sentence,
            }),
        },
        coalesce: CoalesceOverrides {
            min_chars: size(agent.coalesce.min_chars),
            max_chars: size(agent.coalesce.max_chars),
            // Only an explicit setting overrides the channel's default.
            idle_ms: config
                .raw()
                .agents
                .as_ref()
                .and_then(|a| a.defaults.as_ref())
                .and_then(|d| d.block_streaming_coalesce.as_ref())
                .and_then(|c| c.idle_ms),
        },
        channel_coalesce: coalesce_of(block.and_then(|b| b.coalesce.as_ref())),
        text_limit: size(entry.and_then(|e| e.text_chunk_limit)),
        newline_chunk_mode: streaming.and_then(|s| s.chunk_mode) == Some(ChunkMode::Newline),
    })
}

/// Turns one run's text deltas into block events.
pub(crate) struct BlockSink {
    settings: BlockStreamingSettings,
    chunker: BlockChunker,
    coalescer: Coalescer,
    tracker: BlockTracker,
    /// Text of the current message held back (`message_end`).
    held: String,
    /// 0-based assistant message number within the run.
    message: usize,
    /// Blocks sent.
    sent: u32,
    /// A text block is open in the current message.
    in_text: bool,
    /// Reads directives out of the current message.
    filter: DirectiveFilter,
    check: DirectiveCheck,
    /// Directives read but not sent with a block yet.
    pending: ReplyDirectives,
    /// The current message's text so far, while it may still be the silent token.
    maybe_silent: Option<String>,
    epoch: Instant,
    out: Emitter,
}

impl BlockSink {
    /// A sink for a run, or `None` when the channel does not stream blocks.
    pub(crate) fn new(
        settings: BlockStreamingSettings,
        check: DirectiveCheck,
        out: Emitter,
    ) -> Option<Self> {
        // A quiet run (a heartbeat) streams nothing: its reply goes out whole
        // in the final event, or not at all.
        if !settings.enabled || out.is_quiet() {
            return None;
        }
        let chunker = BlockChunker::new(settings.chunker.clone());
        let coalescer = Coalescer::new(
            settings.coalesce,
            settings.chunker.break_preference,
            settings.chunker.text_limit,
        );
        Some(Self {
            settings,
            chunker,
            coalescer,
            tracker: BlockTracker::new(),
            held: String::new(),
            message: 0,
            sent: 0,
            in_text: false,
            filter: DirectiveFilter::new(),
            check,
            pending: ReplyDirectives::default(),
            maybe_silent: Some(String::new()),
            epoch: Instant::now(),
            out,
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A text delta of the current message.
    pub(crate) fn text(&mut self, delta: &str) {
        self.in_text = true;
        let parsed = self.filter.push(delta);
        self.read(parsed);
    }

    /// Directives and text the filter released: the directives wait for the next block, the
    /// text goes on unless the message may still be the silent token.
    fn read(&mut self, parsed: Parsed) {
        let Parsed { text, directives } = parsed;
        self.pending.merge(self.check.resolve(directives));
        if let Some(held) = self.maybe_silent.as_mut() {
            held.push_str(&text);
            if may_be_silent(held) {
                return;
            }
            let held = self.maybe_silent.take().unwrap_or_default();
            self.forward(&held);
            return;
        }
        self.forward(&text);
    }

    /// Text on its way to the chunker (or held for `message_end`).
    fn forward(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.settings.break_mode {
            BreakMode::MessageEnd => self.held.push_str(text),
            BreakMode::TextEnd => {
                let chunks = self.chunker.push(text);
                self.coalesce(chunks);
            }
        }
    }

    /// The current text block ended (a tool call or thinking began).
    pub(crate) fn text_end(&mut self) {
        if !self.in_text {
            return;
        }
        self.in_text = false;
        if self.settings.break_mode == BreakMode::TextEnd {
            let chunks = self.chunker.finish();
            self.coalesce(chunks);
        }
    }

    /// The current assistant message ended (it is in the transcript): the
    /// tail goes out now, and the directives no block carried go out in a
    /// block of their own.
    pub(crate) fn message_end(&mut self) {
        let last = self.filter.finish();
        self.read(last);
        let silent = match self.maybe_silent.take() {
            Some(held) if is_silent(&held) => true,
            Some(held) => {
                self.forward(&held);
                false
            }
            None => false,
        };
        if silent {
            // The silent token delivers nothing, directives included.
            self.pending = ReplyDirectives::default();
        }
        self.in_text = true;
        self.text_end();
        if self.settings.break_mode == BreakMode::MessageEnd && !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            let mut chunks = self.chunker.push(&held);
            chunks.extend(self.chunker.finish());
            self.coalesce(chunks);
        }
        let rest = self.coalescer.finish();
        self.send(rest);
        if !self.pending.is_empty() {
            self.send(vec![String::new()]);
        }
        self.next_message();
    }

    /// The current message failed (it is not in the transcript): what it
    /// streamed but did not send is dropped.
    pub(crate) fn message_failed(&mut self) {
        self.held.clear();
        let _ = self.chunker.finish();
        let _ = self.coalescer.finish();
        let _ = self.filter.finish();
        self.pending = ReplyDirectives::default();
        self.in_text = false;
        self.next_message();
    }

    fn next_message(&mut self) {
        self.maybe_silent = Some(String::new());
        self.message += 1;
    }

    /// When the coalescer's idle timer fires next.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.coalescer
            .deadline_ms()
            .map(|ms| self.epoch + std::time::Duration::from_millis(ms))
    }

    /// Sends a block that has been idle long enough.
    pub(crate) fn poll(&mut self) {
        let now = self.now_ms();
        let blocks = self.coalescer.poll(now);
        self.send(blocks);
    }

    /// Blocks sent so far.
    pub(crate) fn sent(&self) -> u32 {
        self.sent
    }

    /// What of the last message's `final_text` the blocks did not carry.
    pub(crate) fn unsent_tail(&self, final_text: &str) -> String {
        let last = self.message.saturating_sub(1);
        self.tracker
            .unsent_tail(last, final_text)
            .unwrap_or_default()
    }

    fn coalesce(&mut self, chunks: Vec<String>) {
        let now = self.now_ms();
        for chunk in chunks {
            let blocks = self.coalescer.push(&chunk, now);
            self.send(blocks);
        }
    }

    fn send(&mut self, blocks: Vec<String>) {
        for text in blocks {
            self.tracker.record_sent(self.message, &text);
            self.out.emit(RunEvent::Block {
                index: self.sent,
                message: u32::try_from(self.message).unwrap_or(u32::MAX),
                text,
                directives: std::mem::take(&mut self.pending),
            });
            self.sent += 1;
        }
    }
}

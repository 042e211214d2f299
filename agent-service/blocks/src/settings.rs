//! Whether a channel streams blocks, and with which bounds.
//!
//! Inputs are plain values so the config crate and tests need nothing from here but this
//! function: `agents.defaults.blockStreaming*`, the channel's own settings, its text limit.

use crate::coalesce::{CoalesceConfig, DEFAULT_IDLE_MS, MAX_IDLE_MS};
use crate::config::{
    BreakPreference, ChunkerConfig, DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, DEFAULT_TEXT_LIMIT,
};

/// Where a block boundary may fall (`agents.defaults.blockStreamingBreak`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BreakMode {
    /// Flush at the end of each assistant text block.
    #[default]
    TextEnd,
    /// Flush at the end of each assistant message.
    MessageEnd,
}

/// Optional chunk bounds (`blockStreamingChunk`); `None` takes the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkOverrides {
    /// `minChars`.
    pub min_chars: Option<usize>,
    /// `maxChars`.
    pub max_chars: Option<usize>,
    /// `breakPreference`.
    pub break_preference: Option<BreakPreference>,
}

/// Optional coalescing bounds (`blockStreamingCoalesce`); `None` takes the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoalesceOverrides {
    /// `minChars`.
    pub min_chars: Option<usize>,
    /// `maxChars`.
    pub max_chars: Option<usize>,
    /// `idleMs`.
    pub idle_ms: Option<u64>,
}

/// Everything [`resolve_settings`] looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockStreamingInputs<'a> {
    /// `agents.defaults.blockStreamingDefault` is `"on"`.
    pub default_on: bool,
    /// Channel id (`telegram`, `discord`, ...); compared case-insensitively.
    pub channel: &'a str,
    /// `channels.<id>.blockStreaming` (or `streaming.block.enabled`), when set.
    pub channel_block_streaming: Option<bool>,
    /// `agents.defaults.blockStreamingBreak`.
    pub break_mode: BreakMode,
    /// `agents.defaults.blockStreamingChunk`.
    pub chunk: ChunkOverrides,
    /// `agents.defaults.blockStreamingCoalesce`.
    pub coalesce: CoalesceOverrides,
    /// `channels.<id>.streaming.block.coalesce`; wins over `coalesce` field by field.
    pub channel_coalesce: CoalesceOverrides,
    /// The channel's `textChunkLimit`; 4000 when unset.
    pub text_limit: Option<usize>,
    /// The channel's `chunkMode` is `newline`: flush on paragraph breaks.
    pub newline_chunk_mode: bool,
}

/// The resolved block streaming behaviour of one channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockStreamingSettings {
    /// Whether blocks are streamed at all.
    pub enabled: bool,
    /// Where block boundaries fall.
    pub break_mode: BreakMode,
    /// Chunker bounds, normalised.
    pub chunker: ChunkerConfig,
    /// Coalescer bounds, clamped to the channel limit.
    pub coalesce: CoalesceConfig,
}

/// Channels whose coalescer defaults differ: `{minChars: 1500, idleMs: 1000}`.
const CHANNEL_COALESCE_MIN: [(&str, usize); 3] =
    [("discord", 1500), ("signal", 1500), ("slack", 1500)];

/// Resolves R-12: off unless enabled; Telegram follows `blockStreamingDefault`, every other
/// channel needs an explicit `blockStreaming: true` (an explicit `false` turns Telegram off).
pub fn resolve_settings(inputs: &BlockStreamingInputs<'_>) -> BlockStreamingSettings {
    let channel = inputs.channel.trim().to_ascii_lowercase();
    let enabled = inputs
        .channel_block_streaming
        .unwrap_or(inputs.default_on && channel == "telegram");
    let text_limit = inputs.text_limit.unwrap_or(DEFAULT_TEXT_LIMIT).max(1);
    let chunker = ChunkerConfig {
        min_chars: inputs.chunk.min_chars.unwrap_or(DEFAULT_MIN_CHARS),
        max_chars: inputs.chunk.max_chars.unwrap_or(DEFAULT_MAX_CHARS),
        break_preference: inputs.chunk.break_preference.unwrap_or_default(),
        text_limit,
        flush_on_paragraph: inputs.newline_chunk_mode,
    }
    .normalized();
    let channel_min = CHANNEL_COALESCE_MIN
        .iter()
        .find(|(id, _)| *id == channel)
        .map(|&(_, min)| min);
    let (own, agent) = (inputs.channel_coalesce, inputs.coalesce);
    let max_chars = own
        .max_chars
        .or(agent.max_chars)
        .unwrap_or(text_limit)
        .clamp(1, text_limit);
    let coalesce = CoalesceConfig {
        min_chars: own
            .min_chars
            .or(agent.min_chars)
            .or(channel_min)
            .unwrap_or(chunker.min_chars)
            .clamp(1, max_chars),
        max_chars,
        idle_ms: own
            .idle_ms
            .or(agent.idle_ms)
            .unwrap_or(DEFAULT_IDLE_MS)
            .min(MAX_IDLE_MS),
    };
    BlockStreamingSettings {
        enabled,
        break_mode: inputs.break_mode,
        chunker,
        coalesce,
    }
}

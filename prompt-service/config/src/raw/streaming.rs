//! Block streaming: chunking, coalescing and human-like pauses (`agents.defaults.blockStreaming*`,
//! `agents.defaults.humanDelay`, channel overrides).

use schemars::JsonSchema;
use serde::Deserialize;

/// `agents.defaults.blockStreamingChunk`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BlockStreamingChunk {
    /// Buffer at least this many characters before cutting (default 800).
    pub min_chars: Option<u64>,
    /// Never send a chunk longer than this (default 1200).
    pub max_chars: Option<u64>,
    /// Preferred cut point (default paragraph).
    pub break_preference: Option<BreakPreference>,
}

/// Idle coalescing of streamed chunks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BlockStreamingCoalesce {
    /// Merge until at least this many characters.
    pub min_chars: Option<u64>,
    /// Never merge past this many characters.
    pub max_chars: Option<u64>,
    /// Flush after this much quiet, in milliseconds (default 1000).
    pub idle_ms: Option<u64>,
}

/// `agents.defaults.humanDelay`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HumanDelay {
    /// off, natural (800-2500 ms) or custom.
    pub mode: Option<HumanDelayMode>,
    /// Shortest pause for custom mode, in milliseconds.
    pub min_ms: Option<u64>,
    /// Longest pause for custom mode, in milliseconds.
    pub max_ms: Option<u64>,
}

choice! {
    /// `blockStreamingBreak`.
    BlockStreamingBreak {
        /// Send at the end of each text block.
        TextEnd = "text_end",
        /// Send at the end of the message.
        MessageEnd = "message_end",
    }
}

choice! {
    /// `blockStreamingChunk.breakPreference`.
    BreakPreference {
        /// Prefer blank lines.
        Paragraph = "paragraph",
        /// Prefer line ends.
        Newline = "newline",
        /// Prefer sentence ends.
        Sentence = "sentence",
    }
}

choice! {
    /// `humanDelay.mode`.
    HumanDelayMode {
        /// No pause.
        Off = "off",
        /// 800-2500 ms.
        Natural = "natural",
        /// minMs..maxMs.
        Custom = "custom",
    }
}

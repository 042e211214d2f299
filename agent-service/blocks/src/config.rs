//! Chunker configuration (`agents.defaults.blockStreamingChunk`) and its normalisation.

/// Default lower bound of a chunk, in chars.
pub const DEFAULT_MIN_CHARS: usize = 800;
/// Default upper bound of a chunk, in chars.
pub const DEFAULT_MAX_CHARS: usize = 1200;
/// Default channel text limit (`textChunkLimit`), in chars.
pub const DEFAULT_TEXT_LIMIT: usize = 4000;

/// Which kinds of break the chunker looks for, best first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BreakPreference {
    /// Paragraph break, then newline, then sentence end.
    #[default]
    Paragraph,
    /// Newline (a paragraph break counts as one), then sentence end.
    Newline,
    /// Sentence end only.
    Sentence,
}

impl BreakPreference {
    /// The joiner the coalescer puts between two chunks for this preference.
    pub fn joiner(self) -> &'static str {
        match self {
            Self::Paragraph => "\n\n",
            Self::Newline => "\n",
            Self::Sentence => " ",
        }
    }
}

/// Soft chunking bounds. All lengths are Unicode scalar values (`char`s).
///
/// Build it with struct syntax over [`Default`]; [`ChunkerConfig::normalized`] (applied by
/// [`crate::BlockChunker::new`]) clamps it into a usable shape instead of failing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkerConfig {
    /// A chunk is not cut before it holds this many chars (exceptions: see the crate docs).
    pub min_chars: usize,
    /// Preferred upper bound of a chunk, synthetic fence lines included.
    pub max_chars: usize,
    /// Which break kinds are eligible, best first.
    pub break_preference: BreakPreference,
    /// Hard channel limit; no chunk is ever longer. `max_chars` is clamped to it.
    pub text_limit: usize,
    /// Cut at the first paragraph break past `min_chars` as soon as it is seen, instead of
    /// waiting for the whole `[min_chars, max_chars]` window (channel `chunkMode: newline`).
    pub flush_on_paragraph: bool,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        Self {
            min_chars: DEFAULT_MIN_CHARS,
            max_chars: DEFAULT_MAX_CHARS,
            break_preference: BreakPreference::Paragraph,
            text_limit: DEFAULT_TEXT_LIMIT,
            flush_on_paragraph: false,
        }
    }
}

impl ChunkerConfig {
    /// Clamps the bounds: `1 <= min_chars <= max_chars <= text_limit`.
    pub fn normalized(self) -> Self {
        let text_limit = self.text_limit.max(1);
        let max_chars = self.max_chars.clamp(1, text_limit);
        let min_chars = self.min_chars.clamp(1, max_chars);
        Self {
            min_chars,
            max_chars,
            text_limit,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_clamps_in_order() {
        let cfg = ChunkerConfig {
            min_chars: 5000,
            max_chars: 9000,
            text_limit: 2000,
            ..ChunkerConfig::default()
        }
        .normalized();
        assert_eq!(
            (cfg.min_chars, cfg.max_chars, cfg.text_limit),
            (2000, 2000, 2000)
        );

        let cfg = ChunkerConfig {
            min_chars: 0,
            max_chars: 0,
            text_limit: 0,
            ..ChunkerConfig::default()
        }
        .normalized();
        assert_eq!((cfg.min_chars, cfg.max_chars, cfg.text_limit), (1, 1, 1));
    }
}

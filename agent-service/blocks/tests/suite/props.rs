//! Property tests: the chunker invariants of the crate docs, over random text (words,
//! sentences, paragraphs, lists, fenced blocks some unclosed or with trailing text on would-be
//! closing lines, URLs, Markdown links, stray marker runs) fed in random delta splits.

use openclaw_blocks::{
    BlockChunker, BlockTracker, Chunk, ChunkerConfig, CoalesceConfig, Coalescer, CutKind,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::support::{
    Sample, balanced, char_deltas, chunker_config, chunks, content, sample, split_deltas,
    wild_sample,
};

/// Cases per property; eight properties below.
const CASES: u32 = 512;

fn sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..80, 1..8)
}

fn feed(cfg: &ChunkerConfig, s: &Sample, sizes: &[usize]) -> Vec<Chunk> {
    chunks(cfg, split_deltas(&s.text, sizes).iter().map(String::as_str))
}

fn is_fence_line(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    line.len() - rest.len() <= 3 && (rest.starts_with("```") || rest.starts_with("~~~"))
}

/// (a) Input = W0 D1 W1 .. Dn Wn with whitespace gaps as the crate docs define them.
fn check_reconstruction(input: &str, out: &[Chunk]) -> Result<(), TestCaseError> {
    let chars: Vec<char> = input.chars().collect();
    let mut at = 0;
    let mut prev: Option<&Chunk> = None;
    for c in out {
        prop_assert!(
            at <= c.source.start && c.source.start < c.source.end,
            "{:?} after {:?}",
            c,
            prev
        );
        prop_assert!(c.source.end <= chars.len());
        let body: String = chars[c.source.clone()].iter().collect();
        prop_assert_eq!(c.body(), body.as_str());
        let gap: String = chars[at..c.source.start].iter().collect();
        prop_assert!(gap.chars().all(char::is_whitespace), "gap {:?}", gap);
        match prev {
            Some(p) if p.closes_fence() => {
                // A fence split: the code line boundary is the only thing in between.
                prop_assert!(gap.is_empty() || gap == "\n", "fence gap {:?}", gap);
                let reopen = &c.text[..c.reopen_len];
                let marker = &p.text[p.text.len() - p.close_len + 1..];
                prop_assert!(
                    reopen.ends_with('\n') && is_fence_line(reopen.trim_end_matches('\n'))
                );
                prop_assert!(reopen.trim_start_matches(' ').starts_with(marker));
                let ch = marker.chars().next();
                let run = reopen
                    .trim_start_matches(' ')
                    .chars()
                    .take_while(|&x| Some(x) == ch)
                    .count();
                prop_assert_eq!(run, marker.chars().count());
            }
            _ => {
                prop_assert_eq!(c.reopen_len, 0);
                if let Some(p) = prev.filter(|_| !gap.is_empty()) {
                    prop_assert!(!p.body().ends_with(char::is_whitespace));
                }
                // A chunk starts at content, or at the indentation of a real line start (so
                // the gap is the whole whitespace run, minus at most that indentation).
                let line_start = at == 0 && gap.is_empty() || gap.ends_with('\n');
                let indent = body.len() - body.trim_start_matches([' ', '\t']).len();
                let starts_at_content = !body.starts_with(char::is_whitespace);
                prop_assert!(
                    starts_at_content
                        || (line_start && !body[indent..].starts_with(char::is_whitespace))
                        || (gap.is_empty()
                            && prev.is_some_and(|p| {
                                matches!(p.kind, CutKind::Hard | CutKind::BeforeMarker)
                            })),
                    "chunk start {:?} after gap {:?}",
                    body.chars().take(12).collect::<String>(),
                    gap
                );
            }
        }
        if c.closes_fence() {
            let close = &c.text[c.text.len() - c.close_len..];
            prop_assert!(close.starts_with('\n') && is_fence_line(&close[1..]));
        }
        at = c.source.end;
        prev = Some(c);
    }
    let tail: String = chars[at..].iter().collect();
    prop_assert!(
        tail.chars().all(char::is_whitespace),
        "lost tail {:?}",
        tail
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// (a) + (f): nothing lost, nothing added; `finish` drains and resets.
    #[test]
    fn reconstructs_input_and_finish_flushes(cfg in chunker_config(), s in wild_sample(), sizes in sizes()) {
        let mut chunker = BlockChunker::new(cfg.clone());
        let mut out = Vec::new();
        for delta in split_deltas(&s.text, &sizes) {
            out.extend(chunker.push_chunks(&delta));
        }
        out.extend(chunker.finish_chunks());
        prop_assert_eq!(chunker.pending_chars(), 0);
        prop_assert!(chunker.finish_chunks().is_empty());
        check_reconstruction(&s.text, &out)?;
    }

    /// (b): every chunk fits `max_chars` (an `AfterLink` chunk fits `text_limit`); none is blank.
    #[test]
    fn chunks_respect_limits(cfg in chunker_config(), s in wild_sample(), sizes in sizes()) {
        for c in feed(&cfg, &s, &sizes) {
            let limit = if c.kind == CutKind::AfterLink { cfg.text_limit } else { cfg.max_chars };
            prop_assert!(c.char_len() <= limit, "{} > {}: {:?}", c.char_len(), limit, c);
            prop_assert!(!c.text.trim().is_empty(), "blank chunk {:?}", c);
        }
    }

    /// (c): only the last chunk, or one cut short to keep a fence, link or fence line whole,
    /// is shorter than `min_chars`; `End` only ends the stream.
    #[test]
    fn chunks_reach_min_chars(cfg in chunker_config(), s in wild_sample(), sizes in sizes()) {
        let out = feed(&cfg, &s, &sizes);
        for (i, c) in out.iter().enumerate() {
            let last = i + 1 == out.len();
            prop_assert!(last || c.kind != CutKind::End);
            let excused = matches!(c.kind, CutKind::BeforeFence | CutKind::BeforeLink | CutKind::BeforeMarker);
            prop_assert!(last || excused || c.char_len() >= cfg.min_chars, "{:?}", c);
        }
    }

    /// (d): every chunk has balanced fences when read on its own.
    #[test]
    fn chunks_have_balanced_fences(cfg in chunker_config(), s in sample(), sizes in sizes()) {
        for c in feed(&cfg, &s, &sizes) {
            prop_assert!(balanced(&c.text), "unbalanced: {:?}", c.text);
        }
    }

    /// (e): every URL and Markdown link that fits the channel limit lies inside one chunk.
    #[test]
    fn links_are_never_split(cfg in chunker_config(), s in sample(), sizes in sizes()) {
        let out = feed(&cfg, &s, &sizes);
        // Links that fit the channel limit with a reopen and a close line around them.
        for link in s.links.iter().filter(|l| l.len() + 24 <= cfg.text_limit) {
            prop_assert!(
                out.iter().any(|c| c.source.start <= link.start && link.end <= c.source.end),
                "split link at {:?}: {:?}", link,
                out.iter().filter(|c| c.source.end > link.start && c.source.start < link.end).collect::<Vec<_>>()
            );
        }
    }

    /// (g): all at once, char by char and random deltas give identical chunks.
    #[test]
    fn delta_split_does_not_matter(cfg in chunker_config(), s in wild_sample(), sizes in sizes()) {
        let whole = chunks(&cfg, [s.text.as_str()]);
        let by_char = chunks(&cfg, char_deltas(&s.text).iter().map(String::as_str));
        prop_assert_eq!(&whole, &by_char);
        prop_assert_eq!(&whole, &feed(&cfg, &s, &sizes));
    }

    /// Coalesced blocks stay within bounds and balanced, and keep every chunk's content.
    #[test]
    fn coalescer_keeps_bounds(
        cfg in chunker_config(),
        s in sample(),
        (min, max, idle) in (1usize..2000, 1usize..2000, 0u64..3000),
        gaps in prop::collection::vec(0u64..2500, 1..16),
    ) {
        let chunk_texts: Vec<String> = chunks(&cfg, [s.text.as_str()]).into_iter().map(|c| c.text).collect();
        let mut co = Coalescer::new(CoalesceConfig { min_chars: min, max_chars: max, idle_ms: idle }, cfg.break_preference, cfg.text_limit);
        let bound = co.config().max_chars;
        let (mut now, mut blocks) = (0u64, Vec::new());
        for (chunk, gap) in chunk_texts.iter().zip(gaps.iter().cycle()) {
            now += gap;
            blocks.extend(co.poll(now));
            blocks.extend(co.push(chunk, now));
        }
        blocks.extend(co.finish());
        for b in &blocks {
            let n = b.chars().count();
            prop_assert!(n <= cfg.text_limit);
            prop_assert!(n <= bound || chunk_texts.contains(b), "{} > {}", n, bound);
            prop_assert!(balanced(b));
        }
        prop_assert_eq!(content(&blocks.join("\n")), content(&chunk_texts.join("\n")));
    }

    /// The tracker: after streaming all blocks nothing is left; after streaming some, the tail
    /// holds exactly the rest of the content (no duplicate, nothing lost).
    #[test]
    fn tracker_never_repeats(cfg in chunker_config(), s in sample(), cut in 0usize..40) {
        let chunk_texts: Vec<String> = chunks(&cfg, [s.text.as_str()]).into_iter().map(|c| c.text).collect();
        let mut co = Coalescer::new(CoalesceConfig::default(), cfg.break_preference, cfg.text_limit);
        let mut blocks = Vec::new();
        for (i, chunk) in chunk_texts.iter().enumerate() {
            blocks.extend(co.push(chunk, 300 * i as u64));
        }
        blocks.extend(co.finish());
        let sent = cut.min(blocks.len());
        let mut tracker = BlockTracker::new();
        for b in &blocks[..sent] {
            tracker.record_sent(0, b);
        }
        let tail = tracker.unsent_tail(0, &s.text);
        let delivered = content(&blocks[..sent].join("\n")) + &content(tail.as_deref().unwrap_or(""));
        prop_assert_eq!(delivered, content(&s.text));
        if sent == blocks.len() {
            prop_assert_eq!(&tail, &None);
        }
        if let Some(t) = tail.filter(|_| balanced(&s.text)) {
            prop_assert!(balanced(&t), "unbalanced tail {:?}", t);
        }
    }
}

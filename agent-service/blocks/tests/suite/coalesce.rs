//! Coalescer: idle, min and max behaviour, joiners, the clock as an input.

use openclaw_blocks::{BreakPreference, CoalesceConfig, Coalescer};

use super::support::balanced;

fn coalescer(min: usize, max: usize, idle_ms: u64, pref: BreakPreference) -> Coalescer {
    Coalescer::new(
        CoalesceConfig {
            min_chars: min,
            max_chars: max,
            idle_ms,
        },
        pref,
        4000,
    )
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn defaults_follow_the_reference() {
    assert_eq!(
        CoalesceConfig::default(),
        CoalesceConfig {
            min_chars: 800,
            max_chars: 4000,
            idle_ms: 1000
        }
    );
}

#[test]
fn a_block_waits_for_idle_ms_then_poll_sends_it() {
    let mut co = coalescer(100, 200, 1000, BreakPreference::Paragraph);
    assert!(co.push("first", 0).is_empty());
    assert!(co.push("second", 400).is_empty());
    assert_eq!(co.deadline_ms(), Some(1400));
    assert!(co.poll(1399).is_empty());
    assert_eq!(co.poll(1400), owned(&["first\n\nsecond"]));
    assert_eq!(co.deadline_ms(), None);
    assert!(co.poll(5000).is_empty());
}

#[test]
fn reaching_min_chars_sends_at_once() {
    let mut co = coalescer(10, 200, 1000, BreakPreference::Paragraph);
    assert!(co.push("hello", 0).is_empty());
    assert_eq!(co.push("world", 1), owned(&["hello\n\nworld"]));
    assert!(co.is_empty());
}

#[test]
fn a_chunk_that_would_overflow_max_chars_sends_the_block_first() {
    let mut co = coalescer(100, 12, 1000, BreakPreference::Paragraph);
    assert!(co.push("aaaa bbbb", 0).is_empty());
    assert_eq!(co.push("cccc", 1), owned(&["aaaa bbbb"]));
    assert_eq!(co.finish(), owned(&["cccc"]));
}

#[test]
fn the_joiner_follows_the_break_preference() {
    for (pref, joined) in [
        (BreakPreference::Paragraph, "a.\n\nb."),
        (BreakPreference::Newline, "a.\nb."),
        (BreakPreference::Sentence, "a. b."),
    ] {
        let mut co = coalescer(100, 200, 1000, pref);
        assert!(co.push("a.", 0).is_empty());
        assert!(co.push("b.", 1).is_empty());
        assert_eq!(co.finish(), owned(&[joined]));
    }
}

#[test]
fn a_fence_line_is_never_joined_onto_text() {
    let mut co = coalescer(100, 200, 1000, BreakPreference::Sentence);
    assert!(co.push("```\nx\n```", 0).is_empty());
    assert!(co.push("After.", 1).is_empty());
    assert!(co.push("```sh\ny\n```", 2).is_empty());
    let out = co.finish();
    assert_eq!(out, owned(&["```\nx\n```\nAfter.\n```sh\ny\n```"]));
    assert!(balanced(&out[0]));
}

#[test]
fn a_push_after_an_idle_gap_sends_the_old_block_first() {
    let mut co = coalescer(100, 200, 1000, BreakPreference::Paragraph);
    assert!(co.push("old", 0).is_empty());
    assert_eq!(co.push("new", 1000), owned(&["old"]));
    assert_eq!(co.finish(), owned(&["new"]));
}

#[test]
fn idle_zero_never_merges() {
    let mut co = coalescer(100, 200, 0, BreakPreference::Paragraph);
    assert!(co.push("a", 7).is_empty());
    assert_eq!(co.push("b", 7), owned(&["a"]));
    assert_eq!(co.poll(7), owned(&["b"]));
}

#[test]
fn a_chunk_over_the_channel_limit_is_split_not_sent_oversized() {
    let mut co = Coalescer::new(CoalesceConfig::default(), BreakPreference::Paragraph, 20);
    let mut out = co.push("alpha beta gamma delta epsilon zeta eta theta", 0);
    out.extend(co.finish());
    assert!(out.len() > 1);
    assert!(out.iter().all(|b| b.chars().count() <= 20), "{out:?}");
    assert_eq!(
        out.join(" "),
        "alpha beta gamma delta epsilon zeta eta theta"
    );
}

#[test]
fn config_is_clamped_to_the_channel() {
    let co = Coalescer::new(
        CoalesceConfig {
            min_chars: 3000,
            max_chars: 9000,
            idle_ms: 9000,
        },
        BreakPreference::Paragraph,
        2000,
    );
    assert_eq!(
        co.config(),
        CoalesceConfig {
            min_chars: 2000,
            max_chars: 2000,
            idle_ms: 5000
        }
    );
}

//! Tracker: the final reply never repeats what was streamed.

use openclaw_blocks::{BlockChunker, BlockTracker, BreakPreference, CoalesceConfig, Coalescer};

use super::support::config;

#[test]
fn a_fully_streamed_reply_is_not_delivered_again() {
    let mut tracker = BlockTracker::new();
    tracker.record_sent(0, "First paragraph.");
    tracker.record_sent(0, "Second paragraph.");
    assert_eq!(tracker.sent_blocks(0), 2);
    assert_eq!(
        tracker.unsent_tail(0, "First paragraph.\n\nSecond paragraph.\n"),
        None
    );
}

#[test]
fn only_the_unsent_tail_is_delivered() {
    let mut tracker = BlockTracker::new();
    tracker.record_sent(0, "First paragraph.");
    assert_eq!(
        tracker.unsent_tail(0, "First paragraph.\n\n  Second paragraph.\n"),
        Some("  Second paragraph.".to_owned())
    );
}

#[test]
fn nothing_sent_means_the_whole_reply() {
    let tracker = BlockTracker::new();
    assert_eq!(tracker.sent_blocks(0), 0);
    assert_eq!(
        tracker.unsent_tail(0, "\n\nHello there.\n"),
        Some("Hello there.".to_owned())
    );
    assert_eq!(tracker.unsent_tail(0, " \n "), None);
}

#[test]
fn synthetic_fences_and_joiners_do_not_count_as_unsent() {
    let text = format!(
        "Intro line.\n\n```rust\n{}```\n\nOutro line.",
        "let value = compute(input);\n".repeat(30)
    );
    let mut chunker = BlockChunker::new(config(100, 200, 200, BreakPreference::Sentence));
    let mut coalescer = Coalescer::new(CoalesceConfig::default(), BreakPreference::Sentence, 500);
    let mut tracker = BlockTracker::new();
    let mut chunks = chunker.push(&text);
    chunks.extend(chunker.finish());
    assert!(chunks.len() > 4);
    let mut blocks: Vec<String> = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        blocks.extend(coalescer.push(chunk, 10 * i as u64));
    }
    blocks.extend(coalescer.finish());
    for block in &blocks {
        tracker.record_sent(0, block);
    }
    assert_eq!(tracker.unsent_tail(0, &text), None);
}

#[test]
fn a_tail_inside_a_code_block_gets_its_opening_line_back() {
    let mut tracker = BlockTracker::new();
    tracker.record_sent(0, "Run:\n```sh\nmake build\n```");
    assert_eq!(
        tracker.unsent_tail(0, "Run:\n```sh\nmake build\n  make test\n```\nDone."),
        Some("```sh\n  make test\n```\nDone.".to_owned())
    );
    // When only the closing line is left, the tail starts after it.
    assert_eq!(
        tracker.unsent_tail(0, "Run:\n```sh\nmake build\n```\n\nDone."),
        Some("Done.".to_owned())
    );
}

#[test]
fn each_assistant_message_is_tracked_on_its_own() {
    let mut tracker = BlockTracker::new();
    tracker.record_sent(0, "Alpha one.");
    tracker.record_sent(0, "Alpha two.");
    tracker.record_sent(1, "Beta one.");
    assert_eq!(tracker.unsent_tail(0, "Alpha one. Alpha two."), None);
    assert_eq!(
        tracker.unsent_tail(1, "Beta one. Beta two."),
        Some("Beta two.".to_owned())
    );
    assert_eq!(tracker.unsent_tail(2, "Gamma."), Some("Gamma.".to_owned()));
}

#[test]
fn a_final_text_that_differs_resumes_at_the_word_where_it_parts() {
    let mut tracker = BlockTracker::new();
    tracker.record_sent(0, "Hello wrld");
    assert_eq!(
        tracker.unsent_tail(0, "Hello world again"),
        Some("world again".to_owned())
    );
}

#[test]
fn a_final_text_shorter_than_what_was_streamed_needs_nothing() {
    let mut tracker = BlockTracker::new();
    tracker.record_sent(0, "One. Two. Three.");
    assert_eq!(tracker.unsent_tail(0, "One. Two."), None);
}

//! Chunker rules, one example each.

use openclaw_blocks::{BlockChunker, BreakPreference, ChunkerConfig, CutKind};

use super::support::{balanced, char_deltas, chunks, config, texts};

fn kinds(cfg: &ChunkerConfig, text: &str) -> Vec<(String, CutKind)> {
    chunks(cfg, [text])
        .into_iter()
        .map(|c| (c.text, c.kind))
        .collect()
}

#[test]
fn paragraph_preference_takes_the_last_paragraph_break_in_the_window() {
    let cfg = config(10, 40, 100, BreakPreference::Paragraph);
    let mut chunker = BlockChunker::new(cfg);
    let first = chunker.push("aaaa bbbb\n\ncccc dddd\n\neeee ffff gggg hhhh iiii jjjj");
    assert_eq!(first, vec!["aaaa bbbb\n\ncccc dddd".to_owned()]);
    assert_eq!(
        chunker.finish(),
        vec!["eeee ffff gggg hhhh iiii jjjj".to_owned()]
    );
}

#[test]
fn each_preference_ranks_break_kinds_its_own_way() {
    let text = "aaaa bbbb cccc\n\ndddd eeee\nffff gggg hhhh iiii jjjj kkkk";
    let first = |pref| kinds(&config(10, 40, 100, pref), text).remove(0);
    assert_eq!(
        first(BreakPreference::Paragraph),
        ("aaaa bbbb cccc".to_owned(), CutKind::Paragraph)
    );
    // A paragraph break is a newline too, so the later single newline wins.
    assert_eq!(
        first(BreakPreference::Newline),
        ("aaaa bbbb cccc\n\ndddd eeee".to_owned(), CutKind::Newline)
    );
    // No sentence end: the last whitespace in the window.
    assert_eq!(
        first(BreakPreference::Sentence),
        (
            "aaaa bbbb cccc\n\ndddd eeee\nffff gggg hhhh".to_owned(),
            CutKind::Whitespace
        )
    );
}

#[test]
fn sentence_preference_prefers_a_sentence_end_over_a_newline() {
    let text = "One two\nthree four. Five six seven eight nine ten";
    let first = |pref| kinds(&config(5, 30, 100, pref), text).remove(0);
    assert_eq!(
        first(BreakPreference::Paragraph),
        ("One two".to_owned(), CutKind::Newline)
    );
    assert_eq!(
        first(BreakPreference::Sentence),
        ("One two\nthree four.".to_owned(), CutKind::Sentence)
    );
}

#[test]
fn no_whitespace_means_a_hard_cut_at_max_chars() {
    let cfg = config(10, 30, 100, BreakPreference::Paragraph);
    let out = kinds(&cfg, &"x".repeat(100));
    let lens: Vec<(usize, CutKind)> = out.iter().map(|(t, k)| (t.len(), *k)).collect();
    assert_eq!(
        lens,
        vec![
            (30, CutKind::Hard),
            (30, CutKind::Hard),
            (30, CutKind::Hard),
            (10, CutKind::End)
        ]
    );
}

#[test]
fn nothing_is_cut_before_min_chars_or_before_the_window_is_seen() {
    let cfg = config(20, 40, 100, BreakPreference::Paragraph);
    let mut chunker = BlockChunker::new(cfg);
    // Paragraph breaks before min_chars are not candidates; 40 chars are not enough to decide.
    assert!(
        chunker
            .push("a.\n\nb.\n\nc.\n\nd.\n\n0123456789 0123456789 01")
            .is_empty()
    );
    let out = chunker.push_chunks("23456789 tail");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].text, "a.\n\nb.\n\nc.\n\nd.\n\n0123456789 0123456789");
    assert_eq!(out[0].kind, CutKind::Whitespace);
}

#[test]
fn blank_lines_are_dropped_at_cuts_and_indentation_is_kept() {
    let cfg = config(5, 20, 100, BreakPreference::Paragraph);
    let out = texts(
        &cfg,
        "\n\n  lead text\n\n\n  - item one two three\n  - item four five",
    );
    assert_eq!(
        out,
        vec![
            "  lead text".to_owned(),
            "  - item one two".to_owned(),
            // A newline in the window beats later spaces.
            "three".to_owned(),
            "  - item four five".to_owned(),
        ]
    );
}

#[test]
fn a_fence_that_fits_the_next_chunk_moves_there_whole() {
    let cfg = config(20, 40, 100, BreakPreference::Paragraph);
    let out = kinds(
        &cfg,
        "Intro text here.\n```rust\nlet a = 1;\nlet b = 2;\n```\nAfter the code, more text.",
    );
    assert_eq!(
        out[0],
        ("Intro text here.".to_owned(), CutKind::BeforeFence)
    );
    assert_eq!(
        out[1],
        (
            "```rust\nlet a = 1;\nlet b = 2;\n```".to_owned(),
            CutKind::Newline
        )
    );
    assert_eq!(out[2].0, "After the code, more text.");
}

#[test]
fn a_fence_longer_than_max_chars_is_closed_and_reopened() {
    let code: String = (0..20)
        .map(|i| format!("line {i:02} of the code\n"))
        .collect();
    let text = format!("```py\n{code}```\nDone.");
    let cfg = config(30, 60, 60, BreakPreference::Paragraph);
    let out = chunks(&cfg, [text.as_str()]);
    assert!(out.len() > 5);
    for (i, c) in out.iter().enumerate() {
        assert!(c.char_len() <= 60, "{c:?}");
        assert!(balanced(&c.text), "{c:?}");
        assert!(c.text.starts_with("```py\n"));
        if i > 0 {
            // The reopening line is the same opening line.
            assert_eq!(&c.text[..c.reopen_len], "```py\n");
        }
        if i + 2 < out.len() {
            assert!(c.closes_fence() && c.text.ends_with("\n```"), "{c:?}");
            assert_eq!(c.kind, CutKind::Newline);
        }
    }
    // Without the synthetic lines, the code comes back line by line.
    let bodies: Vec<&str> = out.iter().map(|c| c.body()).collect();
    assert_eq!(bodies.join("\n"), text);
}

#[test]
fn a_fence_line_with_trailing_text_does_not_close_the_fence() {
    let cfg = config(1, 100, 100, BreakPreference::Paragraph);
    let mut chunker = BlockChunker::new(cfg);
    assert!(chunker.push("```\ncode\n``` not a close\n").is_empty());
    let out = chunker.finish_chunks();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].text, "```\ncode\n``` not a close\n```");
    assert_eq!((out[0].kind, out[0].close_len), (CutKind::End, 4));
}

#[test]
fn a_fence_still_open_at_the_end_is_closed_by_finish() {
    let cfg = config(1, 100, 100, BreakPreference::Paragraph);
    let mut chunker = BlockChunker::new(cfg);
    assert!(chunker.push("Look:\n~~~~sh\nls -la").is_empty());
    assert_eq!(
        chunker.finish(),
        vec!["Look:\n~~~~sh\nls -la\n~~~~".to_owned()]
    );
}

#[test]
fn a_closing_fence_needs_the_same_char_and_at_least_the_same_length() {
    let cfg = config(1, 100, 100, BreakPreference::Paragraph);
    let out = texts(&cfg, "````\na\n```\n~~~~\nb\n````\ntail");
    assert_eq!(out, vec!["````\na\n```\n~~~~\nb\n````\ntail".to_owned()]);
    let out = texts(&cfg, "````\na\n```");
    assert_eq!(out, vec!["````\na\n```\n````".to_owned()]);
}

#[test]
fn a_url_at_the_boundary_moves_to_the_next_chunk() {
    let cfg = config(25, 40, 100, BreakPreference::Paragraph);
    let out = kinds(&cfg, "aaaaaaaaaaaaaaaaaaaa https://example.com/path/to/x");
    assert_eq!(
        out,
        vec![
            ("aaaaaaaaaaaaaaaaaaaa".to_owned(), CutKind::BeforeLink),
            ("https://example.com/path/to/x".to_owned(), CutKind::End),
        ]
    );
}

#[test]
fn a_markdown_link_label_is_not_split_at_its_spaces() {
    let cfg = config(25, 40, 100, BreakPreference::Paragraph);
    let out = kinds(
        &cfg,
        "xxxxxxxxxxxxxxxxxxxx [the docs page](https://e.com/d) tail",
    );
    assert_eq!(
        out,
        vec![
            ("xxxxxxxxxxxxxxxxxxxx".to_owned(), CutKind::BeforeLink),
            (
                "[the docs page](https://e.com/d) tail".to_owned(),
                CutKind::End
            ),
        ]
    );
}

#[test]
fn a_url_that_starts_a_chunk_stays_whole_up_to_the_text_limit() {
    let url = format!("https://example.com/{}", "p".repeat(50));
    let cfg = config(10, 30, 100, BreakPreference::Paragraph);
    let out = kinds(&cfg, &format!("{url} and then some words"));
    assert_eq!(out[0], (url.clone(), CutKind::AfterLink));
    // Beyond the text limit it cannot be sent whole, so it is split.
    let cfg = config(10, 30, 60, BreakPreference::Paragraph);
    let out = kinds(&cfg, &format!("{url} and then some words"));
    assert_eq!(out[0], (url[..30].to_owned(), CutKind::Hard));
}

#[test]
fn flush_on_paragraph_cuts_as_soon_as_a_paragraph_ends() {
    let eager = ChunkerConfig {
        flush_on_paragraph: true,
        ..config(5, 100, 100, BreakPreference::Paragraph)
    };
    let mut chunker = BlockChunker::new(eager);
    assert!(chunker.push("First paragraph.\n\n").is_empty());
    assert_eq!(chunker.push("S"), vec!["First paragraph.".to_owned()]);

    let mut lazy = BlockChunker::new(config(5, 100, 100, BreakPreference::Paragraph));
    assert!(lazy.push("First paragraph.\n\nS").is_empty());
    assert_eq!(lazy.finish(), vec!["First paragraph.\n\nS".to_owned()]);
}

#[test]
fn the_text_limit_counts_synthetic_fence_lines() {
    let text = format!("```rust\n{}```", "let value = compute();\n".repeat(12));
    let cfg = config(20, 40, 40, BreakPreference::Paragraph);
    for c in chunks(&cfg, [text.as_str()]) {
        assert!(c.char_len() <= 40, "{c:?}");
        assert!(balanced(&c.text), "{c:?}");
    }
}

#[test]
fn no_chunk_starts_with_a_marker_run_that_was_mid_line() {
    let cfg = config(5, 12, 100, BreakPreference::Paragraph);
    let out = kinds(&cfg, "aaaa bbbb ```cccc dddd eeee");
    assert_eq!(out[0], ("aaaa bbbb ``".to_owned(), CutKind::Hard));
    for (text, _) in &out {
        assert!(!text.trim_start_matches(' ').starts_with("```"), "{text:?}");
        assert!(balanced(text));
    }
}

#[test]
fn lengths_are_counted_in_chars() {
    let cfg = config(10, 20, 100, BreakPreference::Paragraph);
    let out = chunks(&cfg, ["日本語 🎉 ".repeat(20).as_str()]);
    let last = out.len() - 1;
    for (i, c) in out.iter().enumerate() {
        assert!(c.char_len() <= 20, "{c:?}");
        assert!(i == last || c.char_len() >= 10, "{c:?}");
    }
}

#[test]
fn the_delta_split_does_not_change_the_chunks() {
    let cfg = config(15, 50, 80, BreakPreference::Sentence);
    let text = "Short one. Another sentence follows here! And a link https://a.b/c?d=1 too.\n\n```sh\necho hi\n```\nDone?";
    let whole = chunks(&cfg, [text]);
    let by_char = chunks(&cfg, char_deltas(text).iter().map(String::as_str));
    assert_eq!(whole, by_char);
}

#[test]
fn blank_input_emits_nothing_and_finish_resets() {
    let cfg = config(5, 20, 100, BreakPreference::Paragraph);
    let mut chunker = BlockChunker::new(cfg);
    assert!(chunker.push("").is_empty());
    assert!(chunker.push("  \n\n \t").is_empty());
    assert!(chunker.finish().is_empty());
    assert!(chunker.push("hello").is_empty());
    let out = chunker.finish_chunks();
    assert_eq!(out[0].source, 0..5);
    assert_eq!(chunker.pending_chars(), 0);
}

#[test]
fn config_is_normalised() {
    let chunker = BlockChunker::new(ChunkerConfig {
        min_chars: 900,
        max_chars: 5000,
        ..ChunkerConfig::default()
    });
    assert_eq!(
        (chunker.config().min_chars, chunker.config().max_chars),
        (900, 4000)
    );
}

// Regressions found by the property tests.

#[test]
fn an_autolink_is_not_split_from_its_angle_bracket_whatever_the_deltas() {
    let cfg = config(25, 40, 100, BreakPreference::Paragraph);
    let text = format!("{}<https://e.com/abc> tail", "x".repeat(39));
    let whole = chunks(&cfg, [text.as_str()]);
    assert_eq!(
        whole,
        chunks(&cfg, char_deltas(&text).iter().map(String::as_str))
    );
    assert_eq!(
        (whole[0].text.as_str(), whole[0].kind),
        ("x".repeat(39).as_str(), CutKind::BeforeLink)
    );
    assert!(whole[1].text.starts_with("<https://e.com/abc>"));
}

#[test]
fn a_long_link_opening_a_code_block_gets_a_fresh_chunk_instead_of_a_split() {
    let url = format!("https://e.com/{}", "u".repeat(80));
    let text = format!("Intro words here.\n```\n{url}\nlet a = 1;\n```\nAfter.");
    // Intro, fence lines and link together would exceed the channel limit.
    let cfg = config(30, 60, 110, BreakPreference::Paragraph);
    let out = kinds(&cfg, &text);
    assert_eq!(
        out[0],
        ("Intro words here.".to_owned(), CutKind::BeforeFence)
    );
    assert_eq!(out[1], (format!("```\n{url}\n```"), CutKind::AfterLink));
    assert!(out.iter().all(|(t, _)| balanced(t)));
}

#[test]
fn a_fence_like_code_line_is_not_split_when_the_fence_can_move() {
    let text = format!(
        "Some prose before it.\n~~~rust\n~~~ note: a fence-like line of code\n{}~~~\n",
        "code line\n".repeat(10)
    );
    let cfg = config(30, 50, 100, BreakPreference::Paragraph);
    let out = kinds(&cfg, &text);
    assert_eq!(
        out[0],
        ("Some prose before it.".to_owned(), CutKind::BeforeFence)
    );
    assert!(
        out[1]
            .0
            .starts_with("~~~rust\n~~~ note: a fence-like line of code\n")
    );
    assert!(out.iter().all(|(t, _)| balanced(t)), "{out:?}");
}

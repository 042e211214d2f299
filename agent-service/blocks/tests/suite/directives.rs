//! Reply directives read in a stream: any chunking of a reply releases exactly what reading it
//! whole does, so a directive never straddles two blocks.

use openclaw_blocks::{Directive, DirectiveFilter, Parsed, parse_directives};
use proptest::prelude::*;

use super::support::split_deltas;

/// Pieces that make directives, near misses and fences likely.
const PIECES: &[&str] = &[
    "MEDIA:",
    "MEDIA: a.png",
    "MEDIA",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "[[",
    "]]",
    "[",
    "]",
    "reply_to_current",
    "reply_to:",
    "7",
    "audio_as_voice",
    "```",
    "~~~",
    "word",
    "é",
    "NO_REPLY",
    "media:",
    "`",
    "x.mp3",
];

fn reply() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

fn streamed(text: &str, sizes: &[usize]) -> Parsed {
    let mut filter = DirectiveFilter::new();
    let mut out = Parsed::default();
    for delta in split_deltas(text, sizes) {
        let part = filter.push(&delta);
        out.text.push_str(&part.text);
        out.directives.extend(part.directives);
    }
    let last = filter.finish();
    out.text.push_str(&last.text);
    out.directives.extend(last.directives);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn any_chunking_reads_like_the_whole(
        text in reply(),
        sizes in prop::collection::vec(1usize..12, 1..8),
    ) {
        prop_assert_eq!(streamed(&text, &sizes), parse_directives(&text));
    }

    #[test]
    fn text_without_brackets_or_media_lines_passes_unchanged(
        text in "[a-zA-Z0-9 .,!?\n]{0,200}",
        sizes in prop::collection::vec(1usize..12, 1..8),
    ) {
        prop_assume!(!text.lines().any(|l| l.trim_start().starts_with("MEDIA:")));
        prop_assert_eq!(streamed(&text, &sizes), Parsed { text: text.clone(), directives: vec![] });
    }
}

#[test]
fn one_char_at_a_time_never_releases_part_of_a_directive() {
    let text = "[[reply_to:m-1]] Here:\nMEDIA: out/a.png\n";
    let mut filter = DirectiveFilter::new();
    let mut released = String::new();
    for c in text.chars() {
        let part = filter.push(&c.to_string());
        released.push_str(&part.text);
        assert!(!released.contains('['), "{released:?}");
        assert!(!released.contains("MEDIA"), "{released:?}");
    }
    assert_eq!(released, "Here:\n");
    assert_eq!(
        parse_directives(text).directives,
        vec![
            Directive::ReplyTo("m-1".into()),
            Directive::Media("out/a.png".into())
        ]
    );
}

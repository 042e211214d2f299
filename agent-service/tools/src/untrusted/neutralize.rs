//! Finding and defusing text that imitates our fence markers, whatever its disguise.
//!
//! Detection runs on a *skeleton* of the text: every character folded to what it looks like
//! (fullwidth forms, Cyrillic and Greek look-alikes, mathematical and circled letters, small
//! capitals and the many angle brackets become ASCII; case is ignored) and invisible
//! characters dropped (zero-width spaces and joiners, bidirectional controls, soft hyphens,
//! variation selectors, tag characters, combining marks). Each skeleton character remembers
//! the bytes it came from, so a match is replaced in the original text, disguise and all,
//! and the rest of the text is left exactly as it was.
//!
//! A match is the keyword `untrusted` and `data` (or `content`, OpenClaw's spelling) joined
//! by up to three of `_ - . :` or spaces. Written as one token (`UNTRUSTED_DATA`, `untrusted-data`) it is always replaced;
//! written with spaces it is replaced only next to an angle bracket or after `END`, so the
//! ordinary phrase "untrusted data" in prose survives. The replacement covers the marker's
//! brackets, `END`/`/` prefix and attributes up to the closing brackets on the same line.

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

/// What a defused marker becomes. It contains no keyword, so neutralising is idempotent.
pub(crate) const REMOVED: &str = "[marker removed]";

const KEYWORD_HEAD: &str = "untrusted";
/// `data` is ours; `content` is OpenClaw's `EXTERNAL_UNTRUSTED_CONTENT`, defused too so that a
/// model trained on either cannot be shown a forged end of either.
const KEYWORD_TAILS: [&str; 2] = ["data", "content"];
/// How far past the keyword the marker's attributes may reach, in skeleton characters.
const ATTRIBUTE_REACH: usize = 200;
/// How far before the keyword its brackets and `END` may start.
const PREFIX_REACH: usize = 40;

/// One skeleton character and the byte range of the text it stands for.
#[derive(Clone, Copy)]
struct Folded {
    c: char,
    start: usize,
    end: usize,
}

/// `text` with every marker imitation replaced by [`REMOVED`]; borrowed when there is none.
pub fn neutralize(text: &str) -> Cow<'_, str> {
    if plainly_free(text) {
        return Cow::Borrowed(text);
    }
    defuse(text)
}

/// [`neutralize`] without the quick look: the skeleton built and searched.
fn defuse(text: &str) -> Cow<'_, str> {
    let skeleton = skeleton(text);
    let mut replaced = String::new();
    let mut copied = 0; // bytes of `text` already handled
    let mut next = 0; // skeleton index to search from
    while let Some((from, to)) = find_marker(&skeleton, next) {
        let start = skeleton[from].start;
        let end = skeleton[to - 1].end;
        replaced.push_str(&text[copied..start]);
        replaced.push_str(REMOVED);
        copied = end;
        next = to;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    replaced.push_str(&text[copied..]);
    Cow::Owned(replaced)
}

/// Whether `text` cannot hold a marker, told without building its skeleton: ASCII text whose
/// skeleton is the text itself lowercased, character for character (ASCII has no invisible
/// characters and no look-alikes to fold), so a marker needs the keyword's head in it,
/// whatever its case. Most tool output is such text; anything else takes the full check.
fn plainly_free(text: &str) -> bool {
    static HEAD: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build([KEYWORD_HEAD])
            .ok()
    });
    match HEAD.as_ref() {
        Some(head) => text.is_ascii() && !head.is_match(text),
        None => false,
    }
}

/// How many marker keywords `text` holds (used by tests: a fenced text has exactly two).
pub fn marker_count(text: &str) -> usize {
    let skeleton = skeleton(text);
    let mut count = 0;
    let mut next = 0;
    while let Some((_, to)) = find_marker(&skeleton, next) {
        count += 1;
        next = to;
    }
    count
}

/// The next marker imitation at or after skeleton index `from`, as a skeleton range.
fn find_marker(skeleton: &[Folded], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < skeleton.len() {
        if let Some(keyword_end) = keyword_at(skeleton, i) {
            let (start, end_prefix, angle_before) = prefix(skeleton, i, from);
            let (end, angle_after) = suffix(skeleton, keyword_end);
            let one_token = !skeleton[i..keyword_end].iter().any(|f| f.c == ' ');
            if one_token || angle_before || angle_after || end_prefix {
                return Some((start, end));
            }
            i = keyword_end;
        } else {
            i += 1;
        }
    }
    None
}

/// The end of the keyword starting at `i`, if one does.
fn keyword_at(skeleton: &[Folded], i: usize) -> Option<usize> {
    let mut at = matches(skeleton, i, KEYWORD_HEAD)?;
    let mut separators = 0;
    while skeleton
        .get(at)
        .is_some_and(|f| matches!(f.c, '_' | '-' | '.' | ':' | ' '))
    {
        separators += 1;
        at += 1;
    }
    if separators > 3 {
        return None;
    }
    KEYWORD_TAILS
        .iter()
        .find_map(|tail| matches(skeleton, at, tail))
}

fn matches(skeleton: &[Folded], at: usize, word: &str) -> Option<usize> {
    let mut i = at;
    for expected in word.chars() {
        if skeleton.get(i)?.c != expected {
            return None;
        }
        i += 1;
    }
    Some(i)
}

/// Extends a match backwards over brackets, `/`, separators and `END`; never before `floor`.
/// Returns the new start, whether `END` was seen, whether a bracket was.
fn prefix(skeleton: &[Folded], start: usize, floor: usize) -> (usize, bool, bool) {
    let limit = start.saturating_sub(PREFIX_REACH).max(floor);
    let (mut at, mut end_word, mut angle) = (start, false, false);
    while at > limit {
        let c = skeleton[at - 1].c;
        if matches!(c, '<' | '/' | '_' | '-' | ' ') {
            angle |= c == '<';
            at -= 1;
        } else if at >= limit + 3 && matches(skeleton, at - 3, "end") == Some(at) {
            end_word = true;
            at -= 3;
        } else {
            break;
        }
    }
    (at, end_word, angle)
}

/// Extends a match forwards over attributes to the closing brackets on the same line.
/// Returns the new end and whether a bracket closed it.
///
/// The attributes end at a line break, an opening bracket, the next keyword or a
/// [`REMOVED`] text: whatever a later replacement removes or writes lies beyond one of these,
/// so a text once neutralised stays neutral (neutralising is idempotent).
fn suffix(skeleton: &[Folded], end: usize) -> (usize, bool) {
    let limit = (end + ATTRIBUTE_REACH).min(skeleton.len());
    let mut at = end;
    while at < limit
        && !matches!(skeleton[at].c, '>' | '\n' | '<')
        && keyword_at(skeleton, at).is_none()
        && matches(skeleton, at, REMOVED).is_none()
    {
        at += 1;
    }
    if at >= limit || skeleton[at].c != '>' {
        // No closing bracket: only the brackets right after the keyword, if any.
        return (end, false);
    }
    while skeleton.get(at).is_some_and(|f| f.c == '>') {
        at += 1;
    }
    (at, true)
}

fn skeleton(text: &str) -> Vec<Folded> {
    text.char_indices()
        .filter_map(|(start, c)| {
            fold(c).map(|folded| Folded {
                c: folded,
                start,
                end: start + c.len_utf8(),
            })
        })
        .collect()
}

/// What a character looks like, lowercased ASCII where it imitates ASCII; `None` for
/// characters that show nothing.
fn fold(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(if c.is_ascii_whitespace() {
            if c == '\n' { '\n' } else { ' ' }
        } else {
            c.to_ascii_lowercase()
        });
    }
    if invisible(c) {
        return None;
    }
    let code = u32::from(c);
    let folded = match code {
        // Fullwidth ASCII.
        0xFF01..=0xFF5E => char::from_u32(code - 0xFEE0),
        // Mathematical alphanumeric letters: 52-letter runs A-Z a-z.
        0x1D400..=0x1D6A3 => letter((code - 0x1D400) % 52),
        // Circled and parenthesised letters.
        0x24B6..=0x24CF => letter(code - 0x24B6),
        0x24D0..=0x24E9 => letter(code - 0x24D0),
        0x249C..=0x24B5 => letter(code - 0x249C),
        // Regional indicators (the flag letters).
        0x1F1E6..=0x1F1FF => letter(code - 0x1F1E6),
        _ => look_alike(c),
    };
    Some(match folded {
        Some(f) => f.to_ascii_lowercase(),
        None if c.is_whitespace() => ' ',
        None => c.to_lowercase().next().unwrap_or(c),
    })
}

fn letter(index: u32) -> Option<char> {
    let index = index % 26;
    char::from_u32(u32::from('a') + index)
}

/// Characters that render as nothing (or next to nothing) but split a keyword.
fn invisible(c: char) -> bool {
    matches!(u32::from(c),
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF9..=0xFFFB | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF
        // Combining marks: a keyword with accents is still the keyword to a reader.
        | 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF
        | 0xFE20..=0xFE2F)
}

/// Brackets, dashes, underscores and letters from other scripts that pass for ASCII.
fn look_alike(c: char) -> Option<char> {
    Some(match c {
        '\u{2039}' | '\u{3008}' | '\u{27E8}' | '\u{2329}' | '\u{276E}' | '\u{2770}'
        | '\u{02C2}' | '\u{1438}' | '\u{FE64}' | '\u{227A}' | '\u{29FC}' | '\u{2991}'
        | '\u{2993}' | '\u{2995}' | '\u{FE3F}' | '\u{00AB}' | '\u{226A}' | '\u{22D8}'
        | '\u{300A}' | '\u{27EA}' | '\u{2264}' => '<',
        '\u{203A}' | '\u{3009}' | '\u{27E9}' | '\u{232A}' | '\u{276F}' | '\u{2771}'
        | '\u{02C3}' | '\u{1433}' | '\u{FE65}' | '\u{227B}' | '\u{29FD}' | '\u{2992}'
        | '\u{2994}' | '\u{2996}' | '\u{FE40}' | '\u{00BB}' | '\u{226B}' | '\u{22D9}'
        | '\u{300B}' | '\u{27EB}' | '\u{2265}' => '>',
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE63}' | '\u{2043}' => '-',
        '\u{2017}' | '\u{02CD}' | '\u{FE4D}'..='\u{FE4F}' => '_',
        '\u{2215}' | '\u{2044}' | '\u{29F8}' => '/',
        // Cyrillic.
        'А' | 'а' => 'a',
        'В' | 'в' | 'Ь' | 'ь' => 'b',
        'С' | 'с' | 'Ϲ' | 'ϲ' => 'c',
        'Ԁ' | 'ԁ' => 'd',
        'Е' | 'е' | 'Ё' | 'ё' | 'Є' | 'є' => 'e',
        'Н' | 'н' | 'һ' | 'Һ' => 'h',
        'І' | 'і' | 'Ї' | 'ї' | 'Ӏ' | 'ӏ' => 'i',
        'Ј' | 'ј' => 'j',
        'К' | 'к' => 'k',
        'М' | 'м' => 'm',
        'О' | 'о' => 'o',
        'Р' | 'р' => 'p',
        'Ѕ' | 'ѕ' => 's',
        'Т' | 'т' => 't',
        'Ц' | 'ц' | 'Џ' | 'џ' => 'u',
        'Х' | 'х' => 'x',
        'У' | 'у' | 'Ү' | 'ү' => 'y',
        'Ѵ' | 'ѵ' => 'v',
        'Ԝ' | 'ԝ' => 'w',
        'Ԛ' | 'ԛ' => 'q',
        'Г' | 'г' => 'r',
        'П' | 'п' => 'n',
        // Greek.
        'Α' | 'α' | 'ά' => 'a',
        'Β' | 'β' => 'b',
        'Δ' | 'δ' => 'd',
        'Ε' | 'ε' | 'έ' => 'e',
        'Ζ' => 'z',
        'Η' => 'h',
        'η' => 'n',
        'Ι' | 'ι' | 'ί' => 'i',
        'Κ' | 'κ' => 'k',
        'Μ' => 'm',
        'Ν' | 'ν' => 'v',
        'Ο' | 'ο' | 'ό' => 'o',
        'Ρ' | 'ρ' => 'p',
        'Τ' | 'τ' => 't',
        'Υ' | 'υ' | 'ύ' => 'u',
        'Χ' | 'χ' => 'x',
        // Latin small capitals and other letter-like forms.
        'ᴀ' | 'ɑ' => 'a',
        'ʙ' => 'b',
        'ᴄ' => 'c',
        'ᴅ' | 'ⅾ' => 'd',
        'ᴇ' | 'ℯ' => 'e',
        'ɪ' | 'ı' | 'ⅰ' => 'i',
        'ɴ' => 'n',
        'ᴏ' => 'o',
        'ʀ' => 'r',
        'ꜱ' => 's',
        'ᴛ' => 't',
        'ᴜ' | 'ʊ' => 'u',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{defuse, neutralize, plainly_free};

    #[test]
    fn the_quick_look_passes_only_ascii_without_the_keyword() {
        for free in [
            "",
            "ls -la\n",
            "data content trusted",
            "untruste d",
            "<data>",
        ] {
            assert!(plainly_free(free), "{free:?}");
        }
        for held in [
            "untrusted",
            "UNTRUSTED_DATA",
            "x <UnTrUsTeD data> y",
            "END untrusted-content",
            "untrustedness",
            // Not ASCII: a look-alike or an invisible character can build the keyword.
            "\u{0443}ntrusted data",
            "un\u{200b}trusted_data",
            "caf\u{e9}",
        ] {
            assert!(!plainly_free(held), "{held:?}");
        }
    }

    proptest! {
        /// Skipping the skeleton changes nothing: on any text built from keyword pieces in
        /// mixed case, brackets and separators, the result is the full check's.
        #[test]
        fn the_quick_look_agrees_with_the_full_check(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("untrusted"), Just("UNTRUSTED"), Just("UnTrusted"), Just("untruste"),
                    Just("data"), Just("DATA"), Just("content"), Just("_"), Just("-"),
                    Just(" "), Just("<"), Just(">"), Just("END"), Just("/"), Just("\n"),
                    Just("x"), Just("\u{0430}"), Just("\u{200b}"),
                ],
                0..12,
            )
        ) {
            let text = pieces.concat();
            prop_assert_eq!(neutralize(&text), defuse(&text));
        }
    }
}

//! Text normalisation and measurement shared by every section.
//!
//! Lengths are counted in Unicode scalar values (`char`s) everywhere: in the
//! truncation cut, in the budgets and in every report (lesson L4).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use crate::boundary::{MARKER_PREFIX, strip_markers};

/// Number of Unicode scalar values in `s`.
pub fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `chars` as a `u32` for reports (saturating; prompts are far below 4G chars).
pub fn chars_u32(s: &str) -> u32 {
    u32::try_from(chars(s)).unwrap_or(u32::MAX)
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    sha256_hex_of_digest(&Sha256::digest(bytes))
}

/// Lowercase hex of a digest.
pub(crate) fn sha256_hex_of_digest(digest: &[u8]) -> String {
    // A table lookup rather than `hex::encode`'s char iterator: every
    // section of every turn is hashed, and the iterator was a third of it.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * digest.len());
    for &b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Normalises caller-supplied free text before it enters the prompt:
/// CRLF/CR become LF, trailing spaces and tabs are stripped from each line,
/// embedded cache-boundary markers are removed (so no input can move the
/// boundary), and the result is trimmed.
pub fn normalize_block(s: &str) -> String {
    let unified = if s.contains('\r') {
        Cow::Owned(s.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(s)
    };
    let without_markers = strip_markers(&unified);
    // Trimming first gives the same result as trimming last: the per-line
    // cut below only removes whitespace, and never at the two ends of an
    // already-trimmed text. It leaves one buffer to allocate.
    let trimmed = without_markers.trim();
    let mut out = String::with_capacity(trimmed.len());
    for (i, line) in trimmed.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.trim_end_matches([' ', '\t']));
    }
    out
}

/// Normalises a single-line value: control characters (newlines included)
/// become spaces and the result is trimmed, so a value can never start a new
/// heading or line of its own.
pub fn one_line(s: &str) -> String {
    one_line_cow(s).into_owned()
}

/// [`one_line`], borrowing from `s` when only trimming is needed.
pub(crate) fn one_line_cow(s: &str) -> Cow<'_, str> {
    // Without control characters the cleaned text is `s` itself, so `s` is
    // what the marker check must look at.
    if !s.contains(char::is_control) && !s.contains(MARKER_PREFIX) {
        return Cow::Borrowed(s.trim());
    }
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Cow::Owned(strip_markers(&cleaned).trim().to_owned())
}

/// Escapes the five XML special characters.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// The first `n` chars of `s`.
pub fn take_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((idx, _)) => &s[..idx],
        None => s,
    }
}

/// The last `n` chars of `s`.
pub fn last_chars(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match s.char_indices().rev().nth(n - 1) {
        Some((idx, _)) => &s[idx..],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_unifies_newlines_and_trims_line_ends() {
        assert_eq!(normalize_block("  a  \r\nb\t\rc \n\n"), "a\nb\nc");
    }

    #[test]
    fn one_line_flattens_newlines() {
        assert_eq!(one_line("a\nb\r\n## c"), "a b  ## c");
    }

    #[test]
    fn char_slicing_respects_scalar_values() {
        let s = "héllo wörld";
        assert_eq!(take_chars(s, 2), "hé");
        assert_eq!(last_chars(s, 3), "rld");
        assert_eq!(last_chars(s, 0), "");
        assert_eq!(last_chars(s, 100), s);
        assert_eq!(take_chars(s, 100), s);
    }

    #[test]
    fn sha256_hex_is_lowercase_hex_of_the_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha256_hex(b"abc"), hex::encode(Sha256::digest(b"abc")));
    }

    #[test]
    fn xml_escape_covers_all_five() {
        assert_eq!(xml_escape(r#"<a&'b">"#), "&lt;a&amp;&apos;b&quot;&gt;");
    }
}

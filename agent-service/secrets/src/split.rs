//! Long secrets split by whitespace: the text is searched with its whitespace removed, and a
//! match is replaced over the whole span it covers in the original text.

use aho_corasick::{AhoCorasick, MatchKind};

use crate::SPLIT_SECRET_MIN_CHARS;

/// The long values (with no whitespace of their own) and their replacements.
#[derive(Default)]
pub(crate) struct SplitMatcher {
    automaton: Option<AhoCorasick>,
    replacements: Vec<String>,
}

impl SplitMatcher {
    /// The values of `values` long enough to be searched split (`replacements` in step).
    pub(crate) fn new(values: &[String], replacements: &[String]) -> Self {
        let (long, replacements): (Vec<&String>, Vec<String>) = values
            .iter()
            .zip(replacements)
            .filter(|(v, _)| {
                v.chars().count() >= SPLIT_SECRET_MIN_CHARS && !v.chars().any(char::is_whitespace)
            })
            .map(|(v, r)| (v, r.clone()))
            .unzip();
        let automaton = if long.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&long)
                .ok()
        };
        Self {
            automaton,
            replacements,
        }
    }

    /// `text` with each split occurrence replaced; None when there is none.
    pub(crate) fn redact(&self, text: &str) -> Option<String> {
        let automaton = self.automaton.as_ref()?;
        if !text.chars().any(char::is_whitespace) {
            return None;
        }
        // The text without whitespace, and where each of its bytes sits in `text`.
        let mut squeezed = String::with_capacity(text.len());
        let mut origin: Vec<usize> = Vec::with_capacity(text.len());
        for (at, c) in text.char_indices() {
            if !c.is_whitespace() {
                squeezed.push(c);
                origin.extend(std::iter::repeat_n(at, c.len_utf8()));
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut any = false;
        for found in automaton.find_iter(&squeezed) {
            let start = origin[found.start()];
            let last = origin[found.end() - 1];
            let end = last + text[last..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[copied..start]);
            out.push_str(&self.replacements[found.pattern().as_usize()]);
            copied = end;
            any = true;
        }
        if !any {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(out)
    }

    /// Whether `bytes` hold a long value with ASCII whitespace between its parts.
    pub(crate) fn contains(&self, bytes: &[u8]) -> bool {
        let Some(automaton) = &self.automaton else {
            return false;
        };
        if !bytes.iter().any(u8::is_ascii_whitespace) {
            return false;
        }
        let squeezed: Vec<u8> = bytes
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        automaton.is_match(&squeezed)
    }
}

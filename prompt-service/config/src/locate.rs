//! Maps JSON paths back to line and column in the original JSON5 text.
//!
//! The `json5` decoder that produces our values keeps no positions, so on the error path only we
//! re-parse the text with `jsonc-parser` (which accepts the full JSON5 grammar and records byte
//! ranges) and walk its syntax tree. Valid configs never pay for this second parse.

use std::borrow::Cow;

use jsonc_parser::ast::{ObjectPropName, Value as Ast};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

use crate::error::Position;
use crate::path::Segment;

/// Which end of a path to point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The value stored at the path.
    Value,
    /// The key naming the last segment (used for unknown keys).
    Key,
}

/// Converts a byte offset in `text` into a 1-based position, with the same line and column rules
/// as the `json5` decoder's syntax errors (characters, CRLF counts once, JSON5 line terminators).
pub(crate) fn position_at(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let zero_based = json5::Position::from_offset(offset, text);
    Position {
        line: zero_based.line + 1,
        column: zero_based.column + 1,
    }
}

/// `text` with every comment and every whitespace character other than space, tab, LF and CR
/// replaced by spaces, byte for byte, so that offsets into the result are offsets into `text`.
/// jsonc-parser refuses some of what JSON5 allows there (a comment between a key and its colon,
/// `{a/* c */: 1}`; a byte order mark or a no-break space between tokens); without them it
/// parses what `json5` parsed. Strings (single or double quoted, with escapes) are left alone.
/// Borrowed when nothing needs replacing.
pub(crate) fn blank_comments(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut blanked: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    // An escape covers the next byte (a quote, a backslash, or the first byte
                    // of a line continuation); the bytes of a multi-byte character are never
                    // quotes or backslashes.
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if matches!(bytes.get(i + 1), Some(b'/' | b'*')) => {
                let end = if bytes[i + 1] == b'/' {
                    // To the line end (\n, \r, U+2028 or U+2029), which stays.
                    text[i..]
                        .find(['\n', '\r', '\u{2028}', '\u{2029}'])
                        .map_or(bytes.len(), |n| i + n)
                } else {
                    text[i + 2..]
                        .find("*/")
                        .map_or(bytes.len(), |n| i + 2 + n + 2)
                };
                let out = blanked.get_or_insert_with(|| bytes.to_vec());
                out[i..end].fill(b' ');
                i = end;
            }
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                // Other JSON5 whitespace (vertical tab, form feed, no-break and other Unicode
                // spaces, U+2028/U+2029, the byte order mark) becomes plain spaces too.
                let c = text[i..].chars().next().unwrap_or(' ');
                let len = c.len_utf8();
                if c == '\u{feff}' || c.is_whitespace() {
                    blanked.get_or_insert_with(|| bytes.to_vec())[i..i + len].fill(b' ');
                }
                i += len;
            }
        }
    }
    match blanked.map(String::from_utf8) {
        // Whole comments were replaced, so the bytes stay UTF-8.
        Some(Ok(blanked)) => Cow::Owned(blanked),
        Some(Err(_)) | None => Cow::Borrowed(text),
    }
}

/// A parsed syntax tree of one config text, ready to answer position queries.
pub(crate) struct Locator<'a> {
    text: &'a str,
    root: Option<Ast<'a>>,
}

impl<'a> Locator<'a> {
    /// Parses `blanked` (the text after [`blank_comments`]) and reports positions in `text`;
    /// when even this parser fails (it should not after `json5` accepted the text) every query
    /// answers `None` instead of failing the whole report.
    pub(crate) fn new(text: &'a str, blanked: &'a str) -> Self {
        let options = ParseOptions {
            // Match json5's grammar: commas are required there.
            allow_missing_commas: false,
            ..ParseOptions::default()
        };
        let root = jsonc_parser::parse_to_ast(blanked, &CollectOptions::default(), &options)
            .ok()
            .and_then(|parsed| parsed.value);
        Self { text, root }
    }

    /// Where the value (or key) at `path` starts. For a path that runs past the tree (a missing
    /// required key, say) the deepest existing node is used.
    pub(crate) fn locate(&self, path: &[Segment], target: Target) -> Option<Position> {
        let Some(mut node) = self.root.as_ref() else {
            return Some(self.search(path));
        };
        let mut key_offset = None;
        for segment in path {
            let next = match (node, segment) {
                (Ast::Object(object), Segment::Key(key)) => object
                    .properties
                    .iter()
                    // JSON5 lets a key repeat; the decoder keeps the last one, so do we.
                    .rfind(|prop| prop_name(&prop.name) == key.as_str())
                    .map(|prop| (&prop.value, Some(prop.name.start()))),
                (Ast::Array(array), Segment::Index(i)) => array.elements.get(*i).map(|v| (v, None)),
                _ => None,
            };
            match next {
                Some((value, key_start)) => {
                    node = value;
                    key_offset = key_start;
                }
                None => return Some(position_at(self.text, node.start())),
            }
        }
        let offset = match target {
            Target::Key => key_offset.unwrap_or_else(|| node.start()),
            Target::Value => node.start(),
        };
        Some(position_at(self.text, offset))
    }
}

impl Locator<'_> {
    /// Where `path` is when this parser cannot read the text (JSON5 allows identifier
    /// characters, such as combining marks, that it refuses): each key of the path is searched
    /// in order after the previous one; the position of the last one found, else the start.
    fn search(&self, path: &[Segment]) -> Position {
        let mut offset = 0;
        let mut found = 0;
        for segment in path {
            if let Segment::Key(key) = segment
                && !key.is_empty()
                && let Some(at) = self
                    .text
                    .get(offset..)
                    .and_then(|rest| rest.find(key.as_str()))
            {
                found = offset + at;
                offset = found + key.len();
            }
        }
        position_at(self.text, found)
    }
}

fn prop_name<'b>(name: &'b ObjectPropName<'_>) -> &'b str {
    match name {
        ObjectPropName::String(lit) => lit.value.as_ref(),
        ObjectPropName::Word(lit) => lit.value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Segment {
        Segment::Key(k.to_owned())
    }

    fn pos(line: usize, column: usize) -> Option<Position> {
        Some(Position { line, column })
    }

    /// Where the value of the top-level key `name` of `text` is located.
    fn value_of(text: &str, name: &str) -> Option<Position> {
        let blanked = blank_comments(text);
        Locator::new(text, &blanked).locate(&[key(name)], Target::Value)
    }

    #[test]
    fn keys_the_parser_refuses_are_still_located_by_search() {
        // U+1CD0 is a combining mark: a valid JSON5 identifier character the locator's parser
        // refuses, so the whole text falls back to a search.
        let text = "{\n  skills: { a\u{1cd0}llowBundled: [] },\n}\n";
        let blanked = blank_comments(text);
        let locator = Locator::new(text, &blanked);
        let at = locator.locate(&[key("skills"), key("a\u{1cd0}llowBundled")], Target::Key);
        assert_eq!(at, pos(2, 13));
        assert_eq!(locator.locate(&[key("nowhere")], Target::Value), pos(1, 1));
    }

    #[test]
    fn finds_values_keys_and_elements() {
        let text = "{\n  // note\n  a: { 'b-c': [1, \"two\"], },\n}\n";
        let blanked = blank_comments(text);
        let locator = Locator::new(text, &blanked);
        assert_eq!(locator.locate(&[key("a")], Target::Value), pos(3, 6));
        assert_eq!(locator.locate(&[key("a")], Target::Key), pos(3, 3));
        assert_eq!(
            locator.locate(&[key("a"), key("b-c")], Target::Key),
            pos(3, 8)
        );
        assert_eq!(
            locator.locate(&[key("a"), key("b-c"), Segment::Index(1)], Target::Value),
            pos(3, 19)
        );
        // Missing key: the deepest existing node.
        assert_eq!(
            locator.locate(&[key("a"), key("zz")], Target::Value),
            pos(3, 6)
        );
        assert_eq!(locator.locate(&[], Target::Value), pos(1, 1));
    }

    #[test]
    fn comments_anywhere_json5_allows_them_keep_positions() {
        let text = "{\n  a /* one */ : /* two */ { b // three\n : 1 },\n  'c//d': \"e/*f\", g: 2 /* x\u{e9}\n */\n}";
        let blanked = blank_comments(text);
        assert_eq!(blanked.len(), text.len());
        assert!(blanked.contains("'c//d': \"e/*f\""), "{blanked}");
        assert!(
            !blanked.contains("one") && !blanked.contains("three"),
            "{blanked}"
        );
        let locator = Locator::new(text, &blanked);
        assert_eq!(locator.locate(&[key("a")], Target::Key), pos(2, 3));
        assert_eq!(
            locator.locate(&[key("a"), key("b")], Target::Value),
            pos(3, 4)
        );
        assert_eq!(locator.locate(&[key("g")], Target::Value), pos(4, 22));
        assert_eq!(
            blank_comments("{a: 'no comment'}"),
            Cow::Borrowed("{a: 'no comment'}")
        );
        // Unicode whitespace between tokens.
        assert_eq!(
            blank_comments("{a:\u{feff}1,\u{a0}b: 2}"),
            "{a:   1,  b: 2}"
        );
        assert_eq!(
            blank_comments("{a: '\u{a0}'}"),
            Cow::Borrowed("{a: '\u{a0}'}")
        );
        // Escaped quotes and an unterminated comment.
        assert_eq!(
            blank_comments(r#"{a: "x\"//y"}"#),
            Cow::Borrowed(r#"{a: "x\"//y"}"#)
        );
        assert_eq!(blank_comments("{} /* open"), "{}        ");
    }

    #[test]
    fn columns_count_characters_and_crlf_is_one_line_end() {
        let text = "{\r\n  \"é€\": 1, x: 2\r\n}";
        assert_eq!(value_of(text, "x"), pos(2, 15));
    }

    #[test]
    fn duplicate_keys_point_at_the_last_one() {
        assert_eq!(value_of("{a: 1, a: 2}", "a"), pos(1, 11));
    }
}

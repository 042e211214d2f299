//! A strict reader from YAML text to a small tree, built on `saphyr-parser`'s event stream.
//!
//! Why events instead of a document loader: a loader expands aliases by copying, so a 256 kB
//! frontmatter of nested aliases (the "billion laughs" shape) could allocate gigabytes. Reading
//! events lets us refuse aliases outright, refuse duplicate keys (YAML requires unique keys;
//! silently keeping one would hide a typo), cap nesting depth, and stop at the first problem.

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};
use serde_json::{Map, Number, Value};

/// Deepest nesting accepted; real frontmatter uses three or four levels.
const MAX_DEPTH: usize = 32;

/// One YAML node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// A scalar with its text; `plain` is false for quoted, block and explicitly tagged
    /// scalars, which are always strings.
    Scalar { text: String, plain: bool },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping with text keys, in document order.
    Map(Vec<(String, Node)>),
}

/// Why a block was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    /// What is wrong, with a line and column.
    pub message: String,
    /// True for a syntax error; false when the YAML is well formed but refused (an alias, a
    /// duplicate key, too deep, not a mapping).
    pub syntax: bool,
}

/// Parses one YAML document that must be a mapping (an empty document is an empty mapping).
/// `line_offset` is added to reported line numbers so they point into the whole file.
pub(crate) fn parse_mapping(
    text: &str,
    line_offset: usize,
) -> Result<Vec<(String, Node)>, YamlError> {
    let mut syntax = false;
    parse_events(text, line_offset, &mut syntax).map_err(|message| YamlError { message, syntax })
}

fn parse_events(
    text: &str,
    line_offset: usize,
    syntax: &mut bool,
) -> Result<Vec<(String, Node)>, String> {
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        line_offset,
        syntax,
    };
    match reader.next()? {
        (Event::StreamStart, _) => {}
        (_, span) => return Err(reader.at("the YAML stream does not start", span)),
    }
    let root = match reader.next()? {
        (Event::StreamEnd, _) => return Ok(Vec::new()),
        (Event::DocumentStart(_), _) => {
            let (event, span) = reader.next()?;
            let node = reader.node(event, span, 0)?;
            match reader.next()? {
                (Event::DocumentEnd, _) => {}
                (_, span) => return Err(reader.at("unexpected content after the document", span)),
            }
            node
        }
        (_, span) => return Err(reader.at("expected a YAML document", span)),
    };
    match reader.next()? {
        (Event::StreamEnd, _) => {}
        (_, span) => return Err(reader.at("more than one YAML document", span)),
    }
    match root {
        Node::Map(entries) => Ok(entries),
        Node::Scalar { text, plain: true } if is_null(&text) => Ok(Vec::new()),
        _ => Err("the frontmatter is not a mapping of keys to values".to_owned()),
    }
}

struct Reader<'a, 's> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    line_offset: usize,
    syntax: &'s mut bool,
}

impl<'a> Reader<'a, '_> {
    fn next(&mut self) -> Result<(Event<'a>, Span), String> {
        match self.parser.next_event() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(error)) => {
                *self.syntax = true;
                Err(self.scan_error(&error))
            }
            None => Err("the YAML ended early".to_owned()),
        }
    }

    fn scan_error(&self, error: &ScanError) -> String {
        let mark = error.marker();
        format!(
            "{} (line {}, column {})",
            error.info(),
            mark.line() + self.line_offset,
            mark.col() + 1
        )
    }

    fn at(&self, message: &str, span: Span) -> String {
        format!(
            "{message} (line {}, column {})",
            span.start.line() + self.line_offset,
            span.start.col() + 1
        )
    }

    fn node(&mut self, event: Event<'a>, span: Span, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.at("nested more than 32 levels deep", span));
        }
        match event {
            Event::Scalar(text, style, _anchor, tag) => Ok(Node::Scalar {
                text: text.into_owned(),
                plain: style == ScalarStyle::Plain && tag.is_none(),
            }),
            Event::SequenceStart(..) => {
                let mut items = Vec::new();
                loop {
                    match self.next()? {
                        (Event::SequenceEnd, _) => return Ok(Node::Seq(items)),
                        (event, span) => items.push(self.node(event, span, depth + 1)?),
                    }
                }
            }
            Event::MappingStart(..) => {
                let mut entries: Vec<(String, Node)> = Vec::new();
                loop {
                    let key = match self.next()? {
                        (Event::MappingEnd, _) => return Ok(Node::Map(entries)),
                        (Event::Scalar(text, ..), span) => (text.into_owned(), span),
                        (_, span) => return Err(self.at("a mapping key is not plain text", span)),
                    };
                    let (key, key_span) = key;
                    if entries.iter().any(|(existing, _)| *existing == key) {
                        return Err(self.at(&format!("duplicate key {key:?}"), key_span));
                    }
                    let (event, span) = self.next()?;
                    let value = self.node(event, span, depth + 1)?;
                    entries.push((key, value));
                }
            }
            Event::Alias(_) => Err(self.at("aliases (*name) are not accepted", span)),
            _ => Err(self.at("unexpected YAML structure", span)),
        }
    }
}

/// Whether a plain scalar is null in the YAML 1.2 core schema.
pub(crate) fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// Converts a node to JSON, typing plain scalars by the YAML 1.2 core schema (null, booleans,
/// integers, floats); everything else is a string. Infinities and NaN stay strings because
/// JSON cannot hold them.
pub(crate) fn to_json(node: &Node) -> Value {
    match node {
        Node::Scalar { text, plain: false } => Value::String(text.clone()),
        Node::Scalar { text, plain: true } => plain_scalar(text),
        Node::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        Node::Map(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                map.insert(key.clone(), to_json(value));
            }
            Value::Object(map)
        }
    }
}

fn plain_scalar(text: &str) -> Value {
    if is_null(text) {
        return Value::Null;
    }
    match text {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(number) = core_int(text) {
        return Value::Number(number.into());
    }
    if is_core_float(text)
        && let Ok(float) = text.parse::<f64>()
        && let Some(number) = Number::from_f64(float)
    {
        return Value::Number(number);
    }
    Value::String(text.to_owned())
}

fn core_int(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Some(octal) = text.strip_prefix("0o") {
        return i64::from_str_radix(octal, 8).ok();
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.strip_prefix('+').unwrap_or(text).parse().ok()
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_core_float(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            all_digits(whole) && all_digits(fraction) && (!whole.is_empty() || !fraction.is_empty())
        }
        None => !mantissa.is_empty() && all_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['-', '+']).unwrap_or(e);
        !digits.is_empty() && all_digits(digits)
    });
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(text: &str) -> Result<Vec<(String, Node)>, String> {
        parse_mapping(text, 1).map_err(|e| e.message)
    }

    #[test]
    fn types_plain_scalars_by_the_core_schema() {
        let entries =
            map("a: {x: true, y: 3, z: 1.5, n: null, s: '3', t: yes, h: 0x1f, e: 1e3}").unwrap();
        assert_eq!(
            to_json(&entries[0].1),
            json!({"x": true, "y": 3, "z": 1.5, "n": null, "s": "3", "t": "yes", "h": 31, "e": 1000.0})
        );
    }

    #[test]
    fn refuses_aliases_duplicates_and_deep_nesting() {
        let alias = map("a: &x [1]\nb: *x\n").unwrap_err();
        assert!(alias.starts_with("aliases"), "{alias}");
        let duplicate = map("name: a\nname: b\n").unwrap_err();
        assert_eq!(duplicate, "duplicate key \"name\" (line 3, column 1)");
        let deep = format!("a: {}{}", "[".repeat(40), "]".repeat(40));
        assert!(map(&deep).unwrap_err().starts_with("nested more than 32"));
    }

    #[test]
    fn refuses_non_mappings_and_second_documents() {
        assert!(map("- a\n- b\n").is_err());
        assert!(
            map("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .starts_with("more than one")
        );
        assert_eq!(map("").unwrap(), Vec::new());
        assert_eq!(map("# only a comment\n").unwrap(), Vec::new());
    }

    #[test]
    fn reports_syntax_errors_with_file_lines() {
        let error = parse_mapping("name: x\ndescription: Use when: asked\n", 1).unwrap_err();
        assert!(error.syntax);
        assert!(error.message.contains("(line 3,"), "{}", error.message);
        assert!(!parse_mapping("a: &x 1\nb: *x\n", 1).unwrap_err().syntax);
    }

    #[test]
    fn float_pattern_matches_the_core_schema() {
        for yes in ["1.5", "-1.", ".5", "+2e10", "3E-2", "10"] {
            assert!(is_core_float(yes), "{yes}");
        }
        for no in [".", "e5", "1e", "1.2.3", "inf", ".inf", "nan", "1_000", ""] {
            assert!(!is_core_float(no), "{no}");
        }
    }
}

//! JSON paths: segments, the dotted form users read (`agents.list[1].workspace`), and the
//! conversions from JSON Pointers (validator output) and from dotted text (schema lookups).

use serde_json::Value;

/// One step into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Renders segments the way OpenClaw names config keys: dots between plain keys, `[n]` for
/// indices, and `["..."]` for keys that would be ambiguous in dotted form (`openai/gpt-5`, `*`,
/// `1`, keys containing dots).
pub(crate) fn dotted(segments: &[Segment]) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
            Segment::Key(key) if is_plain_key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Key(key) => {
                out.push('[');
                // A JSON string literal is the least surprising quoting for odd keys.
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(']');
            }
        }
    }
    out
}

fn is_plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$')
}

/// Turns a JSON Pointer (RFC 6901) into segments, using the document to tell array indices
/// from numeric object keys. Segments past a missing node are kept as keys.
pub(crate) fn from_pointer(pointer: &str, document: &Value) -> Vec<Segment> {
    let mut node = Some(document);
    let mut segments = Vec::new();
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let segment = match (node, token.parse::<usize>()) {
            (Some(Value::Array(_)), Ok(index)) => Segment::Index(index),
            _ => Segment::Key(token),
        };
        node = match (node, &segment) {
            (Some(Value::Array(items)), Segment::Index(i)) => items.get(*i),
            (Some(Value::Object(map)), Segment::Key(k)) => map.get(k),
            _ => None,
        };
        segments.push(segment);
    }
    segments
}

/// A step of a dotted lookup path, which may also name "any key" or "any element".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LookupStep {
    /// A named key.
    Key(String),
    /// A specific element.
    Index(usize),
    /// `[]`, `[*]` or `*`: every element or every map value.
    Any,
}

/// Parses `agents.list[0].workspace`, `agents.defaults.models["openai/gpt-5"].alias`,
/// `channels.*.allowFrom` or `agents.list[].id`. Returns `None` for malformed text.
pub(crate) fn parse_lookup(path: &str) -> Option<Vec<LookupStep>> {
    let mut steps = Vec::new();
    let mut rest = path.trim();
    let mut expect_key = true;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']')?;
            let inner = after[..close].trim();
            let step = if inner.is_empty() || inner == "*" {
                LookupStep::Any
            } else if inner.starts_with('"') {
                LookupStep::Key(serde_json::from_str::<String>(inner).ok()?)
            } else {
                LookupStep::Index(inner.parse().ok()?)
            };
            steps.push(step);
            rest = &after[close + 1..];
            expect_key = false;
        } else if let Some(after) = rest.strip_prefix('.') {
            if expect_key {
                return None;
            }
            rest = after;
            expect_key = true;
        } else {
            if !expect_key {
                return None;
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let key = &rest[..end];
            steps.push(match key {
                "*" => LookupStep::Any,
                _ => LookupStep::Key(key.to_owned()),
            });
            rest = &rest[end..];
            expect_key = false;
        }
    }
    if expect_key && !steps.is_empty() {
        return None;
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dotted_quotes_only_ambiguous_keys() {
        let segments = vec![
            Segment::Key("agents".into()),
            Segment::Key("defaults".into()),
            Segment::Key("models".into()),
            Segment::Key("openai/gpt-5".into()),
            Segment::Key("alias".into()),
        ];
        assert_eq!(
            dotted(&segments),
            r#"agents.defaults.models["openai/gpt-5"].alias"#
        );
        let segments = vec![
            Segment::Key("agents".into()),
            Segment::Key("list".into()),
            Segment::Index(1),
            Segment::Key("workspace".into()),
        ];
        assert_eq!(dotted(&segments), "agents.list[1].workspace");
        assert_eq!(dotted(&[Segment::Key("1".into())]), r#"["1"]"#);
    }

    #[test]
    fn pointer_uses_document_to_tell_indices_from_keys() {
        let doc = json!({"list": [{"a": 1}], "map": {"0": {"x/y": 2}}});
        assert_eq!(
            from_pointer("/list/0/a", &doc),
            vec![
                Segment::Key("list".into()),
                Segment::Index(0),
                Segment::Key("a".into())
            ]
        );
        assert_eq!(
            from_pointer("/map/0/x~1y", &doc),
            vec![
                Segment::Key("map".into()),
                Segment::Key("0".into()),
                Segment::Key("x/y".into())
            ]
        );
        assert_eq!(from_pointer("", &doc), Vec::<Segment>::new());
    }

    #[test]
    fn lookup_paths_parse() {
        use LookupStep::*;
        assert_eq!(
            parse_lookup(r#"agents.defaults.models["openai/gpt-5"].alias"#),
            Some(vec![
                Key("agents".into()),
                Key("defaults".into()),
                Key("models".into()),
                Key("openai/gpt-5".into()),
                Key("alias".into())
            ])
        );
        assert_eq!(
            parse_lookup("agents.list[2].id"),
            Some(vec![
                Key("agents".into()),
                Key("list".into()),
                Index(2),
                Key("id".into())
            ])
        );
        assert_eq!(
            parse_lookup("channels.*.allowFrom"),
            Some(vec![Key("channels".into()), Any, Key("allowFrom".into())])
        );
        assert_eq!(parse_lookup("agents.list[].id").map(|s| s.len()), Some(4));
        assert_eq!(parse_lookup(""), Some(vec![]));
        assert_eq!(parse_lookup("agents..x"), None);
        assert_eq!(parse_lookup("agents."), None);
        assert_eq!(parse_lookup("agents[x]"), None);
    }
}

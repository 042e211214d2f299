//! SKILL.md frontmatter: the YAML block between `---` lines at the top of the file.
//!
//! The block is read with a strict YAML reader (see `yaml.rs`). Hand-written skills often put
//! an unquoted colon in a description (`description: Use when: …`), which YAML rejects; like
//! OpenClaw we then fall back to reading `key: value` lines, but only when every line has that
//! shape, and the skill carries a warning saying so. Anything else is an error the caller reports.

use serde_json::Value;

use crate::metadata::{self, Metadata};
use crate::yaml::{self, Node};

/// What a SKILL.md frontmatter says about its skill.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// Whether the file has a frontmatter block at all.
    pub present: bool,
    /// `name`, trimmed; `None` when absent or empty.
    pub name: Option<String>,
    /// `description`, trimmed; `None` when absent or empty.
    pub description: Option<String>,
    /// `homepage`, or `metadata.openclaw.homepage` when the top-level key is absent.
    pub homepage: Option<String>,
    /// `user-invocable` (default true): offered as a user command.
    pub user_invocable: bool,
    /// `disable-model-invocation` (default false): kept out of the model-facing list.
    pub disable_model_invocation: bool,
    /// The `metadata.openclaw` block (legacy `clawdbot`, `moltbot`).
    pub metadata: Metadata,
    /// Problems that did not stop the skill from loading.
    pub warnings: Vec<String>,
}

/// Keys under `metadata` that hold OpenClaw's block, current name first.
const MANIFEST_KEYS: [&str; 3] = ["openclaw", "clawdbot", "moltbot"];

/// Parses the frontmatter of a SKILL.md text. A file without a leading `---` line has no
/// frontmatter (every field absent); an unclosed block or unreadable YAML is an error.
pub fn parse(text: &str) -> Result<Frontmatter, String> {
    let Some(block) = split(text)? else {
        return Ok(Frontmatter {
            user_invocable: true,
            ..Frontmatter::default()
        });
    };
    let mut warnings = Vec::new();
    // The block starts on the file's second line.
    let fields = match yaml::parse_mapping(&block, 1) {
        Ok(fields) => fields,
        // Only a syntax error earns the fallback; YAML we understood and refused stays refused.
        Err(error) => match line_fields(&block).filter(|_| error.syntax) {
            Some(fields) => {
                warnings.push(format!(
                    "frontmatter is not valid YAML ({}); read as key: value lines",
                    error.message
                ));
                fields
            }
            None => return Err(format!("frontmatter is not valid YAML: {}", error.message)),
        },
    };
    from_fields(&fields, warnings)
}

/// Returns the frontmatter block (lines between the opening and closing `---`, joined with
/// `\n`), `None` when the file does not open with `---`.
fn split(text: &str) -> Result<Option<String>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line));
    if lines.next().map(str::trim_end) != Some("---") {
        return Ok(None);
    }
    let mut block = Vec::new();
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(Some(block.join("\n")));
        }
        block.push(line);
    }
    Err("frontmatter opens with --- but is never closed".to_owned())
}

fn from_fields(
    fields: &[(String, Node)],
    mut warnings: Vec<String>,
) -> Result<Frontmatter, String> {
    let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut text = |key: &str| text_field(get(key), key, &mut warnings);
    let name = text("name");
    let description = text("description");
    let homepage = text("homepage");
    let user_invocable = bool_field(get("user-invocable"), "user-invocable", true, &mut warnings);
    let disable_model_invocation = bool_field(
        get("disable-model-invocation"),
        "disable-model-invocation",
        false,
        &mut warnings,
    );
    let metadata = match get("metadata") {
        None => Metadata::default(),
        Some(node) => {
            let block = manifest_block(node)?;
            match block {
                Some(object) => metadata::from_json(&object, &mut warnings),
                None => Metadata::default(),
            }
        }
    };
    let homepage = homepage.or_else(|| metadata.homepage.clone());
    Ok(Frontmatter {
        present: true,
        name,
        description,
        homepage,
        user_invocable,
        disable_model_invocation,
        metadata,
        warnings,
    })
}

/// Deepest `[`/`{` nesting that inline JSON5 metadata may have.
const MAX_METADATA_NESTING: usize = 32;

/// The deepest bracket nesting of `text`, outside quoted strings (a
/// best-effort scan: the parser judges everything else).
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0_usize, 0_usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

/// Finds OpenClaw's block under `metadata`: a YAML mapping, or a JSON5 object written as text
/// (often inline JSON on one line). Unreadable metadata is an error, not an empty block: a
/// skill whose gates cannot be read must not pass them by accident.
fn manifest_block(node: &Node) -> Result<Option<Value>, String> {
    let value = match node {
        Node::Scalar { text, plain } if *plain && yaml::is_null(text) => return Ok(None),
        Node::Scalar { text, .. } => {
            // The JSON5 parser recurses per level: a SKILL.md (which an agent
            // can write) must not be able to overflow the stack with `[[[[...`.
            if nesting_depth(text) > MAX_METADATA_NESTING {
                return Err(format!(
                    "metadata is nested deeper than {MAX_METADATA_NESTING} levels"
                ));
            }
            json5::from_str::<Value>(text)
                .map_err(|e| format!("metadata is not a JSON5 object: {e}"))?
        }
        other => yaml::to_json(other),
    };
    let Value::Object(object) = value else {
        return Err("metadata is not an object".to_owned());
    };
    for key in MANIFEST_KEYS {
        match object.get(key) {
            None | Some(Value::Null) => {}
            Some(block @ Value::Object(_)) => return Ok(Some(block.clone())),
            Some(_) => return Err(format!("metadata.{key} is not an object")),
        }
    }
    Ok(None)
}

fn text_field(node: Option<&Node>, key: &str, warnings: &mut Vec<String>) -> Option<String> {
    match node? {
        Node::Scalar { text, plain } => {
            let text = text.trim();
            let empty = text.is_empty() || (*plain && yaml::is_null(text));
            (!empty).then(|| text.to_owned())
        }
        _ => {
            warnings.push(format!("{key} is not text; ignored"));
            None
        }
    }
}

fn bool_field(node: Option<&Node>, key: &str, default: bool, warnings: &mut Vec<String>) -> bool {
    let Some(node) = node else {
        return default;
    };
    if let Node::Scalar { text, .. } = node {
        // OpenClaw accepts the usual spellings of yes and no.
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => return true,
            "false" | "no" | "off" | "0" => return false,
            "" | "~" | "null" => return default,
            _ => {}
        }
    }
    warnings.push(format!("{key} is not a boolean; using {default}"));
    default
}

/// The line fallback: every non-blank, non-comment line is `key: value` at column 0, or an
/// indented continuation of a key whose value starts on the next line.
fn line_fields(block: &str) -> Option<Vec<(String, Node)>> {
    let mut fields: Vec<(String, Node)> = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    let close = |open: &mut Option<(String, Vec<&str>)>, fields: &mut Vec<(String, Node)>| {
        if let Some((key, lines)) = open.take() {
            let text = lines.join("\n").trim().to_owned();
            fields.push((key, Node::Scalar { text, plain: false }));
        }
    };
    for line in block.split('\n') {
        if line.starts_with([' ', '\t']) || line.is_empty() {
            match open.as_mut() {
                Some((_, lines)) => lines.push(line),
                None if line.trim().is_empty() || line.trim_start().starts_with('#') => {}
                None => return None,
            }
            continue;
        }
        close(&mut open, &mut fields);
        if line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        let valid_key = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid_key || fields.iter().any(|(k, _)| k == key) {
            return None;
        }
        let value = value.trim();
        if value.is_empty() {
            open = Some((key.to_owned(), Vec::new()));
        } else {
            fields.push((
                key.to_owned(),
                Node::Scalar {
                    text: unquote(value).to_owned(),
                    plain: false,
                },
            ));
        }
    }
    close(&mut open, &mut fields);
    Some(fields)
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SKILL.md is agent-writable: metadata nested 100,000 levels deep is
    /// refused with an error instead of overflowing the parser's stack.
    #[test]
    fn deeply_nested_metadata_is_refused_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = format!("---\nname: x\ndescription: y\nmetadata: {deep}\n---\nBody\n");
        let error = parse(&text).unwrap_err();
        assert!(error.contains("nested deeper than 32"), "{error}");
        // Brackets inside strings do not count.
        assert_eq!(nesting_depth(r#"{"a": "[[[[[[", b: '{{{{'}"#), 1);
        assert_eq!(nesting_depth("{a: [1, {b: [2]}]}"), 4);
    }

    #[test]
    fn no_frontmatter_means_every_field_absent() {
        let fm = parse("# Title\n\nBody\n").unwrap();
        assert_eq!(
            fm,
            Frontmatter {
                user_invocable: true,
                ..Frontmatter::default()
            }
        );
    }

    #[test]
    fn unclosed_block_is_an_error() {
        assert_eq!(
            parse("---\nname: x\n").unwrap_err(),
            "frontmatter opens with --- but is never closed"
        );
    }

    #[test]
    fn crlf_and_bom_are_accepted() {
        let fm = parse("\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nbody").unwrap();
        assert_eq!(fm.name.as_deref(), Some("a"));
        assert_eq!(fm.description.as_deref(), Some("b"));
    }

    #[test]
    fn unquoted_colon_falls_back_to_lines_with_a_warning() {
        let fm = parse("---\nname: a\ndescription: Use when: asked\n---\n").unwrap();
        assert_eq!(fm.description.as_deref(), Some("Use when: asked"));
        assert_eq!(fm.warnings.len(), 1);
        assert!(fm.warnings[0].starts_with("frontmatter is not valid YAML"));
    }

    #[test]
    fn line_fallback_keeps_indented_metadata() {
        let text = "---\nname: a\ndescription: x: y\nmetadata:\n  {\"openclaw\": {\"always\": true}}\n---\n";
        let fm = parse(text).unwrap();
        assert!(fm.metadata.always);
    }

    #[test]
    fn booleans_accept_yes_and_no() {
        let fm = parse("---\nuser-invocable: no\ndisable-model-invocation: yes\n---\n").unwrap();
        assert!(!fm.user_invocable);
        assert!(fm.disable_model_invocation);
        let fm = parse("---\nuser-invocable: maybe\n---\n").unwrap();
        assert!(fm.user_invocable);
        assert_eq!(fm.warnings, ["user-invocable is not a boolean; using true"]);
    }

    #[test]
    fn bad_metadata_is_an_error() {
        let error = parse("---\nmetadata: '{openclaw: [1'\n---\n").unwrap_err();
        assert!(
            error.starts_with("metadata is not a JSON5 object"),
            "{error}"
        );
        let error = parse("---\nmetadata: {openclaw: 3}\n---\n").unwrap_err();
        assert_eq!(error, "metadata.openclaw is not an object");
    }

    #[test]
    fn legacy_manifest_key_is_read() {
        let fm = parse("---\nmetadata: {\"clawdbot\": {\"emoji\": \"🦀\"}}\n---\n").unwrap();
        assert_eq!(fm.metadata.emoji.as_deref(), Some("🦀"));
    }
}

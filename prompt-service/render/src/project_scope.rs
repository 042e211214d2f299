//! Project-scoped entries of the curated memory files (MEMORY.md, USER.md).
//!
//! An entry is a block that starts at a `- ` list item or a Markdown heading
//! (text before the first such line is an entry too). An entry carrying
//! `<!-- project: <key>[; <key>…] -->` belongs to those projects and is
//! injected only while every one of them is among the active project keys.
//! A malformed annotation (never closed, an empty key, a key with `<`, `>`
//! or a line break) drops its entry: an entry whose scope cannot be read is
//! treated as belonging elsewhere, never as global.
//!
//! The filter runs after budgeting: the head/tail cut is chosen on the whole
//! file, then the entries of other projects are removed from what was kept.
//! Each entry's scope is read from the whole entry, so a cut through an
//! entry cannot separate it from its annotation.

use std::ops::Range;

/// Basenames (lowercase) whose entries can be project-scoped.
const CURATED: &[&str] = &["memory.md", "user.md"];

/// True for the files whose entries are filtered by project.
pub fn is_curated(path: &str) -> bool {
    let base = crate::paths::basename(path);
    CURATED.iter().any(|n| base.eq_ignore_ascii_case(n))
}

/// A project key as annotations and the active set spell it: trimmed, the
/// host part (before the first `/`) lowercased, `path:` keys as given.
/// `None` for a key that is empty or holds `<`, `>` or a line break.
pub fn normalize_key(raw: &str) -> Option<String> {
    let key = raw.trim();
    if key.is_empty() || key.contains(['\r', '\n', '<', '>']) {
        return None;
    }
    if key.starts_with("path:") {
        return Some(key.to_owned());
    }
    match key.find('/') {
        Some(slash) if slash > 0 => {
            Some(format!("{}{}", key[..slash].to_lowercase(), &key[slash..]))
        }
        _ => Some(key.to_owned()),
    }
}

/// The scope an entry declares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    /// No annotation: the entry is global.
    Global,
    /// Every one of these projects must be active.
    Projects(Vec<String>),
    /// An annotation that cannot be read.
    Malformed,
}

/// Position of the next `<!--`, optional whitespace, `project`
/// (any case), optional whitespace and `:` at or after `from`, and the byte
/// just past the colon.
fn next_marker(text: &str, mut from: usize) -> Option<(usize, usize)> {
    while let Some(found) = text.get(from..)?.find("<!--") {
        let start = from + found;
        let rest = &text[start + 4..];
        let after_ws = rest.trim_start();
        let word = after_ws
            .get(..7)
            .filter(|w| w.eq_ignore_ascii_case("project"));
        if word.is_some() {
            let after_word = after_ws[7..].trim_start();
            if let Some(after_colon) = after_word.strip_prefix(':') {
                return Some((start, text.len() - after_colon.len()));
            }
        }
        from = start + 4;
    }
    None
}

fn scope_of(entry: &str) -> Scope {
    let mut keys: Vec<String> = Vec::new();
    let mut at = 0;
    let mut annotated = false;
    while let Some((_, value_start)) = next_marker(entry, at) {
        annotated = true;
        let Some(len) = entry[value_start..].find("-->") else {
            return Scope::Malformed;
        };
        let value = &entry[value_start..value_start + len];
        // A second marker inside this one's value is not a value.
        if next_marker(value, 0).is_some() {
            return Scope::Malformed;
        }
        for raw in value.split(';') {
            match normalize_key(raw) {
                Some(key) => {
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
                None => return Scope::Malformed,
            }
        }
        at = value_start + len + 3;
    }
    if annotated {
        Scope::Projects(keys)
    } else {
        Scope::Global
    }
}

fn starts_entry(line: &str) -> bool {
    if line.starts_with("- ") {
        return true;
    }
    let hashes = line.len() - line.trim_start_matches('#').len();
    (1..=6).contains(&hashes)
        && line[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

/// Byte ranges of the entries of `text`, in order, covering it whole; the
/// newline that ends an entry belongs to it.
fn entries(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        if line_start > start && starts_entry(line) {
            out.push(start..line_start);
            start = line_start;
        }
        line_start += line.len();
    }
    if start < text.len() || out.is_empty() {
        out.push(start..text.len());
    }
    out
}

/// Which bytes of a curated file survive the project filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Byte ranges of the kept entries, in order.
    ranges: Vec<Range<usize>>,
    /// Entries removed.
    pub dropped_entries: u32,
}

impl Kept {
    /// Decides every entry of `text` against the active keys (normalised).
    pub fn of(text: &str, active: &[String]) -> Self {
        let mut ranges: Vec<Range<usize>> = Vec::new();
        let mut dropped = 0u32;
        for range in entries(text) {
            let keep = match scope_of(&text[range.clone()]) {
                Scope::Global => true,
                Scope::Projects(keys) => keys.iter().all(|k| active.contains(k)),
                Scope::Malformed => false,
            };
            if keep {
                match ranges.last_mut() {
                    Some(last) if last.end == range.start => last.end = range.end,
                    _ => ranges.push(range),
                }
            } else {
                dropped += 1;
            }
        }
        Self {
            ranges,
            dropped_entries: dropped,
        }
    }

    /// The kept text of `text[window]`, trimmed at its end.
    pub fn apply(&self, text: &str, window: Range<usize>) -> String {
        let mut out = String::with_capacity(window.len());
        for r in &self.ranges {
            let start = r.start.max(window.start);
            let end = r.end.min(window.end);
            if start < end {
                out.push_str(&text[start..end]);
            }
        }
        out.truncate(out.trim_end().len());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(list: &[&str]) -> Vec<String> {
        list.iter().filter_map(|k| normalize_key(k)).collect()
    }

    fn filtered(text: &str, active: &[&str]) -> (String, u32) {
        let kept = Kept::of(text, &keys(active));
        (kept.apply(text, 0..text.len()), kept.dropped_entries)
    }

    const MEMORY: &str = "\
- Global fact.
- Alpha fact. <!-- project: github.com/acme/Alpha -->
- Shared fact. <!-- project: github.com/acme/Alpha; github.com/acme/Beta -->
- Invalid fact. <!-- project: github.com/acme/Beta< -->
- Mixed invalid fact. <!-- project: github.com/acme/Alpha; bad< -->
- Unterminated fact. <!-- project: github.com/acme/Alpha";

    #[test]
    fn every_key_of_an_entry_must_be_active_and_bad_scopes_are_dropped() {
        assert_eq!(filtered(MEMORY, &[]), ("- Global fact.".to_owned(), 5));
        let (alpha, dropped) = filtered(MEMORY, &["GitHub.com/acme/Alpha"]);
        assert_eq!(
            alpha,
            "- Global fact.\n- Alpha fact. <!-- project: github.com/acme/Alpha -->"
        );
        assert_eq!(dropped, 4);
        let (both, dropped) = filtered(MEMORY, &["github.com/acme/Alpha", "github.com/acme/Beta"]);
        assert!(both.contains("Shared fact") && !both.contains("Invalid"));
        assert_eq!(dropped, 3);
    }

    #[test]
    fn keys_lowercase_the_host_only() {
        assert_eq!(
            normalize_key(" GitHub.com/Acme/X "),
            Some("github.com/Acme/X".into())
        );
        assert_eq!(normalize_key("path:/Home/X"), Some("path:/Home/X".into()));
        assert_eq!(normalize_key("Local"), Some("Local".into()));
        assert_eq!(normalize_key(""), None);
        assert_eq!(normalize_key("a>b"), None);
    }

    #[test]
    fn entries_start_at_items_and_headings() {
        let text = "intro\n# Work\n- a\n  more of a\n#tag is text\n## Home\n- b";
        let spans: Vec<&str> = entries(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            spans,
            [
                "intro\n",
                "# Work\n",
                "- a\n  more of a\n#tag is text\n",
                "## Home\n",
                "- b"
            ]
        );
        // A scoped section heading scopes only its own line, as in OpenClaw.
        let (kept, _) = filtered("# P <!-- project: x -->\n- global", &[]);
        assert_eq!(kept, "- global");
    }

    #[test]
    fn a_window_keeps_the_kept_parts_of_cut_entries() {
        let text = "- one <!-- project: x -->\n- two\n- three";
        let kept = Kept::of(text, &[]);
        // A window starting inside the scoped entry drops its remains.
        assert_eq!(kept.apply(text, 10..text.len()), "- two\n- three");
        assert_eq!(kept.apply(text, 0..30), "- tw");
    }
}

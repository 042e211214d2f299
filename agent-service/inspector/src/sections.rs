//! A rendered prompt cut back into its sections, and side-by-side diffs of two versions.
//!
//! A render reports each section's size (Unicode scalar values) and SHA-256, in output order;
//! the sections of each layer are joined by a blank line. Walking the stable prefix and the
//! dynamic suffix with those sizes gives every section's text, and the hash confirms each cut:
//! a section whose cut does not hash right is reported without text rather than guessed.

use openclaw_proto::prompt::v1 as pb;
use serde::Serialize;
use sha2::{Digest, Sha256};
use similar::{DiffTag, TextDiff};

/// What separates two sections of one layer.
const SEPARATOR: &str = "\n\n";

/// The text of each of `prompt.sections`, in the same order (None where the cut did not hash
/// to the reported SHA-256).
pub fn section_texts(prompt: &pb::RenderSystemPromptResponse) -> Vec<Option<String>> {
    let mut stable = Cursor::new(&prompt.stable_prefix);
    let mut dynamic = Cursor::new(&prompt.dynamic_suffix);
    prompt
        .sections
        .iter()
        .map(|section| {
            let cursor = if section.layer() == pb::Layer::Stable {
                &mut stable
            } else {
                dynamic.skip_marker(&prompt.relocatable_marker);
                &mut dynamic
            };
            cursor
                .take(section.chars)
                .filter(|text| hex::encode(Sha256::digest(text.as_bytes())) == section.sha256)
                .map(str::to_owned)
        })
        .collect()
}

struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, at: 0 }
    }

    /// The next `chars` characters, then past the separator that follows.
    fn take(&mut self, chars: u32) -> Option<&'a str> {
        let rest = self.text.get(self.at..)?;
        let len = rest
            .char_indices()
            .nth(chars as usize)
            .map_or(rest.len(), |(i, _)| i);
        if rest.chars().count() < chars as usize {
            return None;
        }
        let piece = &rest[..len];
        self.at += len;
        if self.text[self.at..].starts_with(SEPARATOR) {
            self.at += SEPARATOR.len();
        }
        Some(piece)
    }

    /// Steps over the relocatable block's marker line when it stands at the cursor.
    fn skip_marker(&mut self, marker: &str) {
        if !marker.is_empty() && self.text[self.at..].starts_with(marker) {
            self.at += marker.len();
            if self.text[self.at..].starts_with(SEPARATOR) {
                self.at += SEPARATOR.len();
            }
        }
    }
}

/// One row of a side-by-side diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffRow {
    /// `equal`, `delete`, `insert`, `replace`, or `gap` (unchanged lines left out).
    pub kind: &'static str,
    /// 1-based line number on the old side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_line: Option<usize>,
    /// The old line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// 1-based line number on the new side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_line: Option<usize>,
    /// The new line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

/// Lines of unchanged context kept around each change.
const CONTEXT_LINES: usize = 3;

/// A side-by-side line diff of `old` and `new`, unchanged runs cut to [`CONTEXT_LINES`].
pub fn side_by_side(old: &str, new: &str) -> Vec<DiffRow> {
    let diff = TextDiff::from_lines(old, new);
    let line = |s: &str| s.trim_end_matches('\n').to_owned();
    let mut rows = Vec::new();
    for (g, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if g > 0 {
            rows.push(DiffRow {
                kind: "gap",
                old_line: None,
                old: None,
                new_line: None,
                new: None,
            });
        }
        for op in group {
            let (tag, olds, news) = op.as_tag_tuple();
            let kind = match tag {
                DiffTag::Equal => "equal",
                DiffTag::Delete => "delete",
                DiffTag::Insert => "insert",
                DiffTag::Replace => "replace",
            };
            let height = olds.len().max(news.len());
            for k in 0..height {
                let o = olds.start + k;
                let n = news.start + k;
                let (old_line, old) = if k < olds.len() {
                    (Some(o + 1), diff.old_slice(o).map(&line))
                } else {
                    (None, None)
                };
                let (new_line, new) = if k < news.len() {
                    (Some(n + 1), diff.new_slice(n).map(&line))
                } else {
                    (None, None)
                };
                rows.push(DiffRow {
                    kind,
                    old_line,
                    old,
                    new_line,
                    new,
                });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(id: &str, layer: pb::Layer, text: &str) -> pb::RenderedSection {
        pb::RenderedSection {
            id: id.to_owned(),
            heading: String::new(),
            layer: layer as i32,
            chars: u32::try_from(text.chars().count()).unwrap_or(u32::MAX),
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
        }
    }

    #[test]
    fn cuts_each_layer_at_the_reported_sizes_and_checks_the_hashes() {
        let stable = ["## Tooling\nread, write", "## Safety\nbe careful é"];
        let dynamic = ["## Time\nnoon", "## Runtime\nhost"];
        let marker = "<relocatable>";
        let mut sections: Vec<_> = stable
            .iter()
            .map(|t| section("s", pb::Layer::Stable, t))
            .chain(dynamic.iter().map(|t| section("d", pb::Layer::Dynamic, t)))
            .collect();
        let mut prompt = pb::RenderSystemPromptResponse {
            stable_prefix: stable.join(SEPARATOR),
            dynamic_suffix: format!("{}{SEPARATOR}{marker}{SEPARATOR}{}", dynamic[0], dynamic[1]),
            relocatable_marker: marker.to_owned(),
            sections: sections.clone(),
            ..Default::default()
        };
        let texts = section_texts(&prompt);
        let expected: Vec<Option<String>> = stable
            .iter()
            .chain(dynamic.iter())
            .map(|t| Some((*t).to_owned()))
            .collect();
        assert_eq!(texts, expected);
        // A wrong hash gives no text for that section only.
        sections[1].sha256 = "0".repeat(64);
        prompt.sections = sections;
        let texts = section_texts(&prompt);
        assert_eq!(texts[1], None);
        assert_eq!(texts[0].as_deref(), Some(stable[0]));
    }

    #[test]
    fn side_by_side_pairs_replaced_lines_and_cuts_long_unchanged_runs() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\nold line\ni\n";
        let new = "a\nb\nc\nd\ne\nf\ng\nh\nnew line\ni\nadded\n";
        let rows = side_by_side(old, new);
        let replaced = rows
            .iter()
            .find(|r| r.kind == "replace")
            .expect("a replaced row");
        assert_eq!(replaced.old.as_deref(), Some("old line"));
        assert_eq!(replaced.new.as_deref(), Some("new line"));
        assert_eq!((replaced.old_line, replaced.new_line), (Some(9), Some(9)));
        let inserted = rows.iter().find(|r| r.kind == "insert").expect("insert");
        assert_eq!(inserted.new.as_deref(), Some("added"));
        assert!(inserted.old.is_none());
        // "a" .. "e" are more than three lines from the change: left out.
        assert!(rows.iter().all(|r| r.old.as_deref() != Some("a")));
        assert!(side_by_side("same\n", "same\n").is_empty());
    }
}

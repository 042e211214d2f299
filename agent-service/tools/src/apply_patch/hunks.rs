//! Applying an update's hunks to a file's text.
//!
//! Hunks are located in order, each searched for after the previous one. A hunk's `@@` anchor
//! line is found first and its lines are searched for after it. Lines are compared exactly
//! first, then ignoring trailing whitespace, then ignoring surrounding whitespace, then with
//! typographic punctuation (curly quotes, dashes, non-breaking spaces) folded to ASCII, so a
//! model that normalised a character still lands on the right line but never on a different
//! one that happens to look alike. A hunk marked `*** End of File` must match at the end.

use super::parse::Hunk;
use crate::error::ToolError;

/// The new text of `original` after `hunks`, always ending with a newline.
pub(crate) fn apply_hunks(original: &str, hunks: &[Hunk], path: &str) -> Result<String, ToolError> {
    let mut lines: Vec<&str> = original.split('\n').collect();
    // The empty string after the final newline is not a line.
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, &[String])> = Vec::new();
    let mut cursor = 0_usize;
    for (index, hunk) in hunks.iter().enumerate() {
        let mismatch = |what: String| {
            ToolError::failed(format!(
                "apply_patch failed: hunk {} (patch line {}) does not match {path}: {what}. \
                 No files were changed; read the file again and resend the patch.",
                index + 1,
                hunk.line
            ))
        };
        if let Some(anchor) = &hunk.anchor {
            let at = seek(&lines, std::slice::from_ref(anchor), cursor, false)
                .ok_or_else(|| mismatch(format!("the @@ line {anchor:?} was not found")))?;
            cursor = at + 1;
        }
        if hunk.old.is_empty() {
            // Pure addition: after the anchor when there is one, else at the end.
            let at = if hunk.anchor.is_some() && !hunk.end_of_file {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, &hunk.new));
            cursor = at;
            continue;
        }
        let (mut old, mut new) = (hunk.old.as_slice(), hunk.new.as_slice());
        let mut found = seek(&lines, old, cursor, hunk.end_of_file);
        // A trailing empty line in the hunk often stands for the file's final newline.
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = seek(&lines, old, cursor, hunk.end_of_file);
        }
        let at = found.ok_or_else(|| {
            let expected: Vec<String> = hunk.old.iter().map(|l| format!("  {l}")).collect();
            let place = if hunk.end_of_file {
                " at the end of the file"
            } else {
                ""
            };
            mismatch(format!(
                "these lines were not found{place}:\n{}",
                expected.join("\n")
            ))
        })?;
        replacements.push((at, old.len(), new));
        cursor = at + old.len();
    }
    let mut result: Vec<String> = Vec::with_capacity(lines.len() + 8);
    let mut next = 0_usize;
    for (at, removed, added) in replacements {
        result.extend(lines[next..at].iter().map(|l| (*l).to_owned()));
        result.extend(added.iter().cloned());
        next = at + removed;
    }
    result.extend(lines[next..].iter().map(|l| (*l).to_owned()));
    let mut text = result.join("\n");
    text.push('\n');
    Ok(text)
}

/// The first index at or after `start` where `pattern` matches `lines`; with `at_end` only the
/// position that ends at the last line is tried.
fn seek(lines: &[&str], pattern: &[String], start: usize, at_end: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start.min(lines.len()));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    let candidates = if at_end {
        (start <= last_start).then_some(last_start..=last_start)?
    } else {
        start..=last_start
    };
    let passes: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| fold(a.trim()) == fold(b.trim()),
    ];
    passes.iter().find_map(|same| {
        candidates.clone().find(|&at| {
            lines[at..at + pattern.len()]
                .iter()
                .zip(pattern)
                .all(|(line, want)| same(line, want))
        })
    })
}

/// Typographic punctuation folded to its ASCII look-alike.
fn fold(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(anchor: Option<&str>, old: &[&str], new: &[&str], end_of_file: bool) -> Hunk {
        Hunk {
            anchor: anchor.map(str::to_owned),
            old: old.iter().map(|s| (*s).to_owned()).collect(),
            new: new.iter().map(|s| (*s).to_owned()).collect(),
            end_of_file,
            line: 2,
        }
    }

    #[test]
    fn replaces_in_order_and_keeps_the_rest() {
        let text = "a\nb\nc\nd\n";
        let hunks = [
            hunk(None, &["a", "b"], &["a", "B"], false),
            hunk(None, &["d"], &["D", "e"], false),
        ];
        assert_eq!(
            apply_hunks(text, &hunks, "f").ok().as_deref(),
            Some("a\nB\nc\nD\ne\n")
        );
    }

    #[test]
    fn anchors_pick_the_occurrence_after_them() {
        let text = "fn one() {\n    x\n}\nfn two() {\n    x\n}\n";
        let hunks = [hunk(Some("fn two() {"), &["    x"], &["    y"], false)];
        assert_eq!(
            apply_hunks(text, &hunks, "f").ok().as_deref(),
            Some("fn one() {\n    x\n}\nfn two() {\n    y\n}\n")
        );
    }

    #[test]
    fn end_of_file_hunks_match_only_at_the_end() {
        let text = "x\ny\nx\n";
        let hunks = [hunk(None, &["x"], &["z"], true)];
        assert_eq!(
            apply_hunks(text, &hunks, "f").ok().as_deref(),
            Some("x\ny\nz\n")
        );
        let hunks = [hunk(None, &["y"], &["z"], true)];
        assert!(apply_hunks(text, &hunks, "f").is_err());
    }

    #[test]
    fn whitespace_and_typography_fall_back_but_content_must_match() {
        let text = "  let s = \u{201C}hi\u{201D};  \n";
        let hunks = [hunk(
            None,
            &["let s = \"hi\";"],
            &["let s = \"ho\";"],
            false,
        )];
        assert_eq!(
            apply_hunks(text, &hunks, "f").ok().as_deref(),
            Some("let s = \"ho\";\n")
        );
        let hunks = [hunk(None, &["let t = \"hi\";"], &["x"], false)];
        assert!(apply_hunks(text, &hunks, "f").is_err());
    }

    #[test]
    fn pure_additions_go_after_the_anchor_or_at_the_end() {
        let text = "a\nb\n";
        let after = [hunk(Some("a"), &[], &["new"], false)];
        assert_eq!(
            apply_hunks(text, &after, "f").ok().as_deref(),
            Some("a\nnew\nb\n")
        );
        let end = [hunk(None, &[], &["new"], false)];
        assert_eq!(
            apply_hunks(text, &end, "f").ok().as_deref(),
            Some("a\nb\nnew\n")
        );
    }

    #[test]
    fn a_missing_final_newline_is_added() {
        let hunks = [hunk(None, &["a"], &["b"], false)];
        assert_eq!(apply_hunks("a", &hunks, "f").ok().as_deref(), Some("b\n"));
    }

    #[test]
    fn the_mismatch_error_shows_the_expected_lines() {
        let hunks = [hunk(None, &["nope", "-"], &["x"], false)];
        let Err(error) = apply_hunks("a\n", &hunks, "src/f.rs") else {
            panic!("must not match");
        };
        let text = error.to_string();
        assert!(
            text.contains("hunk 1 (patch line 2) does not match src/f.rs"),
            "{text}"
        );
        assert!(text.contains("  nope\n  -"), "{text}");
        assert!(text.contains("No files were changed"), "{text}");
    }
}

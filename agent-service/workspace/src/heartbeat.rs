//! Whether HEARTBEAT.md asks for anything. The runtime skips a heartbeat turn (and its model
//! call) when the file is effectively empty, so a scaffold-only file, our template included,
//! must count as empty: a template that defeated this check is a known way to burn money.

/// Whether `content` holds no task: only whitespace, Markdown headings (`#`..`######`
/// followed by a space or the end of the line), HTML comments (an unclosed `<!--` runs to the
/// end, as in HTML), and bare list markers or empty checkboxes (`-`, `*`, `+`, `- [ ]`).
///
/// Any other text, on any line, counts as a task.
pub fn heartbeat_is_effectively_empty(content: &str) -> bool {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    without_html_comments(content)
        .lines()
        .all(|line| is_scaffolding(line.trim()))
}

/// The text with every `<!-- ... -->` removed; an unclosed comment removes the rest.
fn without_html_comments(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        kept.push_str(&rest[..start]);
        let after_open = &rest[start + "<!--".len()..];
        match after_open.find("-->") {
            Some(end) => rest = &after_open[end + "-->".len()..],
            None => return kept,
        }
    }
    kept.push_str(rest);
    kept
}

/// A trimmed line that carries no task.
fn is_scaffolding(line: &str) -> bool {
    if line.is_empty() {
        return true;
    }
    let hashes = line.len() - line.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        // `#tag` is text; `# Title` and a lone `#` are headings.
        return line[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace);
    }
    let Some(after_marker) = line.strip_prefix(['-', '*', '+']) else {
        return false;
    };
    matches!(after_marker.trim(), "" | "[ ]" | "[]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_need_a_space_and_at_most_six_hashes() {
        assert!(is_scaffolding("# Title"));
        assert!(is_scaffolding("###### Six"));
        assert!(is_scaffolding("#"));
        assert!(!is_scaffolding("#tag"));
        assert!(!is_scaffolding("####### seven"));
    }

    #[test]
    fn comments_are_removed_across_lines_and_unclosed_ones_run_to_the_end() {
        assert_eq!(without_html_comments("a<!-- x\ny -->b"), "ab");
        assert_eq!(without_html_comments("a<!-- never closed\nb"), "a");
        assert_eq!(without_html_comments("<!---->"), "");
    }
}

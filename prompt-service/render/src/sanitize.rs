//! Workspace file text as it goes into the prompt: the legacy heartbeat
//! block removed, runs of blank lines shortened, and the test for a
//! HEARTBEAT.md that asks for nothing.

use std::borrow::Cow;

/// How the heartbeat block that old AGENTS.md templates embedded begins:
/// a label line, then the default heartbeat prompt quoted in backticks.
const LEGACY_LEAD: &str = "Default heartbeat prompt:\n`";
/// The two openings the quoted prompt had over the template's versions.
const LEGACY_OPENINGS: &[&str] = &[
    "Read HEARTBEAT.md if it exists",
    "Follow the heartbeat monitor scratch context when provided.",
];
/// How the quoted prompt ends, just before the closing backtick.
const LEGACY_END: &str = "HEARTBEAT_OK.";

/// Byte length of the legacy block at the start of `text`, if one starts
/// there: the lead, an opening, then one line without backticks that ends
/// in `HEARTBEAT_OK.` and the closing backtick.
fn legacy_block_len(text: &str) -> Option<usize> {
    let quoted = text.strip_prefix(LEGACY_LEAD)?;
    if !LEGACY_OPENINGS.iter().any(|o| quoted.starts_with(o)) {
        return None;
    }
    let stop = quoted.find(['`', '\n'])?;
    (quoted.as_bytes()[stop] == b'`' && quoted[..stop].ends_with(LEGACY_END))
        .then_some(LEGACY_LEAD.len() + stop + 1)
}

/// Removes every legacy embedded heartbeat block (the old AGENTS.md
/// template quoted the default heartbeat prompt; the Heartbeats section and
/// the heartbeat turn itself carry that now). Returns the text and the
/// characters removed.
pub fn strip_legacy_heartbeat(text: &str) -> (Cow<'_, str>, u32) {
    if !text.contains(LEGACY_LEAD) {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut removed = 0usize;
    let mut rest = text;
    while let Some(at) = rest.find(LEGACY_LEAD) {
        out.push_str(&rest[..at]);
        let candidate = &rest[at..];
        match legacy_block_len(candidate) {
            Some(len) => {
                removed += candidate[..len].chars().count();
                rest = &candidate[len..];
            }
            None => {
                out.push_str(&candidate[..LEGACY_LEAD.len()]);
                rest = &candidate[LEGACY_LEAD.len()..];
            }
        }
    }
    out.push_str(rest);
    (Cow::Owned(out), u32::try_from(removed).unwrap_or(u32::MAX))
}

/// Shortens every run of three or more newlines to two (one blank line).
pub fn collapse_blank_runs(text: &str) -> Cow<'_, str> {
    if !text.contains("\n\n\n") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut newlines = 0;
    for c in text.chars() {
        if c == '\n' {
            newlines += 1;
            if newlines > 2 {
                continue;
            }
        } else {
            newlines = 0;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// Whether a HEARTBEAT.md holds no task: only whitespace, Markdown headings,
/// HTML comments (an unclosed `<!--` runs to the end) and bare list markers
/// or empty checkboxes. Such a file, the seeded template included, is left
/// out of the prompt like an empty one. agent-service calls this same
/// function to skip a heartbeat turn, so a file the prompt leaves out never
/// starts one, and a file that starts one is always in the prompt.
pub fn heartbeat_is_empty(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    without_comments(text)
        .lines()
        .all(|l| is_scaffolding(l.trim()))
}

fn without_comments(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        kept.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => return kept,
        }
    }
    kept.push_str(rest);
    kept
}

fn is_scaffolding(line: &str) -> bool {
    if line.is_empty() {
        return true;
    }
    let hashes = line.len() - line.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        return line[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace);
    }
    line.strip_prefix(['-', '*', '+'])
        .is_some_and(|rest| matches!(rest.trim(), "" | "[ ]" | "[]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD_TEMPLATE: &str = "# AGENTS.md\n\nDefault heartbeat prompt:\n`Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. If nothing needs attention, reply HEARTBEAT_OK.`\n\n## Rules\n- Be kind.";

    #[test]
    fn the_legacy_block_is_removed_and_counted() {
        let (text, removed) = strip_legacy_heartbeat(OLD_TEMPLATE);
        assert_eq!(text, "# AGENTS.md\n\n\n\n## Rules\n- Be kind.");
        assert_eq!(
            collapse_blank_runs(&text),
            "# AGENTS.md\n\n## Rules\n- Be kind."
        );
        assert_eq!(removed, 147);
        let monitor = "Default heartbeat prompt:\n`Follow the heartbeat monitor scratch context when provided. Then reply HEARTBEAT_OK.`";
        assert_eq!(
            strip_legacy_heartbeat(monitor),
            (Cow::Owned(String::new()), 112)
        );
    }

    #[test]
    fn look_alikes_stay() {
        for kept in [
            "Default heartbeat prompt:\n`Do something else. HEARTBEAT_OK.`",
            "Default heartbeat prompt:\n`Read HEARTBEAT.md if it exists\nHEARTBEAT_OK.`",
            "Default heartbeat prompt:\n`Read HEARTBEAT.md if it exists, then stop.`",
            "Default heartbeat prompt: `Read HEARTBEAT.md if it exists. HEARTBEAT_OK.`",
        ] {
            assert_eq!(
                strip_legacy_heartbeat(kept),
                (Cow::Borrowed(kept), 0),
                "{kept}"
            );
        }
    }

    #[test]
    fn blank_runs_shrink_to_one_blank_line() {
        assert_eq!(
            collapse_blank_runs("a\n\n\n\n\nb\n\nc\nd"),
            "a\n\nb\n\nc\nd"
        );
        assert!(matches!(collapse_blank_runs("a\n\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_heartbeat_file_of_scaffolding_is_empty() {
        assert!(heartbeat_is_empty(
            "# HEARTBEAT.md\n\n<!--\nTasks go here.\n-->\n- [ ]\n"
        ));
        assert!(heartbeat_is_empty(
            "\u{feff}## Checks\n* \n<!-- never closed"
        ));
        assert!(!heartbeat_is_empty("# HEARTBEAT.md\n- Check the inbox."));
        assert!(!heartbeat_is_empty("#tag"));
    }
}

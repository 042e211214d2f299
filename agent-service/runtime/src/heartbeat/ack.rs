//! Telling a heartbeat's acknowledgement from an alert (P-19).
//!
//! The model answers a heartbeat with `HEARTBEAT_OK` when nothing needs attention. The token
//! counts at the start or the end of the reply, with light Markdown or punctuation around it
//! (`**HEARTBEAT_OK**`, `HEARTBEAT_OK.`). A reply that carries the token and, once it is
//! removed, at most `ackMaxChars` characters (default 300) is an acknowledgement: recorded, not
//! delivered. Anything else is an alert, delivered without the token. An empty reply has
//! nothing to deliver and counts as an acknowledgement.

use prompt_render::HEARTBEAT_OK;

/// `agents.defaults.heartbeat.ackMaxChars` when not configured.
pub const DEFAULT_ACK_MAX_CHARS: u64 = 300;

/// What a heartbeat reply amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing needs attention: keep the reply out of every channel.
    Ack,
    /// Something needs attention: deliver this text.
    Alert(String),
}

/// Classifies a heartbeat's final text.
pub fn classify(text: &str, ack_max_chars: u64) -> Verdict {
    let text = text.trim();
    if text.is_empty() {
        return Verdict::Ack;
    }
    let (rest, had_token) = strip_token(text);
    if !had_token {
        return Verdict::Alert(text.to_owned());
    }
    if u64::try_from(rest.chars().count()).unwrap_or(u64::MAX) <= ack_max_chars {
        Verdict::Ack
    } else {
        Verdict::Alert(rest.to_owned())
    }
}

const MARKUP: &[char] = &['*', '_', '`', '~'];
const TRAILING: &[char] = &['*', '_', '`', '~', '.', '!', ',', ':', ';'];

/// Removes the token (repeatedly) from both ends; says whether there was one.
fn strip_token(text: &str) -> (&str, bool) {
    let mut rest = text.trim();
    let mut found = false;
    loop {
        let lead = rest.trim_start_matches(MARKUP);
        if let Some(after) = lead.strip_prefix(HEARTBEAT_OK) {
            rest = after.trim_start_matches(TRAILING).trim();
            found = true;
            continue;
        }
        let tail = rest.trim_end_matches(TRAILING);
        if let Some(before) = tail.strip_suffix(HEARTBEAT_OK) {
            rest = before.trim_end_matches(MARKUP).trim();
            found = true;
            continue;
        }
        return (rest, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledgements() {
        for text in [
            "HEARTBEAT_OK",
            "  HEARTBEAT_OK\n",
            "**HEARTBEAT_OK**",
            "`HEARTBEAT_OK`.",
            "HEARTBEAT_OK - all quiet",
            "Checked mail and calendar. HEARTBEAT_OK",
            "",
            "HEARTBEAT_OK HEARTBEAT_OK",
        ] {
            assert_eq!(
                classify(text, DEFAULT_ACK_MAX_CHARS),
                Verdict::Ack,
                "{text:?}"
            );
        }
    }

    #[test]
    fn alerts_are_delivered_without_the_token() {
        assert_eq!(
            classify("The build is red on main.", 300),
            Verdict::Alert("The build is red on main.".into())
        );
        let long = "x".repeat(20);
        assert_eq!(
            classify(&format!("HEARTBEAT_OK\n{long}"), 10),
            Verdict::Alert(long.clone())
        );
        assert_eq!(
            classify(&format!("{long} HEARTBEAT_OK."), 10),
            Verdict::Alert(long)
        );
        // A token in the middle is not an acknowledgement.
        assert_eq!(
            classify("Disk is full; not HEARTBEAT_OK yet, fix it", 300),
            Verdict::Alert("Disk is full; not HEARTBEAT_OK yet, fix it".into())
        );
    }
}

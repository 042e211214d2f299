//! What the renderer knows about channel ids: the display name it names a
//! channel by, and whether the channel shows approval requests in its own
//! UI (cards or buttons). Inputs win over the table: a request may name a
//! display name and say whether native approvals exist; the table only
//! fills what the request leaves unsaid.

/// One known channel: id, display name, native approval UI.
struct Known {
    id: &'static str,
    name: &'static str,
    native_approvals: bool,
}

const fn known(id: &'static str, name: &'static str, native_approvals: bool) -> Known {
    Known {
        id,
        name,
        native_approvals,
    }
}

/// Channel ids in alphabetical order. The native-approval column follows
/// OpenClaw's list of channels with an approval runtime of their own.
const CHANNELS: &[Known] = &[
    known("discord", "Discord", true),
    known("googlechat", "Google Chat", true),
    known("imessage", "iMessage", true),
    known("irc", "IRC", false),
    known("line", "LINE", false),
    known("matrix", "Matrix", true),
    known("mattermost", "Mattermost", false),
    known("msteams", "Microsoft Teams", false),
    known("qqbot", "QQ", true),
    known("signal", "Signal", true),
    known("slack", "Slack", true),
    known("sms", "SMS", false),
    known("telegram", "Telegram", true),
    known("webchat", "the Control UI chat", true),
    known("whatsapp", "WhatsApp", true),
    known("zalo", "Zalo", false),
];

fn find(id: &str) -> Option<&'static Known> {
    CHANNELS.iter().find(|k| k.id == id)
}

/// The display name of a (lowercase) channel id, if the table knows it.
pub fn display_name(id: &str) -> Option<&'static str> {
    find(id).map(|k| k.name)
}

/// Whether a (lowercase) channel id has native approval UI, by the table.
pub fn native_approvals(id: &str) -> bool {
    find(id).is_some_and(|k| k.native_approvals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_unique() {
        for pair in CHANNELS.windows(2) {
            assert!(
                pair[0].id < pair[1].id,
                "{} before {}",
                pair[0].id,
                pair[1].id
            );
        }
    }

    /// One row per channel with native approval UI, and two without.
    #[test]
    fn native_approval_rows() {
        for id in [
            "webchat",
            "discord",
            "googlechat",
            "imessage",
            "matrix",
            "qqbot",
            "signal",
            "slack",
            "telegram",
            "whatsapp",
        ] {
            assert!(native_approvals(id), "{id}");
        }
        for id in ["irc", "msteams", "unknown", ""] {
            assert!(!native_approvals(id), "{id}");
        }
        assert_eq!(display_name("googlechat"), Some("Google Chat"));
        assert_eq!(display_name("nostr"), None);
    }
}

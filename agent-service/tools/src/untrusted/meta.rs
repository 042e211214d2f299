//! What the channel reported about a chat message: who sent it and in which conversation.
//!
//! The runtime keeps these facts with the message itself, as one line in front of its stored
//! text ([`ChatMeta::stamp`]), so that every later request replays them byte for byte. The line
//! starts with [`META_LEAD`], a NUL character; the runtime refuses a message that contains NUL
//! at admission, so the only metadata line a stored text can start with is one it wrote.
//!
//! Shown to a model ([`super::Fence::model_messages`]), the line becomes a `metadata` line
//! inside the fence, carrying the fence's nonce: text in the message cannot pass for it
//! (it does not know the nonce), and text in the metadata cannot leave it: every value is
//! reduced to one line of printable characters, bounded, and written as JSON, and the line is
//! neutralised like the message.

use serde::{Deserialize, Serialize};

/// The first character of a stored metadata line (never in a message from outside).
pub const META_LEAD: char = '\0';
/// Longest value kept in metadata, in characters.
pub const META_VALUE_CHARS: usize = 128;

/// The channel's report about one chat message. Empty fields are left out of the JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatMeta {
    /// Channel id (`telegram`, `discord` ...).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub channel: String,
    /// `direct`, `group` or `channel`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub chat_type: String,
    /// The group or channel's id on its platform.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group_id: String,
    /// The sender's id, as `commands.ownerAllowFrom` names senders (a hash in hash display).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub sender_id: String,
    /// The sender's display name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub sender_name: String,
}

impl ChatMeta {
    /// Every value cleaned: control characters and line or paragraph separators become
    /// spaces, the ends are trimmed and the length is bounded by [`META_VALUE_CHARS`].
    #[must_use]
    pub fn cleaned(self) -> Self {
        let Self {
            channel,
            chat_type,
            group_id,
            sender_id,
            sender_name,
        } = self;
        Self {
            channel: clean(&channel),
            chat_type: clean(&chat_type),
            group_id: clean(&group_id),
            sender_id: clean(&sender_id),
            sender_name: clean(&sender_name),
        }
    }

    /// Whether it names no sender: such a message is stored without a metadata line.
    pub fn is_anonymous(&self) -> bool {
        self.sender_id.is_empty() && self.sender_name.is_empty()
    }

    /// The text to store: `text` after this metadata's line, or `text` alone when the
    /// metadata names no sender.
    pub fn stamp(&self, text: &str) -> String {
        let meta = self.clone().cleaned();
        if meta.is_anonymous() {
            return text.to_owned();
        }
        format!("{META_LEAD}{}\n{text}", meta.json())
    }

    /// A stored text split into its metadata (when it starts with a metadata line the
    /// runtime wrote) and the message. A line that does not parse is left in the text.
    pub fn split(stored: &str) -> (Option<ChatMeta>, &str) {
        let Some(rest) = stored.strip_prefix(META_LEAD) else {
            return (None, stored);
        };
        let (line, text) = rest.split_once('\n').unwrap_or((rest, ""));
        match serde_json::from_str::<ChatMeta>(line) {
            Ok(meta) => (Some(meta.cleaned()), text),
            Err(_) => (None, stored),
        }
    }

    /// The message text of a stored text, without its metadata line.
    pub fn text_of(stored: &str) -> &str {
        Self::split(stored).1
    }

    /// One line of JSON, fields in declaration order.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

fn clean(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .trim()
        .chars()
        .take(META_VALUE_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender(id: &str, name: &str) -> ChatMeta {
        ChatMeta {
            channel: "telegram".into(),
            chat_type: "group".into(),
            group_id: "-100".into(),
            sender_id: id.into(),
            sender_name: name.into(),
        }
    }

    #[test]
    fn a_stamped_text_splits_back_into_its_metadata_and_text() {
        let meta = sender("42", "Ann");
        let stored = meta.stamp("hello\nworld");
        assert_eq!(ChatMeta::split(&stored), (Some(meta), "hello\nworld"));
        assert_eq!(ChatMeta::text_of(&stored), "hello\nworld");
    }

    #[test]
    fn no_sender_means_no_metadata_line() {
        let meta = sender("", "");
        assert_eq!(meta.stamp("hi"), "hi");
        assert_eq!(ChatMeta::split("hi"), (None, "hi"));
    }

    #[test]
    fn values_stay_on_one_bounded_line() {
        let long = "x".repeat(META_VALUE_CHARS + 10);
        let meta = sender("42\n\"}", &format!("Ann\u{2028}{long}"));
        let stored = meta.stamp("hi");
        let line = stored.lines().next().unwrap_or_default();
        assert_eq!(stored.lines().count(), 2, "{stored:?}");
        assert!(!line[1..].chars().any(char::is_control), "{line:?}");
        let (parsed, text) = ChatMeta::split(&stored);
        let parsed = parsed.unwrap();
        assert_eq!(text, "hi");
        assert_eq!(parsed.sender_id, "42 \"}");
        assert_eq!(parsed.sender_name.chars().count(), META_VALUE_CHARS);
    }

    #[test]
    fn a_line_that_is_not_metadata_stays_in_the_text() {
        let stored = "\0not json\nhi";
        assert_eq!(ChatMeta::split(stored), (None, stored));
    }
}

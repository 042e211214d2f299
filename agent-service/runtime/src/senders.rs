//! Who sent a chat message, as the model is told (P-52): the metadata a message is stored
//! with, and the owner ids the prompt lists for the session's channel. One place decides
//! how `commands.ownerAllowFrom` names a sender on a channel (a bare id, or `<channel>:<id>`),
//! for the prompt, the metadata and the `/approve` check alike.

use openclaw_config::{Config, raw::OwnerDisplay};
use openclaw_tools::{UserOrigin, untrusted::ChatMeta};
use prompt_render as render;

use crate::sessions::queue::TurnChannel;

/// Whether messages on `channel` carry their sender to the model: group and channel chats,
/// whose messages are written by several participants (and fenced as theirs). A direct
/// chat's messages are the operator's requests and stay as they were sent.
pub(crate) fn shows_senders(channel: &TurnChannel) -> bool {
    !channel.channel.is_empty()
        && matches!(
            UserOrigin::for_chat(&channel.channel, &channel.chat_type),
            UserOrigin::Chat { .. }
        )
}

/// The metadata a message from `channel` is stored with: the channel, chat type, group id
/// and sender, the sender's id hashed as the prompt shows owners when `commands.ownerDisplay`
/// is `hash`. Names no sender (so nothing is stamped) when the channel reported none or the
/// chat shows no senders ([`shows_senders`]).
pub(crate) fn chat_meta(config: &Config, agent_id: &str, channel: &TurnChannel) -> ChatMeta {
    if !shows_senders(channel) {
        return ChatMeta::default();
    }
    let settings = config.prompt_settings(agent_id);
    let sender_id = match (settings.owner_display, channel.sender_id.trim()) {
        (_, "") => String::new(),
        (OwnerDisplay::Raw, id) => id.to_owned(),
        (OwnerDisplay::Hash, id) => render::owner_hash_token(
            id,
            settings.owner_display_secret.as_deref().unwrap_or_default(),
        ),
    };
    ChatMeta {
        channel: channel.channel.clone(),
        chat_type: channel.chat_type.clone(),
        group_id: channel.group_id.clone(),
        sender_id,
        sender_name: channel.sender_name.clone(),
    }
    .cleaned()
}

/// The owner ids the prompt lists for a turn: the `commands.ownerAllowFrom` entries that
/// name a sender on the turn's channel, as its messages' metadata shows senders (a
/// `<channel>:` prefix removed). Empty unless the turn's message came with a sender id the
/// model is shown ([`shows_senders`]): a list it could match against nothing would be noise.
pub(crate) fn prompt_owner_ids(owners: &[String], channel: &TurnChannel) -> Vec<String> {
    if !shows_senders(channel) || channel.sender_id.trim().is_empty() {
        return Vec::new();
    }
    owners
        .iter()
        .filter_map(|entry| owner_on(entry, &channel.channel))
        .map(str::to_owned)
        .collect()
}

/// Whether `sender` on `channel` is one of `owners`.
pub(crate) fn is_owner(owners: &[String], channel: &str, sender: &str) -> bool {
    !sender.is_empty()
        && sender != "*"
        && owners
            .iter()
            .any(|entry| owner_on(entry, channel) == Some(sender) || entry.trim() == sender)
}

/// The sender id an owner entry names on `channel`: the entry itself when it is bare, the
/// part after `<channel>:` when it names this channel, nothing when it names another.
fn owner_on<'a>(entry: &'a str, channel: &str) -> Option<&'a str> {
    let entry = entry.trim();
    if entry.is_empty() || entry == "*" {
        return None;
    }
    match entry.split_once(':') {
        Some((prefix, id)) if prefix.eq_ignore_ascii_case(channel) => Some(id.trim()),
        Some((prefix, _)) if is_channel_id(prefix) => None,
        _ => Some(entry),
    }
}

/// A prefix that reads as a channel id (lowercase letters, digits, `-`), not part of an id
/// such as `+49:...`.
fn is_channel_id(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && prefix
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owners() -> Vec<String> {
        ["+4915112345678", "telegram:42", "discord:7", " ", "*"]
            .map(str::to_owned)
            .to_vec()
    }

    fn telegram(sender: &str) -> TurnChannel {
        TurnChannel {
            channel: "telegram".into(),
            chat_type: "group".into(),
            sender_id: sender.into(),
            ..TurnChannel::default()
        }
    }

    #[test]
    fn the_prompt_lists_the_owners_of_the_turns_channel_only_with_a_sender() {
        assert_eq!(
            prompt_owner_ids(&owners(), &telegram("42")),
            vec!["+4915112345678", "42"]
        );
        assert!(prompt_owner_ids(&owners(), &telegram("")).is_empty());
        assert!(prompt_owner_ids(&owners(), &TurnChannel::default()).is_empty());
        let direct = TurnChannel {
            chat_type: "direct".into(),
            ..telegram("42")
        };
        assert!(prompt_owner_ids(&owners(), &direct).is_empty());
    }

    #[test]
    fn an_owner_is_a_bare_id_or_one_prefixed_with_this_channel() {
        let owners = owners();
        assert!(is_owner(&owners, "telegram", "42"));
        assert!(is_owner(&owners, "telegram", "+4915112345678"));
        assert!(!is_owner(&owners, "telegram", "7"));
        assert!(is_owner(&owners, "discord", "7"));
        assert!(!is_owner(&owners, "telegram", ""));
        assert!(!is_owner(&owners, "telegram", "*"));
    }
}

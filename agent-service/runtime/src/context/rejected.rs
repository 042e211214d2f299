//! Messages the model provider refused for what they hold: the transcript keeps them
//! for the record and a `custom` entry of type [`REJECTED_ENTRY`] after them names them with the
//! provider's reason. The conversation the model sees leaves a refused user message out and
//! carries a short note in place of a refused tool result, so the call keeps its one result
//! (lesson L10).
//!
//! A `custom` entry is part of transcript format version 3 and never enters model context in
//! readers that do not know its type, so the format's version stays as it is.

use std::sync::Arc;

use openclaw_transcript::{ContentBlock, EntryBody, EntryId, Message, ToolResultMessage};
use serde_json::{Value, json};

/// `customType` of the transcript entry that marks messages the model provider refused.
pub const REJECTED_ENTRY: &str = "openclaw:rejected";

/// Messages the model provider refused, by transcript entry id, and its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The refused messages' entries.
    pub entry_ids: Vec<EntryId>,
    /// What the provider said.
    pub reason: String,
}

impl Rejection {
    /// The transcript entry that records it.
    pub fn to_entry(&self) -> EntryBody {
        EntryBody::Custom {
            custom_type: REJECTED_ENTRY.to_owned(),
            data: Some(json!({
                "entryIds": self.entry_ids.iter().map(EntryId::as_str).collect::<Vec<_>>(),
                "reason": self.reason,
            })),
        }
    }

    /// Reads an entry's data back; `None` when it names no entry.
    pub fn from_data(data: Option<&Value>) -> Option<Self> {
        let data = data?;
        let entry_ids: Vec<EntryId> = data
            .get("entryIds")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .map(EntryId::new)
            .collect();
        let reason = data
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        (!entry_ids.is_empty()).then_some(Self { entry_ids, reason })
    }

    /// Applies it to a conversation: refused user messages (and messages of other roles) go,
    /// a refused tool result becomes a note.
    pub fn apply(&self, entries: &mut Vec<(EntryId, Arc<Message>)>) {
        entries.retain_mut(|(id, message)| {
            if !self.entry_ids.contains(id) {
                return true;
            }
            match &**message {
                Message::ToolResult(result) => {
                    *message = Arc::new(Message::ToolResult(self.note_for(result)));
                    true
                }
                Message::User(_) | Message::Assistant(_) | Message::Other(_) => false,
            }
        });
    }

    /// What the model gets in place of a refused tool result.
    pub fn note_for(&self, result: &ToolResultMessage) -> ToolResultMessage {
        ToolResultMessage {
            content: vec![ContentBlock::text(format!(
                "[This tool result was refused by the model provider and is not sent again: {}]",
                self.reason
            ))],
            is_error: true,
            ..result.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use openclaw_transcript::{UserContent, UserMessage};

    use super::*;

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Text(text.to_owned()),
            timestamp: 1,
        })
    }

    fn result(id: &str, text: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.to_owned(),
            tool_name: "read".to_owned(),
            content: vec![ContentBlock::text(text)],
            is_error: false,
            details: None,
            timestamp: 1,
        })
    }

    #[test]
    fn a_refused_user_message_goes_and_a_refused_result_becomes_a_note() {
        let rejection = Rejection {
            entry_ids: vec![EntryId::new("00000002"), EntryId::new("00000003")],
            reason: "the image could not be processed".to_owned(),
        };
        let EntryBody::Custom { data, .. } = rejection.to_entry() else {
            panic!("a custom entry");
        };
        let read = Rejection::from_data(data.as_ref()).expect("reads back");
        assert_eq!(read, rejection);

        let mut entries = vec![
            (EntryId::new("00000001"), Arc::new(user("kept"))),
            (EntryId::new("00000002"), Arc::new(user("refused"))),
            (
                EntryId::new("00000003"),
                Arc::new(result("c1", "refused output")),
            ),
            (
                EntryId::new("00000004"),
                Arc::new(result("c2", "kept output")),
            ),
        ];
        read.apply(&mut entries);
        let ids: Vec<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["00000001", "00000003", "00000004"]);
        let Message::ToolResult(note) = &*entries[1].1 else {
            panic!("a tool result");
        };
        assert!(note.is_error);
        assert_eq!(note.tool_call_id, "c1");
        let text = format!("{:?}", note.content);
        assert!(!text.contains("refused output"), "{text}");
        assert!(text.contains("the image could not be processed"), "{text}");
        assert_eq!(*entries[2].1, result("c2", "kept output"));
    }

    #[test]
    fn an_entry_naming_nothing_is_ignored() {
        assert_eq!(Rejection::from_data(None), None);
        assert_eq!(Rejection::from_data(Some(&json!({"reason": "x"}))), None);
        assert_eq!(
            Rejection::from_data(Some(&json!({"entryIds": [], "reason": "x"}))),
            None
        );
    }
}

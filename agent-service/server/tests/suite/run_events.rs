//! Run requests and their event streams: the session and Telegram chat most tests speak from,
//! reading a stream up to an event, and picking the final or error event out of what was read.

use std::time::Duration;

use openclaw_proto::agent::v1::{self as pb, run_event::Event};

/// How long [`read_until`] waits for each event.
const EVENT_WAIT: Duration = Duration::from_secs(30);

/// The default agent's session `key`.
pub fn session_key(key: impl Into<String>) -> Option<pb::SessionRef> {
    Some(pb::SessionRef {
        agent_id: String::new(),
        target: Some(pb::session_ref::Target::SessionKey(key.into())),
    })
}

/// A Telegram chat of type `chat` with sender 42.
pub fn telegram_in(chat: pb::ChatType) -> Option<pb::ChannelContext> {
    Some(pb::ChannelContext {
        channel: "telegram".into(),
        chat_type: chat as i32,
        sender_id: "42".into(),
        ..Default::default()
    })
}

/// A direct Telegram chat with sender 42.
pub fn telegram() -> Option<pb::ChannelContext> {
    telegram_in(pb::ChatType::Direct)
}

/// Reads until `stop` matches (that event included) or the stream ends, each event within
/// 30 s.
pub async fn read_until(
    stream: &mut tonic::Streaming<pb::RunEvent>,
    stop: impl Fn(&pb::RunEvent) -> bool,
) -> Vec<pb::RunEvent> {
    read_until_within(stream, EVENT_WAIT, stop).await
}

/// [`read_until`], each event within `patience`.
pub async fn read_until_within(
    stream: &mut tonic::Streaming<pb::RunEvent>,
    patience: Duration,
    stop: impl Fn(&pb::RunEvent) -> bool,
) -> Vec<pb::RunEvent> {
    let mut events = Vec::new();
    loop {
        let next = tokio::time::timeout(patience, stream.message())
            .await
            .unwrap_or_else(|_| panic!("an event within {patience:?}"))
            .expect("stream");
        let Some(event) = next else { return events };
        let done = stop(&event);
        events.push(event);
        if done {
            return events;
        }
    }
}

/// The final event of `events`, if there is one.
pub fn find_final(events: &[pb::RunEvent]) -> Option<pb::RunFinal> {
    events.iter().find_map(|e| match &e.event {
        Some(Event::Final(f)) => Some(f.clone()),
        _ => None,
    })
}

/// The final event of `events`; panics, showing them, when there is none.
pub fn final_of(events: &[pb::RunEvent]) -> pb::RunFinal {
    find_final(events).unwrap_or_else(|| panic!("no final event in {events:#?}"))
}

/// The error event of `events`, if there is one.
pub fn find_error(events: &[pb::RunEvent]) -> Option<pb::RunError> {
    events.iter().find_map(|e| match &e.event {
        Some(Event::Error(f)) => Some(f.clone()),
        _ => None,
    })
}
